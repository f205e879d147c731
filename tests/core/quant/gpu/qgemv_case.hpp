// One quantized GEMV test case on the GPU, end to end: a random weight in plain form, its storage
// written by the host packer and copied to the device, X and Y with guard values (NaN) in every
// gap, the fp64 reference on the host-dequantized weights, the xgemv call (twice, for bitwise
// repeatability) and every check the contract implies: the error bound, NaN and infinities where
// the definition puts them, alpha = 0 reading nothing (NaN-poisoned storage and X) and giving
// beta * y exactly, beta = 0 reading no Y (NaN-poisoned), quick returns touching nothing, guards,
// gaps and inputs untouched; and cuBLAS GemmEx on the dequantized weights rounded to the
// activation type, within the bound widened by that rounding.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <xgemv/xgemv_quant.h>

#include "support/cublas_reference.hpp"
#include "support/device_buffer.hpp"
#include "support/gemv_case.hpp"
#include "support/quant_formats.hpp"
#include "support/quant_reference.hpp"
#include "support/random_data.hpp"

namespace xgemv_test::quant {

// IEEE specials planted in otherwise random data: a NaN or an infinity in column 0 of X, a NaN
// or an infinite scale (the weights under an infinite scale all of v > 0 and X positive, so that
// every run of them sums to the same sign however the runs are cut), an e4m3 NaN code.
enum class SpecialValue { none, nan_in_x, inf_in_x, nan_scale, inf_scale, nan_code };

struct QuantCase {
  FormatOptions format = {XGEMV_QFORMAT_INT4, 128, 0, 0};
  xgemv_datatype activation = XGEMV_R_16F, scale_type = XGEMV_R_16F, y_type = XGEMV_R_16F;
  int64_t outputs = 16, inputs = 128;
  // nrhs columns through xgemv_qgemv_nrhs, or (single_vector) one through xgemv_qgemv.
  int64_t nrhs = 1;
  bool single_vector = false;
  int64_t ldx_padding = 0, ldy_padding = 0;  // ldx = inputs + ldx_padding, ldy likewise
  ScalarChoice alpha = ScalarChoice::random, beta = ScalarChoice::random;
  xgemv_pointer_mode pointer_mode = XGEMV_POINTER_MODE_HOST;
  size_t x_misalignment = 0, y_misalignment = 0;  // elements past a 256-byte boundary
  SpecialValue special = SpecialValue::none;
  // v of -16..16, scales of +-2^-3..2^0, integers in [-2, 2] in X and Y and integer or
  // half-integer scalars: every product, run, scaled run and sum is exact in fp32 (below 2^24
  // units of 2^-4 for 14336 inputs), so Y must equal the exact result rounded to its type, which
  // the rounding bound of a long reduction could not show (a dropped or doubled product).
  bool integer_data = false;

  xgemv_qweight_info info() const {
    return make_info(format, activation, scale_type, outputs, inputs);
  }
  int64_t ldx() const { return inputs + ldx_padding; }
  int64_t ldy() const { return outputs + ldy_padding; }
  // Columns of the X and Y buffers: nrhs = 0 still gets one, to show it is left alone.
  int64_t columns() const { return std::max<int64_t>(nrhs, 1); }
};

// A case of format f with `outputs` x `inputs` weights and nrhs columns, the rest at defaults.
inline QuantCase format_case(const FormatOptions &f, int64_t outputs, int64_t inputs,
                             int64_t nrhs) {
  return {.format = f, .outputs = outputs, .inputs = inputs, .nrhs = nrhs};
}

inline std::string describe(const QuantCase &c) {
  static constexpr const char *kScalarNames[] = {"0", "1", "-1.5", "random", "-1", "0.5"};
  static constexpr const char *kSpecialNames[] = {
      "", ", NaN in x", ", infinity in x", ", NaN scale", ", infinite scale", ", e4m3 NaN code"};
  std::ostringstream text;
  text << describe(c.info()) << ", y " << datatype_name(c.y_type)
       << (c.single_vector ? ", xgemv_qgemv" : ", nrhs " + std::to_string(c.nrhs))
       << " ldx=" << c.ldx() << " ldy=" << c.ldy()
       << " alpha=" << kScalarNames[static_cast<int>(c.alpha)]
       << " beta=" << kScalarNames[static_cast<int>(c.beta)]
       << (c.pointer_mode == XGEMV_POINTER_MODE_DEVICE ? " device scalars" : " host scalars");
  if (c.x_misalignment || c.y_misalignment)
    text << " misaligned x+" << c.x_misalignment << " y+" << c.y_misalignment;
  text << kSpecialNames[static_cast<int>(c.special)] << (c.integer_data ? ", integer data" : "");
  return text.str();
}

// Calls f.template operator()<A, Y>() with the element types of x (activation) and y.
template <class F>
void with_element_types(xgemv_datatype activation, xgemv_datatype y_type, F &&f) {
  const bool fp32_y = y_type == XGEMV_R_32F;
  if (activation == XGEMV_R_16F) {
    if (fp32_y)
      f.template operator()<__half, float>();
    else
      f.template operator()<__half, __half>();
  } else {
    if (fp32_y)
      f.template operator()<__nv_bfloat16, float>();
    else
      f.template operator()<__nv_bfloat16, __nv_bfloat16>();
  }
}

// The host side of a case: the weight (plain and as storage), the scalars, images of X and Y
// (guard values in the gaps past inputs and outputs) and which Y elements are logical.
template <class A, class Y>
struct QuantProblem {
  QuantCase c;
  xgemv_qweight_info info;
  xgemv_qweight_layout layout;
  PlainWeight weight;
  std::vector<uint8_t> storage;
  float alpha, beta;
  std::vector<A> x;
  std::vector<Y> y;
  std::vector<bool> is_logical_y;

