#pragma once

#include <string>

namespace xgemv_test {

// The shared object that defines `symbol` in this process (dladdr), symbolic links resolved;
// empty if none does. Proves which library a reference call really lands in.
std::string library_defining(const void *symbol);

}  // namespace xgemv_test
