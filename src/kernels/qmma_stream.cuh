// A warp's stream over quantized weights (xgemv_quant.h, packed layout) on the tensor cores: its
// k-blocks of kTiles row tiles of 16 outputs, each lane's 16-byte slot of every tile's k-block
// (512 contiguous bytes per warp, streamed once) turned into the 16-bit values of its A
// fragments in registers (quant_codes.cuh), the vectors' x (8 bytes per step) the B fragments,
// products accumulated in fp32 per k-block (per half of one for 4-bit groups of 32), each times
// its group's scales in fp32, the scales of the next group loaded while the current one runs.
// kUnroll k-blocks of every tile stream in while the previous kUnroll are decoded (two
// buffers). The quantized GEMV (variants/qgemv_mma.cuh) and the routed experts
// (variants/moe_qmma.cuh) run it on their tiles and vectors.
#pragma once

#include "kernels/mma_step.cuh"
#include "kernels/quant_codes.cuh"
#include "kernels/rhs_tile.cuh"

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

// The parts of one weight a stream reads (all of a weight's storage: codes, scales, zero points
// or nullptr, permutation or nullptr) and how its groups run (QuantOperand's).
struct QuantParts {
  const void *codes;
  const void *scales;
  const unsigned char *zeros;
  const int32_t *permutation;
  int group_shift;
  int64_t k_blocks, scale_groups;
};

// kGroups 8-vector sides; kShortGroups: 4-bit groups of 32 inputs, two per k-block (else a
// group spans whole k-blocks). tile[r]: the row tile of the weight the stream's tile r is.
template <class Code, class TX, class TS, int kTiles, int kUnroll, int kGroups, bool kZeroPoints,
          bool kShortGroups>
struct QmmaWarpStream {
  static constexpr int kBlockInputs = CodeTraits<Code>::kBlockInputs;
  static constexpr int kSteps = kStepsPerBlock<Code>;
  static constexpr int kSlots = 32;  // 16-byte slots per tile k-block
  // Whole rounds of the two buffers run without per-k-block checks (below) at up to 8 vectors
  // with groups of 64 inputs or more; elsewhere that second copy of the loop spills 4-464 bytes
  // (ptxas). Here it leaves 4 bytes, in the fp16-activation 4-bit instances without zero points.
  static constexpr bool kWholeRounds = kGroups == 1 && !kShortGroups;

  QuantParts parts;
  int64_t tile[kTiles];
  int kb_begin, count;  // the warp's k-blocks
  const uint4 *codes[kTiles];
  uint4 front[kUnroll][kTiles], back[kUnroll][kTiles];

  // Per tile, this lane's slot of the warp's first k-block.
  __device__ __forceinline__ QmmaWarpStream(const QuantParts &weight,
                                            const int64_t (&tiles)[kTiles], int first_block,
                                            int blocks)
      : parts(weight), kb_begin(first_block), count(blocks) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < kTiles; ++r) {
      tile[r] = tiles[r];
      codes[r] = static_cast<const uint4 *>(parts.codes) +
                 (tile[r] * parts.k_blocks + kb_begin) * kSlots + lane;
    }
  }

  // The warp's k-blocks i .. i + kUnroll - 1 of every tile, from `codes`, which then moves on
  // by kUnroll k-blocks. Past the warp's end nothing is used: the registers take zeros (keeping
  // their old values live spills), except where whole rounds run, whose loop the fill would
  // lengthen.
  __device__ __forceinline__ void load_codes(uint4 (&buffer)[kUnroll][kTiles], int i) {
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
  }

  // The first kUnroll k-blocks (early start loads them before its wait).
  __device__ __forceinline__ void load_first() { load_codes(front, 0); }

  // acc[r][g] (outputs quad and quad + 8 of tile r, vectors g * 8 + 2 quad_lane (+ 1)) += the
  // warp's k-blocks' products with `vectors` (column(c): vector c's packed input 0, clamped to
  // the last vector: the columns past the count are computed on real data and never stored, an
  // mma column never mixing into another; aligned(8): every vector's runs of 4 are one load),
  // x of `inputs` elements. After load_first.
  template <class Vectors>
  __device__ __forceinline__ void run(const Vectors &vectors, int64_t inputs,
                                      float (&acc)[kTiles][kGroups][4]) {
    const int lane = threadIdx.x % 32, quad = lane / 4, quad_lane = lane % 4;
    // This lane's vectors quad (+ 8) at the warp's first k-block, then moving on with it.
    const TX *x_lane[kGroups];
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
      x_lane[g] = vectors.column(g * 8 + quad) + int64_t(kb_begin) * kBlockInputs + 4 * quad_lane;
    // The warp's k-blocks whose x loads need no checks: aligned x, no permutation, inside x.
    const bool x_direct = vectors.aligned(8) && parts.permutation == nullptr;
    const int direct = x_direct ? min(count, int(inputs / kBlockInputs) - kb_begin) : 0;
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
                load_x_words_checked(x_lane[g] + 16 * s - k, parts.permutation, k, inputs - k);
          }
      }
