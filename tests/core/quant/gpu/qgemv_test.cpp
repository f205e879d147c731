// xgemv_qgemv and xgemv_qgemv_nrhs on weights written by the host packer, against the fp64
// reference of the host-dequantized weights and cuBLAS GemmEx (qgemv_case.hpp): every format and
// option with every activation, y and scale type; edge shapes (outputs 1 to 1031, inputs of one
// group to many, inputs past a k-block, odd inputs for the 8-bit formats) and long reductions;
// nrhs 1..17 and 32; the single-vector entry point; ldx/ldy padding; alpha/beta specials in both
// pointer modes; x and y off alignment by an element; NaN and infinities in x, in scales and in
// e4m3 codes. Sizes shrink under the sanitizer profile.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "qgemv_case.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test::quant {
namespace {

// y of the activation type or fp32.
enum class YType { activation, fp32 };
constexpr YType kYTypes[] = {YType::activation, YType::fp32};

// The case with x of `activation` type and y of it or (kept) fp32.
QuantCase with_activation(QuantCase c, xgemv_datatype activation, YType y) {
  c.activation = activation;
  c.y_type = y == YType::fp32 ? XGEMV_R_32F : activation;
  return c;
}
QuantCase with_activation(QuantCase c, xgemv_datatype activation) {
  return with_activation(c, activation, c.y_type == XGEMV_R_32F ? YType::fp32 : YType::activation);
}

// Inputs that every format takes (a multiple of 128) or, for the 8-bit formats, an odd count.
int64_t moderate_inputs(const FormatOptions &f) {
  return f.format == XGEMV_QFORMAT_INT4 ? 384 : 257;
}

int64_t long_reduction() { return by_profile<int64_t>(14336, 2048); }
int64_t many_outputs() { return by_profile<int64_t>(1031, 131); }

// The i-th of the 12 combinations of activation, y and scale types: tables too long to run over
// all of them take one each, in turn.
QuantCase with_types_in_turn(QuantCase c, size_t i) {
  c = with_activation(c, kActivationTypes[i % 2], kYTypes[i / 2 % 2]);
  c.scale_type = kScaleTypes[i / 4 % 3];
  return c;
}

class Qgemv : public GpuHandlesTest {
 protected:
  static void run(const std::vector<QuantCase> &cases) {
    run_quant_cases(cases, gpu(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
};

TEST_F(Qgemv, EveryFormatWithEveryActivationYAndScaleType) {
  std::vector<QuantCase> cases;
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype activation : kActivationTypes)
      for (const YType y : kYTypes)
        for (const xgemv_datatype scale : kScaleTypes) {
          QuantCase c = with_activation(format_case(f, 33, moderate_inputs(f), 3), activation, y);
          c.scale_type = scale;
          cases.push_back(c);
        }
  run(cases);
}

// Outputs around the tiles of 16 and inputs around the k-blocks and groups of each format.
TEST_F(Qgemv, EdgeShapes) {
  std::vector<QuantCase> cases;
  for (const FormatOptions &f : kEveryFormat)
    for (const int64_t outputs : kEdgeOutputs)
      for (const int64_t inputs : edge_inputs(f)) {
        // The largest weights: a few (many outputs with few inputs; long reductions below).
        if (outputs > 128 && (sanitizer_profile() || inputs > 1024)) continue;
        const size_t i = cases.size();
        QuantCase c = with_types_in_turn(
            format_case(f, outputs, inputs, outputs > 128 ? 1 : 1 + int64_t(i % 3)), i);
        c.integer_data = i / 12 % 2 == 1;
        cases.push_back(c);
      }
  run(cases);
}

// Reductions of 14336 inputs (a decoder's MLP): short outputs for every format, on random and
// (exactly) on integer data, and one large weight for each family of formats.
TEST_F(Qgemv, LongReductions) {
  std::vector<QuantCase> cases;
  for (const FormatOptions &f : kEveryFormat)
    for (const int64_t outputs : {1, 17, 33})
      for (const bool integer_data : {false, true}) {
        QuantCase c =
            with_types_in_turn(format_case(f, outputs, long_reduction(), 2), cases.size());
        c.integer_data = integer_data;
        cases.push_back(c);
      }
  for (const FormatOptions &f :
       {FormatOptions{XGEMV_QFORMAT_INT4, 128, 1, 1}, FormatOptions{XGEMV_QFORMAT_INT8, 0, 0, 0},
        FormatOptions{XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0, 0, 0}})
    cases.push_back(
        with_types_in_turn(format_case(f, many_outputs(), long_reduction(), 1), cases.size()));
  run(cases);
}

// One group of 16 columns, every count up to it, one past it, and two full groups.
TEST_F(Qgemv, EveryNrhsUpTo17And32) {
  std::vector<QuantCase> cases;
  for (const FormatOptions &f :
       {FormatOptions{XGEMV_QFORMAT_INT4, 128, 1, 1}, FormatOptions{XGEMV_QFORMAT_INT4, 32, 0, 0},
        FormatOptions{XGEMV_QFORMAT_INT8, 0, 0, 0},
        FormatOptions{XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0, 0, 0}}) {
    std::vector<int64_t> counts;
    for (int64_t nrhs = 1; nrhs <= 17; ++nrhs) counts.push_back(nrhs);
    counts.push_back(32);
    for (const int64_t nrhs : counts)
      cases.push_back(with_types_in_turn(format_case(f, 67, 1024, nrhs), cases.size()));
  }
  run(cases);
}

TEST_F(Qgemv, SingleVectorEntryPoint) {
  std::vector<QuantCase> cases;
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype activation : kActivationTypes) {
      QuantCase c = with_activation(
          with_types_in_turn(format_case(f, 129, moderate_inputs(f), 1), cases.size()), activation);
      c.single_vector = true;
      cases.push_back(c);
    }
  run(cases);
}

TEST_F(Qgemv, PaddedLeadingDimensions) {
  constexpr int64_t kPaddings[][2] = {{1, 0}, {0, 1}, {3, 5}, {64, 7}};  // ldx, ldy
  std::vector<QuantCase> cases;
  for (const FormatOptions &f : {FormatOptions{XGEMV_QFORMAT_INT4, 64, 1, 0},
                                 FormatOptions{XGEMV_QFORMAT_FP8_E4M3, 0, 0, 0}})
    for (const auto &[ldx_padding, ldy_padding] : kPaddings)
      for (const int64_t nrhs : {2, 16, 17}) {
        QuantCase c =
            with_types_in_turn(format_case(f, 129, moderate_inputs(f), nrhs), cases.size());
        c.ldx_padding = ldx_padding;
        c.ldy_padding = ldy_padding;
        cases.push_back(c);
      }
  run(cases);
}

// alpha x beta in {0, 1, -1, 0.5, random}^2 in both pointer modes, through both entry points:
// beta = 0 poisons Y with NaN, alpha = 0 poisons X and the storage, alpha = 0 with beta = 1 is a
// quick return; and nrhs = 0.
TEST_F(Qgemv, ScalarsInBothPointerModes) {
  constexpr ScalarChoice kScalars[] = {ScalarChoice::zero, ScalarChoice::one,
                                       ScalarChoice::minus_one, ScalarChoice::half,
                                       ScalarChoice::random};
  std::vector<QuantCase> cases;
  for (const FormatOptions &f : {FormatOptions{XGEMV_QFORMAT_INT4, 64, 1, 1},
                                 FormatOptions{XGEMV_QFORMAT_FP8_E4M3, 0, 0, 0}})
    for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE})
      for (const ScalarChoice alpha : kScalars)
        for (const ScalarChoice beta : kScalars)
          for (const bool single_vector : {false, true}) {
            QuantCase c =
                with_types_in_turn(format_case(f, 33, 256, single_vector ? 1 : 3), cases.size());
            c.alpha = alpha;
            c.beta = beta;
            c.pointer_mode = mode;
            c.single_vector = single_vector;
            cases.push_back(c);
          }
  for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE}) {
    QuantCase c = format_case(kEveryFormat[0], 33, 256, 0);
    c.pointer_mode = mode;
    cases.push_back(c);
  }
  run(cases);
}

