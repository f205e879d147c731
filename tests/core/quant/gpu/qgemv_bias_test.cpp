// xgemv_qgemv_bias on weights written by the host packer, against xgemv_qgemv_nrhs on the same
// data: for every format and option, both activation types, y of the activation type and fp32,
// moderate and long (split) reductions, both pointer modes, the result is the nrhs call's plus
// the bias (added in fp32 to the value the nrhs call stores, rounded once to y's type); a NULL
// bias gives the nrhs call's bits; alpha = 0 reads neither the weight nor X and gives
// beta * y + bias exactly (beta = 1 included: no quick return with a bias); beta = 0 reads no Y;
// column j has the same bits for nrhs = 5 and 16.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "qgemv_case.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test::quant {
namespace {

int64_t long_reduction() { return by_profile<int64_t>(14336, 2048); }

// A bias of `outputs` elements of Y and its copy on the device, each element of magnitude 0.25
// to 1, so that a bias left out, added twice or at another output shows beyond the rounding bound.
template <class Y>
struct RandomBias {
  RandomBias(int64_t outputs, RandomSource &random) : host(size_t(outputs)), device(host.size()) {
    for (Y &value : host) {
      const double magnitude = random.uniform(0.25, 1.0);
      value = from_double<Y>(random.integer(0, 1) ? magnitude : -magnitude);
    }
    device.upload(host);
  }
  std::vector<Y> host;
  GuardedDeviceBuffer<Y> device;
};

// The case's Y with NaN in its elements when beta = 0 (which must not read them).
template <class A, class Y>
std::vector<Y> y_as_given(const QuantProblem<A, Y> &p) {
  std::vector<Y> y = p.y;
  if (p.beta == 0)
    for (size_t i = 0; i < y.size(); ++i)
      if (p.is_logical_y[i]) y[i] = quiet_nan<Y>();
  return y;
}

// Whether every logical element of `got` is the nrhs call's `without` plus the bias, within
// 3 u_y (|without| + |bias|) (both results' roundings to y's type, the fp32 sum, and room for the
// second-order terms, which bf16's 2^-8 makes visible) and 2 u_32 of the magnitude |alpha| |W|
// |X| + |beta| |Y| (the fp32 value both round).
template <class A, class Y>
::testing::AssertionResult is_nrhs_result_plus_bias(const QuantProblem<A, Y> &p,
                                                     const std::vector<Y> &got,
                                                     const std::vector<Y> &without,
                                                     const std::vector<Y> &bias,
                                                     const std::vector<double> &magnitude) {
  const QuantCase &c = p.c;
  const double u_y = Element<Y>::unit_roundoff, u32 = 0x1p-24;
  int64_t bad = 0;
  std::ostringstream first_bad;
  for (int64_t column = 0; column < c.nrhs; ++column)
    for (int64_t o = 0; o < c.outputs; ++o) {
      const size_t i = p.y_index(column, o);
      const double b = to_double(bias[size_t(o)]), base = to_double(without[i]);
      const double want = base + b, value = to_double(got[i]);
      const double bound = 3 * u_y * (std::fabs(base) + std::fabs(b)) +
                           2 * u32 * magnitude[size_t(column * c.outputs + o)];
      if (std::fabs(value - want) <= bound) continue;  // false for NaN
      if (bad++ < 5)
        first_bad << "\n  column " << column << " y[" << o << "] = " << value
                  << ", the nrhs call's " << base << " + bias " << b << " = " << want
                  << ", |difference| " << std::fabs(value - want) << " > bound " << bound;
    }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " elements of Y are not the nrhs call's plus the bias:" << first_bad.str();
}

// The magnitudes |alpha| |W| |X| + |beta| |Y| of the case (dense [outputs] x nrhs).
template <class A, class Y>
std::vector<double> magnitudes(const QuantProblem<A, Y> &p) {
  const QuantCase &c = p.c;
  const std::vector<double> values = dequantize_storage(p.storage, p.info, p.layout);
  std::vector<double> x(p.x.size()), y(p.y.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = to_double(p.x[i]);
  for (size_t i = 0; i < y.size(); ++i) y[i] = to_double(p.y[i]);
  return reference_qgemv(values, c.outputs, c.inputs, std::fabs(p.alpha), x, c.ldx(),
                         std::fabs(p.beta), y, c.ldy(), c.nrhs, Magnitude{});
}

// The bias calls' cases: 67 outputs.
QuantCase bias_case(const FormatOptions &f, int64_t inputs, int64_t nrhs) {
  return format_case(f, 67, inputs, nrhs);
}

// Inputs that every format takes (a multiple of 128) or, for the 8-bit formats, an odd count.
int64_t moderate_inputs(const FormatOptions &f) {
  return f.format == XGEMV_QFORMAT_INT4 ? 512 : 513;
}

class QgemvBias : public GpuHandlesTest {
 protected:
  static uint64_t seed(size_t index) {
    return case_seed(::testing::UnitTest::GetInstance()->current_test_info()->name(), index);
  }
};

// Every format with both activation types and both kinds of y; the scale type, nrhs (1, 5, 17),
// beta (random, 0, 1), the pointer mode and the reduction (moderate, or long enough to split)
// in turn.
TEST_F(QgemvBias, IsTheNrhsResultPlusTheBias) {
  constexpr int64_t kNrhsCounts[] = {1, 5, 17};
  constexpr ScalarChoice kBetas[] = {ScalarChoice::random, ScalarChoice::zero, ScalarChoice::one};
  const xgemv_handle h = gpu().xgemv();
  size_t index = 0;
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype activation : kActivationTypes)
      for (const bool fp32_y : {false, true}) {
        QuantCase c =
            bias_case(f, index % 2 ? long_reduction() : moderate_inputs(f), kNrhsCounts[index % 3]);
        c.activation = activation;
        c.y_type = fp32_y ? XGEMV_R_32F : activation;
        c.scale_type = kScaleTypes[index % 3];
        c.beta = kBetas[index / 2 % 3];
        c.pointer_mode = index / 3 % 2 ? XGEMV_POINTER_MODE_DEVICE : XGEMV_POINTER_MODE_HOST;
        const auto check = [&]<class A, class Y>(QuantProblem<A, Y> &p,
                                                 QuantDeviceProblem<A, Y> &device,
                                                 RandomSource &random) {
          const RandomBias<Y> bias(c.outputs, random);
          const std::vector<Y> y = y_as_given(p);

          const std::vector<Y> without = device.run(h, p.x, y, c.nrhs, false, c.pointer_mode);
          const std::vector<Y> got =
              device.run_bias(h, p.x, y, c.nrhs, c.pointer_mode, bias.device.data());
          EXPECT_NE(xgemv_get_last_kernel_variant(h), nullptr);
          EXPECT_TRUE(is_nrhs_result_plus_bias(p, got, without, bias.host, magnitudes(p)));
          EXPECT_TRUE(bitwise_equal("Y outside its elements", got, y, &p.is_logical_y));
          EXPECT_TRUE(bitwise_equal("Y with a NULL bias against the nrhs call",
                                    device.run_bias(h, p.x, y, c.nrhs, c.pointer_mode, nullptr),
                                    without));
          EXPECT_TRUE(bitwise_equal(
              "Y of the same call repeated",
              device.run_bias(h, p.x, y, c.nrhs, c.pointer_mode, bias.device.data()), got));
          EXPECT_TRUE(bitwise_equal("bias", bias.device.download(), bias.host));
          EXPECT_TRUE(bias.device.guards_intact("bias"));
          EXPECT_TRUE(device.y().guards_intact("Y"));
        };
        with_device_problem(c, seed(index++), check);
      }
}

// alpha = 0 reads neither the weight (a storage of NaN bytes) nor X (NaN) and gives
// beta * y + bias exactly: one fp32 product (none for beta = 0, which reads no Y), one fp32 sum,
// one rounding to y's type; beta = 1 is no quick return.
TEST_F(QgemvBias, AlphaZeroGivesBetaYPlusBias) {
  constexpr ScalarChoice kBetas[] = {ScalarChoice::one, ScalarChoice::half, ScalarChoice::zero};
  const xgemv_handle h = gpu().xgemv();
  size_t index = 0;
  for (const FormatOptions &f : {FormatOptions{XGEMV_QFORMAT_INT4, 64, 1, 1},
                                 FormatOptions{XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0, 0, 0}})
    for (const xgemv_datatype activation : kActivationTypes)
      for (const bool fp32_y : {false, true})
        for (const xgemv_pointer_mode mode :
             {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE})
          for (const ScalarChoice beta : kBetas) {
            QuantCase c = bias_case(f, moderate_inputs(f), index % 2 ? 17 : 1);
            c.activation = activation;
            c.y_type = fp32_y ? XGEMV_R_32F : activation;
            c.alpha = ScalarChoice::zero;
            c.beta = beta;
            c.pointer_mode = mode;
            const auto check = [&]<class A, class Y>(QuantProblem<A, Y> &p,
                                                     QuantDeviceProblem<A, Y> &device,
                                                     RandomSource &random) {
              // The weight's storage unreadable (NaN bytes): alpha = 0 must not read it.
              const std::vector<uint8_t> unreadable(p.storage.size(), kGuardByte);
              device.storage().upload(unreadable);
              const RandomBias<Y> bias(c.outputs, random);
              std::vector<A> x = p.x;
              for (int64_t column = 0; column < c.nrhs; ++column)
                for (int64_t k = 0; k < c.inputs; ++k) x[p.x_index(column, k)] = quiet_nan<A>();
              const std::vector<Y> y = y_as_given(p);
              const std::vector<Y> got = device.run_bias(h, x, y, c.nrhs, mode, bias.device.data());
              EXPECT_NE(xgemv_get_last_kernel_variant(h), nullptr) << "no quick return";
              for (int64_t column = 0; column < c.nrhs; ++column)
                for (int64_t o = 0; o < c.outputs; ++o) {
                  const size_t i = p.y_index(column, o);
                  const float scaled =
                      p.beta == 0 ? 0.0f : p.beta * static_cast<float>(to_double(p.y[i]));
                  const float sum = scaled + static_cast<float>(to_double(bias.host[size_t(o)]));
                  EXPECT_TRUE(same_bits(got[i], from_double<Y>(sum)))
                      << "column " << column << " y[" << o << "] = " << to_double(got[i])
                      << ", beta * y + bias = " << sum;
                }
              EXPECT_TRUE(bitwise_equal("Y outside its elements", got, y, &p.is_logical_y));
              EXPECT_TRUE(bitwise_equal("storage", device.storage().download(), unreadable));
            };
            with_device_problem(c, seed(index++), check);
          }
}

// Column j of the bias call has the same bits for nrhs = 5 and 16 on the same buffers; the
// narrow call leaves the columns past it untouched.
TEST_F(QgemvBias, ColumnsDoNotDependOnNrhs) {
  constexpr int64_t kNarrow = 5, kWide = 16;
  const xgemv_handle h = gpu().xgemv();
  size_t index = 0;
  for (const FormatOptions &f :
       {FormatOptions{XGEMV_QFORMAT_INT4, 128, 1, 1}, FormatOptions{XGEMV_QFORMAT_INT4, 32, 0, 0},
        FormatOptions{XGEMV_QFORMAT_INT8, 0, 0, 0}, FormatOptions{XGEMV_QFORMAT_FP8_E4M3, 0, 0, 0},
        FormatOptions{XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0, 0, 0}})
    for (const xgemv_datatype activation : kActivationTypes) {
      QuantCase c = bias_case(f, index % 2 ? long_reduction() : moderate_inputs(f), kWide);
      c.activation = activation;
      c.y_type = index / 2 % 2 ? XGEMV_R_32F : activation;
      c.scale_type = kScaleTypes[index % 3];
      const auto check = [&]<class A, class Y>(QuantProblem<A, Y> &p,
                                               QuantDeviceProblem<A, Y> &device,
                                               RandomSource &random) {
        const RandomBias<Y> bias(c.outputs, random);
        const std::vector<Y> wide =
            device.run_bias(h, p.x, p.y, kWide, XGEMV_POINTER_MODE_HOST, bias.device.data());
        const std::vector<Y> narrow =
            device.run_bias(h, p.x, p.y, kNarrow, XGEMV_POINTER_MODE_HOST, bias.device.data());
        std::vector<bool> outside_narrow(p.y.size(), true), outside_past_narrow(p.y.size(), true);
        for (int64_t column = 0; column < kWide; ++column)
          for (int64_t o = 0; o < c.outputs; ++o)
            (column < kNarrow ? outside_narrow : outside_past_narrow)[p.y_index(column, o)] = false;
        EXPECT_TRUE(bitwise_equal("columns < nrhs", narrow, wide, &outside_narrow));
        EXPECT_TRUE(
            bitwise_equal("Y past nrhs columns (untouched)", narrow, p.y, &outside_past_narrow));
      };
      with_device_problem(c, seed(index++), check);
    }
}

}  // namespace
}  // namespace xgemv_test::quant
