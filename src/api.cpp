// The C ABI's untyped entry point: xgemv_gemv_bias, one for every element type (the typed ones
// are generated from src/element_types.json, see gemv_calls.hpp). Nothing here can throw.
#include "type_switches.hpp"
#include "gemv_calls.hpp"

extern "C" {

xgemv_status xgemv_gemv_bias(xgemv_handle handle, xgemv_datatype type, char trans, int64_t m,
                             int64_t n, const void *alpha, const void *A, int64_t lda,
                             const void *X, int64_t ldx, const void *beta, void *Y, int64_t ldy,
                             int64_t nrhs, const void *bias) {
  // `element` and `scalar` carry only their types: that of A, X, Y and bias, that of alpha, beta.
  return xgemv::with_element_type(type, [&](auto element, auto scalar) {
    using T = decltype(element);
    using S = decltype(scalar);
    return xgemv::gemv_multi_rhs(handle, trans, m, n, static_cast<const S *>(alpha),
                                 static_cast<const T *>(A), lda, static_cast<const T *>(X), ldx,
                                 static_cast<const S *>(beta), static_cast<T *>(Y), ldy, nrhs,
                                 bias, /*invariant_columns=*/false);
  });
}

}  // extern "C"
