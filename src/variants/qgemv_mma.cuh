// Quantized weights (xgemv_quant.h) on the tensor cores: Y := alpha * W X + beta * Y for up to 16
// vectors per pass. A block owns kTiles row tiles of 16 outputs (the 16-row side of
// mma.m16n8k16) and a split of the k-blocks; each of its warps takes a contiguous share of them,
// with kUnroll k-blocks in flight while the previous kUnroll are decoded. Each lane loads its
// 16-byte slot of every tile's k-block (512 contiguous bytes per warp, streamed once) and turns
// the codes into the 16-bit values v of its A fragments in registers (kernels/quant_codes.cuh);
// x, loaded 8 bytes per step, is the B fragment, shared by the block's tiles. Products v * x
// accumulate in fp32 per k-block (per half of one for 4-bit groups of 32), each times its
// group's scales in fp32, the scales of the next group loaded while the current one runs. One
// vector costs the same mma as eight: the instructions, not the mma, bound the stream of codes.
#pragma once

#include "kernels/qmma_stream.cuh"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

// kShortGroups: 4-bit groups of 32 inputs, two per k-block (else a group spans whole k-blocks).
template <class Code, class TX, class TY, class TS, class Variant, int kGroups, bool kZeroPoints,
          bool kShortGroups, bool kEarlyStart>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    qgemv_mma(const KernelArgs<float> args) {
  constexpr int kTiles = Variant::kTiles, kWarps = Variant::kWarps, kUnroll = Variant::kUnroll;
  begin_kernel<kEarlyStart>();
  const GemvProblem &p = args.problem;
  const QuantOperand &q = p.quant;

  const int warp = threadIdx.x / 32;
  const int64_t row_tiles = ceil_div(p.n, 16);
  const int64_t first_tile = int64_t(blockIdx.x) * kTiles;
  // This warp's k-blocks: a contiguous share of the block's split, kUnroll at a time (k-block
  // indices fit 32 bits: inputs < 2^31).
  const int split_begin = int(blockIdx.y) * int(args.split.length);
  const int split_end = min(int(q.k_blocks), split_begin + int(args.split.length));
  const int share = int(ceil_div(ceil_div(split_end - split_begin, kWarps), kUnroll)) * kUnroll;
  const int kb_begin = min(split_end, split_begin + warp * share);
  const int count = min(split_end, kb_begin + share) - kb_begin;  // k-blocks of this warp
  __shared__ float warp_sums[kWarps][Variant::kOutputs * kMaxRhsPerPass];

  // Tiles past the last one read the last (their outputs are never stored).
  int64_t tiles[kTiles];
#pragma unroll
  for (int r = 0; r < kTiles; ++r) tiles[r] = min(first_tile + r, row_tiles - 1);
  QmmaWarpStream<Code, TX, TS, kTiles, kUnroll, kGroups, kZeroPoints, kShortGroups> stream(
      {p.a.data, q.scales, q.zeros, q.permutation, q.group_shift, q.k_blocks, q.scale_groups},
      tiles, kb_begin, count);
  // Early start streams the codes before the kernel before this one has finished.
  if (kEarlyStart) stream.load_first();
  if constexpr (kEarlyStart) wait_for_predecessor();
  const float alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  float acc[kTiles][kGroups][4] = {};
  if (alpha != 0.0f && count > 0) {
    if (!kEarlyStart) stream.load_first();
    stream.run(StridedVectors<TX>{static_cast<const TX *>(p.x.data), p.x.ld, 1, p.rhs_count},
               p.m, acc);
  }
  store_tile_sums<Variant::kOutputs>(acc, warp_sums[warp]);
  finish_rhs_tile<Variant::kOutputs, kWarps, Variant::kThreads>(
      args, blockIdx.x, warp_sums, static_cast<TY *>(p.y.data), first_tile * 16, p.rhs_count,
      alpha, beta);
}

