// The conversions of xgemv_quant.h on the device: checkpoint tensors (plain codes, GPTQ, AWQ) or
// dense weights into a weight's storage, and the storage back to dense values.
//
// Every writer works in units that own whole bytes or words of the storage, so that no two
// threads share one: a 32-bit word of codes (4-bit: outputs o and o + 8 at four inputs; 8-bit:
// one output at four inputs), one scale, one byte of two zero points, one permutation entry.
// Where each value goes is packed_layout.hpp's (output, packed input or group) -> place, the one
// inverse of the layout; padding (outputs past `outputs`, inputs past `inputs`, groups of
// padding inputs) is written by the same units (codes of v = 0, scales 0, zero points 8), and
// the bytes between the parts are zeroed, so that each packing conversion defines every byte of
// layout.bytes. What a unit computes is a host-and-device functor (the per-unit functions
// below), run by one grid-stride kernel; the quantize reductions (a warp per row and group, a
// block per 128 x 128 block) and the act-order ranks are kernels of their own.
#include "quant/convert.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "quant/code_traits.hpp"
#include "type_switches.hpp"
#include "quant/packed_layout.hpp"

namespace xgemv::quant {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t(1) << 20;  // grid-stride loops beyond

// --- fp32 arithmetic, rounded to nearest even on the host and the device ----------------------

XGEMV_HOST_DEVICE inline float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
XGEMV_HOST_DEVICE inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
XGEMV_HOST_DEVICE inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
XGEMV_HOST_DEVICE inline float clamp(float v, float lo, float hi) { return fminf(fmaxf(v, lo), hi); }

// fp32, fp16, bf16 <-> fp32 (to 16 bits: round to nearest even).
template <class T>
XGEMV_HOST_DEVICE float to_float(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else return v;
}
template <class T>
XGEMV_HOST_DEVICE T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return v;
}

template <class Code>
inline constexpr bool kFourBitCode = CodeTraits<Code>::kBits == 4;

// The extremes a scale is chosen from: max |w|, and min w, max w, all three over the unit's
// weights and 0.
struct Extremes {
  float max_abs = 0.0f, min = 0.0f, max = 0.0f;
};
XGEMV_HOST_DEVICE inline Extremes with(const Extremes &x, float w) {
  return {fmaxf(x.max_abs, fabsf(w)), fminf(x.min, w), fmaxf(x.max, w)};
}
XGEMV_HOST_DEVICE inline Extremes combined(const Extremes &a, const Extremes &b) {
  return {fmaxf(a.max_abs, b.max_abs), fminf(a.min, b.min), fmaxf(a.max, b.max)};
}

template <class TS>
struct ChosenScale {
  TS scale;
  unsigned zero;  // INT4: the zero point (8 for symmetric codes and for a scale of 0)
};

// xgemv_qweight_quantize's scale (rounded to TS) and zero point of one unit.
template <class Code, class TS>
XGEMV_HOST_DEVICE ChosenScale<TS> choose_scale(const Extremes &x, bool zero_points) {
  // With zero points the codes 0..2^bits - 1 span [min, max]; else +-largest span +-max |w|.
  constexpr float kCodeSpan = float((1u << CodeTraits<Code>::kBits) - 1);
  float s;
  if constexpr (CodeTraits<Code>::kZeroPoints)
    s = zero_points ? div_rn(sub_rn(x.max, x.min), kCodeSpan)
                    : div_rn(x.max_abs, CodeTraits<Code>::kLargestValue);
  else
    s = div_rn(x.max_abs, CodeTraits<Code>::kLargestValue);
  if (s == 0.0f) s = 0.0f;  // +0, whichever zero the extremes carried
  const TS rounded = from_float<TS>(s);
  const float scale = to_float(rounded);
  unsigned z = 8;
  if (zero_points && scale != 0.0f)
    z = unsigned(clamp(rintf(div_rn(-x.min, scale)), 0.0f, kCodeSpan));
  return {rounded, z};
}

