// What each code type of quantized weights is (xgemv_quant.h): its width, its k-blocks in the
// packed layout, the value of a code and the code of a value, host and device alike. The
// conversions (quant/convert.cu) and the kernels' decode (kernels/quant_codes.cuh) ask these
// traits instead of naming code types, so that a new code type is one specialisation here, its
// decode in registers, and its row of src/element_types.json.
#pragma once

#include <cmath>

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "problem.hpp"

namespace xgemv {

template <class Code>
struct CodeTraits;

namespace code_detail {
XGEMV_HOST_DEVICE inline float clamp(float v, float lo, float hi) { return fminf(fmaxf(v, lo), hi); }
}  // namespace code_detail

// v = q - z with a 4-bit code q and zero point z (8 for symmetric codes).
template <>
struct CodeTraits<Int4Code> {
  static constexpr int kBits = 4;
  static constexpr int kBlockInputs = 64;  // inputs per k-block of a tile
  static constexpr bool kZeroPoints = true;  // a group may carry its own zero point
  static constexpr bool kBlockScales = false;
  static constexpr float kLargestValue = 7.0f;  // the symmetric scale: max |w| / this
  static constexpr unsigned kPaddingCode = 8;   // v = 0 without zero points
  XGEMV_HOST_DEVICE static float value(unsigned code, unsigned z) {
    return float(int(code & 0xFu) - int(z));
  }
  // The code of w / s = r with zero point z.
  XGEMV_HOST_DEVICE static unsigned code_of(float r, unsigned z) {
    return unsigned(code_detail::clamp(rintf(r) + float(z), 0.0f, 15.0f));
  }
};

// v = q, an int8 code.
template <>
struct CodeTraits<Int8Code> {
  static constexpr int kBits = 8;
  static constexpr int kBlockInputs = 32;
  static constexpr bool kZeroPoints = false;
  static constexpr bool kBlockScales = false;
  static constexpr float kLargestValue = 127.0f;
  static constexpr unsigned kPaddingCode = 0;
  XGEMV_HOST_DEVICE static float value(unsigned code, unsigned) {
    return float(int(static_cast<signed char>(code & 0xFFu)));
  }
  XGEMV_HOST_DEVICE static unsigned code_of(float r, unsigned) {
    return unsigned(int(code_detail::clamp(rintf(r), -127.0f, 127.0f))) & 0xFFu;
  }
};

// v = the fp8 e4m3 value of the code (saturating: the largest finite value is 448).
template <>
struct CodeTraits<E4M3Code> {
  static constexpr int kBits = 8;
  static constexpr int kBlockInputs = 32;
  static constexpr bool kZeroPoints = false;
  static constexpr bool kBlockScales = true;  // FP8_E4M3_BLOCK: a scale per 128 x 128 block
  static constexpr float kLargestValue = 448.0f;
  static constexpr unsigned kPaddingCode = 0;
  XGEMV_HOST_DEVICE static float value(unsigned code, unsigned) {
    const __half_raw h = __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(code & 0xFFu), __NV_E4M3);
    return __half2float(__half(h));
  }
  XGEMV_HOST_DEVICE static unsigned code_of(float r, unsigned) {
    return __nv_cvt_float_to_fp8(r, __NV_SATFINITE, __NV_E4M3);
  }
};

// mma steps (16 inputs each) per k-block.
template <class Code>
inline constexpr int kStepsPerBlock = CodeTraits<Code>::kBlockInputs / 16;

}  // namespace xgemv