  size_t x_index(int64_t column, int64_t input) const { return size_t(column * c.ldx() + input); }
  size_t y_index(int64_t column, int64_t output) const { return size_t(column * c.ldy() + output); }
};

// The codes and scales of integer data (QuantCase::integer_data).
inline void make_integer_weight(PlainWeight &w, RandomSource &random) {
  // 4-bit codes keep their random values: v = q - 8 or q - z lies in -15..15.
  for (uint8_t &q : w.codes) {
    if (w.info.format == XGEMV_QFORMAT_INT4) break;
    const int v = int(random.integer(-16, 16));
    // Every integer up to 16 is an e4m3 value.
    q = w.info.format == XGEMV_QFORMAT_INT8 ? uint8_t(int8_t(v)) : e4m3_code(float(v));
  }
  for (float &s : w.scales)
    s = float(std::ldexp(random.integer(0, 1) ? 1.0 : -1.0, -int(random.integer(0, 3))));
}

// Random codes (v of every value), scales about 1 / max|v| and X, Y in [-1, 1): |w| stays below
// 2 and the sums of the long reductions far from the 16-bit limits. Or integer data.
template <class A, class Y>
QuantProblem<A, Y> make_problem(const QuantCase &c, RandomSource &random) {
  QuantProblem<A, Y> p{c, c.info(), {}, {}, {}, 0, 0, {}, {}, {}};
  if (xgemv_qweight_get_layout(&p.info, &p.layout) != XGEMV_STATUS_SUCCESS)
    throw std::invalid_argument("make_problem: an invalid weight: " + describe(p.info));
  p.weight = random_plain_weight(p.info, random);
  if (c.integer_data) make_integer_weight(p.weight, random);
  p.alpha = choose_scalar<float>(c.alpha, c.integer_data, random);
  p.beta = choose_scalar<float>(c.beta, c.integer_data, random);
  const auto element = [&]<class T>() {
    return c.integer_data ? from_double<T>(double(random.integer(-2, 2))) : random.element<T>();
  };
  p.x.assign(size_t(c.ldx() * c.columns()), guard_value<A>());
  p.y.assign(size_t(c.ldy() * c.columns()), guard_value<Y>());
  p.is_logical_y.assign(p.y.size(), false);
  for (int64_t column = 0; column < c.nrhs; ++column) {
    for (int64_t k = 0; k < c.inputs; ++k)
      p.x[p.x_index(column, k)] = element.template operator()<A>();
    for (int64_t o = 0; o < c.outputs; ++o) {
      p.y[p.y_index(column, o)] = element.template operator()<Y>();
      p.is_logical_y[p.y_index(column, o)] = true;
    }
  }
  return p;
}

// Plants the case's special value (see SpecialValue) in a problem made by make_problem.
template <class A, class Y>
void plant_special(QuantProblem<A, Y> &p, RandomSource &random) {
  const xgemv_qweight_info &info = p.info;
  PlainWeight &w = p.weight;
  const float infinity = std::numeric_limits<float>::infinity();
  const float sign = random.integer(0, 1) ? 1.0f : -1.0f;
  switch (p.c.special) {
    case SpecialValue::none: return;
    case SpecialValue::nan_in_x:
    case SpecialValue::inf_in_x: {
      const float value = p.c.special == SpecialValue::nan_in_x
                              ? std::numeric_limits<float>::quiet_NaN()
                              : sign * infinity;
      p.x[p.x_index(0, random.integer(0, info.inputs - 1))] = from_double<A>(value);
      return;
    }
    case SpecialValue::nan_scale:
      w.scales[size_t(random.integer(0, int64_t(w.scales.size()) - 1))] =
          std::numeric_limits<float>::quiet_NaN();
      return;
    case SpecialValue::inf_scale: {
      const int64_t chosen = random.integer(0, int64_t(w.scales.size()) - 1);
      w.scales[size_t(chosen)] = sign * infinity;
      for (int64_t o = 0; o < info.outputs; ++o)
        for (int64_t k = 0; k < info.inputs; ++k) {
          if (w.scale_index(o, k) != size_t(chosen)) continue;
          uint8_t &q = w.codes[size_t(o * info.inputs + k)];
          switch (info.format) {
            case XGEMV_QFORMAT_INT4: {
              int z = 8;
              if (info.zero_points) {
                uint8_t &zero = w.zeros[w.zero_point_index(o, k)];
                zero = std::min<uint8_t>(zero, 14);  // room for a code above it
                z = zero;
              }
              q = uint8_t(random.integer(z + 1, 15));
              break;
            }
            case XGEMV_QFORMAT_INT8: q = uint8_t(random.integer(1, 127)); break;
            default: q = uint8_t(random.integer(0x01, 0x7E));  // positive, not NaN
          }
        }
      for (int64_t column = 0; column < p.c.nrhs; ++column)
        for (int64_t k = 0; k < info.inputs; ++k)
          p.x[p.x_index(column, k)] = from_double<A>(random.uniform(0.25, 1.0));
      return;
    }
    case SpecialValue::nan_code:
      w.codes[size_t(random.integer(0, int64_t(w.codes.size()) - 1))] = sign > 0 ? 0x7F : 0xFF;
      return;
  }
}

// Whether every logical y is NaN where the reference is, the same infinity where the reference
// is infinite, and within factor * magnitude of it elsewhere.
template <class Y>
::testing::AssertionResult matches_reference(const char *reference, const QuantCase &c,
                                             const std::vector<Y> &got,
                                             const std::vector<double> &want,
                                             const std::vector<double> &bound) {
  int64_t bad = 0;
  std::ostringstream first_bad;
  for (int64_t column = 0; column < c.nrhs; ++column)
    for (int64_t o = 0; o < c.outputs; ++o) {
      const double value = to_double(got[size_t(column * c.ldy() + o)]);
      const double expected = want[size_t(column * c.outputs + o)];
      const double allowed = bound[size_t(column * c.outputs + o)];
      const bool good = std::isnan(expected)   ? std::isnan(value)
                        : std::isinf(expected) ? value == expected
                                               : std::fabs(value - expected) <= allowed;
      if (good) continue;
      if (bad++ < 5)
        first_bad << "\n  column " << column << " y[" << o << "] = " << value << ", " << reference
                  << " " << expected << ", |difference| " << std::fabs(value - expected)
                  << " > bound " << allowed;
    }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " elements of Y differ from " << reference << ":" << first_bad.str();
}

// The device side of a problem: its storage (the packed weight, or NaN bytes for calls that must
// not read it), the weight made on it, X, Y and the scalars; calls on the case's entry point, or
// on the bias call.
template <class A, class Y>
class QuantDeviceProblem {
 public:
  QuantDeviceProblem(const QuantProblem<A, Y> &p, const std::vector<uint8_t> &storage)
      : p_(p),
        storage_(storage.size()),
        x_(p.x.size(), p.c.x_misalignment),
        y_(p.y.size(), p.c.y_misalignment),
        scalars_(2),
        weight_(p.info, storage_.data()) {
    storage_.upload(storage);
    scalars_.upload({p.alpha, p.beta});
  }

