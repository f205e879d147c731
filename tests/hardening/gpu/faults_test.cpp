// Faults: a clear status, no crash, no hang, and the process fit for the next call.
//  - XGEMV_CHECK_POINTERS=1 (CTest sets it for this program): an unregistered host pointer, a
//    freed device pointer and (with two GPUs) a pointer on another device give
//    XGEMV_STATUS_INVALID_POINTER, with nothing written.
//  - Out of device memory: calls whose kernels ran before still compute correctly (a call
//    allocates nothing); xgemv_create fails with XGEMV_STATUS_CUDA_ERROR and no handle; a kernel
//    that was never launched (lazy module loading may need memory) either computes correctly or
//    fails with XGEMV_STATUS_CUDA_ERROR, y untouched; after the memory is freed all is well.
//  - A sticky CUDA error (a kernel fault lost the context): in a child process (the fault ends
//    the context of the whole process), every call, pointer checks on, gives
//    XGEMV_STATUS_CUDA_ERROR with the sticky error in xgemv_last_cuda_error; creating and
//    destroying handles fails cleanly; nothing crashes or hangs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host_problem.hpp"
#include "sticky_fault.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test {
namespace {

TEST(Faults, PointerChecksAreOn) {
  const char *setting = std::getenv("XGEMV_CHECK_POINTERS");
  ASSERT_TRUE(setting != nullptr && std::string(setting) == "1")
      << "run this program with XGEMV_CHECK_POINTERS=1 (CTest and gpu-sanitize.sh do)";
}

// A small fp32 problem on the device; `call` runs it with the operands it is given.
struct DeviceProblem {
  GemvShape shape{'N', 257, 129, 260, 1, -2};
  GuardedDeviceBuffer<float> a{size_t(shape.matrix_extent())}, x{size_t(shape.x_extent())},
      y{size_t(shape.y_extent())}, scalars{2};
  std::vector<float> y_initial = std::vector<float>(shape.y_extent(), 0.5f);

  DeviceProblem() {
    a.upload(std::vector<float>(a.size(), 1.0f));
    x.upload(std::vector<float>(x.size(), 1.0f));
    y.upload(y_initial);
    scalars.upload({1.0f, 1.0f});
  }
  GemvOperands<float> operands() const {
    return {scalars.data(), a.data(), x.data(), scalars.data() + 1, y.data()};
  }
  // With every operand as given, device scalars.
  xgemv_status call(xgemv_handle handle, const GemvOperands<float> &p) const {
    EXPECT_EQ(xgemv_set_pointer_mode(handle, XGEMV_POINTER_MODE_DEVICE), XGEMV_STATUS_SUCCESS);
    return xgemv_gemv<float>(handle, shape, nullptr, p);
  }
  ::testing::AssertionResult y_untouched() const {
    return bitwise_equal("y after a refused call", y.download(), y_initial);
  }
};

// Each operand in turn replaced by the pointer `make_bad` returns (called once the handle and
// the valid operands exist, so that a freed allocation stays freed): INVALID_POINTER, nothing
// written, no CUDA error left behind, and the valid call afterwards succeeds.
void expect_each_operand_refused(const char *what, const std::function<const float *()> &make_bad) {
  GpuHandles gpu;
  const DeviceProblem problem;
  const GemvOperands<float> good = problem.operands();
  const float *bad = make_bad();
  const auto with = [&](auto member) {
    GemvOperands<float> p = good;
    p.*member = const_cast<float *>(bad);
    return p;
  };
  const std::pair<const char *, GemvOperands<float>> cases[] = {
      {"alpha", with(&GemvOperands<float>::alpha)},
      {"A", with(&GemvOperands<float>::a)},
      {"x", with(&GemvOperands<float>::x)},
      {"beta", with(&GemvOperands<float>::beta)},
      {"y", with(&GemvOperands<float>::y)}};
  for (const auto &[operand, p] : cases) {
    SCOPED_TRACE(std::string(what) + " as " + operand);
    EXPECT_EQ(problem.call(gpu.xgemv(), p), XGEMV_STATUS_INVALID_POINTER);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_TRUE(problem.y_untouched());
  EXPECT_EQ(problem.call(gpu.xgemv(), good), XGEMV_STATUS_SUCCESS) << "the valid call after them";
}

TEST(Faults, UnregisteredHostPointerIsReported) {
  const std::vector<float> host(1 << 16, 1.0f);
  expect_each_operand_refused("malloc'd host memory", [&] { return host.data(); });
}

TEST(Faults, FreedDevicePointerIsReported) {
  expect_each_operand_refused("a freed device allocation", [] {
    // Large enough to have address space of its own (small allocations may share a mapping).
    void *freed = nullptr;
    check_cuda(cudaMalloc(&freed, size_t(64) << 20), "cudaMalloc");
    check_cuda(cudaFree(freed), "cudaFree");
    return static_cast<const float *>(freed);
  });
}

TEST(Faults, PointerOnAnotherDeviceIsReported) {
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices < 2) GTEST_SKIP() << "one CUDA device: a pointer on another device needs two";
  int current = 0;
  check_cuda(cudaGetDevice(&current), "cudaGetDevice");
  check_cuda(cudaSetDevice(devices - 1), "cudaSetDevice");
  void *elsewhere = nullptr;
  check_cuda(cudaMalloc(&elsewhere, 1 << 20), "cudaMalloc on the other device");
  check_cuda(cudaSetDevice(current), "cudaSetDevice");
  expect_each_operand_refused("memory of another device",
                              [&] { return static_cast<const float *>(elsewhere); });
  check_cuda(cudaFree(elsewhere), "cudaFree");
}

// Device memory taken until cudaMalloc fails, released at the end of the scope.
class MemoryHog {
 public:
  MemoryHog() {
    for (size_t chunk = size_t(1) << 30; chunk >= (size_t(1) << 20);) {
      void *p = nullptr;
      if (cudaMalloc(&p, chunk) == cudaSuccess) {
        chunks_.push_back(p);
      } else {
        cudaGetLastError();  // an allocation failure is not sticky
        chunk /= 2;
      }
    }
  }
  ~MemoryHog() {
    for (void *p : chunks_) cudaFree(p);
  }
  MemoryHog(const MemoryHog &) = delete;
  MemoryHog &operator=(const MemoryHog &) = delete;

