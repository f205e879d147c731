// The kernel-variant table through the C ABI, for tests that force variants: the names, a guard
// that forces one on a handle, and probes of what a forced variant computes (a single vector, or
// several right-hand sides, of one op). Nothing here names a variant: a new one is tested without
// touching the tests.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/device_buffer.hpp"
#include "support/xgemv_calls.hpp"

namespace xgemv_test {

inline std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (int v = 0; v < xgemv_kernel_variant_count(); ++v)
    names.push_back(xgemv_kernel_variant_name(v));
  return names;
}

// Restores the automatic choice when a test ends, passed or not.
class ForcedVariant {
 public:
  ForcedVariant(xgemv_handle handle, const std::string &name) : handle_(handle) {
    status_ = xgemv_set_kernel_variant(handle, name.c_str());
  }
  ~ForcedVariant() { xgemv_set_kernel_variant(handle_, nullptr); }
  ForcedVariant(const ForcedVariant &) = delete;
  ForcedVariant &operator=(const ForcedVariant &) = delete;
  xgemv_status status() const { return status_; }

 private:
  xgemv_handle handle_;
  xgemv_status status_;
};

// Whether the handle's forced variant `name` computes op `trans` for T with `nrhs` right-hand
// sides (0: the single-vector entry point): a 1 x 1 call runs, and reports that variant, or is
// refused as not supported.
template <class T>
bool forced_variant_computes(xgemv_handle handle, const std::string &name, char trans,
                             int64_t nrhs) {
  const int64_t columns = nrhs == 0 ? 1 : nrhs;
  GuardedDeviceBuffer<T> a(1), x(columns), y(columns);
  const ScalarOf<T> alpha = 1, beta = 0;
  const GemvShape shape{trans, 1, 1, 1, 1, 1};
  const GemvOperands<T> operands{&alpha, a.data(), x.data(), &beta, y.data()};
  EXPECT_EQ(xgemv_set_pointer_mode(handle, XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  const xgemv_status status =
      nrhs == 0 ? xgemv_gemv<T>(handle, shape, nullptr, operands)
                : xgemv_gemv_nrhs<T>(handle, shape, RhsLayout{nrhs, 1, 1}, operands);
  check_cuda(cudaDeviceSynchronize(), "probe call");
  if (status == XGEMV_STATUS_NOT_SUPPORTED) return false;
  EXPECT_EQ(status, XGEMV_STATUS_SUCCESS) << name << " op " << trans << " nrhs " << nrhs;
  const char *ran = xgemv_get_last_kernel_variant(handle);
  EXPECT_STREQ(ran, name.c_str()) << "op " << trans << " nrhs " << nrhs;
  return status == XGEMV_STATUS_SUCCESS;
}

// Single vectors of op `trans` (xgemv_?gemv).
template <class T>
bool implements_op(const GpuHandles &gpu, char trans, const std::string &name) {
  return forced_variant_computes<T>(gpu.xgemv(), name, trans, 0);
}

// Several right-hand sides of op `trans` (xgemv_?gemv_nrhs with nrhs = 2): the variants of the
// several-right-hand-side family that implement the op for T.
template <class T>
bool implements_several_rhs_op(const GpuHandles &gpu, char trans, const std::string &name) {
  return forced_variant_computes<T>(gpu.xgemv(), name, trans, 2);
}

// The names of the variants that compute several right-hand sides of op `trans` for T (leaves
// the handle on the automatic choice).
template <class T>
std::vector<std::string> several_rhs_variants(const GpuHandles &gpu, char trans) {
  std::vector<std::string> names;
  for (const std::string &name : variant_names()) {
    const ForcedVariant forced(gpu.xgemv(), name);
    if (implements_several_rhs_op<T>(gpu, trans, name)) names.push_back(name);
  }
  return names;
}

}  // namespace xgemv_test
