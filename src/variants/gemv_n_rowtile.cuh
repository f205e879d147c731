// op(A) = A: y[i] = alpha * sum_j A[i, j] x[j] + beta * y[i]. Rows are contiguous, so the
// counterpart of the row-block design: a block owns a tile of kRowThreads * (16 / sizeof(A))
// output rows; kRowThreads lanes span the tile with one 16-byte slice each per column, and the
// block's kThreads / kRowThreads column slots walk different columns (column_sweep.cuh), summed
// through shared memory in slot order. Wide tiles give long contiguous runs per column; narrow
// ones serve short m. grid.y splits the columns when the row tiles alone cannot fill the GPU.
#pragma once

#include "kernels/column_sweep.cuh"
#include "variants/variant_base.hpp"

namespace xgemv {

// The narrowest row tile: 8 lanes, 128 bytes of each column.
inline constexpr int kNarrowRowTileThreads = 8;

namespace kernels {

template <class TA, class TX, class TY, class S, class Variant, int kRowThreads, bool kEarlyStart>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    gemv_n_rowtile(const KernelArgs<S> args) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int kRows = kRowThreads * kElems;
  constexpr int kSlots = Variant::kSlots;
  constexpr int kUnroll = Variant::kUnroll;
  begin_kernel<kEarlyStart>();
  const GemvProblem &p = args.problem;

  const int row_lane = threadIdx.x % kRowThreads;
  const int slot = threadIdx.x / kRowThreads;
  const int64_t r0 = int64_t(blockIdx.x) * kRows;
  const int64_t rows_left = p.m - r0;
  const int split = blockIdx.y;
  const int64_t c0 = split * args.split.length;
  const int64_t c1 = min(p.n, c0 + args.split.length);
  const bool vector_lda = (p.a.ld * int64_t(sizeof(TA))) % 16 == 0;
  __shared__ S slot_sums[kSlots][kRows];
  __shared__ S tile_sums[kRows];
  // Full, aligned tiles take 16-byte loads. Misaligned A (known only here, per tile and per
  // batch item) takes realigned 16-byte loads in a full tile with rows above and below it
  // (`shifted` below), masked scalars in the first and the last tiles.
  const auto vector_tile = [&](const TA *tile) {
    return vector_lda && rows_left >= kRows && is_aligned16(tile);
  };

  // Early start: the first batch item's first kEarlySteps unrolled steps of A (full, aligned
  // tiles only) are copied to shared memory before the wait (A only: x, y, the scalars and
  // pointer arrays may still be written by the kernel before this one). Host alpha == 0 reads
  // no A at all. The false instance never uses the stage, which then takes no shared memory.
  constexpr int kEarlySteps = Variant::kEarlySteps;
  __shared__ EarlyStage<Variant::kThreads, kEarlySteps * kUnroll> stage;
  int staged_steps = 0;
  if constexpr (kEarlyStart) {
    const bool may_read_a = args.scalars.alpha_ptr != nullptr || args.scalars.alpha_value != S(0);
    if (may_read_a && !p.pointer_arrays() && blockIdx.z < p.batch_count) {
      const TA *tile = matrix_of<TA>(p, blockIdx.z) + r0;
      if (vector_tile(tile)) {
        staged_steps = staged_column_steps<Variant::kThreads, kRowThreads, kUnroll, kEarlySteps>(
            c0, c1, slot);
        stage_first_columns<Variant::kThreads, kRowThreads, kUnroll, kEarlySteps>(
            stage, staged_steps, tile, p.a.ld, c0, row_lane, slot);
      }
    }
    wait_for_predecessor();
    wait_staged();
  }
  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  for_each_batch_item<TA, TX, TY>(p, alpha, beta, [&](int64_t b, const TA *a, const TX *x, TY *y) {
    const TA *tile = a + r0;
    const bool vector_ok = vector_tile(tile);
    // Misaligned columns of a full tile with rows above it and a slice's rows below it (so that
    // its lanes' aligned blocks hold only elements of its columns): realigned 16-byte loads.
    const bool shifted = !vector_ok && r0 > 0 && rows_left >= kRows + kElems;
    const bool slices = vector_ok || shifted;  // each lane's rows are one contiguous slice
    S acc[kElems];
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc[e] = S(0);
    if (alpha != S(0)) {
      if (vector_ok) {
        // An early start's staged steps are consumed first, outside the loop of
        // accumulate_columns. Here, not before the branch: a consumed step shared by both paths
        // made the masked path's loop spill.
        int64_t start = c0;
        if constexpr (kEarlyStart) {
          if (b == blockIdx.z)
            start = accumulate_staged_columns<Variant::kThreads, kRowThreads, kUnroll, kEarlySteps,
                                              TA>(stage, staged_steps, x, p.x.inc, c0, slot, acc);
        }
        accumulate_columns<true, Variant::kThreads, kRowThreads, kUnroll>(
            tile, p.a.ld, x, p.x.inc, start, c1, rows_left, row_lane, slot, acc);
      } else if (shifted) {
        accumulate_shifted_columns<Variant::kThreads, kRowThreads, kUnroll>(
            tile, p.a.ld, x, p.x.inc, c0, c1, row_lane, slot, acc);
      } else {
        accumulate_columns<false, Variant::kThreads, kRowThreads, kUnroll>(
            tile, p.a.ld, x, p.x.inc, c0, c1, rows_left, row_lane, slot, acc);
      }
    }
#pragma unroll
    for (int e = 0; e < kElems; ++e)
      slot_sums[slot][slices ? tile_row<true, kRowThreads, kElems>(row_lane, e)
                             : tile_row<false, kRowThreads, kElems>(row_lane, e)] = acc[e];
    __syncthreads();
    for (int r = threadIdx.x; r < kRows; r += Variant::kThreads) {
      S sum = S(0);
#pragma unroll
      for (int s = 0; s < kSlots; ++s) sum += slot_sums[s][r];
      tile_sums[r] = sum;
    }
    __syncthreads();

    const int64_t tile_index = b * gridDim.x + blockIdx.x;
    if (args.split.count == 1 ||
        combine_splits<kRows, Variant::kThreads, kDeepCombineRounds<S>>(
            args.workspace, tile_index, args.split.count, split, tile_sums)) {
      for (int r = threadIdx.x; r < kRows; r += Variant::kThreads)
        if (r < rows_left)
          store_output(y + (r0 + r) * p.y.inc, tile_sums[r], alpha, beta, bias_at<TY>(p, r0 + r));
    }
    __syncthreads();  // slot_sums and tile_sums are reused by the next batch item
  });
}

}  // namespace kernels

