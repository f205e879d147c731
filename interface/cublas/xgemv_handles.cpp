#include "xgemv_handles.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core.hpp"

namespace xgemv::cublas_dropin {
namespace {

// (cuBLAS or cuBLASLt handle, stream, thread for the per-thread default stream, else no thread).
using HandleKey = std::tuple<std::uintptr_t, std::uintptr_t, std::thread::id>;

HandleKey key_of(const void *owner, cudaStream_t stream) {
  const std::thread::id thread =
      stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id();
  return {reinterpret_cast<std::uintptr_t>(owner), reinterpret_cast<std::uintptr_t>(stream),
          thread};
}

struct HandleSlot {
  explicit HandleSlot(xgemv_handle created) : handle(created) {}
  xgemv_handle handle;
  std::mutex use;  // one call at a time sets the stream / pointer mode and launches
};

// Destroys a handle whose stream the program may already have destroyed (cuBLAS allows
// destroying the stream before the handle): detach it first; cudaFree waits for the device.
void destroy_detached(xgemv_handle handle) noexcept {
  xgemv_set_stream(handle, nullptr);
  xgemv_destroy(handle);
}

class HandleTable {
 public:
  HandleLease acquire(const void *owner, cudaStream_t stream) {
    const HandleKey key = key_of(owner, stream);
    for (;;) {
      {
        std::shared_lock<std::shared_mutex> table_lock(mutex_);
        if (const auto found = slots_.find(key); found != slots_.end()) {
          std::unique_lock<std::mutex> use_lock(found->second->use);
          const xgemv_handle handle = found->second->handle;
          // A handle made during a capture gets its workspace at its first call outside one.
          if (!has_split_workspace(handle) && capture_state(stream) == Capture::none)
            add_split_workspace(handle);  // on failure the calls keep not splitting
          return HandleLease(std::move(table_lock), std::move(use_lock), handle);
        }
      }
      if (const char *reason = create(key, stream)) return HandleLease::unavailable(reason);
    }
  }

  int release(const void *owner) {
    std::vector<xgemv_handle> released;
    {
      std::unique_lock<std::shared_mutex> table_lock(mutex_);
      for (auto slot = slots_.begin(); slot != slots_.end();) {
        if (std::get<0>(slot->first) == reinterpret_cast<std::uintptr_t>(owner)) {
          released.push_back(slot->second->handle);
          slot = slots_.erase(slot);
        } else {
          ++slot;
        }
      }
    }
    for (xgemv_handle handle : released) destroy_detached(handle);
    return static_cast<int>(released.size());
  }

 private:
  enum class Capture { none, capturing, unknown };
  // cudaStreamIsCapturing is one of the queries allowed during a capture.
  static Capture capture_state(cudaStream_t stream) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
      cudaGetLastError();  // our query's error is not the program's
      return Capture::unknown;
    }
    return capture == cudaStreamCaptureStatusNone ? Capture::none : Capture::capturing;
  }

  // Creates the handle for `key`; returns why it could not, or nullptr. During a capture (a
  // stream first seen inside torch.cuda.graph, say) the handle is made without its workspace:
  // nothing is allocated or synchronised then.
  const char *create(const HandleKey &key, cudaStream_t stream) {
    const Capture capture = capture_state(stream);
    if (capture == Capture::unknown) return "cannot query the stream's capture state";
    xgemv_handle created = nullptr;
    const xgemv_status status = capture == Capture::none
                                    ? xgemv_create(&created)
                                    : create_handle_without_workspace(&created);
    if (status != XGEMV_STATUS_SUCCESS) {
      cudaGetLastError();
      return "xgemv handle creation failed";
    }
    xgemv_set_stream(created, stream);
    auto slot = std::make_unique<HandleSlot>(created);
    std::unique_lock<std::shared_mutex> table_lock(mutex_);
    if (!slots_.try_emplace(key, std::move(slot)).second) {
      table_lock.unlock();  // another thread created it first
      destroy_detached(created);
    }
    return nullptr;
  }

  std::shared_mutex mutex_;
  std::map<HandleKey, std::unique_ptr<HandleSlot>> slots_;
};

// Never destroyed: calls and cublasDestroy may still come while the process exits.
HandleTable &handle_table() {
  static HandleTable *const table = new HandleTable;
  return *table;
}

}  // namespace

HandleLease HandleLease::unavailable(const char *reason) noexcept {
  HandleLease lease;
  lease.reason_ = reason;
  return lease;
}

HandleLease::HandleLease(std::shared_lock<std::shared_mutex> table_lock,
                         std::unique_lock<std::mutex> use_lock, xgemv_handle handle) noexcept
    : table_lock_(std::move(table_lock)), use_lock_(std::move(use_lock)), handle_(handle) {}

HandleLease acquire_xgemv_handle(const void *owner, cudaStream_t stream) noexcept {
  try {
    return handle_table().acquire(owner, stream);
  } catch (...) {  // allocation or lock failure: nothing was launched, cuBLAS can serve it
    return HandleLease::unavailable("drop-in out of memory");
  }
}

int release_xgemv_handles(const void *owner) noexcept {
  try {
    return handle_table().release(owner);
  } catch (...) {
    return 0;
  }
}

}  // namespace xgemv::cublas_dropin