  xgemv_status weight_status() const { return weight_.status(); }
  xgemv_qweight weight() const { return weight_.get(); }
  GuardedDeviceBuffer<uint8_t> &storage() { return storage_; }
  GuardedDeviceBuffer<A> &x() { return x_; }
  GuardedDeviceBuffer<Y> &y() { return y_; }
  GuardedDeviceBuffer<float> &scalars() { return scalars_; }

  // The call on images of X and Y with `nrhs` columns (0 and more through xgemv_qgemv_nrhs, or
  // column `column` alone through xgemv_qgemv when single_vector), in `mode`; Y after it.
  std::vector<Y> run(xgemv_handle h, const std::vector<A> &x, const std::vector<Y> &y, int64_t nrhs,
                     bool single_vector, xgemv_pointer_mode mode, int64_t column = 0) {
    const ScalarPointers s = prepare(h, x, y, mode);
    const A *x_column = x_.data() + column * p_.c.ldx();
    Y *y_column = y_.data() + column * p_.c.ldy();
    return finish(single_vector
                      ? xgemv_qgemv(h, s.alpha, weight(), x_column, s.beta, y_column, p_.c.y_type)
                      : xgemv_qgemv_nrhs(h, s.alpha, weight(), x_.data(), p_.c.ldx(), s.beta,
                                         y_.data(), p_.c.ldy(), p_.c.y_type, nrhs));
  }

