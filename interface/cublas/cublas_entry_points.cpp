// The cuBLAS and cuBLASLt entry points the drop-in defines, with their exact signatures (the
// extern "C" block makes the compiler check each against cublas_api.h and cublasLt.h). Each one
// is the same two lines: its real counterpart, looked up once, and `intercept` (or
// `intercept_matmul`), which routes the call to xgemv or forwards it untouched.
#include <cstdio>

#include <cublasLt.h>
#include <cublas_v2.h>

#include "dropin_settings.hpp"
#include "gemv_routing.hpp"
#include "lt_descriptors.hpp"
#include "lt_routing.hpp"
#include "real_cublas.hpp"
#include "xgemv_handles.hpp"

namespace xgemv::cublas_dropin {
namespace {

template <class Function, class... Args>
cublasStatus_t intercept(const RealFunction<Function> &real, cublasHandle_t handle,
                         Args... args) noexcept {
  const char *reason = "XGEMV_CUBLAS_DISABLE is set";
  if (!interception_disabled()) {
    const Route verdict = route(args...);
    reason = verdict.forward_reason;
    if (verdict.problem) {
      const ServeResult result = serve(real.name(), handle, *verdict.problem);
      if (result.forward_reason == nullptr) return result.status;
      reason = result.forward_reason;
    }
  }
  log_call(real.name(), "cublas", reason);
  return real(handle, args...);
}

// cublasLtMatmul: its descriptors read, then routed like a GEMM (lt_routing.hpp), on the stream
// it names.
template <class Function>
cublasStatus_t intercept_matmul(const RealFunction<Function> &real, cublasLtHandle_t handle,
                                cublasLtMatmulDesc_t operation, const void *alpha, const void *a,
                                cublasLtMatrixLayout_t a_layout, const void *b,
                                cublasLtMatrixLayout_t b_layout, const void *beta, const void *c,
                                cublasLtMatrixLayout_t c_layout, void *d,
                                cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t *algo,
                                void *workspace, size_t workspace_bytes,
                                cudaStream_t stream) noexcept {
  const char *reason = "XGEMV_CUBLAS_DISABLE is set";
  if (!interception_disabled()) {
    const std::optional<LtMatmul> call = read_lt_matmul(
        operation, alpha, a, a_layout, b, b_layout, beta, c, c_layout, d, d_layout, &reason);
    if (call) {
      const Route verdict = route_lt_matmul(*call);
      reason = verdict.forward_reason;
      if (verdict.problem) {
        const ServeResult result =
            serve_on_stream(real.name(), handle, stream, lt_pointer_mode(*call), *verdict.problem);
        if (result.forward_reason == nullptr) return result.status;
        reason = result.forward_reason;
      }
    }
  }
  log_call(real.name(), "cublasLt", reason);
  return real(handle, operation, alpha, a, a_layout, b, b_layout, beta, c, c_layout, d, d_layout,
              algo, workspace, workspace_bytes, stream);
}

// Releases the xgemv handles of a cuBLAS or cuBLASLt handle being destroyed.
template <class Function, class Handle>
cublasStatus_t release_then_destroy(const RealFunction<Function> &real, const char *server,
                                    Handle handle) noexcept {
  const int released = release_xgemv_handles(handle);
  if (logging_enabled()) {
    char detail[64];
    std::snprintf(detail, sizeof detail, "released %d xgemv handle(s)", released);
    log_call(real.name(), server, detail);
  }
  return real(handle);
}

// cublasGemmEx, the extern "C" one: in C++ the header adds an inline overload taking the compute
// type as a cudaDataType.
using GemmExFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                          int, int, int, const void *, const void *,
                                          cudaDataType, int, const void *, cudaDataType, int,
                                          const void *, void *, cudaDataType, int,
                                          cublasComputeType_t, cublasGemmAlgo_t);

}  // namespace
}  // namespace xgemv::cublas_dropin

using xgemv::cublas_dropin::intercept;
using xgemv::cublas_dropin::intercept_matmul;
using xgemv::cublas_dropin::RealFunction;
using xgemv::cublas_dropin::RealLibrary;
using xgemv::cublas_dropin::release_then_destroy;

