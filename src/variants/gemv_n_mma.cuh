// op(A) = A with several right-hand sides on the tensor cores, for 16-bit A and x (fp32 sums,
// mma.m16n8k16) and fp64 (fp64 sums, mma.m16n8k8.f64):
// y_c[i] = alpha * sum_j A[i, j] x_c[j] + beta * y_c[i] for up to 16 vectors x_c per pass.
// A's contiguous side is the outputs, while the mma wants reduction pairs in a register: each
// lane loads 16 contiguous bytes (E = 8 outputs of 16-bit, 2 of fp64) of E columns per chunk
// and pairs them into fragment rows with byte permutations (MmaStep::pair_rows), so A still
// moves in 16-byte loads, 128 contiguous bytes of a column per 8 lanes, once for all vectors,
// with no shared-memory staging or shuffles. A warp owns 8 x E outputs: E / 2 mma tiles whose
// fragment row r is output E * (r % 8) + 2 * tile + r / 8. The reduction is ordered as in
// t_mma (4 lanes x E elements a chunk, x loaded 16 bytes a lane); the block's warps take
// interleaved chunks and grid.y splits the reduction when the outputs cannot fill the GPU.
#pragma once

#include "kernels/mma_step.cuh"
#include "kernels/rhs_tile.cuh"
#include "variants/variant_base.hpp"

