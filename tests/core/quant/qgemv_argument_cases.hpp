// Invalid (and barely valid) arguments of xgemv_qgemv and xgemv_qgemv_nrhs (and _bias) with the
// status they must return when the handle is NULL. The order is the contract: the weight, then (nrhs) ldx,
// ldy, nrhs, then y_type, all before the handle; the handle before the quick return (nrhs = 0).
#pragma once

#include <cstdint>
#include <vector>

#include <xgemv/xgemv_quant.h>

namespace xgemv_test::quant {

inline constexpr int64_t kArgumentCaseOutputs = 48, kArgumentCaseInputs = 256;

// A case of the nrhs call on a kArgumentCaseOutputs x kArgumentCaseInputs weight (null_weight: the
// weight is NULL).
struct NrhsCase {
  const char *what;
  bool null_weight;
  int64_t ldx, ldy, nrhs;
  int y_type;  // within xgemv_datatype's range 0..15
  xgemv_status expected_with_null_handle;
};

// The activation type is XGEMV_R_16F; y may be fp16 or fp32.
inline constexpr NrhsCase kNrhsCases[] = {
    {"NULL weight before everything", true, 0, 0, -1, XGEMV_R_64F, XGEMV_STATUS_NULL_POINTER},
    {"NULL weight, valid arguments", true, kArgumentCaseInputs, kArgumentCaseOutputs, 1,
     XGEMV_R_16F, XGEMV_STATUS_NULL_POINTER},
    {"ldx = inputs - 1", false, kArgumentCaseInputs - 1, kArgumentCaseOutputs, 1, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_LDX},
    {"ldx = 0", false, 0, kArgumentCaseOutputs, 1, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDX},
    {"ldx < 0", false, -1, kArgumentCaseOutputs, 1, XGEMV_R_16F, XGEMV_STATUS_INVALID_LDX},
    {"ldy = outputs - 1", false, kArgumentCaseInputs, kArgumentCaseOutputs - 1, 1, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_LDY},
    {"ldy = INT64_MIN", false, kArgumentCaseInputs, INT64_MIN, 1, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_LDY},
    {"nrhs < 0", false, kArgumentCaseInputs, kArgumentCaseOutputs, -1, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_NRHS},
    {"nrhs = INT64_MIN", false, kArgumentCaseInputs, kArgumentCaseOutputs, INT64_MIN, XGEMV_R_32F,
     XGEMV_STATUS_INVALID_NRHS},
    {"y bf16 for fp16 activations", false, kArgumentCaseInputs, kArgumentCaseOutputs, 1,
     XGEMV_R_16BF, XGEMV_STATUS_INVALID_QFORMAT},
    {"y fp64", false, kArgumentCaseInputs, kArgumentCaseOutputs, 1, XGEMV_R_64F,
     XGEMV_STATUS_INVALID_QFORMAT},
    {"y_type 15", false, kArgumentCaseInputs, kArgumentCaseOutputs, 1, 15,
     XGEMV_STATUS_INVALID_QFORMAT},
    // First failure wins.
    {"ldx before ldy", false, 0, 0, -1, XGEMV_R_64F, XGEMV_STATUS_INVALID_LDX},
    {"ldy before nrhs", false, kArgumentCaseInputs, 0, -1, XGEMV_R_64F, XGEMV_STATUS_INVALID_LDY},
    {"nrhs before y_type", false, kArgumentCaseInputs, kArgumentCaseOutputs, -1, XGEMV_R_64F,
     XGEMV_STATUS_INVALID_NRHS},
    // Checks come before the quick return of nrhs = 0.
    {"nrhs = 0 does not hide ldx", false, 1, kArgumentCaseOutputs, 0, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_LDX},
    {"nrhs = 0 does not hide ldy", false, kArgumentCaseInputs, 1, 0, XGEMV_R_16F,
     XGEMV_STATUS_INVALID_LDY},
    {"nrhs = 0 does not hide y_type", false, kArgumentCaseInputs, kArgumentCaseOutputs, 0,
     XGEMV_R_16BF, XGEMV_STATUS_INVALID_QFORMAT},
    // Valid arguments reach the handle check.
    {"valid, y of the activation type", false, kArgumentCaseInputs, kArgumentCaseOutputs, 1,
     XGEMV_R_16F, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, fp32 y", false, kArgumentCaseInputs, kArgumentCaseOutputs, 3, XGEMV_R_32F,
     XGEMV_STATUS_INVALID_HANDLE},
    {"valid, padded leading dimensions", false, kArgumentCaseInputs + 7, kArgumentCaseOutputs + 1,
     17, XGEMV_R_16F, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, nrhs beyond int32", false, kArgumentCaseInputs, kArgumentCaseOutputs, int64_t{1} << 40,
     XGEMV_R_16F, XGEMV_STATUS_INVALID_HANDLE},
    {"quick return nrhs = 0", false, kArgumentCaseInputs, kArgumentCaseOutputs, 0, XGEMV_R_32F,
     XGEMV_STATUS_INVALID_HANDLE},
};

// The argument position a status names (xgemv_status_argument).
inline int expected_argument(xgemv_status status) {
  switch (status) {
    case XGEMV_STATUS_INVALID_LDX: return 8;
    case XGEMV_STATUS_INVALID_LDY: return 11;
    case XGEMV_STATUS_INVALID_NRHS: return 12;
    default: return 0;
  }
}

// The single-vector call on a weight of `activation` type (null_weight: the weight is NULL).
struct SingleVectorCase {
  const char *what;
  bool null_weight;
  int y_type;
  xgemv_status expected_with_null_handle;
};

inline std::vector<SingleVectorCase> single_vector_cases(xgemv_datatype activation) {
  const xgemv_datatype other_16bit = activation == XGEMV_R_16F ? XGEMV_R_16BF : XGEMV_R_16F;
  return {
      {"NULL weight before y_type", true, XGEMV_R_64F, XGEMV_STATUS_NULL_POINTER},
      {"NULL weight, valid y_type", true, activation, XGEMV_STATUS_NULL_POINTER},
      {"y of the other 16-bit type", false, other_16bit, XGEMV_STATUS_INVALID_QFORMAT},
      {"y fp64", false, XGEMV_R_64F, XGEMV_STATUS_INVALID_QFORMAT},
      {"valid, y of the activation type", false, activation, XGEMV_STATUS_INVALID_HANDLE},
      {"valid, fp32 y", false, XGEMV_R_32F, XGEMV_STATUS_INVALID_HANDLE},
  };
}

// Whether a case reports a bad argument (as opposed to reaching the handle check).
template <class Case>
bool is_argument_error(const Case &c) {
  return c.expected_with_null_handle != XGEMV_STATUS_INVALID_HANDLE;
}

}  // namespace xgemv_test::quant
