// How a variant splits its reduction across blocks (kernels/split_plan.hpp), host side: every
// plan covers the reduction in whole granules within the workspace, fills a wave where one
// is thin, and keeps short reductions whole.
#include <cstdint>

#include <gtest/gtest.h>

#include "kernels/split_plan.hpp"

namespace {

using xgemv::ceil_div;
using xgemv::kernels::plan_split;
using xgemv::kernels::SplitPlan;

constexpr int64_t kGranule = 512;
constexpr int64_t kTileOutputs = 256;
constexpr int kAccumulatorBytes = 4;

SplitPlan plan(int64_t tiles, int64_t length, int64_t slots, int64_t batch = 1) {
  return plan_split(tiles, batch, length, kGranule, kTileOutputs, slots, kAccumulatorBytes);
}

TEST(SplitPlan, EmptyReductionIsOneSplitOfNothing) {
  const SplitPlan split = plan(100, 0, 528);
  EXPECT_EQ(split.count, 1);
  EXPECT_EQ(split.length, 0);
}

TEST(SplitPlan, EveryPlanCoversTheReductionInWholeGranulesWithinTheWorkspace) {
  for (int64_t slots : {264, 396, 528})
    for (int64_t tiles : {1, 3, 16, 98, 256, 511, 512, 640, 2000, 70000})
      for (int64_t length : {1, 511, 512, 1024, 3584, 4097, 28672, 1 << 20}) {
        SCOPED_TRACE(testing::Message() << tiles << " tiles, " << length << " long, " << slots
                                        << " slots");
        const SplitPlan split = plan(tiles, length, slots);
        ASSERT_GE(split.count, 1);
        EXPECT_EQ(split.length % kGranule, 0);
        EXPECT_GE(split.count * split.length, length);             // covers it
        EXPECT_LT((split.count - 1) * split.length, length);       // no empty split
        if (split.count == 1) continue;
        EXPECT_GE(split.length, 2 * kGranule);                      // two granules each
        EXPECT_LE(tiles * kTileOutputs * split.count * kAccumulatorBytes,
                  int64_t(xgemv::kernels::kSplitPartialBytes));     // partials fit
        EXPECT_LE(tiles, xgemv::kernels::kSplitTileCounters);       // one counter a tile
        EXPECT_LE(ceil_div(tiles * split.count, slots), xgemv::kernels::kMaxSplitWaves);
      }
}

TEST(SplitPlan, FewTilesFillOneWaveAndNoMore) {
  // 16 tiles on 528 slots: 33 splits make exactly one wave; 34 would start a second.
  EXPECT_EQ(plan(16, 1 << 20, 528).count, 33);
  // 98 tiles on 528 slots: 5 splits (490 blocks), not 6 (588: a second wave of 60 blocks).
  EXPECT_EQ(plan(98, 1 << 20, 528).count, 5);
}

TEST(SplitPlan, AThinLastWaveIsSplitIntoFullerOnesWhenTheReductionIsLong) {
  // 512 tiles on 396 slots: whole, 1.29 waves (the second under a third of a wave); in three
  // splits of 19 granules, 3.88 waves.
  EXPECT_EQ(plan(512, 28672, 396).count, 3);
  // 224 tiles on 396 slots (0.57 of a wave): three splits, 1.70 waves.
  EXPECT_EQ(plan(224, 18944, 396).count, 3);
}

TEST(SplitPlan, ShortOrWellFilledReductionsStayWhole) {
  // 576 tiles on 528 slots, 7 granules each: a split costs more than the thin wave saves.
  EXPECT_EQ(plan(576, 3584, 528).count, 1);
  // Whole waves already: 1056 tiles on 528 slots.
  EXPECT_EQ(plan(1056, 28672, 528).count, 1);
  // A wave within 3/4 of full streams at full rate: 400 of 528 slots.
  EXPECT_EQ(plan(400, 28672, 528).count, 1);
}

TEST(SplitPlan, BatchItemsCountAsTiles) {
  EXPECT_EQ(plan(8, 1 << 20, 528, /*batch=*/2).count, 33);
  EXPECT_EQ(plan(1, 1 << 20, 528, /*batch=*/1056).count, 1);
}

TEST(SplitPlan, TooManyTilesForTheCountersStayWhole) {
  EXPECT_EQ(plan(xgemv::kernels::kSplitTileCounters + 1, 1 << 20, 1 << 20).count, 1);
}

}  // namespace
