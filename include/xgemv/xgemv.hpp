// xgemv.hpp — the C API of xgemv.h as C++ overloads, so that code written once for every element
// type calls one name and the compiler picks the entry point:
//
//   xgemv::gemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy)
//   xgemv::gemv_strided_batched(handle, trans, m, n, alpha, A, lda, stride_a, x, incx, stride_x,
//                               beta, y, incy, stride_y, batch_count)
//   xgemv::gemv_nrhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs)
//
//   A, x, y           alpha, beta   C entry point
//   float             float         xgemv_sgemv,    xgemv_sgemv_strided_batched,    xgemv_sgemv_nrhs
//   double            double        xgemv_dgemv,    xgemv_dgemv_strided_batched,    xgemv_dgemv_nrhs
//   __half            float         xgemv_hgemv,    xgemv_hgemv_strided_batched,    xgemv_hgemv_nrhs
//   __nv_bfloat16     float         xgemv_bf16gemv, xgemv_bf16gemv_strided_batched, xgemv_bf16gemv_nrhs
//
// Each overload passes its arguments, unchanged and in the same order, to its C entry point and
// returns that call's status: semantics, argument checks and statuses are those of xgemv.h.
// Header-only (link libxgemv as for xgemv.h), C++17 or later, no exceptions (every overload is
// noexcept).
#ifndef XGEMV_XGEMV_HPP
#define XGEMV_XGEMV_HPP

#include "xgemv.h"

namespace xgemv {

inline xgemv_status gemv(xgemv_handle handle, char trans, int64_t m, int64_t n,
                         const float *alpha, const float *A, int64_t lda, const float *x,
                         int64_t incx, const float *beta, float *y, int64_t incy) noexcept {
  return xgemv_sgemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
inline xgemv_status gemv(xgemv_handle handle, char trans, int64_t m, int64_t n,
                         const double *alpha, const double *A, int64_t lda, const double *x,
                         int64_t incx, const double *beta, double *y, int64_t incy) noexcept {
  return xgemv_dgemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
inline xgemv_status gemv(xgemv_handle handle, char trans, int64_t m, int64_t n,
                         const float *alpha, const __half *A, int64_t lda, const __half *x,
                         int64_t incx, const float *beta, __half *y, int64_t incy) noexcept {
  return xgemv_hgemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
inline xgemv_status gemv(xgemv_handle handle, char trans, int64_t m, int64_t n,
                         const float *alpha, const __nv_bfloat16 *A, int64_t lda,
                         const __nv_bfloat16 *x, int64_t incx, const float *beta,
                         __nv_bfloat16 *y, int64_t incy) noexcept {
  return xgemv_bf16gemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

inline xgemv_status gemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                         const float *alpha, const float *A, int64_t lda,
                                         int64_t stride_a, const float *x, int64_t incx,
                                         int64_t stride_x, const float *beta, float *y,
                                         int64_t incy, int64_t stride_y,
                                         int64_t batch_count) noexcept {
  return xgemv_sgemv_strided_batched(handle, trans, m, n, alpha, A, lda, stride_a, x, incx,
                                     stride_x, beta, y, incy, stride_y, batch_count);
}
inline xgemv_status gemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                         const double *alpha, const double *A, int64_t lda,
                                         int64_t stride_a, const double *x, int64_t incx,
                                         int64_t stride_x, const double *beta, double *y,
                                         int64_t incy, int64_t stride_y,
                                         int64_t batch_count) noexcept {
  return xgemv_dgemv_strided_batched(handle, trans, m, n, alpha, A, lda, stride_a, x, incx,
                                     stride_x, beta, y, incy, stride_y, batch_count);
}
inline xgemv_status gemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                         const float *alpha, const __half *A, int64_t lda,
                                         int64_t stride_a, const __half *x, int64_t incx,
                                         int64_t stride_x, const float *beta, __half *y,
                                         int64_t incy, int64_t stride_y,
                                         int64_t batch_count) noexcept {
  return xgemv_hgemv_strided_batched(handle, trans, m, n, alpha, A, lda, stride_a, x, incx,
                                     stride_x, beta, y, incy, stride_y, batch_count);
}
inline xgemv_status gemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                         const float *alpha, const __nv_bfloat16 *A, int64_t lda,
                                         int64_t stride_a, const __nv_bfloat16 *x, int64_t incx,
                                         int64_t stride_x, const float *beta, __nv_bfloat16 *y,
                                         int64_t incy, int64_t stride_y,
                                         int64_t batch_count) noexcept {
  return xgemv_bf16gemv_strided_batched(handle, trans, m, n, alpha, A, lda, stride_a, x, incx,
                                        stride_x, beta, y, incy, stride_y, batch_count);
}


inline xgemv_status gemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                              const float *alpha, const float *A, int64_t lda, const float *X,
                              int64_t ldx, const float *beta, float *Y, int64_t ldy,
                              int64_t nrhs) noexcept {
  return xgemv_sgemv_nrhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs);
}
inline xgemv_status gemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                              const double *alpha, const double *A, int64_t lda, const double *X,
                              int64_t ldx, const double *beta, double *Y, int64_t ldy,
                              int64_t nrhs) noexcept {
  return xgemv_dgemv_nrhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs);
}
inline xgemv_status gemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                              const float *alpha, const __half *A, int64_t lda, const __half *X,
                              int64_t ldx, const float *beta, __half *Y, int64_t ldy,
                              int64_t nrhs) noexcept {
  return xgemv_hgemv_nrhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs);
}
inline xgemv_status gemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                              const float *alpha, const __nv_bfloat16 *A, int64_t lda,
                              const __nv_bfloat16 *X, int64_t ldx, const float *beta,
                              __nv_bfloat16 *Y, int64_t ldy, int64_t nrhs) noexcept {
  return xgemv_bf16gemv_nrhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs);
}

}  // namespace xgemv

#endif  // XGEMV_XGEMV_HPP
