// Which cuBLAS calls xgemv serves, in the shape of a predicate chain: each `route` overload looks
// at one entry point family's arguments and returns either the GEMV to run or why the call
// stays with cuBLAS. xgemv serves only what is valid BLAS; cuBLAS accepts more (m = -1,
// incx = 0, CUBLAS_OP_CONJG, trans 7, ...: see interface/README.md) and keeps answering exactly
// that itself.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core.hpp"

namespace xgemv::cublas_dropin {

// The verdict on one call: the checked GEMV xgemv runs, or the reason the real cuBLAS gets it.
struct Route {
  std::optional<CheckedProblem> problem;
  const char *forward_reason;
};

// --- the gemv families ------------------------------------------------------------------------

// 'N', 'T', 'C'; '\0' for what BLAS has no name for (CUBLAS_OP_CONJG, out-of-range values
// that cuBLAS tolerates).
char blas_trans(cublasOperation_t op) noexcept;

// The checks every family shares: a BLAS op, then the one checker (BLAS arguments, batch count).
Route checked_route(const GemvProblem &problem);

// cublas{S,D}gemv_v2[_64].
template <class TA, class TY, class S, class Int>
Route route(cublasOperation_t op, Int m, Int n, const S *alpha, const TA *a, Int lda,
            const TA *x, Int incx, const S *beta, TY *y, Int incy) {
  return checked_route(single_problem(blas_trans(op), m, n, alpha, a, lda, x, incx, beta, y, incy));
}

// cublas{S,D,HSH,HSS,TST,TSS}gemvBatched[_64]: device arrays of pointers.
template <class TA, class TY, class S, class Int>
Route route(cublasOperation_t op, Int m, Int n, const S *alpha, const TA *const *a_array,
            Int lda, const TA *const *x_array, Int incx, const S *beta, TY *const *y_array,
            Int incy, Int batch_count) {
  return checked_route(pointer_array_problem(blas_trans(op), m, n, alpha, a_array, lda, x_array,
                                             incx, beta, y_array, incy, batch_count));
}

// cublas{S,D,HSH,HSS,TST,TSS}gemvStridedBatched[_64].
template <class TA, class TY, class S, class Int>
Route route(cublasOperation_t op, Int m, Int n, const S *alpha, const TA *a, Int lda,
            long long stride_a, const TA *x, Int incx, long long stride_x, const S *beta, TY *y,
            Int incy, long long stride_y, Int batch_count) {
  return checked_route(strided_problem(blas_trans(op), m, n, alpha, a, lda, stride_a, x, incx,
                                       stride_x, beta, y, incy, stride_y, batch_count));
}

// --- GEMMs that are a GEMV ----------------------------------------------------------------------

// The most vectors a GEMM-as-GEMV carries (the several-right-hand-side kernels read the matrix
// once for up to that many).
inline constexpr int64_t kMaxGemmVectors = 16;

// Whether the vectors of a GEMM-as-GEMV with C of m x n are the columns of C (the matrix is A)
// rather than its rows (the matrix is B): one vector first, either way (the single-vector
// kernels), then the columns, then the rows.
constexpr bool gemm_vectors_in_columns(int64_t m, int64_t n) {
  return n == 1 || (m != 1 && n <= kMaxGemmVectors);
}

// A strided batch of GEMMs (cublasLtMatmul's layouts): GEMM b reads A, B and C b * stride
// elements after GEMM 0's. One GEMM: count 1.
struct GemmBatch {
  int64_t count = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};

// C (m x n) = alpha*op(A)*op(B) + beta*C as one GEMV problem of rhs_count vectors, when the call
// is a valid GEMM with m, n, k > 0 (k == 0 scales C, which a GEMV of length 0 would not do) and
// C is, in this order of preference (gemm_vectors_in_columns):
//  - one column (n == 1): the matrix is A, the vector column 0 of op(B);
//  - one row (m == 1): the matrix is B, the vector row 0 of op(A), y row 0 of C (inc ldc);
//  - 2..kMaxGemmVectors columns: the matrix is A, the vectors the n columns of op(B) (op N:
//    inc 1, ld ldb; op T: inc ldb, ld 1), y the columns of C (inc 1, ld ldc);
//  - 2..kMaxGemmVectors rows (C^T = op(B)^T op(A)^T): the matrix is B, the vectors the m rows
//    of op(A) (op N: inc lda, ld 1; op T: inc 1, ld lda), y the rows of C (inc ldc, ld 1).
// y is C; a batch becomes the problem's batch with the strides of its operands. The problem is
// not checked yet.
std::optional<GemvProblem> gemv_of_gemm(cublasOperation_t transa, cublasOperation_t transb,
                                        int64_t m, int64_t n, int64_t k, const void *alpha,
                                        const void *a, int64_t lda, const void *b, int64_t ldb,
                                        const void *beta, void *c, int64_t ldc,
                                        const ElementTypes &types, const GemmBatch &batch,
                                        const char **reason);

// The GEMV element types of a GEMM's types, or nullptr (with the reason) where xgemv does not
// serve them: A and B of one type in {16F, 16BF, 32F, 64F}, C of that type or 32F for 16-bit A
// and B (the HSH/TST/S/D and HSS/TSS combinations); any CUBLAS_COMPUTE_32F* compute type for
// the first three (float scalars; xgemv accumulates in full fp32, at least as accurate as each
// of them), CUBLAS_COMPUTE_64F[_PEDANTIC] for 64F (double scalars).
const ElementTypes *served_gemm_types(cudaDataType a_type, cudaDataType b_type,
                                      cudaDataType c_type, cublasComputeType_t compute_type,
                                      const char **reason);

// The verdict on a GEMM-as-GEMV (nullopt: not one, for `reason`): a problem of several vectors
// is served up to a count by op and A's type (op T: 16 of 16-bit or fp64, 8 of fp32; op N: 16
// of fp64, 8 of 16-bit, 4 of fp32), where xgemv's kernel is at least as fast as cuBLAS's
// GEMM; more are forwarded. Then the one checker.
Route route_gemv_of_gemm(const std::optional<GemvProblem> &gemv, const char *reason);

// cublasGemmEx[_64]: the types of served_gemm_types, any algo.
Route route_gemm(cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
                 int64_t k, const void *alpha, const void *a, cudaDataType a_type, int64_t lda,
                 const void *b, cudaDataType b_type, int64_t ldb, const void *beta, void *c,
                 cudaDataType c_type, int64_t ldc, cublasComputeType_t compute_type);

template <class Int>
Route route(cublasOperation_t transa, cublasOperation_t transb, Int m, Int n, Int k,
            const void *alpha, const void *a, cudaDataType a_type, Int lda, const void *b,
            cudaDataType b_type, Int ldb, const void *beta, void *c, cudaDataType c_type, Int ldc,
            cublasComputeType_t compute_type, cublasGemmAlgo_t /*algo: a hint*/) {
  return route_gemm(transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c,
                    c_type, ldc, compute_type);
}

// cublasSgemm_v2[_64] and cublasDgemm_v2[_64]: GemmEx with 32F (64F) everywhere.
template <class Int, class T>
Route route(cublasOperation_t transa, cublasOperation_t transb, Int m, Int n, Int k,
            const T *alpha, const T *a, Int lda, const T *b, Int ldb, const T *beta, T *c,
            Int ldc) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr bool fp64 = std::is_same_v<T, double>;
  constexpr cudaDataType type = fp64 ? CUDA_R_64F : CUDA_R_32F;
  return route_gemm(transa, transb, m, n, k, alpha, a, type, lda, b, type, ldb, beta, c, type,
                    ldc, fp64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F);
}

// --- running it -----------------------------------------------------------------------------

// What became of a call xgemv was to serve: the status for the caller, or (nothing touched) the
// reason it must go to cuBLAS after all.
struct ServeResult {
  cublasStatus_t status;
  const char *forward_reason;  // nullptr: served
};

// Runs the problem with the handle's stream, pointer mode and device; logs it when served
// (gemv_serve.cpp).
ServeResult serve(const char *entry, cublasHandle_t handle, const CheckedProblem &problem) noexcept;

// The same for a caller that names the stream and pointer mode itself (cublasLtMatmul); `owner`
// is the caller's handle, whose xgemv handles serve it (xgemv_handles.hpp).
ServeResult serve_on_stream(const char *entry, const void *owner, cudaStream_t stream,
                            xgemv_pointer_mode pointer_mode,
                            const CheckedProblem &problem) noexcept;

}  // namespace xgemv::cublas_dropin
