// The C ABI: thin typed entry points over xgemv::gemv. Nothing here can throw.
#include "core.hpp"

namespace {

template <class T, class S>
xgemv_status gemv_strided(xgemv_handle handle, char trans, int64_t m, int64_t n, const S *alpha,
                          const T *a, int64_t lda, int64_t stride_a, const T *x, int64_t incx,
                          int64_t stride_x, const S *beta, T *y, int64_t incy, int64_t stride_y,
                          int64_t batch_count) noexcept {
  return xgemv::check_and_run(handle,
                              xgemv::strided_problem(trans, m, n, alpha, a, lda, stride_a, x,
                                                     incx, stride_x, beta, y, incy, stride_y,
                                                     batch_count));
}

// invariant_columns: the nrhs calls run one vector on the several-vector kernels too (its bits
// those of any nrhs); the bias call runs it on the single-vector ones, as xgemv_?gemv does.
template <class T, class S>
xgemv_status gemv_multi_rhs(xgemv_handle handle, char trans, int64_t m, int64_t n, const S *alpha,
                            const T *a, int64_t lda, const T *x, int64_t ldx, const S *beta, T *y,
                            int64_t ldy, int64_t nrhs, const void *bias,
                            bool invariant_columns) noexcept {
  if (const xgemv_status status =
          xgemv::check_multi_rhs_arguments(trans, m, n, lda, ldx, ldy, nrhs);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  xgemv::GemvProblem problem =
      xgemv::multi_rhs_problem(trans, m, n, alpha, a, lda, x, ldx, beta, y, ldy, nrhs);
  problem.bias = bias;
  problem.invariant_columns = invariant_columns;
  return xgemv::check_and_run(handle, problem);
}

}  // namespace

extern "C" {

xgemv_status xgemv_sgemv(xgemv_handle handle, char trans, int64_t m, int64_t n, const float *alpha,
                         const float *A, int64_t lda, const float *x, int64_t incx,
                         const float *beta, float *y, int64_t incy) {
  return gemv_strided(handle, trans, m, n, alpha, A, lda, 0, x, incx, 0, beta, y, incy, 0, 1);
}

xgemv_status xgemv_dgemv(xgemv_handle handle, char trans, int64_t m, int64_t n,
                         const double *alpha, const double *A, int64_t lda, const double *x,
                         int64_t incx, const double *beta, double *y, int64_t incy) {
  return gemv_strided(handle, trans, m, n, alpha, A, lda, 0, x, incx, 0, beta, y, incy, 0, 1);
}

xgemv_status xgemv_hgemv(xgemv_handle handle, char trans, int64_t m, int64_t n, const float *alpha,
                         const xgemv_half *A, int64_t lda, const xgemv_half *x, int64_t incx,
                         const float *beta, xgemv_half *y, int64_t incy) {
  return gemv_strided(handle, trans, m, n, alpha, A, lda, 0, x, incx, 0, beta, y, incy, 0, 1);
}

xgemv_status xgemv_bf16gemv(xgemv_handle handle, char trans, int64_t m, int64_t n,
                            const float *alpha, const xgemv_bfloat16 *A, int64_t lda,
                            const xgemv_bfloat16 *x, int64_t incx, const float *beta,
                            xgemv_bfloat16 *y, int64_t incy) {
  return gemv_strided(handle, trans, m, n, alpha, A, lda, 0, x, incx, 0, beta, y, incy, 0, 1);
}

xgemv_status xgemv_sgemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                         const float *alpha, const float *A, int64_t lda,
                                         int64_t stride_a, const float *x, int64_t incx,
                                         int64_t stride_x, const float *beta, float *y,
                                         int64_t incy, int64_t stride_y, int64_t batch_count) {
  return gemv_strided(handle, trans, m, n, alpha, A, lda, stride_a, x, incx, stride_x, beta, y,
                      incy, stride_y, batch_count);
}

xgemv_status xgemv_dgemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                         const double *alpha, const double *A, int64_t lda,
                                         int64_t stride_a, const double *x, int64_t incx,
                                         int64_t stride_x, const double *beta, double *y,
                                         int64_t incy, int64_t stride_y, int64_t batch_count) {
  return gemv_strided(handle, trans, m, n, alpha, A, lda, stride_a, x, incx, stride_x, beta, y,
                      incy, stride_y, batch_count);
}