 private:
  std::vector<void *> chunks_;
};

// A fp32 or fp64 problem whose device buffers exist before memory runs out.
template <class T>
struct PreparedCall {
  HostProblem<T> problem;
  GuardedDeviceBuffer<T> a, x, y;

  PreparedCall(const GemvShape &shape, RandomSource &random)
      : problem(shape, ScalarOf<T>(1.5), ScalarOf<T>(-0.5), random),
        a(problem.a.size()),
        x(problem.x.size()),
        y(problem.y.size()) {
    a.upload(problem.a);
    x.upload(problem.x);
    y.upload(problem.y);
  }
  xgemv_status call(xgemv_handle handle) {
    const GemvOperands<T> p{&problem.alpha, a.data(), x.data(), &problem.beta, y.data()};
    const xgemv_status status = xgemv_gemv<T>(handle, problem.shape, nullptr, p);
    check_cuda(cudaDeviceSynchronize(), "synchronize");
    return status;
  }
  std::string check() const { return problem.check(y.download()); }
  void reset_y() { y.upload(problem.y); }
};

TEST(Faults, OutOfDeviceMemory) {
  if (sanitizer_profile())
    GTEST_SKIP() << "sanitizer profile: taking all device memory would starve compute-sanitizer";
  xgemv_handle handle = nullptr;
  ASSERT_EQ(xgemv_create(&handle), XGEMV_STATUS_SUCCESS);
  RandomSource random(case_seed("OutOfDeviceMemory", 0));
  // Split reductions in both ops: they use the handle's workspace, allocated at creation.
  PreparedCall<float> warm_n({'N', 3, 20000, 3, 1, 1}, random);
  PreparedCall<float> warm_t({'T', 20000, 3, 20001, -1, 2}, random);
  PreparedCall<double> cold({'T', 1031, 67, 1031, 1, 1}, random);
  for (PreparedCall<float> *warm : {&warm_n, &warm_t}) {
    ASSERT_EQ(warm->call(handle), XGEMV_STATUS_SUCCESS);
    warm->reset_y();
  }

  {
    const MemoryHog hog;
    void *probe = nullptr;
    ASSERT_EQ(cudaMalloc(&probe, 1 << 20), cudaErrorMemoryAllocation) << "memory is not exhausted";
    cudaGetLastError();

    for (PreparedCall<float> *warm : {&warm_n, &warm_t}) {
      EXPECT_EQ(warm->call(handle), XGEMV_STATUS_SUCCESS) << "a warmed-up call without memory";
      EXPECT_EQ(warm->check(), "");
    }
    xgemv_handle starved = reinterpret_cast<xgemv_handle>(uintptr_t{1});
    EXPECT_EQ(xgemv_create(&starved), XGEMV_STATUS_CUDA_ERROR);
    EXPECT_EQ(starved, nullptr);
    EXPECT_EQ(xgemv_last_cuda_error(), cudaErrorMemoryAllocation);
    const xgemv_status cold_status = cold.call(handle);
    if (cold_status == XGEMV_STATUS_SUCCESS) {
      EXPECT_EQ(cold.check(), "") << "a first fp64 call without memory";
    } else {
      EXPECT_EQ(cold_status, XGEMV_STATUS_CUDA_ERROR);
      EXPECT_TRUE(bitwise_equal("y after a failed call", cold.y.download(), cold.problem.y));
    }
    cudaGetLastError();
  }

  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "the context survived";
  xgemv_handle fresh = nullptr;
  EXPECT_EQ(xgemv_create(&fresh), XGEMV_STATUS_SUCCESS);
  cold.reset_y();
  EXPECT_EQ(cold.call(fresh), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(cold.check(), "");
  EXPECT_EQ(xgemv_destroy(fresh), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(xgemv_destroy(handle), XGEMV_STATUS_SUCCESS);
}

// The child's side of StickyErrorGivesCudaErrorStatus: exits 0 when every expectation held,
// else 1, saying which failed on stderr.
[[noreturn]] void run_calls_after_a_sticky_fault() {
  int failures = 0;
  const auto expect = [&](bool held, const char *what) {
    if (!held) {
      std::fprintf(stderr, "sticky fault: %s\n", what);
      ++failures;
    }
  };
  xgemv_handle handle = nullptr;
  expect(xgemv_create(&handle) == XGEMV_STATUS_SUCCESS, "xgemv_create before the fault");
  const int64_t m = 64, n = 48;
  float *a = nullptr, *x = nullptr, *y = nullptr;
  expect(cudaMalloc(reinterpret_cast<void **>(&a), m * n * sizeof(float)) == cudaSuccess &&
             cudaMalloc(reinterpret_cast<void **>(&x), n * sizeof(float)) == cudaSuccess &&
             cudaMalloc(reinterpret_cast<void **>(&y), m * sizeof(float)) == cudaSuccess,
         "cudaMalloc before the fault");
  const float alpha = 1, beta = 0;
  expect(xgemv_sgemv(handle, 'N', m, n, &alpha, a, m, x, 1, &beta, y, 1) == XGEMV_STATUS_SUCCESS,
         "a call before the fault");

  const cudaError_t fault = provoke_sticky_fault();
  expect(fault != cudaSuccess, "the planted kernel fault was not reported");
  for (const char trans : {'N', 'T'}) {
    expect(xgemv_sgemv(handle, trans, m, n, &alpha, a, m, x, 1, &beta, y, 1) ==
               XGEMV_STATUS_CUDA_ERROR,
           "sgemv after the fault is not XGEMV_STATUS_CUDA_ERROR");
    expect(xgemv_last_cuda_error() == fault, "xgemv_last_cuda_error is not the sticky error");
  }
  const float scalars[] = {1, 0};
  expect(xgemv_hgemv(handle, 'T', m, n, &scalars[0], reinterpret_cast<const xgemv_half *>(a), m,
                     reinterpret_cast<const xgemv_half *>(x), 1, &scalars[1],
                     reinterpret_cast<xgemv_half *>(y), 1) == XGEMV_STATUS_CUDA_ERROR,
         "hgemv after the fault is not XGEMV_STATUS_CUDA_ERROR");
  xgemv_handle another = nullptr;
  expect(xgemv_create(&another) == XGEMV_STATUS_CUDA_ERROR && another == nullptr,
         "xgemv_create after the fault");
  const xgemv_status destroyed = xgemv_destroy(handle);
  expect(destroyed == XGEMV_STATUS_SUCCESS || destroyed == XGEMV_STATUS_CUDA_ERROR,
         "xgemv_destroy after the fault");
  if (failures == 0) std::fprintf(stderr, "sticky fault: every call said XGEMV_STATUS_CUDA_ERROR\n");
  std::_Exit(failures == 0 ? 0 : 1);
}

TEST(Faults, StickyErrorGivesCudaErrorStatus) {
  if (sanitizer_profile())
    GTEST_SKIP() << "sanitizer profile: the planted kernel fault would be reported as a finding";
  // "threadsafe": the child is a fresh process (a forked CUDA process cannot use the GPU).
  ::testing::GTEST_FLAG(death_test_style) = "threadsafe";
  EXPECT_EXIT(run_calls_after_a_sticky_fault(), ::testing::ExitedWithCode(0),
              "every call said XGEMV_STATUS_CUDA_ERROR");
}

}  // namespace
}  // namespace xgemv_test
