// The launch layer, host side: what plans read off the device, the plan of one launch (grid,
// block, split, shared memory), where and how it launches, and the fit and alignment tests plans
// share. Below kernels/ and variants/: it knows problems and plans, no kernel.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "launch/split_plan.hpp"
#include "problem.hpp"

namespace xgemv {

// What plans read off the device, once per handle.
struct DeviceLimits {
  int sm_count;
  int block_shared_bytes;  // the most shared memory a block may opt in to
};

// Where and how a call launches, from the handle and the call's options.
struct LaunchContext {
  cudaStream_t stream;
  SplitWorkspace workspace;
  bool device_scalars;  // alpha and beta are device pointers
  // Programmatic dependent launch (compute capability 9.0+): the next kernel on the stream may
  // launch while this one runs; every kernel waits for the one before it before reading what
  // that one may write.
  bool programmatic;
  bool early_start;  // stream A before that wait (the handle's early-start mode)
};

struct LaunchPlan {
  dim3 grid, block;
  SplitPlan split;
  unsigned shared_bytes = 0;  // dynamic shared memory a block
};

// A kernel that takes dynamic shared memory keeps its static shared memory under this (it
// asserts so), so that its plan can tell whether a device fits it and drop the dynamic part
// where not.
inline constexpr unsigned kStaticSharedBytesBound = 16u << 10;
// The shared memory a block may take without opting in, static and dynamic together.
inline constexpr unsigned kDefaultBlockSharedBytes = 48u << 10;

inline bool fits_device(const LaunchPlan &plan, const DeviceLimits &device) {
  return plan.shared_bytes == 0 ||
         int64_t(plan.shared_bytes) + kStaticSharedBytesBound <= device.block_shared_bytes;
}

// grid.z: batch items, each block looping over every gridDim.z-th one past the grid limit.
inline unsigned grid_z(int64_t batch_count) {
  return unsigned(batch_count < 65535 ? batch_count : 65535);
}

// Elements of A in one 16-byte load.
constexpr int a_elements_per_16_bytes(const GemvProblem &problem) {
  return 16 / element_bytes(problem.types.a);
}

// Whether every column of A starts 16-byte aligned in every batch item (known on the host unless
// A comes as pointer arrays): columns then move in 16-byte loads from their first element.
inline bool a_columns_aligned_16(const GemvProblem &problem) {
  const int64_t bytes = element_bytes(problem.types.a);
  return !problem.pointer_arrays() && reinterpret_cast<uintptr_t>(problem.a.data) % 16 == 0 &&
         problem.a.ld * bytes % 16 == 0 &&
         (problem.batch_count == 1 || problem.a.stride * bytes % 16 == 0);
}

}  // namespace xgemv
