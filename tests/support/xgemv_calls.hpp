// xgemv's typed entry points as one overload set, so that tests are written once for every
// element type. Header-only: link xgemv::xgemv.
#pragma once

#include <xgemv/xgemv.h>

#include "element_types.hpp"
#include "gemv_layout.hpp"

namespace xgemv_test {

// Raw overloads, argument for argument as in the C ABI.
inline xgemv_status xgemv_gemv(xgemv_handle h, char trans, int64_t m, int64_t n, const float *alpha,
                               const float *a, int64_t lda, const float *x, int64_t incx,
                               const float *beta, float *y, int64_t incy) {
  return xgemv_sgemv(h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
inline xgemv_status xgemv_gemv(xgemv_handle h, char trans, int64_t m, int64_t n,
                               const double *alpha, const double *a, int64_t lda, const double *x,
                               int64_t incx, const double *beta, double *y, int64_t incy) {
  return xgemv_dgemv(h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
inline xgemv_status xgemv_gemv(xgemv_handle h, char trans, int64_t m, int64_t n, const float *alpha,
                               const __half *a, int64_t lda, const __half *x, int64_t incx,
                               const float *beta, __half *y, int64_t incy) {
  return xgemv_hgemv(h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
inline xgemv_status xgemv_gemv(xgemv_handle h, char trans, int64_t m, int64_t n, const float *alpha,
                               const __nv_bfloat16 *a, int64_t lda, const __nv_bfloat16 *x,
                               int64_t incx, const float *beta, __nv_bfloat16 *y, int64_t incy) {
  return xgemv_bf16gemv(h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

inline xgemv_status xgemv_gemv_strided_batched(xgemv_handle h, char trans, int64_t m, int64_t n,
                                               const float *alpha, const float *a, int64_t lda,
                                               int64_t stride_a, const float *x, int64_t incx,
                                               int64_t stride_x, const float *beta, float *y,
                                               int64_t incy, int64_t stride_y, int64_t count) {
  return xgemv_sgemv_strided_batched(h, trans, m, n, alpha, a, lda, stride_a, x, incx, stride_x,
                                     beta, y, incy, stride_y, count);
}
inline xgemv_status xgemv_gemv_strided_batched(xgemv_handle h, char trans, int64_t m, int64_t n,
                                               const double *alpha, const double *a, int64_t lda,
                                               int64_t stride_a, const double *x, int64_t incx,
                                               int64_t stride_x, const double *beta, double *y,
                                               int64_t incy, int64_t stride_y, int64_t count) {
  return xgemv_dgemv_strided_batched(h, trans, m, n, alpha, a, lda, stride_a, x, incx, stride_x,
                                     beta, y, incy, stride_y, count);
}
inline xgemv_status xgemv_gemv_strided_batched(xgemv_handle h, char trans, int64_t m, int64_t n,
                                               const float *alpha, const __half *a, int64_t lda,
                                               int64_t stride_a, const __half *x, int64_t incx,
                                               int64_t stride_x, const float *beta, __half *y,
                                               int64_t incy, int64_t stride_y, int64_t count) {
  return xgemv_hgemv_strided_batched(h, trans, m, n, alpha, a, lda, stride_a, x, incx, stride_x,
                                     beta, y, incy, stride_y, count);
}
inline xgemv_status xgemv_gemv_strided_batched(
    xgemv_handle h, char trans, int64_t m, int64_t n, const float *alpha, const __nv_bfloat16 *a,
    int64_t lda, int64_t stride_a, const __nv_bfloat16 *x, int64_t incx, int64_t stride_x,
    const float *beta, __nv_bfloat16 *y, int64_t incy, int64_t stride_y, int64_t count) {
  return xgemv_bf16gemv_strided_batched(h, trans, m, n, alpha, a, lda, stride_a, x, incx, stride_x,
                                        beta, y, incy, stride_y, count);
}

// The pointers of one call: scalars on the host or the device per the handle's pointer mode.
template <class T>
struct GemvOperands {
  const ScalarOf<T> *alpha = nullptr;
  const T *a = nullptr;
  const T *x = nullptr;
  const ScalarOf<T> *beta = nullptr;
  T *y = nullptr;
};

// One call through the single-problem entry point (batch == nullptr) or the strided-batched one.
template <class T>
xgemv_status xgemv_gemv(xgemv_handle h, const GemvShape &s, const BatchLayout *batch,
                        const GemvOperands<T> &p) {
  if (batch == nullptr)
    return xgemv_gemv(h, s.trans, s.m, s.n, p.alpha, p.a, s.lda, p.x, s.incx, p.beta, p.y, s.incy);
  return xgemv_gemv_strided_batched(h, s.trans, s.m, s.n, p.alpha, p.a, s.lda, batch->stride_a, p.x,
                                    s.incx, batch->stride_x, p.beta, p.y, s.incy, batch->stride_y,
                                    batch->count);
}

}  // namespace xgemv_test
