// Calls on a device other than device 0 (results checked against OpenBLAS and cuBLAS on that
// device), and a handle used while another device is current (XGEMV_STATUS_WRONG_DEVICE, nothing
// written). Both need two CUDA devices; with one, they are skipped with a line saying so.
// Concurrency across devices: concurrency_test.cpp spreads its threads over all devices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/gpu/gemv_case.hpp"
#include "support/typed_tests.hpp"

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

template <class T>
class SecondDevice : public ::testing::Test {};
TYPED_TEST_SUITE(SecondDevice, ElementTypes);

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

}  // namespace
}  // namespace xgemv_test
