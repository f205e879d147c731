// Cases, the operand generator and the check against the fp64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "lib/check.hpp"
#include "lib/random_values.hpp"
#include "lib/record.hpp"

namespace xgemv::bench {
namespace {

Case make_case(char op, int64_t m, int64_t n, Dtype dtype = Dtype::fp64) {
  return {"test", "t", dtype, op, m, n};
}

TEST(Case, LengthsAndBytesFollowTheOp) {
  Case c = make_case('T', 4096, 14336, Dtype::fp16);
  EXPECT_EQ(c.x_length(), 4096);
  EXPECT_EQ(c.y_length(), 14336);
  EXPECT_EQ(c.reduction_length(), 4096);
  EXPECT_EQ(c.lda(), 4096);
  EXPECT_EQ(c.a_bytes(), int64_t{4096} * 14336 * 2);
  EXPECT_EQ(c.bytes(), (int64_t{4096} * 14336 + 4096 + 14336) * 2);
  EXPECT_EQ(c.shape(), "4096x14336");
  EXPECT_EQ(case_record(c, "xgemv", "", "").label(), "fp16 T 4096x14336 t");
  c.op = 'N';
  EXPECT_EQ(c.x_length(), 14336);
  EXPECT_EQ(c.y_length(), 4096);
}

TEST(Case, ParsesShapesAndDtypes) {
  EXPECT_EQ(parse_shape("4096x14336"), (std::pair<int64_t, int64_t>{4096, 14336}));
  EXPECT_FALSE(parse_shape("4096"));
  EXPECT_FALSE(parse_shape("0x3"));
  EXPECT_FALSE(parse_shape("3x"));
  EXPECT_FALSE(parse_shape("3x4x5"));
  EXPECT_FALSE(parse_shape("-3x4"));
  for (Dtype dtype : kAllDtypes) EXPECT_EQ(parse_dtype(dtype_name(dtype)), dtype);
  EXPECT_FALSE(parse_dtype("fp8"));
}

TEST(Case, GatheredVectorsFollowTheBlasStartPointRule) {
  const double data[] = {1, 2, 3, 4, 5};
  EXPECT_EQ(gather_vector(data, 3, -2), (std::vector<double>{5, 3, 1}));
}

TEST(RandomValues, AreDeterministicSignedAndOnTheFp16Grid) {
  std::set<float> seen;
  double sum = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    const float value = random_value(kSeedA, i);
    ASSERT_GE(value, -1.0f);
    ASSERT_LT(value, 1.0f);
    ASSERT_EQ(value * 2048.0f, std::floor(value * 2048.0f));
    ASSERT_EQ(value, random_value(kSeedA, i));
    seen.insert(value);
    sum += value;
  }
  EXPECT_GT(seen.size(), 4000u);
  EXPECT_LT(std::abs(sum / 100000), 0.01);
  EXPECT_NE(random_value(kSeedA, 7), random_value(kSeedX, 7));
  static_assert(random_value(1, 2) == random_value(1, 2), "usable in constant expressions");
}

TEST(Check, ToleranceGrowsWithTheReductionAndThePrecision) {
  const Case short_fp32 = make_case('T', 64, 10, Dtype::fp32);
  const Case long_fp32 = make_case('T', 1 << 20, 10, Dtype::fp32);
  const Case fp16 = make_case('T', 64, 10, Dtype::fp16);
  const Case bf16 = make_case('T', 64, 10, Dtype::bf16);
  const Case fp64 = make_case('T', 64, 10, Dtype::fp64);
  EXPECT_LT(tolerance(short_fp32), tolerance(long_fp32));
  EXPECT_LT(tolerance(short_fp32), tolerance(fp16));
  EXPECT_LT(tolerance(fp16), tolerance(bf16));
  EXPECT_LT(tolerance(fp64), 1e-13);
  EXPECT_LT(tolerance(long_fp32), 1e-3);
  EXPECT_LT(tolerance(bf16), 0.02);
}

TEST(Check, PassesRoundingAndFailsWrongResults) {
  const Case c = make_case('T', 4096, 4, Dtype::fp16);
  const std::vector<double> y_ref = {10.0, -20.0, 5.0, 0.25};
  std::vector<double> y = {10.004, -20.01, 5.0, 0.25};
  EXPECT_TRUE(compare_to_reference(c, y, y_ref).passed);
  EXPECT_NEAR(compare_to_reference(c, y, y_ref).max_error, 0.01 / 20, 1e-12);

  y[2] = 6.0;  // a wrong element
  EXPECT_FALSE(compare_to_reference(c, y, y_ref).passed);
  y[2] = std::numeric_limits<double>::quiet_NaN();  // an element never written
  const CheckResult nan = compare_to_reference(c, y, y_ref);
  EXPECT_FALSE(nan.passed);
  EXPECT_TRUE(std::isinf(nan.max_error));
  EXPECT_FALSE(compare_to_reference(c, {0, 0, 0, 0}, y_ref).passed);  // zeros
  EXPECT_FALSE(compare_to_reference(c, {10.0}, y_ref).passed);        // too short
}

TEST(Check, AllZeroReferenceIsComparedAbsolutely) {
  const Case c = make_case('N', 2, 2, Dtype::fp32);
  EXPECT_TRUE(compare_to_reference(c, {0, 0}, {0, 0}).passed);
  EXPECT_FALSE(compare_to_reference(c, {0, 1e-3}, {0, 0}).passed);
}

}  // namespace
}  // namespace xgemv::bench
