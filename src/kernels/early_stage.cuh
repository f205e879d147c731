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

  // Starts copying the 16 bytes at src (global, 16-byte aligned) into this thread's slot i.
  __device__ __forceinline__ void stage(int i, const void *src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // .cg: through L2 only, as A is read once.
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&slots[i][threadIdx.x]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst),
                 "l"(__cvta_generic_to_global(src))
                 : "memory");
#else
    slots[i][threadIdx.x] = load16_streaming(static_cast<const int4 *>(src));
#endif
  }

  // This thread's slot i, once wait_staged has returned.
  __device__ __forceinline__ int4 staged(int i) const { return slots[i][threadIdx.x]; }
};

// Closes this thread's copies into one group (after its last stage call).
__device__ __forceinline__ void commit_staged() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until this thread's copies have landed (a no-op when it staged none).
__device__ __forceinline__ void wait_staged() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}

}  // namespace xgemv::kernels
