// The host reference of quantized weights (support/quant_reference) checked on its own, since the
// GPU tests judge xgemv by it: the e4m3 decoder and encoder over all 256 codes (and against the
// CUDA toolkit's host conversions on every fp16 and bf16 value); the layout writer against
// positions worked out by hand from the header's text, and the reader as its inverse, padding
// included; GPTQ and AWQ tensors, by hand and as round trips; the quantizer on examples worked
// out by hand and within half a step on random weights; the fp64 GEMV.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <cuda_fp8.h>
#include <gtest/gtest.h>
#include <xgemv/xgemv_quant.h>

#include "support/quant_formats.hpp"
#include "support/quant_reference.hpp"

namespace xgemv_test::quant {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// --- e4m3 --------------------------------------------------------------------------------------

TEST(E4m3, DecoderFollowsTheDefinition) {
  EXPECT_TRUE(same_bits(e4m3_value(0x00), 0.0));
  EXPECT_TRUE(same_bits(e4m3_value(0x80), -0.0));
  EXPECT_EQ(e4m3_value(0x01), std::ldexp(1.0, -9));      // 2^-6 * 0.001
  EXPECT_EQ(e4m3_value(0x07), 7 * std::ldexp(1.0, -9));  // 2^-6 * 0.111
  EXPECT_EQ(e4m3_value(0x08), std::ldexp(1.0, -6));      // 2^(1-7) * 1.000
  EXPECT_EQ(e4m3_value(0x38), 1.0);                      // 2^(7-7) * 1.000
  EXPECT_EQ(e4m3_value(0x3F), 1.875);                    // 2^0 * 1.111
  EXPECT_EQ(e4m3_value(0x77), 240.0);                    // 2^7 * 1.111
  EXPECT_EQ(e4m3_value(0x7E), 448.0);                    // 2^8 * 1.110, the largest
  EXPECT_EQ(e4m3_value(0xFE), -448.0);
  EXPECT_EQ(e4m3_value(0xC4), -3.0);  // -(2^1 * 1.100)
  int nans = 0;
  for (int code = 0; code < 256; ++code) {
    const double v = e4m3_value(uint8_t(code));
    EXPECT_EQ(std::isnan(v), is_e4m3_nan(uint8_t(code))) << code;
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    EXPECT_FALSE(std::isinf(v)) << code;
    // The sign bit is the sign; the magnitudes grow with the code.
    EXPECT_EQ(std::signbit(v), code >= 0x80) << code;
    EXPECT_EQ(e4m3_value(uint8_t(code ^ 0x80)), -v) << code;
    if ((code & 0x7F) > 0 && (code & 0x7F) < 0x7F) {
      EXPECT_GT(std::fabs(v), std::fabs(e4m3_value(uint8_t(code - 1)))) << code;
    }
  }
  EXPECT_EQ(nans, 2) << "S.1111.111 only";
}

TEST(E4m3, EncoderInvertsTheDecoderOnEveryCode) {
  for (int code = 0; code < 256; ++code) {
    if (is_e4m3_nan(uint8_t(code))) {
      EXPECT_TRUE(is_e4m3_nan(e4m3_code(float(e4m3_value(uint8_t(code))))));
      continue;
    }
    EXPECT_EQ(e4m3_code(float(e4m3_value(uint8_t(code)))), code);
  }
}

// Between two neighbouring codes the midpoint goes to the one with an even mantissa, anything
// else to the nearer; beyond 448 everything saturates to +-448.
TEST(E4m3, EncoderRoundsToNearestEvenAndSaturates) {
  for (int code = 0; code < 0x7E; ++code)
    for (const uint8_t sign : {uint8_t{0x00}, uint8_t{0x80}}) {
      const uint8_t low = uint8_t(sign | code), high = uint8_t(sign | (code + 1));
      const float midpoint = float((e4m3_value(low) + e4m3_value(high)) / 2);
      SCOPED_TRACE("between codes " + std::to_string(low) + " and " + std::to_string(high));
      EXPECT_EQ(e4m3_code(midpoint), (low & 1) == 0 ? low : high);
      const float toward_high = std::nextafter(midpoint, sign ? -1e9f : 1e9f);
      const float toward_low = std::nextafter(midpoint, 0.0f);
      EXPECT_EQ(e4m3_code(toward_high), high);
      EXPECT_EQ(e4m3_code(toward_low), low);
    }
  for (const float big : {448.5f, 463.9f, 464.0f, 479.9f, 480.0f, 1e6f, 3e38f,
                          std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(e4m3_code(big), 0x7E) << big;
    EXPECT_EQ(e4m3_code(-big), 0xFE) << -big;
  }
  EXPECT_EQ(e4m3_code(std::ldexp(1.0f, -10)), 0x00) << "half the smallest subnormal: to 0 (even)";
  EXPECT_EQ(e4m3_code(-std::ldexp(1.0f, -11)), 0x80) << "the sign of zero is kept";
  EXPECT_EQ(e4m3_code(-0.0f), 0x80);
  EXPECT_TRUE(is_e4m3_nan(e4m3_code(std::numeric_limits<float>::quiet_NaN())));
}

uint16_t bits16(float value, xgemv_datatype type) {
  uint8_t bytes[2];
  store(type, value, bytes);
  return uint16_t(bytes[0] | bytes[1] << 8);
}

// The CUDA toolkit's host conversions (round to nearest even, saturated to finite) agree on
// every fp16 and every bf16 value, and on the value of every code.
TEST(E4m3, AgreesWithTheCudaToolkitOnEveryHalfAndBfloat16) {
  for (int code = 0; code < 256; ++code) {
    const __half h = __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(code), __NV_E4M3);
    const double toolkit = __half2float(h), ours = e4m3_value(uint8_t(code));
    EXPECT_TRUE(std::isnan(ours) ? std::isnan(toolkit) : same_bits(ours, toolkit)) << code;
  }
  for (const xgemv_datatype type : {XGEMV_R_16F, XGEMV_R_16BF})
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      const uint8_t bytes[2] = {uint8_t(bits), uint8_t(bits >> 8)};
      const float value = load(type, bytes);
      if (std::isnan(value)) continue;
      const uint8_t toolkit = __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3);
      ASSERT_EQ(e4m3_code(value), toolkit) << datatype_name(type) << " " << value;
    }
  EXPECT_EQ(bits16(1.0f, XGEMV_R_16F), 0x3C00);
  EXPECT_EQ(bits16(1.0f, XGEMV_R_16BF), 0x3F80);
}

