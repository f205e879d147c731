// op(A) = A^T with several right-hand sides on the CUDA cores, any element types (the automatic
// choice takes it for fp32; 16-bit and fp64 A run on the tensor cores, gemv_t_mma.cuh):
// y_c[j] = alpha * dot(A[:, j], x_c) + beta * y_c[j]. A warp owns 8 x kColumnsPerLane outputs:
// lane (quad, quad_lane) holds the columns quad, quad + 8, ... and the quad_lane-th 16 bytes of
// every chunk of 4 x 16 bytes, so one load of A takes 64 contiguous bytes of each of 8 columns.
// Each lane multiplies its A into every vector's accumulator; the 8 lanes of a quad_lane read
// the same 16 bytes of a vector, and the block's warps own different outputs over the same
// reduction. The 4 lanes of a quad add their sums at the end; grid.y splits the reduction when
// the outputs alone cannot fill the GPU. A launch carries at most kPassVectors vectors.
//
// Instances of more than kRegisterVectors vectors, where A and x are aligned, take A through a
// ring in shared memory: each thread copies its own slices kRingStages - 1 warp steps ahead with
// cp.async and reads back only its own (no barrier), so a block keeps those steps in flight while
// its warps multiply, without registers to hold them (from registers, a lane's next loads waited
// for its multiplies: 16 vectors ran at 37-67% of the stream read). x comes the same way, a stage
// of kStageSteps warp steps of every vector at a time for the whole block (one barrier a stage),
// and each lane reads its runs there at fixed offsets, with no addresses of its own (from global
// memory a 16-vector step took 411 instructions for 256 multiplies, 116 of them integer
// arithmetic, mostly x's addresses). The narrower instances load through registers, which was
// faster there. Every path adds the same products in the same order under the same plan, so the
// instance a pass takes (its vector count) never changes a vector's bits.
#pragma once

#include "kernels/rhs_tile.cuh"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

