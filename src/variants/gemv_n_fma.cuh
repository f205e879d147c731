// op(A) = A with several right-hand sides on the CUDA cores, any element types:
// y_c[i] = alpha * sum_j A[i, j] x_c[j] + beta * y_c[i]. A warp owns a tile of 32 lanes x
// kNFmaRows<TA> contiguous rows and walks the columns four at a time: each lane loads its rows
// of four columns, each vector's four x elements arrive in one broadcast read, and every A
// element is multiplied into every vector's accumulator, so A is read once for all vectors.
// The block's warps take interleaved column steps; grid.y splits the columns when the row
// tiles alone cannot fill the GPU. Where the tile's rows are whole and x is aligned, the block
// copies x to shared memory 256 bytes of each vector ahead (cp.async, two buffers), and the
// lanes read it at fixed offsets (from global memory, a 16-vector step issued at least 821
// instructions for its 512 multiplies, mostly x's 64-bit addresses, besides a branch per load
// between whole and masked; staged, 580).
#pragma once

#include "kernels/rhs_tile.cuh"
#include "variants/variant_base.hpp"

namespace xgemv {

// Rows per lane: kNFmaRows x kMaxRhsPerPass accumulators (64 registers for fp32 and 16-bit
// storage, 64 for fp64 with half the rows) leave room for 4 resident blocks.
template <class TA>
inline constexpr int kNFmaRows = sizeof(TA) == 8 ? 2 : 4;

namespace kernels {

// kVectors: the vectors this instance carries (the pass's count rounded up to a power of two).
template <class TA, class TX, class TY, class S, class Variant, int kVectors>
__global__ void __launch_bounds__(Variant::kThreads, Variant::blocks_per_sm(kVectors))
    gemv_n_fma(const KernelArgs<S> args) {
  constexpr int kWarps = Variant::kWarps, kUnroll = Variant::kUnroll;
  constexpr int kRows = kNFmaRows<TA>, kTileRows = 32 * kRows;
  constexpr int kStepColumns = Variant::kStepColumns;
  constexpr int64_t kWarpStep = int64_t(kStepColumns) * kUnroll;
  begin_kernel<false>();
  const GemvProblem &p = args.problem;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t r0 = int64_t(blockIdx.x) * kTileRows;
  const int64_t lane_row = r0 + lane * kRows;
  const int64_t j0 = int64_t(blockIdx.y) * args.split.length;
  const int64_t j1 = min(p.n, j0 + args.split.length);
  __shared__ S warp_sums[kWarps][kTileRows * kMaxRhsPerPass];
  // x's stages in shared memory, two buffers of kStageColumns columns of each vector: 256
  // bytes, kStageBlockSteps steps of every warp (aligned calls).
  constexpr int kBlockStepColumns = kWarps * int(kWarpStep);
  constexpr int kStageBlockSteps = std::max(1, 256 / (kBlockStepColumns * int(sizeof(TX))));
  constexpr int kStageColumns = kBlockStepColumns * kStageBlockSteps;
  __shared__ __align__(16) TX x_stages[2][kVectors][kStageColumns];

  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = matrix_of<TA>(p, b);
    const TX *x = x_of<TX>(p, b);
    TY *y = y_of<TY>(p, b);
    S acc[kRows][kVectors] = {};
    if (alpha != S(0)) {
      const int64_t valid_rows = p.m - lane_row;
      const bool a_whole = r0 + kTileRows <= p.m &&
                           vectors_aligned(a, p.a.ld, kRows * int(sizeof(TA))) &&
                           is_aligned_to(a + lane_row, kRows * int(sizeof(TA)));
      const bool x_whole =
          p.x.inc == 1 && vectors_aligned(x, p.x.ld, kStepColumns * int(sizeof(TX)));
      const TA *rows = a + min(lane_row, p.m - 1);
      // One warp step of kUnroll x kStepColumns columns from column j, A whole or masked by
      // element, x's runs from x_run_of(c, u, column, run) (vector c, columns u).
      const auto warp_step = [&](int64_t j, bool a_step_whole, auto &&x_run_of) {
        TA a_run[kUnroll][kStepColumns][kRows];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int q = 0; q < kStepColumns; ++q) {
            // A whole step's columns are all inside the split.
            const int64_t column = j + u * kStepColumns + q;
            load_run<kRows, true>(rows + (a_step_whole ? column : min(column, p.n - 1)) * p.a.ld,
                                  1, column < j1 ? valid_rows : 0, a_step_whole, a_run[u][q]);
          }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t column = j + u * kStepColumns;
#pragma unroll
          for (int c = 0; c < kVectors; ++c) {
            TX x_run[kStepColumns];
            x_run_of(c, u, column, x_run);
#pragma unroll
            for (int q = 0; q < kStepColumns; ++q)
#pragma unroll
              for (int r = 0; r < kRows; ++r)
                acc[r][c] += to_acc(a_run[u][q][r]) * to_acc(x_run[q]);
          }
        }
      };
      int64_t j = j0 + warp * kWarpStep;
      if (a_whole && p.x.inc == 1 && vectors_aligned(x, p.x.ld, 16)) {
        // Whole stages of kStageColumns columns: the block copies the next stage of x (every
        // vector of the pass) to shared memory while it computes on this one, so that the
        // lanes read x at fixed offsets, without addresses of their own.
        const int64_t stages = (j1 - j0) / kStageColumns;
        if (stages > 0) stage_vectors<Variant::kThreads>(x_stages[0], x, p.x.ld, p.rhs_count, j0);
        commit_async_copies();
        for (int64_t s = 0; s < stages; ++s) {
          if (s + 1 < stages)
            stage_vectors<Variant::kThreads>(x_stages[(s + 1) % 2], x, p.x.ld, p.rhs_count,
                                             j0 + (s + 1) * kStageColumns);
          commit_async_copies();
          wait_async_copies<1>();  // this thread's copies of stage s
          __syncthreads();         // and every other thread's
          const TX *warp_x = &x_stages[s % 2][0][warp * kWarpStep];
#pragma unroll 1
          for (int step = 0; step < kStageBlockSteps;
               ++step, j += kWarps * kWarpStep, warp_x += kWarps * kWarpStep)
            warp_step(j, true, [&](int c, int u, int64_t, TX(&run)[kStepColumns]) {
              read_shared_run(warp_x + c * kStageColumns + u * kStepColumns, run);
            });
          __syncthreads();  // every warp is done with the buffer that the next copy overwrites
        }
      }
      for (; j < j1; j += kWarps * kWarpStep) {
        const bool full = j + kWarpStep <= j1;
        warp_step(j, full && a_whole, [&](int c, int, int64_t column, TX(&run)[kStepColumns]) {
          load_run<kStepColumns, false>(
              x + min(int64_t(c), p.rhs_count - 1) * p.x.ld + min(column, p.n - 1) * p.x.inc,
              p.x.inc, c < p.rhs_count ? j1 - column : 0, full && x_whole, run);
        });
      }
    }
#pragma unroll
    for (int c = 0; c < kMaxRhsPerPass; ++c)
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        warp_sums[warp][c * kTileRows + lane * kRows + r] =
            c < kVectors ? acc[r][min(c, kVectors - 1)] : S(0);
      }
    finish_rhs_tile<kTileRows, kWarps, Variant::kThreads>(
        args, b * gridDim.x + blockIdx.x, warp_sums, y, r0, p.rhs_count, alpha, beta);
  }
}

}  // namespace kernels

