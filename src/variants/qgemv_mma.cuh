// Quantized weights (xgemv_quant.h) on the tensor cores: Y := alpha * W X + beta * Y for up to 16
// vectors per pass. A block owns kTiles row tiles of 16 outputs (the 16-row side of
// mma.m16n8k16) and a split of the k-blocks; its warps take interleaved k-blocks, kUnroll at a
// time in flight. Each lane loads its 16-byte slot of every tile's k-block (512 contiguous bytes
// per warp, streamed once) and turns the codes into the 16-bit values v of its A fragments in
// registers (kernels/quant_codes.cuh); x, loaded 8 bytes per step, is the B fragment, shared by
// the block's tiles. Products v * x accumulate in fp32 over runs of 32 inputs (each within one
// scale group), each run times its scales in fp32. One vector costs the same mma as eight, and
// the instructions stay below the stream of codes.
#pragma once

#include "kernels/quant_codes.cuh"
#include "kernels/rhs_tile.cuh"
#include "variants/gemv_t_mma.cuh"

namespace xgemv {

template <int kTilesPerBlock, int kWarpsPerBlock, int kBlocksInFlight, int kResidentBlocks>
struct QgemvMmaTile {
  static constexpr int kTiles = kTilesPerBlock;
  static constexpr int kOutputs = 16 * kTiles;
  static constexpr int kWarps = kWarpsPerBlock;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kUnroll = kBlocksInFlight;  // k-blocks in flight per warp and tile
  static constexpr int kBlocksPerSm = kResidentBlocks;
  static constexpr VariantName kName = variant_name("q_mma", kOutputs);
  static constexpr VariantFamily kFamily = VariantFamily::kQuantized;

  static bool implements(const GemvProblem &p) {
    const bool x16 = p.types.x == ElementType::kF16 || p.types.x == ElementType::kBF16;
    return is_quantized(p.types.a) && p.transposed() && x16 && p.batch_count == 1;
  }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(ceil_div(p.n, 16), kTiles);
    const kernels::SplitPlan split = kernels::plan_split(
        device.split_workspace, tiles, 1, p.quant.k_blocks, int64_t(kWarps) * kUnroll,
        int64_t(kOutputs) * kernels::kMaxRhsPerPass, int64_t(device.sm_count) * kBlocksPerSm,
        int(sizeof(float)));
    return {dim3(unsigned(tiles), unsigned(split.count), 1), dim3(kThreads), split};
  }

  static bool suits(const GemvProblem &p, const DeviceLimits &device, LaunchPlan &plan) {
    plan = QgemvMmaTile::plan(p, device);
    return true;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context);
};

