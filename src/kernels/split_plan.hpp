// Splitting a reduction across blocks, host side: the workspace a handle keeps for it and how a
// variant plans a split. The combine itself is split_combine.cuh.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace xgemv {

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

namespace kernels {

// Per-split partial sums and one arrival counter per output tile, allocated once per handle.
// The counters are zero between calls (the last block of a tile resets its own), so one zeroing
// at creation is enough.
struct SplitWorkspace {
  void *partials;
  unsigned *tile_counters;
};
inline constexpr std::size_t kSplitPartialBytes = std::size_t(8) << 20;
inline constexpr int64_t kSplitTileCounters = int64_t(1) << 16;

// grid.y blocks of `length` reduction elements each (the last one shorter); one split means no
// workspace traffic.
struct SplitPlan {
  int count = 1;
  int64_t length = 0;
};

// Splits a reduction of `length` elements (in units of `granule`) over grid.y so that
// tiles * batch * ksplit blocks reach `target_blocks`, within the workspace: each split of each
// tile keeps `tile_outputs` partials of `accumulator_bytes` each, and each tile one counter.
// Beyond the workspace (every handle has one), the reduction is not split.
inline SplitPlan plan_split(int64_t tiles, int64_t batch, int64_t length,
                            int64_t granule, int64_t tile_outputs, int64_t target_blocks,
                            int accumulator_bytes) {
  if (length == 0) return {};  // an empty reduction (y := beta*y + bias): one split of nothing
  const int64_t tiles_total = tiles * batch;
  int64_t ksplit = 1;
  if (tiles_total < target_blocks) {
    // Whole waves only: a split count that overshoots the target leaves a second, mostly empty
    // wave (98 tiles x 6 splits = 588 blocks for 528 slots ran the tail at 11% occupancy).
    ksplit = target_blocks / tiles_total;
    ksplit = std::min(ksplit, std::max<int64_t>(1, length / (2 * granule)));
    const int64_t partial_capacity =
        int64_t(kSplitPartialBytes / std::size_t(accumulator_bytes)) / (tiles_total * tile_outputs);
    ksplit = std::min(ksplit, partial_capacity);
    if (tiles_total > kSplitTileCounters) ksplit = 1;
    ksplit = std::max<int64_t>(ksplit, 1);
  }
  SplitPlan split;
  split.length = ceil_div(ceil_div(length, ksplit), granule) * granule;
  split.count = int(ceil_div(length, split.length));
  return split;
}

}  // namespace kernels
}  // namespace xgemv
