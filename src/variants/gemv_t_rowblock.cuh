// op(A) = A^T: y[j] = alpha * dot(A[:, j], x) + beta * y[j]. Column j of column-major A is
// contiguous, so this is the row-block design (row-major rows = our columns): a group of kGroup
// lanes owns one output and walks the reduction axis in 16-byte steps (column_dot.cuh), fp32
// (fp64 for fp64) register accumulator, shuffle reduction across the group, masked tails. A block
// owns kThreads / kGroup consecutive outputs; grid.y splits the reduction axis when the outputs
// alone cannot fill the GPU. Smaller groups pack several outputs into a warp for short
// reductions (wide op T).
#pragma once

#include <type_traits>

#include "kernels/column_dot.cuh"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

template <class TA, class TX, class TY, class S, class Variant, bool kEarlyStart,
          bool kAlignedOperands, bool kSplitTail>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    gemv_t_rowblock(const KernelArgs<S> args) {
  constexpr int kGroup = Variant::kGroupLanes;
  constexpr int kOutputs = Variant::kOutputs;
  constexpr int kUnroll = Variant::kUnroll;
  begin_kernel<kEarlyStart>();
  const GemvProblem &p = args.problem;

  const int lane = threadIdx.x % kGroup;
  const int slot = threadIdx.x / kGroup;
  // The block's tile and split: in the kSplitTail instance, possibly a tail's (plan); in the
  // others, grid.x and grid.y's, in expressions of their own (the same code as before tails).
  const auto block = [&] { return block_split(args.split); };
  const int64_t tile_x = kSplitTail ? block().tile : int64_t(blockIdx.x);
  const int64_t j = tile_x * kOutputs + slot;
  const bool has_output = j < p.n;
  const int split = kSplitTail ? block().split : int(blockIdx.y);
  const int64_t split_length = kSplitTail ? block().length : args.split.length;
  const int64_t k0 = split * split_length;
  const int64_t k1 = min(p.m, k0 + split_length);
  __shared__ S block_dots[kOutputs];

  // Where this lane's reduction runs in batch item b: columns of a misaligned A (odd lda, offset
  // base) peel their first few elements so that the rest still moves in 16-byte loads.
  struct Reduction {
    const TA *column;
    const TX *x;
    int64_t head;
    XAccess x_access;
  };
  const auto reduction_of = [&](int64_t b) {
    const TA *column = matrix_of<TA>(p, b) + j * p.a.ld;
    const TX *x = x_of<TX>(p, b);
    if constexpr (kAlignedOperands) {
      return Reduction{column, x, 0, XAccess::kAligned};
    } else {
      const int64_t head = min(int64_t(elements_to_alignment(column + k0)), k1 - k0);
      const XAccess x_access = p.x.inc != 1 ? XAccess::kStrided
                               : is_aligned16(x + k0 + head) ? XAccess::kAligned
                                                              : XAccess::kShifted;
      return Reduction{column, x, head, x_access};
    }
  };

  // Host alpha == 0 reads no A at all.
  const bool may_read_a = args.scalars.alpha_ptr != nullptr || args.scalars.alpha_value != S(0);
  const bool reads_first_item =
      may_read_a && has_output && !p.pointer_arrays() && blockIdx.z < p.batch_count;

  // Early start: the first batch item's first kEarlySteps unrolled steps of A are copied to
  // shared memory before the wait (A only: x, y, the scalars and pointer arrays may still be
  // written by the kernel before this one). The false instance never uses the stage, which then
  // takes no shared memory.
  constexpr int kEarlySteps = Variant::kEarlySteps;
  __shared__ EarlyStage<Variant::kThreads, kEarlySteps * kUnroll> stage;
  int staged_steps = 0;
  // Without early start, the aligned instance loads the first item's first unrolled step of A
  // into registers as it starts: the rest of the set-up (the scalars, x, the loop bounds, the
  // output) then runs while those loads are in flight instead of before them. (In the general
  // instance these registers spill.)
  constexpr bool kFetchesFirstSteps = !kEarlyStart && kAlignedOperands;
  int4 first_steps[kUnroll];
  bool has_first_steps = false;
  if (reads_first_item) {
    const Reduction r = reduction_of(blockIdx.z);
    const int64_t start = k0 + r.head;
    if constexpr (kEarlyStart) {
      staged_steps = staged_a_steps<kGroup, kUnroll, kEarlySteps, TA>(
          start, vector_steps_end<TA>(r.x_access, k1));
      stage_a_steps<Variant::kThreads, kGroup, kUnroll, kEarlySteps>(stage, staged_steps, r.column,
                                                                     start, lane);
    } else if constexpr (kFetchesFirstSteps) {
      has_first_steps = staged_a_steps<kGroup, kUnroll, 1, TA>(start, k1) == 1;
      if (has_first_steps) load_a_steps<kGroup, kUnroll>(first_steps, r.column, start, lane);
    }
  }
  if constexpr (kEarlyStart) {
    wait_for_predecessor();
    wait_staged();
  }
  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  // One batch item; the first consumes what was fetched before the set-up: the staged steps of
  // early start, or the registers of the first steps (with_first_steps).
  const auto reduce_item = [&](int64_t b, auto with_first_steps) {
    TY *y = y_of<TY>(p, b);
    S dot = S(0);
    if (alpha != S(0) && has_output) {
      const Reduction r = reduction_of(b);
      // The 16-byte steps first (the steps fetched early are consumed at once, outside the loop
      // of dot_column), then the peeled head; the sum head + steps is the same either way.
      int64_t start = k0 + r.head;
      S steps = S(0);
      if constexpr (kEarlyStart) {
        if (b == blockIdx.z)
          start = accumulate_staged_steps<Variant::kThreads, kGroup, kUnroll, kEarlySteps, TA>(
              stage, staged_steps, r.x, p.x.inc, r.x_access, start, lane, steps);
      } else if constexpr (decltype(with_first_steps)::value) {
        if (has_first_steps) {
          accumulate_steps<kGroup, kUnroll, TA>(first_steps, r.x, p.x.inc, r.x_access, start, lane,
                                                steps);
          start += int64_t(kUnroll) * kGroup * kElemsPer16B<TA>;
        }
      }
      steps = dot_column<kGroup, kUnroll, TA, TX, S>(r.column, r.x, p.x.inc, r.x_access, start,
                                                     k1, lane, steps);
      for (int64_t i = k0 + lane; i < k0 + r.head; i += kGroup)
        dot += to_acc(r.column[i]) * to_acc(r.x[i * p.x.inc]);
      dot += steps;
    }
#pragma unroll
    for (int offset = kGroup / 2; offset > 0; offset /= 2)
      dot += __shfl_xor_sync(0xffffffffu, dot, offset, kGroup);

    if (lane == 0) block_dots[slot] = dot;
    __syncthreads();
    const int64_t tile = b * gridDim.x + (kSplitTail ? block().combine_tile : blockIdx.x);
    const int split_count = kSplitTail ? block().count : args.split.count;
    if (split_count == 1 ||
        combine_splits<kOutputs, Variant::kThreads>(args.workspace, tile, split_count, split,
                                                    block_dots)) {
      const int64_t jj = (kSplitTail ? block().tile : int64_t(blockIdx.x)) * kOutputs + threadIdx.x;
      if (threadIdx.x < kOutputs && jj < p.n)
        store_output(y + jj * p.y.inc, block_dots[threadIdx.x], alpha, beta, bias_at<TY>(p, jj));
    }
    __syncthreads();  // block_dots is reused by the next batch item
  };
  // The registers of the first steps are live only in the first item's instance of the body
  // (the loop over the others has its own); the other kernels keep one loop, as they spill with
  // two instances.
  int64_t b = blockIdx.z;
  if constexpr (kFetchesFirstSteps) {
    if (b < p.batch_count) reduce_item(b, std::true_type());
    b += gridDim.z;
  }
  for (; b < p.batch_count; b += gridDim.z) reduce_item(b, std::false_type());
}

}  // namespace xgemv::kernels

