// Every invalid argument of every entry point, for every element type, through the single, the
// strided-batched and the few-right-hand-side calls: the right status in the right order, and
// nothing touched. The handle is NULL and the data pointers are NULL or poisoned, so any
// dereference would crash the test.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "argument_cases.hpp"
#include "support/typed_tests.hpp"
#include "support/xgemv_calls.hpp"

namespace xgemv_test {
namespace {

template <class T>
class ArgumentChecks : public ::testing::Test {};
TYPED_TEST_SUITE(ArgumentChecks, ElementTypes);

// An odd address in the never-mapped first page: dereferencing it faults.
template <class P>
P *poisoned() {
  return reinterpret_cast<P *>(uintptr_t{1});
}

template <class T>
GemvOperands<T> poisoned_operands() {
  using S = ScalarOf<T>;
  return {poisoned<const S>(), poisoned<const T>(), poisoned<const T>(), poisoned<const S>(),
          poisoned<T>()};
}

TYPED_TEST(ArgumentChecks, NullHandleReportsTheFirstBadArgumentAndTouchesNothing) {
  using T = TypeParam;
  const GemvOperands<T> operand_sets[] = {poisoned_operands<T>(), GemvOperands<T>{}};
  for (const bool batched : {false, true}) {
    for (const ArgumentCase &c : kArgumentCases) {
      if (!batched && c.batch_count != 1) continue;
      const GemvShape shape{c.trans, c.m, c.n, c.lda, c.incx, c.incy};
      // Strides that would overlap problems: must not matter before any check passes.
      const BatchLayout batch{c.batch_count, 1, 1, 1};
      for (const GemvOperands<T> &operands : operand_sets) {
        SCOPED_TRACE(std::string(c.what) + (batched ? ", strided batched" : ", single") +
                     (operands.a ? ", poisoned pointers" : ", NULL pointers"));
        EXPECT_EQ(xgemv_gemv<T>(nullptr, shape, batched ? &batch : nullptr, operands),
                  c.expected_with_null_handle);
      }
    }
  }
}

// The few-right-hand-side calls: each case's status, the argument position that status names
// (12 for nrhs), and nothing dereferenced, quick returns (nrhs, m or n = 0) included.
TYPED_TEST(ArgumentChecks, NrhsNullHandleReportsTheFirstBadArgumentAndTouchesNothing) {
  using T = TypeParam;
  const GemvOperands<T> operand_sets[] = {poisoned_operands<T>(), GemvOperands<T>{}};
  for (const NrhsArgumentCase &c : kNrhsArgumentCases) {
    const GemvShape shape{c.trans, c.m, c.n, c.lda, 1, 1};
    const RhsLayout rhs{c.nrhs, c.ldx, c.ldy};
    for (const GemvOperands<T> &operands : operand_sets) {
      SCOPED_TRACE(std::string(c.what) +
                   (operands.a ? ", poisoned pointers" : ", NULL pointers"));
      const xgemv_status status = xgemv_gemv_nrhs<T>(nullptr, shape, rhs, operands);
      EXPECT_EQ(status, c.expected_with_null_handle);
      EXPECT_EQ(xgemv_status_argument(status),
                is_argument_error(c) ? static_cast<int>(c.expected_with_null_handle) : 0);
    }
  }
}

}  // namespace
}  // namespace xgemv_test