// The code of weight w with the (rounded) scale s and zero point z (8 for symmetric INT4).
template <class Code>
XGEMV_HOST_DEVICE unsigned quantize_code(float w, float s, unsigned z) {
  if (s == 0.0f) return CodeTraits<Code>::kZeroPoints ? z : 0u;  // v = 0 (z is 8 for such a group)
  return CodeTraits<Code>::code_of(div_rn(w, s), z);
}

// The zero point stored for output o, packed group j.
XGEMV_HOST_DEVICE inline unsigned stored_zero(const PackedGeometry &g, const uint8_t *zeros,
                                              int64_t o, int64_t j) {
  const ZeroPlace place = zero_place(g, o, j);
  return (unsigned(zeros[place.byte]) >> (4 * place.nibble)) & 0xFu;
}

// --- sources: the value of output o (< outputs) at packed input k (< inputs) or packed group j
// (valid) in the tensors a conversion reads. Codes: their low 4 or 8 bits count; zero points:
// their low 4 bits.

// xgemv_qweight_pack's codes (at o, k) and zero points (at o, j): bytes[o * ld + column].
struct PlainBytes {
  const uint8_t *bytes;
  int64_t ld;
  XGEMV_HOST_DEVICE unsigned operator()(int64_t o, int64_t column) const {
    return bytes[o * ld + column];
  }
};

// GPTQ: qweight[i / 8][o], nibble i % 8, for input i = P[k] (act-order) or k.
struct GptqCodes {
  const int32_t *qweight;
  int64_t outputs;
  const int32_t *permutation;  // the storage's P (entries in 0..inputs-1), or nullptr
  XGEMV_HOST_DEVICE unsigned operator()(int64_t o, int64_t k) const {
    const int64_t i = permutation != nullptr ? permutation[k] : k;
    return unsigned(qweight[i / 8 * outputs + o]) >> (4 * (i % 8));
  }
};

// AWQ: qweight[k][o / 8], nibble awq_nibble(o).
struct AwqCodes {
  const int32_t *qweight;
  int64_t words;  // outputs / 8
  XGEMV_HOST_DEVICE unsigned operator()(int64_t o, int64_t k) const {
    return unsigned(qweight[k * words + o / 8]) >> (4 * awq_nibble(o));
  }
};

// Dense weights quantized with the scales and zero points already in the storage.
template <class Code, class TW, class TS>
struct QuantizedCodes {
  const TW *weights;
  int64_t ld;
  PackedGeometry g;
  const TS *scales;      // the storage's
  const uint8_t *zeros;  // the storage's, or nullptr
  XGEMV_HOST_DEVICE unsigned operator()(int64_t o, int64_t k) const {
    const int64_t j = g.group_of(k);
    const unsigned z = zeros != nullptr ? stored_zero(g, zeros, o, j) : 8u;
    return quantize_code<Code>(to_float(weights[o * ld + k]), to_float(scales[scale_index(g, o, j)]),
                               z);
  }
};

// xgemv_qweight_pack: scales[(o / rows_per_scale) * ld + j] (rows_per_scale 128 for
// FP8_E4M3_BLOCK, else 1; j is 0 for the per-output formats).
template <class TS>
struct PlainScales {
  const TS *scales;
  int64_t ld, rows_per_scale;
  XGEMV_HOST_DEVICE TS operator()(int64_t o, int64_t j) const {
    return scales[o / rows_per_scale * ld + j];
  }
};

// GPTQ and AWQ: scales[j][o].
template <class TS>
struct CheckpointScales {
  const TS *scales;
  int64_t outputs;
  XGEMV_HOST_DEVICE TS operator()(int64_t o, int64_t j) const { return scales[j * outputs + o]; }
};

