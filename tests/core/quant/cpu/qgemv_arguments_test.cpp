// The argument checks of xgemv_qgemv and xgemv_qgemv_nrhs that come before the handle's, with a
// NULL handle: the weight, then (nrhs) ldx, ldy, nrhs, then y_type, first failure wins, and valid
// arguments (quick returns included) reach the handle check. The weights are made on a storage
// address nothing holds and the data pointers are NULL or poisoned, so any read would crash.
#include <gtest/gtest.h>
#include <xgemv/xgemv_quant.h>

#include <cstdint>
#include <string>

#include "quant_formats.hpp"
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

constexpr int64_t kOutputs = 48, kInputs = 256;

// A case of the nrhs call on a kOutputs x kInputs weight (null_weight: the weight is NULL).
struct NrhsCase {
  const char *what;
  bool null_weight;
  int64_t ldx, ldy, nrhs;
  int y_type;  // within xgemv_datatype's range 0..15
  xgemv_status expected_with_null_handle;
};

// The activation type is XGEMV_R_16F; y may be fp16 or fp32.
constexpr NrhsCase kNrhsCases[] = {
    {"NULL weight before everything", true, 0, 0, -1, 1, XGEMV_STATUS_NULL_POINTER},
    {"NULL weight, valid arguments", true, kInputs, kOutputs, 1, XGEMV_R_16F,
     XGEMV_STATUS_NULL_POINTER},
    {"ldx = inputs - 1", false, kInputs - 1, kOutputs, 1, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDX},
    {"ldx = 0", false, 0, kOutputs, 1, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDX},
    {"ldx < 0", false, -1, kOutputs, 1, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDX},
    {"ldy = outputs - 1", false, kInputs, kOutputs - 1, 1, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDY},
    {"ldy = INT64_MIN", false, kInputs, INT64_MIN, 1, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDY},
    {"nrhs < 0", false, kInputs, kOutputs, -1, XGEMV_R_16F, XGEMV_STATUS_INVALID_NRHS},
    {"nrhs = INT64_MIN", false, kInputs, kOutputs, INT64_MIN, XGEMV_R_32F,
     XGEMV_STATUS_INVALID_NRHS},
    {"y bf16 for fp16 activations", false, kInputs, kOutputs, 1, XGEMV_R_16BF,
     XGEMV_STATUS_INVALID_QFORMAT},
    {"y_type 1", false, kInputs, kOutputs, 1, 1, XGEMV_STATUS_INVALID_QFORMAT},
    {"y_type 15", false, kInputs, kOutputs, 1, 15, XGEMV_STATUS_INVALID_QFORMAT},
    // First failure wins.
    {"ldx before ldy", false, 0, 0, -1, 1, XGEMV_STATUS_INVALID_LDX},
    {"ldy before nrhs", false, kInputs, 0, -1, 1, XGEMV_STATUS_INVALID_LDY},
    {"nrhs before y_type", false, kInputs, kOutputs, -1, 1, XGEMV_STATUS_INVALID_NRHS},
    // Checks come before the quick return of nrhs = 0.
    {"nrhs = 0 does not hide ldx", false, 1, kOutputs, 0, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDX},
    {"nrhs = 0 does not hide ldy", false, kInputs, 1, 0, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDY},
    {"nrhs = 0 does not hide y_type", false, kInputs, kOutputs, 0, XGEMV_R_16BF,
     XGEMV_STATUS_INVALID_QFORMAT},
    // Valid arguments reach the handle check.
    {"valid, y of the activation type", false, kInputs, kOutputs, 1, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_HANDLE},
    {"valid, fp32 y", false, kInputs, kOutputs, 3, XGEMV_R_32F, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, padded leading dimensions", false, kInputs + 7, kOutputs + 1, 17, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_HANDLE},
    {"valid, nrhs beyond int32", false, kInputs, kOutputs, int64_t{1} << 40, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_HANDLE},
    {"quick return nrhs = 0", false, kInputs, kOutputs, 0, XGEMV_R_32F,
     XGEMV_STATUS_INVALID_HANDLE},
};

// Whether a status names an argument position, and which.
int expected_argument(xgemv_status status) {
  switch (status) {
    case XGEMV_STATUS_INVALID_LDX: return 8;
    case XGEMV_STATUS_INVALID_LDY: return 11;
    case XGEMV_STATUS_INVALID_NRHS: return 12;
    default: return 0;
  }
}

// Every format: the checks do not depend on it.
class QgemvArguments : public ::testing::TestWithParam<FormatOptions> {
 protected:
  xgemv_qweight_info info(xgemv_datatype activation) const {
    return make_info(GetParam(), activation, XGEMV_R_16F, kOutputs, kInputs);
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

TEST_P(QgemvArguments, SingleVectorNullHandleReportsTheFirstBadArgument) {
  for (const xgemv_datatype activation : kActivationTypes) {
    const OwnedQweight weight(info(activation), unread_storage());
    ASSERT_EQ(weight.status(), XGEMV_STATUS_SUCCESS);
    const xgemv_datatype other_16bit = activation == XGEMV_R_16F ? XGEMV_R_16BF : XGEMV_R_16F;
    const struct {
      const char *what;
      xgemv_qweight weight;
      int y_type;
      xgemv_status expected;
    } cases[] = {
        {"NULL weight before y_type", nullptr, 1, XGEMV_STATUS_NULL_POINTER},
        {"NULL weight, valid y_type", nullptr, activation, XGEMV_STATUS_NULL_POINTER},
        {"y of the other 16-bit type", weight.get(), other_16bit, XGEMV_STATUS_INVALID_QFORMAT},
        {"y_type 1", weight.get(), 1, XGEMV_STATUS_INVALID_QFORMAT},
        {"valid, y of the activation type", weight.get(), activation, XGEMV_STATUS_INVALID_HANDLE},
        {"valid, fp32 y", weight.get(), XGEMV_R_32F, XGEMV_STATUS_INVALID_HANDLE},
    };
    for (const auto &c : cases)
      for (const Operands &p : {kNullOperands, kPoisonedOperands}) {
        SCOPED_TRACE(std::string(datatype_name(activation)) + " activations, " + c.what +
                     (p.x ? ", poisoned pointers" : ", NULL pointers"));
        EXPECT_EQ(xgemv_qgemv(nullptr, p.alpha, c.weight, p.x, p.beta, p.y,
                              static_cast<xgemv_datatype>(c.y_type)),
                  c.expected);
      }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, QgemvArguments, ::testing::ValuesIn(kEveryFormat),
                         [](const auto &param) { return test_name(param.param); });

}  // namespace
}  // namespace xgemv_test::quant