namespace xgemv {

template <int kGroup>
struct GemvTRowBlock : VariantBase<GemvTRowBlock<kGroup>, VariantFamily::kSingleVector> {
  static_assert(kGroup >= 2 && kGroup <= 32 && (kGroup & (kGroup - 1)) == 0);
  static constexpr int kGroupLanes = kGroup;  // lanes per output
  static constexpr int kThreads = 256;
  static constexpr int kBlocksPerSm = 4;  // residency the launch bounds ask for (64 registers)
  // A split fills one wave and no more (measured on the H200: fp64 op T of 1.1-2.4 waves split
  // into 2.2-4.9 waves ran 1-6% slower).
  static constexpr int64_t kSplitWaves = 1;
  static constexpr int kUnroll = 4;       // independent 16-byte loads in flight per lane
  // Early start: unrolled steps staged in shared memory before the wait (256 threads x 16 bytes
  // x kUnroll each: 16 KiB a step; two keep a block under 36 KiB, four blocks still fit an SM).
  static constexpr int kEarlySteps = 2;
  static constexpr int kOutputs = kThreads / kGroup;
  static constexpr VariantName kName = variant_name("t_rowblock", kGroup);

  static bool implements(const GemvProblem &p) {
    return p.transposed() && element_bytes(p.types.a) == element_bytes(p.types.x);
  }