namespace xgemv {

// A block of one element size: kOutputWarps warps side by side along the outputs (a run of
// kOutputWarps x 128 contiguous bytes of each column), kReductionWarps warps on each of their
// outputs taking interleaved chunks of the reduction, kBlocksPerSm resident blocks the launch
// bounds ask for.
template <int kOutputWarps, int kReductionWarps, int kBlocksPerSm>
struct NMmaBlock {
  static constexpr int kWarpsAlongOutputs = kOutputWarps;
  static constexpr int kWarpsAlongReduction = kReductionWarps;
  static constexpr int kWarps = kOutputWarps * kReductionWarps;
  static constexpr int kResidentBlocks = kBlocksPerSm;
};

namespace kernels {

// kVectorSides 8-vector sides per pass: 1 for up to 8 vectors, 2 for up to 16.
template <class TA, class TY, class S, class Variant, int kVectorSides>
__global__ void __launch_bounds__(32 * Variant::template Block<sizeof(TA)>::kWarps,
                                  Variant::template Block<sizeof(TA)>::kResidentBlocks)
    gemv_n_mma(const KernelArgs<S> args) {
  using Step = MmaStep<TA>;
  using Unit = typename Step::Unit;
  static_assert(std::is_same_v<typename Step::Sum, S>);
  constexpr int kUnits = Step::kUnits, kElems = kElemsPer16B<TA>;
  using Block = typename Variant::template Block<sizeof(TA)>;
  constexpr int kTiles = kElems / 2, kWarpOutputs = 8 * kElems;
  constexpr int kReductionWarps = Block::kWarpsAlongReduction;
  constexpr int kBlockOutputs = kWarpOutputs * Block::kWarpsAlongOutputs;
  constexpr int kUnroll = Variant::chunks_in_flight(kElems);
  constexpr int64_t kChunk = 4 * kElems, kWarpStep = kChunk * kUnroll;
  begin_kernel<false>();
  const GemvProblem &p = args.problem;

  // Warps next to each other take adjacent outputs.
  const int warp_outputs = threadIdx.x / 32 % Block::kWarpsAlongOutputs;
  const int warp_reduction = threadIdx.x / 32 / Block::kWarpsAlongOutputs;
  const int lane = threadIdx.x % 32;
  const int quad = lane / 4, quad_lane = lane % 4;  // fragment row (and vector) / reduction part
  const int64_t block_i0 = int64_t(blockIdx.x) * kBlockOutputs;
  const int64_t i0 = block_i0 + warp_outputs * kWarpOutputs;
  const int64_t lane_output = i0 + kElems * quad;  // the first of the lane's kElems outputs
  const int64_t k0 = int64_t(blockIdx.y) * args.split.length;
  const int64_t k1 = min(p.n, k0 + args.split.length);
  __shared__ S warp_sums[kReductionWarps][kBlockOutputs * kMaxRhsPerPass];

  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  for_each_batch_item<TA, TA, TY>(p, alpha, beta, [&](int64_t b, const TA *a, const TA *x, TY *y) {
    S d[kTiles][kVectorSides][4] = {};
    if (alpha != S(0)) {
      const int64_t valid_outputs = p.m - lane_output;
      const TA *a_rows = a + min(lane_output, p.m - 1);
      // This lane's vectors' x (those past the pass's last read the last one, as do their
      // masked loads below).
      const TA *x_sides[kVectorSides];
#pragma unroll
      for (int g = 0; g < kVectorSides; ++g)
        x_sides[g] = x + min(int64_t(g * 8 + quad), p.rhs_count - 1) * p.x.ld;
      // One warp step of kUnroll chunks from reduction element k. Whole steps (kWhole: every
      // load aligned and inside the split and the outputs) load without masks: the vectors past
      // the pass's count read the last vector, into fragment columns that are never stored.
      // The other steps mask by element.
      const auto warp_step = [&](int64_t k, auto whole) {
        constexpr bool kWhole = decltype(whole)::value;
        Unit a_units[kUnroll][kElems][kUnits], x_units[kUnroll][kVectorSides][kUnits];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t kk = k + u * kChunk + kElems * quad_lane;
#pragma unroll
          for (int c = 0; c < kElems; ++c) {
            const int64_t column = kk + c;
            load_units<TA, true>(a_rows + min(column, p.n - 1) * p.a.ld, 1,
                                 column < k1 ? valid_outputs : 0, kWhole, a_units[u][c]);
          }
          const int64_t valid = kWhole ? kElems : k1 - kk;
#pragma unroll
          for (int g = 0; g < kVectorSides; ++g)
            load_units<TA, false>(x_sides[g] + kk * p.x.inc, p.x.inc,
                                  g * 8 + quad < p.rhs_count ? valid : 0, kWhole, x_units[u][g]);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int s = 0; s < kTiles; ++s) {
            Unit lo[kUnits], hi[kUnits];
            Step::pair_rows(a_units[u], s, lo, hi);
#pragma unroll
            for (int h = 0; h < kUnits / 2; ++h)
#pragma unroll
              for (int g = 0; g < kVectorSides; ++g) Step::mma(d[s][g], lo, hi, x_units[u][g], h);
          }
      };
      int64_t k = k0 + warp_reduction * kWarpStep;
      if (i0 + kWarpOutputs <= p.m && vectors_aligned(a, p.a.ld, 16) && p.x.inc == 1 &&
          vectors_aligned(x, p.x.ld, 16))
        for (; k + kWarpStep <= k1; k += kReductionWarps * kWarpStep)
          warp_step(k, std::true_type{});
      for (; k < k1; k += kReductionWarps * kWarpStep) warp_step(k, std::false_type{});
    }
    // d[s][g]: outputs kElems * quad + 2 * s (+ 1 for r >= 2) of the warp's, vectors g * 8 +
    // 2 * quad_lane + r % 2 (every vector of the pass: the combine reads no other).
    S *sums = warp_sums[warp_reduction] + warp_outputs * kWarpOutputs;
#pragma unroll
    for (int s = 0; s < kTiles; ++s)
#pragma unroll
      for (int g = 0; g < kVectorSides; ++g)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int output = kElems * quad + 2 * s + r / 2, c = g * 8 + 2 * quad_lane + r % 2;
          sums[c * kBlockOutputs + output] = d[s][g][r];
        }
    finish_rhs_tile<kBlockOutputs, kReductionWarps, 32 * Block::kWarps>(
        args, b * gridDim.x + blockIdx.x, warp_sums, y, block_i0, p.rhs_count, alpha, beta);
  });
}

}  // namespace kernels

