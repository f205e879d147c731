// The four element types xgemv serves, as one traits table the tests are templated over.
#pragma once

#include <cstring>
#include <limits>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "host_device.hpp"

namespace xgemv_test {

// The value for element type T of one given per type, in the order fp32, fp64, fp16, bf16.
template <class T, class V>
constexpr V per_element_type(V fp32, V fp64, V fp16, V bf16) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>,
                "not one of xgemv's element types");
  if constexpr (std::is_same_v<T, float>)
    return fp32;
  else if constexpr (std::is_same_v<T, double>)
    return fp64;
  else if constexpr (std::is_same_v<T, __half>)
    return fp16;
  else
    return bf16;
}

// Scalar: the type of alpha, beta and the accumulation (double for fp64, float otherwise).
// unit_roundoff: half an ulp of 1.
template <class T>
struct Element {
  using Scalar = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static constexpr const char *name =
      per_element_type<T, const char *>("fp32", "fp64", "fp16", "bf16");
  static constexpr double unit_roundoff = per_element_type<T>(0x1p-24, 0x1p-53, 0x1p-11, 0x1p-8);
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

// Calls f.template operator()<T>() for each element type T, in the order fp32, fp64, fp16, bf16:
// a test written once as a templated lambda ([&]<class T>() {...}) for all four.
template <class F>
void for_each_element_type(F &&f) {
  f.template operator()<float>();
  f.template operator()<double>();
  f.template operator()<__half>();
  f.template operator()<__nv_bfloat16>();
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
