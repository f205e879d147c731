// op(A) = A^T with several right-hand sides on the CUDA cores, any element types (the automatic
// choice takes it for fp32; 16-bit and fp64 A run on the tensor cores, gemv_t_mma.cuh):
// y_c[j] = alpha * dot(A[:, j], x_c) + beta * y_c[j]. A warp owns 8 x kColumnsPerLane outputs:
// lane (quad, quad_lane) holds the columns quad, quad + 8, ... and the quad_lane-th 16 bytes of
// every chunk of 4 x 16 bytes, so one load of A takes 64 contiguous bytes of each of 8 columns.
// Each lane multiplies its A into every vector's accumulator; the 8 lanes of a quad_lane read
// the same 16 bytes of a vector (one broadcast request), and the block's warps own different
// outputs over the same reduction, so a chunk of x serves the whole block from L1. The 4 lanes
// of a quad add their sums at the end; grid.y splits the reduction when the outputs alone
// cannot fill the GPU. A launch carries at most kPassVectors vectors.
#pragma once

#include "kernels/rhs_tile.cuh"

namespace xgemv {

// kWarps warps per block on different outputs, kColumns columns per lane, kUnroll chunks in
// flight per lane, kPassVectors vectors per pass (each pass reads A again).
template <int kWarpsPerBlock, int kColumnsPerLane, int kChunksInFlight, int kVectorsPerPass>
struct GemvTFmaTile {
  static constexpr int kWarps = kWarpsPerBlock;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kColumns = kColumnsPerLane;
  static constexpr int kOutputs = kWarps * 8 * kColumns;
  static constexpr int kUnroll = kChunksInFlight;
  static constexpr int kPassVectors = kVectorsPerPass;
  // Residency the plans assume; the launch bounds of an instance ask for as many blocks as its
  // accumulators leave registers for (blocks_per_sm).
  static constexpr int kBlocksPerSm = 4;
  // A split fills one wave and no more (as t_rowblock's, which was measured).
  static constexpr int64_t kSplitWaves = 1;
  static constexpr int blocks_per_sm(int vectors) {
    return vectors * kColumns >= 32 ? 3 : kBlocksPerSm;
  }
  static constexpr VariantName kName = variant_name("t_fma", kPassVectors);
  static constexpr VariantFamily kFamily = VariantFamily::kSeveralRhs;

  static bool implements(const GemvProblem &p) { return p.transposed(); }

