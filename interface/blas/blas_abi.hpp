// The ABI libxgemv_blas.so exports (LP64: 32-bit integers), declared once so that every
// definition is checked against it.
#pragma once

#include <cstddef>

extern "C" {

// Fortran BLAS: every argument by reference, then the hidden length of each character argument.
void sgemv_(const char *trans, const int *m, const int *n, const float *alpha, const float *a,
            const int *lda, const float *x, const int *incx, const float *beta, float *y,
            const int *incy, std::size_t trans_length);
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy, std::size_t trans_length);

// The Fortran error handler: routine name blank-padded to 6 characters, argument position.
void xerbla_(const char *routine, const int *info, std::size_t routine_length);

// CBLAS. The enum arguments travel as ints; taking ints keeps out-of-range values (which the
// error checks must see) well defined.
void cblas_sgemv(int layout, int trans, int m, int n, float alpha, const float *a, int lda,
                 const float *x, int incx, float beta, float *y, int incy);
void cblas_dgemv(int layout, int trans, int m, int n, double alpha, const double *a, int lda,
                 const double *x, int incx, double beta, double *y, int incy);

void cblas_xerbla(int info, const char *routine, const char *form, ...);

// Reference CBLAS state, set while an error is reported: a cblas_xerbla written for the reference
// (its test suite's is) reads RowMajorStrg to renumber M and N of a row-major call.
extern int RowMajorStrg;
extern int CBLAS_CallFromC;

}  // extern "C"

namespace xgemv::blas {

// CBLAS enumerator values (fixed by the CBLAS standard).
constexpr int kCblasRowMajor = 101;
constexpr int kCblasColMajor = 102;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;
constexpr int kCblasConjTrans = 113;

}  // namespace xgemv::blas
