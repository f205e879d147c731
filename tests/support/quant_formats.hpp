// The quantized formats the tests run over (every format, every INT4 option), the edge sizes of
// each, and a weight handle that destroys itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <xgemv/xgemv_quant.h>

#include "support/quant_reference.hpp"

namespace xgemv_test::quant {

// A format with its options: group_size, zero points and permutation (INT4 only).
struct FormatOptions {
  xgemv_qformat format;
  int64_t group_size;
  int zero_points;
  int permuted;
};

inline constexpr FormatOptions kEveryFormat[] = {
    {XGEMV_QFORMAT_INT4, 32, 0, 0},          {XGEMV_QFORMAT_INT4, 64, 0, 0},
    {XGEMV_QFORMAT_INT4, 128, 0, 0},         {XGEMV_QFORMAT_INT4, 32, 1, 0},
    {XGEMV_QFORMAT_INT4, 64, 1, 0},          {XGEMV_QFORMAT_INT4, 128, 1, 0},
    {XGEMV_QFORMAT_INT4, 32, 0, 1},          {XGEMV_QFORMAT_INT4, 64, 0, 1},
    {XGEMV_QFORMAT_INT4, 128, 0, 1},         {XGEMV_QFORMAT_INT4, 32, 1, 1},
    {XGEMV_QFORMAT_INT4, 64, 1, 1},          {XGEMV_QFORMAT_INT4, 128, 1, 1},
    {XGEMV_QFORMAT_INT8, 0, 0, 0},           {XGEMV_QFORMAT_FP8_E4M3, 0, 0, 0},
    {XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0, 0, 0},
};

inline constexpr xgemv_datatype kActivationTypes[] = {XGEMV_R_16F, XGEMV_R_16BF};
inline constexpr xgemv_datatype kScaleTypes[] = {XGEMV_R_16F, XGEMV_R_16BF, XGEMV_R_32F};

// A name for test parameters: INT4_g32_zero_points_permuted, INT8, FP8_E4M3_BLOCK, ...
inline std::string test_name(const FormatOptions &f) {
  std::string name = format_name(f.format);
  if (f.format == XGEMV_QFORMAT_INT4)
    name += "_g" + std::to_string(f.group_size) + (f.zero_points ? "_zero_points" : "") +
            (f.permuted ? "_permuted" : "");
  return name;
}

inline xgemv_qweight_info make_info(const FormatOptions &f, xgemv_datatype activation_type,
                                    xgemv_datatype scale_type, int64_t outputs, int64_t inputs) {
  return {f.format, activation_type, scale_type,    outputs,
          inputs,   f.group_size,    f.zero_points, f.permuted};
}

// Inputs around the format's blocks: one group (one input for the per-output formats), a group
// past a k-block (INT4 g32: 96, not a multiple of 64), odd counts for the 8-bit formats, many
// groups.
inline std::vector<int64_t> edge_inputs(const FormatOptions &f) {
  if (f.format == XGEMV_QFORMAT_INT4)
    return {f.group_size, 3 * f.group_size, 2 * f.group_size, 4096};
  return {1, 31, 33, 127, 129, 4097};
}

inline constexpr int64_t kEdgeOutputs[] = {1, 7, 15, 16, 17, 33, 1031};

// A weight made by xgemv_qweight_create, destroyed with its owner.
class OwnedQweight {
 public:
  OwnedQweight(const xgemv_qweight_info &info, void *storage) {
    xgemv_qweight weight = nullptr;
    status_ = xgemv_qweight_create(&weight, &info, storage);
    if (status_ == XGEMV_STATUS_SUCCESS) weight_.reset(weight);
  }

  xgemv_qweight get() const { return weight_.get(); }
  xgemv_status status() const { return status_; }

 private:
  struct Destroy {
    void operator()(xgemv_qweight weight) const { xgemv_qweight_destroy(weight); }
  };
  std::unique_ptr<xgemv_qweight_st, Destroy> weight_;
  xgemv_status status_;
};

}  // namespace xgemv_test::quant