// --- the packed layout -------------------------------------------------------------------------

xgemv_qweight_layout layout_of(const xgemv_qweight_info &info) {
  xgemv_qweight_layout layout{};
  EXPECT_EQ(xgemv_qweight_get_layout(&info, &layout), XGEMV_STATUS_SUCCESS) << describe(info);
  return layout;
}

// A weight of v = 0 everywhere with scales 1.
PlainWeight zero_weight(const xgemv_qweight_info &info) {
  PlainWeight w = make_plain_weight(info);
  for (float &s : w.scales) s = 1.0f;
  return w;
}

// Packs w: byte i of the codes must be want(i), and unpacking must give the codes back.
template <class Want>
void expect_packed_codes(const PlainWeight &w, const xgemv_qweight_info &info, Want &&want) {
  const xgemv_qweight_layout layout = layout_of(info);
  const std::vector<uint8_t> storage = pack_storage(w, layout);
  const uint8_t *codes = storage.data() + layout.codes_offset;
  for (size_t i = 0; i < layout.codes_bytes; ++i)
    ASSERT_EQ(codes[i], want(i)) << "codes byte " << i;
  EXPECT_EQ(unpack_storage(storage, info, layout).codes, w.codes);
}

// Positions worked out from the header's text. INT4, 32 x 128, g64: tile t = o / 16, row r,
// g = r % 8 (o0 for r < 8, o1 above); k-block b = k / 64; within it k' = 16 s + 4 c + e; slot
// l = 4 g + c; nibble j of word u_s from (o0|o1, e) = (o0 e0, o1 e0, o0 e2, o1 e2, o0 e1, ...).
TEST(PackedLayout, FourBitCodesWhereTheHeaderPutsThem) {
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 32, 128, 64, 0, 0};
  PlainWeight w = zero_weight(info);
  // Output 9 (t 0, g 1, o1), input 70 (b 1, k' 6: s 0, c 1, e 2): slot 5, word u_0, nibble 3
  // (o1 e2) = the high nibble of byte 1: (0 * 2 + 1) * 512 + 5 * 16 + 0 * 4 + 1 = 593.
  w.codes[9 * 128 + 70] = 0x3;
  // Output 0 (o0 of g 0), input 63 (b 0, k' 63: s 3, c 3, e 3): slot 3, word u_3, nibble 6
  // (o0 e3) = the low nibble of byte 3: 3 * 16 + 3 * 4 + 3 = 63.
  w.codes[0 * 128 + 63] = 0xF;
  // Output 30 (t 1, g 6, o1), input 1 (b 0, s 0, c 0, e 1): slot 24, word u_0, nibble 5
  // (o1 e1) = the high nibble of byte 2: (1 * 2 + 0) * 512 + 24 * 16 + 2 = 1410.
  w.codes[30 * 128 + 1] = 0x0;
  expect_packed_codes(w, info, [](size_t i) -> uint8_t {
    return i == 593 ? 0x38 : i == 63 ? 0x8F : i == 1410 ? 0x08 : 0x88;
  });
}

