// GEMV as the BLAS definition reads, in double with plain loops: the exact oracle for
// integer-valued data, and (on absolute values) the magnitudes that scale error bounds.
#pragma once

#include <cmath>
#include <vector>

#include "element_types.hpp"
#include "gemv_layout.hpp"

namespace xgemv_test {

// Logical y (dense) after y := alpha*op(f(A))*f(x) + beta*f(y), every element mapped through f
// on the way in. Follows the BLAS rules: quick return when m == 0 or n == 0 (y as it was), y not
// read when beta == 0. a, x, y point at the first element in memory, as BLAS is given them.
template <class T, class ElementMap>
std::vector<double> textbook_gemv(const GemvShape &s, double alpha, const T *a, const T *x,
                                  double beta, const T *y, ElementMap f) {
  const int64_t y_length = s.y_length(), x_length = s.x_length();
  std::vector<double> result(y_length);
  for (int64_t i = 0; i < y_length; ++i) {
    const double y_in = f(to_double(y[vector_offset(i, y_length, s.incy)]));
    result[i] = (s.m == 0 || s.n == 0) ? y_in : beta == 0 ? 0.0 : beta * y_in;
  }
  if (s.m == 0 || s.n == 0) return result;

  std::vector<double> x_values(x_length);
  for (int64_t j = 0; j < x_length; ++j)
    x_values[j] = f(to_double(x[vector_offset(j, x_length, s.incx)]));
  // Both loops walk A down its columns (contiguous memory).
  for (int64_t j = 0; j < s.n; ++j) {
    const T *column = a + j * s.lda;
    if (s.transposed()) {
      double dot = 0;
      for (int64_t i = 0; i < s.m; ++i) dot += f(to_double(column[i])) * x_values[i];
      result[j] += alpha * dot;
    } else {
      const double scaled_x = alpha * x_values[j];
      for (int64_t i = 0; i < s.m; ++i) result[i] += f(to_double(column[i])) * scaled_x;
    }
  }
  return result;
}

struct Identity {
  double operator()(double v) const { return v; }
};
struct Magnitude {
  double operator()(double v) const { return std::fabs(v); }
};

}  // namespace xgemv_test
