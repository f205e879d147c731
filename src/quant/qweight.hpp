// A quantized weight as the core sees it (xgemv_quant.h): its info, checked once, the packed
// layout of its storage, and the GEMV problem of a call on it. Plain C++, no CUDA call, so that
// the CPU tests and the fuzzers check through the very code the library runs.
#pragma once

#include <xgemv/xgemv_quant.h>

#include <optional>

#include "problem.hpp"
#include "quant/code_traits.hpp"
#include "type_switches.hpp"

struct xgemv_qweight_st {
  xgemv_qweight_info info;
  xgemv_qweight_layout layout;
  void *storage;
};

namespace xgemv::quant {

// Inputs per k-block of the packed codes (64 for 4-bit codes, 32 for 8-bit ones); 0 for no
// format.
constexpr int64_t k_block_inputs(xgemv_qformat format) {
  return with_code_type(format, int64_t(0),
                        [](auto code) { return int64_t(CodeTraits<decltype(code)>::kBlockInputs); });
}
inline constexpr int64_t kTileOutputs = 16;
inline constexpr int64_t kTileBlockBytes = 512;  // one tile's k-block: 32 lanes x 16 bytes
inline constexpr size_t kStorageAlignment = 256;

// The checks of xgemv_qweight_get_layout, in the order its documentation gives, then the layout.
xgemv_status plan_layout(const xgemv_qweight_info &info, xgemv_qweight_layout &layout) noexcept;

// Inputs per scale group in the packed order: group_size (INT4), 128 (FP8_E4M3_BLOCK), or all
// of them, padding included (the per-output formats).
int64_t packed_group(const xgemv_qweight_info &info, const xgemv_qweight_layout &layout) noexcept;
// Packed input k is in scale group k >> group_shift: the groups' sizes are powers of two, and a
// single group (the per-output formats) has a shift past every input.
int group_shift(const xgemv_qweight_info &info, const xgemv_qweight_layout &layout) noexcept;

// Whether `type` is one x or y may have: the activation types, and fp32 for y.
constexpr bool is_activation_type(xgemv_datatype type) {
  return type == XGEMV_R_16F || type == XGEMV_R_16BF;
}
constexpr bool is_scale_type(xgemv_datatype type) {
  return type == XGEMV_R_16F || type == XGEMV_R_16BF || type == XGEMV_R_32F;
}
ElementType element_type(xgemv_datatype type) noexcept;
ElementType code_type(xgemv_qformat format) noexcept;

// The problem of Y := alpha W X + beta Y on `weight` (BLAS op T of the inputs x outputs matrix,
// m = inputs, n = outputs, ldx and ldy between the vectors), after the argument checks of
// xgemv_qgemv_nrhs (ldx 8, ldy 11, nrhs 12, y_type); the handle's checks come later, in run.
std::optional<GemvProblem> qgemv_problem(const xgemv_qweight_st &weight, const float *alpha,
                                         const void *x, int64_t ldx, const float *beta, void *y,
                                         int64_t ldy, xgemv_datatype y_type, int64_t nrhs,
                                         xgemv_status *status) noexcept;

}  // namespace xgemv::quant
