// Where each part of a weight's value lies in its storage (xgemv_quant.h, packed layout): the
// one inverse of the layout, (output o, packed input k or packed group j) -> place, that every
// conversion writer and dequantize use. The GEMV kernel reads the same places forwards
// (kernels/quant_codes.cuh, variants/qgemv_mma.cuh). Host and device code (the self-checks run
// these very functions on the host); plain data and integer arithmetic only.
#pragma once

#include <cstdint>

#include "quant/qweight.hpp"

namespace xgemv::quant {

// A weight's shape and packed geometry, as the conversion kernels take it (by value).
struct PackedGeometry {
  int64_t outputs, inputs;
  int64_t row_tiles;     // T: tiles of 16 outputs
  int64_t k_blocks;      // KB_count: blocks of 64 (4-bit) or 32 (8-bit) inputs
  int64_t scale_groups;  // G: scale groups per tile
  int64_t group;         // packed inputs per scale group (packed_group)
  int group_shift;       // packed input k is in group k >> group_shift (as the GEMV's)

  XGEMV_HOST_DEVICE int64_t group_of(int64_t k) const { return k >> group_shift; }
  // Whether packed group j holds inputs of the weight (the others are padding: scale 0, z 8).
  XGEMV_HOST_DEVICE bool group_valid(int64_t j) const { return j * group < inputs; }
};

inline PackedGeometry packed_geometry(const xgemv_qweight_st &weight) noexcept {
  return {weight.info.outputs,
          weight.info.inputs,
          weight.layout.row_tiles,
          weight.layout.k_blocks,
          weight.layout.scale_groups,
          packed_group(weight.info, weight.layout),
          group_shift(weight.info, weight.layout)};
}

// --- codes ----------------------------------------------------------------------------------

// The place of one code: byte `byte` of the codes part, and for 4-bit codes its nibble (0: bits
// 0..3, 1: bits 4..7). As a 32-bit little-endian word of the codes: word(), bits shift()...+3
// (4-bit) or shift()...+7 (8-bit).
struct CodePlace {
  int64_t byte;
  int nibble;

  XGEMV_HOST_DEVICE int64_t word() const { return byte / 4; }
  XGEMV_HOST_DEVICE int shift() const { return 8 * int(byte % 4) + 4 * nibble; }
};

// The code of output o, packed input k (o < 16 T, k < KB * KB_count: padding included).
// Tile t = o / 16, k-block b = k / KB: 512 bytes at (t * KB_count + b) * 512; within it, row
// r = o % 16 and input kk = k % KB = 16 s + 4 c + e sit in slot l = 4 (r % 8) + c (16 bytes),
//   4-bit: word u_s, nibble j = 4 (e % 2) + 2 (e / 2) + r / 8 (o0 e0, o1 e0, o0 e2, o1 e2,
//          o0 e1, o1 e1, o0 e3, o1 e3 for j = 0..7);
//   8-bit: word u_{2 s + r / 8}, byte e.
template <bool kFourBit>
XGEMV_HOST_DEVICE CodePlace code_place(const PackedGeometry &g, int64_t o, int64_t k) {
  constexpr int64_t kBlockInputs = kFourBit ? 64 : 32;
  const int64_t tile = o / kTileOutputs, block = k / kBlockInputs;
  const int r = int(o % kTileOutputs), kk = int(k % kBlockInputs);
  const int s = kk / 16, c = (kk / 4) % 4, e = kk % 4;
  const int64_t slot = (tile * g.k_blocks + block) * kTileBlockBytes + 16 * (4 * (r % 8) + c);
  if constexpr (kFourBit) {
    const int j = 4 * (e % 2) + 2 * (e / 2) + r / 8;
    return {slot + 4 * s + j / 2, j % 2};
  } else {
    return {slot + 4 * (2 * s + r / 8) + e, 0};
  }
}

// The codes one 32-bit word of the codes part holds, as a unit of work: outputs o + 8 h
// (h < kWordOutputs) at packed inputs k0 .. k0 + 3. 4-bit: o and o + 8 (o % 16 < 8); 8-bit: o.
template <bool kFourBit>
inline constexpr int kWordOutputs = kFourBit ? 2 : 1;

struct CodeWord {
  int64_t o, k0;
};

// Units u < code_words(g) enumerate every word of the codes part once (code_place of their
// members is a bijection onto the codes part), inputs fastest.
XGEMV_HOST_DEVICE inline int64_t code_words(const PackedGeometry &g) {
  return g.row_tiles * g.k_blocks * (kTileBlockBytes / 4);
}

template <bool kFourBit>
XGEMV_HOST_DEVICE CodeWord code_word(const PackedGeometry &g, int64_t unit) {
  constexpr int64_t kRows = kTileOutputs / kWordOutputs<kFourBit>;  // word rows per tile
  const int64_t quads = g.k_blocks * (kFourBit ? 16 : 8);          // input quads per row
  const int64_t row = unit / quads;
  return {row / kRows * kTileOutputs + row % kRows, 4 * (unit % quads)};
}

// --- scales and zero points -----------------------------------------------------------------

// Scale of output o (< 16 T), packed group j (< G): S_p[(t * G + j) * 16 + r].
XGEMV_HOST_DEVICE inline int64_t scale_index(const PackedGeometry &g, int64_t o, int64_t j) {
  return ((o / kTileOutputs) * g.scale_groups + j) * kTileOutputs + o % kTileOutputs;
}

// Zero point of output o, packed group j: byte (t * G + j) * 8 + r / 2, nibble r % 2.
struct ZeroPlace {
  int64_t byte;
  int nibble;
};
XGEMV_HOST_DEVICE inline ZeroPlace zero_place(const PackedGeometry &g, int64_t o, int64_t j) {
  return {((o / kTileOutputs) * g.scale_groups + j) * (kTileOutputs / 2) +
              (o % kTileOutputs) / 2,
          int(o % 2)};
}

// Units u < scale_entries(g): every scale of the scales part, r fastest; two outputs each for
// the zero points (zero_bytes(g) units).
XGEMV_HOST_DEVICE inline int64_t scale_entries(const PackedGeometry &g) {
  return g.row_tiles * g.scale_groups * kTileOutputs;
}
XGEMV_HOST_DEVICE inline int64_t zero_bytes(const PackedGeometry &g) {
  return g.row_tiles * g.scale_groups * (kTileOutputs / 2);
}
struct ScaleEntry {
  int64_t o, j;
};
// Unit u of scale_entries(g) (outputs per unit 1) or zero_bytes(g) (outputs o and o + 1).
template <int kOutputs>
XGEMV_HOST_DEVICE ScaleEntry scale_entry(const PackedGeometry &g, int64_t unit) {
  constexpr int64_t kPerTile = kTileOutputs / kOutputs;
  const int64_t rows = unit % kPerTile, tile_group = unit / kPerTile;
  return {tile_group / g.scale_groups * kTileOutputs + rows * kOutputs,
          tile_group % g.scale_groups};
}

// AWQ's nibble of output o % 8 in a word (order = {0, 2, 4, 6, 1, 3, 5, 7}, nibble i holding
// output 8 m + order[i]).
XGEMV_HOST_DEVICE inline int awq_nibble(int64_t o) {
  const int m = int(o % 8);
  return 4 * (m % 2) + m / 2;
}

}  // namespace xgemv::quant
