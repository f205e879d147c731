// Running a call the routing chose to serve (gemv_routing.hpp), apart from the routing itself
// so that a build of the routing alone (the routing fuzzer) needs no CUDA runtime or kernels.
#include <cstdio>

#include "dropin_settings.hpp"
#include "gemv_routing.hpp"
#include "real_cublas.hpp"
#include "xgemv_handles.hpp"

namespace xgemv::cublas_dropin {
namespace {

// "T m=64 n=32 batch=1 nrhs=4 t_rowblock_32" (nrhs: the vectors of each problem; " bias" when
// the problem adds one), for the log.
void describe(const GemvProblem &p, const char *variant, char *text, std::size_t size) {
  std::snprintf(text, size, "%c m=%lld n=%lld batch=%lld nrhs=%lld%s %s", p.trans,
                static_cast<long long>(p.m), static_cast<long long>(p.n),
                static_cast<long long>(p.batch_count), static_cast<long long>(p.rhs_count),
                p.bias != nullptr ? " bias" : "", variant ? variant : "no launch");
}

}  // namespace

ServeResult serve(const char *entry, cublasHandle_t handle, const CheckedProblem &problem) noexcept {
  if (handle == nullptr) return {CUBLAS_STATUS_SUCCESS, "NULL handle"};
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  if (real_get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS ||
      real_get_pointer_mode(handle, &pointer_mode) != CUBLAS_STATUS_SUCCESS)
    return {CUBLAS_STATUS_SUCCESS, "cannot read the handle's stream or pointer mode"};
  return serve_on_stream(entry, handle, stream,
                         pointer_mode == CUBLAS_POINTER_MODE_DEVICE ? XGEMV_POINTER_MODE_DEVICE
                                                                    : XGEMV_POINTER_MODE_HOST,
                         problem);
}

ServeResult serve_on_stream(const char *entry, const void *owner, cudaStream_t stream,
                            xgemv_pointer_mode pointer_mode,
                            const CheckedProblem &problem) noexcept {
  if (owner == nullptr) return {CUBLAS_STATUS_SUCCESS, "NULL handle"};
  xgemv_status status = XGEMV_STATUS_INTERNAL_ERROR;
  const char *variant = nullptr;
  {
    const HandleLease lease = acquire_xgemv_handle(owner, stream);
    if (!lease) return {CUBLAS_STATUS_SUCCESS, lease.reason()};
    status = xgemv::run(lease.get(), problem, RunOptions{stream, pointer_mode});
    variant = xgemv_get_last_kernel_variant(lease.get());
  }

  switch (status) {
    case XGEMV_STATUS_SUCCESS:
      if (logging_enabled()) {
        char text[160];
        describe(*problem, variant, text, sizeof text);
        log_call(entry, "xgemv", text);
      }
      return {CUBLAS_STATUS_SUCCESS, nullptr};
    case XGEMV_STATUS_CUDA_ERROR:  // the launch failed, as a cuBLAS kernel launch could
      log_call(entry, "xgemv", cudaGetErrorString(xgemv_last_cuda_error()));
      return {CUBLAS_STATUS_EXECUTION_FAILED, nullptr};
    case XGEMV_STATUS_INTERNAL_ERROR:
      log_call(entry, "xgemv", "internal error");
      return {CUBLAS_STATUS_INTERNAL_ERROR, nullptr};
    default:  // refused before touching anything (device, pointers): cuBLAS gives its own answer
      return {CUBLAS_STATUS_SUCCESS, xgemv_status_string(status)};
  }
}

}  // namespace xgemv::cublas_dropin
