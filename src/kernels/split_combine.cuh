// The deterministic combine of a split reduction (device side of launch/split_plan.hpp): every split
// block publishes its partial sums, the last to arrive adds them up in a fixed order.
#pragma once

#include <cstdint>

#include <cuda/atomic>

#include "launch/split_plan.hpp"

namespace xgemv::kernels {

// Sum of the partials p[s * stride] for s = first, first + step, ... < ksplit, in that order:
// kDeepRounds of them loaded before any is added while that many are left, then four (the
// combine waits on L2 once per round), then one by one.
template <int kDeepRounds, class S>
__device__ __forceinline__ S sum_splits(const S *p, int64_t stride, int first, int step, int ksplit) {
  S total = S(0);
  int s = first;
  if constexpr (kDeepRounds > 0) {
    for (; s + (kDeepRounds - 1) * step < ksplit; s += kDeepRounds * step) {
      S v[kDeepRounds];
#pragma unroll
      for (int i = 0; i < kDeepRounds; ++i) v[i] = __ldcg(p + (s + i * step) * stride);
#pragma unroll
      for (int i = 0; i < kDeepRounds; ++i) total += v[i];
    }
  }
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

// The deep rounds of the op N variants, whose combines can be long (a 16-bit 64 x 1048576 tile
// split 512 ways: each of its threads adds 128 partials, 8 rounds of 16 rather than 32 of 4):
// 64 bytes of partials a thread. ptxas gives them the same registers and spills as rounds of
// four; the several-vector kernels, at their register caps, spill with them and keep four.
template <class S>
inline constexpr int kDeepCombineRounds = 64 / int(sizeof(S));

// A block's share of a split plan: its output tile, its split of that tile's reduction (of
// `count`, `length` elements each), and the tile's place among a batch item's tiles (its
// counter and partials in the workspace): from the block's grid position (grid.y's split), or
// for a block of a split tail, from its place on grid.x.
struct BlockSplit {
  int64_t tile;
  int split, count;
  int64_t length;
  int64_t combine_tile;
};
__device__ __forceinline__ BlockSplit block_split(const SplitPlan &plan) {
  const SplitTail &tail = plan.tail;
  if (tail.count == 1 || blockIdx.x < unsigned(tail.first_tile))
    return {int64_t(blockIdx.x), int(blockIdx.y), plan.count, plan.length, int64_t(blockIdx.x)};
  const unsigned in_tail = blockIdx.x - unsigned(tail.first_tile);
  const unsigned tile = in_tail / unsigned(tail.count);
  return {tail.first_tile + int64_t(tile), int(in_tail - tile * unsigned(tail.count)), tail.count,
          tail.length, int64_t(tile)};
}

// Split-reduction combine for one output tile of kTileOutputs values. On entry `values`
// (shared memory) holds this block's partial sums. Every split block publishes them; the last
// block to arrive (per-tile counter) sums all splits in a fixed order, which makes the result
// independent of scheduling, leaves the totals in `values`, resets the counter for the next
// call and returns true. Only the first values_used values take part (a several-vector tile
// whose pass carries fewer vectors leaves the rest out of the traffic). Every thread of the
// block must call it.
// The arrival is one acquire-release atomic by thread 0 after the block's barrier: the barrier
// orders the block's partial stores before it, its release publishes them to the block that
// arrives last, whose acquire (and barrier) orders its reads of them after. A fence a thread
// (sequentially consistent, each waiting for its own stores to reach L2) is not needed for
// that, and it sat on the critical path of every split call's last block.
template <int kTileOutputs, int kBlockThreads, int kDeepRounds = 0, class S>
__device__ bool combine_splits(const SplitWorkspace &workspace, int64_t tile, int ksplit, int split,
                               S *values, int values_used = kTileOutputs) {
  // Short tiles let several threads share one output's splits (then summed in helper order).
  constexpr int kHelpers = kTileOutputs >= kBlockThreads ? 1 : kBlockThreads / kTileOutputs;
  __shared__ bool is_last;
  __shared__ S helper_sums[kHelpers > 1 ? kBlockThreads : 1];
  S *tile_partials = static_cast<S *>(workspace.partials) + tile * ksplit * kTileOutputs;
  unsigned *tile_counters = workspace.tile_counters;
  for (int t = threadIdx.x; t < values_used; t += kBlockThreads)
    tile_partials[split * kTileOutputs + t] = values[t];
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> arrivals(tile_counters[tile]);
    is_last = arrivals.fetch_add(1u, cuda::memory_order_acq_rel) == unsigned(ksplit - 1);
  }
  __syncthreads();
  if (!is_last) return false;
  if constexpr (kHelpers == 1) {
    for (int t = threadIdx.x; t < values_used; t += kBlockThreads)
      values[t] = sum_splits<kDeepRounds>(tile_partials + t, kTileOutputs, 0, 1, ksplit);
  } else {
    const int output = threadIdx.x % kTileOutputs, helper = threadIdx.x / kTileOutputs;
    if (output < values_used)
      helper_sums[threadIdx.x] =
          sum_splits<kDeepRounds>(tile_partials + output, kTileOutputs, helper, kHelpers, ksplit);
    __syncthreads();
    if (threadIdx.x < values_used) {
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