// INT8, 16 x 64 (two k-blocks of 32): words u_2s (o0) and u_2s+1 (o1), byte e.
TEST(PackedLayout, EightBitCodesWhereTheHeaderPutsThem) {
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT8, XGEMV_R_16F, XGEMV_R_16F, 16, 64, 0, 0, 0};
  PlainWeight w = zero_weight(info);
  // Output 12 (g 4, o1), input 45 (b 1, k' 13: s 0, c 3, e 1): slot 19, word u_1, byte 1:
  // 512 + 19 * 16 + 1 * 4 + 1 = 821.
  w.codes[12 * 64 + 45] = 0x7F;
  // Output 3 (g 3, o0), input 17 (b 0, k' 17: s 1, c 0, e 1): slot 12, word u_2, byte 1:
  // 12 * 16 + 2 * 4 + 1 = 201.
  w.codes[3 * 64 + 17] = 0x81;
  expect_packed_codes(w, info,
                      [](size_t i) -> uint8_t { return i == 821 ? 0x7F : i == 201 ? 0x81 : 0x00; });
}

// INT4 g32 with zero points, 20 x 64, bf16 scales: T 2, G 2. Scale (t * G + j) * 16 + r, zero
// point byte (t * G + j) * 8 + r / 2, nibble r % 2; padding outputs 20..31 (scale 0, z 8).
TEST(PackedLayout, ScalesAndZeroPointsWhereTheHeaderPutsThem) {
  const xgemv_qweight_info info = {
      XGEMV_QFORMAT_INT4, XGEMV_R_16BF, XGEMV_R_16BF, 20, 64, 32, 1, 0};
  const xgemv_qweight_layout layout = layout_of(info);
  ASSERT_EQ(layout.scale_groups, 2);
  PlainWeight w = zero_weight(info);
  for (float &s : w.scales) s = 0.0f;
  for (uint8_t &z : w.zeros) z = 0;
  w.scales[18 * 2 + 1] = 3.0f;  // output 18 = t 1, r 2; group 1: scale (1 * 2 + 1) * 16 + 2 = 50
  w.zeros[18 * 2 + 1] = 0xB;    // byte (1 * 2 + 1) * 8 + 1 = 25, low nibble
  w.zeros[19 * 2 + 1] = 0x4;    // the same byte, high nibble
  const std::vector<uint8_t> storage = pack_storage(w, layout);
  const uint8_t *scales = storage.data() + layout.scales_offset;
  for (size_t i = 0; i < layout.scales_bytes; ++i)
    ASSERT_EQ(scales[i], i == 100 || i == 101 ? 0x40 : 0x00) << "scales byte " << i;  // 0x4040
  const uint8_t *zeros = storage.data() + layout.zeros_offset;
  for (size_t i = 0; i < layout.zeros_bytes; ++i) {
    // Tile 1 bytes 2..7 (of each group) hold outputs 20..31: padding.
    const bool padding = i >= 16 && i % 8 >= 2;
    ASSERT_EQ(zeros[i], i == 25 ? 0x4B : padding ? 0x88 : 0x00) << "zeros byte " << i;
  }
  EXPECT_EQ(padding_errors(storage, info, layout), "");
}

// FP8_E4M3_BLOCK, 130 x 33, fp32 scales: every output of a 128-output row keeps its row's scale.
TEST(PackedLayout, BlockScalesAreKeptForEveryOutput) {
  const xgemv_qweight_info info = {
      XGEMV_QFORMAT_FP8_E4M3_BLOCK, XGEMV_R_16F, XGEMV_R_32F, 130, 33, 0, 0, 0};
  const xgemv_qweight_layout layout = layout_of(info);
  PlainWeight w = zero_weight(info);
  ASSERT_EQ(w.scales.size(), 2u);
  w.scales = {0.5f, 2.0f};
  const std::vector<uint8_t> storage = pack_storage(w, layout);
  const auto scale_at = [&](size_t index) {
    float s;
    std::memcpy(&s, storage.data() + layout.scales_offset + 4 * index, 4);
    return s;
  };
  for (size_t o = 0; o < 144; ++o)
    EXPECT_EQ(scale_at(o), o < 128 ? 0.5f : o < 130 ? 2.0f : 0.0f) << "output " << o;
}

