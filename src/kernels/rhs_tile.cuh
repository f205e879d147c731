// What the several-right-hand-side kernels share: runs of elements loaded whole or masked, the
// passes of at most kMaxRhsPerPass vectors, and the end of a tile (the block's warp sums added
// in warp order, the deterministic split combine, the BLAS epilogue per vector).
//
// Batch invariance rests on three rules every such kernel keeps: a vector's sums never mix
// with another vector's, the order of each vector's sum depends only on the problem's shape
// and layout (never on rhs_count, which picks only how many vectors a kernel instance carries),
// and a masked load adds exact zeros in the same order the whole load would.
#pragma once

#include <algorithm>
#include <type_traits>

#include "elements.cuh"
#include "kernel_args.cuh"
#include "launch/rhs_passes.hpp"

namespace xgemv::kernels {

// kCount elements at p (aligned to their size) as 8- or 16-byte words, each read by
// read_word(const W *) for W int2 or int4.
template <int kCount, class T, class ReadWord>
__device__ __forceinline__ void read_words(const T *p, T (&out)[kCount], ReadWord read_word) {
  constexpr int kBytes = kCount * int(sizeof(T));
  static_assert(kBytes == 8 || kBytes % 16 == 0);
  if constexpr (kBytes == 8) {
    const int2 raw = read_word(reinterpret_cast<const int2 *>(p));
    memcpy(out, &raw, sizeof(raw));
  } else {
#pragma unroll
    for (int q = 0; q < kBytes / 16; ++q) {
      const int4 raw = read_word(reinterpret_cast<const int4 *>(p) + q);
      memcpy(reinterpret_cast<char *>(out) + 16 * q, &raw, sizeof(raw));
    }
  }
}

// kCount elements p[0], p[stride], ..., p[(kCount - 1) * stride], as one vector load (stride 1,
// aligned: `whole`) or element by element, those at index >= `valid` read as zero. kStreaming
// marks A (read once, evict first); x is cached.
template <int kCount, bool kStreaming, class T>
__device__ __forceinline__ void load_run(const T *p, int64_t stride, int64_t valid, bool whole,
                                         T (&out)[kCount]) {
  if (whole) {
    read_words(p, out, [](const auto *word) { return kStreaming ? __ldcs(word) : __ldg(word); });
  } else {
#pragma unroll
    for (int e = 0; e < kCount; ++e) out[e] = e < valid ? p[e * stride] : T(0.0f);
  }
}

// kCount elements at p in shared memory (aligned to their size) as 8- or 16-byte reads.
template <int kCount, class T>
__device__ __forceinline__ void read_shared_run(const T *p, T (&out)[kCount]) {
  read_words(p, out, [](const auto *word) { return *word; });
}

// Starts copying kLength elements of every vector, from element `first` on (vector c at
// x + c * ld; the vectors past `vectors` copy the last one), into stage[c], 16 bytes a thread
// of a kThreads block at a time (commit_async_copies closes them). x + first and ld elements
// are 16-byte aligned.
template <int kThreads, int kVectors, int kLength, class TX>
__device__ __forceinline__ void stage_vectors(TX (&stage)[kVectors][kLength], const TX *x,
                                              int64_t ld, int64_t vectors, int64_t first) {
  constexpr int kPieceElems = kElemsPer16B<TX>;
  static_assert(kLength % kPieceElems == 0);
  constexpr int kPerVector = kLength / kPieceElems, kPieces = kVectors * kPerVector;
#pragma unroll
  for (int start = 0; start < kPieces; start += kThreads) {
    const int i = start + int(threadIdx.x), c = i / kPerVector;
    const int element = i % kPerVector * kPieceElems;
    if (kPieces % kThreads == 0 || i < kPieces)
      copy16_async(&stage[c][element], x + min(int64_t(c), vectors - 1) * ld + first + element);
  }
}

// The instance of a CUDA-core several-vector kernel for a pass of `vectors` (at most
// kPassVectors) vectors: pick(N) for N the next of 2, 4, 8, 16 (each vector's sum is the same
// in every instance); no 16-vector instance where a pass carries 8.
template <int kPassVectors, class Pick>
auto kernel_for_vectors(int64_t vectors, Pick &&pick) {
  static_assert(kPassVectors == 8 || kPassVectors == 16);
  static_assert(kMaxRhsPerPass == 16);
  if constexpr (kPassVectors == 16)
    if (vectors > 8) return pick(std::integral_constant<int, 16>{});
  return vectors <= 2   ? pick(std::integral_constant<int, 2>{})
         : vectors <= 4 ? pick(std::integral_constant<int, 4>{})
                        : pick(std::integral_constant<int, 8>{});
}

// Whether p .. p + bytes - 1 can be one vector load.
__device__ __forceinline__ bool is_aligned_to(const void *p, int bytes) {
  return (reinterpret_cast<uintptr_t>(p) & uintptr_t(bytes - 1)) == 0;
}

// Whether every vector's start is aligned like `base` for loads of `bytes` (ld elements apart).
template <class T>
__device__ __forceinline__ bool vectors_aligned(const T *base, int64_t ld, int bytes) {
  return is_aligned_to(base, bytes) && (ld * int64_t(sizeof(T))) % bytes == 0;
}

// The vectors of a pass of a several-vector call as the tensor-core kernels read them: vector
// c at x + c * ld, its elements inc apart; those past `count` read the last one (into sums that
// are never stored).
template <class T>
struct StridedVectors {
  const T *x;
  int64_t ld, inc, count;
  __device__ __forceinline__ const T *column(int c) const {
    return x + min(int64_t(c), count - 1) * ld;
  }
  // Every vector's runs of `bytes` (from a multiple of them) are one load each.
  __device__ __forceinline__ bool aligned(int bytes) const {
    return inc == 1 && vectors_aligned(x, ld, bytes);
  }
};

// The block's warp values added in warp order into sums[0], for the first `used` values (after
// a barrier; another ends it). Every thread of the block calls it.
template <int kWarps, int kThreads, int kValues, class S>
__device__ __forceinline__ void sum_warp_values(S (&sums)[kWarps][kValues], int used) {
  __syncthreads();
  if constexpr (kWarps > 1) {
    for (int i = threadIdx.x; i < used; i += kThreads) {
      S sum = sums[0][i];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) sum += sums[w][i];
      sums[0][i] = sum;
    }
    __syncthreads();
  }
}