  // Reduction elements of a chunk: 4 lanes x 16 bytes.
  static int64_t chunk(const GemvProblem &p) { return 4 * int64_t(a_elements_per_16_bytes(p)); }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(p.n, kOutputs);
    const kernels::SplitPlan split = kernels::plan_split(
        tiles, /*batch: planned as one problem*/ 1, p.m, chunk(p) * kUnroll,
        int64_t(kOutputs) * kernels::kMaxRhsPerPass, device.sm_count, kBlocksPerSm, kSplitWaves,
        element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  static bool suits(const GemvProblem &p, const DeviceLimits &device, LaunchPlan &plan) {
    plan = GemvTFmaTile::plan(p, device);
    return true;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context);
};

namespace kernels {

// kVectors: the vectors this instance carries (the pass's count rounded up to a power of two).
template <class TA, class TX, class TY, class S, class Variant, int kVectors>
__global__ void __launch_bounds__(Variant::kThreads, Variant::blocks_per_sm(kVectors))
    gemv_t_fma(const KernelArgs<S> args) {
  constexpr int kColumns = Variant::kColumns, kUnroll = Variant::kUnroll;
  constexpr int kOutputs = Variant::kOutputs;
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kChunk = 4 * kElems, kWarpStep = kChunk * kUnroll;
  begin_kernel<false>();
  const GemvProblem &p = args.problem;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int quad = lane / 4, quad_lane = lane % 4;  // column of 8 / part of a chunk
  const int warp_first = warp * 8 * kColumns + quad;  // this lane's first output in the tile
  const int64_t j0 = int64_t(blockIdx.x) * kOutputs;
  const int64_t k0 = int64_t(blockIdx.y) * args.split.length;
  const int64_t k1 = min(p.m, k0 + args.split.length);
  __shared__ S tile_sums[1][kOutputs * kMaxRhsPerPass];

  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = matrix_of<TA>(p, b);
    const TX *x = x_of<TX>(p, b);
    TY *y = y_of<TY>(p, b);
    S acc[kColumns][kVectors] = {};
    if (alpha != S(0)) {
      const TA *a_columns[kColumns];
      bool column_in[kColumns];
#pragma unroll
      for (int r = 0; r < kColumns; ++r) {
        const int64_t column = j0 + warp_first + 8 * r;
        column_in[r] = column < p.n;
        a_columns[r] = a + min(column, p.n - 1) * p.a.ld;
      }
      // One warp step of kUnroll chunks from reduction element k. Whole steps (kWhole: every
      // load aligned and inside the split) load without masks: the columns past n read column
      // n - 1 and the vectors past the pass's count the last vector, into sums that are never
      // stored. The other steps mask by element.
      const auto warp_step = [&](int64_t k, auto whole) {
        constexpr bool kWhole = decltype(whole)::value;
        TA a_run[kUnroll][kColumns][kElems];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int r = 0; r < kColumns; ++r) {
            const int64_t kk = k + u * kChunk + quad_lane * kElems;
            load_run<kElems, true>(a_columns[r] + kk, 1,
                                   column_in[r] ? (kWhole ? kElems : k1 - kk) : 0, kWhole,
                                   a_run[u][r]);
          }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t kk = k + u * kChunk + quad_lane * kElems;
#pragma unroll
          for (int c = 0; c < kVectors; ++c) {
            TX x_run[kElems];
            load_run<kElems, false>(x + min(int64_t(c), p.rhs_count - 1) * p.x.ld + kk * p.x.inc,
                                    p.x.inc, c < p.rhs_count ? (kWhole ? kElems : k1 - kk) : 0,
                                    kWhole, x_run);
#pragma unroll
            for (int r = 0; r < kColumns; ++r)
#pragma unroll
              for (int e = 0; e < kElems; ++e)
                acc[r][c] += to_acc(a_run[u][r][e]) * to_acc(x_run[e]);
          }
        }
      };
      int64_t k = k0;
      if (vectors_aligned(a, p.a.ld, 16) && p.x.inc == 1 &&
          vectors_aligned(x, p.x.ld, int(sizeof(TX)) * kElems))
        for (; k + kWarpStep <= k1; k += kWarpStep) warp_step(k, std::true_type{});
      for (; k < k1; k += kWarpStep) warp_step(k, std::false_type{});
    }
    // The quad's sums (a fixed butterfly); lane quad_lane publishes the vectors c with
    // c % 4 == quad_lane (the pass has no more than kVectors; the combine reads no other).
#pragma unroll
    for (int r = 0; r < kColumns; ++r)
#pragma unroll
      for (int c = 0; c < kVectors; ++c) {
        acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], 1);
        acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], 2);
      }
#pragma unroll
    for (int r = 0; r < kColumns; ++r)
#pragma unroll
      for (int c = 0; c < kVectors; ++c)
        if (c % 4 == quad_lane) tile_sums[0][c * kOutputs + warp_first + 8 * r] = acc[r][c];
    finish_rhs_tile<kOutputs, 1, Variant::kThreads>(args, b * gridDim.x + blockIdx.x, tile_sums,
                                                    y, j0, p.rhs_count, alpha, beta);
  }
}

}  // namespace kernels

template <int kWarpsPerBlock, int kColumnsPerLane, int kChunksInFlight, int kVectorsPerPass>
template <class TA, class TX, class TY, class S>
cudaError_t
GemvTFmaTile<kWarpsPerBlock, kColumnsPerLane, kChunksInFlight, kVectorsPerPass>::launch(
    const GemvProblem &problem, const LaunchPlan &plan, const LaunchContext &context) {
  using kernels::gemv_t_fma;
  return for_each_rhs_launch<TA, TX, TY, kPassVectors>(
      problem, plan, int64_t(kOutputs) * kernels::kMaxRhsPerPass, int(sizeof(S)),
      [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
        const auto kernel =
            kernels::kernel_for_vectors<kPassVectors>(pass.rhs_count, [](auto vectors) {
              return &gemv_t_fma<TA, TX, TY, S, GemvTFmaTile, decltype(vectors)::value>;
            });
        return kernels::launch_kernel(kernel, pass, pass_plan, context);
      });
}

// Measured on the H200 (fp32, 10 llm shapes, 1..16 vectors): 4 warps of 2 columns a lane and
// 2 chunks in flight beat 4 chunks by 21% at 8 vectors (4-6% behind at 1-2), 4 columns a lane
// (the 8- and 16-vector instances spill) and 8 warps (80 registers: spills from 8 vectors).
// Passes of 8 vectors: 16 vectors in two passes, each reading A, run at 0.83x Sgemm's speed
// where one pass of the 16-vector instance (168 registers, spilling; bound by its multiplies
// and x loads) ran at 0.70x (25 llm shapes; 12 vectors: 0.89x against 0.72x).
using GemvTFma = GemvTFmaTile<4, 2, 2, 8>;

}  // namespace xgemv