struct GemvNFma : VariantBase<GemvNFma, VariantFamily::kSeveralRhs> {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  // Residency the launch bounds ask for: 4 blocks (128 registers); the accumulators of 8 and 16
  // vectors would spill there, so 3 blocks (168) and 2 (255) for those instances.
  static constexpr int kBlocksPerSm = 4;
  // A split fills one wave and no more (as t_rowblock's, which was measured).
  static constexpr int64_t kSplitWaves = 1;
  static constexpr int blocks_per_sm(int vectors) {
    return vectors >= 16 ? 2 : vectors >= 8 ? 3 : kBlocksPerSm;
  }
  static constexpr int kStepColumns = 4;  // columns per step: one x load per vector
  static constexpr int kUnroll = 2;       // steps in flight per lane
  static constexpr VariantName kName = variant_name("n_fma", kMaxRhsPerPass);

  static int64_t tile_rows(const GemvProblem &p) {
    return 32 * (p.types.a == ElementType::kF64 ? kNFmaRows<double> : kNFmaRows<float>);
  }

  static bool implements(const GemvProblem &p) { return !p.transposed(); }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(p.m, tile_rows(p));
    const SplitPlan split = plan_split(
        tiles, /*batch: planned as one problem*/ 1, p.n,
        int64_t(kStepColumns) * kUnroll * kWarps, tile_rows(p) * kMaxRhsPerPass,
        device.sm_count, kBlocksPerSm, kSplitWaves, element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    using kernels::gemv_n_fma;
    return for_each_rhs_launch<TA, TX, TY>(
        problem, plan, tile_rows(problem) * kMaxRhsPerPass, int(sizeof(S)),
        [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
          const auto kernel = kernels::kernel_for_vectors<kMaxRhsPerPass>(
              pass.rhs_count, [](auto vectors) {
                return &gemv_n_fma<TA, TX, TY, S, GemvNFma, decltype(vectors)::value>;
              });
          return kernels::launch_kernel(kernel, pass, pass_plan, context);
        });
  }
};

}  // namespace xgemv
