// Mixture-of-experts projections with dense 16-bit experts (xgemv_moe.h) on the tensor cores.
// A block owns 16 rows of one expert (the 16-row side of mma.m16n8k16) and every pair (t, j)
// that chose it: the expert of its slot (kernels/moe_routing.cuh), its pairs the vectors of
// t_mma's warp steps (mma_tile_steps: each lane's 16-byte loads of the rows and of the pairs' x
// are its fragments), in passes of up to 8 vectors (one 8-column side: a second side costs
// more in registers than a second pass, whose reads of the block's rows hit L2, costs in time),
// so every chosen expert's rows come from memory once. A block takes a run of consecutive
// output tiles of its expert, its routing decoded once for them. The block's warps take interleaved steps of the inputs; their sums
// meet in shared memory. Up: a SwiGLU's 16 rows are the gate and up rows of 8 outputs (lane rows
// quad and quad + 8), activated in the epilogue; down: the pairs' sums go to the workspace and
// the block completing a token adds its experts' terms in order (finish_tokens).
#pragma once

#include "kernels/mma_step.cuh"
#include "kernels/moe_routing.cuh"
#include "kernels/rhs_tile.cuh"
#include "launch/routed_launch.hpp"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

template <class TA, class Variant>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    moe_mma(const KernelArgs<float> args) {
  constexpr int kWarps = Variant::kWarps, kThreads = Variant::kThreads;
  constexpr int kRows = 16, kPassPairs = Variant::kPassPairs;
  begin_kernel<false>();  // the ids and x are the work before's
  const GemvProblem &p = args.problem;
  const RoutedOperand &r = p.routing;
  const bool down = r.down;
  __shared__ RoutedBlock block;
  __shared__ float warp_sums[kWarps][kRows * kMaxRhsPerPass];
  decode_routing<kThreads>(r, int(blockIdx.y), block);
  const int64_t tiles = Variant::tiles(p);
  TA *y = static_cast<TA *>(p.y.data);
  const TA *a = static_cast<const TA *>(p.a.data) + int64_t(max(block.expert, 0)) * p.a.stride;
  const TA *x = static_cast<const TA *>(p.x.data);
  const bool aligned = vectors_aligned(a, p.a.ld, 16) && vectors_aligned(x, p.x.ld, 16);
  float *partials =
      static_cast<float *>(r.partials != nullptr ? r.partials : args.workspace.partials);
  const int warp = threadIdx.x / 32, quad = threadIdx.x % 32 / 4;
  const bool swiglu = !down && r.activation != MoeActivation::kIdentity;

  // The block's run of consecutive output tiles.
  const int64_t per_block = ceil_div(tiles, gridDim.x);
  for (int64_t tile = blockIdx.x * per_block; tile < min(tiles, (blockIdx.x + 1) * per_block);
       ++tile) {
    if (down && !r.accumulate && blockIdx.y == 0)
      zero_unrouted_tokens<TA, kThreads, kRows>(r, block, tile, p.n, y, p.y.ld);
    if (block.expert < 0) continue;
    // This lane's rows (fragment rows quad and quad + 8): 16 consecutive rows, or a SwiGLU's
    // gate and up rows of output 8 tile + quad.
    RoutedRows rows{16 * tile, kRows, 1, 0};
    int64_t row_lo = 16 * tile + quad, row_hi = row_lo + 8;
    if (swiglu) {
      rows = {8 * tile, 8, 1, 8};
      const UpRows at = up_rows(r.activation, p.n, rows.first + quad);
      row_lo = at.gate;
      row_hi = at.up;
    }
    for (int first = 0; first < block.count; first += kPassPairs) {
      const int vectors = min(kPassPairs, block.count - first);
      const PairVectors<TA> columns{x, p.x.ld, block.pairs + first, vectors, down ? 1 : r.top_k};
      float d[1][4] = {};
      mma_tile_steps<TA, 1, Variant::kUnroll, kWarps>(
          a + min(row_lo, p.n - 1) * p.a.ld, a + min(row_hi, p.n - 1) * p.a.ld, row_lo < p.n,
          row_hi < p.n, aligned, columns, 0, p.m, d);
      store_fragment_sums<kRows>(d, warp_sums[warp]);
      sum_warp_values<kWarps, kThreads>(warp_sums, vectors * kRows);
      store_routed_pass<TA, kThreads, kRows>(p, block, first, vectors, warp_sums[0], rows,
                                             partials);
      __syncthreads();  // the sums are reused by the next pass
    }
    if (down)
      finish_tokens<TA, kThreads, kRows>(r, block, partials, args.workspace.tile_counters, tile,
                                         tiles, p.n, y, p.y.ld);
  }
}

}  // namespace xgemv::kernels

namespace xgemv {

// kWarps warps per block on the same rows, kUnroll chunks in flight per lane, kBlocksPerSm
// resident blocks (t_mma's); passes of up to 8 pairs.
template <int kWarpsPerBlock, int kChunksInFlight, int kResidentBlocks>
struct MoeMmaTile
    : VariantBase<MoeMmaTile<kWarpsPerBlock, kChunksInFlight, kResidentBlocks>,
                  VariantFamily::kRouted> {
  static constexpr int kWarps = kWarpsPerBlock;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kBlocksPerSm = kResidentBlocks;
  static constexpr int kUnroll = kChunksInFlight;
  static constexpr int kPassPairs = 8;
  static constexpr VariantName kName = variant_name("moe_mma", kPassPairs);

  static bool implements(const GemvProblem &p) {
    const bool sixteen_bit = p.types.a == ElementType::kF16 || p.types.a == ElementType::kBF16;
    return p.routed() && sixteen_bit && p.types.x == p.types.a && p.types.y == p.types.a;
  }

  // Output tiles: 16 rows, or the 8 outputs of a SwiGLU's 16 rows.
  static constexpr int64_t tiles(const GemvProblem &p) { return routed_output_tiles(p, 16); }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    return routed_call_plan(p, tiles(p), kThreads, device, kBlocksPerSm);
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &call,
                            const LaunchContext &context) {
    if constexpr (std::is_same_v<TA, TX> && std::is_same_v<TA, TY> &&
                  (std::is_same_v<TA, __half> || std::is_same_v<TA, __nv_bfloat16>)) {
      return for_each_routed_launch<TA, TA>(
          problem, tiles(problem), call, [&](const GemvProblem &part, const LaunchPlan &plan) {
            return kernels::launch_kernel(&kernels::moe_mma<TA, MoeMmaTile>, part, plan, context);
          });
    } else {
      return cudaErrorNotSupported;
    }
  }
};

using MoeMma = MoeMmaTile<4, 4, 4>;

}  // namespace xgemv
