// One xgemv call described by a GemvShape, so that tests are written once for every element type
// and both entry points. Header-only: link xgemv::xgemv.
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

}  // namespace xgemv_test
