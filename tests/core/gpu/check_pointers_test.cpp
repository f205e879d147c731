// XGEMV_CHECK_POINTERS=1 (set by CTest for this program): a pointer the device cannot access is
// reported as XGEMV_STATUS_INVALID_POINTER instead of faulting, and valid calls still compute the
// right result.
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemv_case.hpp"

namespace xgemv_test {
namespace {

TEST(CheckPointers, EnabledByTheEnvironment) {
  const char *setting = std::getenv("XGEMV_CHECK_POINTERS");
  ASSERT_NE(setting, nullptr);
  EXPECT_EQ(std::string(setting), "1");
}

// With pageable-memory access (HMM/ATS) host memory is device-accessible, so only a pointer no
// allocation covers is certainly invalid there.
bool device_reads_pageable_memory() {
  int device = 0, pageable = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device),
             "cudaDeviceGetAttribute");
  return pageable != 0;
}

TEST(CheckPointers, InaccessiblePointersAreReported) {
  GpuHandles gpu;
  const GemvShape shape{'N', 64, 32, 64, 1, 1};
  GuardedDeviceBuffer<float> a(shape.matrix_extent()), x(shape.x_extent()), y(shape.y_extent());
  std::vector<float> host_memory(shape.matrix_extent(), 1.0f);
  const float one = 1.0f;
  float *const unmapped = reinterpret_cast<float *>(uintptr_t{0x10});
  std::vector<float *> invalid = {unmapped};
  if (!device_reads_pageable_memory()) invalid.push_back(host_memory.data());
  GuardedDeviceBuffer<float> device_scalars(2);
  device_scalars.upload({1.0f, 1.0f});

  for (float *bad : invalid) {
    SCOPED_TRACE(bad == unmapped ? "unmapped address" : "pageable host memory");
    EXPECT_EQ(xgemv_set_pointer_mode(gpu.xgemv(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
    const GemvOperands<float> real{&one, a.data(), x.data(), &one, y.data()};
    for (const auto member : {&GemvOperands<float>::a, &GemvOperands<float>::x}) {
      GemvOperands<float> operands = real;
      operands.*member = bad;
      EXPECT_EQ(xgemv_gemv<float>(gpu.xgemv(), shape, nullptr, operands),
                XGEMV_STATUS_INVALID_POINTER);
    }
    GemvOperands<float> bad_y = real;
    bad_y.y = bad;
    EXPECT_EQ(xgemv_gemv<float>(gpu.xgemv(), shape, nullptr, bad_y), XGEMV_STATUS_INVALID_POINTER);
    const RhsLayout one_column{1, shape.x_length(), shape.y_length()};
    EXPECT_EQ(call_gemv_bias<float>(gpu.xgemv(), shape, one_column, real, bad),
              XGEMV_STATUS_INVALID_POINTER);

    EXPECT_EQ(xgemv_set_pointer_mode(gpu.xgemv(), XGEMV_POINTER_MODE_DEVICE), XGEMV_STATUS_SUCCESS);
    const GemvOperands<float> bad_alpha{bad, a.data(), x.data(), device_scalars.data() + 1,
                                        y.data()};
    EXPECT_EQ(xgemv_gemv<float>(gpu.xgemv(), shape, nullptr, bad_alpha),
              XGEMV_STATUS_INVALID_POINTER);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(CheckPointers, ValidCallsStillCompute) {
  GpuHandles gpu;
  const std::vector<GemvCase> cases = {
      {.trans = 'N', .m = 257, .n = 129},
      {.trans = 'T', .m = 257, .n = 129, .incx = -2, .pointer_mode = XGEMV_POINTER_MODE_DEVICE},
      {.trans = 'N', .m = 65, .n = 33, .batched = true, .batch_count = 3},
  };
  run_gemv_cases<float>(cases, gpu, "CheckPointers");
}

}  // namespace
}  // namespace xgemv_test
