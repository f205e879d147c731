// What the routed kernels (variants/moe_mma.cuh, moe_qmma.cuh) share: a block's share of a
// mixture-of-experts launch decoded from the expert ids on the device, the vectors of its
// pairs, the up projection's activations, and the down projection's ordered sum of a token's
// experts. A launch's grid is (output tiles, expert slots): the block of slot s computes the
// s-th distinct valid expert of the launch (ascending ids) for all its pairs (t, j), so every
// chosen expert is read once, whatever number of tokens chose it.
#pragma once

#include <cuda/atomic>

#include "kernels/elements.cuh"
#include "kernels/kernel_args.cuh"
#include "launch/routed_launch.hpp"

namespace xgemv::kernels {

// A block's share of a routed launch, decoded into shared memory.
struct RoutedBlock {
  short ids[kMaxRoutedPairs];      // the launch's expert ids (pair t * top_k + j), -1 for none
  short pairs[kMaxRoutedPairs];    // the block's pairs, ascending
  unsigned chosen[kMaxExperts / 32];  // the experts any pair chose, a bit each
  int expert;                      // the block's expert, -1 for a slot past the distinct ones
  int count;                       // its pairs
  int finished_count;              // down: the tokens this block completes on a tile
  short finished[kMaxRoutedPairs];
};

// Exclusive prefix sum of v over the warp, and the warp's total.
__device__ __forceinline__ int warp_exclusive_sum(int v, int &total) {
  const int lane = threadIdx.x % 32;
  int inclusive = v;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const int other = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += other;
  }
  total = __shfl_sync(0xffffffffu, inclusive, 31);
  return inclusive - v;
}

// Expert id i of the launch, or -1 where it lies outside [0, experts).
__device__ __forceinline__ int routed_id(const RoutedOperand &r, int64_t i) {
  const int64_t id = r.ids_64 ? __ldg(static_cast<const int64_t *>(r.ids) + i)
                              : int64_t(__ldg(static_cast<const int32_t *>(r.ids) + i));
  return id >= 0 && id < r.experts ? int(id) : -1;
}

// Decodes slot `slot` of the launch into `block` (every thread of the block calls it; a barrier
// ends it). Every thread loads its share of the ids at once (one round trip to L2, not one per
// id), marks their experts, then warp 0 finds the slot's expert and its pairs. The ids are the
// kernel before's: call after waiting for it.
template <int kThreads>
__device__ __forceinline__ void decode_routing(const RoutedOperand &r, int slot,
                                               RoutedBlock &block) {
  static_assert(kMaxRoutedPairs % kThreads == 0, "whole shares of the ids");
  constexpr int kIdsPerThread = kMaxRoutedPairs / kThreads;
  const int pairs = int(r.tokens) * r.top_k;
  const int words = int((r.experts + 31) / 32);
  int ids[kIdsPerThread];
#pragma unroll
  for (int k = 0; k < kIdsPerThread; ++k) {
    const int i = int(threadIdx.x) + k * kThreads;
    ids[k] = i < pairs ? routed_id(r, i) : -1;
  }
  for (int w = threadIdx.x; w < words; w += kThreads) block.chosen[w] = 0u;
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kIdsPerThread; ++k) {
    const int i = int(threadIdx.x) + k * kThreads;
    if (i >= pairs) break;
    block.ids[i] = short(ids[k]);
    if (ids[k] >= 0) atomicOr(&block.chosen[ids[k] / 32], 1u << (ids[k] % 32));
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    // The slot-th chosen expert, ascending: each lane counts its words' bits.
    const int per_lane = (words + 31) / 32, first_word = lane * per_lane;
    int bits = 0;
    for (int w = first_word; w < min(words, first_word + per_lane); ++w)
      bits += __popc(block.chosen[w]);
    int distinct = 0;
    const int before = warp_exclusive_sum(bits, distinct);
    int expert = -1;
    const bool mine = slot < distinct && before <= slot && slot < before + bits;
    if (mine) {
      int left = slot - before;
      for (int w = first_word;; ++w) {
        const int word_bits = __popc(block.chosen[w]);
        if (left < word_bits) {
          unsigned word = block.chosen[w];
          for (int b = 0; b < left; ++b) word &= word - 1;  // drop the lowest `left` bits
          expert = w * 32 + __ffs(word) - 1;
          break;
        }
        left -= word_bits;
      }
    }
    const unsigned owner = __ballot_sync(0xffffffffu, mine);
    expert = owner != 0u ? __shfl_sync(0xffffffffu, expert, __ffs(owner) - 1) : -1;
    // Its pairs in ascending order: each lane a contiguous run of the ids.
    int count = 0;
    if (expert >= 0) {
      const int per = (pairs + 31) / 32, begin = lane * per, end = min(pairs, begin + per);
      int matches = 0;
      for (int i = begin; i < end; ++i) matches += block.ids[i] == expert;
      int at = warp_exclusive_sum(matches, count);
      for (int i = begin; i < end; ++i)
        if (block.ids[i] == expert) block.pairs[at++] = short(i);
    }
    if (lane == 0) {
      block.expert = expert;
      block.count = count;
    }
  }
  __syncthreads();
}

