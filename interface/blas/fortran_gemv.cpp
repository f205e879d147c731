// sgemv_ and dgemv_: the Fortran BLAS ABI. Reference BLAS order of checks (the one shared
// checker), errors through the overridable xerbla_, then routing by where the arrays live.
#include <cstring>

#include "blas_abi.hpp"
#include "blas_routing.hpp"
#include "problem.hpp"

namespace xgemv::blas {
namespace {

template <class T>
void fortran_gemv(const char *trans, const int *m, const int *n, const T *alpha, const T *a,
                  const int *lda, const T *x, const int *incx, const T *beta, T *y,
                  const int *incy) noexcept {
  xgemv_status status = XGEMV_STATUS_SUCCESS;
  const std::optional<CheckedProblem> problem = check_problem(
      single_problem(*trans, *m, *n, alpha, a, *lda, x, *incx, beta, y, *incy), &status);
  if (!problem) {
    // Nothing read or written; the routine name as Reference BLAS passes it ("SGEMV ").
    const int position = xgemv_status_argument(status);
    xerbla_(GemvNames<T>::xerbla, &position, std::strlen(GemvNames<T>::xerbla));
    return;
  }
  run_gemv<T>(GemvNames<T>::fortran, *problem);
}

}  // namespace
}  // namespace xgemv::blas

#pragma GCC visibility push(default)
extern "C" {

// The hidden length of `trans` is not needed: only its first character counts (C callers often
// omit it).
void sgemv_(const char *trans, const int *m, const int *n, const float *alpha, const float *a,
            const int *lda, const float *x, const int *incx, const float *beta, float *y,
            const int *incy, std::size_t /*trans_length*/) {
  xgemv::blas::fortran_gemv(trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy, std::size_t /*trans_length*/) {
  xgemv::blas::fortran_gemv(trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

}  // extern "C"
#pragma GCC visibility pop