TEST(PackedLayout, PermutationAsLittleEndianInt32) {
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 16, 512, 32, 0, 1};
  const xgemv_qweight_layout layout = layout_of(info);
  PlainWeight w = zero_weight(info);
  for (int32_t k = 0; k < 512; ++k) w.permutation[size_t(k)] = 511 - k;
  const std::vector<uint8_t> storage = pack_storage(w, layout);
  const uint8_t *p = storage.data() + layout.permutation_offset;
  EXPECT_EQ(std::vector<uint8_t>(p, p + 8),
            (std::vector<uint8_t>{0xFF, 0x01, 0, 0, 0xFE, 0x01, 0, 0}));
  EXPECT_EQ(std::vector<uint8_t>(p + 4 * 511, p + 4 * 512), (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(unpack_storage(storage, info, layout).permutation, w.permutation);
}

// The writer and the reader over every format and type on random weights: the reader gives back
// the weight, its values are w = v * s (original input order), and the padding is the header's.
TEST(PackedLayout, ReadingBackWhatWasWrittenGivesTheWeight) {
  RandomSource random(case_seed("ReadingBackWhatWasWritten", 0));
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype scale : kScaleTypes)
      for (const int64_t outputs : {int64_t{1}, int64_t{17}, int64_t{130}})
        for (const int64_t inputs : edge_inputs(f)) {
          if (inputs > 1024) continue;
          const xgemv_qweight_info info = make_info(f, XGEMV_R_16BF, scale, outputs, inputs);
          SCOPED_TRACE(describe(info));
          const xgemv_qweight_layout layout = layout_of(info);
          const PlainWeight w = random_plain_weight(info, random);
          const std::vector<uint8_t> storage = pack_storage(w, layout);
          const PlainWeight read = unpack_storage(storage, info, layout);
          EXPECT_EQ(read.codes, w.codes);
          EXPECT_EQ(read.scales, w.scales);
          EXPECT_EQ(read.zeros, w.zeros);
          EXPECT_EQ(read.permutation, w.permutation);
          EXPECT_EQ(padding_errors(storage, info, layout), "");
          // w = v * s, placed at the original input.
          const std::vector<double> values = dequantize_storage(storage, info, layout);
          for (int64_t o = 0; o < outputs; ++o)
            for (int64_t k = 0; k < inputs; ++k) {
              const int64_t input = info.permuted ? w.permutation[size_t(k)] : k;
              ASSERT_EQ(values[size_t(o * inputs + input)], w.code_value(o, k) * w.scale(o, k))
                  << "output " << o << ", packed input " << k;
            }
        }
}

TEST(PackedLayout, PaddingErrorsAreFound) {
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 17, 96, 32, 1, 0};
  const xgemv_qweight_layout layout = layout_of(info);
  RandomSource random(1);
  const std::vector<uint8_t> storage = pack_storage(random_plain_weight(info, random), layout);
  ASSERT_EQ(padding_errors(storage, info, layout), "");
  // The last codes byte is outputs 23 and 31, inputs past 96: padding; the last scale and zero
  // point byte belong to padding outputs.
  for (const size_t offset : {layout.codes_offset + layout.codes_bytes - 1,
                              layout.scales_offset + layout.scales_bytes - 1,
                              layout.zeros_offset + layout.zeros_bytes - 1}) {
    std::vector<uint8_t> corrupt = storage;
    corrupt[offset] ^= 0x11;
    EXPECT_NE(padding_errors(corrupt, info, layout), "") << "byte " << offset;
  }
}

