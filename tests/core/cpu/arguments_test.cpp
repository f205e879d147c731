// Every invalid argument of every entry point, for every element type, through the single, the
// strided-batched, the few-right-hand-side and the bias calls: the right status in the right
// order, and nothing touched. The handle is NULL and the data pointers are NULL or poisoned, so any
// dereference would crash the test.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "argument_cases.hpp"
#include "support/typed_tests.hpp"
#include "support/xgemv_calls.hpp"

namespace xgemv_test {
namespace {

XGEMV_TYPED_TEST_SUITE(ArgumentChecks, ::testing::Test);

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

// Every few-right-hand-side case through call(shape, rhs, operands), with poisoned and with NULL
// operands: the case's status, the argument position that status names (12 for nrhs), and
// nothing dereferenced, quick returns (nrhs, m or n = 0) included.
template <class T, class Call>
void expect_nrhs_case_statuses(const std::string &call_name, Call &&call) {
  for (const NrhsArgumentCase &c : kNrhsArgumentCases)
    for (const GemvOperands<T> &operands : {poisoned_operands<T>(), GemvOperands<T>{}}) {
      SCOPED_TRACE(std::string(c.what) + (operands.a ? ", poisoned pointers" : ", NULL pointers") +
                   call_name);
      const xgemv_status status = call(GemvShape{c.trans, c.m, c.n, c.lda, 1, 1},
                                       RhsLayout{c.nrhs, c.ldx, c.ldy}, operands);
      EXPECT_EQ(status, c.expected_with_null_handle);
      EXPECT_EQ(xgemv_status_argument(status),
                is_argument_error(c) ? static_cast<int>(c.expected_with_null_handle) : 0);
    }
}

TYPED_TEST(ArgumentChecks, NrhsNullHandleReportsTheFirstBadArgumentAndTouchesNothing) {
  using T = TypeParam;
  expect_nrhs_case_statuses<T>(
      "", [](const GemvShape &shape, const RhsLayout &rhs, const GemvOperands<T> &operands) {
        return xgemv_gemv_nrhs<T>(nullptr, shape, rhs, operands);
      });
}

// The bias call (xgemv_gemv_bias) takes the few-right-hand-side calls' checks in their order,
// with the bias poisoned or NULL (NULL is no bias, never an error).
TYPED_TEST(ArgumentChecks, BiasNullHandleReportsTheFirstBadArgumentAndTouchesNothing) {
  using T = TypeParam;
  for (const T *bias : {poisoned<const T>(), static_cast<const T *>(nullptr)})
    expect_nrhs_case_statuses<T>(
        bias ? ", poisoned bias" : ", NULL bias",
        [bias](const GemvShape &shape, const RhsLayout &rhs, const GemvOperands<T> &operands) {
          return call_gemv_bias<T>(nullptr, shape, rhs, operands, bias);
        });
}

// An element type xgemv_gemv_bias does not take is reported first, before any other argument
// and the handle, as INVALID_VALUE (no argument position).
TYPED_TEST(ArgumentChecks, BiasUnknownElementTypeComesFirst) {
  using T = TypeParam;
  // Values within xgemv_datatype's range 0..15 that name no type it takes.
  constexpr int kUnknownTypes[] = {3, 4, 13, 15};
  for (const int type : kUnknownTypes)
    for (const NrhsArgumentCase &c : kNrhsArgumentCases) {
      SCOPED_TRACE(std::string(c.what) + ", type " + std::to_string(type));
      const xgemv_status status = call_gemv_bias<T>(
          nullptr, GemvShape{c.trans, c.m, c.n, c.lda, 1, 1}, RhsLayout{c.nrhs, c.ldx, c.ldy},
          poisoned_operands<T>(), poisoned<const T>(), static_cast<xgemv_datatype>(type));
      EXPECT_EQ(status, XGEMV_STATUS_INVALID_VALUE);
      EXPECT_EQ(xgemv_status_argument(status), 0);
    }
}

}  // namespace
}  // namespace xgemv_test
