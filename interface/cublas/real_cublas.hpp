// The real cuBLAS and cuBLASLt behind the drop-in: every call xgemv does not serve goes there
// untouched.
#pragma once

#include <cublas_v2.h>

namespace xgemv::cublas_dropin {

enum class RealLibrary { cublas, cublas_lt };

// The address of `name` in the real libcublas.so.13 (libcublasLt.so.13), or nullptr. The
// library is the one the process already loaded (found by soname, also in a local scope such as
// PyTorch's, where RTLD_NEXT finds nothing), else loaded now. `self` is the drop-in's own
// definition of `name`: a lookup that lands there (the drop-in installed under the library's
// soname) counts as not found.
void *real_cublas_symbol(RealLibrary library, const char *name, const void *self) noexcept;

// One real cuBLAS (cuBLASLt) entry point, looked up once (at its first use).
template <class Function>
class RealFunction {
 public:
  RealFunction(const char *name, Function self,
               RealLibrary library = RealLibrary::cublas) noexcept
      : name_(name),
        function_(reinterpret_cast<Function>(
            real_cublas_symbol(library, name, reinterpret_cast<const void *>(self)))) {}

  const char *name() const noexcept { return name_; }

  template <class... Args>
  cublasStatus_t operator()(Args... args) const noexcept {
    return function_ != nullptr ? function_(args...) : CUBLAS_STATUS_NOT_INITIALIZED;
  }

 private:
  const char *name_;
  Function function_;
};

// Whether `code` (a return address) lies in the real libcublas.so: cuBLAS calls cublasLtMatmul
// itself, and those calls are its own business.
bool is_real_cublas_code(const void *code) noexcept;

// The handle's stream and pointer mode, as the real cuBLAS reports them.
cublasStatus_t real_get_stream(cublasHandle_t handle, cudaStream_t *stream) noexcept;
cublasStatus_t real_get_pointer_mode(cublasHandle_t handle, cublasPointerMode_t *mode) noexcept;

}  // namespace xgemv::cublas_dropin
