// Kernel arguments and the deterministic combine of split reductions.
#pragma once

#include <cstdint>

#include "elements.cuh"

namespace xgemv::kernels {

// Everything a GEMV kernel needs, by value. m, n are BLAS's (A is m x n); the pointers are the
// caller's (first element in memory, also for negative increments).
template <class TA, class TY, class S>
struct GemvParams {
  int64_t m, n;
  const TA *a;
  int64_t lda, stride_a;
  const TA *x;
  int64_t incx, stride_x;
  TY *y;
  int64_t incy, stride_y;
  const TA *const *a_array;  // pointer-array batch form when not null
  const TA *const *x_array;
  TY *const *y_array;
  int64_t batch_count;
  S alpha_value, beta_value;  // host scalars, used when the pointers are null
  const S *alpha_ptr, *beta_ptr;
  // Split of the reduction axis across grid.y; one split means no workspace traffic.
  int ksplit;
  int64_t split_len;
  S *partials;
  unsigned *tile_counters;

  __device__ S alpha() const { return alpha_ptr ? *alpha_ptr : alpha_value; }
  __device__ S beta() const { return beta_ptr ? *beta_ptr : beta_value; }

  // BLAS's start-point rule, applied once: logical element 0 of a vector with a negative
  // increment sits at the far end.
  template <class T>
  static __device__ T *logical_start(T *p, int64_t len, int64_t inc) {
    return inc < 0 ? p - (len - 1) * inc : p;
  }
  __device__ const TA *a_of(int64_t b) const { return a_array ? a_array[b] : a + b * stride_a; }
  __device__ const TA *x_of(int64_t b, int64_t len) const {
    return logical_start(x_array ? x_array[b] : x + b * stride_x, len, incx);
  }
  __device__ TY *y_of(int64_t b, int64_t len) const {
    return logical_start(y_array ? y_array[b] : y + b * stride_y, len, incy);
  }
};

// Sum of the partials p[s * stride] for s = first, first + step, ... < ksplit, in that order;
// four independent loads in flight so the combine is not bound by L2 latency.
template <class S>
__device__ __forceinline__ S sum_splits(const S *p, int64_t stride, int first, int step, int ksplit) {
  S total = S(0);
  int s = first;
  for (; s + 3 * step < ksplit; s += 4 * step) {
    const S v0 = __ldcg(p + s * stride), v1 = __ldcg(p + (s + step) * stride);
    const S v2 = __ldcg(p + (s + 2 * step) * stride), v3 = __ldcg(p + (s + 3 * step) * stride);
    total += v0;
    total += v1;
    total += v2;
    total += v3;
  }
  for (; s < ksplit; s += step) total += __ldcg(p + s * stride);
  return total;
}

// Split-reduction combine for one output tile of kTileOutputs values. On entry `values`
// (shared memory) holds this block's partial sums. Every split block publishes them; the last
// block to arrive (per-tile counter) sums all splits in a fixed order, which makes the result
// independent of scheduling, leaves the totals in `values`, resets the counter for the next
// call and returns true. Every thread of the block must call it.
template <int kTileOutputs, int kBlockThreads, class S>
__device__ bool combine_splits(S *partials, unsigned *tile_counters, int64_t tile, int ksplit,
                               int split, S *values) {
  // Short tiles let several threads share one output's splits (then summed in helper order).
  constexpr int kHelpers = kTileOutputs >= kBlockThreads ? 1 : kBlockThreads / kTileOutputs;
  __shared__ bool is_last;
  __shared__ S helper_sums[kHelpers > 1 ? kBlockThreads : 1];
  S *tile_partials = partials + tile * ksplit * kTileOutputs;
  for (int t = threadIdx.x; t < kTileOutputs; t += kBlockThreads)
    tile_partials[split * kTileOutputs + t] = values[t];
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(&tile_counters[tile], 1u) == unsigned(ksplit - 1);
  __syncthreads();
  if (!is_last) return false;
  __threadfence();
  if constexpr (kHelpers == 1) {
    for (int t = threadIdx.x; t < kTileOutputs; t += kBlockThreads)
      values[t] = sum_splits(tile_partials + t, kTileOutputs, 0, 1, ksplit);
  } else {
    const int output = threadIdx.x % kTileOutputs, helper = threadIdx.x / kTileOutputs;
    helper_sums[threadIdx.x] = sum_splits(tile_partials + output, kTileOutputs, helper, kHelpers, ksplit);
    __syncthreads();
    if (threadIdx.x < kTileOutputs) {
      S total = S(0);
#pragma unroll
      for (int h = 0; h < kHelpers; ++h) total += helper_sums[h * kTileOutputs + threadIdx.x];
      values[threadIdx.x] = total;
    }
  }
  if (threadIdx.x == 0) tile_counters[tile] = 0u;
  __syncthreads();
  return true;
}

}  // namespace xgemv::kernels
