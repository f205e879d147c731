// The host reference of quantized weights (xgemv_quant.h), written from the header's definitions
// alone: the value of every code (e4m3 included), the packed layout of a weight's storage (a
// writer and an independent reader), GPTQ and AWQ checkpoint tensors, the quantizer's rules in
// fp32 arithmetic, and the fp64 GEMV with its error bound. Host code only (the CUDA 16-bit types
// for their host conversions), shared by the tests and the benchmark.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <xgemv/xgemv_quant.h>

#include "random_data.hpp"
#include "reference_gemv.hpp"

namespace xgemv_test::quant {

// --- element types ---------------------------------------------------------------------------

// Bytes of one element of `type` (fp16, bf16, fp32 or fp64).
size_t datatype_bytes(xgemv_datatype type);
const char *datatype_name(xgemv_datatype type);
// `value` rounded to nearest even in `type` (fp32, fp64: unchanged).
float round_to(xgemv_datatype type, float value);
// Writes `value` rounded to `type` as its little-endian bytes; reads it back.
void store(xgemv_datatype type, float value, uint8_t *bytes);
float load(xgemv_datatype type, const uint8_t *bytes);
// `values` rounded to `type`, as the bytes of a contiguous array of that type.
std::vector<uint8_t> to_bytes(xgemv_datatype type, const std::vector<float> &values);

// --- fp8 e4m3 ("fn": no infinity, NaN for S.1111.111, max 448) -------------------------------

inline bool is_e4m3_nan(uint8_t code) { return (code & 0x7F) == 0x7F; }
// The number a code encodes: (-1)^S 2^(E-7) 1.MMM (E > 0), (-1)^S 2^-6 0.MMM (E = 0), or NaN.
double e4m3_value(uint8_t code);
// The e4m3 code of `value` rounded to nearest even, saturated to +-448 (infinities included);
// the sign of zero is kept; NaN gives 0x7F.
uint8_t e4m3_code(float value);

// --- formats and the layout's formulas -------------------------------------------------------

const char *format_name(xgemv_qformat format);
std::string describe(const xgemv_qweight_info &info);

// Inputs per k-block of the packed codes: 64 for 4-bit codes, 32 for 8-bit ones.
int64_t k_block_inputs(xgemv_qformat format);
// Inputs per scale group of the original matrix: group_size (INT4), 128 (FP8_E4M3_BLOCK), all
// of them (the per-output formats).
int64_t inputs_per_scale(const xgemv_qweight_info &info);
// Outputs per scale row: 128 for FP8_E4M3_BLOCK, 1 otherwise.
int64_t outputs_per_scale(const xgemv_qweight_info &info);
// The plain scale matrix (xgemv_qweight_pack's `scales`): rows x columns.
int64_t scale_rows(const xgemv_qweight_info &info);
int64_t scale_columns(const xgemv_qweight_info &info);
// Groups of a 4-bit weight along its inputs (inputs / group_size); 0 for the other formats.
int64_t zero_point_columns(const xgemv_qweight_info &info);

// What the header's formulas give for a valid info.
struct LayoutSizes {
  int64_t row_tiles = 0, k_blocks = 0, scale_groups = 0;
  size_t codes_bytes = 0, scales_bytes = 0, zeros_bytes = 0, permutation_bytes = 0;
};
LayoutSizes expected_layout_sizes(const xgemv_qweight_info &info);

// --- a weight in plain form ------------------------------------------------------------------

// The arguments of xgemv_qweight_pack with the smallest leading dimensions: codes[o][k] (k in the
// packed input order, one byte per weight), scales[row][column] (values of info.scale_type),
// zeros[o][group] (INT4 with zero points), permutation[k] (permuted weights: packed input k is
// input permutation[k] of x).
struct PlainWeight {
  xgemv_qweight_info info{};
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  std::vector<uint8_t> zeros;
  std::vector<int32_t> permutation;

