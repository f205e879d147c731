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

// The split model below. A wave of blocks takes time in proportion to its blocks once each SM
// has kSaturatingBlocksPerSm of them (every variant's block keeps about 16 KiB of loads in
// flight: 36 KiB an SM stream at full bandwidth), and a thinner one as long as such a wave.
// Each block costs its share of the reduction plus kBlockFixedGranules (its first loads'
// latency, its partial sums and their combine), in its unrolled steps (granules). A split must
// promise 1/16 less time, within the waves the variant allows. Measured on the H200: t_mma
// (then of 8 x 2 x 3 tiles, 3 slots an SM) at 0.65 of a wave streamed at 0.89 of the
// many-wave shapes' rate and at 1.29 waves at 0.80; t_rowblock (4 slots) at 1.45 waves at
// 94-96% of the stream read; q_mma (2 slots) at 1.21 waves at 64% against 91-94% at 0.97
// (bench/results/h200-2026-12-03/NOTES.md).
inline constexpr int64_t kBlockFixedGranules = 2;
inline constexpr int64_t kSaturatingBlocksPerSmNum = 9, kSaturatingBlocksPerSmDen = 4;
inline constexpr int64_t kSplitGainNum = 15, kSplitGainDen = 16;
inline constexpr int64_t kMaxSplitWaves = 16;  // the most waves a split may ask for

// Resident blocks of a variant on a device: `slots` in all, of which `saturating` stream at
// full bandwidth.
struct BlockSlots {
  int64_t slots, saturating;
};
constexpr BlockSlots block_slots(int64_t sm_count, int64_t blocks_per_sm) {
  const int64_t slots = sm_count * blocks_per_sm;
  return {slots, std::min(slots, ceil_div(sm_count * kSaturatingBlocksPerSmNum,
                                          kSaturatingBlocksPerSmDen))};
}

// The modelled time of `blocks` blocks of `granules` each, in slot-granules.
constexpr int64_t modelled_split_time(int64_t blocks, int64_t granules, BlockSlots slots) {
  const int64_t full_waves = blocks / slots.slots, last = blocks % slots.slots;
  const int64_t last_wave = last == 0 ? 0 : std::max(last, slots.saturating);
  return (full_waves * slots.slots + last_wave) * (granules + kBlockFixedGranules);
}

// Splits a reduction of `length` elements (in units of `granule`) over grid.y for `tiles`
// output tiles of `batch` items on `sm_count` SMs of `blocks_per_sm` resident blocks each, in
// at most `max_waves` waves of blocks (1: a split fills one wave, whatever the tiles): the split
// count of least modelled time (above), the smallest on ties. Each split keeps at least two
// granules; each split of each tile keeps `tile_outputs` partials of `accumulator_bytes` in the
// workspace, each tile one counter, and beyond them (every handle has one) the reduction is not
// split.
inline SplitPlan plan_split(int64_t tiles, int64_t batch, int64_t length,
                            int64_t granule, int64_t tile_outputs, int64_t sm_count,
                            int64_t blocks_per_sm, int64_t max_waves, int accumulator_bytes) {
  if (length == 0) return {};  // an empty reduction (y := beta*y + bias): one split of nothing
  const int64_t tiles_total = tiles * batch;
  int64_t most = std::max<int64_t>(1, length / (2 * granule));
  most = std::min(most, int64_t(kSplitPartialBytes / std::size_t(accumulator_bytes)) /
                            (tiles_total * tile_outputs));
  if (tiles_total > kSplitTileCounters) most = 1;
  const int64_t granules = ceil_div(length, granule);
  const BlockSlots slots = block_slots(sm_count, blocks_per_sm);
  const auto time = [&](int64_t ksplit) {
    return modelled_split_time(tiles_total * ksplit, ceil_div(granules, ksplit), slots);
  };
  // The candidates: for each number of waves, the most splits that fit in it.
  int64_t ksplit = 1, best = time(1);
  for (int64_t waves = 1; waves <= std::min(max_waves, kMaxSplitWaves); ++waves) {
    const int64_t candidate = std::min(waves * slots.slots / tiles_total, most);
    if (candidate > ksplit && time(candidate) < best) {
      ksplit = candidate;
      best = time(candidate);
    }
  }
  if (best * kSplitGainDen >= time(1) * kSplitGainNum) ksplit = 1;
  SplitPlan split;
  split.length = ceil_div(ceil_div(length, ksplit), granule) * granule;
  split.count = int(ceil_div(length, split.length));
  return split;
}

}  // namespace kernels
}  // namespace xgemv
