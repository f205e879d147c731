// One GEMV problem on the host: random elements, the guard value (NaN) in every gap between
// strided elements, NaN where the contract says the call must not read (y when beta == 0, A and
// x when alpha == 0), and the check of a device result against the Reference BLAS definition.
#pragma once

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "support/gemv_case.hpp"

namespace xgemv_test {

template <class T>
struct HostProblem {
  using S = ScalarOf<T>;

  GemvShape shape;
  S alpha{}, beta{};
  std::vector<T> a, x, y;  // images of the storage a call is given

  HostProblem(const GemvShape &s, S alpha_value, S beta_value, RandomSource &random)
      : shape(s), alpha(alpha_value), beta(beta_value) {
    a.assign(s.matrix_extent(), guard_value<T>());
    x.assign(s.x_extent(), guard_value<T>());
    y.assign(s.y_extent(), guard_value<T>());
    const auto element = [&] { return alpha == S(0) ? quiet_nan<T>() : random.element<T>(); };
    for (int64_t j = 0; j < s.n; ++j)
      for (int64_t i = 0; i < s.m; ++i) a[j * s.lda + i] = element();
    for_each_x_offset(s, BatchLayout{}, 0, [&](int64_t, int64_t o) { x[o] = element(); });
    for_each_y_offset(s, BatchLayout{}, 0, [&](int64_t, int64_t o) {
      y[o] = beta == S(0) ? quiet_nan<T>() : random.element<T>();
    });
  }

  std::string describe() const {
    std::ostringstream text;
    text << Element<T>::name << " op " << shape.trans << " m=" << shape.m << " n=" << shape.n
         << " lda=" << shape.lda << " incx=" << shape.incx << " incy=" << shape.incy
         << " alpha=" << alpha << " beta=" << beta;
    return text.str();
  }

  // What is wrong with `result` (y's storage after the call), or "" if nothing: every element
  // of y within the rounding bound of alpha*op(A)*x + beta*y (exactly beta*y rounded once when
  // alpha == 0, y's own bits on a quick return), every gap element bit for bit as it was.
  std::string check(const std::vector<T> &result) const {
    std::vector<bool> is_logical_y(y.size(), false);
    for_each_y_offset(shape, BatchLayout{}, 0, [&](int64_t, int64_t o) { is_logical_y[o] = true; });
    ::testing::AssertionResult verdict =
        bitwise_equal("y between its elements", result, y, &is_logical_y);
    if (verdict && alpha == S(0)) {
      std::vector<T> want = y;
      for_each_y_offset(shape, BatchLayout{}, 0, [&](int64_t, int64_t o) {
        if (beta != S(1)) want[o] = from_double<T>(beta == S(0) ? S(0) : beta * S(to_double(y[o])));
      });
      verdict = bitwise_equal("y with alpha = 0", result, want);
    } else if (verdict) {
      const std::vector<double> want =
          reference_gemv(shape, alpha, a.data(), x.data(), beta, y.data());
      const std::vector<double> magnitude = reference_gemv(
          shape, std::fabs(alpha), a.data(), x.data(), std::fabs(beta), y.data(), Magnitude{});
      std::vector<double> want_image(y.size()), magnitude_image(y.size());
      for_each_y_offset(shape, BatchLayout{}, 0, [&](int64_t i, int64_t o) {
        want_image[o] = want[i];
        magnitude_image[o] = magnitude[i];
      });
      verdict = within_error_bound("the Reference BLAS definition", shape, BatchLayout{}, 1, result,
                                   want_image, magnitude_image);
    }
    return verdict ? "" : describe() + ": " + verdict.message();
  }
};

}  // namespace xgemv_test
