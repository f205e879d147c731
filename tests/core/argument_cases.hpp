// Invalid (and barely valid) arguments with the status xgemv must return when the handle is
// NULL. The order is the contract: BLAS arguments (Reference BLAS order and positions) before
// batch_count, batch_count before the handle, the handle before the quick return. The same for
// the few-right-hand-side calls, whose ldx, ldy and nrhs are checked where gemv checks incx,
// incy (positions 8, 11) and after them (12).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <xgemv/xgemv.h>

namespace xgemv_test {

// trans, m, n and lda: the same checks, in the same order, in every entry point. `later_invalid`:
// every argument after them invalid too (the first failure must win); else valid.
struct MatrixArgumentCase {
  const char *what;
  char trans;
  int64_t m, n, lda;
  bool later_invalid;
  xgemv_status expected_with_null_handle;
};

inline constexpr MatrixArgumentCase kMatrixArgumentCases[] = {
    {"trans 'X'", 'X', 2, 2, 2, false, XGEMV_STATUS_INVALID_TRANS},
    {"trans NUL", '\0', 2, 2, 2, false, XGEMV_STATUS_INVALID_TRANS},
    {"trans 'H' (not BLAS)", 'H', 2, 2, 2, false, XGEMV_STATUS_INVALID_TRANS},
    {"trans 'R' (not BLAS)", 'R', 2, 2, 2, false, XGEMV_STATUS_INVALID_TRANS},
    {"m < 0", 'N', -1, 2, 1, false, XGEMV_STATUS_INVALID_M},
    {"m = INT64_MIN", 'T', INT64_MIN, 2, 1, false, XGEMV_STATUS_INVALID_M},
    {"n < 0", 'N', 2, -1, 2, false, XGEMV_STATUS_INVALID_N},
    {"lda < m", 'N', 5, 3, 4, false, XGEMV_STATUS_INVALID_LDA},
    {"lda < m for op T (lda is checked against m whatever trans)", 'T', 5, 3, 3, false,
     XGEMV_STATUS_INVALID_LDA},
    {"lda = 0 with m = 0 (lda >= max(1, m))", 'N', 0, 3, 0, false, XGEMV_STATUS_INVALID_LDA},
    {"lda < 0", 'C', 1, 1, -1, false, XGEMV_STATUS_INVALID_LDA},
    // First failure wins.
    {"trans before m", 'X', -1, -1, 0, true, XGEMV_STATUS_INVALID_TRANS},
    {"m before n", 'N', -1, -1, 0, true, XGEMV_STATUS_INVALID_M},
    {"n before lda", 'N', 2, -1, 1, true, XGEMV_STATUS_INVALID_N},
    // Checks come before the quick return.
    {"m = 2, n = 0, lda = 1 is an lda error", 'N', 2, 0, 1, false, XGEMV_STATUS_INVALID_LDA},
    // Valid arguments reach the handle check, quick returns included.
    {"valid, lower-case n", 'n', 3, 2, 3, false, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, lower-case t", 't', 3, 2, 3, false, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, lower-case c", 'c', 3, 2, 3, false, XGEMV_STATUS_INVALID_HANDLE},
    {"quick return m = 0", 'N', 0, 3, 1, false, XGEMV_STATUS_INVALID_HANDLE},
    {"quick return n = 0", 'T', 3, 0, 3, false, XGEMV_STATUS_INVALID_HANDLE},
};

struct ArgumentCase {
  const char *what;
  char trans;
  int64_t m, n, lda, incx, incy;
  int64_t batch_count;  // != 1: the strided-batched entry points only
  xgemv_status expected_with_null_handle;
};

// The matrix cases with incx and incy (0 where later_invalid, else 1) and one problem, then the
// checks of the vectors and of batch_count.
inline const std::vector<ArgumentCase> kArgumentCases = [] {
  std::vector<ArgumentCase> cases;
  for (const MatrixArgumentCase &c : kMatrixArgumentCases) {
    const int64_t inc = c.later_invalid ? 0 : 1;
    cases.push_back({c.what, c.trans, c.m, c.n, c.lda, inc, inc, 1, c.expected_with_null_handle});
  }
  cases.insert(
      cases.end(),
      {
          {"incx = 0", 'N', 2, 2, 2, 0, 1, 1, XGEMV_STATUS_INVALID_INCX},
          {"incy = 0", 'T', 2, 2, 2, 1, 0, 1, XGEMV_STATUS_INVALID_INCY},
          {"lda before incx", 'N', 2, 2, 1, 0, 0, 1, XGEMV_STATUS_INVALID_LDA},
          {"incx before incy", 'N', 2, 2, 2, 0, 0, 1, XGEMV_STATUS_INVALID_INCX},
          {"n = 0 does not hide incx = 0", 'N', 2, 0, 2, 0, 1, 1, XGEMV_STATUS_INVALID_INCX},
          {"m = 0 does not hide incy = 0", 'T', 0, 4, 1, 1, 0, 1, XGEMV_STATUS_INVALID_INCY},
          // batch_count after the BLAS arguments, before the handle.
          {"batch_count < 0", 'N', 2, 2, 2, 1, 1, -1, XGEMV_STATUS_INVALID_BATCH},
          {"BLAS arguments before batch_count", 'N', 2, 2, 2, 1, 0, -1, XGEMV_STATUS_INVALID_INCY},
          {"valid, op T with m > n and lda = m", 'T', 5, 3, 5, 1, 1, 1,
           XGEMV_STATUS_INVALID_HANDLE},
          {"valid, negative increments", 'C', 3, 4, 7, -3, -1, 1, XGEMV_STATUS_INVALID_HANDLE},
          {"quick return batch_count = 0", 'N', 2, 2, 2, 1, 1, 0, XGEMV_STATUS_INVALID_HANDLE},
      });
  return cases;
}();

// The few-right-hand-side calls (xgemv_?gemv_nrhs): X has rows n for op N and m otherwise, Y
// the other one; ldx and ldy stand where incx and incy stand, nrhs comes last (position 12).
struct NrhsArgumentCase {
  const char *what;
  char trans;
  int64_t m, n, lda, ldx, ldy, nrhs;
  xgemv_status expected_with_null_handle;
};

// The matrix cases with ldx, ldy and nrhs (0, 0 and -1 where later_invalid, else the smallest
// valid leading dimensions and 2 columns), then the checks of ldx, ldy and nrhs.
inline const std::vector<NrhsArgumentCase> kNrhsArgumentCases = [] {
  std::vector<NrhsArgumentCase> cases;
  for (const MatrixArgumentCase &c : kMatrixArgumentCases) {
    const bool op_n = c.trans == 'N' || c.trans == 'n';
    const int64_t ldx = c.later_invalid ? 0 : std::max<int64_t>(1, op_n ? c.n : c.m);
    const int64_t ldy = c.later_invalid ? 0 : std::max<int64_t>(1, op_n ? c.m : c.n);
    cases.push_back({c.what, c.trans, c.m, c.n, c.lda, ldx, ldy, c.later_invalid ? -1 : 2,
                     c.expected_with_null_handle});
  }
  cases.insert(
      cases.end(),
      {
          {"ldx < n for op N (X has n rows)", 'N', 5, 3, 5, 2, 5, 2, XGEMV_STATUS_INVALID_LDX},
          {"ldx < m for op T (X has m rows)", 'T', 5, 3, 5, 4, 3, 2, XGEMV_STATUS_INVALID_LDX},
          {"ldx = n < m for op C (X has m rows)", 'C', 5, 3, 5, 3, 3, 2, XGEMV_STATUS_INVALID_LDX},
          {"ldx = 0 with n = 0, op N (ldx >= max(1, n))", 'N', 3, 0, 3, 0, 3, 2,
           XGEMV_STATUS_INVALID_LDX},
          {"ldx < 0", 'T', 1, 1, 1, -1, 1, 2, XGEMV_STATUS_INVALID_LDX},
          {"ldy < m for op N (Y has m rows)", 'N', 5, 3, 5, 3, 4, 2, XGEMV_STATUS_INVALID_LDY},
          {"ldy < n for op T (Y has n rows)", 'T', 5, 3, 5, 5, 2, 2, XGEMV_STATUS_INVALID_LDY},
          {"ldy = m < n for op C (Y has n rows)", 'C', 3, 5, 3, 3, 3, 2, XGEMV_STATUS_INVALID_LDY},
          {"ldy = 0 with m = 0, op N (ldy >= max(1, m))", 'N', 0, 3, 1, 3, 0, 2,
           XGEMV_STATUS_INVALID_LDY},
          {"ldy < 0", 'N', 1, 1, 1, 1, -1, 2, XGEMV_STATUS_INVALID_LDY},
          {"nrhs < 0", 'N', 2, 2, 2, 2, 2, -1, XGEMV_STATUS_INVALID_NRHS},
          {"nrhs = INT64_MIN", 'T', 2, 2, 2, 2, 2, INT64_MIN, XGEMV_STATUS_INVALID_NRHS},
          // First failure wins, in position order.
          {"lda before ldx", 'N', 2, 2, 1, 0, 0, -1, XGEMV_STATUS_INVALID_LDA},
          {"ldx before ldy", 'N', 2, 2, 2, 0, 0, -1, XGEMV_STATUS_INVALID_LDX},
          {"ldy before nrhs", 'T', 4, 2, 4, 4, 1, -1, XGEMV_STATUS_INVALID_LDY},
          // Checks come before the quick returns.
          {"nrhs = 0 does not hide ldx < n", 'N', 2, 3, 2, 2, 2, 0, XGEMV_STATUS_INVALID_LDX},
          {"m = 0 does not hide ldy < n for op T", 'T', 0, 4, 1, 1, 3, 2, XGEMV_STATUS_INVALID_LDY},
          {"n = 0 does not hide nrhs < 0", 'N', 2, 0, 2, 1, 2, -1, XGEMV_STATUS_INVALID_NRHS},
          // Valid arguments reach the handle check, quick returns included.
          {"valid, op N with ldx = n < m and ldy = m", 'N', 5, 3, 5, 3, 5, 4,
           XGEMV_STATUS_INVALID_HANDLE},
          {"valid, op T with ldx = m and ldy = n < m", 'T', 5, 3, 5, 5, 3, 4,
           XGEMV_STATUS_INVALID_HANDLE},
          {"valid, padded leading dimensions", 'N', 3, 2, 7, 5, 6, 17, XGEMV_STATUS_INVALID_HANDLE},
          {"valid, nrhs = 1", 'T', 3, 2, 3, 3, 2, 1, XGEMV_STATUS_INVALID_HANDLE},
          {"valid, nrhs beyond int32", 'N', 3, 2, 3, 2, 3, int64_t{1} << 40,
           XGEMV_STATUS_INVALID_HANDLE},
          {"quick return nrhs = 0", 'N', 3, 2, 3, 2, 3, 0, XGEMV_STATUS_INVALID_HANDLE},
          {"quick return m = n = nrhs = 0", 'C', 0, 0, 1, 1, 1, 0, XGEMV_STATUS_INVALID_HANDLE},
      });
  return cases;
}();

// Whether a case reports a bad argument (as opposed to reaching the handle check).
template <class Case>
bool is_argument_error(const Case &c) {
  return c.expected_with_null_handle != XGEMV_STATUS_INVALID_HANDLE;
}

}  // namespace xgemv_test
