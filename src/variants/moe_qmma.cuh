// Mixture-of-experts projections with quantized experts (xgemv_moe.h over xgemv_quant.h) on the
// tensor cores. A block owns kTiles row tiles of one expert's packed codes and every pair (t, j)
// that chose it (the expert of its slot, kernels/moe_routing.cuh); its warps stream contiguous
// shares of the k-blocks as the quantized GEMV's do (kernels/qmma_stream.cuh), the pairs' x
// their vectors, in passes of up to 8 (one 8-vector side, as for dense experts), so every chosen
// expert's tiles come from memory once. A block takes a run of consecutive output tiles of its
// expert, its routing decoded once for them. Up with a SwiGLU: the block's two tiles are the gate and up rows of 16 outputs
// (halves: a tile of each half; interleaved: two consecutive tiles). Down: the pairs' sums go to
// the workspace and the block completing a token adds its experts' terms in order.
#pragma once

#include "kernels/moe_routing.cuh"
#include "kernels/qmma_stream.cuh"
#include "launch/routed_launch.hpp"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

template <class Code, class TX, class TS, class Variant, bool kZeroPoints, bool kShortGroups>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    moe_qmma(const KernelArgs<float> args) {
  constexpr int kTiles = Variant::kTiles, kWarps = Variant::kWarps, kUnroll = Variant::kUnroll;
  constexpr int kThreads = Variant::kThreads, kRows = 16 * kTiles;
  static_assert(kTiles == 2, "a SwiGLU's gate and up tiles");
  begin_kernel<false>();  // the ids and x are the work before's
  const GemvProblem &p = args.problem;
  const RoutedOperand &r = p.routing;
  const QuantOperand &q = p.quant;
  __shared__ RoutedBlock block;
  __shared__ float warp_sums[kWarps][kRows * kMaxRhsPerPass];
  decode_routing<kThreads>(r, int(blockIdx.y), block);
  const int64_t tiles = Variant::tiles(p);
  TX *y = static_cast<TX *>(p.y.data);

  // This warp's k-blocks: a contiguous share of all of them, kUnroll at a time.
  const int warp = threadIdx.x / 32;
  const int k_blocks = int(q.k_blocks);
  const int share = int(ceil_div(ceil_div(k_blocks, kWarps), kUnroll)) * kUnroll;
  const int kb_begin = min(k_blocks, warp * share);
  const int count = min(k_blocks, kb_begin + share) - kb_begin;
  // The expert's storage: expert 0's parts moved on by a.stride bytes per expert.
  const int64_t offset = int64_t(max(block.expert, 0)) * p.a.stride;
  const QuantParts parts{static_cast<const unsigned char *>(p.a.data) + offset,
                         static_cast<const unsigned char *>(q.scales) + offset,
                         q.zeros != nullptr ? q.zeros + offset : nullptr,
                         nullptr,
                         q.group_shift,
                         q.k_blocks,
                         q.scale_groups};
  const TX *x = static_cast<const TX *>(p.x.data);
  float *partials =
      static_cast<float *>(r.partials != nullptr ? r.partials : args.workspace.partials);
  const int64_t row_tiles = ceil_div(p.n, 16);

  // The block's run of consecutive output tiles.
  const int64_t per_block = ceil_div(tiles, gridDim.x);
  for (int64_t tile = blockIdx.x * per_block; tile < min(tiles, (blockIdx.x + 1) * per_block);
       ++tile) {
    if (r.down && !r.accumulate && blockIdx.y == 0)
      zero_unrouted_tokens<TX, kThreads, kRows>(r, block, tile, p.n, y, p.y.ld);
    if (block.expert < 0) continue;
    // The tile's row tiles of the weight: kTiles consecutive ones (their rows the outputs, or a
    // SwiGLU's interleaved gate and up rows), or a SwiGLU's tile of gate rows and its tile of up
    // rows.
    int64_t row_tile[kTiles];
    RoutedRows rows{kRows * tile, kRows, 1, 0};
#pragma unroll
    for (int t = 0; t < kTiles; ++t) row_tile[t] = min(kTiles * tile + t, row_tiles - 1);
    if (!r.down && r.activation == MoeActivation::kSwiglu) {
      row_tile[0] = min(tile, row_tiles - 1);
      row_tile[1] = min(p.n / 2 / 16 + tile, row_tiles - 1);
      rows = {16 * tile, 16, 1, 16};
    } else if (!r.down && r.activation != MoeActivation::kIdentity) {
      rows = {16 * tile, 16, 2, 1};
    }
    for (int first = 0; first < block.count; first += Variant::kPassPairs) {
      const int vectors = min(Variant::kPassPairs, block.count - first);
      const PairVectors<TX> columns{x, p.x.ld, block.pairs + first, vectors,
                                    r.down ? 1 : r.top_k};
      QmmaWarpStream<Code, TX, TS, kTiles, kUnroll, 1, kZeroPoints, kShortGroups> stream(
          parts, row_tile, kb_begin, count);
      float acc[kTiles][1][4] = {};
      if (count > 0) {
        stream.load_first();
        stream.run(columns, p.m, acc);
      }
      store_tile_sums<kRows>(acc, warp_sums[warp]);
      sum_warp_values<kWarps, kThreads>(warp_sums, vectors * kRows);
      store_routed_pass<TX, kThreads, kRows>(p, block, first, vectors, warp_sums[0], rows,
                                             partials);
      __syncthreads();  // the sums are reused by the next pass
    }
    if (r.down)
      finish_tokens<TX, kThreads, kRows>(r, block, partials, args.workspace.tile_counters, tile,
                                         tiles, p.n, y, p.y.ld);
  }
}

