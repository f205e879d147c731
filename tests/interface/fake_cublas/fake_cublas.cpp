#include "fake_cublas.hpp"

#include <cstdio>

namespace {

FakeCublasCall last_call{};

template <class... Args>
cublasStatus_t record(const char *name, Args... args) {
  std::snprintf(last_call.name, sizeof last_call.name, "%s", name);
  last_call.argument_count = int(sizeof...(Args));
  const std::uint64_t bits[] = {argument_bits(args)...};
  std::memcpy(last_call.arguments, bits, sizeof bits);
  ++last_call.total_calls;
  return kFakeStatus;
}

}  // namespace

extern "C" {

const FakeCublasCall *fake_cublas_last_call(void) {
  return &last_call;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t, cudaStream_t *stream) {
  *stream = nullptr;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t, cublasPointerMode_t *mode) {
  *mode = CUBLAS_POINTER_MODE_HOST;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  return record(__func__, handle);
}

cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                              const float *alpha, const float *A, int lda, const float *x, int incx,
                              const float *beta, float *y, int incy) {
  return record(__func__, handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t cublasDgemv_v2_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                 int64_t n, const double *alpha, const double *A, int64_t lda,
                                 const double *x, int64_t incx, const double *beta, double *y,
                                 int64_t incy) {
  return record(__func__, handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t cublasHSHgemvBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                    const float *alpha, const __half *const Aarray[], int lda,
                                    const __half *const xarray[], int incx, const float *beta,
                                    __half *const yarray[], int incy, int batchCount) {
  return record(__func__, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray, incy,
                batchCount);
}

cublasStatus_t cublasTSSgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans,
                                              int64_t m, int64_t n, const float *alpha,
                                              const __nv_bfloat16 *A, int64_t lda,
                                              long long int strideA, const __nv_bfloat16 *x,
                                              int64_t incx, long long int stridex,
                                              const float *beta, float *y, int64_t incy,
                                              long long int stridey, int64_t batchCount) {
  return record(__func__, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                incy, stridey, batchCount);
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float *alpha,
                              const float *A, int lda, const float *B, int ldb, const float *beta,
                              float *C, int ldc) {
  return record(__func__, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const double *alpha,
                              const double *A, int lda, const double *B, int ldb,
                              const double *beta, double *C, int ldc) {
  return record(__func__, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  return record(__func__, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
                               const void *B, cudaDataType Btype, int64_t ldb, const void *beta,
                               void *C, cudaDataType Ctype, int64_t ldc,
                               cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return record(__func__, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                beta, C, Ctype, ldc, computeType, algo);
}

}  // extern "C"