#pragma GCC visibility push(default)
extern "C" {

// --- cublasDestroy_v2, cublasLtDestroy: free the xgemv handles that belong to the handle -----

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  static const RealFunction real(__func__, &cublasDestroy_v2);
  return release_then_destroy(real, "cublas", handle);
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  static const RealFunction real(__func__, &cublasLtDestroy, RealLibrary::cublas_lt);
  return release_then_destroy(real, "cublasLt", lightHandle);
}

// --- {S,D}gemv ----------------------------------------------------------------------------------

cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                              const float *alpha, const float *A, int lda, const float *x,
                              int incx, const float *beta, float *y, int incy) {
  static const RealFunction real(__func__, &cublasSgemv_v2);
  return intercept(real, handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t cublasSgemv_v2_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                 int64_t n, const float *alpha, const float *A, int64_t lda,
                                 const float *x, int64_t incx, const float *beta, float *y,
                                 int64_t incy) {
  static const RealFunction real(__func__, &cublasSgemv_v2_64);
  return intercept(real, handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t cublasDgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                              const double *alpha, const double *A, int lda, const double *x,
                              int incx, const double *beta, double *y, int incy) {
  static const RealFunction real(__func__, &cublasDgemv_v2);
  return intercept(real, handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t cublasDgemv_v2_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                 int64_t n, const double *alpha, const double *A, int64_t lda,
                                 const double *x, int64_t incx, const double *beta, double *y,
                                 int64_t incy) {
  static const RealFunction real(__func__, &cublasDgemv_v2_64);
  return intercept(real, handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

// --- gemvBatched: device arrays of pointers ---------------------------------------------------

cublasStatus_t cublasSgemvBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                  const float *alpha, const float *const Aarray[], int lda,
                                  const float *const xarray[], int incx, const float *beta,
                                  float *const yarray[], int incy, int batchCount) {
  static const RealFunction real(__func__, &cublasSgemvBatched);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasSgemvBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                     int64_t n, const float *alpha, const float *const Aarray[],
                                     int64_t lda, const float *const xarray[], int64_t incx,
                                     const float *beta, float *const yarray[], int64_t incy,
                                     int64_t batchCount) {
  static const RealFunction real(__func__, &cublasSgemvBatched_64);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasDgemvBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                  const double *alpha, const double *const Aarray[], int lda,
                                  const double *const xarray[], int incx, const double *beta,
                                  double *const yarray[], int incy, int batchCount) {
  static const RealFunction real(__func__, &cublasDgemvBatched);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasDgemvBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                     int64_t n, const double *alpha,
                                     const double *const Aarray[], int64_t lda,
                                     const double *const xarray[], int64_t incx,
                                     const double *beta, double *const yarray[], int64_t incy,
                                     int64_t batchCount) {
  static const RealFunction real(__func__, &cublasDgemvBatched_64);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasHSHgemvBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                    const float *alpha, const __half *const Aarray[], int lda,
                                    const __half *const xarray[], int incx, const float *beta,
                                    __half *const yarray[], int incy, int batchCount) {
  static const RealFunction real(__func__, &cublasHSHgemvBatched);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasHSHgemvBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                       int64_t n, const float *alpha,
                                       const __half *const Aarray[], int64_t lda,
                                       const __half *const xarray[], int64_t incx,
                                       const float *beta, __half *const yarray[], int64_t incy,
                                       int64_t batchCount) {
  static const RealFunction real(__func__, &cublasHSHgemvBatched_64);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasHSSgemvBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                    const float *alpha, const __half *const Aarray[], int lda,
                                    const __half *const xarray[], int incx, const float *beta,
                                    float *const yarray[], int incy, int batchCount) {
  static const RealFunction real(__func__, &cublasHSSgemvBatched);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasHSSgemvBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                       int64_t n, const float *alpha,
                                       const __half *const Aarray[], int64_t lda,
                                       const __half *const xarray[], int64_t incx,
                                       const float *beta, float *const yarray[], int64_t incy,
                                       int64_t batchCount) {
  static const RealFunction real(__func__, &cublasHSSgemvBatched_64);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasTSTgemvBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                    const float *alpha, const __nv_bfloat16 *const Aarray[],
                                    int lda, const __nv_bfloat16 *const xarray[], int incx,
                                    const float *beta, __nv_bfloat16 *const yarray[], int incy,
                                    int batchCount) {
  static const RealFunction real(__func__, &cublasTSTgemvBatched);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasTSTgemvBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                       int64_t n, const float *alpha,
                                       const __nv_bfloat16 *const Aarray[], int64_t lda,
                                       const __nv_bfloat16 *const xarray[], int64_t incx,
                                       const float *beta, __nv_bfloat16 *const yarray[],
                                       int64_t incy, int64_t batchCount) {
  static const RealFunction real(__func__, &cublasTSTgemvBatched_64);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasTSSgemvBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                                    const float *alpha, const __nv_bfloat16 *const Aarray[],
                                    int lda, const __nv_bfloat16 *const xarray[], int incx,
                                    const float *beta, float *const yarray[], int incy,
                                    int batchCount) {
  static const RealFunction real(__func__, &cublasTSSgemvBatched);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

cublasStatus_t cublasTSSgemvBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m,
                                       int64_t n, const float *alpha,
                                       const __nv_bfloat16 *const Aarray[], int64_t lda,
                                       const __nv_bfloat16 *const xarray[], int64_t incx,
                                       const float *beta, float *const yarray[], int64_t incy,
                                       int64_t batchCount) {
  static const RealFunction real(__func__, &cublasTSSgemvBatched_64);
  return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray,
                   incy, batchCount);
}

// --- gemvStridedBatched -----------------------------------------------------------------------

cublasStatus_t cublasSgemvStridedBatched(cublasHandle_t handle, cublasOperation_t trans, int m,
                                         int n, const float *alpha, const float *A, int lda,
                                         long long int strideA, const float *x, int incx,
                                         long long int stridex, const float *beta, float *y,
                                         int incy, long long int stridey, int batchCount) {
  static const RealFunction real(__func__, &cublasSgemvStridedBatched);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasSgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans,
                                            int64_t m, int64_t n, const float *alpha,
                                            const float *A, int64_t lda, long long int strideA,
                                            const float *x, int64_t incx, long long int stridex,
                                            const float *beta, float *y, int64_t incy,
                                            long long int stridey, int64_t batchCount) {
  static const RealFunction real(__func__, &cublasSgemvStridedBatched_64);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasDgemvStridedBatched(cublasHandle_t handle, cublasOperation_t trans, int m,
                                         int n, const double *alpha, const double *A, int lda,
                                         long long int strideA, const double *x, int incx,
                                         long long int stridex, const double *beta, double *y,
                                         int incy, long long int stridey, int batchCount) {
  static const RealFunction real(__func__, &cublasDgemvStridedBatched);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasDgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans,
                                            int64_t m, int64_t n, const double *alpha,
                                            const double *A, int64_t lda, long long int strideA,
                                            const double *x, int64_t incx, long long int stridex,
                                            const double *beta, double *y, int64_t incy,
                                            long long int stridey, int64_t batchCount) {
  static const RealFunction real(__func__, &cublasDgemvStridedBatched_64);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasHSHgemvStridedBatched(cublasHandle_t handle, cublasOperation_t trans, int m,
                                           int n, const float *alpha, const __half *A, int lda,
                                           long long int strideA, const __half *x, int incx,
                                           long long int stridex, const float *beta, __half *y,
                                           int incy, long long int stridey, int batchCount) {
  static const RealFunction real(__func__, &cublasHSHgemvStridedBatched);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasHSHgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans,
                                              int64_t m, int64_t n, const float *alpha,
                                              const __half *A, int64_t lda,
                                              long long int strideA, const __half *x,
                                              int64_t incx, long long int stridex,
                                              const float *beta, __half *y, int64_t incy,
                                              long long int stridey, int64_t batchCount) {
  static const RealFunction real(__func__, &cublasHSHgemvStridedBatched_64);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasHSSgemvStridedBatched(cublasHandle_t handle, cublasOperation_t trans, int m,
                                           int n, const float *alpha, const __half *A, int lda,
                                           long long int strideA, const __half *x, int incx,
                                           long long int stridex, const float *beta, float *y,
                                           int incy, long long int stridey, int batchCount) {
  static const RealFunction real(__func__, &cublasHSSgemvStridedBatched);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasHSSgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans,
                                              int64_t m, int64_t n, const float *alpha,
                                              const __half *A, int64_t lda,
                                              long long int strideA, const __half *x,
                                              int64_t incx, long long int stridex,
                                              const float *beta, float *y, int64_t incy,
                                              long long int stridey, int64_t batchCount) {
  static const RealFunction real(__func__, &cublasHSSgemvStridedBatched_64);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasTSTgemvStridedBatched(cublasHandle_t handle, cublasOperation_t trans, int m,
                                           int n, const float *alpha, const __nv_bfloat16 *A,
                                           int lda, long long int strideA,
                                           const __nv_bfloat16 *x, int incx,
                                           long long int stridex, const float *beta,
                                           __nv_bfloat16 *y, int incy, long long int stridey,
                                           int batchCount) {
  static const RealFunction real(__func__, &cublasTSTgemvStridedBatched);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasTSTgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans,
                                              int64_t m, int64_t n, const float *alpha,
                                              const __nv_bfloat16 *A, int64_t lda,
                                              long long int strideA, const __nv_bfloat16 *x,
                                              int64_t incx, long long int stridex,
                                              const float *beta, __nv_bfloat16 *y, int64_t incy,
                                              long long int stridey, int64_t batchCount) {
  static const RealFunction real(__func__, &cublasTSTgemvStridedBatched_64);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasTSSgemvStridedBatched(cublasHandle_t handle, cublasOperation_t trans, int m,
                                           int n, const float *alpha, const __nv_bfloat16 *A,
                                           int lda, long long int strideA,
                                           const __nv_bfloat16 *x, int incx,
                                           long long int stridex, const float *beta, float *y,
                                           int incy, long long int stridey, int batchCount) {
  static const RealFunction real(__func__, &cublasTSSgemvStridedBatched);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

cublasStatus_t cublasTSSgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans,
                                              int64_t m, int64_t n, const float *alpha,
                                              const __nv_bfloat16 *A, int64_t lda,
                                              long long int strideA, const __nv_bfloat16 *x,
                                              int64_t incx, long long int stridex,
                                              const float *beta, float *y, int64_t incy,
                                              long long int stridey, int64_t batchCount) {
  static const RealFunction real(__func__, &cublasTSSgemvStridedBatched_64);
  return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y,
                   incy, stridey, batchCount);
}

// --- GEMMs that are a GEMV of one or a few vectors (C of at most 16 columns or rows) ----------

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float *alpha,
                              const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc) {
  static const RealFunction real(__func__, &cublasSgemm_v2);
  return intercept(real, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                 cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                 const float *alpha, const float *A, int64_t lda, const float *B,
                                 int64_t ldb, const float *beta, float *C, int64_t ldc) {
  static const RealFunction real(__func__, &cublasSgemm_v2_64);
  return intercept(real, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const double *alpha,
                              const double *A, int lda, const double *B, int ldb,
                              const double *beta, double *C, int ldc) {
  static const RealFunction real(__func__, &cublasDgemm_v2);
  return intercept(real, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                 cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                 const double *alpha, const double *A, int64_t lda,
                                 const double *B, int64_t ldb, const double *beta, double *C,
                                 int64_t ldc) {
  static const RealFunction real(__func__, &cublasDgemm_v2_64);
  return intercept(real, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  static const RealFunction<xgemv::cublas_dropin::GemmExFunction> real(__func__, &cublasGemmEx);
  return intercept(real, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                   beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
                               const void *B, cudaDataType Btype, int64_t ldb, const void *beta,
                               void *C, cudaDataType Ctype, int64_t ldc,
                               cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  static const RealFunction real(__func__, &cublasGemmEx_64);
  return intercept(real, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                   beta, C, Ctype, ldc, computeType, algo);
}

// --- cublasLtMatmul: the matmuls that are a GEMV or a few-vector GEMV, with or without bias ----

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                              const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  static const RealFunction real(__func__, &cublasLtMatmul, RealLibrary::cublas_lt);
  // cuBLAS's own matmuls (libcublas calls cublasLtMatmul): passed on untouched and unlogged.
  if (xgemv::cublas_dropin::is_real_cublas_code(__builtin_return_address(0)))
    return real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,
                algo, workspace, workspaceSizeInBytes, stream);
  return intercept_matmul(real, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C,
                          Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
}

}  // extern "C"
#pragma GCC visibility pop
