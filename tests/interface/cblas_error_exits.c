/* Error exits of cblas_sgemv / cblas_dgemv in both layouts, checked the way the reference CBLAS
 * test suite (c_s2chke.c, c_xerbla.c) checks them: this program supplies its own cblas_xerbla,
 * which receives the reference's arguments (for row-major the column-major call's numbering,
 * renumbered here through RowMajorStrg as the reference handler does), and its own xerbla_,
 * which must not be called. y must come back untouched. Runs without a GPU (argument errors are
 * found before anything is routed). */
#include <stdio.h>
#include <string.h>

#include "cblas_gemv_abi.h"

#define INVALID (-1)

static int failures = 0;

/* What the last cblas_xerbla call received. */
static struct {
  int calls;
  int raw_info;      /* the info argument as passed */
  int renumbered;    /* after the reference's row-major M/N swap */
  char routine[32];
  char form[64];
  int row_major_flag;
} last;

void cblas_xerbla(int info, const char *routine, const char *form, ...) {
  last.calls++;
  last.raw_info = info;
  last.row_major_flag = RowMajorStrg;
  snprintf(last.routine, sizeof last.routine, "%s", routine);
  snprintf(last.form, sizeof last.form, "%s", form);
  /* The reference test handler's renumbering for gemv. */
  if (RowMajorStrg && strstr(routine, "gemv") != NULL) {
    if (info == 3) info = 4;
    else if (info == 4) info = 3;
  }
  last.renumbered = info;
}

static int fortran_xerbla_calls = 0;
void xerbla_(const char *routine, const int *info, size_t routine_length) {
  (void)routine, (void)info, (void)routine_length;
  fortran_xerbla_calls++;
}

struct ErrorCase {
  int layout, trans, m, n, lda, incx, incy;
  int expected;      /* CBLAS position: order 1, trans 2, M 3, N 4, lda 7, incX 9, incY 12 */
  int expected_raw;  /* what the reference passes to cblas_xerbla */
  const char *form;  /* the start of the reference's format string */
};

static const struct ErrorCase kCases[] = {
    /* The reference test suite's cases (c_s2chke.c). */
    {INVALID, CblasNoTrans, 0, 0, 1, 1, 1, 1, 1, "Illegal layout setting"},
    {CblasColMajor, INVALID, 0, 0, 1, 1, 1, 2, 2, "Illegal TransA setting"},
    {CblasColMajor, CblasNoTrans, INVALID, 0, 1, 1, 1, 3, 3, ""},
    {CblasColMajor, CblasNoTrans, 0, INVALID, 1, 1, 1, 4, 4, ""},
    {CblasColMajor, CblasNoTrans, 2, 0, 1, 1, 1, 7, 7, ""},
    {CblasColMajor, CblasNoTrans, 0, 0, 1, 0, 1, 9, 9, ""},
    {CblasColMajor, CblasNoTrans, 0, 0, 1, 1, 0, 12, 12, ""},
    {CblasRowMajor, INVALID, 0, 0, 1, 1, 1, 2, 2, "Illegal TransA setting"},
    {CblasRowMajor, CblasNoTrans, INVALID, 0, 1, 1, 1, 3, 4, ""},
    {CblasRowMajor, CblasNoTrans, 0, INVALID, 1, 1, 1, 4, 3, ""},
    {CblasRowMajor, CblasNoTrans, 0, 2, 1, 1, 1, 7, 7, ""},
    {CblasRowMajor, CblasNoTrans, 0, 0, 1, 0, 1, 9, 9, ""},
    {CblasRowMajor, CblasNoTrans, 0, 0, 1, 1, 0, 12, 12, ""},
    /* First failure wins, in the order of the column-major call. */
    {CblasColMajor, CblasTrans, INVALID, INVALID, 0, 0, 0, 3, 3, ""},
    {CblasRowMajor, CblasTrans, INVALID, INVALID, 0, 0, 0, 4, 3, ""},
    {CblasColMajor, CblasConjTrans, 2, 0, 1, 0, 0, 7, 7, ""},
    {CblasRowMajor, CblasConjTrans, 0, 3, 2, 0, 0, 7, 7, ""},
    {CblasColMajor, 7, INVALID, 0, 1, 1, 1, 2, 2, "Illegal TransA setting"},
    /* Row-major lda is checked against N (even with op T), column-major against M. */
    {CblasRowMajor, CblasTrans, 5, 3, 3, 1, 1, 0, 0, NULL},
    {CblasRowMajor, CblasTrans, 3, 5, 3, 1, 1, 7, 7, ""},
    {CblasColMajor, CblasTrans, 3, 5, 3, 1, 1, 0, 0, NULL},
    {CblasColMajor, CblasTrans, 5, 3, 3, 1, 1, 7, 7, ""},
};

