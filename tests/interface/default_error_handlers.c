/* The library's own xerbla_ and cblas_xerbla (this program supplies neither): they print what
 * the reference handlers print (xerbla.f on stdout, cblas_xerbla.c on stderr) and return, so the
 * program goes on; y is untouched. Runs without a GPU. */
#include <stdio.h>
#include <string.h>

#include "cblas_gemv_abi.h"
#include "interface_test_support.h"

static int failures = 0;

static void expect_text(const char *text, const char *expected, const char *what) {
  if (strstr(text, expected) == NULL) {
    printf("FAIL %s: expected \"%s\" in \"%s\"\n", what, expected, text);
    failures++;
  }
}

int main(void) {
  float a[4] = {0}, x[2] = {0}, y[2] = {42, 42};
  const float alpha = 1, beta = 0;
  const int m = 2, n = 1, lda = 1, inc = 1;

  test_capture_begin(1);
  sgemv_("N", &m, &n, &alpha, a, &lda, x, &inc, &beta, y, &inc, 1);
  expect_text(test_capture_end(), " ** On entry to SGEMV parameter number  6 had an illegal value",
              "sgemv_ lda");

  const double dalpha = 1, dbeta = 0;
  double da[4] = {0}, dx[2] = {0}, dy[2] = {42, 42};
  const int bad_m = -1;
  test_capture_begin(1);
  dgemv_("T", &bad_m, &n, &dalpha, da, &lda, dx, &inc, &dbeta, dy, &inc, 1);
  expect_text(test_capture_end(), " ** On entry to DGEMV parameter number  2 had an illegal value",
              "dgemv_ m");

  test_capture_begin(2);
  cblas_sgemv(CblasRowMajor, CblasNoTrans, -1, 0, 1.0f, a, 1, x, 1, 0.0f, y, 1);
  expect_text(test_capture_end(), "Parameter 3 to routine cblas_sgemv was incorrect",
              "cblas_sgemv row-major M");

  test_capture_begin(2);
  cblas_dgemv(CblasColMajor, (enum CBLAS_TRANSPOSE)5, 1, 1, 1.0, da, 1, dx, 1, 0.0, dy, 1);
  const char *text = test_capture_end();
  expect_text(text, "Parameter 2 to routine cblas_dgemv was incorrect", "cblas_dgemv trans");
  expect_text(text, "Illegal TransA setting, 5", "cblas_dgemv trans message");

  if (y[0] != 42 || y[1] != 42 || dy[0] != 42 || dy[1] != 42) {
    printf("FAIL y written on error\n");
    failures++;
  }
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
