// The one reader of the environment switches (core.hpp): plain C++, in the checker's library,
// so that every interface and CPU-only tool reads them alike.
#include <cstdlib>
#include <cstring>

#include "core.hpp"

namespace xgemv {

bool environment_flag(const char *name) noexcept {
  const char *value = environment_value(name);
  return value != nullptr && std::strcmp(value, "0") != 0;
}

const char *environment_value(const char *name) noexcept {
  const char *value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

}  // namespace xgemv
