#include "check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xgemv::bench {

double tolerance(const Case& c) {
  const double k = static_cast<double>(std::max<int64_t>(1, c.reduction_length()));
  return 4.0 * (storage_roundoff(c.dtype) + std::sqrt(k) * accumulation_roundoff(c.dtype));
}

CheckResult compare_to_reference(const Case& c, const std::vector<double>& y,
                                 const std::vector<double>& y_ref) {
  CheckResult result;
  result.tolerance = tolerance(c);
  double scale = 0;
  for (double value : y_ref) scale = std::max(scale, std::abs(value));
  if (scale == 0) scale = 1;
  double worst = y.size() == y_ref.size() ? 0 : std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < std::min(y.size(), y_ref.size()); ++i) {
    const double error = std::abs(y[i] - y_ref[i]);
    worst = std::isfinite(error) ? std::max(worst, error) : std::numeric_limits<double>::infinity();
  }
  result.max_error = worst / scale;
  result.passed = result.max_error <= result.tolerance;
  return result;
}

template <class T>
std::vector<double> host_reference_gemv(const Case& c, const T* a, const T* x, const T* y0) {
  const std::vector<double> xs = gather_vector(x, c.x_length(), c.incx);
  std::vector<double> sums(static_cast<size_t>(c.y_length()), 0.0);
  // Column by column, so A is read in memory order for both ops.
  for (int64_t j = 0; j < c.n; ++j) {
    const T* column = a + j * c.lda();
    if (c.transposed()) {
      double sum = 0;
      for (int64_t i = 0; i < c.m; ++i) sum += static_cast<double>(column[i]) * xs[i];
      sums[j] = sum;
    } else {
      for (int64_t i = 0; i < c.m; ++i) sums[i] += static_cast<double>(column[i]) * xs[j];
    }
  }
  std::vector<double> y_ref(sums.size());
  const std::vector<double> ys =
      c.beta != 0 ? gather_vector(y0, c.y_length(), c.incy) : std::vector<double>(sums.size());
  for (size_t i = 0; i < sums.size(); ++i) y_ref[i] = c.alpha * sums[i] + c.beta * ys[i];
  return y_ref;
}

template std::vector<double> host_reference_gemv(const Case&, const float*, const float*,
                                                 const float*);
template std::vector<double> host_reference_gemv(const Case&, const double*, const double*,
                                                 const double*);

}  // namespace xgemv::bench