// The instance of qgemv_mma for a pass: its scale type, zero points, 8 or 16 vectors, early start.
template <class Code, class TX, class TY, class Variant>
auto qgemv_kernel_for(const GemvProblem &pass, bool early_start) {
  using Kernel = void (*)(KernelArgs<float>);
  // Each choice a compile-time constant of the instance: early start, 8 or 16 vectors, zero
  // points, 4-bit groups of 32, the scale type.
  const auto pick = [&](auto scale, auto groups, auto zero_points, auto short_groups) -> Kernel {
    using TS = decltype(scale);
    constexpr int kGroups = decltype(groups)::value;
    constexpr bool kZeroPoints = decltype(zero_points)::value;
    constexpr bool kShort = decltype(short_groups)::value;
    return early_start ? &qgemv_mma<Code, TX, TY, TS, Variant, kGroups, kZeroPoints, kShort, true>
                       : &qgemv_mma<Code, TX, TY, TS, Variant, kGroups, kZeroPoints, kShort, false>;
  };
  return kernel_for_weight<Code>(pass.quant, [&](auto scale, auto zero_points, auto short_groups) {
    return pass.rhs_count <= 8
               ? pick(scale, std::integral_constant<int, 1>{}, zero_points, short_groups)
               : pick(scale, std::integral_constant<int, 2>{}, zero_points, short_groups);
  });
}

}  // namespace xgemv::kernels

namespace xgemv {

// kTiles row tiles per block; each of its kWarps warps streams its share of the k-blocks,
// kUnroll k-blocks of every tile in flight while the previous kUnroll are decoded;
// kBlocksPerSm resident blocks.
template <int kTilesPerBlock, int kWarpsPerBlock, int kBlocksInFlight, int kResidentBlocks>
struct QgemvMmaTile : VariantBase<QgemvMmaTile<kTilesPerBlock, kWarpsPerBlock, kBlocksInFlight, kResidentBlocks>, VariantFamily::kQuantized> {
  static constexpr int kTiles = kTilesPerBlock;
  static constexpr int kOutputs = 16 * kTiles;
  static constexpr int kWarps = kWarpsPerBlock;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kUnroll = kBlocksInFlight;
  static constexpr int kBlocksPerSm = kResidentBlocks;
  // A split fills one wave and no more (measured on the H200: int8 and fp8 4096 x 12288, 1.45
  // waves, split into 2.9 waves ran 14% slower, int4 8192 x 10240 10%).
  static constexpr int64_t kSplitWaves = 1;
  static constexpr VariantName kName = variant_name("q_mma", kOutputs);

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    return for_each_rhs_launch<TA, TX, TY>(
        problem, plan, int64_t(kOutputs) * kMaxRhsPerPass, int(sizeof(S)),
        [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
          return kernels::launch_kernel(
              kernels::qgemv_kernel_for<TA, TX, TY, QgemvMmaTile>(pass, context.early_start), pass,
              pass_plan, context);
        });
  }

  static bool implements(const GemvProblem &p) {
    const bool x16 = p.types.x == ElementType::kF16 || p.types.x == ElementType::kBF16;
    return is_quantized(p.types.a) && p.transposed() && x16 && p.batch_count == 1;
  }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(ceil_div(p.n, 16), kTiles);
    const SplitPlan split = plan_split(
        tiles, 1, p.quant.k_blocks, int64_t(kWarps) * kUnroll,
        int64_t(kOutputs) * kMaxRhsPerPass, device.sm_count, kBlocksPerSm, kSplitWaves,
        int(sizeof(float)));
    return {dim3(unsigned(tiles), unsigned(split.count), 1), dim3(kThreads), split};
  }

};

// Measured on the H200 (bf16 activations; int4, int8 and fp8 codes; 10 decode shapes of 12 to
// 250 MiB of codes; 1, 4 and 16 vectors): 2 tiles of 8 warps, 2 k-blocks in flight, 2 blocks per
// SM had the best geometric mean of the six shapes tried (1 or 2 or 4 tiles, 4 or 8 warps);
// more splits of the reduction than whole waves need, and a ring of bulk copies into shared
// memory (no registers in flight), were slower. The whole rounds without per-k-block checks
// (25 llm shapes, bf16 activations) took one vector from a mean 64-80% to 69-89% of the bound
// on the bytes, 1.10-1.12x (4 and 8 vectors 1.10-1.14x; fp16 activations with 4-bit codes
// 1.11x, despite their 4-byte spill); rolling each k-block's registers over as soon as it is
// decoded, a third buffer, and a bulk L2 prefetch of the scales were each slower (0.90-0.98x).
using QgemvMma = QgemvMmaTile<2, 8, 2, 2>;

}  // namespace xgemv