TEST(Dequantized, OutputTypesRoundTheFp32Value) {
  // 1 + 2^-12 + 2^-30 (not an fp32): fp32 1 + 2^-12, fp16 1 (ties to even), bf16 1.
  const std::vector<double> values = {1 + std::ldexp(1.0, -12) + std::ldexp(1.0, -30), -3.0};
  const std::vector<uint8_t> fp32 = dequantized_bytes(values, 1, 2, 3, XGEMV_R_32F, 0xEE);
  EXPECT_EQ(load(XGEMV_R_32F, fp32.data()), 1 + std::ldexp(1.0f, -12));
  EXPECT_EQ(load(XGEMV_R_32F, fp32.data() + 4), -3.0f);
  EXPECT_EQ(fp32[8] & fp32[11], 0xEE) << "past inputs: the fill";
  const std::vector<uint8_t> fp16 = dequantized_bytes(values, 1, 2, 2, XGEMV_R_16F, 0);
  EXPECT_EQ(load(XGEMV_R_16F, fp16.data()), 1.0f);
  // 1 + 2^-8 + 2^-30: fp32 1 + 2^-8, then bf16 1 (a tie, to even); fp16 keeps 1 + 2^-8.
  const std::vector<double> tie = {1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)};
  EXPECT_EQ(load(XGEMV_R_16BF, dequantized_bytes(tie, 1, 1, 1, XGEMV_R_16BF, 0).data()), 1.0f);
  EXPECT_EQ(load(XGEMV_R_16F, dequantized_bytes(tie, 1, 1, 1, XGEMV_R_16F, 0).data()),
            1 + std::ldexp(1.0f, -8));
}

// --- checkpoints -------------------------------------------------------------------------------

TEST(Checkpoints, GptqNibblesWhereTheHeaderPutsThem) {
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 16, 32, 32, 1, 0};
  PlainWeight w = zero_weight(info);
  for (uint8_t &q : w.codes) q = 0;
  for (uint8_t &z : w.zeros) z = 0;
  w.codes[5 * 32 + 13] = 0xA;  // qweight[13 / 8][5], nibble 13 % 8
  w.zeros[13] = 0x3;           // qzeros[0][13 / 8], nibble 13 % 8
  const GptqCheckpoint plain = to_gptq(w, false);
  ASSERT_EQ(plain.qweight.size(), 4u * 16);
  for (size_t i = 0; i < plain.qweight.size(); ++i)
    EXPECT_EQ(uint32_t(plain.qweight[i]), i == 1 * 16 + 5 ? 0x00A00000u : 0u) << i;
  EXPECT_EQ(plain.qzeros, (std::vector<int32_t>{0, 0x00300000}));
  EXPECT_TRUE(plain.g_idx.empty());
  // Minus one, modulo 16: 3 is stored as 2, 0 as 15.
  const GptqCheckpoint minus_one = to_gptq(w, true);
  EXPECT_EQ(uint32_t(minus_one.qzeros[0]), 0xFFFFFFFFu);
  EXPECT_EQ(uint32_t(minus_one.qzeros[1]), 0xFF2FFFFFu);
}

TEST(Checkpoints, AwqNibblesWhereTheHeaderPutsThem) {
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 16, 32, 32, 1, 0};
  PlainWeight w = zero_weight(info);
  for (uint8_t &q : w.codes) q = 0;
  for (uint8_t &z : w.zeros) z = 0;
  w.codes[10 * 32 + 3] = 0xA;  // output 8 * 1 + 2: order[1] = 2, nibble 1 of qweight[3][1]
  w.codes[9 * 32 + 3] = 0x5;   // output 8 * 1 + 1: order[4] = 1, nibble 4
  w.zeros[15] = 0x7;           // output 8 * 1 + 7: order[7] = 7, nibble 7 of qzeros[0][1]
  const AwqCheckpoint awq = to_awq(w);
  ASSERT_EQ(awq.qweight.size(), 32u * 2);
  for (size_t i = 0; i < awq.qweight.size(); ++i)
    EXPECT_EQ(uint32_t(awq.qweight[i]), i == 3 * 2 + 1 ? 0x000500A0u : 0u) << i;
  EXPECT_EQ(awq.qzeros, (std::vector<int32_t>{0, 0x70000000}));
}