// Quantize's scales and zero points of one unit, as chosen: a tile's 16 outputs (values[o % 16])
// or one value for all.
template <class TS>
struct TileScales {
  const float *values;  // TS values, widened
  XGEMV_HOST_DEVICE TS operator()(int64_t o, int64_t) const {
    return from_float<TS>(values[o % kTileOutputs]);
  }
};
template <class TS>
struct UniformScale {
  float value;  // a TS value, widened
  XGEMV_HOST_DEVICE TS operator()(int64_t, int64_t) const { return from_float<TS>(value); }
};
struct TileZeros {
  const unsigned *values;
  XGEMV_HOST_DEVICE unsigned operator()(int64_t o, int64_t) const {
    return values[o % kTileOutputs];
  }
};

// GPTQ and AWQ: qzeros[j][o / 8], nibble o % 8 (GPTQ) or awq_nibble(o), plus 1 for GPTQ's
// zeros stored minus one.
struct CheckpointZeros {
  const int32_t *qzeros;
  int64_t words;  // outputs / 8
  bool awq_order;
  unsigned add;
  XGEMV_HOST_DEVICE unsigned operator()(int64_t o, int64_t j) const {
    const int nibble = awq_order ? awq_nibble(o) : int(o % 8);
    return (unsigned(qzeros[j * words + o / 8]) >> (4 * nibble)) + add;
  }
};

// --- the units of work ----------------------------------------------------------------------

// One word of codes (code_word(unit)), padding included.
template <bool kFourBit, class Source>
struct WriteCodes {
  PackedGeometry g;
  unsigned *codes;
  Source source;
  XGEMV_HOST_DEVICE void operator()(int64_t unit) const {
    constexpr unsigned kMask = kFourBit ? 0xFu : 0xFFu, kPadding = kFourBit ? 8u : 0u;
    const CodeWord w = code_word<kFourBit>(g, unit);
    unsigned word = 0;
    for (int h = 0; h < kWordOutputs<kFourBit>; ++h)
      for (int e = 0; e < 4; ++e) {
        const int64_t o = w.o + 8 * h, k = w.k0 + e;
        const unsigned code = o < g.outputs && k < g.inputs ? source(o, k) & kMask : kPadding;
        word |= code << code_place<kFourBit>(g, o, k).shift();
      }
    codes[code_place<kFourBit>(g, w.o, w.k0).word()] = word;
  }
};

// The scale of output o (< 16 T), packed group j (< G), padding included.
template <class TS, class Source>
XGEMV_HOST_DEVICE void write_scale(const PackedGeometry &g, TS *scales, const Source &source,
                                   int64_t o, int64_t j) {
  scales[scale_index(g, o, j)] =
      o < g.outputs && g.group_valid(j) ? source(o, j) : from_float<TS>(0.0f);
}

// The byte of the zero points of outputs o and o + 1 (o even), packed group j.
template <class Source>
XGEMV_HOST_DEVICE void write_zero_pair(const PackedGeometry &g, uint8_t *zeros,
                                       const Source &source, int64_t o, int64_t j) {
  unsigned byte = 0;
  for (int h = 0; h < 2; ++h) {
    const int64_t out = o + h;
    const unsigned z = out < g.outputs && g.group_valid(j) ? source(out, j) & 0xFu : 8u;
    byte |= z << (4 * zero_place(g, out, j).nibble);
  }
  zeros[zero_place(g, o, j).byte] = uint8_t(byte);
}

template <class TS, class Source>
struct WriteScales {
  PackedGeometry g;
  TS *scales;
  Source source;
  XGEMV_HOST_DEVICE void operator()(int64_t unit) const {
    const ScaleEntry e = scale_entry<1>(g, unit);
    write_scale(g, scales, source, e.o, e.j);
  }
};

template <class Source>
struct WriteZeros {
  PackedGeometry g;
  uint8_t *zeros;
  Source source;
  XGEMV_HOST_DEVICE void operator()(int64_t unit) const {
    const ScaleEntry e = scale_entry<2>(g, unit);
    write_zero_pair(g, zeros, source, e.o, e.j);
  }
};

