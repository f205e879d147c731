// The core's typed call templates behind the C entry points of xgemv.h: the problem of each
// call form, checked and run. The entry points themselves (one per element type and form) are
// generated from src/element_types.json into gemv_entry_points.cpp. Nothing here can throw.
#pragma once

#include "core.hpp"

namespace xgemv {

template <class T, class S>
xgemv_status gemv_strided(xgemv_handle handle, char trans, int64_t m, int64_t n, const S *alpha,
                          const T *a, int64_t lda, int64_t stride_a, const T *x, int64_t incx,
                          int64_t stride_x, const S *beta, T *y, int64_t incy, int64_t stride_y,
                          int64_t batch_count) noexcept {
  return check_and_run(handle, strided_problem(trans, m, n, alpha, a, lda, stride_a, x, incx,
                                               stride_x, beta, y, incy, stride_y, batch_count));
}

template <class T, class S>
xgemv_status gemv_single(xgemv_handle handle, char trans, int64_t m, int64_t n, const S *alpha,
                         const T *a, int64_t lda, const T *x, int64_t incx, const S *beta, T *y,
                         int64_t incy) noexcept {
  return gemv_strided(handle, trans, m, n, alpha, a, lda, 0, x, incx, 0, beta, y, incy, 0, 1);
}

// invariant_columns: the nrhs calls run one vector on the several-vector kernels too (its bits
// those of any nrhs); the bias call runs it on the single-vector ones, as xgemv_?gemv does.
template <class T, class S>
xgemv_status gemv_multi_rhs(xgemv_handle handle, char trans, int64_t m, int64_t n, const S *alpha,
                            const T *a, int64_t lda, const T *x, int64_t ldx, const S *beta, T *y,
                            int64_t ldy, int64_t nrhs, const void *bias,
                            bool invariant_columns) noexcept {
  if (const xgemv_status status = check_multi_rhs_arguments(trans, m, n, lda, ldx, ldy, nrhs);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  GemvProblem problem = multi_rhs_problem(trans, m, n, alpha, a, lda, x, ldx, beta, y, ldy, nrhs);
  problem.bias = bias;
  problem.invariant_columns = invariant_columns;
  return check_and_run(handle, problem);
}

template <class T, class S>
xgemv_status gemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n, const S *alpha,
                       const T *a, int64_t lda, const T *x, int64_t ldx, const S *beta, T *y,
                       int64_t ldy, int64_t nrhs) noexcept {
  return gemv_multi_rhs(handle, trans, m, n, alpha, a, lda, x, ldx, beta, y, ldy, nrhs,
                        /*bias=*/nullptr, /*invariant_columns=*/true);
}

}  // namespace xgemv