template <int kRowThreads>
struct GemvNRowTile : VariantBase<GemvNRowTile<kRowThreads>, VariantFamily::kSingleVector> {
  static constexpr int kThreads = 256;
  static constexpr int kBlocksPerSm = 4;  // residency the launch bounds ask for (64 registers)
  // A split fills one wave and no more (as t_rowblock's, which was measured).
  static constexpr int64_t kSplitWaves = 1;
  static constexpr int kUnroll = 4;       // columns in flight per column slot
  // Early start: unrolled steps staged in shared memory before the wait (256 threads x 16 bytes
  // x kUnroll each: 16 KiB a step; two keep a block under 42 KiB, four blocks still fit an SM).
  static constexpr int kEarlySteps = 2;
  static constexpr int kSlots = kThreads / kRowThreads;
  static_assert(kThreads % kRowThreads == 0);
  static constexpr VariantName kName = variant_name("n_rowtile", kRowThreads);
  // A split block that walks fewer columns than this spends a visible share of its time on the
  // partial sums (measured on the H200: 4096 x 4096 fp16 op N, 62 columns per split, 40% slower).
  static constexpr int64_t kMinSplitColumns = 256;

  static int64_t tile_rows(const GemvProblem &p) {
    return int64_t(kRowThreads) * a_elements_per_16_bytes(p);
  }

  static bool implements(const GemvProblem &p) { return !p.transposed(); }

  // One wave of blocks: each block then walks its columns twice as long as on two, and the
  // fixed cost of a block (its first loads' latency, the slot sums, the split combine) counts
  // half as much (measured on the H200, 16-bit op N of 64-235 MiB: two waves 83-88% of the
  // stream read, one wave 89-93%).
  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t rows = tile_rows(p), tiles = ceil_div(p.m, rows);
    const SplitPlan split = plan_split(
        tiles, p.batch_count, p.n, int64_t(kUnroll) * kSlots, rows,
        device.sm_count, kBlocksPerSm, kSplitWaves, element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  // Whole row tiles, and splits long enough to pay for their partial sums. A wider tile leaves
  // the call to the narrow one where its own split would end on a long combine (each thread of
  // a tile's last block adding kLongCombine partials or more, one after another) and the narrow
  // one streams whole columns: with four times the tiles it needs a quarter of the splits.
  // Measured on the H200, op N of 32-2048 MiB against 32 lanes alone: the 16-bit calls of 12-37
  // splits +2-7%, fp64 64 x 1048576 (130 partials a thread) +5%; where 9 partials or fewer fell
  // to each thread the narrow tile was no faster (fp32 and fp64 -1%, down to -11%).
  static constexpr int64_t kLongCombine = 12;
  static bool suits(const GemvProblem &p, const DeviceLimits &device, LaunchPlan &plan) {
    if (p.m < tile_rows(p)) return false;
    plan = GemvNRowTile::plan(p, device);
    if constexpr (kRowThreads > kNarrowRowTileThreads)
      if (combine_partials_per_thread(p, plan) >= kLongCombine &&
          GemvNRowTile<kNarrowRowTileThreads>::streams_whole_columns(p, device))
        return false;
    return long_enough(plan.split);
  }

  // Whether every full tile of every batch item loads its columns in 16-byte slices and every
  // column slot gets runs of kMinSplitColumns / kSlots columns or more (short n: few columns a
  // slot, as for tall A).
  static bool streams_whole_columns(const GemvProblem &p, const DeviceLimits &device) {
    return p.m >= tile_rows(p) && a_columns_aligned_16(p) &&
           GemvNRowTile::plan(p, device).split.length >= kMinSplitColumns;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    using kernels::gemv_n_rowtile;
    return kernels::launch_kernel(
        context.early_start ? &gemv_n_rowtile<TA, TX, TY, S, GemvNRowTile, kRowThreads, true>
                            : &gemv_n_rowtile<TA, TX, TY, S, GemvNRowTile, kRowThreads, false>,
        problem, plan, context);
  }

 private:
  static bool long_enough(const SplitPlan &split) {
    return split.count == 1 || split.length >= kMinSplitColumns;
  }
  // The partials one thread of a tile's last block adds up (combine_splits shares each output's
  // splits among kThreads / tile rows threads).
  static int64_t combine_partials_per_thread(const GemvProblem &p, const LaunchPlan &plan) {
    const int64_t helpers = std::max<int64_t>(1, kThreads / tile_rows(p));
    return plan.split.count == 1 ? 0 : ceil_div(plan.split.count, helpers);
  }
};

}  // namespace xgemv