// P[k] = given[k] where that is an input, else k (the identity where given is nullptr).
struct WritePermutation {
  int32_t *permutation;
  const int32_t *given;
  int64_t inputs;
  XGEMV_HOST_DEVICE void operator()(int64_t k) const {
    const int64_t p = given != nullptr ? given[k] : k;
    permutation[k] = int32_t(p >= 0 && p < inputs ? p : k);
  }
};

// The bytes between the parts of the storage (each fewer than 256).
struct Gaps {
  int64_t begin[4], length[4];
};
struct ZeroGaps {
  uint8_t *storage;
  Gaps gaps;
  XGEMV_HOST_DEVICE void operator()(int64_t unit) const {
    const int part = int(unit / int64_t(kStorageAlignment));
    const int64_t i = unit % int64_t(kStorageAlignment);
    if (i < gaps.length[part]) storage[gaps.begin[part] + i] = 0;
  }
};
constexpr int64_t kGapUnits = 4 * int64_t(kStorageAlignment);

// The values of one word of codes, w = v * s in fp32, at out[o][P[k]] (or [o][k]).
template <class Code, class TS, class TO>
struct Dequantize {
  PackedGeometry g;
  const unsigned *codes;
  const TS *scales;
  const uint8_t *zeros;        // nullptr: z = 8
  const int32_t *permutation;  // nullptr: the identity
  TO *out;
  int64_t ld;
  XGEMV_HOST_DEVICE void operator()(int64_t unit) const {
    constexpr bool kFourBit = kFourBitCode<Code>;
    const CodeWord w = code_word<kFourBit>(g, unit);
    const unsigned word = codes[code_place<kFourBit>(g, w.o, w.k0).word()];
    for (int h = 0; h < kWordOutputs<kFourBit>; ++h)
      for (int e = 0; e < 4; ++e) {
        const int64_t o = w.o + 8 * h, k = w.k0 + e;
        if (o >= g.outputs || k >= g.inputs) continue;
        const int64_t column = permutation != nullptr ? permutation[k] : k;
        if (column < 0 || column >= g.inputs) continue;  // not a permutation: never out of bounds
        const int64_t j = g.group_of(k);
        const unsigned z = zeros != nullptr ? stored_zero(g, zeros, o, j) : 8u;
        const float v = CodeTraits<Code>::value(word >> code_place<kFourBit>(g, o, k).shift(), z);
        out[o * ld + column] = from_float<TO>(mul_rn(v, to_float(scales[scale_index(g, o, j)])));
      }
  }
};

// --- kernels --------------------------------------------------------------------------------

__device__ __forceinline__ int64_t first_thread() {
  return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_stride() { return int64_t(gridDim.x) * blockDim.x; }

// unit(u) for every u < units, a thread each.
template <class Unit>
__global__ void __launch_bounds__(kThreads) for_each_unit(int64_t units, const Unit unit) {
  for (int64_t u = first_thread(); u < units; u += thread_stride()) unit(u);
}

template <class Unit>
cudaError_t launch_units(int64_t units, const Unit &unit, cudaStream_t stream) {
  if (units <= 0) return cudaSuccess;
  const int64_t blocks = std::min((units + kThreads - 1) / kThreads, kMaxBlocks);
  for_each_unit<<<unsigned(blocks), kThreads, 0, stream>>>(units, unit);
  return cudaGetLastError();
}

__device__ __forceinline__ Extremes warp_combined(Extremes x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    Extremes other;
    other.max_abs = __shfl_xor_sync(0xFFFFFFFFu, x.max_abs, offset);
    other.min = __shfl_xor_sync(0xFFFFFFFFu, x.min, offset);
    other.max = __shfl_xor_sync(0xFFFFFFFFu, x.max, offset);
    x = combined(x, other);
  }
  return x;
}

