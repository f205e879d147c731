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

// Split-reduction combine for one output tile of kTileOutputs values: every split block
// publishes its partials; the last block to arrive (per-tile counter) sums them in split order,
// which makes the result independent of scheduling, and resets the counter for the next call.
// Returns true in the block that must write the outputs; `total` is then valid for
// threadIdx.x < kTileOutputs. Every thread of the block must call it.
template <int kTileOutputs, class S>
__device__ bool combine_splits(S *partials, unsigned *tile_counters, int64_t tile, int ksplit,
                               int split, const S *block_values, S &total) {
  __shared__ bool is_last;
  S *tile_partials = partials + tile * ksplit * kTileOutputs;
  for (int t = threadIdx.x; t < kTileOutputs; t += blockDim.x)
    tile_partials[split * kTileOutputs + t] = block_values[t];
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(&tile_counters[tile], 1u) == unsigned(ksplit - 1);
  __syncthreads();
  const bool last = is_last;
  if (last) {
    __threadfence();
    if (threadIdx.x < kTileOutputs) {
      total = S(0);
      for (int s = 0; s < ksplit; ++s) total += __ldcg(&tile_partials[s * kTileOutputs + threadIdx.x]);
    }
    if (threadIdx.x == 0) tile_counters[tile] = 0u;
  }
  __syncthreads();  // is_last and block_values are reused by the next batch item
  return last;
}

}  // namespace xgemv::kernels
