#include "context.hpp"

#include <new>

#include "core.hpp"
#include "dispatch.hpp"

namespace {

xgemv_status cuda_failure(cudaError_t error) {
  xgemv::set_last_cuda_error(error);
  return XGEMV_STATUS_CUDA_ERROR;
}

// xgemv_create's failures: XGEMV_STATUS_NO_DEVICE where there is no device or no driver at all.
// Without a driver the runtime says cudaErrorInsufficientDriver, as for one that is too old;
// cudaDriverGetVersion tells the two apart (it gives 0 only when no driver is installed).
xgemv_status create_failure(cudaError_t error) {
  xgemv::set_last_cuda_error(error);
  int driver_version = 0;
  const bool no_driver = error == cudaErrorInsufficientDriver &&
                         cudaDriverGetVersion(&driver_version) == cudaSuccess &&
                         driver_version == 0;
  return error == cudaErrorNoDevice || no_driver ? XGEMV_STATUS_NO_DEVICE
                                                 : XGEMV_STATUS_CUDA_ERROR;
}

// This thread's stream-capture mode, relaxed for the scope and then restored, on every path.
// In the default mode (global) a cudaMalloc is refused while any thread captures a stream in
// that mode, and the capture is invalidated; relaxed, it is allowed and leaves the capture
// alone (PyTorch's caching allocator allocates during captures this way).
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() noexcept : error_(cudaThreadExchangeStreamCaptureMode(&previous_)) {}
  ~RelaxedCaptureMode() {
    if (error_ == cudaSuccess) cudaThreadExchangeStreamCaptureMode(&previous_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode &) = delete;
  RelaxedCaptureMode &operator=(const RelaxedCaptureMode &) = delete;
  cudaError_t error() const noexcept { return error_; }

 private:
  cudaStreamCaptureMode previous_ = cudaStreamCaptureModeRelaxed;  // swapped for the old mode
  cudaError_t error_;
};

// The handle's settings and what it reads off the device: no allocation, no synchronisation.
xgemv_status create_handle_without_workspace(xgemv_handle *handle) noexcept {
  if (handle == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *handle = nullptr;
  auto *context = new (std::nothrow) xgemv_context;
  if (context == nullptr) return XGEMV_STATUS_INTERNAL_ERROR;
  if (const char *forced = xgemv::environment_value("XGEMV_KERNEL_VARIANT")) {
    context->forced_variant = xgemv::find_kernel_variant(forced);
    if (context->forced_variant < 0) {
      delete context;
      return XGEMV_STATUS_INVALID_VALUE;
    }
  }
  context->batch_invariant = xgemv::environment_flag("XGEMV_BATCH_INVARIANT");
  int major = 0;
  cudaError_t error = cudaGetDevice(&context->device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&context->limits.sm_count, cudaDevAttrMultiProcessorCount,
                                   context->device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&context->limits.block_shared_bytes,
                                   cudaDevAttrMaxSharedMemoryPerBlockOptin, context->device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, context->device);
  if (error != cudaSuccess) {
    delete context;
    return create_failure(error);
  }
  context->programmatic_launch = major >= 9;
  *handle = context;
  return XGEMV_STATUS_SUCCESS;
}

// Allocates and zeroes the handle's split workspace. It waits only for a private stream, in
// relaxed capture mode, so it may run while a stream is being captured: nothing goes into the
// capture.
xgemv_status add_split_workspace(xgemv_handle handle) noexcept {
  const RelaxedCaptureMode relaxed;
  if (relaxed.error() != cudaSuccess) return cuda_failure(relaxed.error());
  xgemv::SplitWorkspace workspace{};
  cudaError_t error = cudaMalloc(&workspace.partials, xgemv::kSplitPartialBytes);
  if (error == cudaSuccess)
    error = cudaMalloc(reinterpret_cast<void **>(&workspace.tile_counters),
                       xgemv::kSplitTileCounters * sizeof(unsigned));
  // The counters must be zero before any stream uses them. A private non-blocking stream keeps
  // the wait to this one memset instead of the whole device (other streams may be busy or
  // capturing) and keeps the memset out of any capture.
  cudaStream_t zeroing = nullptr;
  if (error == cudaSuccess) error = cudaStreamCreateWithFlags(&zeroing, cudaStreamNonBlocking);
  if (error == cudaSuccess)
    error = cudaMemsetAsync(workspace.tile_counters, 0,
                            xgemv::kSplitTileCounters * sizeof(unsigned), zeroing);
  if (error == cudaSuccess) error = cudaStreamSynchronize(zeroing);
  if (zeroing != nullptr) cudaStreamDestroy(zeroing);
  if (error != cudaSuccess) {
    // Freed before the mode is restored: cudaFree may synchronise, which global mode refuses
    // during a capture, invalidating it; relaxed, it is allowed (NCCL frees during captures
    // this way). The error reported is the allocation's; a failed free only loses the memory.
    if (workspace.partials != nullptr) cudaFree(workspace.partials);
    if (workspace.tile_counters != nullptr) cudaFree(workspace.tile_counters);
    return cuda_failure(error);
  }
  handle->workspace = workspace;
  return XGEMV_STATUS_SUCCESS;
}

// A setting of the handle written from, or read into, the C API's value (a flag as 0 or 1).
template <class Setting, class Value>
xgemv_status set_setting(xgemv_handle handle, Setting xgemv_context::*setting, Value value) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  handle->*setting = Setting(value);
  return XGEMV_STATUS_SUCCESS;
}
template <class Setting, class Value>
xgemv_status get_setting(xgemv_handle handle, Setting xgemv_context::*setting, Value *value) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (value == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *value = Value(handle->*setting);
  return XGEMV_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

xgemv_status xgemv_create(xgemv_handle *handle) {
  const xgemv_status status = create_handle_without_workspace(handle);
  if (status != XGEMV_STATUS_SUCCESS) return status;
  if (const xgemv_status workspace = add_split_workspace(*handle);
      workspace != XGEMV_STATUS_SUCCESS) {
    delete *handle;
    *handle = nullptr;
    return workspace;
  }
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_destroy(xgemv_handle handle) {
  if (handle == nullptr) return XGEMV_STATUS_SUCCESS;
  // cudaFree waits for the device, so work still queued that uses the workspace finishes first;
  // the handle's stream is not touched (the caller may have destroyed it already).
  cudaError_t error = cudaFree(handle->workspace.partials);
  const cudaError_t free_counters = cudaFree(handle->workspace.tile_counters);
  delete handle;
  if (error == cudaSuccess) error = free_counters;
  return error == cudaSuccess ? XGEMV_STATUS_SUCCESS : cuda_failure(error);
}

xgemv_status xgemv_set_stream(xgemv_handle handle, cudaStream_t stream) {
  return set_setting(handle, &xgemv_context::stream, stream);
}

xgemv_status xgemv_get_stream(xgemv_handle handle, cudaStream_t *stream) {
  return get_setting(handle, &xgemv_context::stream, stream);
}

xgemv_status xgemv_set_pointer_mode(xgemv_handle handle, xgemv_pointer_mode mode) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (mode != XGEMV_POINTER_MODE_HOST && mode != XGEMV_POINTER_MODE_DEVICE)
    return XGEMV_STATUS_INVALID_POINTER_MODE;
  handle->pointer_mode = mode;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_get_pointer_mode(xgemv_handle handle, xgemv_pointer_mode *mode) {
  return get_setting(handle, &xgemv_context::pointer_mode, mode);
}

xgemv_status xgemv_set_early_start(xgemv_handle handle, int enabled) {
  return set_setting(handle, &xgemv_context::early_start, enabled);
}

xgemv_status xgemv_get_early_start(xgemv_handle handle, int *enabled) {
  return get_setting(handle, &xgemv_context::early_start, enabled);
}

xgemv_status xgemv_set_batch_invariant(xgemv_handle handle, int enabled) {
  return set_setting(handle, &xgemv_context::batch_invariant, enabled);
}

xgemv_status xgemv_get_batch_invariant(xgemv_handle handle, int *enabled) {
  return get_setting(handle, &xgemv_context::batch_invariant, enabled);
}

int xgemv_kernel_variant_count(void) { return xgemv::kernel_variant_count(); }

const char *xgemv_kernel_variant_name(int index) { return xgemv::kernel_variant_name(index); }

xgemv_status xgemv_set_kernel_variant(xgemv_handle handle, const char *name) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (name == nullptr || name[0] == '\0') {
    handle->forced_variant = -1;
    return XGEMV_STATUS_SUCCESS;
  }
  const int variant = xgemv::find_kernel_variant(name);
  if (variant < 0) return XGEMV_STATUS_INVALID_VALUE;
  handle->forced_variant = variant;
  return XGEMV_STATUS_SUCCESS;
}

const char *xgemv_get_last_kernel_variant(xgemv_handle handle) {
  return handle == nullptr ? nullptr : xgemv::kernel_variant_name(handle->last_variant);
}

// Here, not in status.cpp with xgemv_last_cuda_error: status.cpp is also built without the CUDA
// runtime (the CPU-only fuzzers link it).
const char *xgemv_cuda_error_string(void) { return cudaGetErrorString(xgemv_last_cuda_error()); }

}  // extern "C"
