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

#include "kernels/quant_codes.cuh"
#include "kernels/rhs_tile.cuh"
#include "kernels/mma_step.cuh"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

// Four x elements at p (8-byte aligned): the two words of a B fragment.
__device__ __forceinline__ uint2 load_x_words(const void *p) {
  return __ldg(static_cast<const uint2 *>(p));
}

// The same for x elements at packed inputs k .. k + 3 of vector x at any alignment, through the
// permutation where the weight has one; those at or past `valid` read as zero (the padding
// codes they meet are zero too). Out of line: the rare path (the last k-block, act-order,
// misaligned x) stays out of the main loop's registers.
template <class TX>
__device__ __noinline__ uint2 load_x_words_checked(const TX *x, const int32_t *permutation,
                                                   int64_t k, int64_t valid) {
  TX elements[4];
#pragma unroll
  for (int e = 0; e < 4; ++e)
    elements[e] = e < valid ? x[permutation ? __ldg(permutation + k + e) : k + e] : TX(0.0f);
  uint2 words;
  memcpy(&words, elements, sizeof(words));
  return words;
}

// kShortGroups: 4-bit groups of 32 inputs, two per k-block (else a group spans whole k-blocks).
template <class Code, class TX, class TY, class TS, class Variant, int kGroups, bool kZeroPoints,
          bool kShortGroups, bool kEarlyStart>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    qgemv_mma(const KernelArgs<float> args) {
  constexpr int kTiles = Variant::kTiles, kWarps = Variant::kWarps, kUnroll = Variant::kUnroll;
  constexpr int kBlockInputs = CodeTraits<Code>::kBlockInputs;
  constexpr int kSteps = kStepsPerBlock<Code>;
  constexpr int kSlots = 32;  // 16-byte slots per tile k-block
  begin_kernel<kEarlyStart>();
  const GemvProblem &p = args.problem;
  const QuantOperand &q = p.quant;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int quad = lane / 4, quad_lane = lane % 4;  // fragment row (and vector) / input part
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

  // Per tile, this lane's slot of the warp's first k-block. Tiles past the last one read the
  // last (their outputs are never stored).
  const uint4 *codes[kTiles];
#pragma unroll
  for (int r = 0; r < kTiles; ++r) {
    const int64_t t = min(first_tile + r, row_tiles - 1);
    codes[r] = static_cast<const uint4 *>(p.a.data) + (t * q.k_blocks + kb_begin) * kSlots + lane;
  }
  // Whole rounds of the two buffers run without per-k-block checks (below) at up to 8 vectors
  // with groups of 64 inputs or more; elsewhere that second copy of the loop spills 4-464 bytes
  // (ptxas). Here it leaves 4 bytes, in the fp16-activation 4-bit instances without zero points.
  constexpr bool kWholeRounds = kGroups == 1 && !kShortGroups;
  // The warp's k-blocks i .. i + kUnroll - 1 of every tile, from `codes`, which then moves on by
  // kUnroll k-blocks. Past the warp's end nothing is used: the registers take zeros (keeping
  // their old values live spills), except where whole rounds run, whose loop the fill would
  // lengthen.
  const auto load_codes = [&](uint4 (&buffer)[kUnroll][kTiles], int i) {
#pragma unroll
    for (int r = 0; r < kTiles; ++r) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (!kWholeRounds)
          buffer[u][r] = i + u < count ? __ldcs(codes[r] + u * kSlots) : make_uint4(0, 0, 0, 0);
        else if (i + u < count)
          buffer[u][r] = __ldcs(codes[r] + u * kSlots);
      }
      codes[r] += kUnroll * kSlots;
    }
  };

  uint4 front[kUnroll][kTiles], back[kUnroll][kTiles];
  // Early start streams the codes before the kernel before this one has finished.
  if (kEarlyStart) load_codes(front, 0);
  if constexpr (kEarlyStart) wait_for_predecessor();
  const float alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  float acc[kTiles][kGroups][4] = {};
  if (alpha != 0.0f && count > 0) {
    if (!kEarlyStart) load_codes(front, 0);
    // This lane's vectors quad (+ 8), clamped to the last one: the columns past rhs_count are
    // computed on real data and never stored (an mma column never mixes into another). At the
    // warp's first k-block, then moving on with it.
    const TX *x_lane[kGroups];
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
      x_lane[g] = static_cast<const TX *>(p.x.data) +
                  min(int64_t(g * 8 + quad), p.rhs_count - 1) * p.x.ld +
                  int64_t(kb_begin) * kBlockInputs + 4 * quad_lane;
    // The warp's k-blocks whose x loads need no checks: aligned x, no permutation, inside x.
    const bool x_direct =
        vectors_aligned(static_cast<const TX *>(p.x.data), p.x.ld, 8) && q.permutation == nullptr;
    const int direct = x_direct ? min(count, int(p.m / kBlockInputs) - kb_begin) : 0;
    // B fragments of the warp's k-block i (inputs 16 s + 4 quad_lane .. + 3 of it); x_lane is
    // at that k-block, and moves on by one.
    using XWords = uint2[kSteps][kGroups];
    const auto load_x = [&](int i, XWords &words, bool is_direct) {
      if (is_direct) {
#pragma unroll
        for (int g = 0; g < kGroups; ++g)
#pragma unroll
          for (int s = 0; s < kSteps; ++s) words[s][g] = load_x_words(x_lane[g] + 16 * s);
      } else {
#pragma unroll
        for (int g = 0; g < kGroups; ++g)
#pragma unroll
          for (int s = 0; s < kSteps; ++s) {
            const int64_t k = int64_t(kb_begin + i) * kBlockInputs + 16 * s + 4 * quad_lane;
            words[s][g] =
                load_x_words_checked(x_lane[g] + 16 * s - k, q.permutation, k, p.m - k);
          }
      }
#pragma unroll
      for (int g = 0; g < kGroups; ++g) x_lane[g] += kBlockInputs;
    };
    // A scale group spans 2^block_shift k-blocks (all of them for the per-output formats), or
    // half of one (4-bit groups of 32). The warp's groups follow each other: each tile's scales
    // and zero points of the next group are loaded when the current one begins.
    constexpr int kBlockLog2 = kBlockInputs == 64 ? 6 : 5;
    const int block_shift = kShortGroups ? 0 : min(q.group_shift - kBlockLog2, 31);
    const int group_mask = int((int64_t(1) << block_shift) - 1);
    const int first_group = kShortGroups ? 2 * kb_begin : kb_begin >> block_shift;
    const int last_group = kShortGroups ? 2 * (kb_begin + count) - 1
                                        : (kb_begin + count - 1) >> block_shift;
    // Per tile, this lane's scales and zero points of the next group, loaded (as stored) when
    // the current group begins, and converted when the next one does.
    const TS *next_scales[kTiles];
    const unsigned char *next_zeros[kTiles];
#pragma unroll
    for (int r = 0; r < kTiles; ++r) {
      const int64_t tile_group =
          min(first_tile + r, row_tiles - 1) * q.scale_groups + first_group;
      next_scales[r] = static_cast<const TS *>(q.scales) + tile_group * 16 + quad;
      next_zeros[r] = kZeroPoints ? q.zeros + tile_group * 8 + quad / 2 : nullptr;
    }
    float scale_lo[kTiles], scale_hi[kTiles];
    unsigned zero_lo[kTiles], zero_hi[kTiles];
    TS loaded_lo[kTiles], loaded_hi[kTiles];
    unsigned loaded_zeros[kTiles];
    int groups_left = last_group - first_group;  // after the current one
    const auto load_group = [&] {
#pragma unroll
      for (int r = 0; r < kTiles; ++r) {
        loaded_lo[r] = __ldg(next_scales[r]);
        loaded_hi[r] = __ldg(next_scales[r] + 8);
        if constexpr (kZeroPoints)  // both zero-point bytes, 4 apart
          loaded_zeros[r] =
              __ldg(next_zeros[r]) | (unsigned(__ldg(next_zeros[r] + 4)) << 8);
      }
    };
    const auto begin_group = [&] {
#pragma unroll
      for (int r = 0; r < kTiles; ++r) {
        scale_lo[r] = to_acc(loaded_lo[r]);
        scale_hi[r] = to_acc(loaded_hi[r]);
        zero_lo[r] = kZeroPoints ? (loaded_zeros[r] >> (4 * (quad % 2))) & 0xFu : 8u;
        zero_hi[r] = kZeroPoints ? (loaded_zeros[r] >> (8 + 4 * (quad % 2))) & 0xFu : 8u;
      }
      if (groups_left > 0) {
#pragma unroll
        for (int r = 0; r < kTiles; ++r) {
          next_scales[r] += 16;
          if constexpr (kZeroPoints) next_zeros[r] += 8;
        }
        load_group();
      }
    };
    load_group();
    begin_group();
    // The warp's k-blocks i0 .. i0 + kUnroll - 1 from `buffer`; `whole`: all of them are the
    // warp's and read x directly.
    const auto consume = [&](const uint4 (&buffer)[kUnroll][kTiles], int i0, bool whole) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = i0 + u;
        if (!whole && i >= count) break;
        XWords x_words;
        load_x(i, x_words, whole || i < direct);
#pragma unroll
        for (int half = 0; half < (kShortGroups ? 2 : 1); ++half) {
          constexpr int kHalfSteps = kShortGroups ? kSteps / 2 : kSteps;
#pragma unroll
          for (int r = 0; r < kTiles; ++r) {
            const unsigned words[4] = {buffer[u][r].x, buffer[u][r].y, buffer[u][r].z,
                                       buffer[u][r].w};
            // This k-block's (or half's) products, then times the group's scales.
            float sums[kGroups][4] = {};
#pragma unroll
            for (int s = half * kHalfSteps; s < (half + 1) * kHalfSteps; ++s) {
              const Fragment fragment = code_fragment<Code, TX>(words, s, zero_lo[r], zero_hi[r]);
#pragma unroll
              for (int g = 0; g < kGroups; ++g)
                mma_16x8x16<TX>(sums[g], fragment.r, x_words[s][g].x, x_words[s][g].y);
            }
#pragma unroll
            for (int g = 0; g < kGroups; ++g) {
              acc[r][g][0] = fmaf(scale_lo[r], sums[g][0], acc[r][g][0]);
              acc[r][g][1] = fmaf(scale_lo[r], sums[g][1], acc[r][g][1]);
              acc[r][g][2] = fmaf(scale_hi[r], sums[g][2], acc[r][g][2]);
              acc[r][g][3] = fmaf(scale_hi[r], sums[g][3], acc[r][g][3]);
            }
          }
          // The next group begins after this one's last k-block (or half).
          if (kShortGroups || ((kb_begin + i + 1) & group_mask) == 0) {
            --groups_left;
            begin_group();
          }
        }
      }
    };
    // Two buffers in turn: one streams in while the other is decoded. Whole rounds of them run
    // without the per-k-block checks while x is direct, then the rest.
    int i = 0;
    if constexpr (kWholeRounds)
      if (direct == count)
        for (; i + 2 * kUnroll <= count; i += 2 * kUnroll) {
          load_codes(back, i + kUnroll);
          consume(front, i, true);
          load_codes(front, i + 2 * kUnroll);
          consume(back, i + kUnroll, true);
        }
    for (; i < count; i += 2 * kUnroll) {
      load_codes(back, i + kUnroll);
      consume(front, i, false);
      if (i + kUnroll >= count) break;
      load_codes(front, i + 2 * kUnroll);
      consume(back, i + kUnroll, false);
    }
  }
  // acc[r][g]: outputs 16 r + quad (+ 8), vectors g * 8 + 2 quad_lane (+ 1).
