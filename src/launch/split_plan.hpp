// Splitting a reduction across blocks, host side: the workspace a handle keeps for it and how a
// variant plans a split. The combine itself is kernels/split_combine.cuh.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace xgemv {

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Per-split partial sums and one arrival counter per output tile, allocated once per handle.
// The counters are zero between calls (the last block of a tile resets its own), so one zeroing
// at creation is enough.
struct SplitWorkspace {
  void *partials;
  unsigned *tile_counters;
};
inline constexpr std::size_t kSplitPartialBytes = std::size_t(8) << 20;
inline constexpr int64_t kSplitTileCounters = int64_t(1) << 16;

// A split tail (plan_split_tail): grid.x's tiles from first_tile on are the last, thin wave's,
// each split into `count` blocks of `length` reduction elements (the last one shorter), which
// follow the whole tiles' blocks on grid.x; one split means no tail.
struct SplitTail {
  int first_tile = 0;
  int count = 1;
  int64_t length = 0;
};

// grid.y blocks of `length` reduction elements each (the last one shorter); one split means no
// workspace traffic. A plan of one split may have a tail instead.
struct SplitPlan {
  int count = 1;
  int64_t length = 0;
  SplitTail tail;
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
// (docs/design-notes.md, the split plan).
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

// The tiles of a thin last wave after whole waves (one batch item) are split across the slots
// the whole waves free: such a wave costs as much as a saturating one (the model above) while
// moving a sliver of the bytes. The tiles before it stay whole. As for plan_split: pieces of
// whole granules, the count of least modelled time (the smallest on ties) within one wave of
// tail blocks and the workspace, and only where it promises 1/16 less time; otherwise no tail.
// The model overrates a thin wave of whole tiles, which start one by one as the whole waves'
// blocks finish and stream faster than a full wave's; so a tail must also shorten those tiles
// by kSplitTailMinSavedGranules, in pieces of kSplitTailMinGranules. Measured on the H200
// (32-lane row blocks, 16 bits, op T): tiles of 4, 5 and 8 granules shortened by 2-4 ran
// 1.4-7% slower than no tail (3584 x 4608, 5120 x 5120, 8192 x 4608); tiles of 13-28 granules
// shortened by 8-18, in pieces of 4-10, ran 4-10% faster (13000 x 4608 to 28672 x 5120).
inline constexpr int64_t kSplitTailMinGranules = 4;
inline constexpr int64_t kSplitTailMinSavedGranules = 6;
inline SplitTail plan_split_tail(int64_t tiles, int64_t batch, int64_t length, int64_t granule,
                                 int64_t tile_outputs, int64_t sm_count, int64_t blocks_per_sm,
                                 int accumulator_bytes) {
  const BlockSlots slots = block_slots(sm_count, blocks_per_sm);
  const int64_t tail_tiles = tiles % slots.slots, whole_tiles = tiles - tail_tiles;
  if (batch != 1 || whole_tiles == 0 || tail_tiles == 0 || tail_tiles > kSplitTileCounters ||
      length == 0)
    return {};
  const int64_t granules = ceil_div(length, granule);
  const auto time = [&](int64_t tail_count) {
    const int64_t piece = ceil_div(granules, tail_count);
    return modelled_split_time(whole_tiles, granules, slots) +
           modelled_split_time(tail_tiles * ceil_div(granules, piece), piece, slots);
  };
  const int64_t most = std::min({granules / kSplitTailMinGranules, slots.slots / tail_tiles,
                                 int64_t(kSplitPartialBytes / std::size_t(accumulator_bytes)) /
                                     (tail_tiles * tile_outputs)});
  int64_t count = 1, best = time(1);
  for (int64_t candidate = 2; candidate <= most; ++candidate)
    if (granules - ceil_div(granules, candidate) >= kSplitTailMinSavedGranules &&
        time(candidate) < best) {
      count = candidate;
      best = time(candidate);
    }
  if (best * kSplitGainDen >= time(1) * kSplitGainNum) return {};
  SplitTail tail;
  tail.first_tile = int(whole_tiles);
  tail.length = ceil_div(granules, count) * granule;
  tail.count = int(ceil_div(length, tail.length));
  return tail;
}

}  // namespace xgemv
