// One xgemv call described by a GemvShape, so that tests are written once for every element type
// and every entry point. Header-only: link xgemv::xgemv.
#pragma once

#include <xgemv/xgemv.hpp>

#include "element_types.hpp"
#include "gemv_layout.hpp"

namespace xgemv_test {

// The pointers of one call: scalars on the host or the device per the handle's pointer mode.
template <class T>
struct GemvOperands {
  const ScalarOf<T> *alpha = nullptr;
  const T *a = nullptr;
  const T *x = nullptr;
  const ScalarOf<T> *beta = nullptr;
  T *y = nullptr;
};

// The operands with alpha and beta where `mode` has them: &alpha and &beta on the host, or
// device_scalars[0] and [1].
template <class T>
GemvOperands<T> operands_in_mode(xgemv_pointer_mode mode, const ScalarOf<T> &alpha,
                                 const ScalarOf<T> &beta, const ScalarOf<T> *device_scalars,
                                 const T *a, const T *x, T *y) {
  const bool device = mode == XGEMV_POINTER_MODE_DEVICE;
  return {device ? device_scalars : &alpha, a, x, device ? device_scalars + 1 : &beta, y};
}

// One call through the single-problem entry point (batch == nullptr) or the strided-batched one.
template <class T>
xgemv_status xgemv_gemv(xgemv_handle h, const GemvShape &s, const BatchLayout *batch,
                        const GemvOperands<T> &p) {
  if (batch == nullptr)
    return xgemv::gemv(h, s.trans, s.m, s.n, p.alpha, p.a, s.lda, p.x, s.incx, p.beta, p.y, s.incy);
  return xgemv::gemv_strided_batched(h, s.trans, s.m, s.n, p.alpha, p.a, s.lda, batch->stride_a,
                                     p.x, s.incx, batch->stride_x, p.beta, p.y, s.incy,
                                     batch->stride_y, batch->count);
}

// One call through the few-right-hand-side entry point: trans, m, n and lda from the shape
// (its incx and incy are not arguments of that call), X and Y as `rhs` lays them out.
template <class T>
xgemv_status xgemv_gemv_nrhs(xgemv_handle h, const GemvShape &s, const RhsLayout &rhs,
                             const GemvOperands<T> &p) {
  return xgemv::gemv_nrhs(h, s.trans, s.m, s.n, p.alpha, p.a, s.lda, p.x, rhs.ldx, p.beta, p.y,
                          rhs.ldy, rhs.count);
}

// The xgemv_datatype of element type T (xgemv_gemv_bias's `type`).
template <class T>
constexpr xgemv_datatype datatype_of() {
  return per_element_type<T>(XGEMV_R_32F, XGEMV_R_64F, XGEMV_R_16F, XGEMV_R_16BF);
}

// One call through xgemv_gemv_bias: as xgemv_gemv_nrhs's, with `bias` (NULL: none) and the
// element type given by `type` (datatype_of<T>() unless a test says otherwise).
template <class T>
xgemv_status call_gemv_bias(xgemv_handle h, const GemvShape &s, const RhsLayout &rhs,
                            const GemvOperands<T> &p, const T *bias,
                            xgemv_datatype type = datatype_of<T>()) {
  return ::xgemv_gemv_bias(h, type, s.trans, s.m, s.n, p.alpha, p.a, s.lda, p.x, rhs.ldx, p.beta,
                           p.y, rhs.ldy, rhs.count, bias);
}

}  // namespace xgemv_test
