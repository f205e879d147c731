// Quantized codes to mma fragments, in registers (xgemv_quant.h, packed layout): a lane's
// 16-byte slot of a tile's k-block holds, per mma step, the 8 codes of its two outputs that
// mma.m16n8k16 takes from it, so that each code becomes its 16-bit value v in place, with bit
// operations and one exact fused multiply-add per pair instead of a conversion per code. The
// scales are applied later, in fp32, to sums of v * x (qgemv_mma.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "quant/code_traits.hpp"

namespace xgemv::kernels {

// The A fragment of one mma step: output o0's inputs e0, e1 | o1's e0, e1 | o0's e2, e3 |
// o1's e2, e3, two 16-bit values per register (the first in the low half).
struct Fragment {
  unsigned r[4];
};

// d = a * b + c on pairs of 16-bit values, rounded once (exact for every use here).
template <class TX>
__device__ __forceinline__ unsigned fma_pairs(unsigned a, unsigned b, unsigned c) {
  unsigned d;
  if constexpr (std::is_same_v<TX, __half>)
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  else
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// The constants that turn 4-bit codes of an output with zero point z (8 for symmetric codes)
// into q - z: the codes are ORed into the mantissa of a power of two (fp16 1024, bf16 128), so
// one fma removes that power and z together. fp16 also takes the upper nibble of a byte in place
// (16 q + 1024, times 1/16).
template <class TX>
struct Int4Offsets {
  unsigned low, high;  // minus (base + z) for the two nibble positions, both halves

  __device__ __forceinline__ explicit Int4Offsets(unsigned z) {
    if constexpr (std::is_same_v<TX, __half>) {
      low = (0xE400u | z) * 0x10001u;          // -(1024 + z)
      high = (0xD400u | (z << 4)) * 0x10001u;  // -(64 + z)
    } else {
      low = high = (0xC300u | z) * 0x10001u;  // -(128 + z)
    }
  }
};

// (a & mask) | base in one instruction (the compiler splits it when both are constants).
__device__ __forceinline__ unsigned and_or(unsigned a, unsigned mask, unsigned base) {
  unsigned d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(mask), "r"(base));
  return d;
}

// One mma step of 4-bit codes: word u holds the codes of o0 (offsets o0z) and o1 (o1z) in the
// nibble order of the packed layout (j = 0..7: o0 e0, o1 e0, o0 e2, o1 e2, o0 e1, o1 e1, o0 e3,
// o1 e3), so the pairs (j, j + 4) are the 16-bit halves of one register.
template <class TX>
__device__ __forceinline__ Fragment int4_fragment(unsigned u, const Int4Offsets<TX> &o0z,
                                                  const Int4Offsets<TX> &o1z) {
  Fragment f;
  if constexpr (std::is_same_v<TX, __half>) {
    constexpr unsigned kBase = 0x64006400u, kOne = 0x3C003C00u, kSixteenth = 0x2C002C00u;
    const unsigned shifted = u >> 8;
    f.r[0] = fma_pairs<TX>(and_or(u, 0x000F000Fu, kBase), kOne, o0z.low);
    f.r[1] = fma_pairs<TX>(and_or(u, 0x00F000F0u, kBase), kSixteenth, o1z.high);
    f.r[2] = fma_pairs<TX>(and_or(shifted, 0x000F000Fu, kBase), kOne, o0z.low);
    f.r[3] = fma_pairs<TX>(and_or(shifted, 0x00F000F0u, kBase), kSixteenth, o1z.high);
  } else {
    constexpr unsigned kBase = 0x43004300u, kOne = 0x3F803F80u;
    f.r[0] = fma_pairs<TX>(and_or(u, 0x000F000Fu, kBase), kOne, o0z.low);
    f.r[1] = fma_pairs<TX>(and_or(u >> 4, 0x000F000Fu, kBase), kOne, o1z.low);
    f.r[2] = fma_pairs<TX>(and_or(u >> 8, 0x000F000Fu, kBase), kOne, o0z.low);
    f.r[3] = fma_pairs<TX>(and_or(u >> 12, 0x000F000Fu, kBase), kOne, o1z.low);
  }
  return f;
}

// Two int8 codes (bytes `first` and `first + 1` of w) as a 16-bit pair, exact.
template <class TX>
__device__ __forceinline__ unsigned byte_pair(Int8Code, unsigned w, int first) {
  const unsigned biased = w ^ 0x80808080u;  // q + 128, unsigned
  if constexpr (std::is_same_v<TX, __half>) {
    // 1024 + (q + 128) in fp16, then minus 1152.
    const unsigned pair = __byte_perm(biased, 0x64646464u, first == 0 ? 0x4140u : 0x4342u);
    return fma_pairs<TX>(pair, 0x3C003C00u, 0xE480E480u);
  } else {
    // bf16 holds 8 bits only up to 256: through fp32 (2^23 + q + 128, minus 2^23 + 128).
    const float lo = __uint_as_float(__byte_perm(biased, 0x4B000000u, 0x7440u + first)) - 8388736.0f;
    const float hi =
        __uint_as_float(__byte_perm(biased, 0x4B000000u, 0x7440u + first + 1)) - 8388736.0f;
    const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
    unsigned bits;
    memcpy(&bits, &pair, sizeof(bits));
    return bits;
  }
}

// Two e4m3 codes (bytes `first` and `first + 1` of w) as a 16-bit pair, exact (NaN stays NaN).
template <class TX>
__device__ __forceinline__ unsigned byte_pair(E4M3Code, unsigned w, int first) {
  const unsigned short codes = static_cast<unsigned short>(w >> (8 * first));
  unsigned halves;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(halves) : "h"(codes));
#else
  halves = 0;  // not built for such devices (sm_90 and newer run the quantized kernels)
  (void)codes;
#endif
  if constexpr (std::is_same_v<TX, __half>) {
    return halves;
  } else {
    __half2 h;
    memcpy(&h, &halves, sizeof(h));
    const float2 f = __half22float2(h);
    const __nv_bfloat162 pair = __floats2bfloat162_rn(f.x, f.y);
    unsigned bits;
    memcpy(&bits, &pair, sizeof(bits));
    return bits;
  }
}

// One mma step of 8-bit codes: w0 holds o0's four inputs, w1 o1's.
template <class Code, class TX>
__device__ __forceinline__ Fragment byte_fragment(unsigned w0, unsigned w1) {
  Fragment f;
  f.r[0] = byte_pair<TX>(Code{}, w0, 0);
  f.r[1] = byte_pair<TX>(Code{}, w1, 0);
  f.r[2] = byte_pair<TX>(Code{}, w0, 2);
  f.r[3] = byte_pair<TX>(Code{}, w1, 2);
  return f;
}

// The A fragment of mma step s of a lane's 16-byte slot `words` of a k-block: 4-bit codes (one
// word a step) with the zero points of the slot's two outputs, or 8-bit ones (two words).
template <class Code, class TX>
__device__ __forceinline__ Fragment code_fragment(const unsigned (&words)[4], int s, unsigned z_lo,
                                                  unsigned z_hi) {
  if constexpr (CodeTraits<Code>::kBits == 4)
    return int4_fragment<TX>(words[s], Int4Offsets<TX>(z_lo), Int4Offsets<TX>(z_hi));
  else
    return byte_fragment<Code, TX>(words[2 * s], words[2 * s + 1]);
}

}  // namespace xgemv::kernels
