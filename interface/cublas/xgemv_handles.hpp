// The xgemv handles behind the program's cuBLAS and cuBLASLt handles.
//
// One xgemv handle per (cuBLAS or cuBLASLt handle, stream): an xgemv handle's workspace serves
// one stream at a time, while a cuBLAS handle is routinely moved between streams with work still
// in flight (PyTorch sets the current stream on its per-thread handle before every call; a
// cuBLASLt call names its stream). The per-thread default stream is one stream per thread, so
// its key also names the thread.
//
// Handles are created lazily, on the device current at the first call, with their split
// workspace even when that call is being captured (PyTorch captures on a stream of its own):
// xgemv_create allocates without touching the capture. Handles are destroyed when the program
// destroys its handle.
#pragma once

#include <mutex>
#include <shared_mutex>

#include <cublas_v2.h>
#include <xgemv/xgemv.h>

namespace xgemv::cublas_dropin {

// Exclusive use of one xgemv handle for the duration of a call (the handle's stream and pointer
// mode are set per call). Empty, with a reason, when xgemv cannot serve the call.
class HandleLease {
 public:
  static HandleLease unavailable(const char *reason) noexcept;
  HandleLease(std::shared_lock<std::shared_mutex> table_lock, std::unique_lock<std::mutex> use_lock,
              xgemv_handle handle) noexcept;

  explicit operator bool() const noexcept { return handle_ != nullptr; }
  xgemv_handle get() const noexcept { return handle_; }
  const char *reason() const noexcept { return reason_; }

 private:
  HandleLease() = default;
  std::shared_lock<std::shared_mutex> table_lock_;  // keeps the handle alive (see release)
  std::unique_lock<std::mutex> use_lock_;
  xgemv_handle handle_ = nullptr;
  const char *reason_ = nullptr;
};

// The xgemv handle for calls of `owner` on `stream`, created on first use.
HandleLease acquire_xgemv_handle(const void *owner, cudaStream_t stream) noexcept;

// Destroys every xgemv handle of `owner` (cublasDestroy_v2, cublasLtDestroy); returns how many
// there were.
int release_xgemv_handles(const void *owner) noexcept;

}  // namespace xgemv::cublas_dropin
