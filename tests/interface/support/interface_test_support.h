/* Helpers for the interface test programs (C, C++ and, through interface_test_support.f90,
 * Fortran): output capture, to check the interfaces' logs and messages call by call, and the
 * GPU probe behind the exit-77 skip. */
#ifndef XGEMV_INTERFACE_TEST_SUPPORT_H
#define XGEMV_INTERFACE_TEST_SUPPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Exit status CTest reports as skipped (SKIP_RETURN_CODE). */
#define TEST_SKIPPED 77

/* Number of usable CUDA devices (0 without a driver or GPU). */
int test_gpu_count(void);

/* Redirects file descriptor `fd` (1 stdout, 2 stderr) into a temporary file until
 * test_capture_end. One capture at a time. Returns 0 on success. */
int test_capture_begin(int fd);

/* Restores the descriptor and returns what was written meanwhile (NUL-terminated, valid until
 * the next capture; "" on failure). */
const char *test_capture_end(void);

/* test_capture_end, then 1 if the captured text contains `needle`, else 0. */
int test_capture_end_contains(const char *needle);

/* How many times `needle` occurs in `text`. */
int test_count_occurrences(const char *text, const char *needle);

#ifdef __cplusplus
}
#endif

#endif
