#include "measure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xgemv::bench {

RotationLayout rotation_layout(int64_t a_bytes) {
  RotationLayout layout;
  layout.copy_stride_bytes =
      std::max<int64_t>(1, (a_bytes + kCopyAlignment - 1) / kCopyAlignment) * kCopyAlignment;
  layout.copies = std::max<int64_t>(
      1, (kRotationBytes + layout.copy_stride_bytes - 1) / layout.copy_stride_bytes);
  return layout;
}

TimingPlan plan_batches(bool quick) { return quick ? TimingPlan{2, 15} : TimingPlan{3, 31}; }

TimingPlan plan_timing(int64_t bytes_per_call, bool quick) {
  const int64_t bytes_per_batch = quick ? int64_t{256} << 20 : int64_t{1} << 30;
  const int64_t max_calls = quick ? 100 : 400;
  TimingPlan plan = plan_batches(quick);
  plan.calls_per_batch = static_cast<int>(
      std::clamp<int64_t>(bytes_per_batch / std::max<int64_t>(1, bytes_per_call), 1, max_calls));
  return plan;
}

int64_t graph_calls(const TimingPlan& plan, int64_t copies) {
  constexpr int64_t kMaxGraphCalls = 4096;
  return std::max<int64_t>(plan.calls_per_batch, std::min(copies, kMaxGraphCalls));
}

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto middle = values.begin() + values.size() / 2;
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

double spread_pct(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return 100.0 * (values[3 * n / 4] - values[n / 4]) / median(values);
}

double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double log_sum = 0;
  for (double value : values) log_sum += std::log(value);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

}  // namespace xgemv::bench