#pragma unroll
  for (int i = 0; i < Variant::kOutputs * kMaxRhsPerPass; i += 32) warp_sums[warp][i + lane] = 0.0f;
  __syncwarp();
#pragma unroll
  for (int r = 0; r < kTiles; ++r)
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int output = 16 * r + quad + (i / 2) * 8, c = g * 8 + 2 * quad_lane + i % 2;
        warp_sums[warp][c * Variant::kOutputs + output] = acc[r][g][i];
      }
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
  const auto with_layout = [&](auto scale, auto groups) -> Kernel {
    using Yes = std::true_type;
    using No = std::false_type;
    if constexpr (CodeTraits<Code>::kZeroPoints) {
      const bool zeros = pass.quant.zeros != nullptr, short_groups = pass.quant.group_shift == 5;
      if (zeros)
        return short_groups ? pick(scale, groups, Yes{}, Yes{}) : pick(scale, groups, Yes{}, No{});
      return short_groups ? pick(scale, groups, No{}, Yes{}) : pick(scale, groups, No{}, No{});
    } else {
      return pick(scale, groups, No{}, No{});
    }
  };
  const auto with_vectors = [&](auto scale) -> Kernel {
    return pass.rhs_count <= 8 ? with_layout(scale, std::integral_constant<int, 1>{})
                               : with_layout(scale, std::integral_constant<int, 2>{});
  };
  switch (pass.quant.scale_type) {
    case ElementType::kF16: return with_vectors(__half{});
    case ElementType::kBF16: return with_vectors(__nv_bfloat16{});
    default: return with_vectors(float{});
  }
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
