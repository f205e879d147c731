// op(A) = A with several right-hand sides on the CUDA cores, any element types:
// y_c[i] = alpha * sum_j A[i, j] x_c[j] + beta * y_c[i]. A warp owns a tile of 32 lanes x
// kNFmaRows<TA> contiguous rows and walks the columns four at a time: each lane loads its rows
// of four columns, each vector's four x elements arrive in one broadcast load, and every A
// element is multiplied into every vector's accumulator, so A is read once for all vectors.
// The block's warps take interleaved column steps; grid.y splits the columns when the row
// tiles alone cannot fill the GPU.
#pragma once

#include "kernels/rhs_tile.cuh"

namespace xgemv {

// Rows per lane: kNFmaRows x kMaxRhsPerPass accumulators (64 registers for fp32 and 16-bit
// storage, 64 for fp64 with half the rows) leave room for 4 resident blocks.
template <class TA>
inline constexpr int kNFmaRows = sizeof(TA) == 8 ? 2 : 4;

struct GemvNFma {
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
  static constexpr VariantName kName = variant_name("n_fma", kernels::kMaxRhsPerPass);
  static constexpr VariantFamily kFamily = VariantFamily::kSeveralRhs;

  static int64_t tile_rows(const GemvProblem &p) {
    return 32 * (p.types.a == ElementType::kF64 ? kNFmaRows<double> : kNFmaRows<float>);
  }

  static bool implements(const GemvProblem &p) { return !p.transposed(); }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(p.m, tile_rows(p));
    const kernels::SplitPlan split = kernels::plan_split(
        tiles, /*batch: planned as one problem*/ 1, p.n,
        int64_t(kStepColumns) * kUnroll * kWarps, tile_rows(p) * kernels::kMaxRhsPerPass,
        device.sm_count, kBlocksPerSm, kSplitWaves, element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  static bool suits(const GemvProblem &p, const DeviceLimits &device, LaunchPlan &plan) {
    plan = GemvNFma::plan(p, device);
    return true;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context);
};

namespace kernels {

// kVectors: the vectors this instance carries (the pass's count rounded up to a power of two).
template <class TA, class TX, class TY, class S, int kVectors>
__global__ void __launch_bounds__(GemvNFma::kThreads, GemvNFma::blocks_per_sm(kVectors))
    gemv_n_fma(const KernelArgs<S> args) {
  using Variant = GemvNFma;
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
      for (int64_t j = j0 + warp * kWarpStep; j < j1; j += kWarps * kWarpStep) {
        const bool full = j + kWarpStep <= j1;
        TA a_run[kUnroll][kStepColumns][kRows];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int q = 0; q < kStepColumns; ++q) {
            const int64_t column = j + u * kStepColumns + q;
            load_run<kRows, true>(rows + min(column, p.n - 1) * p.a.ld, 1,
                                  column < j1 ? valid_rows : 0, full && a_whole, a_run[u][q]);
          }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t column = j + u * kStepColumns;
#pragma unroll
          for (int c = 0; c < kVectors; ++c) {
            TX x_run[kStepColumns];
            load_run<kStepColumns, false>(
                x + min(int64_t(c), p.rhs_count - 1) * p.x.ld + min(column, p.n - 1) * p.x.inc,
                p.x.inc, c < p.rhs_count ? j1 - column : 0, full && x_whole, x_run);
#pragma unroll
            for (int q = 0; q < kStepColumns; ++q)
#pragma unroll
              for (int r = 0; r < kRows; ++r)
                acc[r][c] += to_acc(a_run[u][q][r]) * to_acc(x_run[q]);
          }
        }
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

template <class TA, class TX, class TY, class S>
cudaError_t GemvNFma::launch(const GemvProblem &problem, const LaunchPlan &plan,
                             const LaunchContext &context) {
  using kernels::gemv_n_fma;
  return for_each_rhs_launch<TA, TX, TY>(
      problem, plan, tile_rows(problem) * kernels::kMaxRhsPerPass, int(sizeof(S)),
      [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
        const auto kernel = kernels::kernel_for_vectors<kernels::kMaxRhsPerPass>(
            pass.rhs_count, [](auto vectors) {
              return &gemv_n_fma<TA, TX, TY, S, decltype(vectors)::value>;
            });
        return kernels::launch_kernel(kernel, pass, pass_plan, context);
      });
}

}  // namespace xgemv