// Act-order: g_idx gives each packed group's inputs, exactly group_size of them, and the stable
// sort by g_idx is the weight's permutation.
TEST(Checkpoints, ActOrderGivesEachGroupItsInputs) {
  RandomSource random(case_seed("ActOrder", 0));
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 8, 256, 64, 0, 1};
  PlainWeight w = random_plain_weight(info, random);
  w.permutation = act_order_permutation(256, 64, random);
  const GptqCheckpoint ckpt = to_gptq(w, false);
  ASSERT_EQ(ckpt.g_idx.size(), 256u);
  std::vector<int> group_sizes(4, 0);
  for (int64_t k = 0; k < 256; ++k) {
    EXPECT_EQ(ckpt.g_idx[size_t(w.permutation[size_t(k)])], k / 64);
    ++group_sizes[size_t(ckpt.g_idx[size_t(k)])];
  }
  EXPECT_EQ(group_sizes, (std::vector<int>{64, 64, 64, 64}));
  EXPECT_NE(w.permutation, make_plain_weight(info).permutation) << "not the identity";
  // Packed inputs 0 and 1 share group 0, so the stable sort keeps them in increasing order: the
  // other order is no stable sort of groups, and has no g_idx.
  PlainWeight unsorted = w;
  std::swap(unsorted.permutation[0], unsorted.permutation[1]);
  EXPECT_THROW(to_gptq(unsorted, false), std::invalid_argument);
}

TEST(Checkpoints, GptqAndAwqRoundTripToTheSameWeight) {
  RandomSource random(case_seed("CheckpointRoundTrip", 0));
  for (const FormatOptions &f : kEveryFormat) {
    if (f.format != XGEMV_QFORMAT_INT4) continue;
    for (const int64_t outputs : {int64_t{8}, int64_t{24}, int64_t{64}}) {
      const xgemv_qweight_info info =
          make_info(f, XGEMV_R_16F, XGEMV_R_16BF, outputs, 4 * f.group_size);
      SCOPED_TRACE(describe(info));
      PlainWeight w = random_plain_weight(info, random);
      if (info.permuted) w.permutation = act_order_permutation(info.inputs, f.group_size, random);
      for (const bool minus_one : {false, true}) {
        const PlainWeight back = from_gptq(to_gptq(w, minus_one), info, minus_one);
        EXPECT_EQ(back.codes, w.codes);
        EXPECT_EQ(back.scales, w.scales);
        EXPECT_EQ(back.zeros, w.zeros);
        EXPECT_EQ(back.permutation, w.permutation);
      }
      if (info.zero_points && !info.permuted) {
        const PlainWeight back = from_awq(to_awq(w), info);
        EXPECT_EQ(back.codes, w.codes);
        EXPECT_EQ(back.scales, w.scales);
        EXPECT_EQ(back.zeros, w.zeros);
      }
    }
  }
}

// --- the quantizer -----------------------------------------------------------------------------

// One row of `inputs` weights, the first ones given, the rest 0.
std::vector<float> row_of(int64_t inputs, std::vector<float> first) {
  first.resize(size_t(inputs), 0.0f);
  return first;
}

