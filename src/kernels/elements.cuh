// Loading and widening, shared by every GEMV kernel: element types to the accumulator type,
// 16-byte loads of A (streamed once) and of x (cached), the funnel shift and the lane exchange
// of data shifted against its 16-byte blocks (op T's x, op N's misaligned columns), 16-byte
// copies to shared memory that hold no registers. Every element type moves in 16-byte units,
// kElemsPer16B<T> elements each (16 for 8-bit types).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace xgemv::kernels {

// Widening to the accumulator type S (fp32 for 16-bit storage and fp32, fp64 for fp64); pairs of
// 16-bit values in one instruction.
__device__ __forceinline__ float to_acc(float v) { return v; }
__device__ __forceinline__ double to_acc(double v) { return v; }
__device__ __forceinline__ float to_acc(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float2 to_acc(__half2 v) { return __half22float2(v); }
__device__ __forceinline__ float2 to_acc(__nv_bfloat162 v) { return __bfloat1622float2(v); }

template <class T, class S>
__device__ __forceinline__ T from_acc(S v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return static_cast<T>(v);
}

// Elements in one 16-byte load: the unit every kernel moves A in.
template <class T>
inline constexpr int kElemsPer16B = 16 / static_cast<int>(sizeof(T));

__device__ __forceinline__ bool is_aligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// 16 bytes of T widened to the accumulator type. 16-bit pairs go through the packed
// conversions (one instruction per pair), which keeps the conversion off the critical path.
template <class T, class S>
__device__ __forceinline__ void widen16(const int4 raw, S (&out)[kElemsPer16B<T>]) {
  const unsigned words[4] = {unsigned(raw.x), unsigned(raw.y), unsigned(raw.z), unsigned(raw.w)};
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      Pair pair;
      memcpy(&pair, &words[w], sizeof(pair));
      const float2 f = to_acc(pair);
      out[2 * w] = f.x;
      out[2 * w + 1] = f.y;
    }
  } else {
    memcpy(out, words, sizeof(words));
  }
}

// 16 bytes of T as loaded; widened only where consumed so that loads in flight cost 4
// registers each, whatever T is.
template <class T>
__device__ __forceinline__ int4 pack16(const T (&v)[kElemsPer16B<T>]) {
  int4 raw;
  memcpy(&raw, v, sizeof(raw));
  return raw;
}

// A is streamed exactly once: evict-first loads keep x (reused by every output) in cache.
template <class T>
__device__ __forceinline__ int4 load16_streaming(const T *p) {
  return __ldcs(reinterpret_cast<const int4 *>(p));
}

template <class T>
__device__ __forceinline__ int4 load16_cached(const T *p) {
  return __ldg(reinterpret_cast<const int4 *>(p));
}

// Copies the 16 bytes at src (global) to dst (shared), both 16-byte aligned, holding no
// registers: cp.async through L2 only (a plain copy before sm_80). The copy has landed once
// wait_async_copies has returned in the thread that issued it.
__device__ __forceinline__ void copy16_async(void *dst, const void *src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(__cvta_generic_to_global(src))
               : "memory");
#else
  *static_cast<int4 *>(dst) = __ldcg(static_cast<const int4 *>(src));
#endif
}

// A ring of 16-byte slots in shared memory that each thread of a kThreads block fills with its
// own copies (copy16_async) and reads back itself, so the completion of its own copy groups is
// the only ordering it needs: no barrier, and the bytes in flight hold no registers. kStages
// stages of kSlots slots a thread; slot (stage, i) of thread t at base[(stage * kSlots + i) *
// kThreads + t] (a warp's accesses contiguous). A thread refills a stage only after reading it,
// in program order.
template <int kThreads, int kSlots, int kStages>
struct ThreadRing {
  static_assert(kStages >= 2);
  static constexpr unsigned kBytes = 16u * kThreads * kSlots * kStages;
  int4 *base;  // kBytes of shared memory

  __device__ __forceinline__ int4 &slot(int stage, int i) const {
    return base[(stage * kSlots + i) * kThreads + threadIdx.x];
  }
  __device__ __forceinline__ static int next(int stage) {
    return stage == kStages - 1 ? 0 : stage + 1;
  }
  __device__ __forceinline__ static int before(int stage) {
    return stage == 0 ? kStages - 1 : stage - 1;
  }
};

// The dynamic shared memory of this launch, in bytes.
__device__ __forceinline__ unsigned dynamic_shared_bytes() {
  unsigned bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

// Closes this thread's copies issued since the last commit into one group.
__device__ __forceinline__ void commit_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most kPending of this thread's committed groups, the newest, are in flight.
template <int kPending>
__device__ __forceinline__ void wait_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

// Word q + i of the 8 words w0..w7, q in [0, 4): a select chain, not an indexed (local) array.
__device__ __forceinline__ unsigned word_at(const unsigned (&w)[8], int q, int i) {
  return q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
}

// The 16 bytes that start `offset` bytes (a multiple of sizeof(T)) into the aligned block lo, hi
// being the block after it: whole words selected, then funnel-shifted for 16-bit T.
template <class T>
__device__ __forceinline__ int4 funnel16(const int4 lo, const int4 hi, unsigned offset) {
  const unsigned w[8] = {unsigned(lo.x), unsigned(lo.y), unsigned(lo.z), unsigned(lo.w),
                         unsigned(hi.x), unsigned(hi.y), unsigned(hi.z), unsigned(hi.w)};
  const int q = int(offset / 4);
  unsigned out[4];
  if constexpr (sizeof(T) >= 4) {
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = word_at(w, q, i);
  } else {
    const unsigned bits = (offset & 3u) * 8u;
#pragma unroll
    for (int i = 0; i < 4; ++i)
      out[i] = __funnelshift_r(word_at(w, q, i), word_at(w, q, i + 1), bits);
  }
  return make_int4(int(out[0]), int(out[1]), int(out[2]), int(out[3]));
}

// The lanes of this lane's group in its warp (groups are aligned within warps).
template <int kGroup>
__device__ __forceinline__ unsigned group_lane_mask() {
  if constexpr (kGroup == 32) return 0xffffffffu;
  else return ((1u << kGroup) - 1u) << ((threadIdx.x & 31u) & ~unsigned(kGroup - 1));
}

// The 16 bytes that lane `source` (of a segment of `width` lanes) holds, for each lane in mask.
__device__ __forceinline__ int4 shfl16(unsigned mask, const int4 v, int source, int width) {
  return make_int4(__shfl_sync(mask, v.x, source, width), __shfl_sync(mask, v.y, source, width),
                   __shfl_sync(mask, v.z, source, width), __shfl_sync(mask, v.w, source, width));
}

}  // namespace xgemv::kernels
