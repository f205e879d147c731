// Every kernel variant of the dispatch table, forced on the handle, on the edge cases of the ops
// it implements: shapes around its tile sizes, misalignment, increments, both pointer modes,
// batches and split reductions on integer data (exact). The table is read through the C ABI,
// so a new variant is tested without touching this file. Also: the automatic choice reports the
// variant it ran, and a forced variant refuses what it does not implement, touching nothing.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemv_case.hpp"
#include "support/kernel_variants.hpp"
#include "support/test_profile.hpp"
#include "support/typed_tests.hpp"

namespace xgemv_test {
namespace {

// The edge set of one op, sized for the tile parameters of every variant (rows of 8 to 512
// elements, groups of 2 to 32 lanes of 16 bytes, 4 loads in flight).
std::vector<GemvCase> edge_cases(char op) {
  const int64_t split = by_profile<int64_t>(200000, 20000);
  const int64_t shapes[][2] = {{1, 1},     {2, 3},     {7, 0},     {13, 31},    {63, 65},
                               {127, 129}, {255, 257}, {511, 513}, {1025, 67},  {67, 1025},
                               {4099, 33}, {33, 4099}, {split, 5}, {5, split}};
  std::vector<GemvCase> cases;
  for (const auto &[m, n] : shapes) cases.push_back({.trans = op, .m = m, .n = n});
  // Increments, device scalars with beta = 0 (NaN-poisoned y), misaligned bases and odd lda.
  cases.push_back({.trans = op, .m = 1031, .n = 67, .incx = -3, .incy = 2});
  const std::vector<GemvCase> specials = special_cases(op);
  cases.insert(cases.end(), specials.begin(), specials.end());
  cases.push_back({.trans = op, .m = 129, .n = 65, .batched = true, .batch_count = 3,
                   .stride_padding = 5});
  // Reductions that leave 1 to 3 whole 16-byte steps after the unrolled ones, and then a masked
  // tail, with aligned columns (lda = m, a multiple of 8) for every group size of op T.
  for (const int64_t m : {1784, 3000}) cases.push_back({.trans = op, .m = m, .n = 67});
  // Split reductions and long ones, exact on integer data; the last with odd lda and x off its
  // alignment, so that x is shifted against most columns over many unrolled steps.
  for (const auto &[m, n] : {std::pair<int64_t, int64_t>{64, split}, {split, 64}, {4099, 2053}})
    cases.push_back({.trans = op, .m = m, .n = n, .integer_data = true});
  cases.push_back({.trans = op,
                   .m = 4099,
                   .n = 67,
                   .lda_padding = 1,
                   .x_misalignment = 1,
                   .integer_data = true});
  return cases;
}

XGEMV_TYPED_TEST_SUITE(KernelVariants, GpuHandlesTest);

TYPED_TEST(KernelVariants, EveryVariantOnTheEdgeCasesOfItsOps) {
  const std::vector<std::string> names = variant_names();
  ASSERT_GE(names.size(), 2u);
  // A variant may leave out an element type (the tensor-core one computes 16-bit and fp64 A
  // only), but every op of every type has variants.
  int variants_of_op[2] = {0, 0};
  for (const std::string &name : names) {
    SCOPED_TRACE("variant " + name);
    const ForcedVariant forced(this->gpu().xgemv(), name);
    ASSERT_EQ(forced.status(), XGEMV_STATUS_SUCCESS);
    for (const char op : {'N', 'T'}) {
      if (!implements_op<TypeParam>(this->gpu(), op, name)) continue;
      ++variants_of_op[op == 'T'];
      run_gemv_cases<TypeParam>(edge_cases(op), this->gpu(), "variant " + name + " op " + op);
    }
  }
  EXPECT_GT(variants_of_op[0], 0) << "no variant implements op N";
  EXPECT_GT(variants_of_op[1], 0) << "no variant implements op T";
}

TYPED_TEST(KernelVariants, AutomaticChoiceReportsTheVariantItRan) {
  GuardedDeviceBuffer<TypeParam> a(64 * 64), x(64), y(64);
  const ScalarOf<TypeParam> alpha = 1, beta = 0;
  const xgemv_handle h = this->gpu().xgemv();
  for (const char op : {'N', 'T'}) {
    ASSERT_EQ(xgemv::gemv(h, op, 64, 64, &alpha, a.data(), 64, x.data(), 1, &beta, y.data(), 1),
              XGEMV_STATUS_SUCCESS);
    const char *ran = xgemv_get_last_kernel_variant(h);
    ASSERT_NE(ran, nullptr);
    const std::vector<std::string> names = variant_names();
    EXPECT_NE(std::find(names.begin(), names.end(), ran), names.end()) << ran;
  }
  // A quick return launches nothing.
  ASSERT_EQ(xgemv::gemv(h, 'N', 0, 64, &alpha, a.data(), 1, x.data(), 1, &beta, y.data(), 1),
            XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(xgemv_get_last_kernel_variant(h), nullptr);
  check_cuda(cudaDeviceSynchronize(), "calls");
}

TYPED_TEST(KernelVariants, ForcedVariantRefusesWhatItDoesNotImplement) {
  const xgemv_handle h = this->gpu().xgemv();
  EXPECT_EQ(xgemv_set_kernel_variant(h, "no_such_variant"), XGEMV_STATUS_INVALID_VALUE);
  std::vector<TypeParam> poisoned(8, from_double<TypeParam>(7.0));
  GuardedDeviceBuffer<TypeParam> a(64), x(8), y(8);
  const ScalarOf<TypeParam> alpha = 1, beta = 0;
  for (const std::string &name : variant_names()) {
    const ForcedVariant forced(h, name);
    for (const char op : {'N', 'T'}) {
      y.upload(poisoned);  // the calls that ran wrote it
      const xgemv_status status =
          xgemv::gemv(h, op, 8, 8, &alpha, a.data(), 8, x.data(), 1, &beta, y.data(), 1);
      if (status != XGEMV_STATUS_NOT_SUPPORTED) continue;
      EXPECT_EQ(xgemv_get_last_kernel_variant(h), nullptr) << name << " op " << op;
      EXPECT_TRUE(bitwise_equal("y after a refused call", y.download(), poisoned))
          << name << " op " << op;
    }
  }
}

}  // namespace
}  // namespace xgemv_test