// kVectors: the vectors this instance carries (the pass's count rounded up to a power of two).
template <class TA, class TX, class TY, class S, class Variant, int kVectors>
__global__ void __launch_bounds__(Variant::kThreads, Variant::blocks_per_sm(kVectors))
    gemv_t_fma(const KernelArgs<S> args) {
  constexpr int kColumns = Variant::kColumns, kUnroll = Variant::kUnroll;
  constexpr int kThreads = Variant::kThreads, kOutputs = Variant::kOutputs;
  constexpr int kRingStages = Variant::kRingStages, kStageSteps = Variant::kStageSteps;
  constexpr int kElems = kElemsPer16B<TA>;
  static_assert(sizeof(TX) == sizeof(TA), "x moves in runs of A's 16 bytes");
  constexpr int64_t kChunk = 4 * kElems, kWarpStep = kChunk * kUnroll;
  constexpr int kStage = int(kWarpStep) * kStageSteps;  // x elements of a vector a stage
  begin_kernel<false>();
  const GemvProblem &p = args.problem;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int quad = lane / 4, quad_lane = lane % 4;  // column of 8 / part of a chunk
  const int warp_first = warp * 8 * kColumns + quad;  // this lane's first output in the tile
  const int64_t j0 = int64_t(blockIdx.x) * kOutputs;
  const int64_t k0 = int64_t(blockIdx.y) * args.split.length;
  const int64_t k1 = min(p.m, k0 + args.split.length);
  __shared__ S tile_sums[1][kOutputs * kMaxRhsPerPass];
  static_assert(sizeof(tile_sums) <= kStaticSharedBytesBound, "the plan's fit test counts on it");
  // The ring (chunk u of column r at slot u * kColumns + r), then x's two stages.
  using Ring = typename Variant::Ring;
  extern __shared__ int4 shared_ring[];
  const Ring ring{shared_ring};
  using XStage = TX[kVectors][kStage];
  XStage *const x_stages = reinterpret_cast<XStage *>(shared_ring + Ring::kBytes / 16);

  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  for_each_batch_item<TA, TX, TY>(p, alpha, beta, [&](int64_t b, const TA *a, const TX *x, TY *y) {
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
      // The lane's A of the warp step from reduction element k. Whole steps (kWhole: every
      // load aligned and inside the split) load without masks: the columns past n read column
      // n - 1 and the vectors past the pass's count the last vector, into sums that are never
      // stored. The other steps mask by element.
      using ARun = TA[kUnroll][kColumns][kElems];
      const auto load_a = [&](int64_t k, auto whole, ARun &a_run) {
        constexpr bool kWhole = decltype(whole)::value;
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int r = 0; r < kColumns; ++r) {
            const int64_t kk = k + u * kChunk + quad_lane * kElems;
            load_run<kElems, true>(a_columns[r] + kk, 1,
                                   column_in[r] ? (kWhole ? kElems : k1 - kk) : 0, kWhole,
                                   a_run[u][r]);
          }
      };
      // The step's multiplies, x's runs from x_run_of(c, u, kk, run) (vector c, chunk u, first
      // element kk): the same order of sums on every path.
      const auto multiply = [&](int64_t k, const ARun &a_run, auto &&x_run_of) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t kk = k + u * kChunk + quad_lane * kElems;
#pragma unroll
          for (int c = 0; c < kVectors; ++c) {
            TX x_run[kElems];
            x_run_of(c, u, kk, x_run);
#pragma unroll
            for (int r = 0; r < kColumns; ++r)
#pragma unroll
              for (int e = 0; e < kElems; ++e)
                acc[r][c] += to_acc(a_run[u][r][e]) * to_acc(x_run[e]);
          }
        }
      };
      // x from global memory, through L1.
      const auto global_x = [&](auto whole) {
        return [&, whole](int c, int, int64_t kk, TX(&run)[kElems]) {
          constexpr bool kWhole = decltype(whole)::value;
          load_run<kElems, false>(x + min(int64_t(c), p.rhs_count - 1) * p.x.ld + kk * p.x.inc,
                                  p.x.inc, c < p.rhs_count ? (kWhole ? kElems : k1 - kk) : 0,
                                  kWhole, run);
        };
      };
      const auto global_step = [&](int64_t k, auto whole) {
        ARun a_run;
        load_a(k, whole, a_run);
        multiply(k, a_run, global_x(whole));
      };
      int64_t k = k0;
      if (vectors_aligned(a, p.a.ld, 16) && p.x.inc == 1 &&
          vectors_aligned(x, p.x.ld, int(sizeof(TX)) * kElems)) {
        if constexpr (Variant::uses_ring(kVectors)) {
          // The whole stages of x through the ring (none where the plan's device could not give
          // the ring its shared memory). Copy group g (one a step, every thread) holds A of step
          // g and, at a stage's first step, that stage of x: waiting for step s's group finds
          // its A and its x stage landed (this thread's copies; the barrier at a stage's first
          // step, everyone's).
          const int64_t steps = dynamic_shared_bytes() != 0 ? (k1 - k0) / kStage * kStageSteps : 0;
          // Group g into ring stage g % kRingStages, with x's stage g / kStageSteps into buffer
          // x_buffer (>= 0) where g is a stage's first step; a_next: this lane's slices of step
          // g, advanced a step by each group.
          const TA *a_next[kColumns];
#pragma unroll
          for (int r = 0; r < kColumns; ++r) a_next[r] = a_columns[r] + k0 + quad_lane * kElems;
          const auto issue = [&](int64_t g, int ring_stage, int x_buffer) {
            if (g < steps) {
#pragma unroll
              for (int u = 0; u < kUnroll; ++u)
#pragma unroll
                for (int r = 0; r < kColumns; ++r)
                  copy16_async(&ring.slot(ring_stage, u * kColumns + r), a_next[r] + u * kChunk);
              if (x_buffer >= 0)
                stage_vectors<kThreads>(x_stages[x_buffer], x, p.x.ld, p.rhs_count,
                                        k0 + g * kWarpStep);
            }
#pragma unroll
            for (int r = 0; r < kColumns; ++r) a_next[r] += kWarpStep;
            commit_async_copies();  // an empty group past the last step: the count stays even
          };
#pragma unroll
          for (int g = 0; g < kRingStages - 1; ++g) issue(g, g, g == 0 ? 0 : -1);
          // Step s reads ring stage s % kRingStages and x's buffer s / kStageSteps % 2 at its
          // step s % kStageSteps of the stage.
          int ring_stage = 0, x_buffer = 0, stage_step = 0;
#pragma unroll 1
          for (int64_t s = 0; s < steps; ++s, k += kWarpStep) {
            wait_async_copies<kRingStages - 2>();  // this thread's copies of step s
            if (stage_step == 0) __syncthreads();  // and every thread's of its x stage
            // Step s + kRingStages - 1 refills the ring stage this thread read in step s - 1 (its
            // own slots, read before in program order) and, where it begins a stage, x's buffer
            // of two stages before, past this stage's barrier (kStageSteps >= kRingStages - 1).
            issue(s + kRingStages - 1, Ring::before(ring_stage),
                  stage_step + kRingStages - 1 == kStageSteps ? 1 - x_buffer : -1);
            ARun a_run;
#pragma unroll
            for (int u = 0; u < kUnroll; ++u)
#pragma unroll
              for (int r = 0; r < kColumns; ++r) {
                const int4 raw = ring.slot(ring_stage, u * kColumns + r);
                memcpy(a_run[u][r], &raw, sizeof(raw));
              }
            const TX *lane_x = &x_stages[x_buffer][0][0] + stage_step * int(kWarpStep) +
                               quad_lane * kElems;
            multiply(k, a_run, [&](int c, int u, int64_t, TX(&run)[kElems]) {
              read_shared_run(lane_x + c * kStage + u * kChunk, run);
            });
            ring_stage = Ring::next(ring_stage);
            if (++stage_step == kStageSteps) {
              stage_step = 0;
              x_buffer = 1 - x_buffer;
            }
          }
          wait_async_copies<0>();  // the empty groups past the last step
        }
        for (; k + kWarpStep <= k1; k += kWarpStep) global_step(k, std::true_type{});
      }
      for (; k < k1; k += kWarpStep) global_step(k, std::false_type{});
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
    finish_rhs_tile<kOutputs, 1, kThreads>(args, b * gridDim.x + blockIdx.x, tile_sums, y, j0,
                                           p.rhs_count, alpha, beta);
  });
}

}  // namespace xgemv::kernels

