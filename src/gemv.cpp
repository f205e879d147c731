// The core's one path for every call: the checks that need the handle, quick return, pointer
// checks, then the variant dispatch (dispatch.cu).

#include "context.hpp"
#include "core.hpp"
#include "dispatch.hpp"

namespace xgemv {
namespace {

// XGEMV_CHECK_POINTERS=1: read once; each call then asks the driver about every pointer.
bool pointer_checks_enabled() {
  static const bool enabled = environment_flag("XGEMV_CHECK_POINTERS");
  return enabled;
}

// Whether `device` can read p (device memory of that device, or managed memory), or the driver's
// error when it cannot say: a sticky error from an earlier fault is not a verdict on p.
cudaError_t query_device_access(const void *p, int device, bool &accessible) {
  accessible = false;
  cudaPointerAttributes attributes;
  if (const cudaError_t error = cudaPointerGetAttributes(&attributes, p); error != cudaSuccess) {
    if (error != cudaErrorInvalidValue) return error;
    cudaGetLastError();  // "not a pointer the driver knows": the query's error, not the caller's
    return cudaSuccess;
  }
  accessible = attributes.type == cudaMemoryTypeManaged ||
               (attributes.type == cudaMemoryTypeDevice && attributes.device == device);
  return cudaSuccess;
}

xgemv_status cuda_failure(cudaError_t error) {
  set_last_cuda_error(error);
  return XGEMV_STATUS_CUDA_ERROR;
}

}  // namespace

xgemv_status check_handle_device(xgemv_handle handle) noexcept {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  int device = -1;
  if (const cudaError_t error = cudaGetDevice(&device); error != cudaSuccess)
    return cuda_failure(error);
  return device == handle->device ? XGEMV_STATUS_SUCCESS : XGEMV_STATUS_WRONG_DEVICE;
}

void clear_last_kernel_variant(xgemv_handle handle) noexcept {
  if (handle != nullptr) handle->last_variant = -1;
}

xgemv_status run(xgemv_handle handle, const CheckedProblem &checked,
                 const RunOptions &options) noexcept {
  const GemvProblem &p = *checked;
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  handle->last_variant = -1;
  const bool device_scalars =
      options.pointer_mode.value_or(handle->pointer_mode) == XGEMV_POINTER_MODE_DEVICE;
  if (computes_nothing(checked)) return XGEMV_STATUS_SUCCESS;
  if (p.alpha == nullptr || p.beta == nullptr) return XGEMV_STATUS_NULL_POINTER;
  if (is_quick_return(checked, device_scalars)) return XGEMV_STATUS_SUCCESS;

  const bool reads_a_x = reads_matrix_and_x(checked, device_scalars);
  if (p.pointer_arrays()) {
    if (p.x.array == nullptr || p.y.array == nullptr) return XGEMV_STATUS_NULL_POINTER;
  } else if (p.y.data == nullptr || (reads_a_x && (p.a.data == nullptr || p.x.data == nullptr))) {
    return XGEMV_STATUS_NULL_POINTER;
  }
  const RoutedOperand &r = p.routing;
  if (p.routed() && (r.ids == nullptr || (r.down && r.weights == nullptr)))
    return XGEMV_STATUS_NULL_POINTER;

  if (const xgemv_status status = check_handle_device(handle); status != XGEMV_STATUS_SUCCESS)
    return status;

  if (pointer_checks_enabled()) {
    const void *needed[] = {
        p.pointer_arrays() ? static_cast<const void *>(p.a.array) : reads_a_x ? p.a.data : nullptr,
        p.pointer_arrays() ? static_cast<const void *>(p.x.array) : reads_a_x ? p.x.data : nullptr,
        p.pointer_arrays() ? static_cast<const void *>(p.y.array) : p.y.data, p.bias,
        device_scalars ? p.alpha : nullptr, device_scalars ? p.beta : nullptr, r.ids, r.weights,
        r.expert_bias, r.partials};
    for (const void *pointer : needed) {
      if (pointer == nullptr) continue;
      bool accessible = false;
      if (const cudaError_t error = query_device_access(pointer, handle->device, accessible);
          error != cudaSuccess)
        return cuda_failure(error);
      if (!accessible) return XGEMV_STATUS_INVALID_POINTER;
    }
  }
  return launch_variant(*handle, p, options.stream.value_or(handle->stream), device_scalars);
}

xgemv_status check_and_run(xgemv_handle handle, const GemvProblem &problem,
                           const RunOptions &options) noexcept {
  xgemv_status status = XGEMV_STATUS_SUCCESS;
  const std::optional<CheckedProblem> checked = check_problem(problem, &status);
  return checked ? run(handle, *checked, options) : status;
}

}  // namespace xgemv
