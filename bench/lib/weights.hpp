// Quantized weight formats the bench runs (--weights): their names, and the xgemv_quant.h weight
// of a bench matrix in each. Needs no GPU.
#pragma once

#include <xgemv/xgemv_quant.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "case.hpp"

namespace xgemv::bench {

// The row of xgemv_qgemv_nrhs on a quantized copy of a case's A (the record's format names it).
inline constexpr const char* kXgemvQuantized = "xgemv-q";
inline constexpr const char* kXgemvQuantizedEarlyStart = "xgemv-q-early-start";

struct WeightFormat {
  std::string name;  // int4-g128, int4-g128-zp, int4-g32-zp, int8, fp8, fp8-block
  xgemv_qformat format = XGEMV_QFORMAT_INT4;
  int64_t group = 0;  // INT4: inputs per scale
  bool zero_points = false;
};

// "int4-g<32|64|128>[-zp]", "int8", "fp8", "fp8-block"; nullopt for anything else.
std::optional<WeightFormat> parse_weight_format(std::string_view name);
// The names --weights accepts, for its help.
std::vector<std::string> weight_format_examples();

// A BLAS op T matrix of the bench (m = inputs, n = outputs, lda = m: PyTorch's row-major
// outputs x inputs weight) in `format`, scales kept in the activation type.
xgemv_qweight_info weight_info(const WeightFormat& format, Dtype activations, int64_t outputs,
                               int64_t inputs);

// Bytes one call reads: the weight's storage parts (codes, scales, zero points, permutation)
// and X, Y of nrhs vectors.
int64_t quantized_call_bytes(const xgemv_qweight_layout& layout, Dtype activations,
                             int64_t outputs, int64_t inputs, int64_t nrhs);

}  // namespace xgemv::bench
