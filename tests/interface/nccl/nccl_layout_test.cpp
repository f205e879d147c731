// The split layout rules of libxgemv_nccl (interface/nccl/split_layout.hpp) on the CPU, for rank
// counts no test machine may have: which block each rank owns, the shape of its A, the outputs
// its y holds, and which starts arrays are refused.
#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "nccl/split_layout.hpp"

namespace xgemv::nccl {
namespace {

constexpr xgemv_split kOutputs = XGEMV_SPLIT_OUTPUTS, kReduction = XGEMV_SPLIT_REDUCTION;
constexpr xgemv_result kAll = XGEMV_RESULT_ALL, kOwn = XGEMV_RESULT_OWN_BLOCK;

SplitLayout layout_or_fail(xgemv_split split, xgemv_result result,
                           const std::vector<int64_t> &starts, int rank, char trans, int64_t m,
                           int64_t n) {
  SplitLayout layout{};
  EXPECT_EQ(describe_layout(split, result, starts.data(), static_cast<int>(starts.size()) - 1,
                            rank, trans, m, n, &layout),
            XGEMV_STATUS_SUCCESS);
  return layout;
}

// What a rank's layout says of its A and its y: the problem's outputs, the shape of the rank's
// A, the outputs its y keeps, and whether the ranks exchange y.
struct RankView {
  int64_t outputs, local_m, local_n, kept_begin, kept_length;
  bool exchanges_y;
};
bool operator==(const RankView &a, const RankView &b) {
  return std::tie(a.outputs, a.local_m, a.local_n, a.kept_begin, a.kept_length, a.exchanges_y) ==
         std::tie(b.outputs, b.local_m, b.local_n, b.kept_begin, b.kept_length, b.exchanges_y);
}
std::ostream &operator<<(std::ostream &out, const RankView &v) {
  return out << "outputs " << v.outputs << ", A " << v.local_m << " x " << v.local_n
             << ", keeps y[" << v.kept_begin << ", +" << v.kept_length << ")"
             << (v.exchanges_y ? ", exchanges y" : "");
}
RankView view_of(const SplitLayout &l) {
  return {l.outputs, l.local_m, l.local_n, l.kept_begin, l.kept_length, l.exchanges_y()};
}

TEST(NcclLayout, RowsOfAAreCutByTheOutputsOfOpNAndTheReductionOfOpT) {
  EXPECT_TRUE(cuts_rows_of_a(kOutputs, 'N'));
  EXPECT_TRUE(cuts_rows_of_a(kOutputs, 'n'));
  EXPECT_FALSE(cuts_rows_of_a(kOutputs, 'T'));
  EXPECT_FALSE(cuts_rows_of_a(kOutputs, 'c'));
  EXPECT_FALSE(cuts_rows_of_a(kReduction, 'N'));
  EXPECT_TRUE(cuts_rows_of_a(kReduction, 'T'));
  EXPECT_TRUE(cuts_rows_of_a(kReduction, 'C'));
}

TEST(NcclLayout, OutputsSplitOfOpNGivesEachRankItsRowsOfA) {
  // A is 10 x 4; rank 1 owns nothing.
  const std::vector<int64_t> starts = {0, 3, 3, 10};
  const SplitLayout r0 = layout_or_fail(kOutputs, kOwn, starts, 0, 'N', 10, 4);
  EXPECT_EQ(r0.ranks, 3);
  EXPECT_EQ(view_of(r0), (RankView{10, 3, 4, 0, 3, false}));
  const SplitLayout r1 = layout_or_fail(kOutputs, kOwn, starts, 1, 'N', 10, 4);
  EXPECT_TRUE(r1.local_block_empty());
  EXPECT_EQ(view_of(r1), (RankView{10, 0, 4, 3, 0, false}));
  const SplitLayout r2 = layout_or_fail(kOutputs, kAll, starts, 2, 'N', 10, 4);
  EXPECT_EQ(r2.block_begin, 3);
  EXPECT_EQ(r2.block_length, 7);
  EXPECT_EQ(view_of(r2), (RankView{10, 7, 4, 0, 10, true}));
}

TEST(NcclLayout, OutputsSplitOfOpTGivesEachRankItsColumnsOfA) {
  EXPECT_EQ(view_of(layout_or_fail(kOutputs, kOwn, {0, 2, 6}, 1, 'T', 5, 6)),
            (RankView{6, 5, 4, 2, 4, false}));
}

TEST(NcclLayout, ReductionSplitGivesEachRankItsPartOfTheDotProducts) {
  // Op N: columns of A (x's elements); every rank's partial sums cover all m outputs.
  EXPECT_EQ(view_of(layout_or_fail(kReduction, kAll, {0, 4, 9}, 1, 'N', 6, 9)),
            (RankView{6, 6, 5, 0, 6, true}));
  // Op T: rows of A.
  EXPECT_EQ(view_of(layout_or_fail(kReduction, kAll, {0, 4, 9}, 0, 'T', 9, 6)),
            (RankView{6, 4, 6, 0, 6, true}));
}

TEST(NcclLayout, ReductionOwnBlocksAreCeilingSizedAndCoverTheOutputsOnce) {
  for (int ranks = 1; ranks <= 6; ++ranks) {
    for (int64_t outputs = 0; outputs <= 13; ++outputs) {
      std::vector<int64_t> starts(ranks + 1, 0);
      starts[ranks] = 5;  // the reduction (n, op N): any split will do
      const int64_t q = (outputs + ranks - 1) / ranks;
      int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        SCOPED_TRACE("ranks " + std::to_string(ranks) + " outputs " + std::to_string(outputs) +
                     " rank " + std::to_string(r));
        const SplitLayout l = layout_or_fail(kReduction, kOwn, starts, r, 'N', outputs, 5);
        EXPECT_EQ(l.kept_begin, next);
        EXPECT_EQ(l.kept_length, std::max<int64_t>(0, std::min(q, outputs - r * q)));
        EXPECT_TRUE(l.exchanges_y());
        next = l.kept_begin + l.kept_length;
      }
      EXPECT_EQ(next, outputs);
    }
  }
}

TEST(NcclLayout, BadStartsRankCountsAndValuesAreRefused) {
  SplitLayout l{};
  const auto status = [&](xgemv_split split, xgemv_result result,
                          const std::vector<int64_t> &starts, int ranks, int rank, char trans,
                          int64_t m, int64_t n) {
    return describe_layout(split, result, starts.empty() ? nullptr : starts.data(), ranks, rank,
                           trans, m, n, &l);
  };
  constexpr xgemv_status kInvalid = XGEMV_STATUS_INVALID_SPLIT;
  EXPECT_EQ(status(kOutputs, kAll, {}, 2, 0, 'N', 4, 4), kInvalid) << "NULL starts";
  EXPECT_EQ(status(kOutputs, kAll, {1, 2, 4}, 2, 0, 'N', 4, 4), kInvalid) << "starts[0] != 0";
  EXPECT_EQ(status(kOutputs, kAll, {0, 2, 3}, 2, 0, 'N', 4, 4), kInvalid) << "short of m";
  EXPECT_EQ(status(kOutputs, kAll, {0, 2, 5}, 2, 0, 'N', 4, 4), kInvalid) << "beyond m";
  EXPECT_EQ(status(kOutputs, kAll, {0, 2, 4}, 2, 0, 'T', 4, 5), kInvalid) << "op T: n outputs";
  EXPECT_EQ(status(kReduction, kAll, {0, 2, 4}, 2, 0, 'N', 4, 5), kInvalid) << "op N: n";
  EXPECT_EQ(status(kOutputs, kAll, {0, 3, 2, 4}, 3, 0, 'N', 4, 4), kInvalid)
      << "decreasing, in another rank's block";
  EXPECT_EQ(status(kOutputs, kAll, {0, 3, -1, 4}, 3, 2, 'N', 4, 4), kInvalid) << "negative";
  EXPECT_EQ(status(kOutputs, kAll, {0, 4}, 0, 0, 'N', 4, 4), kInvalid) << "no rank";
  EXPECT_EQ(status(kOutputs, kAll, {0, 4}, 1, 1, 'N', 4, 4), kInvalid) << "rank past the count";
  EXPECT_EQ(status(kOutputs, kAll, {0, 4}, 1, -1, 'N', 4, 4), kInvalid) << "negative rank";
  EXPECT_EQ(status(static_cast<xgemv_split>(5), kAll, {0, 4}, 1, 0, 'N', 4, 4), kInvalid);
  EXPECT_EQ(status(kOutputs, static_cast<xgemv_result>(5), {0, 4}, 1, 0, 'N', 4, 4), kInvalid);
  // Valid: empty blocks anywhere, every block empty of an empty axis.
  EXPECT_EQ(status(kOutputs, kAll, {0, 0, 4, 4}, 3, 2, 'N', 4, 4), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(status(kReduction, kOwn, {0, 0, 0}, 2, 1, 'T', 0, 4), XGEMV_STATUS_SUCCESS);
}

}  // namespace
}  // namespace xgemv::nccl
