// GEMV as Reference BLAS (sgemv.f) computes it, in double: the one host reference GEMV of the
// tests, the interface tests and the bench. The exact oracle for integer-valued data, the IEEE
// specials oracle (sgemv.f's order of operations), and (on absolute values) the magnitudes that
// scale error bounds. Plain C++17 with no link dependency.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "element_types.hpp"
#include "gemv_layout.hpp"

namespace xgemv_test {

struct Identity {
  double operator()(double v) const { return v; }
};
struct Magnitude {
  double operator()(double v) const { return std::fabs(v); }
};

// Logical y (dense) after y := alpha*op(f(A))*f(x) + beta*f(y), every element mapped through f
// on the way in. TA: A and x; TY: y (they differ for the mixed-precision cuBLAS types). a, x, y
// point at the first element in memory, as BLAS is given them. The rules of sgemv.f: a quick
// return (y as it was) when m == 0, n == 0, or alpha == 0 and beta == 1; y is not read when
// beta == 0, A and x are not read when alpha == 0; then its loops, in its order: op N adds
// (alpha*x[j])*A(i, j) column by column, op T adds alpha*(sum over i of A(i, j)*x[i]).
template <class TA, class TY, class ElementMap = Identity>
std::vector<double> reference_gemv(const GemvShape &s, double alpha, const TA *a, const TA *x,
                                   double beta, const TY *y, ElementMap f = {}) {
  const int64_t y_length = s.y_length(), x_length = s.x_length();
  const bool quick_return = s.m == 0 || s.n == 0 || (alpha == 0 && beta == 1);
  std::vector<double> out(y_length, 0.0);
  if (quick_return || beta != 0)
    for (int64_t i = 0; i < y_length; ++i) {
      const double y_in = f(to_double(y[vector_offset(i, y_length, s.incy)]));
      out[i] = quick_return || beta == 1 ? y_in : beta * y_in;
    }
  if (quick_return || alpha == 0) return out;

  std::vector<double> x_values(x_length);
  for (int64_t j = 0; j < x_length; ++j)
    x_values[j] = f(to_double(x[vector_offset(j, x_length, s.incx)]));
  // Both loops walk A down its columns (contiguous memory).
  for (int64_t j = 0; j < s.n; ++j) {
    const TA *column = a + j * s.lda;
    if (s.transposed()) {
      double dot = 0;
      for (int64_t i = 0; i < s.m; ++i) dot += f(to_double(column[i])) * x_values[i];
      out[j] += alpha * dot;
    } else {
      const double scaled_x = alpha * x_values[j];
      for (int64_t i = 0; i < s.m; ++i) out[i] += scaled_x * f(to_double(column[i]));
    }
  }
  return out;
}

}  // namespace xgemv_test
