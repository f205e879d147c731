// How a variant splits its reduction across blocks (kernels/split_plan.hpp), host side: every
// plan covers the reduction in whole granules within the workspace, fills a wave where one
// is thin, spreads a thin last wave over fuller ones only where the variant allows more than
// one wave, and keeps short reductions whole.
#include <cstdint>

#include <gtest/gtest.h>

#include "launch/split_plan.hpp"

namespace {

using xgemv::ceil_div;
using xgemv::kMaxSplitWaves;
using xgemv::plan_split;
using xgemv::SplitPlan;
using xgemv::SplitTail;

constexpr int64_t kGranule = 512;
constexpr int64_t kTileOutputs = 256;
constexpr int kAccumulatorBytes = 4;
constexpr int64_t kSms = 132;  // the H200's

// `tiles` output tiles of `length` reduction elements on `blocks_per_sm` resident blocks an
// SM, in at most `max_waves` waves.
SplitPlan plan(int64_t tiles, int64_t length, int64_t blocks_per_sm, int64_t max_waves,
               int64_t batch = 1) {
  return plan_split(tiles, batch, length, kGranule, kTileOutputs, kSms, blocks_per_sm,
                    max_waves, kAccumulatorBytes);
}

TEST(SplitPlan, EmptyReductionIsOneSplitOfNothing) {
  const SplitPlan split = plan(100, 0, 4, kMaxSplitWaves);
  EXPECT_EQ(split.count, 1);
  EXPECT_EQ(split.length, 0);
}

TEST(SplitPlan, EveryPlanCoversTheReductionInWholeGranulesWithinTheWorkspace) {
  for (int64_t blocks_per_sm : {2, 3, 4})
    for (int64_t max_waves : {int64_t(1), kMaxSplitWaves})
      for (int64_t tiles : {1, 3, 16, 98, 256, 511, 512, 640, 2000, 70000})
        for (int64_t length : {1, 511, 512, 1024, 3584, 4097, 28672, 1 << 20}) {
          SCOPED_TRACE(testing::Message() << tiles << " tiles, " << length << " long, "
                                          << blocks_per_sm << " blocks an SM, " << max_waves
                                          << " waves at most");
          const SplitPlan split = plan(tiles, length, blocks_per_sm, max_waves);
          ASSERT_GE(split.count, 1);
          EXPECT_EQ(split.length % kGranule, 0);
          EXPECT_GE(split.count * split.length, length);             // covers it
          EXPECT_LT((split.count - 1) * split.length, length);       // no empty split
          if (split.count == 1) continue;
          EXPECT_GE(split.length, 2 * kGranule);                      // two granules each
          EXPECT_LE(tiles * kTileOutputs * split.count * kAccumulatorBytes,
                    int64_t(xgemv::kSplitPartialBytes));     // partials fit
          EXPECT_LE(tiles, xgemv::kSplitTileCounters);       // one counter a tile
          EXPECT_LE(ceil_div(tiles * split.count, kSms * blocks_per_sm), max_waves);
        }
}

TEST(SplitPlan, FewTilesFillOneWaveAndNoMore) {
  for (int64_t max_waves : {int64_t(1), kMaxSplitWaves}) {
    // 16 tiles on 528 slots: 33 splits make exactly one wave; 34 would start a second.
    EXPECT_EQ(plan(16, 1 << 20, 4, max_waves).count, 33);
    // 98 tiles on 528 slots: 5 splits (490 blocks), not 6 (588: a second wave of 60 blocks).
    EXPECT_EQ(plan(98, 1 << 20, 4, max_waves).count, 5);
  }
  // 128 tiles on 264 slots (under the 297 blocks that saturate): two splits.
  EXPECT_EQ(plan(128, 4096, 2, 1).count, 2);
}

TEST(SplitPlan, AWaveOfNineQuartersOfABlockAnSmStreamsAtFullRate) {
  // 256 or 300 tiles on 528 slots: whole, unless the reduction is long enough for the second
  // split's shorter blocks to outweigh the thin wave.
  EXPECT_EQ(plan(256, 4096, 4, 1).count, 1);
  EXPECT_EQ(plan(256, 8192, 4, 1).count, 1);
  EXPECT_EQ(plan(300, 28672, 4, 1).count, 1);
  EXPECT_EQ(plan(256, 65536, 4, 1).count, 2);
}

TEST(SplitPlan, AThinLastWaveIsSpreadOverFullerOnesWhereTheVariantAllows) {
  // 512 tiles on 396 slots: 1.29 waves whole (the second under a third of a wave); in three
  // splits of 19 granules, 3.88 waves. In one wave at most: whole.
  EXPECT_EQ(plan(512, 28672, 3, kMaxSplitWaves).count, 3);
  EXPECT_EQ(plan(512, 28672, 3, 1).count, 1);
  // 224 tiles on 396 slots (0.57 of a wave): three splits, 1.70 waves.
  EXPECT_EQ(plan(224, 18944, 3, kMaxSplitWaves).count, 3);
  // 640 tiles on 528 slots (1.21 waves) of 128 granules: three splits, or whole.
  EXPECT_EQ(plan(640, 65536, 4, kMaxSplitWaves).count, 3);
  EXPECT_EQ(plan(640, 65536, 4, 1).count, 1);
}

TEST(SplitPlan, ShortOrWellFilledReductionsStayWhole) {
  // 576 tiles on 528 slots, 7 granules each: a split costs more than the thin wave saves.
  EXPECT_EQ(plan(576, 3584, 4, kMaxSplitWaves).count, 1);
  // Whole waves already: 1056 tiles on 528 slots.
  EXPECT_EQ(plan(1056, 28672, 4, kMaxSplitWaves).count, 1);
  // 768 tiles on 528 slots, 16 granules: the last wave of 240 blocks is nearly saturating, and
  // two splits (2.9 waves of 8 granules) do not pay for their blocks' fixed cost.
  EXPECT_EQ(plan(768, 8192, 4, kMaxSplitWaves).count, 1);
}

TEST(SplitPlan, BatchItemsCountAsTiles) {
  EXPECT_EQ(plan(8, 1 << 20, 4, 1, /*batch=*/2).count, 33);
  EXPECT_EQ(plan(1, 1 << 20, 4, kMaxSplitWaves, /*batch=*/1056).count, 1);
}

// plan_split_tail in the units of op T's 32-lane row blocks of 16-bit elements: 8 outputs a
// tile, granules of 1024 elements, 4 blocks an SM.
SplitTail tail(int64_t tiles, int64_t length, int64_t batch = 1) {
  return xgemv::plan_split_tail(tiles, batch, length, 1024, 8, kSms, 4,
                                         kAccumulatorBytes);
}

TEST(SplitTail, AThinLastWaveAfterWholeOnesIsSplitOverTheFreedSlots) {
  // 640 tiles on 528 slots, 14 granules each: the 112 last in 3 pieces of 5, the last one 4.
  const SplitTail split = tail(640, 13824);
  EXPECT_EQ(split.first_tile, 528);
  EXPECT_EQ(split.count, 3);
  EXPECT_EQ(split.length, 5120);
  // 28 granules: 3 pieces of 10 (the smallest count of the least modelled time; 4 of 7 tie).
  const SplitTail longer = tail(640, 28672);
  EXPECT_EQ(longer.count, 3);
  EXPECT_EQ(longer.length, 10240);
}

TEST(SplitTail, EveryTailCoversTheReductionInWholeGranulesWithinAWaveAndTheWorkspace) {
  for (int64_t tiles : {529, 576, 700, 1100, 1600, 2700, 5000})
    for (int64_t length : {1, 1023, 1024, 2048, 3584, 4097, 8192, 13000, 16384, 28672, 1 << 20}) {
      SCOPED_TRACE(testing::Message() << tiles << " tiles, " << length << " long");
      const SplitTail split = tail(tiles, length);
      if (split.count == 1) continue;
      const int64_t tail_tiles = tiles - split.first_tile;
      EXPECT_EQ(split.first_tile % (kSms * 4), 0);                    // whole waves before it
      EXPECT_GT(tail_tiles, 0);
      EXPECT_LT(tail_tiles, kSms * 4);
      EXPECT_EQ(split.length % 1024, 0);
      EXPECT_GE(split.length, xgemv::kSplitTailMinGranules * 1024);
      EXPECT_GE(ceil_div(length, 1024) - split.length / 1024,
                xgemv::kSplitTailMinSavedGranules);                // worth a combine
      EXPECT_GE(split.count * split.length, length);                  // covers it
      EXPECT_LT((split.count - 1) * split.length, length);            // no empty piece
      EXPECT_LE(tail_tiles * split.count, kSms * 4);                  // one wave of pieces
      EXPECT_LE(tail_tiles * 8 * split.count * kAccumulatorBytes,
                int64_t(xgemv::kSplitPartialBytes));         // partials fit
    }
}

TEST(SplitTail, NoTailWithoutAWholeWaveAThinLastOneOrAGain) {
  EXPECT_EQ(tail(448, 3584).count, 1);        // less than a wave
  EXPECT_EQ(tail(1056, 3584).count, 1);       // whole waves
  EXPECT_EQ(tail(576, 1000).count, 1);        // one granule
  EXPECT_EQ(tail(576, 3584).count, 1);        // 4 granules: one piece of the least
  EXPECT_EQ(tail(640, 5120).count, 1);        // 5 granules: 2 pieces of 3 (too short)
  EXPECT_EQ(tail(576, 8192).count, 1);        // 8 granules: 2 pieces of 4 save too little
  EXPECT_EQ(tail(2752, 32768).count, 1);      // 5.2 waves: the thin one is 4% of the time
  EXPECT_EQ(tail(640, 13824, /*batch=*/2).count, 1);
}

TEST(SplitPlan, TooManyTilesForTheCountersStayWhole) {
  EXPECT_EQ(plan(xgemv::kSplitTileCounters + 1, 1 << 20, 1024, 1).count, 1);
}

}  // namespace
