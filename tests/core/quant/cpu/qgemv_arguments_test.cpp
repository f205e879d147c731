// The argument checks of xgemv_qgemv, xgemv_qgemv_nrhs and xgemv_qgemv_bias that come before the
// handle's, with a NULL handle: the weight, then (nrhs, bias) ldx, ldy, nrhs, then y_type, first
// failure wins, and valid arguments (quick returns included) reach the handle check. The weights are made on a storage
// address nothing holds and the data pointers are NULL or poisoned, so any read would crash.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <xgemv/xgemv_quant.h>

#include "qgemv_argument_cases.hpp"
#include "support/quant_formats.hpp"
#include "support/quant_reference.hpp"

namespace xgemv_test::quant {
namespace {

// An odd address in the never-mapped first page: dereferencing it faults.
template <class P>
P *poisoned() {
  return reinterpret_cast<P *>(uintptr_t{1});
}

void *unread_storage() { return reinterpret_cast<void *>(uintptr_t{1} << 20); }

struct Operands {
  const float *alpha, *beta;
  const void *x;
  void *y;
};
constexpr Operands kNullOperands{nullptr, nullptr, nullptr, nullptr};
const Operands kPoisonedOperands{poisoned<const float>(), poisoned<const float>(),
                                 poisoned<const void>(), poisoned<void>()};

// Every format: the checks do not depend on it.
class QgemvArguments : public ::testing::TestWithParam<FormatOptions> {
 protected:
  xgemv_qweight_info info(xgemv_datatype activation) const {
    return make_info(GetParam(), activation, XGEMV_R_16F, kArgumentCaseOutputs,
                     kArgumentCaseInputs);
  }
};

TEST_P(QgemvArguments, NrhsNullHandleReportsTheFirstBadArgumentAndTouchesNothing) {
  const OwnedQweight weight(info(XGEMV_R_16F), unread_storage());
  ASSERT_EQ(weight.status(), XGEMV_STATUS_SUCCESS);
  for (const NrhsCase &c : kNrhsCases)
    for (const Operands &p : {kNullOperands, kPoisonedOperands}) {
      SCOPED_TRACE(std::string(c.what) + (p.x ? ", poisoned pointers" : ", NULL pointers"));
      const xgemv_status status =
          xgemv_qgemv_nrhs(nullptr, p.alpha, c.null_weight ? nullptr : weight.get(), p.x, c.ldx,
                           p.beta, p.y, c.ldy, static_cast<xgemv_datatype>(c.y_type), c.nrhs);
      EXPECT_EQ(status, c.expected_with_null_handle);
      EXPECT_EQ(xgemv_status_argument(status), expected_argument(c.expected_with_null_handle));
    }
}

// xgemv_qgemv_bias: the nrhs call's checks in its order, with the bias poisoned or NULL (NULL is
// no bias, never an error).
TEST_P(QgemvArguments, BiasNullHandleReportsTheFirstBadArgumentAndTouchesNothing) {
  const OwnedQweight weight(info(XGEMV_R_16F), unread_storage());
  ASSERT_EQ(weight.status(), XGEMV_STATUS_SUCCESS);
  for (const NrhsCase &c : kNrhsCases)
    for (const Operands &p : {kNullOperands, kPoisonedOperands})
      for (const void *bias : {poisoned<const void>(), static_cast<const void *>(nullptr)}) {
        SCOPED_TRACE(std::string(c.what) + (p.x ? ", poisoned pointers" : ", NULL pointers") +
                     (bias ? ", poisoned bias" : ", NULL bias"));
        const xgemv_status status = xgemv_qgemv_bias(
            nullptr, p.alpha, c.null_weight ? nullptr : weight.get(), p.x, c.ldx, p.beta, p.y,
            c.ldy, static_cast<xgemv_datatype>(c.y_type), c.nrhs, bias);
        EXPECT_EQ(status, c.expected_with_null_handle);
        EXPECT_EQ(xgemv_status_argument(status), expected_argument(c.expected_with_null_handle));
      }
}

TEST_P(QgemvArguments, SingleVectorNullHandleReportsTheFirstBadArgument) {
  for (const xgemv_datatype activation : kActivationTypes) {
    const OwnedQweight weight(info(activation), unread_storage());
    ASSERT_EQ(weight.status(), XGEMV_STATUS_SUCCESS);
    for (const SingleVectorCase &c : single_vector_cases(activation))
      for (const Operands &p : {kNullOperands, kPoisonedOperands}) {
        SCOPED_TRACE(std::string(datatype_name(activation)) + " activations, " + c.what +
                     (p.x ? ", poisoned pointers" : ", NULL pointers"));
        EXPECT_EQ(xgemv_qgemv(nullptr, p.alpha, c.null_weight ? nullptr : weight.get(), p.x, p.beta,
                              p.y, static_cast<xgemv_datatype>(c.y_type)),
                  c.expected_with_null_handle);
      }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, QgemvArguments, ::testing::ValuesIn(kEveryFormat),
                         [](const auto &param) { return test_name(param.param); });

}  // namespace
}  // namespace xgemv_test::quant
