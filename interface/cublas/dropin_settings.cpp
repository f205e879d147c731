#include "dropin_settings.hpp"

#include <cstdio>

#include "core.hpp"

namespace xgemv::cublas_dropin {

bool interception_disabled() noexcept {
  static const bool disabled = environment_flag("XGEMV_CUBLAS_DISABLE");
  return disabled;
}

bool logging_enabled() noexcept {
  static const bool enabled = environment_flag("XGEMV_CUBLAS_LOG");
  return enabled;
}

void log_call(const char *entry, const char *server, const char *detail) noexcept {
  if (!logging_enabled()) return;
  // One fprintf per line: stdio locks the stream, so lines of concurrent calls do not interleave.
  std::fprintf(stderr, "xgemv_cublas: %s -> %s (%s)\n", entry, server, detail);
}

}  // namespace xgemv::cublas_dropin
