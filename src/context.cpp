#include "context.hpp"

#include <new>

#include "core.hpp"

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

}  // namespace

extern "C" {

xgemv_status xgemv_create(xgemv_handle *handle) {
  if (handle == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *handle = nullptr;
  auto *context = new (std::nothrow) xgemv_context;
  if (context == nullptr) return XGEMV_STATUS_INTERNAL_ERROR;
  cudaError_t error = cudaGetDevice(&context->device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&context->sm_count, cudaDevAttrMultiProcessorCount,
                                   context->device);
  if (error == cudaSuccess) error = cudaMalloc(&context->partials, xgemv::kPartialBytes);
  if (error == cudaSuccess)
    error = cudaMalloc(reinterpret_cast<void **>(&context->tile_counters),
                       xgemv::kTileCounters * sizeof(unsigned));
  // The counters must be zero before any stream uses them. A private stream keeps the wait to
  // this one memset instead of the whole device (other streams may be busy or capturing).
  cudaStream_t zeroing = nullptr;
  if (error == cudaSuccess) error = cudaStreamCreateWithFlags(&zeroing, cudaStreamNonBlocking);
  if (error == cudaSuccess)
    error = cudaMemsetAsync(context->tile_counters, 0, xgemv::kTileCounters * sizeof(unsigned),
                            zeroing);
  if (error == cudaSuccess) error = cudaStreamSynchronize(zeroing);
  if (zeroing != nullptr) cudaStreamDestroy(zeroing);
  if (error != cudaSuccess) {
    cudaFree(context->partials);
    cudaFree(context->tile_counters);
    delete context;
    return create_failure(error);
  }
  context->partial_bytes = xgemv::kPartialBytes;
  context->tile_counter_count = xgemv::kTileCounters;
  *handle = context;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_destroy(xgemv_handle handle) {
  if (handle == nullptr) return XGEMV_STATUS_SUCCESS;
  // cudaFree waits for the device, so work still queued that uses the workspace finishes first;
  // the handle's stream is not touched (the caller may have destroyed it already).
  cudaError_t error = cudaFree(handle->partials);
  const cudaError_t free_counters = cudaFree(handle->tile_counters);
  delete handle;
  if (error == cudaSuccess) error = free_counters;
  return error == cudaSuccess ? XGEMV_STATUS_SUCCESS : cuda_failure(error);
}

xgemv_status xgemv_set_stream(xgemv_handle handle, cudaStream_t stream) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  handle->stream = stream;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_get_stream(xgemv_handle handle, cudaStream_t *stream) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (stream == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *stream = handle->stream;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_set_pointer_mode(xgemv_handle handle, xgemv_pointer_mode mode) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (mode != XGEMV_POINTER_MODE_HOST && mode != XGEMV_POINTER_MODE_DEVICE)
    return XGEMV_STATUS_INVALID_POINTER_MODE;
  handle->pointer_mode = mode;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status xgemv_get_pointer_mode(xgemv_handle handle, xgemv_pointer_mode *mode) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (mode == nullptr) return XGEMV_STATUS_NULL_POINTER;
  *mode = handle->pointer_mode;
  return XGEMV_STATUS_SUCCESS;
}

// Here, not in status.cpp with xgemv_last_cuda_error: status.cpp is also built without the CUDA
// runtime (the CPU-only fuzzers link it).
const char *xgemv_cuda_error_string(void) { return cudaGetErrorString(xgemv_last_cuda_error()); }

}  // extern "C"
