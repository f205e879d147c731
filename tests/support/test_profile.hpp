// Problem sizes of the GPU tests. XGEMV_TEST_PROFILE=sanitizer selects small ones, for runs under
// compute-sanitizer (which slows kernels down by orders of magnitude and tracks every allocation);
// anything else, or nothing, the full sizes.
#pragma once

#include <cstdlib>
#include <cstring>

namespace xgemv_test {

inline bool sanitizer_profile() {
  static const bool enabled = [] {
    const char *profile = std::getenv("XGEMV_TEST_PROFILE");
    return profile != nullptr && std::strcmp(profile, "sanitizer") == 0;
  }();
  return enabled;
}

// `full` normally, `reduced` under the sanitizer profile.
template <class T>
T by_profile(T full, T reduced) {
  return sanitizer_profile() ? reduced : full;
}

}  // namespace xgemv_test