#pragma unroll
      for (int g = 0; g < kGroups; ++g) x_lane[g] += kBlockInputs;
    };
    // A scale group spans 2^block_shift k-blocks (all of them for the per-output formats), or
    // half of one (4-bit groups of 32). The warp's groups follow each other: each tile's scales
    // and zero points of the next group are loaded when the current one begins.
    constexpr int kBlockLog2 = kBlockInputs == 64 ? 6 : 5;
    const int block_shift = kShortGroups ? 0 : min(parts.group_shift - kBlockLog2, 31);
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
      const int64_t tile_group = tile[r] * parts.scale_groups + first_group;
      next_scales[r] = static_cast<const TS *>(parts.scales) + tile_group * 16 + quad;
      next_zeros[r] = kZeroPoints ? parts.zeros + tile_group * 8 + quad / 2 : nullptr;
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
};

// A warp's acc[r][g] (outputs 16 r + quad (+ 8), vectors g * 8 + 2 quad_lane (+ 1)) into its
// values (value c * kOutputs + output of vector c), the values of vectors it does not carry zero.
template <int kOutputs, int kTiles, int kGroups>
__device__ __forceinline__ void store_tile_sums(const float (&acc)[kTiles][kGroups][4],
                                                float *values) {
  const int lane = threadIdx.x % 32, quad = lane / 4, quad_lane = lane % 4;
#pragma unroll
  for (int i = 0; i < kOutputs * kMaxRhsPerPass; i += 32) values[i + lane] = 0.0f;
  __syncwarp();
#pragma unroll
  for (int r = 0; r < kTiles; ++r)
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int output = 16 * r + quad + (i / 2) * 8, c = g * 8 + 2 * quad_lane + i % 2;
        values[c * kOutputs + output] = acc[r][g][i];
      }
}

// The instance of a quantized kernel for a weight: pick(scale, zero_points, short_groups), with a
// value of the weight's scale type and, as std::bool_constant, whether it has zero points and
// 4-bit groups of 32 (never, for codes without zero points).
template <class Code, class Pick>
auto kernel_for_weight(const QuantOperand &q, Pick &&pick) {
  using Yes = std::true_type;
  using No = std::false_type;
  const auto with_layout = [&](auto scale) {
    if constexpr (CodeTraits<Code>::kZeroPoints) {
      const bool zeros = q.zeros != nullptr, short_groups = q.group_shift == 5;
      if (zeros) return short_groups ? pick(scale, Yes{}, Yes{}) : pick(scale, Yes{}, No{});
      return short_groups ? pick(scale, No{}, Yes{}) : pick(scale, No{}, No{});
    } else {
      return pick(scale, No{}, No{});
    }
  };
  switch (q.scale_type) {
    case ElementType::kF16: return with_layout(__half{});
    case ElementType::kBF16: return with_layout(__nv_bfloat16{});
    default: return with_layout(float{});
  }
}

}  // namespace xgemv::kernels
