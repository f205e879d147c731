// How a variant splits its reduction across blocks (kernels/split_plan.hpp), host side: every
// plan covers the reduction in whole granules within the workspace, fills a wave where one
// is thin, and keeps short reductions whole.
#include <cstdint>

#include <gtest/gtest.h>

#include "kernels/split_plan.hpp"

namespace {

using xgemv::ceil_div;
using xgemv::kernels::plan_split;
using xgemv::kernels::SplitCosts;
using xgemv::kernels::SplitPlan;

constexpr int64_t kGranule = 512;
constexpr int64_t kTileOutputs = 256;
constexpr int kAccumulatorBytes = 4;
constexpr int64_t kSms = 132;  // the H200's
// Blocks like t_mma's (3 an SM, a small fixed cost), t_rowblock's (4, a larger one) and
// q_mma's (2, a larger one).
constexpr SplitCosts kMma{3, 2}, kRowBlock{4, 6}, kQuant{2, 6};

SplitPlan plan(int64_t tiles, int64_t length, SplitCosts costs, int64_t batch = 1) {
  return plan_split(tiles, batch, length, kGranule, kTileOutputs, kSms, costs,
                    kAccumulatorBytes);
}

TEST(SplitPlan, EmptyReductionIsOneSplitOfNothing) {
  const SplitPlan split = plan(100, 0, kRowBlock);
  EXPECT_EQ(split.count, 1);
  EXPECT_EQ(split.length, 0);
}

TEST(SplitPlan, EveryPlanCoversTheReductionInWholeGranulesWithinTheWorkspace) {
  for (SplitCosts costs : {kMma, kRowBlock, kQuant, SplitCosts{1, 0}, SplitCosts{8, 16}})
    for (int64_t tiles : {1, 3, 16, 98, 256, 511, 512, 640, 2000, 70000})
      for (int64_t length : {1, 511, 512, 1024, 3584, 4097, 28672, 1 << 20}) {
        SCOPED_TRACE(testing::Message() << tiles << " tiles, " << length << " long, "
                                        << costs.blocks_per_sm << " blocks an SM, fixed cost "
                                        << costs.fixed_granules);
        const SplitPlan split = plan(tiles, length, costs);
        ASSERT_GE(split.count, 1);
        EXPECT_EQ(split.length % kGranule, 0);
        EXPECT_GE(split.count * split.length, length);             // covers it
        EXPECT_LT((split.count - 1) * split.length, length);       // no empty split
        if (split.count == 1) continue;
        EXPECT_GE(split.length, 2 * kGranule);                      // two granules each
        EXPECT_LE(tiles * kTileOutputs * split.count * kAccumulatorBytes,
                  int64_t(xgemv::kernels::kSplitPartialBytes));     // partials fit
        EXPECT_LE(tiles, xgemv::kernels::kSplitTileCounters);       // one counter a tile
        EXPECT_LE(ceil_div(tiles * split.count, kSms * costs.blocks_per_sm),
                  xgemv::kernels::kMaxSplitWaves);
      }
}

TEST(SplitPlan, FewTilesFillOneWaveAndNoMore) {
  // 16 tiles on 528 slots: 33 splits make exactly one wave; 34 would start a second.
  EXPECT_EQ(plan(16, 1 << 20, kRowBlock).count, 33);
  // 98 tiles on 528 slots: 5 splits (490 blocks), not 6 (588: a second wave of 60 blocks).
  EXPECT_EQ(plan(98, 1 << 20, kRowBlock).count, 5);
  // 128 tiles on 264 slots: 2 splits.
  EXPECT_EQ(plan(128, 4096, kQuant).count, 2);
}

TEST(SplitPlan, AThinLastWaveIsSplitIntoFullerOnesWhenTheReductionIsLong) {
  // 512 tiles on 396 slots: whole, 1.29 waves (the second under a third of a wave); in three
  // splits of 19 granules, 3.88 waves.
  EXPECT_EQ(plan(512, 28672, kMma).count, 3);
  // 224 tiles on 396 slots (0.57 of a wave): three splits, 1.70 waves.
  EXPECT_EQ(plan(224, 18944, kMma).count, 3);
  // 640 tiles on 528 slots (1.21 waves) of 128 granules: three splits.
  EXPECT_EQ(plan(640, 65536, kRowBlock).count, 3);
  // 320 tiles on 264 slots (1.21 waves, every wave short of saturation) of 32 granules: two.
  EXPECT_EQ(plan(320, 16384, kQuant).count, 2);
}

TEST(SplitPlan, ShortOrWellFilledReductionsStayWhole) {
  // 576 tiles on 528 slots, 7 granules each: a split costs more than the thin wave saves.
  EXPECT_EQ(plan(576, 3584, kRowBlock).count, 1);
  // Whole waves already: 1056 tiles on 528 slots.
  EXPECT_EQ(plan(1056, 28672, kRowBlock).count, 1);
  // A wave of 9/4 blocks an SM or more streams at full rate: 300 of 528 slots.
  EXPECT_EQ(plan(300, 28672, kRowBlock).count, 1);
  // 768 tiles on 528 slots, 16 granules: the last wave of 240 blocks is nearly saturating,
  // and two splits (2.9 waves of 8 granules) do not pay for their blocks' fixed cost.
  EXPECT_EQ(plan(768, 8192, kRowBlock).count, 1);
  // The same thin wave with 16 granules: split only where a block's fixed cost is small.
  EXPECT_EQ(plan(320, 8192, kQuant).count, 1);
  EXPECT_EQ(plan(512, 8192, kMma).count, 2);
}

TEST(SplitPlan, BatchItemsCountAsTiles) {
  EXPECT_EQ(plan(8, 1 << 20, kRowBlock, /*batch=*/2).count, 33);
  EXPECT_EQ(plan(1, 1 << 20, kRowBlock, /*batch=*/1056).count, 1);
}

TEST(SplitPlan, TooManyTilesForTheCountersStayWhole) {
  EXPECT_EQ(plan(xgemv::kernels::kSplitTileCounters + 1, 1 << 20, SplitCosts{1024, 2}).count,
            1);
}

}  // namespace