TEST(Quantizer, ExamplesWorkedOutByHand) {
  {  // INT4 symmetric, s = 7 / 7 = 1: q = rint(w) + 8, ties to even.
    const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_32F, 1, 32, 32, 0, 0};
    const PlainWeight q = quantize(row_of(32, {7, -3.5f, 0.5f, 1.5f, 2.5f, -7, 6.5f, -0.5f}), info);
    EXPECT_EQ(q.scales, std::vector<float>{1.0f});
    EXPECT_EQ(std::vector<uint8_t>(q.codes.begin(), q.codes.begin() + 9),
              (std::vector<uint8_t>{15, 4, 8, 10, 10, 1, 14, 8, 8}));
  }
  {  // INT4 with zero points: range (3 - -1.5) / 15 = 0.3f, z = rint(1.5 / 0.3f) = 5.
    const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_32F, 1, 32, 32, 1, 0};
    const PlainWeight q = quantize(row_of(32, {3, -1.5f, 0, 1}), info);
    EXPECT_EQ(q.scales, std::vector<float>{4.5f / 15.0f});
    EXPECT_EQ(q.zeros, std::vector<uint8_t>{5});
    EXPECT_EQ(std::vector<uint8_t>(q.codes.begin(), q.codes.begin() + 5),
              (std::vector<uint8_t>{15, 0, 5, 8, 5}));
  }
  {  // INT4 with zero points, positive weights only: min over the group and 0 is 0, so z = 0.
    const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 1, 32, 32, 1, 0};
    const PlainWeight q = quantize(std::vector<float>(32, 2.0f), info);
    EXPECT_EQ(q.zeros, std::vector<uint8_t>{0});
    EXPECT_EQ(q.codes, std::vector<uint8_t>(32, 15));
    EXPECT_EQ(q.scales, std::vector<float>{round_to(XGEMV_R_16F, 2.0f / 15.0f)});
  }
  {  // INT8, s = 127 / 127 = 1: ties to even, -127..127.
    const xgemv_qweight_info info = {XGEMV_QFORMAT_INT8, XGEMV_R_16F, XGEMV_R_32F, 1, 8, 0, 0, 0};
    const PlainWeight q = quantize(row_of(8, {-127, 0.5f, 1.5f, 2.5f, -0.5f, 126.5f}), info);
    EXPECT_EQ(q.codes, (std::vector<uint8_t>{0x81, 0, 2, 2, 0, 126, 0, 0}));
  }
  {  // FP8_E4M3, s = 448 / 448 = 1: 17 lies halfway between 16 and 18, to 16 (even mantissa).
    const xgemv_qweight_info info = {
        XGEMV_QFORMAT_FP8_E4M3, XGEMV_R_16F, XGEMV_R_32F, 1, 6, 0, 0, 0};
    const PlainWeight q = quantize({448, 1, 0.5f, -3, 17, 0}, info);
    EXPECT_EQ(q.codes, (std::vector<uint8_t>{0x7E, 0x38, 0x30, 0xC4, 0x58, 0x00}));
  }
  {  // FP8_E4M3_BLOCK, 130 x 130: four blocks of their own scales, one all zero.
    const xgemv_qweight_info info = {
        XGEMV_QFORMAT_FP8_E4M3_BLOCK, XGEMV_R_16F, XGEMV_R_32F, 130, 130, 0, 0, 0};
    std::vector<float> weights(130 * 130, 0.0f);
    weights[0] = 448;                 // block (0, 0): s = 1
    weights[129] = 1;                 // block (0, 1): s = 1 / 448; 1 / s saturates to 448
    weights[129 * 130 + 129] = -224;  // block (1, 1): s = 0.5, code of -448
    const PlainWeight q = quantize(weights, info);
    EXPECT_EQ(q.scales, (std::vector<float>{1.0f, 1.0f / 448.0f, 0.0f, 0.5f}));
    EXPECT_EQ(q.codes[0], 0x7E);
    EXPECT_EQ(q.codes[129], 0x7E);
    EXPECT_EQ(q.codes[129 * 130 + 129], 0xFE);
    EXPECT_EQ(q.codes[129 * 130], 0x00) << "block (1, 0) has scale 0: v = 0";
  }
}

// A group of all-zero weights has scale 0 and codes of v = 0; the comparison of quantized
// weights accepts any code of v = 0 there (the header leaves the zero point of such a group
// open) and either e4m3 zero anywhere, and nothing else.
TEST(Quantizer, AllZeroGroupsAndTheCodesOfVZero) {
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 2, 64, 32, 1, 0};
  std::vector<float> weights(128, 0.0f);
  for (int k = 32; k < 64; ++k) weights[size_t(k)] = float(k - 40) / 8;
  const PlainWeight q = quantize(weights, info);
  EXPECT_EQ(q.scales[0], 0.0f);
  EXPECT_NE(q.scales[1], 0.0f);
  EXPECT_EQ(q.scales[2], 0.0f);
  for (int k = 0; k < 32; ++k) EXPECT_EQ(q.code_value(0, k), 0.0) << k;
  EXPECT_EQ(quantized_differences(q, q), "");
  PlainWeight other_zero = q;
  other_zero.zeros[0] = 3;
  for (int k = 0; k < 32; ++k) other_zero.codes[size_t(k)] = 3;
  EXPECT_EQ(quantized_differences(other_zero, q), "");
  PlainWeight nonzero_v = q;
  nonzero_v.codes[0] = uint8_t(q.zeros[0] + 1);
  EXPECT_NE(quantized_differences(nonzero_v, q), "");
  PlainWeight other_code = q;
  other_code.codes[40] ^= 1;
  EXPECT_NE(quantized_differences(other_code, q), "");
  // The e4m3 zeros: +0 and -0 are both v = 0.
  const xgemv_qweight_info fp8 = {XGEMV_QFORMAT_FP8_E4M3, XGEMV_R_16F, XGEMV_R_16F, 1, 3, 0, 0, 0};
  const PlainWeight e4m3 = quantize({-1, 0, 1}, fp8);
  PlainWeight negative_zero = e4m3;
  negative_zero.codes[1] = 0x80;
  EXPECT_EQ(quantized_differences(negative_zero, e4m3), "");
  PlainWeight other_scale = q;
  other_scale.scales[1] = -other_scale.scales[1];
  EXPECT_NE(quantized_differences(other_scale, q), "");
}

