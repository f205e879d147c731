#include "format.hpp"

#include <cmath>
#include <cstdio>

namespace xgemv::bench {

std::string fixed(const std::optional<double>& value, int decimals, const char* missing) {
  if (!value || !std::isfinite(*value)) return missing;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, *value);
  return text;
}

std::string general(const std::optional<double>& value, const char* missing) {
  if (!value) return missing;
  char text[64];
  std::snprintf(text, sizeof text, "%.4g", *value);
  return text;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

nlohmann::ordered_json optional_json(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? nlohmann::ordered_json(*value)
                                        : nlohmann::ordered_json(nullptr);
}

std::string speedup_text(const std::optional<double>& speedup) {
  return speedup ? fixed(speedup, 2) + "x" : "-";
}

}  // namespace xgemv::bench
