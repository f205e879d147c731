/* The CBLAS GEMV ABI as the reference CBLAS test programs declare it (their cblas_test.h), so
 * that the tests do not depend on one vendor's cblas.h. */
#ifndef XGEMV_TEST_CBLAS_GEMV_ABI_H
#define XGEMV_TEST_CBLAS_GEMV_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum CBLAS_LAYOUT { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };

void cblas_sgemv(enum CBLAS_LAYOUT layout, enum CBLAS_TRANSPOSE trans, int m, int n, float alpha,
                 const float *a, int lda, const float *x, int incx, float beta, float *y,
                 int incy);
void cblas_dgemv(enum CBLAS_LAYOUT layout, enum CBLAS_TRANSPOSE trans, int m, int n,
                 double alpha, const double *a, int lda, const double *x, int incx, double beta,
                 double *y, int incy);
void cblas_xerbla(int info, const char *routine, const char *form, ...);

/* Fortran BLAS, with the hidden length of the character argument. */
void sgemv_(const char *trans, const int *m, const int *n, const float *alpha, const float *a,
            const int *lda, const float *x, const int *incx, const float *beta, float *y,
            const int *incy, size_t trans_length);
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy, size_t trans_length);
void xerbla_(const char *routine, const int *info, size_t routine_length);

/* Reference CBLAS state read by a cblas_xerbla written for the reference. */
extern int RowMajorStrg;

#ifdef __cplusplus
}
#endif

#endif