  // The scale and (INT4 with zero points) zero point of weight (o, k), k packed, and where they
  // lie in `scales` and `zeros`.
  float scale(int64_t o, int64_t k) const;
  int zero_point(int64_t o, int64_t k) const;
  size_t scale_index(int64_t o, int64_t k) const;
  size_t zero_point_index(int64_t o, int64_t k) const;
  // v of weight (o, k): q - 8, q - z, the int8 q, or the e4m3 value of q.
  double code_value(int64_t o, int64_t k) const;
};

// A weight of `info` whose codes all encode v = 0 (4-bit q = 8, 8-bit 0), with scales 0, zero
// points 8 and the identity permutation: the start of weights built element by element.
PlainWeight make_plain_weight(const xgemv_qweight_info &info);

// Codes of every value (e4m3: every code but the NaNs), scales of either sign with magnitudes
// about 1 / max|v| (0.25 to 2 times it), rounded to the scale type, zero points 0..15, and for a
// permuted weight a uniformly random permutation.
PlainWeight random_plain_weight(const xgemv_qweight_info &info, RandomSource &random);

// A uniformly random permutation of 0..count-1.
std::vector<int32_t> random_permutation(int64_t count, RandomSource &random);
// GPTQ's act-order: every input gets a group (exactly group_size inputs each, at random), and the
// permutation sorts the inputs by group, stably (what xgemv_qweight_pack_gptq makes of g_idx).
std::vector<int32_t> act_order_permutation(int64_t inputs, int64_t group_size,
                                           RandomSource &random);

// The weights' values w = v * s, exact in double, as a dense row-major [outputs][inputs] matrix
// in the original input order (w[o][permutation[k]] for packed input k). IEEE arithmetic: NaN
// and infinite scales and NaN codes give what v * s gives.
std::vector<double> weight_values(const PlainWeight &weight);

// --- the packed layout -----------------------------------------------------------------------

// The storage of `weight` (layout.bytes bytes) as the header lays it out: codes in tiles of 16
// outputs and k-blocks, scales, zero points and permutation at the layout's offsets, padding
// codes of v = 0, padding scales 0, padding zero points 8; bytes between the parts are 0. Throws
// std::invalid_argument when the layout's sizes are not the header's.
std::vector<uint8_t> pack_storage(const PlainWeight &weight, const xgemv_qweight_layout &layout);

// The plain weight a storage holds, read with the header's layout (an independent reader of
// what pack_storage writes).
PlainWeight unpack_storage(const std::vector<uint8_t> &storage, const xgemv_qweight_info &info,
                           const xgemv_qweight_layout &layout);

// The host dequantizer: the values of the weight a storage holds, original input order.
std::vector<double> dequantize_storage(const std::vector<uint8_t> &storage,
                                       const xgemv_qweight_info &info,
                                       const xgemv_qweight_layout &layout);

// xgemv_qweight_dequantize's output for values w: [outputs][ldw] of out_type, w rounded to fp32
// and, for the 16-bit types, that value rounded to nearest even; `fill` bytes past inputs.
std::vector<uint8_t> dequantized_bytes(const std::vector<double> &values, int64_t outputs,
                                       int64_t inputs, int64_t ldw, xgemv_datatype out_type,
                                       uint8_t fill);

// Where the padding of a storage differs from the header's (padding codes of v = 0, padding
// scales 0, padding zero points 8): a description of the first few places, empty when none.
std::string padding_errors(const std::vector<uint8_t> &storage, const xgemv_qweight_info &info,
                           const xgemv_qweight_layout &layout);

// --- checkpoints -----------------------------------------------------------------------------

// GPTQ tensors: qweight [inputs / 8][outputs], qzeros [groups][outputs / 8] (empty for a
// symmetric weight), scales [groups][outputs] (values of the scale type), g_idx [inputs] (empty
// without act-order).
struct GptqCheckpoint {
  std::vector<int32_t> qweight, qzeros, g_idx;
  std::vector<float> scales;
};
// The checkpoint of a 4-bit weight (outputs and inputs multiples of 8): with act-order (g_idx)
// when the weight is permuted, whose permutation must then be the stable sort of its groups (see
// act_order_permutation); zero points stored minus one (modulo 16) with zeros_minus_one.
GptqCheckpoint to_gptq(const PlainWeight &weight, bool zeros_minus_one);
PlainWeight from_gptq(const GptqCheckpoint &checkpoint, const xgemv_qweight_info &info,
                      bool zeros_minus_one);

// AWQ tensors (GEMM packing): qweight [inputs][outputs / 8] and qzeros [groups][outputs / 8],
// nibble i holding output 8 m + {0, 2, 4, 6, 1, 3, 5, 7}[i]; scales [groups][outputs].
struct AwqCheckpoint {
  std::vector<int32_t> qweight, qzeros;
  std::vector<float> scales;
};
AwqCheckpoint to_awq(const PlainWeight &weight);
PlainWeight from_awq(const AwqCheckpoint &checkpoint, const xgemv_qweight_info &info);

// --- the quantizer ---------------------------------------------------------------------------

// xgemv_qweight_quantize's rules in fp32 arithmetic on dense row-major [outputs][inputs] weights
// (values of info.activation_type): the scale of each group from its weights, rounded to the
// scale type, then the codes from that rounded scale with rint (ties to even) or the e4m3
// rounding. A group whose scale is 0 gets codes of v = 0 (with zero points: q = z = 8; the header
// leaves that z open, see zero_scale_groups). Not for permuted weights.
PlainWeight quantize(const std::vector<float> &weights, const xgemv_qweight_info &info);

// Equality of two plain weights as the quantizer's contract defines it: scales bit for bit; codes
// and zero points bit for bit, except in groups whose scale is 0, where every code only has to
// encode v = 0, and for the two e4m3 zeros (+0 and -0, both v = 0). A description of the first
// differences, empty when none.
std::string quantized_differences(const PlainWeight &got, const PlainWeight &want);

// --- the GEMV --------------------------------------------------------------------------------

// Y := alpha * f(W) f(X) + beta * f(Y) in double for nrhs columns: W dense row-major
// [outputs][inputs], X [inputs] x nrhs with leading dimension ldx, Y [outputs] x nrhs with ldy;
// returns dense [outputs] x nrhs (leading dimension outputs). f: Identity, or Magnitude for the
// error bound's terms (reference_gemv.hpp). The BLAS rules: beta == 0 reads no
// Y, alpha == 0 reads neither W nor X, alpha == 0 with beta == 1 returns Y as it is.
template <class ElementMap = Identity>
std::vector<double> reference_qgemv(const std::vector<double> &w, int64_t outputs, int64_t inputs,
                                    double alpha, const std::vector<double> &x, int64_t ldx,
                                    double beta, const std::vector<double> &y, int64_t ldy,
                                    int64_t nrhs, ElementMap f = {}) {
  std::vector<double> out(outputs * nrhs, 0.0);
  for (int64_t c = 0; c < nrhs; ++c)
    for (int64_t o = 0; o < outputs; ++o) {
      const double y_in = beta == 0 ? 0.0 : f(y[c * ldy + o]);
      if (alpha == 0) {
        out[c * outputs + o] = beta == 1 ? y_in : beta * y_in;
        continue;
      }
      double dot = 0;
      for (int64_t k = 0; k < inputs; ++k) dot += f(w[o * inputs + k]) * f(x[c * ldx + k]);
      out[c * outputs + o] = alpha * dot + (beta == 0 ? 0.0 : beta * y_in);
    }
  return out;
}

// The bound of a quantized GEMV's rounding error in units of its magnitude (|alpha| |W| |X| +
// |beta| |Y|): a sum of `inputs` exact products in fp32 cut into runs, each run scaled once and
// the runs added (at most inputs + 1 roundings on any path), then alpha, beta and their sum
// (3 more), doubled for the tensor cores' truncation; plus the rounding to y's type.
double qgemv_error_factor(int64_t inputs, xgemv_datatype y_type);

}  // namespace xgemv_test::quant
