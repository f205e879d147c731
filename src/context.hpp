// The handle behind xgemv_handle. Internal; the ABI layers see only the opaque pointer.
#pragma once

#include <cstddef>
#include <cstdint>

#include <xgemv/xgemv.h>

struct xgemv_context {
  int device = 0;    // the device current at creation; calls must run with it current
  int sm_count = 0;  // cached once: dispatch sizes grids from it
  cudaStream_t stream = nullptr;
  xgemv_pointer_mode pointer_mode = XGEMV_POINTER_MODE_HOST;
  // Workspace for split reductions: per-split partial sums, combined in a fixed order by the
  // last block of each output tile, which it finds through a per-tile arrival counter. The
  // counters are zero between calls (the last block resets its own), so one zeroing at
  // creation is enough.
  void *partials = nullptr;
  std::size_t partial_bytes = 0;
  unsigned *tile_counters = nullptr;
  int64_t tile_counter_count = 0;
};

namespace xgemv {
// Sizes of the workspace allocated by xgemv_create.
inline constexpr std::size_t kPartialBytes = std::size_t(8) << 20;
inline constexpr int64_t kTileCounters = int64_t(1) << 16;
}  // namespace xgemv
