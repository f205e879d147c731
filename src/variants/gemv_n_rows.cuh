// op(A) = A with few rows (short-wide A): y[i] = alpha * sum_j A[i, j] x[j] + beta * y[i] for
// m <= kMaxRows. A column holds only m contiguous elements, so a row tile's 16-byte lanes would
// be mostly masked; instead the block's threads are (row, column) lanes of a tile of
// rows = min(m, kMaxRows) rows: thread t takes row t % rows of the columns t / rows + k * lanes
// (lanes = kThreads / rows). With lda == m thread t reads element t of a contiguous run, so
// every warp-wide scalar load is coalesced; kUnroll independent loads of A (and of the
// broadcast x[j]) are in flight per thread. Each thread keeps one sum; the column lanes of a
// row are added in a fixed tree order through shared memory, and grid.y splits the columns
// (deterministic combine, split_combine.cuh) so that a few rows still fill the GPU. Taller A is
// computed in tiles of kMaxRows rows, correct but not what the automatic choice gives it.
#pragma once

#include "kernels/elements.cuh"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

template <class TA, class TX, class TY, class S, class Variant>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    gemv_n_rows(const KernelArgs<S> args) {
  constexpr int kThreads = Variant::kThreads;
  constexpr int kUnroll = Variant::unroll(sizeof(TA));
  const GemvProblem &p = args.problem;
  begin_kernel</*kEarlyStart=*/false>();
  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  const int rows = int(min(p.m, int64_t(Variant::kMaxRows)));
  const int lanes = kThreads / rows;  // column lanes; threads past lanes * rows sit out
  const int row_lane = threadIdx.x % rows, column_lane = threadIdx.x / rows;
  const int64_t r0 = int64_t(blockIdx.x) * rows;
  const bool active = column_lane < lanes && r0 + row_lane < p.m;
  const int split = blockIdx.y;
  const int64_t c0 = split * args.split.length;
  const int64_t c1 = min(p.n, c0 + args.split.length);
  __shared__ S partials[kThreads];  // [column lane][row lane], i.e. by thread

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *row = matrix_of<TA>(p, b) + r0 + row_lane;
    const TX *x = x_of<TX>(p, b);
    TY *y = y_of<TY>(p, b);
    S acc = S(0);
    if (alpha != S(0) && active) {
      // Steps of kUnroll columns per lane, the last one masked, so that its loads are in
      // flight together too.
      for (int64_t j = c0 + column_lane; j < c1; j += int64_t(kUnroll) * lanes) {
        TA av[kUnroll];
        TX xv[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t column = j + u * lanes;
          av[u] = column < c1 ? __ldcs(row + column * p.a.ld) : TA(0.0f);
          xv[u] = column < c1 ? __ldg(x + column * p.x.inc) : TX(0.0f);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc += to_acc(av[u]) * to_acc(xv[u]);
      }
    }
    partials[threadIdx.x] = acc;
    __syncthreads();
    // Column lane c takes lane c + half, halving until lane 0 holds each row's sum.
    for (int count = lanes; count > 1;) {
      const int half = (count + 1) / 2;
      for (int q = threadIdx.x; q < (count - half) * rows; q += kThreads)
        partials[q] += partials[q + half * rows];
      __syncthreads();
      count = half;
    }

    const int64_t tile = b * gridDim.x + blockIdx.x;
    if (args.split.count == 1 ||
        combine_splits<Variant::kMaxRows, kThreads, kDeepCombineRounds<S>>(
            args.workspace, tile, args.split.count, split, partials)) {
      if (threadIdx.x < rows && r0 + threadIdx.x < p.m)
        store_output(y + (r0 + threadIdx.x) * p.y.inc, partials[threadIdx.x], alpha, beta,
                     bias_at<TY>(p, r0 + threadIdx.x));
    }
    __syncthreads();  // partials is reused by the next batch item
  }
}

}  // namespace xgemv::kernels

namespace xgemv {

struct GemvNRows : VariantBase<GemvNRows, VariantFamily::kSingleVector> {
  static constexpr int kThreads = 256;
  static constexpr int kBlocksPerSm = 4;  // residency the launch bounds ask for (64 registers)
  // A split fills one wave and no more (as t_rowblock's, which was measured).
  static constexpr int64_t kSplitWaves = 1;
  static constexpr int kMaxRows = 16;     // rows of one tile: the outputs a split publishes
  static constexpr VariantName kName = variant_name("n_rows", kMaxRows);

  // Loads of A in flight per thread: 64 bytes, at most 16 (each has its x load beside it, and
  // 16-bit loads take a register each).
  static constexpr int unroll(int a_bytes) { return a_bytes >= 4 ? 64 / a_bytes : 16; }
  static int tile_rows(const GemvProblem &p) { return int(std::min<int64_t>(p.m, kMaxRows)); }

  static bool implements(const GemvProblem &p) { return !p.transposed(); }

  // Splits of whole column-lane rounds (kThreads / rows columns): the kernel masks a split's
  // last step, so a split need not be a multiple of the unrolled step, and a single row still
  // gets a wave of splits.
  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int rows = tile_rows(p);
    const int64_t tiles = ceil_div(p.m, rows);
    const SplitPlan split = plan_split(
        tiles, p.batch_count, p.n, kThreads / rows, kMaxRows,
        device.sm_count, kBlocksPerSm, kSplitWaves, element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  // Up to 16 rows, whatever n: the split spreads the columns over the GPU.
  static bool prefers(const GemvProblem &p, const DeviceLimits &) { return p.m <= kMaxRows; }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    return kernels::launch_kernel(&kernels::gemv_n_rows<TA, TX, TY, S, GemvNRows>, problem, plan,
                                  context);
  }
};

}  // namespace xgemv
