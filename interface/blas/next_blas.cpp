#include "next_blas.hpp"

#include <dlfcn.h>

#include <initializer_list>

namespace xgemv::blas {
namespace {

// Whether `symbol` lies in this very library (installed as libblas.so.3, say).
bool is_our_own(void *symbol) {
  Dl_info ours{}, theirs{};
  return dladdr(reinterpret_cast<void *>(&next_blas), &ours) != 0 &&
         dladdr(symbol, &theirs) != 0 && ours.dli_fbase == theirs.dli_fbase;
}

NextBlas gemv_of(void *library) {
  void *const sgemv = dlsym(library, "sgemv_");
  void *const dgemv = dlsym(library, "dgemv_");
  if (sgemv == nullptr || dgemv == nullptr || is_our_own(sgemv) || is_our_own(dgemv)) return {};
  NextBlas found;
  found.sgemv = reinterpret_cast<FortranGemv<float>>(sgemv);
  found.dgemv = reinterpret_cast<FortranGemv<double>>(dgemv);
  Dl_info info{};
  found.library = dladdr(sgemv, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "?";
  return found;
}

NextBlas find_next_blas() {
  if (NextBlas next = gemv_of(RTLD_NEXT); next.sgemv != nullptr) return next;
  for (const char *soname : {"libopenblas.so.0", "libblas.so.3"}) {
    // RTLD_LOCAL: its symbols stay out of the program's scope.
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) continue;
    if (NextBlas found = gemv_of(library); found.sgemv != nullptr) return found;
    dlclose(library);
  }
  return {};
}

}  // namespace

const NextBlas &next_blas() noexcept {
  static const NextBlas next = find_next_blas();
  return next;
}

}  // namespace xgemv::blas
