/* Links the installed libxgemv_cublas before cuBLAS: the program's cuBLAS GEMV calls bind to the
 * drop-in. With a GPU, one cublasSgemv_v2 is computed; without one (cublasCreate fails) that
 * call is left out. */
#define _GNU_SOURCE
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* y = A x for A = [1 3; 2 4] (column-major), x = (1, 1) on the device; 0 when y = (4, 6). */
static int run_one_sgemv(cublasHandle_t handle) {
  const float a[4] = {1, 2, 3, 4}, x[2] = {1, 1}, one = 1, zero = 0;
  float y[2] = {0, 0};
  float *device = NULL; /* A, then x, then y */
  int failed = cudaMalloc((void **)&device, 8 * sizeof(float)) != cudaSuccess;
  failed = failed || cudaMemcpy(device, a, sizeof a, cudaMemcpyHostToDevice) != cudaSuccess ||
           cudaMemcpy(device + 4, x, sizeof x, cudaMemcpyHostToDevice) != cudaSuccess;
  failed = failed || cublasSgemv_v2(handle, CUBLAS_OP_N, 2, 2, &one, device, 2, device + 4, 1,
                                    &zero, device + 6, 1) != CUBLAS_STATUS_SUCCESS;
  failed = failed || cudaMemcpy(y, device + 6, sizeof y, cudaMemcpyDeviceToHost) != cudaSuccess;
  cudaFree(device);
  if (failed || y[0] != 4 || y[1] != 6) {
    fprintf(stderr, "cublasSgemv_v2: y = (%g, %g), not (4, 6)\n", y[0], y[1]);
    return 1;
  }
  return 0;
}

int main(void) {
  Dl_info where;
  cublasHandle_t handle = NULL;
  int failed;

  if (dladdr((void *)cublasSgemv_v2, &where) == 0 || where.dli_fname == NULL ||
      strstr(where.dli_fname, "libxgemv_cublas") == NULL) {
    fprintf(stderr, "cublasSgemv_v2 does not come from libxgemv_cublas\n");
    return 1;
  }
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    printf("installed libxgemv_cublas is linked (cublasSgemv_v2 from %s); no GPU: no call made\n",
           where.dli_fname);
    return 0;
  }
  failed = run_one_sgemv(handle);
  cublasDestroy(handle);
  if (!failed) printf("installed libxgemv_cublas works: cublasSgemv_v2 from %s\n", where.dli_fname);
  return failed;
}
