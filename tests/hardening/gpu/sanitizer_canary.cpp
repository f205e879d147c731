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
  // The out-of-bounds call reads n more columns than A holds (y has room for them).
  const int64_t columns = fault == "out-of-bounds" ? 2 * n : n;
  const float alpha = 1, beta = 0;
  const std::vector<float> ones(m * columns, 1.0f);
  xgemv_handle handle = nullptr;
  float *warm_up_a = nullptr, *x = nullptr, *y = nullptr, *a = nullptr;
  if (xgemv_create(&handle) != XGEMV_STATUS_SUCCESS ||
      cudaMalloc(reinterpret_cast<void **>(&warm_up_a), m * columns * sizeof(float)) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void **>(&x), m * sizeof(float)) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void **>(&y), columns * sizeof(float)) != cudaSuccess)
    return 1;
  cudaMemcpy(warm_up_a, ones.data(), m * columns * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(x, ones.data(), m * sizeof(float), cudaMemcpyHostToDevice);
  // The same call on a whole, written matrix first: whatever the handle, the runtime or lazy
  // kernel loading allocate is then in place before A, so the overrun past A (allocated last)
  // cannot land in another allocation, where memcheck would see a valid read.
  bool called = xgemv_sgemv(handle, 'T', m, columns, &alpha, warm_up_a, m, x, 1, &beta, y, 1) ==
                XGEMV_STATUS_SUCCESS;
  called = called && cudaDeviceSynchronize() == cudaSuccess &&
           cudaMalloc(reinterpret_cast<void **>(&a), m * n * sizeof(float)) == cudaSuccess;
  if (called && fault == "out-of-bounds")
    cudaMemcpy(a, ones.data(), m * n * sizeof(float), cudaMemcpyHostToDevice);
  called = called && xgemv_sgemv(handle, 'T', m, columns, &alpha, a, m, x, 1, &beta, y, 1) ==
                         XGEMV_STATUS_SUCCESS;
  cudaDeviceSynchronize();
  std::printf("planted %s fault: A at %p, %lld bytes, read as %lld; xgemv_sgemv %s\n",
              fault.c_str(), static_cast<void *>(a), static_cast<long long>(m * n * sizeof(float)),
              static_cast<long long>(m * columns * sizeof(float)), called ? "ran" : "failed");
  xgemv_destroy(handle);
  cudaFree(a);
  cudaFree(warm_up_a);
  cudaFree(x);
  cudaFree(y);
  return called ? 0 : 1;
}