// Blocks for 16-bit and for fp64 A. A lane keeps one 128-byte chunk of A in flight in 16-bit
// (E = 8), four of 32 bytes in fp64 (E = 2): 4 KiB a warp, as t_mma.
template <class Block16Bit, class BlockFp64>
struct GemvNMmaTile : VariantBase<GemvNMmaTile<Block16Bit, BlockFp64>, VariantFamily::kSeveralRhs> {
  static constexpr int64_t kSplitWaves = kMaxSplitWaves;  // as t_mma's
  static constexpr int kLaneBytesInFlight = 128;
  static constexpr VariantName kName = variant_name("n_mma", kMaxRhsPerPass);

  template <int kElementBytes>
  using Block = std::conditional_t<kElementBytes == 8, BlockFp64, Block16Bit>;
  // The same, read at run time by the plan.
  static constexpr int output_warps(int element_bytes) {
    return element_bytes == 8 ? BlockFp64::kWarpsAlongOutputs : Block16Bit::kWarpsAlongOutputs;
  }
  static constexpr int reduction_warps(int element_bytes) {
    return element_bytes == 8 ? BlockFp64::kWarpsAlongReduction
                              : Block16Bit::kWarpsAlongReduction;
  }
  static constexpr int blocks_per_sm(int element_bytes) {
    return element_bytes == 8 ? BlockFp64::kResidentBlocks : Block16Bit::kResidentBlocks;
  }
  // A lane's chunk is E x E elements (E columns of 16 bytes).
  static constexpr int chunks_in_flight(int elements_per_16_bytes) {
    const int chunk_bytes = 16 * elements_per_16_bytes;
    return kLaneBytesInFlight > chunk_bytes ? kLaneBytesInFlight / chunk_bytes : 1;
  }

  static bool implements(const GemvProblem &p) { return !p.transposed() && has_mma_step(p); }

  // A block's outputs: 8 x E a warp.
  static int64_t tile_outputs(const GemvProblem &p) {
    return int64_t(8) * a_elements_per_16_bytes(p) * output_warps(element_bytes(p.types.a));
  }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int elements = a_elements_per_16_bytes(p), bytes = element_bytes(p.types.a);
    const int64_t tiles = ceil_div(p.m, tile_outputs(p));
    const SplitPlan split = plan_split(
        tiles, /*batch: planned as one problem*/ 1, p.n,
        int64_t(4) * elements * chunks_in_flight(elements) * reduction_warps(bytes),
        tile_outputs(p) * kMaxRhsPerPass, device.sm_count, blocks_per_sm(bytes),
        kSplitWaves, element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)),
            dim3(32 * output_warps(bytes) * reduction_warps(bytes)), split};
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    return launch_mma_passes<TA, TX, TY, S>(
        problem, plan, context, tile_outputs(problem) * kMaxRhsPerPass, [](auto sides) {
          return &kernels::gemv_n_mma<TA, TY, S, GemvNMmaTile, decltype(sides)::value>;
        });
  }
};

// Measured on the H200 (op N, bf16 and fp64, the 25 llm shapes, 1 / 2 / 4 / 8 / 16 vectors,
// geo-mean against cuBLAS's GEMM; blocks as warps along the outputs x along the reduction x
// blocks per SM): 16-bit 1 x 8 x 2 1.04 / 1.03 / 1.02 / 1.00 / 0.93x, 1 x 4 x 4
// 1.04 / 1.04 / 1.01 / 0.96 / 0.87x; warps side by side along the outputs (longer runs of each
// column, fewer tiles, more splits) lost: 2 x 4 x 2 0.86-0.89x, 2 x 2 x 4 and 4 x 2 x 2
// 0.67-0.70x, 8 x 1 x 2 0.41x. fp64 2 x 2 x 4 1.03 / 1.13 / 1.14 / 1.13 / 1.08x, 1-2% ahead of
// 1 x 4 x 4 (docs/design-notes.md).
using GemvNMma = GemvNMmaTile<NMmaBlock<1, 8, 2>, NMmaBlock<2, 2, 4>>;

}  // namespace xgemv
