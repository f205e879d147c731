// xgemv.hpp — the C API of xgemv.h as C++ function templates, so that code written once for
// every element type calls one name and the compiler picks the entry point:
//
//   xgemv::gemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy)
//   xgemv::gemv_strided_batched(handle, trans, m, n, alpha, A, lda, stride_a, x, incx, stride_x,
//                               beta, y, incy, stride_y, batch_count)
//   xgemv::gemv_nrhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs)
//
// The element type T is that of A, x and y; alpha and beta are of xgemv::scalar_t<T>. Each call
// passes its arguments, unchanged and in the same order, to T's C entry point (entry_points<T>
// below: one line per element type of xgemv.h) and returns that call's status: semantics,
// argument checks and statuses are those of xgemv.h. Header-only (link libxgemv as for
// xgemv.h), C++17 or later, no exceptions (every call is noexcept).
#ifndef XGEMV_XGEMV_HPP
#define XGEMV_XGEMV_HPP

#include "xgemv.h"

namespace xgemv {

// The scalar type and the C entry points of element type T.
template <class T>
struct entry_points;

template <class Scalar, class Gemv, class Strided, class Nrhs>
struct entry_point_set {
  using scalar = Scalar;
  Gemv gemv;
  Strided gemv_strided_batched;
  Nrhs gemv_nrhs;
};
template <class S, class G, class B, class R>
constexpr entry_point_set<S, G, B, R> entry_point_set_of(G gemv, B strided, R nrhs) {
  return {gemv, strided, nrhs};
}

template <>
struct entry_points<float> {
  static constexpr auto set =
      entry_point_set_of<float>(&xgemv_sgemv, &xgemv_sgemv_strided_batched, &xgemv_sgemv_nrhs);
};
template <>
struct entry_points<double> {
  static constexpr auto set =
      entry_point_set_of<double>(&xgemv_dgemv, &xgemv_dgemv_strided_batched, &xgemv_dgemv_nrhs);
};
template <>
struct entry_points<__half> {
  static constexpr auto set =
      entry_point_set_of<float>(&xgemv_hgemv, &xgemv_hgemv_strided_batched, &xgemv_hgemv_nrhs);
};
template <>
struct entry_points<__nv_bfloat16> {
  static constexpr auto set = entry_point_set_of<float>(
      &xgemv_bf16gemv, &xgemv_bf16gemv_strided_batched, &xgemv_bf16gemv_nrhs);
};

template <class T>
using scalar_t = typename decltype(entry_points<T>::set)::scalar;

template <class T>
inline xgemv_status gemv(xgemv_handle handle, char trans, int64_t m, int64_t n,
                         const scalar_t<T> *alpha, const T *A, int64_t lda, const T *x,
                         int64_t incx, const scalar_t<T> *beta, T *y, int64_t incy) noexcept {
  return entry_points<T>::set.gemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

template <class T>
inline xgemv_status gemv_strided_batched(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                         const scalar_t<T> *alpha, const T *A, int64_t lda,
                                         int64_t stride_a, const T *x, int64_t incx,
                                         int64_t stride_x, const scalar_t<T> *beta, T *y,
                                         int64_t incy, int64_t stride_y,
                                         int64_t batch_count) noexcept {
  return entry_points<T>::set.gemv_strided_batched(handle, trans, m, n, alpha, A, lda, stride_a,
                                                   x, incx, stride_x, beta, y, incy, stride_y,
                                                   batch_count);
}

template <class T>
inline xgemv_status gemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                              const scalar_t<T> *alpha, const T *A, int64_t lda, const T *X,
                              int64_t ldx, const scalar_t<T> *beta, T *Y, int64_t ldy,
                              int64_t nrhs) noexcept {
  return entry_points<T>::set.gemv_nrhs(handle, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy,
                                        nrhs);
}

}  // namespace xgemv

#endif  // XGEMV_XGEMV_HPP