// The instance of moe_qmma for a launch: its scale type and zero points.
template <class Code, class TX, class Variant>
auto moe_qmma_kernel_for(const GemvProblem &part) {
  using Kernel = void (*)(KernelArgs<float>);
  return kernel_for_weight<Code>(
      part.quant, [](auto scale, auto zero_points, auto short_groups) -> Kernel {
        return &moe_qmma<Code, TX, decltype(scale), Variant, decltype(zero_points)::value,
                         decltype(short_groups)::value>;
      });
}

}  // namespace xgemv::kernels

namespace xgemv {

// kTiles row tiles per block (2: a SwiGLU's gate and up), kWarps warps streaming shares of the
// k-blocks, kUnroll k-blocks in flight, kBlocksPerSm resident blocks (q_mma's); passes of up to
// 8 pairs.
template <int kWarpsPerBlock, int kBlocksInFlight, int kResidentBlocks>
struct MoeQmmaTile
    : VariantBase<MoeQmmaTile<kWarpsPerBlock, kBlocksInFlight, kResidentBlocks>,
                  VariantFamily::kRouted, /*codes*/ true> {
  static constexpr int kTiles = 2;
  static constexpr int kWarps = kWarpsPerBlock;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kUnroll = kBlocksInFlight;
  static constexpr int kBlocksPerSm = kResidentBlocks;
  static constexpr int kPassPairs = 8;
  static constexpr VariantName kName = variant_name("moe_qmma", kPassPairs);

  static bool implements(const GemvProblem &p) {
    const bool x16 = p.types.x == ElementType::kF16 || p.types.x == ElementType::kBF16;
    return p.routed() && is_quantized(p.types.a) && x16 && p.types.y == p.types.x &&
           p.quant.permutation == nullptr;
  }

  // Output tiles: 32 rows, or the 16 outputs of a SwiGLU's 32 rows.
  static constexpr int64_t tiles(const GemvProblem &p) {
    return routed_output_tiles(p, 16 * kTiles);
  }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    return routed_call_plan(p, tiles(p), kThreads, device, kBlocksPerSm);
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &call,
                            const LaunchContext &context) {
    if constexpr (std::is_same_v<TX, TY>) {
      return for_each_routed_launch<TX, TY>(
          problem, tiles(problem), call, [&](const GemvProblem &part, const LaunchPlan &plan) {
            return kernels::launch_kernel(
                kernels::moe_qmma_kernel_for<TA, TX, MoeQmmaTile>(part), part, plan,
                context);
          });
    } else {
      return cudaErrorNotSupported;
    }
  }
};

using MoeQmma = MoeQmmaTile<8, 2, 2>;

}  // namespace xgemv
