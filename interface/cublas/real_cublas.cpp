#include "real_cublas.hpp"

#include <dlfcn.h>

namespace xgemv::cublas_dropin {
namespace {

constexpr const char *kCublasSoname = "libcublas.so.13";

void *real_cublas_library() noexcept {
  static void *const library = [] {
    // Already loaded (by the program or, in a local scope, by a framework): take that one, so
    // that the drop-in never brings a second cuBLAS into the process.
    if (void *loaded = dlopen(kCublasSoname, RTLD_LAZY | RTLD_NOLOAD)) return loaded;
    return dlopen(kCublasSoname, RTLD_LAZY | RTLD_LOCAL);
  }();
  return library;
}

}  // namespace

void *real_cublas_symbol(const char *name, const void *self) noexcept {
  void *symbol = nullptr;
  // dlsym on the library's own handle searches that library and its dependencies only: never
  // the preloaded drop-in.
  if (void *library = real_cublas_library()) symbol = dlsym(library, name);
  // A cuBLAS under another soname (a static or renamed build) is still "next" to us.
  if (symbol == nullptr || symbol == self) symbol = dlsym(RTLD_NEXT, name);
  return symbol == self ? nullptr : symbol;
}

cublasStatus_t real_get_stream(cublasHandle_t handle, cudaStream_t *stream) noexcept {
  static const RealFunction<decltype(&cublasGetStream_v2)> real("cublasGetStream_v2", nullptr);
  return real(handle, stream);
}

cublasStatus_t real_get_pointer_mode(cublasHandle_t handle, cublasPointerMode_t *mode) noexcept {
  static const RealFunction<decltype(&cublasGetPointerMode_v2)> real("cublasGetPointerMode_v2",
                                                                     nullptr);
  return real(handle, mode);
}

}  // namespace xgemv::cublas_dropin
