// The measuring method in numbers (bench/README.md, Method): rotation of A copies past L2,
// batches of back-to-back calls, medians, geometric means.
#pragma once

#include <cstdint>
#include <vector>

namespace xgemv::bench {

// Copies of A totalling at least this much are rotated so that every call reads A from HBM
// (H200 L2: 60 MB). A single copy larger than this is its own rotation.
inline constexpr int64_t kRotationBytes = int64_t{1} << 30;
// Copies start on this boundary (also keeps the 16-byte loads of the ceiling aligned).
inline constexpr int64_t kCopyAlignment = 256;

struct RotationLayout {
  int64_t copy_stride_bytes = 0;  // A's bytes rounded up to kCopyAlignment
  int64_t copies = 1;
  int64_t pool_bytes() const { return copy_stride_bytes * copies; }
};
RotationLayout rotation_layout(int64_t a_bytes);

// The batches of every measurement (a batch: back-to-back calls between two timestamps; a decode
// step's replay; an NCCL repetition).
struct TimingPlan {
  int warmup_batches = 0;
  int batches = 0;  // medians over these, >= 15
  int calls_per_batch = 1;
};
// 3 warm-up batches and 31 timed ones; --quick 2 and 15.
TimingPlan plan_batches(bool quick);
// ... with enough calls per batch that a batch moves a fair amount of data (and so outlasts timer
// resolution and launch jitter), capped so that launch-bound shapes stay quick.
TimingPlan plan_timing(int64_t bytes_per_call, bool quick);

// Calls in one CUDA graph: a graph replays the same copies every time, so it covers a whole
// rotation where it can (cold caches), within a bound on the graph's size.
int64_t graph_calls(const TimingPlan& plan, int64_t copies);

double median(std::vector<double> values);
// The interquartile range as a percentage of the median: how much the batches of one measurement
// differ; NaN for none.
double spread_pct(std::vector<double> values);
// Geometric mean of positive values; NaN for none.
double geometric_mean(const std::vector<double>& values);

}  // namespace xgemv::bench