/* One call of the routine for `precision` ('s' or 'd'); y is two elements that must stay 42
 * on error (A and x are never read on error, and are zero anyway). */
static void call_gemv(char precision, const struct ErrorCase *c, double *y_out) {
  if (precision == 's') {
    float a[32] = {0}, x[8] = {0}, y[8] = {42, 42, 42, 42, 42, 42, 42, 42};
    cblas_sgemv(c->layout, c->trans, c->m, c->n, 0.0f, a, c->lda, x, c->incx, 1.0f, y, c->incy);
    y_out[0] = y[0], y_out[1] = y[1];
  } else {
    double a[32] = {0}, x[8] = {0}, y[8] = {42, 42, 42, 42, 42, 42, 42, 42};
    cblas_dgemv(c->layout, c->trans, c->m, c->n, 0.0, a, c->lda, x, c->incx, 1.0, y, c->incy);
    y_out[0] = y[0], y_out[1] = y[1];
  }
}

static void check(int ok, const char *what, char precision, size_t index) {
  if (!ok) {
    printf("FAIL cblas_%cgemv case %zu: %s\n", precision, index, what);
    failures++;
  }
}

int main(void) {
  const char precisions[] = {'s', 'd'};
  for (size_t p = 0; p < sizeof precisions; ++p) {
    const char precision = precisions[p];
    char routine[16];
    snprintf(routine, sizeof routine, "cblas_%cgemv", precision);
    for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; ++i) {
      const struct ErrorCase *c = &kCases[i];
      double y[2];
      memset(&last, 0, sizeof last);
      call_gemv(precision, c, y);
      if (c->expected == 0) {
        check(last.calls == 0, "valid call reported an error", precision, i);
        continue;
      }
      check(last.calls == 1, "cblas_xerbla not called exactly once", precision, i);
      check(last.renumbered == c->expected, "wrong argument position", precision, i);
      check(last.raw_info == c->expected_raw, "info passed differs from the reference", precision,
            i);
      check(strcmp(last.routine, routine) == 0, "wrong routine name", precision, i);
      check(strncmp(last.form, c->form, strlen(c->form)) == 0 &&
                (c->form[0] != '\0' || last.form[0] == '\0'),
            "wrong format string", precision, i);
      check(last.row_major_flag == (c->layout == CblasRowMajor), "RowMajorStrg not set as the "
            "reference sets it", precision, i);
      check(RowMajorStrg == 0, "RowMajorStrg not reset", precision, i);
      check(y[0] == 42 && y[1] == 42, "y written on error", precision, i);
      if (last.renumbered != c->expected || last.raw_info != c->expected_raw)
        printf("  got position %d (raw %d), expected %d (raw %d)\n", last.renumbered,
               last.raw_info, c->expected, c->expected_raw);
    }
  }
  if (fortran_xerbla_calls != 0) {
    printf("FAIL xerbla_ was called %d times for CBLAS errors\n", fortran_xerbla_calls);
    failures++;
  }
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
