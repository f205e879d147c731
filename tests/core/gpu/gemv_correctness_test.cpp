// xgemv against OpenBLAS and cuBLAS for every element type and op, over tables of cases: edge
// and block-boundary shapes, increments, scalars in both pointer modes, misaligned pointers and
// odd lda, strided batches, and the split-reduction shapes (where bitwise repeatability bites).
// Every case also checks guards, gaps, untouched inputs and a repeated call (gemv_case.hpp).
#include <vector>

#include <gtest/gtest.h>

#include "support/gemv_case.hpp"
#include "support/typed_tests.hpp"

namespace xgemv_test {
namespace {

constexpr char kOps[] = {'N', 'T', 'C'};
constexpr int64_t kIncrements[] = {1, 2, -1, -3};
constexpr ScalarChoice kScalars[] = {ScalarChoice::zero, ScalarChoice::one,
                                     ScalarChoice::minus_one_and_a_half, ScalarChoice::random};

// 0, 1, primes, sizes either side of the usual block sizes, tall and wide extremes.
constexpr int64_t kEdgeShapes[][2] = {
    {0, 0},       {0, 7},       {7, 0},       {1, 1},      {1, 257},    {257, 1},    {2, 3},
    {13, 31},     {127, 128},   {128, 129},   {129, 127},  {255, 256},  {256, 257},  {257, 255},
    {1023, 1025}, {1025, 1023}, {4099, 2053}, {100000, 3}, {3, 100000}, {100000, 1}, {1, 100000},
};

// Moderate shapes, tall and wide, odd sizes, for the variations of everything but the shape.
constexpr int64_t kVariationShapes[][2] = {{1031, 67}, {67, 1031}};

// Shapes whose short output makes xgemv split the reduction across blocks (64 x 10^6 op N,
// 10^6 x 64 op T), and the other op on each (long output, short reduction). Op C is op T.
// The last splits a thin last wave of op T's row blocks in 16 bits on 132 SMs (576 tiles of 8
// columns on 528 slots) in three pieces, the last one shorter.
constexpr int64_t kSplitReductionShapes[][2] = {{64, 1000000}, {1000000, 64}, {13000, 4608}};
constexpr char kRealOps[] = {'N', 'T'};

// Each shape with each op, everything else at its default.
template <size_t N, size_t K = 3>
std::vector<GemvCase> base_cases(const int64_t (&shapes)[N][2], const char (&ops)[K] = kOps) {
  std::vector<GemvCase> cases;
  for (const auto &[m, n] : shapes)
    for (const char op : ops) cases.push_back({.trans = op, .m = m, .n = n});
  return cases;
}

std::vector<GemvCase> increment_cases() {
  std::vector<GemvCase> cases;
  for (const GemvCase &base : base_cases(kVariationShapes))
    for (const int64_t incx : kIncrements)
      for (const int64_t incy : kIncrements) {
        GemvCase c = base;
        c.incx = incx;
        c.incy = incy;
        cases.push_back(c);
      }
  return cases;
}

// alpha x beta in {0, 1, -1.5, random}^2, host and device scalars; beta = 0 poisons y with NaN.
std::vector<GemvCase> scalar_cases() {
  return with_scalars(base_cases(kVariationShapes), kScalars, kScalars);
}

std::vector<GemvCase> alignment_cases() {
  constexpr Placement kPlacements[] = {
      {1, 0, 0, 0},  {0, 1, 0, 0}, {0, 0, 1, 0},  // each base pointer off by one element
      {1, 1, 1, 1},                               // all of them, and lda = m + 1
      {0, 0, 0, 2},                               // aligned, but lda breaks column alignment
      {3, 5, 7, 64},                              // lda well beyond m
  };
  std::vector<GemvCase> cases;
  for (const GemvCase &base : base_cases(kVariationShapes))
    for (const Placement &placement : kPlacements) cases.push_back(placed(base, placement));
  // Lower-case trans is as valid as upper case.
  for (const char op : {'n', 't', 'c'}) cases.push_back({.trans = op, .m = 129, .n = 67});
  return cases;
}

std::vector<GemvCase> batched_cases() {
  constexpr int64_t kBatchShapes[][2] = {{129, 65}, {65, 129}};
  constexpr int64_t kIncrementPairs[][2] = {{1, 1}, {-3, 2}};
  std::vector<GemvCase> cases;
  for (const GemvCase &base : base_cases(kBatchShapes))
    for (const int64_t count : {0, 1, 3, 7})
      for (const int64_t padding : {0, 5})
        for (const auto &[incx, incy] : kIncrementPairs) {
          GemvCase c = base;
          c.batched = true;
          c.batch_count = count;
          c.stride_padding = padding;
          c.incx = incx;
          c.incy = incy;
          cases.push_back(c);
        }
  // Device scalars and misalignment through the batched entry point too.
  cases.push_back({.trans = 'T',
                   .m = 257,
                   .n = 33,
                   .beta = ScalarChoice::zero,
                   .pointer_mode = XGEMV_POINTER_MODE_DEVICE,
                   .a_misalignment = 1,
                   .batched = true,
                   .batch_count = 3,
                   .stride_padding = 1});
  cases.push_back({.trans = 'N',
                   .m = 257,
                   .n = 33,
                   .alpha = ScalarChoice::zero,
                   .pointer_mode = XGEMV_POINTER_MODE_DEVICE,
                   .y_misalignment = 1,
                   .batched = true,
                   .batch_count = 7});
  return cases;
}

XGEMV_TYPED_TEST_SUITE(GemvCorrectness, GemvCaseTest<T>);

TYPED_TEST(GemvCorrectness, EdgeAndBlockBoundaryShapes) { this->run(base_cases(kEdgeShapes)); }
TYPED_TEST(GemvCorrectness, Increments) { this->run(increment_cases()); }
TYPED_TEST(GemvCorrectness, ScalarsInBothPointerModes) { this->run(scalar_cases()); }
TYPED_TEST(GemvCorrectness, MisalignedPointersAndLda) { this->run(alignment_cases()); }
TYPED_TEST(GemvCorrectness, StridedBatched) { this->run(batched_cases()); }
// Random data shows non-deterministic combining (bits differ between the two calls); integer
// data, exact whatever the order, shows any element dropped or counted twice.
TYPED_TEST(GemvCorrectness, SplitReductionsAreRepeatableAndExact) {
  std::vector<GemvCase> cases = base_cases(kSplitReductionShapes, kRealOps);
  for (GemvCase c : base_cases(kSplitReductionShapes, kRealOps)) {
    c.integer_data = true;
    cases.push_back(c);
  }
  this->run(cases);
}

// Long reductions on integer data, where only an exact check can see a wrong element.
TYPED_TEST(GemvCorrectness, LongReductionsAreExactOnIntegerData) {
  constexpr int64_t kLongShapes[][2] = {{100000, 3},  {3, 100000},  {100000, 1}, {1, 100000},
                                        {4099, 2053}, {65537, 129}, {129, 65537}};
  std::vector<GemvCase> cases = base_cases(kLongShapes, kRealOps);
  // And with strides and misalignment, through both entry points.
  cases.push_back({.trans = 'T', .m = 65537, .n = 129, .incx = -3, .incy = 2, .a_misalignment = 1});
  cases.push_back({.trans = 'N',
                   .m = 129,
                   .n = 65537,
                   .lda_padding = 1,
                   .incx = 2,
                   .incy = -1,
                   .x_misalignment = 1,
                   .y_misalignment = 1});
  cases.push_back({.trans = 'N',
                   .m = 33,
                   .n = 20001,
                   .beta = ScalarChoice::minus_one_and_a_half,
                   .batched = true,
                   .batch_count = 3,
                   .stride_padding = 7});
  for (GemvCase &c : cases) c.integer_data = true;
  this->run(cases);
}

}  // namespace
}  // namespace xgemv_test
