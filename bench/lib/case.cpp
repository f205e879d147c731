#include "case.hpp"

#include <charconv>

namespace xgemv::bench {

std::string_view dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32: return "fp32";
    case Dtype::fp64: return "fp64";
    case Dtype::fp16: return "fp16";
    case Dtype::bf16: return "bf16";
  }
  return "?";
}

std::optional<Dtype> parse_dtype(std::string_view name) {
  for (Dtype dtype : kAllDtypes)
    if (dtype_name(dtype) == name) return dtype;
  return std::nullopt;
}

int element_size(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32: return 4;
    case Dtype::fp64: return 8;
    case Dtype::fp16:
    case Dtype::bf16: return 2;
  }
  return 0;
}

double storage_roundoff(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32: return 0x1p-24;
    case Dtype::fp64: return 0x1p-53;
    case Dtype::fp16: return 0x1p-11;
    case Dtype::bf16: return 0x1p-8;
  }
  return 0;
}

double accumulation_roundoff(Dtype dtype) { return dtype == Dtype::fp64 ? 0x1p-53 : 0x1p-24; }

std::string Case::shape() const { return std::to_string(m) + "x" + std::to_string(n); }

std::optional<std::pair<int64_t, int64_t>> parse_shape(std::string_view text) {
  const auto cross = text.find('x');
  if (cross == std::string_view::npos) return std::nullopt;
  auto parse_dimension = [](std::string_view digits) -> std::optional<int64_t> {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size() || value < 1)
      return std::nullopt;
    return value;
  };
  const auto m = parse_dimension(text.substr(0, cross));
  const auto n = parse_dimension(text.substr(cross + 1));
  if (!m || !n) return std::nullopt;
  return std::pair{*m, *n};
}

}  // namespace xgemv::bench
