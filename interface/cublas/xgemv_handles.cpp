#include "xgemv_handles.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

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
          return HandleLease(std::move(table_lock), std::move(use_lock), found->second->handle);
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
  // Creates the handle for `key`; returns why it could not, or nullptr. xgemv_create may run
  // while the stream is being captured (a stream first seen inside torch.cuda.graph, say): its
  // allocation leaves the capture alone. One creation at a time, the table looked at again under
  // it: a handle made twice would have to be destroyed, and its cudaFree would invalidate a
  // capture under way.
  const char *create(const HandleKey &key, cudaStream_t stream) {
    const std::lock_guard<std::mutex> creating(creation_);
    {
      const std::shared_lock<std::shared_mutex> table_lock(mutex_);
      if (slots_.count(key) != 0) return nullptr;  // another thread created it meanwhile
    }
    xgemv_handle created = nullptr;
    if (xgemv_create(&created) != XGEMV_STATUS_SUCCESS) {
      cudaGetLastError();
      return "xgemv handle creation failed";
    }
    xgemv_set_stream(created, stream);
    auto slot = std::make_unique<HandleSlot>(created);
    const std::unique_lock<std::shared_mutex> table_lock(mutex_);
    slots_.try_emplace(key, std::move(slot));
    return nullptr;
  }

  std::mutex creation_;  // taken before mutex_, never while holding it
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
