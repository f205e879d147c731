// Calls on a device other than device 0 (results checked against OpenBLAS and cuBLAS on that
// device), and a handle used while another device is current (XGEMV_STATUS_WRONG_DEVICE, nothing
// written); where libxgemv_nccl is built, the same for its calls (a one-rank communicator on the
// last device). All need two CUDA devices; with one, they are skipped with a line saying so.
// Concurrency across devices: concurrency_test.cpp spreads its threads over all devices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/gemv_case.hpp"
#include "support/typed_tests.hpp"
#ifdef XGEMV_TEST_NCCL
#include "split_case.hpp"
#endif

namespace xgemv_test {
namespace {

int device_count() {
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  return devices;
}

constexpr const char *kOneDevice = "one CUDA device: calls on a second device need two";

// Makes `device` current for a scope.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~CurrentDevice() { cudaSetDevice(previous_); }
  CurrentDevice(const CurrentDevice &) = delete;
  CurrentDevice &operator=(const CurrentDevice &) = delete;

 private:
  int previous_ = 0;
};

XGEMV_TYPED_TEST_SUITE(SecondDevice, ::testing::Test);

TYPED_TEST(SecondDevice, ComputesTheReferenceResults) {
  if (device_count() < 2) GTEST_SKIP() << kOneDevice;
  const int device = device_count() - 1;
  const CurrentDevice current(device);
  GpuHandles gpu;
  const std::vector<GemvCase> cases = {
      {.trans = 'N', .m = 1031, .n = 67},
      {.trans = 'T', .m = 20000, .n = 3, .pointer_mode = XGEMV_POINTER_MODE_DEVICE},
      {.trans = 'N', .m = 3, .n = 20000, .incx = -2},
      {.trans = 'C', .m = 257, .n = 129, .incy = 3, .beta = ScalarChoice::zero},
      {.trans = 'T', .m = 65, .n = 33, .batched = true, .batch_count = 4},
  };
  run_gemv_cases<TypeParam>(cases, gpu, "SecondDevice" + std::to_string(device));
}

TEST(WrongDevice, HandleOfAnotherDeviceIsRefused) {
  if (device_count() < 2) GTEST_SKIP() << kOneDevice;
  const int device = device_count() - 1;
  const GemvShape shape{'N', 64, 32, 64, 1, 1};
  xgemv_handle handle = nullptr;
  {
    const CurrentDevice current(device);
    ASSERT_EQ(xgemv_create(&handle), XGEMV_STATUS_SUCCESS);
  }
  std::vector<float> y_initial(shape.y_extent(), 0.25f);
  {
    const CurrentDevice current(device);
    GuardedDeviceBuffer<float> a(shape.matrix_extent()), x(shape.x_extent()), y(shape.y_extent());
    y.upload(y_initial);
    const float one = 1.0f;
    // Device 0 current, the handle (and the data) on the other device.
    {
      const CurrentDevice other(0);
      EXPECT_EQ(xgemv_sgemv(handle, shape.trans, shape.m, shape.n, &one, a.data(), shape.lda,
                            x.data(), shape.incx, &one, y.data(), shape.incy),
                XGEMV_STATUS_WRONG_DEVICE);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(bitwise_equal("y after a refused call", y.download(), y_initial));
  }
  const CurrentDevice current(device);
  EXPECT_EQ(xgemv_destroy(handle), XGEMV_STATUS_SUCCESS);
}

#ifdef XGEMV_TEST_NCCL
// The split calls on the last device, through a communicator of one rank there: every layout of
// op N and op T (split_case.hpp's checks, the outputs split against xgemv on that device).
TYPED_TEST(SecondDevice, SplitCallsOfOneRankComputeTheReferenceResults) {
  if (device_count() < 2) GTEST_SKIP() << kOneDevice;
  const int device = device_count() - 1;
  const Ranks ranks({device});
  size_t index = 0;
  for_each_layout([&](SplitCase c) {
    c.m = 1031;
    c.n = 67;
    c.pointer_mode = index % 2 ? XGEMV_POINTER_MODE_DEVICE : XGEMV_POINTER_MODE_HOST;
    run_split_case<TypeParam>(c, ranks, case_seed("SecondDeviceSplit", index++));
  });
}

TEST(WrongDevice, SplitCallOnAnotherDeviceIsRefused) {
  if (device_count() < 2) GTEST_SKIP() << kOneDevice;
  const int device = device_count() - 1;
  const Ranks ranks({device});
  const Rank &rank = ranks[0];
  constexpr int64_t m = 64, n = 32;
  const std::vector<float> y_initial(m, 0.25f);
  const CurrentDevice current(device);
  GuardedDeviceBuffer<float> a(m * n), x(n), y(m);
  y.upload(y_initial);
  const size_t bytes =
      xgemv_nccl_workspace_bytes(XGEMV_SPLIT_REDUCTION, XGEMV_RESULT_ALL, 'N', m, n, 1, 4);
  GuardedDeviceBuffer<unsigned char> workspace(bytes);
  const float one = 1.0f;
  const int64_t output_starts[] = {0, m}, reduction_starts[] = {0, n};
  {
    // Device 0 current, the handle, the communicator and the data on the other device.
    const CurrentDevice other(0);
    EXPECT_EQ(xgemv_nccl_sgemv(rank.handle, rank.comm, XGEMV_SPLIT_OUTPUTS, XGEMV_RESULT_ALL,
                               output_starts, 'N', m, n, &one, a.data(), m, x.data(), 1, &one,
                               y.data(), 1, nullptr, 0),
              XGEMV_STATUS_WRONG_DEVICE);
    EXPECT_EQ(xgemv_nccl_sgemv(rank.handle, rank.comm, XGEMV_SPLIT_REDUCTION, XGEMV_RESULT_ALL,
                               reduction_starts, 'N', m, n, &one, a.data(), m, x.data(), 1, &one,
                               y.data(), 1, workspace.data(), bytes),
              XGEMV_STATUS_WRONG_DEVICE);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(bitwise_equal("y after refused calls", y.download(), y_initial));
}
#endif

}  // namespace
}  // namespace xgemv_test
