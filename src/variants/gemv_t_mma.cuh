// op(A) = A^T of 16-bit A and x with several right-hand sides, on the tensor cores:
// y_c[j] = alpha * dot(A[:, j], x_c) + beta * y_c[j] for up to 16 vectors x_c per pass. A warp
// owns 16 outputs (the 16-row side of mma.m16n8k16, fp32 accumulators) and the pass's vectors
// (one or two 8-column sides). Per 32-element chunk of the reduction each lane loads 16
// contiguous bytes of two A columns straight into its fragments: the chunk's elements are
// summed in a permuted order, the same for A and x, so A moves in 16-byte loads, once for all
// vectors, with no shared-memory staging. The block's warps take interleaved chunks; grid.y
// splits the reduction when the outputs alone cannot fill the GPU. One vector costs the same
// mma as eight, and the instructions never limit a stream of A, so this is also the kernel of
// one vector in a batch-invariant handle.
#pragma once

#include "kernels/rhs_tile.cuh"

namespace xgemv {

// kWarps warps per block on the same outputs, kUnroll chunks in flight per lane, kBlocksPerSm
// resident blocks the launch bounds ask for.
template <int kWarpsPerBlock, int kChunksInFlight, int kResidentBlocks>
struct GemvTMmaTile {
  static constexpr int kWarps = kWarpsPerBlock;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kBlocksPerSm = kResidentBlocks;
  // A split may spread a thin last wave over up to kernels::kMaxSplitWaves fuller waves
  // (measured on the H200: Llama-3-70B down, nrhs 2-16, 1.29 waves whole 59-72% of the stream
  // read, 3.88 waves of a third each 74-83%).
  static constexpr int64_t kSplitWaves = kernels::kMaxSplitWaves;
  static constexpr int kOutputs = 16;  // the mma's 16-row side
  static constexpr int kChunk = 32;    // reduction elements per lane quad: 4 lanes x 8
  static constexpr int kUnroll = kChunksInFlight;
  static constexpr VariantName kName = variant_name("t_mma", kernels::kMaxRhsPerPass);
  static constexpr VariantFamily kFamily = VariantFamily::kSeveralRhs;

