#include "blas_routing.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

#include "core.hpp"
#include "next_blas.hpp"

namespace xgemv::blas {
namespace {

bool logging_enabled() {
  static const bool enabled = environment_flag("XGEMV_BLAS_LOG");
  return enabled;
}

void log_call(const char *entry, const char *server, const char *detail) {
  if (logging_enabled()) std::fprintf(stderr, "xgemv_blas: %s -> %s (%s)\n", entry, server, detail);
}

bool host_arrays_to_gpu() {
  static const bool to_gpu = [] {
    const char *value = environment_value("XGEMV_BLAS_HOST");
    return value != nullptr && std::strcmp(value, "gpu") == 0;
  }();
  return to_gpu;
}

// Where an array lives, as far as routing cares.
struct Residence {
  bool on_gpu = false;  // device or managed memory
  int device = -1;
};

Residence residence_of(const void *pointer) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();  // no GPU or no driver: host memory by definition
    return {};
  }
  if (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged)
    return {true, attributes.device};
  return {};  // pageable or pinned host memory
}

// The arrays a call reads or writes and where they are. A and x are not read when alpha == 0
// (Reference BLAS), so they may be anything then, and their residence is not asked.
struct Placement {
  bool reads_a_x;
  Residence a, x, y;

  bool any_on_gpu() const { return a.on_gpu || x.on_gpu || y.on_gpu; }
  bool all_on_gpu() const { return y.on_gpu && (!reads_a_x || (a.on_gpu && x.on_gpu)); }
  const char *gpu_route() const {
    if (all_on_gpu()) return "device arrays";
    return any_on_gpu() ? "device arrays, host arrays staged"
                        : "host arrays staged through the GPU";
  }
  // The device of the first array in device memory, or -1.
  int device() const {
    for (const Residence *array : {&a, &x, &y})
      if (array->on_gpu) return array->device;
    return -1;
  }
};

// The calling thread's xgemv handles, one per device, on the legacy default stream.
class ThreadHandles {
 public:
  ThreadHandles() = default;
  ThreadHandles(const ThreadHandles &) = delete;
  ThreadHandles &operator=(const ThreadHandles &) = delete;
  ~ThreadHandles() {
    for (const auto &[device, handle] : handles_) xgemv_destroy(handle);
  }

  // The handle of `device`, which must be current; created on first use.
  xgemv_handle on(int device) noexcept {
    for (const auto &[handle_device, handle] : handles_)
      if (handle_device == device) return handle;
    xgemv_handle created = nullptr;
    if (xgemv_create(&created) != XGEMV_STATUS_SUCCESS) return nullptr;
    try {
      handles_.emplace_back(device, created);
    } catch (...) {
      xgemv_destroy(created);
      return nullptr;
    }
    return created;
  }

 private:
  std::vector<std::pair<int, xgemv_handle>> handles_;
};

thread_local ThreadHandles thread_handles;

// Makes `device` current for a scope and restores the caller's device afterwards.
class DeviceScope {
 public:
  explicit DeviceScope(int device) : device_(device) {
    ok_ = cudaGetDevice(&previous_) == cudaSuccess &&
          (previous_ == device || cudaSetDevice(device) == cudaSuccess);
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;
  ~DeviceScope() {
    if (ok_ && previous_ != device_) cudaSetDevice(previous_);
  }
  bool ok() const { return ok_; }

 private:
  int device_, previous_ = -1;
  bool ok_;
};

// A strided host array: `rows` runs of `width` bytes, `pitch` bytes apart (a column-major matrix,
// or a vector with rows = its length and width = one element).
struct HostBlock {
  void *host;
  std::size_t width, rows, pitch;
};

template <class T>
HostBlock matrix_block(const GemvProblem &p) {
  return {const_cast<void *>(p.a.data), std::size_t(p.m) * sizeof(T), std::size_t(p.n),
          std::size_t(p.a.ld) * sizeof(T)};
}

// From the first element in memory, also for a negative increment: the packed copy keeps the
// memory order, so the call on it uses an increment of the same sign.
template <class T>
HostBlock vector_block(const void *v, int64_t length, int64_t inc) {
  return {const_cast<void *>(v), sizeof(T), std::size_t(length),
          std::size_t(inc < 0 ? -inc : inc) * sizeof(T)};
}

// Host arrays packed into one GPU allocation for the duration of one call.
class StagingArea {
 public:
  StagingArea() = default;
  StagingArea(const StagingArea &) = delete;
  StagingArea &operator=(const StagingArea &) = delete;
  ~StagingArea() { cudaFree(buffer_); }

  // Plans a packed copy of `block`; returns its index.
  int add(const HostBlock &block, bool copy_in, bool copy_out) {
    constexpr std::size_t kAlignment = 256;
    const std::size_t offset = (bytes_ + kAlignment - 1) / kAlignment * kAlignment;
    staged_[count_] = {block, offset, copy_in, copy_out};
    bytes_ = offset + block.width * block.rows;
    return count_++;
  }

  // Allocates and copies in what the call reads (synchronous copies).
  bool allocate_and_copy_in() {
    if (count_ == 0) return true;
    if (cudaMalloc(&buffer_, bytes_) != cudaSuccess) return false;
    for (int i = 0; i < count_; ++i) {
      const Staged &s = staged_[i];
      if (s.copy_in && cudaMemcpy2D(at(i), s.block.width, s.block.host, s.block.pitch,
                                    s.block.width, s.block.rows,
                                    cudaMemcpyHostToDevice) != cudaSuccess)
        return false;
    }
    return true;
  }

