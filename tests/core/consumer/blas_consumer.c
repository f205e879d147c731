/* Links the installed libxgemv_blas: sgemv_ comes from it, an argument error reaches the
 * program's own xerbla_ with the Reference BLAS position, and a call on host arrays is computed
 * (by the next BLAS in the process, which is what host arrays go to). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The Fortran BLAS ABI (gfortran: the length of trans comes last). */
void sgemv_(const char *trans, const int *m, const int *n, const float *alpha, const float *a,
            const int *lda, const float *x, const int *incx, const float *beta, float *y,
            const int *incy, size_t trans_length);

static int reported_position = 0;

void xerbla_(const char *routine, const int *position, size_t routine_length) {
  (void)routine;
  (void)routine_length;
  reported_position = *position;
}

int main(void) {
  const float a[4] = {1, 2, 3, 4}; /* column-major 2 x 2: [1 3; 2 4] */
  const float x[2] = {1, 1}, one = 1, zero = 0;
  float y[2] = {0, 0};
  const int two = 2, lda_too_small = 1, inc = 1;
  Dl_info where;

  if (dladdr((void *)sgemv_, &where) == 0 || where.dli_fname == NULL ||
      strstr(where.dli_fname, "libxgemv_blas") == NULL) {
    fprintf(stderr, "sgemv_ does not come from libxgemv_blas\n");
    return 1;
  }
  sgemv_("N", &two, &two, &one, a, &lda_too_small, x, &inc, &zero, y, &inc, 1);
  if (reported_position != 6) {
    fprintf(stderr, "lda < m: xerbla_ got position %d, not 6\n", reported_position);
    return 1;
  }
  sgemv_("N", &two, &two, &one, a, &two, x, &inc, &zero, y, &inc, 1);
  if (y[0] != 4 || y[1] != 6) {
    fprintf(stderr, "y = A x gave (%g, %g), not (4, 6)\n", y[0], y[1]);
    return 1;
  }
  printf("installed libxgemv_blas works: sgemv_ from %s\n", where.dli_fname);
  return 0;
}
