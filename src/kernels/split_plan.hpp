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

// Blocks of a grid that fills its last wave only partly leave bandwidth unused in that wave:
// the share of the waves' slots the grid's blocks fill.
inline double wave_fill(int64_t blocks, int64_t slots) {
  return double(blocks) / double(ceil_div(blocks, slots) * slots);
}

// Splits a reduction of `length` elements (in units of `granule`) over grid.y so that
// tiles * batch * ksplit blocks reach `target_blocks`, within the workspace: each split of each
// tile keeps `tile_outputs` partials of `accumulator_bytes` each, and each tile one counter.
// With fill_last_wave, a grid of up to kFewWaves waves is split further when that fills its
// last wave better (576 tiles on 528 slots, 1.09 waves, streamed at 73% of the ceiling).
// Beyond the workspace, or without one, the reduction is not split.
inline SplitPlan plan_split(bool workspace, int64_t tiles, int64_t batch, int64_t length,
                            int64_t granule, int64_t tile_outputs, int64_t target_blocks,
                            int accumulator_bytes, bool fill_last_wave = false) {
  constexpr int64_t kFewWaves = 4;
  constexpr double kGoodFill = 0.9;
  const int64_t tiles_total = tiles * batch;
  const auto split_of = [&](int64_t ksplit) {
    SplitPlan split;
    split.length = ceil_div(ceil_div(length, ksplit), granule) * granule;
    split.count = int(ceil_div(length, split.length));
    return split;
  };
  if (!workspace || tiles_total > kSplitTileCounters) return split_of(1);
  const int64_t partial_capacity =
      int64_t(kSplitPartialBytes / std::size_t(accumulator_bytes)) / (tiles_total * tile_outputs);
  // Whole waves: a split count that overshoots the target leaves a second, mostly empty wave
  // (98 tiles x 6 splits = 588 blocks for 528 slots ran the tail at 11% occupancy).
  int64_t ksplit = 1;
  if (tiles_total < target_blocks)
    ksplit = std::min(target_blocks / tiles_total, std::max<int64_t>(1, length / (2 * granule)));
  // Then, for a grid of a few waves, the fewest further splits (each at least one granule)
  // that fill the waves well, else the best.
  if (fill_last_wave && tiles_total < kFewWaves * target_blocks) {
    const int64_t most =
        std::min(length / granule, 2 * kFewWaves * target_blocks / tiles_total);
    double best_fill = wave_fill(tiles_total * split_of(ksplit).count, target_blocks);
    for (int64_t k = ksplit + 1; k <= most && best_fill < kGoodFill; ++k) {
      const double fill = wave_fill(tiles_total * split_of(k).count, target_blocks);
      if (fill > best_fill) {
        best_fill = fill;
        ksplit = k;
      }
    }
  }
  return split_of(std::max<int64_t>(std::min(ksplit, partial_capacity), 1));
}

}  // namespace kernels
}  // namespace xgemv