// xgemv_qweight_quantize's scales (and zero points) for a scale per output and group (INT4) or
// per output (INT8, FP8_E4M3): a block per tile-group (t, j), a warp per output (two each),
// then the block's 16 scales and 8 zero point bytes. max and min are exact and commutative: the
// result does not depend on the order of the reduction.
template <class Code, class TW, class TS>
__global__ void __launch_bounds__(kThreads)
    quantize_row_scales(const PackedGeometry g, const TW *weights, int64_t ld, TS *scales,
                        uint8_t *zeros) {
  constexpr int kWarps = kThreads / 32;
  __shared__ float tile_scales[kTileOutputs];
  __shared__ unsigned tile_zeros[kTileOutputs];
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int64_t units = g.row_tiles * g.scale_groups;
  for (int64_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const int64_t first = unit / g.scale_groups * kTileOutputs, j = unit % g.scale_groups;
    const int64_t begin = j * g.group, end = std::min(begin + g.group, g.inputs);
    for (int r = warp; r < kTileOutputs; r += kWarps) {
      const int64_t o = first + r;
      Extremes x;
      if (o < g.outputs)
        for (int64_t k = begin + lane; k < end; k += 32) x = with(x, to_float(weights[o * ld + k]));
      x = warp_combined(x);
      if (lane == 0) {
        const ChosenScale<TS> chosen = choose_scale<Code, TS>(x, zeros != nullptr);
        tile_scales[r] = to_float(chosen.scale);  // exact: a TS value
        tile_zeros[r] = chosen.zero;
      }
    }
    __syncthreads();
    if (threadIdx.x < kTileOutputs)
      write_scale(g, scales, TileScales<TS>{tile_scales}, first + threadIdx.x, j);
    if (zeros != nullptr && threadIdx.x < kTileOutputs / 2)
      write_zero_pair(g, zeros, TileZeros{tile_zeros}, first + 2 * threadIdx.x, j);
    __syncthreads();
  }
}

// FP8_E4M3_BLOCK: a block per 128 x 128 block of weights (ob, j), its scale written for each of
// its outputs (padding outputs of the last tile: 0).
template <class TW, class TS>
__global__ void __launch_bounds__(kThreads)
    quantize_block_scales(const PackedGeometry g, const TW *weights, int64_t ld, TS *scales) {
  constexpr int kWarps = kThreads / 32;
  constexpr int64_t kBlock = 128;
  __shared__ float warp_max[kWarps];
  __shared__ float block_scale;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int64_t output_blocks = (g.row_tiles * kTileOutputs + kBlock - 1) / kBlock;
  const int64_t units = output_blocks * g.scale_groups;
  for (int64_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const int64_t row0 = unit / g.scale_groups * kBlock, j = unit % g.scale_groups;
    const int64_t col0 = j * kBlock;
    const int64_t rows = std::max<int64_t>(0, std::min(kBlock, g.outputs - row0));
    const int64_t cols = std::max<int64_t>(0, std::min(kBlock, g.inputs - col0));
    Extremes x;
    for (int64_t r = warp; r < rows; r += kWarps)
      for (int64_t c = lane; c < cols; c += 32)
        x = with(x, to_float(weights[(row0 + r) * ld + col0 + c]));
    x = warp_combined(x);
    if (lane == 0) warp_max[warp] = x.max_abs;
    __syncthreads();
    if (threadIdx.x == 0) {
      Extremes all;
      for (int w = 0; w < kWarps; ++w) all.max_abs = fmaxf(all.max_abs, warp_max[w]);
      block_scale = to_float(choose_scale<E4M3Code, TS>(all, false).scale);
    }
    __syncthreads();
    for (int64_t r = threadIdx.x; r < kBlock; r += kThreads) {
      const int64_t o = row0 + r;
      if (o < g.row_tiles * kTileOutputs)
        write_scale(g, scales, UniformScale<TS>{block_scale}, o, j);
    }
    __syncthreads();
  }
}