xgemv_status xgemv_hgemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                         const float *alpha, const xgemv_half *A, int64_t lda,
                                         int64_t stride_a, const xgemv_half *x, int64_t incx,
                                         int64_t stride_x, const float *beta, xgemv_half *y,
                                         int64_t incy, int64_t stride_y, int64_t batch_count) {
  return gemv_strided(handle, trans, m, n, alpha, A, lda, stride_a, x, incx, stride_x, beta, y,
                      incy, stride_y, batch_count);
}

xgemv_status xgemv_bf16gemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                            const float *alpha, const xgemv_bfloat16 *A,
                                            int64_t lda, int64_t stride_a,
                                            const xgemv_bfloat16 *x, int64_t incx,
                                            int64_t stride_x, const float *beta,
                                            xgemv_bfloat16 *y, int64_t incy, int64_t stride_y,
                                            int64_t batch_count) {
  return gemv_strided(handle, trans, m, n, alpha, A, lda, stride_a, x, incx, stride_x, beta, y,
                      incy, stride_y, batch_count);
}

xgemv_status xgemv_sgemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                              const float *alpha, const float *A, int64_t lda, const float *X,
                              int64_t ldx, const float *beta, float *Y, int64_t ldy,
                              int64_t nrhs) {
  return gemv_multi_rhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs,
                        /*bias=*/nullptr, /*invariant_columns=*/true);
}

xgemv_status xgemv_dgemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                              const double *alpha, const double *A, int64_t lda, const double *X,
                              int64_t ldx, const double *beta, double *Y, int64_t ldy,
                              int64_t nrhs) {
  return gemv_multi_rhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs,
                        /*bias=*/nullptr, /*invariant_columns=*/true);
}

xgemv_status xgemv_hgemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                              const float *alpha, const xgemv_half *A, int64_t lda,
                              const xgemv_half *X, int64_t ldx, const float *beta, xgemv_half *Y,
                              int64_t ldy, int64_t nrhs) {
  return gemv_multi_rhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs,
                        /*bias=*/nullptr, /*invariant_columns=*/true);
}

xgemv_status xgemv_bf16gemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                 const float *alpha, const xgemv_bfloat16 *A, int64_t lda,
                                 const xgemv_bfloat16 *X, int64_t ldx, const float *beta,
                                 xgemv_bfloat16 *Y, int64_t ldy, int64_t nrhs) {
  return gemv_multi_rhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs,
                        /*bias=*/nullptr, /*invariant_columns=*/true);
}

xgemv_status xgemv_gemv_bias(xgemv_handle handle, xgemv_datatype type, char trans, int64_t m,
                             int64_t n, const void *alpha, const void *A, int64_t lda,
                             const void *X, int64_t ldx, const void *beta, void *Y, int64_t ldy,
                             int64_t nrhs, const void *bias) {
  // `element` and `scalar` carry only their types: that of A, X, Y and bias, that of alpha, beta.
  const auto typed = [&](auto element, auto scalar) {
    using T = decltype(element);
    using S = decltype(scalar);
    return gemv_multi_rhs(handle, trans, m, n, static_cast<const S *>(alpha),
                          static_cast<const T *>(A), lda, static_cast<const T *>(X), ldx,
                          static_cast<const S *>(beta), static_cast<T *>(Y), ldy, nrhs,
                          bias, /*invariant_columns=*/false);
  };
  switch (type) {
    case XGEMV_R_32F: return typed(float{}, float{});
    case XGEMV_R_64F: return typed(double{}, double{});
    case XGEMV_R_16F: return typed(xgemv_half{}, float{});
    case XGEMV_R_16BF: return typed(xgemv_bfloat16{}, float{});
  }
  return XGEMV_STATUS_INVALID_VALUE;
}

}  // extern "C"
