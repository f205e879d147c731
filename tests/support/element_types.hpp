// The four element types xgemv serves, as one traits table the tests are templated over.
#pragma once

#include <cstring>
#include <limits>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "host_device.hpp"

namespace xgemv_test {

template <class T>
struct Element;

// Scalar: the type of alpha, beta and the accumulation. unit_roundoff: half an ulp of 1.
template <>
struct Element<float> {
  using Scalar = float;
  static constexpr const char *name = "fp32";
  static constexpr double unit_roundoff = 0x1p-24;
};
template <>
struct Element<double> {
  using Scalar = double;
  static constexpr const char *name = "fp64";
  static constexpr double unit_roundoff = 0x1p-53;
};
template <>
struct Element<__half> {
  using Scalar = float;
  static constexpr const char *name = "fp16";
  static constexpr double unit_roundoff = 0x1p-11;
};
template <>
struct Element<__nv_bfloat16> {
  using Scalar = float;
  static constexpr const char *name = "bf16";
  static constexpr double unit_roundoff = 0x1p-8;
};

template <class T>
using ScalarOf = typename Element<T>::Scalar;

template <class T>
XGEMV_TEST_HOST_DEVICE double to_double(T value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(value);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(value);
  } else {
    return static_cast<double>(value);
  }
}

// Rounds to nearest. 16-bit types go through float: exact for the values the tests round (fp32
// results, or integers below 2^24).
template <class T>
XGEMV_TEST_HOST_DEVICE T from_double(double value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

template <class T>
T quiet_nan() {
  return from_double<T>(std::numeric_limits<double>::quiet_NaN());
}

template <class T>
bool same_bits(const T &a, const T &b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace xgemv_test
