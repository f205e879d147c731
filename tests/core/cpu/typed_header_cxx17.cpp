// The typed C++ header as a C++17 program sees it (built with -std=c++17 -Wall -Wextra -Werror
// -Wpedantic): every overload of xgemv::gemv, xgemv::gemv_strided_batched and xgemv::gemv_nrhs
// calls its own C entry point with every argument in its place, and returns that call's status.
// The program defines the C entry points itself, as recorders, instead of linking libxgemv: a
// NULL-handle call of the real library could not tell A from x, alpha from beta, or one stride
// (or leading dimension) from another.
#include <xgemv/xgemv.hpp>

#include <cstdio>
#include <cstring>

namespace {

// One call as an entry point received it. Pointers as void *: the compiler checks their types.
struct Received {
  const char *entry = nullptr;
  xgemv_handle handle = nullptr;
  char trans = 0;
  int64_t m = 0, n = 0, lda = 0, incx = 0, incy = 0;
  int64_t stride_a = 0, stride_x = 0, stride_y = 0, batch_count = 0;
  const void *alpha = nullptr, *a = nullptr, *x = nullptr, *beta = nullptr, *y = nullptr;
  int64_t ldx = 0, ldy = 0, nrhs = 0;  // the few-right-hand-side calls
};

Received received;
// What every recorder returns: a status no argument of these calls could cause.
constexpr xgemv_status kRecordedStatus = XGEMV_STATUS_INTERNAL_ERROR;

xgemv_status record(const char *entry, xgemv_handle handle, char trans, int64_t m, int64_t n,
                    const void *alpha, const void *a, int64_t lda, int64_t stride_a,
                    const void *x, int64_t incx, int64_t stride_x, const void *beta, const void *y,
                    int64_t incy, int64_t stride_y, int64_t batch_count) {
  received = {entry, handle, trans, m, n, lda, incx, incy, stride_a, stride_x, stride_y,
              batch_count, alpha, a, x, beta, y, 0, 0, 0};
  return kRecordedStatus;
}

xgemv_status record_nrhs(const char *entry, xgemv_handle handle, char trans, int64_t m, int64_t n,
                         const void *alpha, const void *a, int64_t lda, const void *x,
                         int64_t ldx, const void *beta, const void *y, int64_t ldy,
                         int64_t nrhs) {
  received = {entry, handle, trans, m, n, lda, 0, 0, 0, 0, 0, 0, alpha, a, x, beta, y,
              ldx, ldy, nrhs};
  return kRecordedStatus;
}

int failures = 0;

void expect(bool condition, const char *entry, const char *what) {
  if (condition) return;
  ++failures;
  std::printf("FAIL %s: %s\n", entry, what);
}

// Distinct values for every argument, so that any two swapped show.
constexpr char kTrans = 't';
constexpr int64_t kM = 2, kN = 3, kLda = 5, kIncx = -7, kIncy = 11;
constexpr int64_t kStrideA = 13, kStrideX = 17, kStrideY = 19, kBatchCount = 23;
constexpr int64_t kLdx = 29, kLdy = 31, kNrhs = 37;

// Calls the three overloads of element type T and checks what `single`, `batched` and `nrhs`
// received.
template <class T, class S>
void check_overloads(const char *single, const char *batched, const char *nrhs) {
  // The recorders never dereference: any distinct addresses will do.
  static S scalars[2];
  static T a[1], x[1], y[1];
  const auto handle = reinterpret_cast<xgemv_handle>(&received);
  static_assert(noexcept(xgemv::gemv(handle, kTrans, kM, kN, &scalars[0], a, kLda, x, kIncx,
                                     &scalars[1], y, kIncy)));
  static_assert(noexcept(xgemv::gemv_strided_batched(handle, kTrans, kM, kN, &scalars[0], a, kLda,
                                                     kStrideA, x, kIncx, kStrideX, &scalars[1], y,
                                                     kIncy, kStrideY, kBatchCount)));
  static_assert(noexcept(xgemv::gemv_nrhs(handle, kTrans, kM, kN, &scalars[0], a, kLda, x, kLdx,
                                          &scalars[1], y, kLdy, kNrhs)));

  enum class Form { single, batched, nrhs };
  const auto expect_received = [&](const char *entry, Form form) {
    const Received &r = received;
    expect(r.entry != nullptr && std::strcmp(r.entry, entry) == 0, entry,
           r.entry ? r.entry : "no entry point called");
    expect(r.handle == handle && r.trans == kTrans, entry, "handle or trans");
    expect(r.m == kM && r.n == kN && r.lda == kLda, entry, "m, n or lda");
    expect(r.alpha == &scalars[0] && r.beta == &scalars[1], entry, "alpha or beta");
    expect(r.a == a && r.x == x && r.y == y, entry, "A, x or y");
    if (form == Form::nrhs)
      expect(r.ldx == kLdx && r.ldy == kLdy && r.nrhs == kNrhs, entry, "ldx, ldy or nrhs");
    else
      expect(r.incx == kIncx && r.incy == kIncy, entry, "incx or incy");
    if (form == Form::batched)
      expect(r.stride_a == kStrideA && r.stride_x == kStrideX && r.stride_y == kStrideY &&
                 r.batch_count == kBatchCount,
             entry, "strides or batch_count");
  };

  received = {};
  expect(xgemv::gemv(handle, kTrans, kM, kN, &scalars[0], a, kLda, x, kIncx, &scalars[1], y,
                     kIncy) == kRecordedStatus,
         single, "status not returned");
  expect_received(single, Form::single);

  received = {};
  expect(xgemv::gemv_strided_batched(handle, kTrans, kM, kN, &scalars[0], a, kLda, kStrideA, x,
                                     kIncx, kStrideX, &scalars[1], y, kIncy, kStrideY,
                                     kBatchCount) == kRecordedStatus,
         batched, "status not returned");
  expect_received(batched, Form::batched);

  received = {};
  expect(xgemv::gemv_nrhs(handle, kTrans, kM, kN, &scalars[0], a, kLda, x, kLdx, &scalars[1], y,
                          kLdy, kNrhs) == kRecordedStatus,
         nrhs, "status not returned");
  expect_received(nrhs, Form::nrhs);
}

}  // namespace