namespace kernels {

// Four x elements of one vector at packed inputs k .. k + 3 (those at or past `valid` read as
// zero, as the zero codes of the padding they meet), as the two words of a B fragment; through
// the permutation where the weight has one.
template <class TX>
__device__ __forceinline__ void load_x_words(const TX *x, const int32_t *permutation, int64_t k,
                                             int64_t valid, bool whole, unsigned (&words)[2]) {
  TX elements[4];
  if (permutation != nullptr) {
#pragma unroll
    for (int e = 0; e < 4; ++e) elements[e] = e < valid ? x[__ldg(permutation + k + e)] : TX(0.0f);
  } else {
    load_run<4, false>(x + k, 1, valid, whole && valid >= 4, elements);
  }
  memcpy(words, elements, sizeof(words));
}

template <class Code, class TX, class TY, class Variant, int kGroups, bool kEarlyStart>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    qgemv_mma(const KernelArgs<float> args) {
  constexpr int kTiles = Variant::kTiles, kWarps = Variant::kWarps, kUnroll = Variant::kUnroll;
  constexpr int kBlockInputs = CodeTraits<Code>::kBlockInputs;
  constexpr int kSteps = kStepsPerBlock<Code>;
  constexpr bool kInt4 = std::is_same_v<Code, Int4Code>;
  begin_kernel<kEarlyStart>();
  const GemvProblem &p = args.problem;
  const QuantOperand &q = p.quant;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int quad = lane / 4, quad_lane = lane % 4;  // fragment row (and vector) / input part
  const int64_t row_tiles = ceil_div(p.n, 16);
  const int64_t first_tile = int64_t(blockIdx.x) * kTiles;
  const int64_t kb_begin = int64_t(blockIdx.y) * args.split.length;
  const int64_t kb_end = min(q.k_blocks, kb_begin + args.split.length);
  constexpr int64_t kWarpStep = int64_t(kWarps) * kUnroll;
  __shared__ float warp_sums[kWarps][Variant::kOutputs * kMaxRhsPerPass];

  // This lane's slot of tile t's k-block b; tiles past the last one read the last (their
  // outputs are never stored).
  const uint4 *codes = static_cast<const uint4 *>(p.a.data) + lane;
  int64_t tile_of[kTiles];
#pragma unroll
  for (int r = 0; r < kTiles; ++r) tile_of[r] = min(first_tile + r, row_tiles - 1);
  uint4 in_flight[kUnroll][kTiles];
  const auto load_codes = [&](int64_t b) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t kb = b + int64_t(u) * kWarps;
#pragma unroll
      for (int r = 0; r < kTiles; ++r)
        in_flight[u][r] = kb < kb_end ? __ldcs(codes + (tile_of[r] * q.k_blocks + kb) * 32)
                                      : make_uint4(0, 0, 0, 0);
    }
  };

  int64_t b = kb_begin + warp;
  // Early start streams the codes before the kernel before this one has finished.
  if (kEarlyStart && b < kb_end) load_codes(b);
  if constexpr (kEarlyStart) wait_for_predecessor();
  const float alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (alpha == 0.0f && beta == 1.0f) return;  // quick return, decided on the device

  float acc[kTiles][kGroups][4] = {};
  if (alpha != 0.0f) {
    if (!kEarlyStart && b < kb_end) load_codes(b);
    const TX *x = static_cast<const TX *>(p.x.data);
    const bool x_whole = vectors_aligned(x, p.x.ld, 8);
    for (; b < kb_end; b += kWarpStep) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t kb = b + int64_t(u) * kWarps;
        if (kb >= kb_end) break;
        const int64_t k0 = kb * kBlockInputs;
        // B fragments: vector quad (+ 8), inputs k0 + 16 s + 4 quad_lane .. + 3.
        unsigned x_words[kSteps][kGroups][2];
#pragma unroll
        for (int s = 0; s < kSteps; ++s)
#pragma unroll
          for (int g = 0; g < kGroups; ++g) {
            const int64_t c = g * 8 + quad, k = k0 + 16 * s + 4 * quad_lane;
            const TX *xc = x + min(c, p.rhs_count - 1) * p.x.ld;
            load_x_words(xc, q.permutation, k, c < p.rhs_count ? p.m - k : 0, x_whole,
                         x_words[s][g]);
          }
#pragma unroll
        for (int r = 0; r < kTiles; ++r) {
          const unsigned words[4] = {in_flight[u][r].x, in_flight[u][r].y, in_flight[u][r].z,
                                     in_flight[u][r].w};
          // Runs of 32 inputs (two mma steps), each within one scale group.
#pragma unroll
          for (int run = 0; run < kSteps / 2; ++run) {
            const int64_t tile_group =
                tile_of[r] * q.scale_groups + ((k0 + 32 * run) >> q.group_shift);
            unsigned z0 = 8, z1 = 8;
            if (kInt4 && q.zeros != nullptr) {
              z0 = load_zero(q.zeros, tile_group, quad);
              z1 = load_zero(q.zeros, tile_group, quad + 8);
            }
            float sums[kGroups][4] = {};
#pragma unroll
            for (int s = 2 * run; s < 2 * run + 2; ++s) {
              Fragment fragment;
              if constexpr (kInt4)
                fragment = int4_fragment<TX>(words[s], Int4Offsets<TX>(z0), Int4Offsets<TX>(z1));
              else
                fragment = byte_fragment<Code, TX>(words[2 * s], words[2 * s + 1]);
#pragma unroll
              for (int g = 0; g < kGroups; ++g)
                mma_16x8x16<TX>(sums[g], fragment.r, x_words[s][g][0], x_words[s][g][1]);
            }
            // The run's sums times the scales of outputs quad and quad + 8.
            const float s0 = load_scale(q.scales, q.scale_type, tile_group * 16 + quad);
            const float s1 = load_scale(q.scales, q.scale_type, tile_group * 16 + quad + 8);
#pragma unroll
            for (int g = 0; g < kGroups; ++g) {
              acc[r][g][0] = fmaf(s0, sums[g][0], acc[r][g][0]);
              acc[r][g][1] = fmaf(s0, sums[g][1], acc[r][g][1]);
              acc[r][g][2] = fmaf(s1, sums[g][2], acc[r][g][2]);
              acc[r][g][3] = fmaf(s1, sums[g][3], acc[r][g][3]);
            }
          }
        }
      }
      if (b + kWarpStep < kb_end) load_codes(b + kWarpStep);
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

}  // namespace kernels

template <int kTilesPerBlock, int kWarpsPerBlock, int kBlocksInFlight, int kResidentBlocks>
template <class TA, class TX, class TY, class S>
cudaError_t QgemvMmaTile<kTilesPerBlock, kWarpsPerBlock, kBlocksInFlight,
                         kResidentBlocks>::launch(const GemvProblem &problem,
                                                  const LaunchPlan &plan,
                                                  const LaunchContext &context) {
  using Variant = QgemvMmaTile;
  return for_each_rhs_launch<TA, TX, TY>(
      problem, plan, int64_t(kOutputs) * kernels::kMaxRhsPerPass, int(sizeof(S)),
      [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
        const bool eight = pass.rhs_count <= 8;
        const auto kernel =
            context.early_start
                ? (eight ? &kernels::qgemv_mma<TA, TX, TY, Variant, 1, true>
                         : &kernels::qgemv_mma<TA, TX, TY, Variant, 2, true>)
                : (eight ? &kernels::qgemv_mma<TA, TX, TY, Variant, 1, false>
                         : &kernels::qgemv_mma<TA, TX, TY, Variant, 2, false>);
        return kernels::launch_kernel(kernel, pass, pass_plan, context);
      });
}

// A first tile shape: 2 row tiles (32 outputs) per block of 8 warps, 2 k-blocks in flight per
// warp and tile, 2 blocks per SM.
using QgemvMma = QgemvMmaTile<2, 8, 2, 2>;

}  // namespace xgemv
