// main() of every GPU test program: without a visible CUDA device it says so in one line and
// exits 77, which CTest (SKIP_RETURN_CODE 77) reports as skipped, never as passed.
#include <cstdio>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

int main(int argc, char **argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device visible (%s)\n",
                status != cudaSuccess ? cudaGetErrorName(status) : "0 devices");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
