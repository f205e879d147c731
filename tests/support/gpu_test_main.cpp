// main() of every GPU test program: without a usable CUDA device it says why in one line and
// exits 77, which CTest (SKIP_RETURN_CODE 77) reports as skipped, never as passed.
#include <cstdio>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

int main(int argc, char **argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    // With no driver at all the runtime says cudaErrorInsufficientDriver, as for one too old;
    // cudaDriverGetVersion gives 0 only when none is installed.
    int driver = 0;
    const bool no_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
    if (no_driver || status == cudaErrorNoDevice || status == cudaSuccess)
      std::printf("SKIPPED: no NVIDIA driver or GPU found\n");
    else
      std::printf("SKIPPED: no usable CUDA device (%s)\n", cudaGetErrorString(status));
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