// x and y one element (or an odd count) past 256-byte alignment: any element alignment serves.
TEST_F(Qgemv, MisalignedXAndY) {
  constexpr size_t kMisalignments[][2] = {{1, 0}, {0, 1}, {1, 1}, {3, 5}};
  // nrhs, and whether through the single-vector entry point.
  constexpr std::pair<int64_t, bool> kCalls[] = {{1, true}, {3, false}, {17, false}};
  std::vector<QuantCase> cases;
  for (const FormatOptions &f :
       {FormatOptions{XGEMV_QFORMAT_INT4, 128, 0, 0}, FormatOptions{XGEMV_QFORMAT_INT8, 0, 0, 0},
        FormatOptions{XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0, 0, 0}})
    for (const auto &[x_misalignment, y_misalignment] : kMisalignments)
      for (const auto &[nrhs, single_vector] : kCalls) {
        QuantCase c =
            with_types_in_turn(format_case(f, 131, moderate_inputs(f), nrhs), cases.size());
        c.single_vector = single_vector;
        c.x_misalignment = x_misalignment;
        c.y_misalignment = y_misalignment;
        cases.push_back(c);
      }
  run(cases);
}

// w = v * s with IEEE arithmetic, products and sums in IEEE fp32: a NaN in x gives NaN in its
// column, an infinity in x infinities (NaN where v = 0); a NaN scale NaN in its outputs, an
// infinite scale infinities; an e4m3 NaN code NaN in its output.
TEST_F(Qgemv, NanAndInfinitiesPropagateAsTheDefinitionSays) {
  std::vector<QuantCase> cases;
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype activation : kActivationTypes)
      for (const SpecialValue special :
           {SpecialValue::nan_in_x, SpecialValue::inf_in_x, SpecialValue::nan_scale,
            SpecialValue::inf_scale, SpecialValue::nan_code}) {
        const bool fp8 =
            f.format == XGEMV_QFORMAT_FP8_E4M3 || f.format == XGEMV_QFORMAT_FP8_E4M3_BLOCK;
        if (special == SpecialValue::nan_code && !fp8) continue;
        QuantCase c = with_activation(
            with_types_in_turn(format_case(f, 150, moderate_inputs(f), 2), cases.size()),
            activation);
        c.special = special;
        c.beta = cases.size() % 3 == 0 ? ScalarChoice::zero : ScalarChoice::random;
        cases.push_back(c);
      }
  run(cases);
}

}  // namespace
}  // namespace xgemv_test::quant