// The C entry points, declared by xgemv.h, defined here as recorders: the three of element type
// T (scalars S), with the signatures of xgemv.h.
#define XGEMV_DEFINE_RECORDERS(single, batched, few_rhs, T, S)                                 \
  xgemv_status single(xgemv_handle h, char trans, int64_t m, int64_t n, const S *alpha,       \
                      const T *A, int64_t lda, const T *x, int64_t incx, const S *beta, T *y,  \
                      int64_t incy) {                                                          \
    return record(#single, h, trans, m, n, alpha, A, lda, 0, x, incx, 0, beta, y, incy, 0, 1); \
  }                                                                                            \
  xgemv_status batched(xgemv_handle h, char trans, int64_t m, int64_t n, const S *alpha,      \
                       const T *A, int64_t lda, int64_t stride_a, const T *x, int64_t incx,    \
                       int64_t stride_x, const S *beta, T *y, int64_t incy, int64_t stride_y,  \
                       int64_t batch_count) {                                                  \
    return record(#batched, h, trans, m, n, alpha, A, lda, stride_a, x, incx, stride_x, beta, \
                  y, incy, stride_y, batch_count);                                            \
  }                                                                                            \
  xgemv_status few_rhs(xgemv_handle h, char trans, int64_t m, int64_t n, const S *alpha,      \
                       const T *A, int64_t lda, const T *X, int64_t ldx, const S *beta, T *Y,  \
                       int64_t ldy, int64_t nrhs) {                                            \
    return record_nrhs(#few_rhs, h, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs);  \
  }

extern "C" {
XGEMV_DEFINE_RECORDERS(xgemv_sgemv, xgemv_sgemv_strided_batched, xgemv_sgemv_nrhs, float, float)
XGEMV_DEFINE_RECORDERS(xgemv_dgemv, xgemv_dgemv_strided_batched, xgemv_dgemv_nrhs, double,
                       double)
XGEMV_DEFINE_RECORDERS(xgemv_hgemv, xgemv_hgemv_strided_batched, xgemv_hgemv_nrhs, xgemv_half,
                       float)
XGEMV_DEFINE_RECORDERS(xgemv_bf16gemv, xgemv_bf16gemv_strided_batched, xgemv_bf16gemv_nrhs,
                       xgemv_bfloat16, float)
}  // extern "C"

int main() {
  check_overloads<float, float>("xgemv_sgemv", "xgemv_sgemv_strided_batched", "xgemv_sgemv_nrhs");
  check_overloads<double, double>("xgemv_dgemv", "xgemv_dgemv_strided_batched",
                                  "xgemv_dgemv_nrhs");
  check_overloads<__half, float>("xgemv_hgemv", "xgemv_hgemv_strided_batched",
                                 "xgemv_hgemv_nrhs");
  check_overloads<__nv_bfloat16, float>("xgemv_bf16gemv", "xgemv_bf16gemv_strided_batched",
                                        "xgemv_bf16gemv_nrhs");
  std::printf("%s: xgemv.hpp, 12 overloads, %d failure(s)\n", failures ? "FAILED" : "PASSED",
              failures);
  return failures ? 1 : 0;
}
