// Environment switches shared by the interface libraries. Each library reads its switches once.
#pragma once

#include <cstdlib>
#include <cstring>

namespace xgemv::env {

// Set to anything but "" or "0".
inline bool environment_flag(const char *name) noexcept {
  const char *value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

inline bool environment_equals(const char *name, const char *expected) noexcept {
  const char *value = std::getenv(name);
  return value != nullptr && std::strcmp(value, expected) == 0;
}

}  // namespace xgemv::env
