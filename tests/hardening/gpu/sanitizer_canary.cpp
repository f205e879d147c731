// Planted faults for gpu-sanitize.sh's self-check: under compute-sanitizer, with the same kernel
// filter as the real run, xgemv's own kernel must be reported for
//   out-of-bounds   (memcheck)   op T over twice the columns A's allocation holds;
//   uninitialized   (initcheck)  op T over A freshly allocated and never written.
// Not a CTest test: it is meant to be caught. Exits 77 without a CUDA device, 2 on bad usage.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <xgemv/xgemv.h>

int main(int argc, char **argv) {
  const std::string fault = argc == 2 ? argv[1] : "";
  if (fault != "out-of-bounds" && fault != "uninitialized") {
    std::fprintf(stderr, "usage: %s out-of-bounds|uninitialized\n", argv[0]);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device visible\n");
    return 77;
  }
  const int64_t m = 256, n = 64;
  float *a = nullptr, *x = nullptr, *y = nullptr;
  // A last: nothing allocated after it for the overrun to land in.
  if (cudaMalloc(reinterpret_cast<void **>(&x), m * sizeof(float)) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void **>(&y), 2 * n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void **>(&a), m * n * sizeof(float)) != cudaSuccess)
    return 1;
  const std::vector<float> ones(m * n, 1.0f);
  cudaMemcpy(x, ones.data(), m * sizeof(float), cudaMemcpyHostToDevice);
  // The out-of-bounds call reads n more columns than A holds (y has room for them).
  const int64_t columns = fault == "out-of-bounds" ? 2 * n : n;
  if (fault == "out-of-bounds")
    cudaMemcpy(a, ones.data(), m * n * sizeof(float), cudaMemcpyHostToDevice);
  xgemv_handle handle = nullptr;
  const float alpha = 1, beta = 0;
  const bool called = xgemv_create(&handle) == XGEMV_STATUS_SUCCESS &&
                      xgemv_sgemv(handle, 'T', m, columns, &alpha, a, m, x, 1, &beta, y, 1) ==
                          XGEMV_STATUS_SUCCESS;
  cudaDeviceSynchronize();
  xgemv_destroy(handle);
  cudaFree(a);
  cudaFree(x);
  cudaFree(y);
  std::printf("planted %s fault: xgemv_sgemv %s\n", fault.c_str(), called ? "ran" : "failed");
  return called ? 0 : 1;
}