  // The same through xgemv_qgemv_bias with `bias` (a device vector of `outputs` elements of Y,
  // or NULL).
  std::vector<Y> run_bias(xgemv_handle h, const std::vector<A> &x, const std::vector<Y> &y,
                          int64_t nrhs, xgemv_pointer_mode mode, const Y *bias) {
    const ScalarPointers s = prepare(h, x, y, mode);
    return finish(xgemv_qgemv_bias(h, s.alpha, weight(), x_.data(), p_.c.ldx(), s.beta, y_.data(),
                                   p_.c.ldy(), p_.c.y_type, nrhs, bias));
  }

  // The case's own call.
  std::vector<Y> run_case(xgemv_handle h, const std::vector<A> &x, const std::vector<Y> &y) {
    return run(h, x, y, p_.c.nrhs, p_.c.single_vector, p_.c.pointer_mode);
  }

 private:
  struct ScalarPointers {
    const float *alpha, *beta;
  };
  // Uploads X and Y and sets the pointer mode; the scalars in that mode.
  ScalarPointers prepare(xgemv_handle h, const std::vector<A> &x, const std::vector<Y> &y,
                         xgemv_pointer_mode mode) {
    x_.upload(x);
    y_.upload(y);
    EXPECT_EQ(xgemv_set_pointer_mode(h, mode), XGEMV_STATUS_SUCCESS);
    const bool device = mode == XGEMV_POINTER_MODE_DEVICE;
    return {device ? scalars_.data() : &p_.alpha, device ? scalars_.data() + 1 : &p_.beta};
  }
  std::vector<Y> finish(xgemv_status status) {
    EXPECT_EQ(status, XGEMV_STATUS_SUCCESS) << xgemv_status_string(status);
    check_cuda(cudaDeviceSynchronize(), "synchronize after xgemv_qgemv");
    return y_.download();
  }

