// op(A) = A^T with short reductions: y[j] = alpha * dot(A[:, j], x) + beta * y[j] for columns
// of fewer than kShortColumnBytes. t_rowblock's smallest group moves 2 lanes x 4 loads x 16
// bytes = 128 bytes of a column per step, so a shorter column leaves most of its lanes masked.
// Here a group of `group` lanes (the smallest power of two that holds the column at
// rows_per_lane elements per lane, at most kMaxGroup) owns a column: lane l takes rows l,
// l + group, ..., so with lda == m a warp-wide scalar load reads 32 / group whole adjacent
// columns, coalesced. Each thread keeps kUnroll columns in flight, a shuffle reduction per
// column gives its dot (fixed order), and the blocks stride over steps of columns; no split.
// Longer columns walk the reduction in passes of group * rows_per_lane rows, correct but not
// what the automatic choice gives it.
#pragma once

#include "kernels/elements.cuh"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

template <class TA, class TX, class TY, class S, class Variant>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    gemv_t_short(const KernelArgs<S> args) {
  constexpr int kThreads = Variant::kThreads;
  constexpr int kRowsPerLane = Variant::rows_per_lane(sizeof(TA));
  constexpr int kUnroll = Variant::unroll(sizeof(TA));
  const GemvProblem &p = args.problem;
  begin_kernel</*kEarlyStart=*/false>();
  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  const int group = Variant::group_lanes(p.m, kRowsPerLane);
  const int lane = threadIdx.x % group;
  const int groups = kThreads / group;
  const int64_t pass_rows = int64_t(group) * kRowsPerLane;
  const int64_t step_columns = int64_t(groups) * kUnroll;
  const int64_t steps = ceil_div(p.n, step_columns);

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = matrix_of<TA>(p, b);
    const TX *x = x_of<TX>(p, b);
    TY *y = y_of<TY>(p, b);
    for (int64_t step = blockIdx.x; step < steps; step += gridDim.x) {
      // Column of unrolled slot u: the group's slot, then a whole block of groups per u, so
      // that every warp-wide load reads adjacent columns.
      const int64_t j0 = step * step_columns + threadIdx.x / group;
      S dots[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) dots[u] = S(0);
      if (alpha != S(0)) {
        for (int64_t i0 = lane; i0 < p.m; i0 += pass_rows) {
          S xv[kRowsPerLane];
          TA av[kUnroll][kRowsPerLane];
#pragma unroll
          for (int r = 0; r < kRowsPerLane; ++r) {
            const int64_t i = i0 + r * group;
            xv[r] = i < p.m ? to_acc(__ldg(x + i * p.x.inc)) : S(0);
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
              const int64_t j = j0 + u * groups;
              av[u][r] = i < p.m && j < p.n ? __ldcs(a + j * p.a.ld + i) : TA(0.0f);
            }
          }
#pragma unroll
          for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int r = 0; r < kRowsPerLane; ++r) dots[u] += to_acc(av[u][r]) * xv[r];
        }
      }
      // Every lane takes part (the group is uniform across the warp), whatever its column.
      for (int offset = group / 2; offset > 0; offset /= 2)
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          dots[u] += __shfl_xor_sync(0xffffffffu, dots[u], offset);
      if (lane == 0) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t j = j0 + u * groups;
          if (j < p.n) store_output(y + j * p.y.inc, dots[u], alpha, beta, bias_at<TY>(p, j));
        }
      }
    }
  }
}

}  // namespace xgemv::kernels

namespace xgemv {

struct GemvTShort : VariantBase<GemvTShort, VariantFamily::kSingleVector> {
  static constexpr int kThreads = 256;
  static constexpr int kBlocksPerSm = 4;  // residency the launch bounds ask for (64 registers)
  static constexpr int kMaxGroup = 32;    // lanes per column: one warp
  static constexpr int kShortColumnBytes = 128;
  static constexpr VariantName kName = variant_name("t_short", kMaxGroup);

  // Rows per lane: two 16-bit elements, so that a lane's share of a column (and of its shuffle
  // reduction) is at least 4 bytes.
  static constexpr int rows_per_lane(int a_bytes) { return a_bytes >= 4 ? 1 : 2; }
  // Columns in flight per lane: 64 bytes of A; 16-bit loads take a register each, so 12
  // columns of 2 rows (48 bytes) is what fits the 64 registers.
  static constexpr int unroll(int a_bytes) { return a_bytes >= 4 ? 64 / a_bytes : 12; }
  static constexpr int group_lanes(int64_t m, int rows_per_lane) {
    int lanes = 1;
    while (lanes < kMaxGroup && int64_t(lanes) * rows_per_lane < m) lanes *= 2;
    return lanes;
  }

  static bool implements(const GemvProblem &p) { return p.transposed(); }

  // Steps of (kThreads / group) * kUnroll columns; blocks for one wave (kBlocksPerSm per SM,
  // shared by the batch items in flight), each striding over the steps.
  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int a_bytes = element_bytes(p.types.a);
    const int64_t step_columns =
        int64_t(kThreads / group_lanes(p.m, rows_per_lane(a_bytes))) * unroll(a_bytes);
    const unsigned z = grid_z(p.batch_count);
    const int64_t wave = ceil_div(int64_t(device.sm_count) * kBlocksPerSm, z);
    return {dim3(unsigned(std::min(ceil_div(p.n, step_columns), wave)), 1, z), dim3(kThreads),
            {}};
  }

  // Exactly the columns for which no t_rowblock group suits (m * sizeof(A) < 128).
  static bool prefers(const GemvProblem &p, const DeviceLimits &) {
    return p.m * element_bytes(p.types.a) < kShortColumnBytes;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    return kernels::launch_kernel(&kernels::gemv_t_short<TA, TX, TY, S, GemvTShort>, problem, plan,
                                  context);
  }
};

}  // namespace xgemv