// GPTQ act-order: input k (of group g = g_idx[k]) goes to packed input g * group_size + rank,
// its rank among the earlier inputs of its group (the stable sort by group). Inputs whose group
// or rank is out of range are not placed (P keeps the identity written before), so that no
// g_idx can make P leave 0..inputs-1. Each block ranks 256 inputs against every earlier input,
// 256 at a time through shared memory: inputs^2 / 2 compares, about 5 * 10^8 at 32768 inputs.
__global__ void __launch_bounds__(kThreads)
    place_by_group(int32_t *permutation, const int32_t *g_idx, int64_t inputs, int64_t groups,
                   int64_t group_size) {
  __shared__ int32_t earlier[kThreads];
  for (int64_t base = int64_t(blockIdx.x) * kThreads; base < inputs;
       base += int64_t(gridDim.x) * kThreads) {
    const int64_t k = base + threadIdx.x;
    const int32_t group = k < inputs ? g_idx[k] : -1;
    int64_t rank = 0;
    for (int64_t first = 0; first <= base; first += kThreads) {
      __syncthreads();
      earlier[threadIdx.x] = first + threadIdx.x < inputs ? g_idx[first + threadIdx.x] : -1;
      __syncthreads();
      const int count = first == base ? int(threadIdx.x) : kThreads;
      for (int i = 0; i < count; ++i) rank += earlier[i] == group;
    }
    if (k < inputs && group >= 0 && group < groups && rank < group_size)
      permutation[group * group_size + rank] = int32_t(k);
  }
}

// --- launchers ------------------------------------------------------------------------------

template <class T>
struct Type {
  using type = T;
};

template <class F>
cudaError_t with_float_type(xgemv_datatype type, F &&f) {
  switch (type) {
    case XGEMV_R_16F: return f(Type<__half>{});
    case XGEMV_R_16BF: return f(Type<__nv_bfloat16>{});
    default: return f(Type<float>{});
  }
}
template <class F>
cudaError_t with_weight_type(xgemv_datatype type, F &&f) {
  return type == XGEMV_R_16BF ? f(Type<__nv_bfloat16>{}) : f(Type<__half>{});
}
template <class F>
cudaError_t with_code(xgemv_qformat format, F &&f) {
  return with_code_type(format, cudaErrorInvalidValue, f);
}

// The parts of a weight's storage, typed.
struct Parts {
  unsigned *codes;
  void *scales;
  uint8_t *zeros;          // nullptr without zero points
  int32_t *permutation;    // nullptr unless permuted
};
Parts parts_of(const xgemv_qweight_st &weight) {
  auto *base = static_cast<uint8_t *>(weight.storage);
  const xgemv_qweight_layout &layout = weight.layout;
  return {reinterpret_cast<unsigned *>(base + layout.codes_offset), base + layout.scales_offset,
          weight.info.zero_points ? base + layout.zeros_offset : nullptr,
          weight.info.permuted ? reinterpret_cast<int32_t *>(base + layout.permutation_offset)
                               : nullptr};
}

// Zeroes the bytes of layout.bytes outside the four parts.
cudaError_t zero_gaps(const xgemv_qweight_st &weight, cudaStream_t stream) {
  const xgemv_qweight_layout &l = weight.layout;
  const size_t ends[4] = {l.codes_offset + l.codes_bytes, l.scales_offset + l.scales_bytes,
                          l.zeros_offset + l.zeros_bytes,
                          l.permutation_offset + l.permutation_bytes};
  const size_t next[4] = {l.scales_offset, l.zeros_offset, l.permutation_offset, l.bytes};
  Gaps gaps{};
  for (int i = 0; i < 4; ++i) {
    gaps.begin[i] = int64_t(ends[i]);
    gaps.length[i] = next[i] > ends[i] ? int64_t(next[i] - ends[i]) : 0;
  }
  return launch_units(kGapUnits, ZeroGaps{static_cast<uint8_t *>(weight.storage), gaps}, stream);
}