// The vectors of a block's pairs as the tensor-core kernels read them (StridedVectors'
// members): pair p's vector at x + (p / divisor) * ld (up: the token's x, divisor top_k; down:
// the pair's h, divisor 1); those past `count` read the last one.
template <class T>
struct PairVectors {
  const T *x;
  int64_t ld;
  const short *pairs;
  int count, divisor;
  static constexpr int64_t inc = 1;
  __device__ __forceinline__ const T *column(int c) const {
    return x + int64_t(pairs[min(c, count - 1)] / divisor) * ld;
  }
  __device__ __forceinline__ bool aligned(int bytes) const { return vectors_aligned(x, ld, bytes); }
};

// The rows of the up projection that one output needs, and its value.
struct UpRows {
  int64_t gate, up;  // up: -1 for the identity
};
// Output i of the up projection (h index) of a projection with `rows` rows of W.
__device__ __forceinline__ UpRows up_rows(MoeActivation activation, int64_t rows, int64_t i) {
  switch (activation) {
    case MoeActivation::kIdentity: return {i, -1};
    case MoeActivation::kSwiglu: return {i, rows / 2 + i};
    default: return {2 * i, 2 * i + 1};  // interleaved
  }
}

// h of output gate g and up u (fp32, biases added), NaN propagating through the clamps.
__device__ __forceinline__ float activate(const RoutedOperand &r, float g, float u) {
  switch (r.activation) {
    case MoeActivation::kIdentity: return g;
    case MoeActivation::kSwigluClamped: {
      g = g > r.limit ? r.limit : g;
      u = u > r.limit ? r.limit : u < -r.limit ? -r.limit : u;
      return (u + 1.0f) * (g / (1.0f + expf(-r.alpha * g)));
    }
    default: return g / (1.0f + expf(-g)) * u;
  }
}

// Where a routed block's outputs are among the kRows local rows of its sums (value
// c * kRows + row, vector c): outputs first .. first + count - 1 of the call (h indices of the up
// projection, rows of W otherwise); a SwiGLU's output m takes its gate from local row
// m * gate_step and its up from that row + up_offset, other outputs m local row m.
struct RoutedRows {
  int64_t first;
  int count;
  int gate_step, up_offset;
};

// The end of a pass of a routed block over its pairs first .. first + vectors - 1, whose
// block-summed values are `sums`: the expert's bias added in fp32, then the up projection's
// activation and h (rounded once), or the down projection's fp32 partials.
template <class TY, int kThreads, int kRows>
__device__ __forceinline__ void store_routed_pass(const GemvProblem &p, const RoutedBlock &block,
                                                  int first, int vectors, const float *sums,
                                                  const RoutedRows &rows, float *partials) {
  const RoutedOperand &r = p.routing;
  const TY *bias = r.expert_bias != nullptr
                       ? static_cast<const TY *>(r.expert_bias) + int64_t(block.expert) * p.n
                       : nullptr;
  const bool swiglu = !r.down && r.activation != MoeActivation::kIdentity;
  TY *y = static_cast<TY *>(p.y.data);
  for (int i = threadIdx.x; i < vectors * rows.count; i += kThreads) {
    const int c = i / rows.count, m = i % rows.count;
    const int64_t o = rows.first + m, pair = block.pairs[first + c];
    const float *values = sums + c * kRows;
    if (swiglu) {
      if (o >= p.n / 2) continue;
      float g = values[m * rows.gate_step], u = values[m * rows.gate_step + rows.up_offset];
      if (bias != nullptr) {
        const UpRows at = up_rows(r.activation, p.n, o);
        g += to_acc(bias[at.gate]);
        u += to_acc(bias[at.up]);
      }
      y[pair * p.y.ld + o] = from_acc<TY>(activate(r, g, u));
    } else {
      if (o >= p.n) continue;
      float v = values[m];
      if (bias != nullptr) v += to_acc(bias[o]);
      if (r.down)
        partials[pair * p.n + o] = v;
      else
        y[pair * p.y.ld + o] = from_acc<TY>(v);
    }
  }
}

