// Invalid (and barely valid) arguments with the status xgemv must return when the handle is
// NULL. The order is the contract: BLAS arguments (Reference BLAS order and positions) before
// batch_count, batch_count before the handle, the handle before the quick return.
#pragma once

#include <cstdint>

#include <xgemv/xgemv.h>

namespace xgemv_test {

struct ArgumentCase {
  const char *what;
  char trans;
  int64_t m, n, lda, incx, incy;
  int64_t batch_count;  // != 1: the strided-batched entry points only
  xgemv_status expected_with_null_handle;
};

inline constexpr ArgumentCase kArgumentCases[] = {
    {"trans 'X'", 'X', 2, 2, 2, 1, 1, 1, XGEMV_STATUS_INVALID_TRANS},
    {"trans NUL", '\0', 2, 2, 2, 1, 1, 1, XGEMV_STATUS_INVALID_TRANS},
    {"trans 'H' (not BLAS)", 'H', 2, 2, 2, 1, 1, 1, XGEMV_STATUS_INVALID_TRANS},
    {"trans 'R' (not BLAS)", 'R', 2, 2, 2, 1, 1, 1, XGEMV_STATUS_INVALID_TRANS},
    {"m < 0", 'N', -1, 2, 1, 1, 1, 1, XGEMV_STATUS_INVALID_M},
    {"m = INT64_MIN", 'T', INT64_MIN, 2, 1, 1, 1, 1, XGEMV_STATUS_INVALID_M},
    {"n < 0", 'N', 2, -1, 2, 1, 1, 1, XGEMV_STATUS_INVALID_N},
    {"lda < m", 'N', 5, 3, 4, 1, 1, 1, XGEMV_STATUS_INVALID_LDA},
    {"lda < m for op T (lda is checked against m whatever trans)", 'T', 5, 3, 3, 1, 1, 1,
     XGEMV_STATUS_INVALID_LDA},
    {"lda = 0 with m = 0 (lda >= max(1, m))", 'N', 0, 3, 0, 1, 1, 1, XGEMV_STATUS_INVALID_LDA},
    {"lda < 0", 'C', 1, 1, -1, 1, 1, 1, XGEMV_STATUS_INVALID_LDA},
    {"incx = 0", 'N', 2, 2, 2, 0, 1, 1, XGEMV_STATUS_INVALID_INCX},
    {"incy = 0", 'T', 2, 2, 2, 1, 0, 1, XGEMV_STATUS_INVALID_INCY},
    // First failure wins.
    {"trans before m", 'X', -1, -1, 0, 0, 0, 1, XGEMV_STATUS_INVALID_TRANS},
    {"m before n", 'N', -1, -1, 0, 0, 0, 1, XGEMV_STATUS_INVALID_M},
    {"n before lda", 'N', 2, -1, 1, 0, 0, 1, XGEMV_STATUS_INVALID_N},
    {"lda before incx", 'N', 2, 2, 1, 0, 0, 1, XGEMV_STATUS_INVALID_LDA},
    {"incx before incy", 'N', 2, 2, 2, 0, 0, 1, XGEMV_STATUS_INVALID_INCX},
    // Checks come before the quick return.
    {"m = 2, n = 0, lda = 1 is an lda error", 'N', 2, 0, 1, 1, 1, 1, XGEMV_STATUS_INVALID_LDA},
    {"n = 0 does not hide incx = 0", 'N', 2, 0, 2, 0, 1, 1, XGEMV_STATUS_INVALID_INCX},
    {"m = 0 does not hide incy = 0", 'T', 0, 4, 1, 1, 0, 1, XGEMV_STATUS_INVALID_INCY},
    // batch_count after the BLAS arguments, before the handle.
    {"batch_count < 0", 'N', 2, 2, 2, 1, 1, -1, XGEMV_STATUS_INVALID_BATCH},
    {"BLAS arguments before batch_count", 'N', 2, 2, 2, 1, 0, -1, XGEMV_STATUS_INVALID_INCY},
    // Valid arguments reach the handle check, quick returns included.
    {"valid, lower-case n", 'n', 3, 2, 3, 1, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, lower-case t", 't', 3, 2, 3, 1, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, lower-case c", 'c', 3, 2, 3, 1, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, op T with m > n and lda = m", 'T', 5, 3, 5, 1, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, negative increments", 'C', 3, 4, 7, -3, -1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"quick return m = 0", 'N', 0, 3, 1, 1, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"quick return n = 0", 'T', 3, 0, 3, 1, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"quick return batch_count = 0", 'N', 2, 2, 2, 1, 1, 0, XGEMV_STATUS_INVALID_HANDLE},
};

// Whether a case reports a bad argument (as opposed to reaching the handle check).
inline bool is_argument_error(const ArgumentCase &c) {
  return c.expected_with_null_handle != XGEMV_STATUS_INVALID_HANDLE;
}

}  // namespace xgemv_test
