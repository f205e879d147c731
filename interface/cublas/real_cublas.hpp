// The real cuBLAS behind the drop-in: every call xgemv does not serve goes there untouched.
#pragma once

#include <cublas_v2.h>

namespace xgemv::cublas_dropin {

// The address of `name` in the real libcublas.so.13, or nullptr. The library is the one the
// process already loaded (found by soname, also in a local scope such as PyTorch's, where
// RTLD_NEXT finds nothing), else loaded now. `self` is the drop-in's own definition of `name`:
// a lookup that lands there (the drop-in installed under cuBLAS's soname) counts as not found.
void *real_cublas_symbol(const char *name, const void *self) noexcept;

// One real cuBLAS entry point, looked up once (at its first use).
template <class Function>
class RealFunction {
 public:
  RealFunction(const char *name, Function self) noexcept
      : name_(name),
        function_(reinterpret_cast<Function>(
            real_cublas_symbol(name, reinterpret_cast<const void *>(self)))) {}

  const char *name() const noexcept { return name_; }

  template <class... Args>
  cublasStatus_t operator()(Args... args) const noexcept {
    return function_ != nullptr ? function_(args...) : CUBLAS_STATUS_NOT_INITIALIZED;
  }

 private:
  const char *name_;
  Function function_;
};

// The handle's stream and pointer mode, as the real cuBLAS reports them.
cublasStatus_t real_get_stream(cublasHandle_t handle, cudaStream_t *stream) noexcept;
cublasStatus_t real_get_pointer_mode(cublasHandle_t handle, cublasPointerMode_t *mode) noexcept;

}  // namespace xgemv::cublas_dropin