namespace xgemv {

// kWarps warps per block on different outputs, kColumns columns per lane, kUnroll chunks per
// lane a warp step, kPassVectors vectors per pass (each pass reads A again); instances of more
// than kRegisterVectors vectors use the ring: kRingStages warp steps of A (kRingStages - 1 in
// flight), kStageSteps warp steps of x a stage.
template <int kWarpsPerBlock, int kColumnsPerLane, int kChunksPerStep, int kVectorsPerPass,
          int kRegisterVectorsMax, int kRingSteps, int kStagedSteps>
struct GemvTFmaTile : VariantBase<GemvTFmaTile<kWarpsPerBlock, kColumnsPerLane, kChunksPerStep, kVectorsPerPass,
                                         kRegisterVectorsMax, kRingSteps, kStagedSteps>, VariantFamily::kSeveralRhs> {
  static constexpr int kWarps = kWarpsPerBlock;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kColumns = kColumnsPerLane;
  static constexpr int kOutputs = kWarps * 8 * kColumns;
  static constexpr int kUnroll = kChunksPerStep;
  static constexpr int kPassVectors = kVectorsPerPass;
  static constexpr int kRegisterVectors = kRegisterVectorsMax;
  static constexpr int kRingStages = kRingSteps;
  static constexpr int kStageSteps = kStagedSteps;
  // A copy into x's buffer of two stages before comes after the barrier that follows the last
  // read of that stage (the barrier of the stage between).
  static_assert(kRingStages >= 2 && kStageSteps >= kRingStages - 1);
  // Residency the plans assume; the launch bounds of an instance ask for as many blocks as its
  // accumulators leave registers for (blocks_per_sm).
  static constexpr int kBlocksPerSm = 4;
  // A split fills one wave and no more (as t_rowblock's, which was measured).
  static constexpr int64_t kSplitWaves = 1;
  static constexpr int blocks_per_sm(int vectors) {
    return vectors * kColumns >= 32 ? 3 : kBlocksPerSm;
  }
  static constexpr bool uses_ring(int vectors) { return vectors > kRegisterVectors; }
  // Shared memory of an instance that uses the ring: the ring (a lane's kUnroll x kColumns slices
  // a step), and x's two stages of 16 x 4 x kUnroll x kStageSteps bytes a vector (the same bytes
  // for every element size).
  using Ring = kernels::ThreadRing<kThreads, kUnroll * kColumns, kRingStages>;
  static constexpr unsigned kStageVectorBytes = 64u * kUnroll * kStageSteps;
  static constexpr unsigned shared_bytes(int vectors) {
    return uses_ring(vectors) ? Ring::kBytes + 2u * kStageVectorBytes * unsigned(vectors) : 0;
  }
  static constexpr VariantName kName = variant_name("t_fma", kPassVectors);

  static bool implements(const GemvProblem &p) { return p.transposed(); }

  // Reduction elements of a chunk: 4 lanes x 16 bytes.
  static int64_t chunk(const GemvProblem &p) { return 4 * int64_t(a_elements_per_16_bytes(p)); }

  // The shared memory of the pass's widest instance, or none where a block cannot take it
  // (then every step loads through registers); each launch takes its own instance's. The split
  // does not depend on it, nor on the vectors: the same sums whatever the instance.
  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    LaunchPlan plan{dim3(), dim3(kThreads), {}, shared_bytes(kPassVectors)};
    if (!fits_device(plan, device)) plan.shared_bytes = 0;
    const int64_t tiles = ceil_div(p.n, kOutputs);
    plan.split = plan_split(
        tiles, /*batch: planned as one problem*/ 1, p.m, chunk(p) * kUnroll,
        int64_t(kOutputs) * kMaxRhsPerPass, device.sm_count, kBlocksPerSm, kSplitWaves,
        element_bytes(p.types.scalar));
    plan.grid = dim3(unsigned(tiles), unsigned(plan.split.count), grid_z(p.batch_count));
    return plan;
  }