// Valid experts of token t (its pairs that arrive at its sum).
__device__ __forceinline__ int valid_pairs(const RoutedBlock &block, int t, int top_k) {
  int valid = 0;
  for (int j = 0; j < top_k; ++j) valid += block.ids[t * top_k + j] >= 0;
  return valid;
}

// Down, after the block's pairs' sums (fp32, bias added) are in `partials` (pair p's output o
// at partials[p * outputs + o]): each token of the block's pairs arrives at its counter of this
// tile with its number of pairs here; the block whose arrival completes a token (all its valid
// pairs in) adds its terms weights[t, j] * partial in the order j = 0 .. top_k - 1, then y[t]
// (accumulate), rounds once and resets the counter. The arrival is one acquire-release atomic
// per token after the block's barrier, as in the split combine (split_combine.cuh). Every
// thread calls it.
template <class TY, int kThreads, int kTileOutputs>
__device__ __forceinline__ void finish_tokens(const RoutedOperand &r, RoutedBlock &block,
                                              const float *partials, unsigned *counters,
                                              int64_t tile, int64_t tiles, int64_t outputs,
                                              TY *y, int64_t ldy) {
  // The last tile's finish read the count before this tile's passes' barriers.
  if (threadIdx.x == 0) block.finished_count = 0;
  __syncthreads();  // every partial of the block is stored
  for (int i = threadIdx.x; i < block.count; i += kThreads) {
    const int t = block.pairs[i] / r.top_k;
    if (i > 0 && block.pairs[i - 1] / r.top_k == t) continue;  // not the first of its token
    int run = 1;
    while (i + run < block.count && block.pairs[i + run] / r.top_k == t) ++run;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> arrivals(counters[t * tiles + tile]);
    const unsigned before = arrivals.fetch_add(unsigned(run), cuda::memory_order_acq_rel);
    if (before + unsigned(run) == unsigned(valid_pairs(block, t, r.top_k)))
      block.finished[atomicAdd(&block.finished_count, 1)] = short(t);
  }
  __syncthreads();
  const int64_t first = tile * kTileOutputs;
  for (int i = threadIdx.x; i < block.finished_count * kTileOutputs; i += kThreads) {
    const int t = block.finished[i / kTileOutputs];
    const int64_t o = first + i % kTileOutputs;
    if (o >= outputs) continue;
    float sum = 0.0f;
    for (int j = 0; j < r.top_k; ++j) {
      const int p = t * r.top_k + j;
      if (block.ids[p] < 0) continue;
      const float w = r.weight_type == ElementType::kF32
                          ? __ldg(static_cast<const float *>(r.weights) + p)
                          : to_acc(__ldg(static_cast<const TY *>(r.weights) + p));
      sum = fmaf(w, __ldcg(partials + p * outputs + o), sum);
    }
    TY *out = y + t * ldy + o;
    *out = from_acc<TY>(r.accumulate ? sum + to_acc(*out) : sum);
  }
  for (int i = threadIdx.x; i < block.finished_count; i += kThreads)
    counters[block.finished[i] * tiles + tile] = 0u;
}

// Down without accumulate: the tokens none of whose ids is valid get y[t] = 0 on this tile's
// outputs (no block arrives for them). Run by the blocks of slot 0.
template <class TY, int kThreads, int kTileOutputs>
__device__ __forceinline__ void zero_unrouted_tokens(const RoutedOperand &r,
                                                     const RoutedBlock &block, int64_t tile,
                                                     int64_t outputs, TY *y, int64_t ldy) {
  const int64_t first = tile * kTileOutputs;
  for (int i = threadIdx.x; i < int(r.tokens) * kTileOutputs; i += kThreads) {
    const int t = i / kTileOutputs;
    const int64_t o = first + i % kTileOutputs;
    if (o < outputs && valid_pairs(block, t, r.top_k) == 0) y[t * ldy + o] = from_acc<TY>(0.0f);
  }
}

}  // namespace xgemv::kernels