// Quantized random weights dequantize to within half a step: s / 2 for the symmetric integer
// formats (the rounded scale still covers the group: no clipping), s with zero points (where the
// rounded zero point may clip the largest weight by a step), half an e4m3 ulp of w / s for fp8.
TEST(Quantizer, RandomWeightsComeBackWithinHalfAStep) {
  RandomSource random(case_seed("QuantizerWithinHalfAStep", 0));
  for (const FormatOptions &f : kEveryFormat) {
    if (f.permuted) continue;
    for (const xgemv_datatype activation : kActivationTypes)
      for (const xgemv_datatype scale : kScaleTypes) {
        const int64_t inputs = f.format == XGEMV_QFORMAT_INT4 ? 4 * f.group_size : 300;
        const xgemv_qweight_info info = make_info(f, activation, scale, 131, inputs);
        SCOPED_TRACE(describe(info));
        std::vector<float> weights(size_t(131 * inputs));
        for (float &w : weights) w = round_to(activation, float(random.uniform(-3, 3)));
        const PlainWeight q = quantize(weights, info);
        const std::vector<double> back = weight_values(q);
        for (int64_t o = 0; o < 131; ++o)
          for (int64_t k = 0; k < inputs; ++k) {
            const double w = weights[size_t(o * inputs + k)], s = std::fabs(q.scale(o, k));
            const double step = f.zero_points ? s
                                : f.format == XGEMV_QFORMAT_INT4 || f.format == XGEMV_QFORMAT_INT8
                                    ? s / 2
                                    : std::fabs(w) / 16 + s * std::ldexp(1.0, -10);
            ASSERT_LE(std::fabs(back[size_t(o * inputs + k)] - w), step * (1 + 0x1p-16))
                << "output " << o << ", input " << k << ": " << w << " came back as "
                << back[size_t(o * inputs + k)];
          }
      }
  }
}

// --- the GEMV ----------------------------------------------------------------------------------

TEST(ReferenceQgemv, FollowsTheBlasRules) {
  const std::vector<double> w = {1, 2, 3, -1, 0.5, 4};  // 2 x 3
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Two columns: X with ldx 4 (a NaN in the gap), Y with ldy 3.
  const std::vector<double> x = {1, 2, -1, nan, 0, 1, 0, nan};
  const std::vector<double> y = {10, 8, nan, 1, 1, nan};
  EXPECT_EQ(reference_qgemv(w, 2, 3, 2, x, 4, 0.5, y, 3, 2),
            (std::vector<double>{2 * 2 + 5, 2 * -4 + 4, 2 * 2 + 0.5, 2 * 0.5 + 0.5}));
  const std::vector<double> nan_y(6, nan);
  EXPECT_EQ(reference_qgemv(w, 2, 3, 2, x, 4, 0, nan_y, 3, 1), (std::vector<double>{4, -8}))
      << "beta = 0 reads no y";
  const std::vector<double> nan_w(6, nan), nan_x(8, nan);
  EXPECT_EQ(reference_qgemv(nan_w, 2, 3, 0, nan_x, 4, 1, y, 3, 1), (std::vector<double>{10, 8}))
      << "alpha = 0 reads neither W nor x";
  EXPECT_EQ(reference_qgemv(nan_w, 2, 3, 0, nan_x, 4, -2, y, 3, 1),
            (std::vector<double>{-20, -16}));
  // The error bound's terms: |W| |x| + |y| (callers pass |alpha| and |beta|).
  EXPECT_EQ(reference_qgemv(w, 2, 3, 1, x, 4, 1, y, 3, 1, Magnitude{}),
            (std::vector<double>{1 + 4 + 3 + 10, 1 + 1 + 4 + 8}));
}

TEST(ReferenceQgemv, ErrorFactorGrowsWithTheReductionAndYsRounding) {
  EXPECT_EQ(qgemv_error_factor(12, XGEMV_R_32F), 2 * 16 * 0x1p-24 + 0x1p-24);
  EXPECT_EQ(qgemv_error_factor(12, XGEMV_R_16F), 2 * 16 * 0x1p-24 + 0x1p-11);
  EXPECT_EQ(qgemv_error_factor(12, XGEMV_R_16BF), 2 * 16 * 0x1p-24 + 0x1p-8);
}

}  // namespace
}  // namespace xgemv_test::quant