  static bool implements(const GemvProblem &p) {
    const bool a16 = p.types.a == ElementType::kF16 || p.types.a == ElementType::kBF16;
    return p.transposed() && a16 && p.types.x == p.types.a;
  }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(p.n, kOutputs);
    const kernels::SplitPlan split = kernels::plan_split(
        tiles, /*batch: planned as one problem*/ 1, p.m, int64_t(kChunk) * kUnroll * kWarps,
        int64_t(kOutputs) * kernels::kMaxRhsPerPass, device.sm_count, kBlocksPerSm, kSplitWaves,
        element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  static bool suits(const GemvProblem &p, const DeviceLimits &device, LaunchPlan &plan) {
    plan = GemvTMmaTile::plan(p, device);
    return true;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context);
};

namespace kernels {

// d += A (16 x 16, row fragments) * B (16 x 8, column fragments) in fp32.
template <class T>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const unsigned (&a)[4],
                                            unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
#endif
}

// 8 elements of T as the 4 words an mma fragment takes (element 2w in the low half of word w).
template <class T>
__device__ __forceinline__ void load_words(const T *p, int64_t stride, int64_t valid, bool whole,
                                           bool streaming, unsigned (&words)[4]) {
  T elements[8];
  if (streaming) load_run<8, true>(p, stride, valid, whole, elements);
  else load_run<8, false>(p, stride, valid, whole, elements);
  memcpy(words, elements, sizeof(words));
}

// kGroups 8-vector sides per pass: 1 for up to 8 vectors, 2 for up to 16.
template <class TA, class TY, class S, class Variant, int kGroups>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    gemv_t_mma(const KernelArgs<S> args) {
  constexpr int kWarps = Variant::kWarps, kUnroll = Variant::kUnroll;
  constexpr int kOutputs = Variant::kOutputs, kChunk = Variant::kChunk;
  constexpr int64_t kWarpStep = int64_t(kChunk) * kUnroll;
  begin_kernel<false>();
  const GemvProblem &p = args.problem;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int quad = lane / 4, quad_lane = lane % 4;  // fragment row (and vector) / reduction part
  const int64_t j0 = int64_t(blockIdx.x) * kOutputs;
  const int64_t k0 = int64_t(blockIdx.y) * args.split.length;
  const int64_t k1 = min(p.m, k0 + args.split.length);
  __shared__ S warp_sums[kWarps][kOutputs * kMaxRhsPerPass];

  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = matrix_of<TA>(p, b);
    const TA *x = x_of<TA>(p, b);
    TY *y = y_of<TY>(p, b);
    float d[kGroups][4] = {};
    if (alpha != S(0)) {
      // This lane's two A columns (fragment rows quad and quad + 8) and vectors (quad, + 8).
      const int64_t column_lo = j0 + quad, column_hi = column_lo + 8;
      const TA *a_lo = a + min(column_lo, p.n - 1) * p.a.ld;
      const TA *a_hi = a + min(column_hi, p.n - 1) * p.a.ld;
      const bool a_whole = vectors_aligned(a, p.a.ld, 16);
      const bool x_whole = p.x.inc == 1 && vectors_aligned(x, p.x.ld, 16);
      for (int64_t k = k0 + warp * kWarpStep; k < k1; k += kWarps * kWarpStep) {
        const bool full = k + kWarpStep <= k1;
        unsigned a_words[kUnroll][2][4], x_words[kUnroll][kGroups][4];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t kk = k + u * kChunk + 8 * quad_lane;
          const int64_t valid = k1 - kk;
          load_words(a_lo + kk, 1, column_lo < p.n ? valid : 0, full && a_whole, true,
                     a_words[u][0]);
          load_words(a_hi + kk, 1, column_hi < p.n ? valid : 0, full && a_whole, true,
                     a_words[u][1]);
#pragma unroll
          for (int g = 0; g < kGroups; ++g) {
            const int64_t c = g * 8 + quad;
            const TA *xc = x + min(int64_t(c), p.rhs_count - 1) * p.x.ld + kk * p.x.inc;
            load_words(xc, p.x.inc, c < p.rhs_count ? valid : 0, full && x_whole, false,
                       x_words[u][g]);
          }
        }
        // Chunk half h: A words (h, lo), (h, hi), (h + 1, lo), (h + 1, hi) with h = 2 * half.
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const unsigned fragment[4] = {a_words[u][0][2 * half], a_words[u][1][2 * half],
                                          a_words[u][0][2 * half + 1], a_words[u][1][2 * half + 1]};
#pragma unroll
            for (int g = 0; g < kGroups; ++g)
              mma_16x8x16<TA>(d[g], fragment, x_words[u][g][2 * half],
                              x_words[u][g][2 * half + 1]);
          }
      }
    }
    // d[g]: rows quad and quad + 8, vectors g * 8 + 2 * quad_lane + {0, 1}.
#pragma unroll
    for (int i = 0; i < kOutputs * kMaxRhsPerPass; i += 32) warp_sums[warp][i + lane] = S(0);
    __syncwarp();
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = quad + (r / 2) * 8, c = g * 8 + 2 * quad_lane + r % 2;
        warp_sums[warp][c * kOutputs + row] = d[g][r];
      }
    finish_rhs_tile<kOutputs, kWarps, Variant::kThreads>(
        args, b * gridDim.x + blockIdx.x, warp_sums, y, j0, p.rhs_count, alpha, beta);
  }
}

}  // namespace kernels

template <int kWarpsPerBlock, int kChunksInFlight, int kResidentBlocks>
template <class TA, class TX, class TY, class S>
cudaError_t GemvTMmaTile<kWarpsPerBlock, kChunksInFlight, kResidentBlocks>::launch(
    const GemvProblem &problem, const LaunchPlan &plan, const LaunchContext &context) {
  if constexpr (std::is_same_v<TA, TX> &&
                (std::is_same_v<TA, __half> || std::is_same_v<TA, __nv_bfloat16>)) {
    return for_each_rhs_launch<TA, TX, TY>(
        problem, plan, int64_t(kOutputs) * kernels::kMaxRhsPerPass, int(sizeof(S)),
        [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
          return kernels::launch_kernel(pass.rhs_count <= 8
                                            ? &kernels::gemv_t_mma<TA, TY, S, GemvTMmaTile, 1>
                                            : &kernels::gemv_t_mma<TA, TY, S, GemvTMmaTile, 2>,
                                        pass, pass_plan, context);
        });
  } else {
    return cudaErrorNotSupported;  // not implemented for these types: never chosen
  }
}

// Measured on the H200 (bf16, 1024..128256 outputs, 1..16 vectors): 8 warps of 2 chunks in
// flight, 3 blocks per SM, beat 4 x 4 x 4, 8 x 4 x 2, 4 x 2 x 6/8, 4 x 8 x 2 and 16 x 2 x 2 on
// nearly every shape; a cp.async ring of chunks (no registers in flight) was 35-45% slower.
using GemvTMma = GemvTMmaTile<8, 2, 3>;

}  // namespace xgemv
