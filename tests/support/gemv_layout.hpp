// Where BLAS GEMV reads and writes: shapes, strided vectors with BLAS increments, batches.
// Plain C++17 with no link dependency: the bench and the fuzzers use it too.
#pragma once

#include <algorithm>
#include <cstdint>

namespace xgemv_test {

// The BLAS vector rules, for any signed integer type Int (the fuzzers' __int128 cannot overflow);
// constexpr, so CUDA code built with --expt-relaxed-constexpr calls them on the device too.

// Length of storage a BLAS vector of `length` elements with increment `inc` spans.
template <class Int>
constexpr Int vector_extent(Int length, Int inc) {
  return length == 0 ? 0 : 1 + (length - 1) * (inc < 0 ? -inc : inc);
}

// Offset of logical element i from the pointer BLAS is given (the first element in memory): with
// a negative increment, logical element 0 sits at the far end.
template <class Int>
constexpr Int vector_offset(Int i, Int length, Int inc) {
  return inc > 0 ? i * inc : (length - 1 - i) * -inc;
}

struct GemvShape {
  char trans = 'N';
  int64_t m = 0, n = 0, lda = 1, incx = 1, incy = 1;

  bool transposed() const { return trans != 'N' && trans != 'n'; }
  int64_t x_length() const { return transposed() ? m : n; }
  int64_t y_length() const { return transposed() ? n : m; }
  // Length of each dot product (k in the error bounds).
  int64_t reduction_length() const { return x_length(); }
  // Elements from A[0] to the last element of A that BLAS reads.
  int64_t matrix_extent() const { return m == 0 || n == 0 ? 0 : (n - 1) * lda + m; }
  int64_t x_extent() const { return vector_extent(x_length(), incx); }
  int64_t y_extent() const { return vector_extent(y_length(), incy); }
};

// Problem b of a strided batch uses A + b*stride_a, x + b*stride_x, y + b*stride_y.
struct BatchLayout {
  int64_t count = 1;
  int64_t stride_a = 0, stride_x = 0, stride_y = 0;

  // Storage every problem of the batch spans (at least one problem's, so that a batch of zero
  // still gets real buffers to prove they are left alone).
  static int64_t span(int64_t count, int64_t stride, int64_t one_problem) {
    return one_problem == 0 ? 0 : std::max<int64_t>(count - 1, 0) * stride + one_problem;
  }
  int64_t a_span(const GemvShape &s) const { return span(count, stride_a, s.matrix_extent()); }
  int64_t x_span(const GemvShape &s) const { return span(count, stride_x, s.x_extent()); }
  int64_t y_span(const GemvShape &s) const { return span(count, stride_y, s.y_extent()); }
};

// Several right-hand sides (the few-right-hand-side calls): X and Y column-major with `count`
// columns and leading dimensions ldx, ldy, every column against the same A (GemvShape's incx and
// incy are 1 there). Column c is x + c*ldx and y + c*ldy: a batch with stride_a 0, so that the
// batch helpers below walk the columns as problems.
struct RhsLayout {
  int64_t count = 1;
  int64_t ldx = 1, ldy = 1;

  BatchLayout as_batch() const { return {count, 0, ldx, ldy}; }
};

// Calls f(offset) for every element of A that problem `b` reads, column by column.
template <class F>
void for_each_matrix_offset(const GemvShape &s, const BatchLayout &batch, int64_t b, F &&f) {
  for (int64_t j = 0; j < s.n; ++j)
    for (int64_t i = 0; i < s.m; ++i) f(b * batch.stride_a + j * s.lda + i);
}

// Calls f(i, offset) for every logical element i of x (resp. y) of problem `b`.
template <class F>
void for_each_x_offset(const GemvShape &s, const BatchLayout &batch, int64_t b, F &&f) {
  for (int64_t i = 0; i < s.x_length(); ++i)
    f(i, b * batch.stride_x + vector_offset(i, s.x_length(), s.incx));
}
template <class F>
void for_each_y_offset(const GemvShape &s, const BatchLayout &batch, int64_t b, F &&f) {
  for (int64_t i = 0; i < s.y_length(); ++i)
    f(i, b * batch.stride_y + vector_offset(i, s.y_length(), s.incy));
}

}  // namespace xgemv_test