template <bool kFourBit, class Source>
cudaError_t write_codes(const PackedGeometry &g, unsigned *codes, const Source &source,
                        cudaStream_t stream) {
  return launch_units(code_words(g), WriteCodes<kFourBit, Source>{g, codes, source}, stream);
}
template <class TS, class Source>
cudaError_t write_scales(const PackedGeometry &g, void *scales, const Source &source,
                         cudaStream_t stream) {
  return launch_units(scale_entries(g),
                      WriteScales<TS, Source>{g, static_cast<TS *>(scales), source}, stream);
}
template <class Source>
cudaError_t write_zeros(const PackedGeometry &g, uint8_t *zeros, const Source &source,
                        cudaStream_t stream) {
  return launch_units(zero_bytes(g), WriteZeros<Source>{g, zeros, source}, stream);
}

// GPTQ and AWQ: the scales and zero points of the checkpoint ([groups][outputs] and
// [groups][outputs / 8]).
cudaError_t write_checkpoint_groups(const xgemv_qweight_st &weight, const Parts &parts,
                                    const CheckpointTensors &t, bool awq_order,
                                    cudaStream_t stream) {
  const PackedGeometry g = packed_geometry(weight);
  cudaError_t error = with_float_type(weight.info.scale_type, [&](auto type) {
    using TS = typename decltype(type)::type;
    return write_scales<TS>(g, parts.scales,
                            CheckpointScales<TS>{static_cast<const TS *>(t.scales), g.outputs},
                            stream);
  });
  if (error == cudaSuccess && parts.zeros != nullptr)
    error = write_zeros(g, parts.zeros,
                        CheckpointZeros{t.qzeros, g.outputs / 8, awq_order,
                                        t.zeros_minus_one && !awq_order ? 1u : 0u},
                        stream);
  return error;
}

}  // namespace

cudaError_t launch_pack(const xgemv_qweight_st &weight, const PlainTensors &t,
                        cudaStream_t stream) noexcept {
  const PackedGeometry g = packed_geometry(weight);
  const Parts parts = parts_of(weight);
  cudaError_t error = zero_gaps(weight, stream);
  if (error == cudaSuccess)
    error = with_code(weight.info.format, [&](auto code) {
      constexpr bool kFourBit = kFourBitCode<decltype(code)>;
      return write_codes<kFourBit>(g, parts.codes,
                                   PlainBytes{static_cast<const uint8_t *>(t.codes), t.ldc},
                                   stream);
    });
  if (error == cudaSuccess)
    error = with_float_type(weight.info.scale_type, [&](auto type) {
      using TS = typename decltype(type)::type;
      const int64_t rows_per_scale = weight.info.format == XGEMV_QFORMAT_FP8_E4M3_BLOCK ? 128 : 1;
      return write_scales<TS>(
          g, parts.scales, PlainScales<TS>{static_cast<const TS *>(t.scales), t.lds, rows_per_scale},
          stream);
    });
  if (error == cudaSuccess && parts.zeros != nullptr)
    error = write_zeros(g, parts.zeros, PlainBytes{t.zeros, t.ldz}, stream);
  if (error == cudaSuccess && parts.permutation != nullptr)
    error = launch_units(g.inputs, WritePermutation{parts.permutation, t.permutation, g.inputs},
                         stream);
  return error;
}

cudaError_t launch_pack_gptq(const xgemv_qweight_st &weight, const CheckpointTensors &t,
                             cudaStream_t stream) noexcept {
  const PackedGeometry g = packed_geometry(weight);
  const Parts parts = parts_of(weight);
  cudaError_t error = zero_gaps(weight, stream);
  if (error == cudaSuccess && parts.permutation != nullptr) {
    // The identity first, then each input placed by its group: P stays within 0..inputs-1.
    error = launch_units(g.inputs, WritePermutation{parts.permutation, nullptr, g.inputs}, stream);
    if (error == cudaSuccess) {
      const int64_t blocks = std::min((g.inputs + kThreads - 1) / kThreads, kMaxBlocks);
      const int64_t group_size = weight.info.group_size;
      place_by_group<<<unsigned(blocks), kThreads, 0, stream>>>(
          parts.permutation, t.g_idx, g.inputs, g.inputs / group_size, group_size);
      error = cudaGetLastError();
    }
  }
  if (error == cudaSuccess)
    error = write_codes<true>(g, parts.codes, GptqCodes{t.qweight, g.outputs, parts.permutation},
                              stream);
  if (error == cudaSuccess) error = write_checkpoint_groups(weight, parts, t, false, stream);
  return error;
}

