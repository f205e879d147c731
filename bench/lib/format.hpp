// Number and text formatting shared by the writers (report.cpp, decode_report.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace xgemv::bench {

// "%.*f" of a value, or `missing` when it is absent or not finite.
std::string fixed(const std::optional<double>& value, int decimals, const char* missing = "");
// "%.4g" of a value, or `missing`.
std::string general(const std::optional<double>& value, const char* missing = "");
// A CSV field, quoted where it holds a comma, a quote or a newline.
std::string csv_field(const std::string& text);
// The value, or null when it is absent or not finite.
nlohmann::ordered_json optional_json(const std::optional<double>& value);
// "1.28x", or "-".
std::string speedup_text(const std::optional<double>& speedup);

}  // namespace xgemv::bench
