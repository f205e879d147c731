#include "weights.hpp"

#include <charconv>

namespace xgemv::bench {

std::optional<WeightFormat> parse_weight_format(std::string_view name) {
  if (name == "int8") return WeightFormat{"int8", XGEMV_QFORMAT_INT8};
  if (name == "fp8") return WeightFormat{"fp8", XGEMV_QFORMAT_FP8_E4M3};
  if (name == "fp8-block") return WeightFormat{"fp8-block", XGEMV_QFORMAT_FP8_E4M3_BLOCK};
  constexpr std::string_view kInt4 = "int4-g", kZeroPoints = "-zp";
  if (name.substr(0, kInt4.size()) != kInt4) return std::nullopt;
  std::string_view rest = name.substr(kInt4.size());
  const bool zero_points =
      rest.size() > kZeroPoints.size() && rest.substr(rest.size() - kZeroPoints.size()) == kZeroPoints;
  if (zero_points) rest.remove_suffix(kZeroPoints.size());
  int64_t group = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), group);
  if (error != std::errc() || end != rest.data() + rest.size() ||
      (group != 32 && group != 64 && group != 128))
    return std::nullopt;
  return WeightFormat{std::string(name), XGEMV_QFORMAT_INT4, group, zero_points};
}

std::vector<std::string> weight_format_examples() {
  return {"int4-g128", "int4-g128-zp", "int4-g64", "int4-g32-zp", "int8", "fp8", "fp8-block"};
}

xgemv_qweight_info weight_info(const WeightFormat& format, Dtype activations, int64_t outputs,
                               int64_t inputs) {
  const xgemv_datatype type = activations == Dtype::fp16 ? XGEMV_R_16F : XGEMV_R_16BF;
  return {format.format, type, type, outputs, inputs, format.group, format.zero_points ? 1 : 0, 0};
}

int64_t quantized_call_bytes(const xgemv_qweight_layout& layout, Dtype activations,
                             int64_t outputs, int64_t inputs, int64_t nrhs) {
  const int64_t storage = static_cast<int64_t>(layout.codes_bytes + layout.scales_bytes +
                                               layout.zeros_bytes + layout.permutation_bytes);
  return storage + nrhs * (inputs + outputs) * element_size(activations);
}

}  // namespace xgemv::bench
