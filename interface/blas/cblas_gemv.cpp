// cblas_sgemv and cblas_dgemv. A row-major call is the column-major call on A^T: m and n
// swapped, trans flipped. Errors reach cblas_xerbla with exactly the arguments
// the reference CBLAS gives it, so a program that supplies its own sees the same calls.
#include "blas_abi.hpp"
#include "blas_routing.hpp"
#include "problem.hpp"

namespace xgemv::blas {
namespace {

// The column-major trans of a CBLAS call; '\0' for an invalid CBLAS_TRANSPOSE. Row-major flips
// it: A^T for NoTrans, A for Trans and ConjTrans (real types).
char column_major_trans(int trans, bool row_major) {
  switch (trans) {
    case kCblasNoTrans: return row_major ? 'T' : 'N';
    case kCblasTrans: return row_major ? 'N' : 'T';
    case kCblasConjTrans: return row_major ? 'N' : 'C';
    default: return '\0';
  }
}

// As the reference CBLAS reports an error: RowMajorStrg and CBLAS_CallFromC are set around the
// cblas_xerbla call.
template <class... Values>
void report_cblas_error(int info, const char *routine, bool row_major, const char *form,
                        Values... values) {
  RowMajorStrg = row_major ? 1 : 0;
  CBLAS_CallFromC = 1;
  cblas_xerbla(info, routine, form, values...);
  CBLAS_CallFromC = 0;
  RowMajorStrg = 0;
}

template <class T>
void cblas_gemv(int layout, int trans, int m, int n, T alpha, const T *a, int lda, const T *x,
                int incx, T beta, T *y, int incy) noexcept {
  const char *routine = GemvNames<T>::cblas;
  const bool row_major = layout == kCblasRowMajor;
  if (!row_major && layout != kCblasColMajor)
    return report_cblas_error(1, routine, false, "Illegal layout setting, %d\n", layout);
  const char folded_trans = column_major_trans(trans, row_major);
  if (folded_trans == '\0')
    return report_cblas_error(2, routine, row_major, "Illegal TransA setting, %d\n", trans);
  const int rows = row_major ? n : m, cols = row_major ? m : n;
  xgemv_status status = XGEMV_STATUS_SUCCESS;
  const std::optional<CheckedProblem> problem = check_problem(
      single_problem(folded_trans, rows, cols, &alpha, a, lda, x, incx, &beta, y, incy), &status);
  if (!problem) {
    // The reference numbers the column-major call's argument + 1 (CBLAS adds the layout
    // argument); for row-major its cblas_xerbla swaps 3 and 4 back to M and N itself.
    return report_cblas_error(xgemv_status_argument(status) + 1, routine, row_major, "");
  }
  run_gemv<T>(routine, *problem);
}

}  // namespace
}  // namespace xgemv::blas

#pragma GCC visibility push(default)
extern "C" {

void cblas_sgemv(int layout, int trans, int m, int n, float alpha, const float *a, int lda,
                 const float *x, int incx, float beta, float *y, int incy) {
  xgemv::blas::cblas_gemv(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

void cblas_dgemv(int layout, int trans, int m, int n, double alpha, const double *a, int lda,
                 const double *x, int incx, double beta, double *y, int incy) {
  xgemv::blas::cblas_gemv(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

}  // extern "C"
#pragma GCC visibility pop
