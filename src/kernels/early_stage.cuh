// Early start's staging of A: the loads a kernel issues before it waits for its predecessor go
// to shared memory with cp.async, so that they hold no registers across the wait (holding them
// in registers made the early kernels spill under the 64-register cap of their launch bounds).
#pragma once

#include "elements.cuh"

namespace xgemv::kernels {

// kLoads 16-byte slots per thread of a kThreads block, slot i of thread t at [i][t]: a warp's
// 16-byte accesses are contiguous (no bank conflicts). Each thread reads back only its own
// slots, so the completion of its own copies (wait_staged) is all the ordering needed, no
// barrier.
template <int kThreads, int kLoads>
struct EarlyStage {
  int4 slots[kLoads][kThreads];

  // Starts copying the 16 bytes at src (global, 16-byte aligned) into this thread's slot i
  // (through L2 only, as A is read once).
  __device__ __forceinline__ void stage(int i, const void *src) {
    copy16_async(&slots[i][threadIdx.x], src);
  }

  // This thread's slot i, once wait_staged has returned.
  __device__ __forceinline__ int4 staged(int i) const { return slots[i][threadIdx.x]; }
};

// Closes this thread's copies into one group (after its last stage call).
__device__ __forceinline__ void commit_staged() { commit_async_copies(); }

// Waits until this thread's copies have landed (a no-op when it staged none).
__device__ __forceinline__ void wait_staged() { wait_async_copies<0>(); }

}  // namespace xgemv::kernels
