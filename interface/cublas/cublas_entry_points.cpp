// The cuBLAS and cuBLASLt entry points the drop-in defines, with their exact signatures (the
// extern "C" block makes the compiler check each against cublas_api.h and cublasLt.h). Each one
// is the same two lines: its real counterpart, looked up once, and `intercept` (or
// `intercept_matmul`), which routes the call to xgemv or forwards it untouched; the families of
// one signature over several element types are macros (C names cannot come from a template).
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

// --- gemv, gemvBatched, gemvStridedBatched, gemm: each family's entry points are one signature
// over the element types (name, the integer type of sizes: int, or int64_t for the _64 ones,
// then the scalar type and A's, x's and y's element types), written once below. -------------

#define XGEMV_GEMV_ENTRY(name, Int, TS, TA, TX, TY)                                      \
  cublasStatus_t name(cublasHandle_t handle, cublasOperation_t trans, Int m, Int n,    \
                      const TS *alpha, const TA *A, Int lda, const TX *x, Int incx,    \
                      const TS *beta, TY *y, Int incy) {                               \
    static const RealFunction real(__func__, &name);                                   \
    return intercept(real, handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy); \
  }

// Device arrays of pointers.
#define XGEMV_GEMV_BATCHED_ENTRY(name, Int, TS, TA, TX, TY)                                 \
  cublasStatus_t name(cublasHandle_t handle, cublasOperation_t trans, Int m, Int n,       \
                      const TS *alpha, const TA *const Aarray[], Int lda,                 \
                      const TX *const xarray[], Int incx, const TS *beta,                 \
                      TY *const yarray[], Int incy, Int batchCount) {                     \
    static const RealFunction real(__func__, &name);                                      \
    return intercept(real, handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta,   \
                     yarray, incy, batchCount);                                           \
  }

#define XGEMV_GEMV_STRIDED_ENTRY(name, Int, TS, TA, TX, TY)                                 \
  cublasStatus_t name(cublasHandle_t handle, cublasOperation_t trans, Int m, Int n,       \
                      const TS *alpha, const TA *A, Int lda, long long int strideA,       \
                      const TX *x, Int incx, long long int stridex, const TS *beta, TY *y, \
                      Int incy, long long int stridey, Int batchCount) {                  \
    static const RealFunction real(__func__, &name);                                      \
    return intercept(real, handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, \
                     beta, y, incy, stridey, batchCount);                                 \
  }

// GEMMs that are a GEMV of one or a few vectors (C of at most 16 columns or rows).
#define XGEMV_GEMM_ENTRY(name, Int, TS, TA, TX, TY)                                           \
  cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                      \
                      cublasOperation_t transb, Int m, Int n, Int k, const TS *alpha,       \
                      const TA *A, Int lda, const TX *B, Int ldb, const TS *beta, TY *C,    \
                      Int ldc) {                                                            \
    static const RealFunction real(__func__, &name);                                        \
    return intercept(real, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, \
                     ldc);                                                                  \
  }

// An entry point and its _64 twin.
#define XGEMV_ENTRY_PAIR(family, name, TS, TA, TX, TY) \
  family(name, int, TS, TA, TX, TY) family(name##_64, int64_t, TS, TA, TX, TY)

XGEMV_ENTRY_PAIR(XGEMV_GEMV_ENTRY, cublasSgemv_v2, float, float, float, float)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_ENTRY, cublasDgemv_v2, double, double, double, double)

XGEMV_ENTRY_PAIR(XGEMV_GEMV_BATCHED_ENTRY, cublasSgemvBatched, float, float, float, float)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_BATCHED_ENTRY, cublasDgemvBatched, double, double, double, double)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_BATCHED_ENTRY, cublasHSHgemvBatched, float, __half, __half, __half)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_BATCHED_ENTRY, cublasHSSgemvBatched, float, __half, __half, float)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_BATCHED_ENTRY, cublasTSTgemvBatched, float, __nv_bfloat16,
                 __nv_bfloat16, __nv_bfloat16)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_BATCHED_ENTRY, cublasTSSgemvBatched, float, __nv_bfloat16,
                 __nv_bfloat16, float)

XGEMV_ENTRY_PAIR(XGEMV_GEMV_STRIDED_ENTRY, cublasSgemvStridedBatched, float, float, float, float)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_STRIDED_ENTRY, cublasDgemvStridedBatched, double, double, double,
                 double)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_STRIDED_ENTRY, cublasHSHgemvStridedBatched, float, __half, __half,
                 __half)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_STRIDED_ENTRY, cublasHSSgemvStridedBatched, float, __half, __half,
                 float)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_STRIDED_ENTRY, cublasTSTgemvStridedBatched, float, __nv_bfloat16,
                 __nv_bfloat16, __nv_bfloat16)
XGEMV_ENTRY_PAIR(XGEMV_GEMV_STRIDED_ENTRY, cublasTSSgemvStridedBatched, float, __nv_bfloat16,
                 __nv_bfloat16, float)

XGEMV_ENTRY_PAIR(XGEMV_GEMM_ENTRY, cublasSgemm_v2, float, float, float, float)
XGEMV_ENTRY_PAIR(XGEMV_GEMM_ENTRY, cublasDgemm_v2, double, double, double, double)

#undef XGEMV_ENTRY_PAIR
#undef XGEMV_GEMM_ENTRY
#undef XGEMV_GEMV_STRIDED_ENTRY
#undef XGEMV_GEMV_BATCHED_ENTRY
#undef XGEMV_GEMV_ENTRY

// --- cublasGemmEx: its compute type the extern "C" one's ---------------------------------------

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
