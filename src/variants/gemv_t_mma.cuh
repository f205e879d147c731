// op(A) = A^T with several right-hand sides on the tensor cores, for 16-bit A and x (fp32 sums,
// mma.m16n8k16) and fp64 (fp64 sums, mma.m16n8k8.f64):
// y_c[j] = alpha * dot(A[:, j], x_c) + beta * y_c[j] for up to 16 vectors x_c per pass. A warp
// owns 16 outputs (the 16-row side of the mma) and the pass's vectors (one or two 8-column
// sides). Per chunk of the reduction (4 lanes x 16 bytes of each column) each lane loads 16
// contiguous bytes of two A columns straight into its fragments: the chunk's elements are
// summed in a permuted order, the same for A and x, so A moves in 16-byte loads, once for all
// vectors, with no shared-memory staging. The block's warps take interleaved chunks; grid.y
// splits the reduction when the outputs alone cannot fill the GPU. One vector costs the same
// mma as eight, and the instructions never limit a stream of A, so this is also the kernel of
// one vector in a batch-invariant handle.
#pragma once

#include "kernels/mma_step.cuh"
#include "kernels/rhs_tile.cuh"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

// kVectorSides 8-vector sides per pass: 1 for up to 8 vectors, 2 for up to 16.
template <class TA, class TY, class S, class Variant, int kVectorSides>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    gemv_t_mma(const KernelArgs<S> args) {
  static_assert(std::is_same_v<typename MmaStep<TA>::Sum, S>);
  constexpr int kUnroll = Variant::kUnroll;
  constexpr int kOutputs = Variant::kOutputs, kWarps = Variant::kWarps;
  begin_kernel<false>();
  const GemvProblem &p = args.problem;

  const int warp = threadIdx.x / 32, quad = threadIdx.x % 32 / 4;  // fragment row and vector
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
    S d[kVectorSides][4] = {};
    if (alpha != S(0)) {
      // This lane's two A columns (fragment rows quad and quad + 8).
      const int64_t column_lo = j0 + quad;
      const int64_t column_hi = column_lo + 8;
      const StridedVectors<TA> vectors{x, p.x.ld, p.x.inc, p.rhs_count};
      mma_tile_steps<TA, kVectorSides, kUnroll, kWarps>(
          a + min(column_lo, p.n - 1) * p.a.ld, a + min(column_hi, p.n - 1) * p.a.ld,
          column_lo < p.n, column_hi < p.n, vectors_aligned(a, p.a.ld, 16) && vectors.aligned(16),
          vectors, k0, k1, d);
    }
    // Every vector of the pass: the combine reads no other.
    store_fragment_sums<kOutputs>(d, warp_sums[warp]);
    finish_rhs_tile<kOutputs, kWarps, Variant::kThreads>(
        args, b * gridDim.x + blockIdx.x, warp_sums, y, j0, p.rhs_count, alpha, beta);
  }
}

}  // namespace xgemv::kernels

namespace xgemv {

// kWarps warps per block on the same outputs, kUnroll chunks in flight per lane, kBlocksPerSm
// resident blocks the launch bounds ask for.
template <int kWarpsPerBlock, int kChunksInFlight, int kResidentBlocks>
struct GemvTMmaTile : VariantBase<GemvTMmaTile<kWarpsPerBlock, kChunksInFlight, kResidentBlocks>, VariantFamily::kSeveralRhs> {
  static constexpr int kWarps = kWarpsPerBlock;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kBlocksPerSm = kResidentBlocks;
  // A split may spread a thin last wave over up to kMaxSplitWaves fuller waves
  // (measured on the H200: Llama-3-70B down, nrhs 2-16, 1.29 waves whole 59-72% of the stream
  // read, 3.88 waves of a third each 74-83%).
  static constexpr int64_t kSplitWaves = kMaxSplitWaves;
  static constexpr int kOutputs = 16;  // the mma's 16-row side
  static constexpr int kUnroll = kChunksInFlight;
  static constexpr VariantName kName = variant_name("t_mma", kMaxRhsPerPass);

  static bool implements(const GemvProblem &p) { return p.transposed() && has_mma_step(p); }

  // Reduction elements of a chunk: 4 lanes x 16 bytes.
  static int64_t chunk(const GemvProblem &p) { return 4 * int64_t(a_elements_per_16_bytes(p)); }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(p.n, kOutputs);
    const SplitPlan split = plan_split(
        tiles, /*batch: planned as one problem*/ 1, p.m, chunk(p) * kUnroll * kWarps,
        int64_t(kOutputs) * kMaxRhsPerPass, device.sm_count, kBlocksPerSm, kSplitWaves,
        element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    return launch_mma_passes<TA, TX, TY, S>(
        problem, plan, context, int64_t(kOutputs) * kMaxRhsPerPass, [](auto sides) {
          return &kernels::gemv_t_mma<TA, TY, S, GemvTMmaTile, decltype(sides)::value>;
        });
  }
};

// Measured on the H200 (bf16 and fp64, 10 llm shapes, 1..16 vectors, with the unmasked whole
// steps): 4 warps of 4 chunks in flight, 4 blocks per SM (4 KiB of A in flight a warp), beat
// 8 x 2 x 3 by 5-6% (bf16) and 6-7% (fp64) and 8 x 4 x 2 on its worst shapes (blocks on fewer
// slots: a thinner last wave); warps on different outputs (x shared through L1) gained nothing.
// Before the whole steps, 8 x 2 x 3 had beaten 4 x 4 x 4 and a cp.async ring of chunks.
using GemvTMma = GemvTMmaTile<4, 4, 4>;

}  // namespace xgemv
