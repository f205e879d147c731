#include "real_cublas.hpp"

#include <dlfcn.h>

#include <cstring>

namespace xgemv::cublas_dropin {
namespace {

void *load(const char *soname) noexcept {
  // Already loaded (by the program or, in a local scope, by a framework): take that one, so that
  // the drop-in never brings a second cuBLAS into the process.
  if (void *loaded = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) return loaded;
  return dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
}

// Each loaded at its first use only: a program that calls only one of them gets only that one.
void *real_library(RealLibrary library) noexcept {
  if (library == RealLibrary::cublas) {
    static void *const cublas = load("libcublas.so.13");
    return cublas;
  }
  static void *const cublas_lt = load("libcublasLt.so.13");
  return cublas_lt;
}

}  // namespace

void *real_cublas_symbol(RealLibrary library, const char *name, const void *self) noexcept {
  void *symbol = nullptr;
  // dlsym on the library's own handle searches that library and its dependencies only: never
  // the preloaded drop-in.
  if (void *handle = real_library(library)) symbol = dlsym(handle, name);
  // A cuBLAS under another soname (a static or renamed build) is still "next" to us.
  if (symbol == nullptr || symbol == self) symbol = dlsym(RTLD_NEXT, name);
  return symbol == self ? nullptr : symbol;
}

bool is_real_cublas_code(const void *code) noexcept {
  Dl_info info{};
  if (dladdr(code, &info) == 0 || info.dli_fname == nullptr) return false;
  const char *slash = std::strrchr(info.dli_fname, '/');
  const char *file = slash != nullptr ? slash + 1 : info.dli_fname;
  return std::strncmp(file, "libcublas.so", std::strlen("libcublas.so")) == 0;
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