  // Copies back what the call wrote (synchronous: waits for the call on the legacy stream).
  bool copy_out() {
    for (int i = 0; i < count_; ++i) {
      const Staged &s = staged_[i];
      if (s.copy_out && cudaMemcpy2D(s.block.host, s.block.pitch, at(i), s.block.width,
                                     s.block.width, s.block.rows,
                                     cudaMemcpyDeviceToHost) != cudaSuccess)
        return false;
    }
    return true;
  }

  // The packed copy of block `index`, or nullptr for -1 (not staged).
  void *device(int index) const { return index < 0 ? nullptr : at(index); }

 private:
  struct Staged {
    HostBlock block;
    std::size_t offset;
    bool copy_in, copy_out;
  };
  void *at(int index) const { return static_cast<char *>(buffer_) + staged_[index].offset; }

  std::array<Staged, 3> staged_{};
  int count_ = 0;
  std::size_t bytes_ = 0;
  void *buffer_ = nullptr;
};

// Why a GPU run failed (nullptr: it did not), and whether y may have been written by then.
struct GpuFailure {
  const char *reason = nullptr;
  bool y_touched = false;
};

GpuFailure refused(const char *reason) {
  cudaGetLastError();  // our CUDA error is not the caller's
  return {reason, false};
}

// Runs the call through the core, staging host arrays.
template <class T>
GpuFailure run_on_gpu(const CheckedProblem &checked, const Placement &where) {
  const GemvProblem &p = *checked;
  int device = where.device();
  if (device < 0 && cudaGetDevice(&device) != cudaSuccess) return refused("no usable GPU");
  const DeviceScope scope(device);
  if (!scope.ok()) return refused("cannot make the arrays' device current");
  const xgemv_handle handle = thread_handles.on(device);
  if (handle == nullptr) return refused("cannot create an xgemv handle");

  StagingArea staging;
  const bool stage_a = where.reads_a_x && !where.a.on_gpu;
  const bool stage_x = where.reads_a_x && !where.x.on_gpu;
  const bool stage_y = !where.y.on_gpu;
  // y is not read when beta == 0 (its NaN must not leak in): no copy in then.
  const bool reads_y = *static_cast<const T *>(p.beta) != T(0);
  const int a_index = stage_a ? staging.add(matrix_block<T>(p), true, false) : -1;
  const int x_index =
      stage_x ? staging.add(vector_block<T>(p.x.data, p.x_length(), p.x.inc), true, false) : -1;
  const int y_index =
      stage_y ? staging.add(vector_block<T>(p.y.data, p.y_length(), p.y.inc), reads_y, true) : -1;
  if (!staging.allocate_and_copy_in()) return refused("cannot stage the host arrays on the GPU");

  const CheckedProblem staged =
      checked.on_packed_copies(staging.device(a_index), staging.device(x_index),
                               staging.device(y_index));
  // A failed launch runs nothing.
  if (const xgemv_status status = xgemv::run(handle, staged); status != XGEMV_STATUS_SUCCESS)
    return refused(xgemv_status_string(status));
  if (!staging.copy_out() || cudaStreamSynchronize(nullptr) != cudaSuccess) {
    cudaGetLastError();
    return {"the GPU reported an error", true};
  }
  return {};
}

// Hands the call to the next BLAS; false if there is none.
template <class T>
bool run_on_next_blas(const char *entry, const GemvProblem &p, const char *why) {
  const NextBlas &next = next_blas();
  const FortranGemv<T> gemv = next.gemv<T>();
  if (gemv == nullptr) return false;
  // The BLAS ABI's own 32-bit arguments, as the caller passed them.
  const int m = int(p.m), n = int(p.n), lda = int(p.a.ld), incx = int(p.x.inc),
            incy = int(p.y.inc);
  gemv(&p.trans, &m, &n, static_cast<const T *>(p.alpha), static_cast<const T *>(p.a.data), &lda,
       static_cast<const T *>(p.x.data), &incx, static_cast<const T *>(p.beta),
       static_cast<T *>(p.y.data), &incy, 1);
  if (logging_enabled()) {
    char detail[512];
    std::snprintf(detail, sizeof detail, "%s; %s", next.library, why);
    log_call(entry, "host BLAS", detail);
  }
  return true;
}

}  // namespace

template <class T>
void run_gemv(const char *entry, const CheckedProblem &checked) noexcept {
  // Quick return (Reference BLAS): nothing is read, not even to ask where it lives.
  if (is_quick_return(checked, /*device_scalars=*/false)) return;
  const GemvProblem &p = *checked;
  const bool reads_a_x = reads_matrix_and_x(checked, /*device_scalars=*/false);
  const Placement where{reads_a_x, reads_a_x ? residence_of(p.a.data) : Residence{},
                        reads_a_x ? residence_of(p.x.data) : Residence{}, residence_of(p.y.data)};
  const bool host_only = !where.any_on_gpu();
  if (host_only && !host_arrays_to_gpu() && run_on_next_blas<T>(entry, p, "host arrays")) return;

  const GpuFailure failure = run_on_gpu<T>(checked, where);
  if (failure.reason == nullptr) {
    log_call(entry, "xgemv", where.gpu_route());
    return;
  }
  // Host arrays can still go to the CPU (XGEMV_BLAS_HOST=gpu on a machine without a GPU).
  if (host_only && !failure.y_touched && run_on_next_blas<T>(entry, p, failure.reason)) return;
  std::fprintf(stderr, "xgemv_blas: %s: y not computed: %s\n", entry, failure.reason);
}

template void run_gemv<float>(const char *, const CheckedProblem &) noexcept;
template void run_gemv<double>(const char *, const CheckedProblem &) noexcept;

}  // namespace xgemv::blas
