#include "quant/qweight.hpp"

#include <cstdint>

#include "type_switches.hpp"

namespace xgemv::quant {
namespace {

constexpr int64_t kMaxStorageBytes = int64_t(1) << 62;

size_t align_up(size_t bytes) {
  return (bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
}

int64_t scale_bytes(xgemv_datatype type) { return type == XGEMV_R_32F ? 4 : 2; }

bool is_format(xgemv_qformat format) { return code_type_of(format).has_value(); }

}  // namespace

ElementType element_type(xgemv_datatype type) noexcept {
  return type == XGEMV_R_16F ? ElementType::kF16
         : type == XGEMV_R_16BF ? ElementType::kBF16
                                : ElementType::kF32;
}

ElementType code_type(xgemv_qformat format) noexcept {
  return code_type_of(format).value_or(ElementType::kInt4);
}

int64_t packed_group(const xgemv_qweight_info &info, const xgemv_qweight_layout &layout) noexcept {
  switch (info.format) {
    case XGEMV_QFORMAT_INT4: return info.group_size;
    case XGEMV_QFORMAT_FP8_E4M3_BLOCK: return 128;
    default: return layout.k_blocks * k_block_inputs(info.format);
  }
}

int group_shift(const xgemv_qweight_info &info, const xgemv_qweight_layout &layout) noexcept {
  if (layout.scale_groups == 1) return 62;
  return 63 - __builtin_clzll(uint64_t(packed_group(info, layout)));
}

xgemv_status plan_layout(const xgemv_qweight_info &info, xgemv_qweight_layout &layout) noexcept {
  layout = {};
  if (!is_format(info.format) || !is_activation_type(info.activation_type) ||
      !is_scale_type(info.scale_type))
    return XGEMV_STATUS_INVALID_QFORMAT;
  const bool int4 = info.format == XGEMV_QFORMAT_INT4;
  if ((info.zero_points != 0 && info.zero_points != 1) ||
      (info.permuted != 0 && info.permuted != 1) ||
      (!int4 && (info.zero_points != 0 || info.permuted != 0)))
    return XGEMV_STATUS_INVALID_QFORMAT;
  // Outputs below 2^40 keep every size in int64 range; inputs below 2^31 keep the kernels' runs
  // of inputs in 32 bits.
  if (info.outputs < 1 || info.inputs < 1 || info.outputs > (int64_t(1) << 40) ||
      info.inputs > INT32_MAX)
    return XGEMV_STATUS_INVALID_QSHAPE;
  if (int4) {
    const int64_t g = info.group_size;
    if ((g != 32 && g != 64 && g != 128) || info.inputs % g != 0)
      return XGEMV_STATUS_INVALID_GROUP_SIZE;
  } else if (info.group_size != 0) {
    return XGEMV_STATUS_INVALID_GROUP_SIZE;
  }

  const int64_t block_inputs = k_block_inputs(info.format);
  layout.row_tiles = (info.outputs + kTileOutputs - 1) / kTileOutputs;
  layout.k_blocks = (info.inputs + block_inputs - 1) / block_inputs;
  const int64_t group = packed_group(info, layout);
  layout.scale_groups = (layout.k_blocks * block_inputs + group - 1) / group;
  const int64_t codes = layout.row_tiles * layout.k_blocks * kTileBlockBytes;
  const int64_t scales = layout.row_tiles * layout.scale_groups * kTileOutputs *
                         scale_bytes(info.scale_type);
  const int64_t zeros = info.zero_points ? layout.row_tiles * layout.scale_groups * 8 : 0;
  const int64_t permutation = info.permuted ? info.inputs * 4 : 0;
  if (codes > kMaxStorageBytes / 4 || scales > kMaxStorageBytes / 4)
    return XGEMV_STATUS_INVALID_QSHAPE;

  layout.codes_offset = 0;
  layout.codes_bytes = size_t(codes);
  layout.scales_offset = align_up(layout.codes_bytes);
  layout.scales_bytes = size_t(scales);
  layout.zeros_offset = align_up(layout.scales_offset + layout.scales_bytes);
  layout.zeros_bytes = size_t(zeros);
  layout.permutation_offset = align_up(layout.zeros_offset + layout.zeros_bytes);
  layout.permutation_bytes = size_t(permutation);
  layout.bytes = align_up(layout.permutation_offset + layout.permutation_bytes);
  return XGEMV_STATUS_SUCCESS;
}

std::optional<GemvProblem> qgemv_problem(const xgemv_qweight_st &weight, const float *alpha,
                                         const void *x, int64_t ldx, const float *beta, void *y,
                                         int64_t ldy, xgemv_datatype y_type, int64_t nrhs,
                                         xgemv_status *status) noexcept {
  const xgemv_qweight_info &info = weight.info;
  const xgemv_qweight_layout &layout = weight.layout;
  *status = XGEMV_STATUS_SUCCESS;
  if (ldx < info.inputs) *status = XGEMV_STATUS_INVALID_LDX;
  else if (ldy < info.outputs) *status = XGEMV_STATUS_INVALID_LDY;
  else if (nrhs < 0) *status = XGEMV_STATUS_INVALID_NRHS;
  else if (y_type != info.activation_type && y_type != XGEMV_R_32F)
    *status = XGEMV_STATUS_INVALID_QFORMAT;
  if (*status != XGEMV_STATUS_SUCCESS) return std::nullopt;

  const auto *base = static_cast<const unsigned char *>(weight.storage);
  GemvProblem p{};
  p.types = {code_type(info.format), element_type(info.activation_type), element_type(y_type),
             ElementType::kF32};
  p.trans = 'T';
  p.m = info.inputs;
  p.n = info.outputs;
  p.a = {base + layout.codes_offset, info.inputs, 0, nullptr};
  p.x = {x, 1, 0, nullptr, ldx};
  p.y = {y, 1, 0, nullptr, ldy};
  p.batch_count = 1;
  p.alpha = alpha;
  p.beta = beta;
  p.rhs_count = nrhs;
  p.invariant_columns = true;
  p.quant.scales = base + layout.scales_offset;
  p.quant.zeros = info.zero_points ? base + layout.zeros_offset : nullptr;
  p.quant.permutation =
      info.permuted ? reinterpret_cast<const int32_t *>(base + layout.permutation_offset) : nullptr;
  p.quant.scale_type = element_type(info.scale_type);
  p.quant.group_shift = group_shift(info, layout);
  p.quant.k_blocks = layout.k_blocks;
  p.quant.scale_groups = layout.scale_groups;
  return p;
}

}  // namespace xgemv::quant
