#include "library_path.hpp"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>

namespace xgemv_test {

std::string library_defining(const void *symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return {};
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
}

}  // namespace xgemv_test