cudaError_t launch_pack_awq(const xgemv_qweight_st &weight, const CheckpointTensors &t,
                            cudaStream_t stream) noexcept {
  const PackedGeometry g = packed_geometry(weight);
  const Parts parts = parts_of(weight);
  cudaError_t error = zero_gaps(weight, stream);
  if (error == cudaSuccess)
    error = write_codes<true>(g, parts.codes, AwqCodes{t.qweight, g.outputs / 8}, stream);
  if (error == cudaSuccess) error = write_checkpoint_groups(weight, parts, t, true, stream);
  return error;
}

cudaError_t launch_quantize(const xgemv_qweight_st &weight, const void *weights, int64_t ldw,
                            cudaStream_t stream) noexcept {
  const PackedGeometry g = packed_geometry(weight);
  const Parts parts = parts_of(weight);
  cudaError_t error = zero_gaps(weight, stream);
  if (error != cudaSuccess) return error;
  return with_code(weight.info.format, [&](auto code) {
    using Code = decltype(code);
    return with_weight_type(weight.info.activation_type, [&](auto weight_type) {
      using TW = typename decltype(weight_type)::type;
      return with_float_type(weight.info.scale_type, [&](auto scale_type) {
        using TS = typename decltype(scale_type)::type;
        const auto *w = static_cast<const TW *>(weights);
        auto *scales = static_cast<TS *>(parts.scales);
        // First the scales (and zero points), a block per unit of weights that shares one...
        if constexpr (CodeTraits<Code>::kBlockScales) {
          if (weight.info.format == XGEMV_QFORMAT_FP8_E4M3_BLOCK) {
            const int64_t units = (g.row_tiles * kTileOutputs + 127) / 128 * g.scale_groups;
            quantize_block_scales<TW, TS>
                <<<unsigned(std::min(units, kMaxBlocks)), kThreads, 0, stream>>>(g, w, ldw,
                                                                                  scales);
          } else {
            quantize_row_scales<Code, TW, TS>
                <<<unsigned(std::min(g.row_tiles * g.scale_groups, kMaxBlocks)), kThreads, 0,
                   stream>>>(g, w, ldw, scales, nullptr);
          }
        } else {
          quantize_row_scales<Code, TW, TS>
              <<<unsigned(std::min(g.row_tiles * g.scale_groups, kMaxBlocks)), kThreads, 0,
                 stream>>>(g, w, ldw, scales, parts.zeros);
        }
        if (const cudaError_t launched = cudaGetLastError(); launched != cudaSuccess)
          return launched;
        // ... then the codes, with the scales as rounded in the storage.
        return write_codes<kFourBitCode<Code>>(
            g, parts.codes, QuantizedCodes<Code, TW, TS>{w, ldw, g, scales, parts.zeros}, stream);
      });
    });
  });
}

cudaError_t launch_dequantize(const xgemv_qweight_st &weight, void *out, int64_t ldw,
                              xgemv_datatype out_type, cudaStream_t stream) noexcept {
  const PackedGeometry g = packed_geometry(weight);
  const Parts parts = parts_of(weight);
  return with_code(weight.info.format, [&](auto code) {
    using Code = decltype(code);
    return with_float_type(weight.info.scale_type, [&](auto scale_type) {
      using TS = typename decltype(scale_type)::type;
      return with_float_type(out_type, [&](auto output_type) {
        using TO = typename decltype(output_type)::type;
        return launch_units(code_words(g),
                            Dequantize<Code, TS, TO>{g, parts.codes,
                                                     static_cast<const TS *>(parts.scales),
                                                     parts.zeros, parts.permutation,
                                                     static_cast<TO *>(out), ldw},
                            stream);
      });
    });
  });
}

}  // namespace xgemv::quant