  // A reduction that fills no more waves is split over grid.y. Otherwise the tiles of a thin
  // last wave may be split over the slots the whole waves free (a tail after them on grid.x),
  // where the aligned instance runs: its tail instance has the registers for the tail's
  // arithmetic, the general one has not (ptxas: 8-40 more bytes of spills in every type), and
  // the other instances leave it out (in the aligned one it cost 1-3% on the H200, by its
  // effect on the allocation alone).
  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(p.n, kOutputs);
    const int64_t granule = int64_t(kUnroll) * kGroup * a_elements_per_16_bytes(p);
    LaunchPlan plan{dim3(unsigned(tiles), 1, grid_z(p.batch_count)), dim3(kThreads), {}};
    plan.split = plan_split(tiles, p.batch_count, p.m, granule, kOutputs,
                                     device.sm_count, kBlocksPerSm, kSplitWaves,
                                     element_bytes(p.types.scalar));
    plan.grid.y = unsigned(plan.split.count);
    if (plan.split.count > 1 || !aligned_operands(p)) return plan;
    LaunchPlan tailed = plan;
    tailed.split.tail = plan_split_tail(tiles, p.batch_count, p.m, granule, kOutputs,
                                                 device.sm_count, kBlocksPerSm,
                                                 element_bytes(p.types.scalar));
    const SplitTail &tail = tailed.split.tail;
    tailed.grid.x = unsigned(tail.first_tile + (tiles - tail.first_tile) * tail.count);
    return tail.count > 1 ? tailed : plan;
  }

  // As many lanes per output as still give each lane kMinUnrolledSteps unrolled steps of
  // kUnroll 16-byte loads (the table lists the groups largest first). With one step, short
  // columns (777 fp32 elements) reached 65% of the stream read on 32 lanes against 81% on 16:
  // a lane's one step of loads in flight, then a tail, was all it had to hide latency with.
  static constexpr int kMinUnrolledSteps = 2;
  static bool prefers(const GemvProblem &p, const DeviceLimits &) {
    return p.m / (int64_t(a_elements_per_16_bytes(p)) * kUnroll * kMinUnrolledSteps) >= kGroup;
  }

  // Whether A's columns and x start 16-byte aligned in every batch item, x contiguous: so they
  // do at every split, whose pieces (tail pieces too) are whole granules of 16-byte steps. The
  // kernel instance for such calls then peels no head and reads x in aligned 16-byte loads,
  // decided at compile time (a shorter set-up before the first loads, no branch on x's access in
  // the loop). 16-bit elements only: the fp32 and fp64 instances spill under
  // the 64-register cap of the launch bounds (ptxas), so those types keep the general one.
  static bool aligned_operands(const GemvProblem &p) {
    const int64_t bytes = element_bytes(p.types.a);
    return bytes == 2 && a_columns_aligned_16(p) && p.x.array == nullptr && p.x.inc == 1 &&
           reinterpret_cast<uintptr_t>(p.x.data) % 16 == 0 &&
           (p.batch_count == 1 || p.x.stride * bytes % 16 == 0);
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    using kernels::gemv_t_rowblock;
    constexpr bool kHasAligned = sizeof(TA) == 2;  // see aligned_operands
    const bool aligned = aligned_operands(problem), tail = plan.split.tail.count > 1;
    const auto instance = [&](auto early_start) {
      constexpr bool kEarly = decltype(early_start)::value;
      return tail      ? &gemv_t_rowblock<TA, TX, TY, S, GemvTRowBlock, kEarly, kHasAligned, kHasAligned>
             : aligned ? &gemv_t_rowblock<TA, TX, TY, S, GemvTRowBlock, kEarly, kHasAligned, false>
                       : &gemv_t_rowblock<TA, TX, TY, S, GemvTRowBlock, kEarly, false, false>;
    };
    return kernels::launch_kernel(
        context.early_start ? instance(std::true_type()) : instance(std::false_type()), problem,
        plan, context);
  }
};

}  // namespace xgemv