  const QuantProblem<A, Y> &p_;
  GuardedDeviceBuffer<uint8_t> storage_;
  GuardedDeviceBuffer<A> x_;
  GuardedDeviceBuffer<Y> y_;
  GuardedDeviceBuffer<float> scalars_;
  OwnedQweight weight_;
};

// Case c on fresh data from `seed`, traced: its problem (make_problem, the weight packed) and the
// device side of it, for f(p, device, random), a lambda templated on the element types of X and
// Y ([&]<class A, class Y>(QuantProblem<A, Y> &, QuantDeviceProblem<A, Y> &, RandomSource &)).
template <class F>
void with_device_problem(const QuantCase &c, uint64_t seed, F &&f) {
  SCOPED_TRACE(describe(c) + ", seed " + std::to_string(seed));
  with_element_types(c.activation, c.y_type, [&]<class A, class Y>() {
    RandomSource random(seed);
    QuantProblem<A, Y> p = make_problem<A, Y>(c, random);
    p.storage = pack_storage(p.weight, p.layout);
    QuantDeviceProblem<A, Y> device(p, p.storage);
    ASSERT_EQ(device.weight_status(), XGEMV_STATUS_SUCCESS);
    f(p, device, random);
  });
}

// Half the smallest subnormal of a 16-bit type: the absolute part of rounding a weight to it.
template <class A>
constexpr double half_smallest_subnormal() {
  return std::is_same_v<A, __half> ? 0x1p-25 : 0x1p-134;
}

template <class A, class Y>
void check_against_cublas(const QuantProblem<A, Y> &p, const std::vector<double> &values,
                          const std::vector<Y> &got, const std::vector<double> &magnitude,
                          const GpuHandles &gpu) {
  const QuantCase &c = p.c;
  // W rounded to the activation type, column-major inputs x outputs (row-major W).
  std::vector<A> rounded(values.size());
  for (size_t i = 0; i < values.size(); ++i) rounded[i] = from_double<A>(values[i]);
  GuardedDeviceBuffer<A> w_device(rounded.size()), x_device(p.x.size());
  GuardedDeviceBuffer<Y> y_device(p.y.size());
  w_device.upload(rounded);
  x_device.upload(p.x);
  y_device.upload(p.y);
  const cublasStatus_t status = cublas_gemm_t_compute_32f(
      gpu.cublas(), c.outputs, c.nrhs, c.inputs, p.alpha, w_device.data(),
      static_cast<cudaDataType_t>(c.activation), c.inputs, x_device.data(), c.ldx(), p.beta,
      y_device.data(), static_cast<cudaDataType_t>(c.y_type), c.ldy());
  ASSERT_EQ(status, CUBLAS_STATUS_SUCCESS) << cublasGetStatusString(status);
  const std::vector<Y> result = y_device.download();
  // Both results within the quantized bound of the exact one (cuBLAS's on W rounded to the
  // activation type), and that rounding: (u_A + u_32) |w| + half a subnormal per weight.
  const double factor = qgemv_error_factor(c.inputs, c.y_type);
  const double u_a = Element<A>::unit_roundoff, u32 = 0x1p-24;
  std::vector<double> want(size_t(c.outputs * c.nrhs)), bound(want.size());
  for (int64_t column = 0; column < c.nrhs; ++column) {
    double x_sum = 0;
    for (int64_t k = 0; k < c.inputs; ++k) x_sum += std::fabs(to_double(p.x[p.x_index(column, k)]));
    for (int64_t o = 0; o < c.outputs; ++o) {
      const size_t i = size_t(column * c.outputs + o);
      want[i] = to_double(result[p.y_index(column, o)]);
      bound[i] = (2.1 * factor + u_a + u32) * magnitude[i] +
                 std::fabs(p.alpha) * x_sum * half_smallest_subnormal<A>();
    }
  }
  EXPECT_TRUE(matches_reference("cuBLAS", c, got, want, bound));
}

template <class A, class Y>
void run_problem(const QuantProblem<A, Y> &p, const GpuHandles &gpu) {
  const QuantCase &c = p.c;
  const bool quick_return = c.nrhs == 0 || (p.alpha == 0 && p.beta == 1);
  // The calls that must not read the weight get a storage of NaN bytes (NaN scales, codes of
  // NaN for e4m3): a read shows in y.
  const std::vector<uint8_t> unreadable(p.storage.size(), kGuardByte);
  const std::vector<uint8_t> &storage = p.alpha == 0 ? unreadable : p.storage;
  QuantDeviceProblem<A, Y> device(p, storage);
  ASSERT_EQ(device.weight_status(), XGEMV_STATUS_SUCCESS);

  // What xgemv gets: NaN in Y for beta = 0, in X for alpha = 0.
  std::vector<A> x = p.x;
  std::vector<Y> y = p.y;
  if (p.beta == 0)
    for (size_t i = 0; i < y.size(); ++i)
      if (p.is_logical_y[i]) y[i] = quiet_nan<Y>();
  if (p.alpha == 0)
    for (int64_t column = 0; column < c.nrhs; ++column)
      for (int64_t k = 0; k < c.inputs; ++k) x[p.x_index(column, k)] = quiet_nan<A>();
  const xgemv_handle h = gpu.xgemv();
  const std::vector<Y> result = device.run_case(h, x, y);

  EXPECT_TRUE(device.storage().guards_intact("storage"));
  EXPECT_TRUE(device.x().guards_intact("X"));
  EXPECT_TRUE(device.y().guards_intact("Y"));
  EXPECT_TRUE(device.scalars().guards_intact("alpha, beta"));
  EXPECT_TRUE(bitwise_equal("storage", device.storage().download(), storage));
  EXPECT_TRUE(bitwise_equal("X", device.x().download(), x));
  EXPECT_TRUE(bitwise_equal("Y outside its elements", result, y, &p.is_logical_y));
  if (quick_return) {
    EXPECT_TRUE(bitwise_equal("Y after a quick return", result, y));
  } else if (p.alpha == 0) {
    // y := beta * y: one fp32 product, one rounding to y's type.
    for (size_t i = 0; i < y.size(); ++i)
      if (p.is_logical_y[i]) {
        const float scaled = p.beta * static_cast<float>(to_double(p.y[i]));
        EXPECT_EQ(to_double(result[i]), to_double(from_double<Y>(scaled)))
            << "alpha = 0: Y storage offset " << i;
      }
  } else {
    const std::vector<double> values = dequantize_storage(p.storage, p.info, p.layout);
    std::vector<double> x_values(p.x.size()), y_values(p.y.size());
    for (size_t i = 0; i < p.x.size(); ++i) x_values[i] = to_double(p.x[i]);
    for (size_t i = 0; i < p.y.size(); ++i) y_values[i] = to_double(p.y[i]);
    const std::vector<double> want = reference_qgemv(values, c.outputs, c.inputs, p.alpha, x_values,
                                                     c.ldx(), p.beta, y_values, c.ldy(), c.nrhs);
    std::vector<double> magnitude =
        reference_qgemv(values, c.outputs, c.inputs, std::fabs(p.alpha), x_values, c.ldx(),
                        std::fabs(p.beta), y_values, c.ldy(), c.nrhs, Magnitude{});
    const double factor = qgemv_error_factor(c.inputs, c.y_type);
    std::vector<double> bound(magnitude.size());
    for (size_t i = 0; i < bound.size(); ++i) bound[i] = factor * magnitude[i];
    EXPECT_TRUE(matches_reference("the fp64 reference", c, result, want, bound));
    if (c.integer_data) {
      // Exact: the bound of zero after the one rounding to y's type.
      std::vector<double> rounded(want.size()), zero(want.size(), 0.0);
      for (size_t i = 0; i < want.size(); ++i) rounded[i] = to_double(from_double<Y>(want[i]));
      EXPECT_TRUE(
          matches_reference("the exact result rounded to y's type", c, result, rounded, zero));
    }
    if (c.special == SpecialValue::none) check_against_cublas(p, values, result, magnitude, gpu);
  }
  EXPECT_TRUE(bitwise_equal("Y of the same call repeated", device.run_case(h, x, y), result));
}

template <class A, class Y>
void run_quant_case_typed(const QuantCase &c, const GpuHandles &gpu, uint64_t seed) {
  RandomSource random(seed);
  QuantProblem<A, Y> p = make_problem<A, Y>(c, random);
  plant_special(p, random);
  p.storage = pack_storage(p.weight, p.layout);
  run_problem(p, gpu);
}

inline void run_quant_case(const QuantCase &c, const GpuHandles &gpu, uint64_t seed) {
  SCOPED_TRACE(describe(c) + ", seed " + std::to_string(seed));
  with_element_types(c.activation, c.y_type,
                     [&]<class A, class Y>() { run_quant_case_typed<A, Y>(c, gpu, seed); });
}

// Runs a table of cases with fresh data each, seeded from `label` and the case's index; stops
// after a few failing cases so a broken kernel does not bury the report.
inline void run_quant_cases(const std::vector<QuantCase> &cases, const GpuHandles &gpu,
                            const std::string &label) {
  constexpr int kMaxFailingCases = 8;
  const ::testing::TestResult &result =
      *::testing::UnitTest::GetInstance()->current_test_info()->result();
  int failing_cases = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const int failures_before = result.total_part_count();
    run_quant_case(cases[i], gpu, case_seed(label, i));
    if (result.total_part_count() > failures_before) ++failing_cases;
    if (failing_cases >= kMaxFailingCases) {
      ADD_FAILURE() << "stopped after " << failing_cases << " failing cases of " << cases.size();
      return;
    }
  }
}

}  // namespace xgemv_test::quant
