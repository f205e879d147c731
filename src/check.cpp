#include "core.hpp"

namespace xgemv {

xgemv_status check_gemv_arguments(char trans, int64_t m, int64_t n, int64_t lda, int64_t incx,
                                  int64_t incy) noexcept {
  switch (trans) {
    case 'N': case 'n': case 'T': case 't': case 'C': case 'c': break;
    default: return XGEMV_STATUS_INVALID_TRANS;
  }
  if (m < 0) return XGEMV_STATUS_INVALID_M;
  if (n < 0) return XGEMV_STATUS_INVALID_N;
  // Reference BLAS checks lda against m whatever trans is.
  if (lda < (m > 1 ? m : 1)) return XGEMV_STATUS_INVALID_LDA;
  if (incx == 0) return XGEMV_STATUS_INVALID_INCX;
  if (incy == 0) return XGEMV_STATUS_INVALID_INCY;
  return XGEMV_STATUS_SUCCESS;
}

}  // namespace xgemv
