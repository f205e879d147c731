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

}  // namespace xgemv::bench
