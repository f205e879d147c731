// libxgemv_nccl on several GPUs: communicators of 2 and 4 ranks where the machine has that many
// devices (with fewer than two the tests are skipped with a line saying so), one thread per
// rank. Every layout (both splits, both results, ops N and T, all four element types, host and
// device scalars, beta = 0 and alpha = 0), even, uneven and mostly empty splits: every rank's y
// within the rounding bound of OpenBLAS on the whole problem, the outputs split bit for bit the
// single-GPU call on each block, the whole y the same bits on every rank (split_case.hpp); and
// the reduction's blocks the same bits as its whole result.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "split_case.hpp"

namespace xgemv_test {
namespace {

constexpr xgemv_split kOutputs = XGEMV_SPLIT_OUTPUTS, kReduction = XGEMV_SPLIT_REDUCTION;
constexpr xgemv_result kAll = XGEMV_RESULT_ALL, kOwn = XGEMV_RESULT_OWN_BLOCK;
constexpr int kRankCounts[] = {2, 4};

class NcclRanks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const int count : kRankCounts)
      if (cuda_device_count() >= count)
        ranks_[count] = std::make_unique<Ranks>(Ranks::first_devices(count));
  }
  static void TearDownTestSuite() { ranks_.clear(); }
  void SetUp() override {
    if (cuda_device_count() < 2)
      GTEST_SKIP() << "fewer than two CUDA devices: the ranks need one GPU each";
    for (const int count : kRankCounts) {
      if (cuda_device_count() >= count) {
        ASSERT_TRUE(ranks_.count(count)) << "making the communicator of " << count << " failed";
      }
    }
  }
  // Every communicator this machine has the devices for.
  static std::vector<const Ranks *> communicators() {
    std::vector<const Ranks *> all;
    for (const auto &[count, ranks] : ranks_) all.push_back(ranks.get());
    return all;
  }

 private:
  static inline std::map<int, std::unique_ptr<Ranks>> ranks_;
};

// Even blocks, uneven ones with an empty block where there are 4 ranks, and every block empty
// but the last (rank 0's partial sums are then zeros, the others' outputs come from one rank).
std::vector<std::vector<int64_t>> split_choices(int64_t axis, int ranks) {
  std::vector<std::vector<int64_t>> choices = {{}};
  if (ranks == 2) {
    choices.push_back({0, axis / 3, axis});
  } else {
    std::vector<int64_t> uneven = {0, 1, axis / 2, axis / 2};
    while (static_cast<int>(uneven.size()) < ranks) uneven.push_back(axis / 2 + 1);
    uneven.push_back(axis);
    choices.push_back(uneven);
  }
  std::vector<int64_t> last_only(ranks + 1, 0);
  last_only[ranks] = axis;
  choices.push_back(last_only);
  return choices;
}

template <class T>
void every_layout(const Ranks &ranks) {
  struct Scalars {
    ScalarChoice alpha, beta;
    xgemv_pointer_mode mode;
  };
  const Scalars scalar_choices[] = {
      {ScalarChoice::random, ScalarChoice::random, XGEMV_POINTER_MODE_HOST},
      {ScalarChoice::random, ScalarChoice::random, XGEMV_POINTER_MODE_DEVICE},
      {ScalarChoice::random, ScalarChoice::zero, XGEMV_POINTER_MODE_HOST},
      {ScalarChoice::random, ScalarChoice::zero, XGEMV_POINTER_MODE_DEVICE},
      {ScalarChoice::zero, ScalarChoice::random, XGEMV_POINTER_MODE_HOST},
      {ScalarChoice::zero, ScalarChoice::random, XGEMV_POINTER_MODE_DEVICE},
  };
  std::vector<SplitCase> cases;
  for_each_layout([&](SplitCase c) {
    c.m = c.trans == 'N' ? 301 : 173;
    c.n = c.trans == 'N' ? 173 : 301;
    c.lda_padding = 2;
    c.incx = -1;
    c.incy = c.split == kOutputs && c.result == kOwn ? 2 : 1;
    for (const std::vector<int64_t> &starts : split_choices(c.axis(), ranks.count()))
      for (const Scalars &s : scalar_choices) {
        c.starts = starts;
        c.alpha = s.alpha;
        c.beta = s.beta;
        c.pointer_mode = s.mode;
        cases.push_back(c);
      }
  });
  for (size_t i = 0; i < cases.size(); ++i)
    run_split_case<T>(cases[i], ranks,
                      case_seed(std::to_string(ranks.count()) + " ranks " + Element<T>::name, i));
}

TEST_F(NcclRanks, EveryLayoutMatchesTheSingleGpuResults) {
  for (const Ranks *ranks : communicators()) {
    for_each_element_type([&]<class T>() { every_layout<T>(*ranks); });
  }
}

// With each rank keeping its block, rank r holds the same bits as the whole result has there
// (the same partial sums, added in the same order); also with more ranks than outputs, where
// the last ranks keep nothing, and blocks of the outputs split of one output each.
template <class T>
void blocks_are_the_whole_results(const Ranks &ranks) {
  const int count = ranks.count();
  struct Shape {
    char trans;
    int64_t m, n;
  };
  for (const xgemv_split split : {kOutputs, kReduction})
    for (const Shape &shape : {Shape{'N', 515, 1029}, Shape{'T', 1029, 515},
                               Shape{'N', count - 1, 700}, Shape{'T', 700, count - 1}}) {
      SplitCase c;
      c.split = split;
      c.trans = shape.trans;
      c.m = shape.m;
      c.n = shape.n;
      const uint64_t seed = case_seed(std::string("blocks ") + Element<T>::name, c.m);
      c.result = kAll;
      const SplitOutcome<T> whole = run_split_case<T>(c, ranks, seed);
      c.result = kOwn;
      const SplitOutcome<T> blocks = run_split_case<T>(c, ranks, seed);
      if (whole.kept.size() != size_t(count) || blocks.kept.size() != size_t(count)) continue;
      const std::vector<int64_t> starts = c.starts_for(count);
      for (int r = 0; r < count; ++r) {
        const RankPart p = part_of(c, starts, count, r);
        const std::vector<T> expected(whole.kept[0].begin() + p.kept_begin,
                                      whole.kept[0].begin() + p.kept_begin + p.kept_length);
        EXPECT_TRUE(bitwise_equal("own block against the whole result", blocks.kept[r],
                                  expected))
            << split_name(split) << ", op " << c.trans << " m=" << c.m << " n=" << c.n
            << ", rank " << r << " of " << count << ", " << Element<T>::name;
      }
    }
}

TEST_F(NcclRanks, OwnBlocksAreTheWholeResultsBits) {
  for (const Ranks *ranks : communicators()) {
    for_each_element_type([&]<class T>() { blocks_are_the_whole_results<T>(*ranks); });
  }
}

}  // namespace
}  // namespace xgemv_test