  // Whether a call's passes may carry 16 vectors: where the ring serves them (the device gave
  // the plan its shared memory; A's columns and the vectors start on 16 bytes, checked again by
  // the kernel for each batch item). Elsewhere passes carry kRegisterVectors: through registers
  // the 16-vector instance spills, and two passes of 8 were faster. Pointer arrays are only known
  // on the device.
  static bool streams_through_ring(const GemvProblem &p, const LaunchPlan &plan) {
    const auto aligned = [&](const void *data, int64_t ld, int64_t stride, ElementType type) {
      const int64_t bytes = element_bytes(type);
      return reinterpret_cast<uintptr_t>(data) % 16 == 0 && ld * bytes % 16 == 0 &&
             (p.batch_count == 1 || stride * bytes % 16 == 0);
    };
    return plan.shared_bytes != 0 && !p.pointer_arrays() && p.x.inc == 1 &&
           aligned(p.a.data, p.a.ld, p.a.stride, p.types.a) &&
           aligned(p.x.data, p.x.ld, p.x.stride, p.types.x);
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    using kernels::gemv_t_fma;
    const auto passes_of = [&](auto pass_vectors) {
      constexpr int kVectorsAPass = decltype(pass_vectors)::value;
      return for_each_rhs_launch<TA, TX, TY, kVectorsAPass>(
          problem, plan, int64_t(kOutputs) * kMaxRhsPerPass, int(sizeof(S)),
          [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
            return kernels::kernel_for_vectors<kVectorsAPass>(pass.rhs_count, [&](auto vectors) {
              constexpr int kVectors = decltype(vectors)::value;
              LaunchPlan instance_plan = pass_plan;
              instance_plan.shared_bytes = pass_plan.shared_bytes != 0 ? shared_bytes(kVectors) : 0;
              return kernels::launch_kernel(&gemv_t_fma<TA, TX, TY, S, GemvTFmaTile, kVectors>,
                                            pass, instance_plan, context);
            });
          });
    };
    return streams_through_ring(problem, plan)
               ? passes_of(std::integral_constant<int, kPassVectors>{})
               : passes_of(std::integral_constant<int, kRegisterVectors>{});
  }
};

// Measured on the H200 (fp32, 10 llm shapes, 1..16 vectors, A and x from registers): 4 warps
// of 2 columns a lane and 2 chunks a step beat 4 chunks by 21% at 8 vectors (4-6% behind at
// 1-2), 4 columns a lane (the 8- and 16-vector instances spill) and 8 warps (80 registers:
// spills from 8 vectors). Then 16 vectors ran best in two passes of 8 (0.83x Sgemm against
// 0.70x in one, bound by its multiplies, x loads and their addresses); with x staged in shared
// memory one pass of 16 ran 1.29x faster than two (H100, 25 llm shapes), at 37-74% of the
// stream read: its lanes' loads waited for their multiplies. With A through the ring too, 1-8
// vectors took 1.15-1.17x the registers' time (H100), so only the 16-vector instance uses it:
// 12 and 16 vectors then take 0.87x and 0.80x the time of two passes of 8 (H200, 25 llm shapes,
// 1.09x and 1.10x Sgemm). The ring keeps five steps: 40 KiB a block, 56 KiB with 16 vectors' x,
// 3 blocks an SM.
using GemvTFma = GemvTFmaTile<4, 2, 2, 16, 8, 5, 4>;

}  // namespace xgemv
