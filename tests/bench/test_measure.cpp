// The numbers of the measuring method: rotation, timing plans, median, geometric mean.
#include <gtest/gtest.h>

#include <cmath>

#include "lib/measure.hpp"

namespace xgemv::bench {
namespace {

TEST(RotationLayout, CopiesOfASmallMatrixTotalAtLeastOneGiB) {
  const RotationLayout layout = rotation_layout(256 * 256 * 4);
  EXPECT_EQ(layout.copy_stride_bytes, 256 * 256 * 4);
  EXPECT_GE(layout.pool_bytes(), kRotationBytes);
  EXPECT_LT(layout.pool_bytes() - layout.copy_stride_bytes, kRotationBytes);
}

TEST(RotationLayout, CopiesStartOnAlignedBoundaries) {
  const RotationLayout layout = rotation_layout(100003 * 777 * 2);
  EXPECT_EQ(layout.copy_stride_bytes % kCopyAlignment, 0);
  EXPECT_GE(layout.copy_stride_bytes, 100003 * 777 * 2);
  EXPECT_LT(layout.copy_stride_bytes, 100003 * 777 * 2 + kCopyAlignment);
  EXPECT_EQ(rotation_layout(1).copy_stride_bytes, kCopyAlignment);
}

TEST(RotationLayout, AMatrixOfAGibOrMoreIsItsOwnRotation) {
  EXPECT_EQ(rotation_layout(kRotationBytes).copies, 1);
  EXPECT_EQ(rotation_layout(int64_t{8192} * 128256 * 4).copies, 1);
  EXPECT_EQ(rotation_layout(kRotationBytes / 2 + 1).copies, 2);
}

TEST(TimingPlan, AlwaysAtLeastFifteenBatchesAfterWarmUp) {
  for (bool quick : {true, false}) {
    for (int64_t bytes : {int64_t{8}, int64_t{1} << 20, int64_t{4} << 30}) {
      const TimingPlan plan = plan_timing(bytes, quick);
      EXPECT_GE(plan.batches, 15);
      EXPECT_GE(plan.warmup_batches, 1);
      EXPECT_GE(plan.calls_per_batch, 1);
    }
  }
  EXPECT_LT(plan_timing(1 << 20, true).batches, plan_timing(1 << 20, false).batches);
}

TEST(TimingPlan, EveryMeasurementTimes31BatchesAfter3OrQuick15After2) {
  EXPECT_EQ(plan_batches(false).batches, 31);
  EXPECT_EQ(plan_batches(false).warmup_batches, 3);
  EXPECT_EQ(plan_batches(true).batches, 15);
  EXPECT_EQ(plan_batches(true).warmup_batches, 2);
  EXPECT_EQ(plan_batches(true).calls_per_batch, 1);  // a decode step's replay, an NCCL repetition
}

TEST(TimingPlan, CallsPerBatchShrinkWithSizeAndAreCapped) {
  EXPECT_EQ(plan_timing(int64_t{2} << 30, false).calls_per_batch, 1);
  EXPECT_EQ(plan_timing(int64_t{64} << 20, true).calls_per_batch, 4);
  EXPECT_EQ(plan_timing(256, true).calls_per_batch, 100);
  EXPECT_EQ(plan_timing(256, false).calls_per_batch, 400);
}

TEST(GraphCalls, CoverTheRotationWithinABound) {
  const TimingPlan plan = plan_timing(256 * 1024, true);
  EXPECT_EQ(graph_calls(plan, 4096), 4096);
  EXPECT_EQ(graph_calls(plan, 1 << 20), 4096);
  EXPECT_EQ(graph_calls(plan, 2), plan.calls_per_batch);
}

TEST(Statistics, Median) {
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({7.0}), 7.0);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Statistics, SpreadIsTheInterquartileRangeOverTheMedian) {
  EXPECT_DOUBLE_EQ(spread_pct({10.0, 10.0, 10.0, 10.0}), 0.0);
  // Sorted 8, 9, 10, 11, 12, 40: quartiles at 9 and 12 (indices 1 and 4), median 10.5.
  EXPECT_DOUBLE_EQ(spread_pct({12.0, 9.0, 40.0, 10.0, 8.0, 11.0}), 100.0 * 3.0 / 10.5);
  EXPECT_TRUE(std::isnan(spread_pct({})));
}

TEST(Statistics, GeometricMean) {
  EXPECT_DOUBLE_EQ(geometric_mean({2.0, 8.0}), 4.0);
  EXPECT_DOUBLE_EQ(geometric_mean({1.5}), 1.5);
  EXPECT_NEAR(geometric_mean({0.5, 2.0, 1.0}), 1.0, 1e-15);
  EXPECT_TRUE(std::isnan(geometric_mean({})));
}

}  // namespace
}  // namespace xgemv::bench