// The end of a tile of kOutputs outputs x kMaxRhsPerPass vectors (value i = vector i /
// kOutputs, output i % kOutputs). On entry sums[w] holds warp w's sums; they are added in warp
// order (into sums[0]), combined across splits, and stored for the outputs [first_output,
// y_length) and vectors [0, vectors): y of output o, vector c at y + o * inc + c * ld. Every
// thread of the block calls it. Only the pass's vectors are added and combined.
template <int kOutputs, int kWarps, int kThreads, class TY, class S>
__device__ __forceinline__ void finish_rhs_tile(const KernelArgs<S> &args, int64_t tile,
                                                S (&sums)[kWarps][kOutputs * kMaxRhsPerPass],
                                                TY *y, int64_t first_output, int64_t vectors,
                                                S alpha, S beta) {
  constexpr int kValues = kOutputs * kMaxRhsPerPass;
  const GemvProblem &p = args.problem;
  const int used = int(vectors) * kOutputs;  // the values of the pass's vectors
  sum_warp_values<kWarps, kThreads>(sums, used);
  S *tile_sums = sums[0];
  if (args.split.count == 1 ||
      combine_splits<kValues, kThreads>(args.workspace, tile, args.split.count, int(blockIdx.y),
                                        tile_sums, used)) {
    for (int i = threadIdx.x; i < used; i += kThreads) {
      const int64_t c = i / kOutputs, o = first_output + i % kOutputs;
      if (c < vectors && o < p.y_length())
        store_output(y + o * p.y.inc + c * p.y.ld, tile_sums[i], alpha, beta, bias_at<TY>(p, o));
    }
  }
  __syncthreads();  // the sums are reused by the next batch item
}

}  // namespace xgemv::kernels
