// xgemv_gemv_bias for every element type: Y := alpha*op(A)*X + beta*Y + bias against the host
// fp64 reference plus the bias, within the rounding bound, and exactly on integer data; ops N and
// T, nrhs 1, 2, 5, 16 and 17, shapes of every variant family (the single-vector kernels for one
// vector, the several-vector ones beyond) including long reductions that split, both pointer
// modes. Also: a NULL bias gives the bits of the call without one; alpha = 0 reads neither A nor
// X and gives beta*Y + bias exactly (beta = 1 included: no quick return); beta = 0 reads no Y; an
// empty reduction gives beta*Y + bias without reading A, X or alpha; column j has the same bits
// for nrhs = 5 and 16; and every kernel variant, forced, adds the bias. Every case also checks
// guards, gaps, untouched inputs and a repeated call.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemv_case.hpp"
#include "support/kernel_variants.hpp"
#include "support/test_profile.hpp"
#include "support/typed_tests.hpp"

namespace xgemv_test {
namespace {

constexpr char kRealOps[] = {'N', 'T'};  // op C is op T for the real types
constexpr int64_t kNrhsCounts[] = {1, 2, 5, 16, 17};

// The reduction length of the short-output shapes: long enough for split reductions.
int64_t long_reduction() { return by_profile<int64_t>(20011, 2003); }

GemvCase bias_case(char op, int64_t m, int64_t n, int64_t nrhs) {
  return {.trans = op, .m = m, .n = n, .several_rhs = true, .nrhs = nrhs};
}

// A short output (7 rows) with a long reduction for op: m small for op N, n small for op T.
GemvCase short_output_case(char op, int64_t nrhs) {
  const int64_t k = long_reduction();
  return op == 'N' ? bias_case(op, 7, k, nrhs) : bias_case(op, k, 7, nrhs);
}

// beta*y + bias as the epilogue computes it when alpha is 0 or the reduction is empty: one
// product in the scalar type (none for beta = 0, which reads no y), one sum, one rounding to T.
template <class T>
T beta_y_plus_bias(ScalarOf<T> beta, T y, T bias) {
  using S = ScalarOf<T>;
  const S scaled = beta == S(0) ? S(0) : beta * static_cast<S>(to_double(y));
  const S sum = scaled + static_cast<S>(to_double(bias));
  return from_double<T>(sum);
}

// One bias call of a case (several_rhs: nrhs columns, ldx and ldy as the case lays them out),
// end to end: random data with guard values (NaN) in every gap, a random bias, the reference,
// the call twice, and every check the contract implies.
template <class T>
void run_bias_case(const GemvCase &c, const GpuHandles &gpu, uint64_t seed) {
  using S = ScalarOf<T>;
  SCOPED_TRACE(describe(c) + ", bias, seed " + std::to_string(seed));
  RandomSource random(seed);
  const GemvShape s = c.shape();
  const RhsLayout rhs = c.rhs_layout();
  const BatchLayout columns = rhs.as_batch();
  const S alpha = choose_scalar<S>(c.alpha, c.integer_data, random);
  const S beta = choose_scalar<S>(c.beta, c.integer_data, random);
  const auto random_element = [&] {
    return c.integer_data ? from_double<T>(double(random.integer(-2, 2))) : random.element<T>();
  };

  std::vector<T> a(columns.a_span(s), guard_value<T>());
  std::vector<T> x(columns.x_span(s), guard_value<T>());
  std::vector<T> y(columns.y_span(s), guard_value<T>());
  std::vector<bool> is_logical_y(y.size(), false);
  for_each_matrix_offset(s, columns, 0, [&](int64_t o) { a[o] = random_element(); });
  for (int64_t column = 0; column < c.nrhs; ++column) {
    for_each_x_offset(s, columns, column, [&](int64_t, int64_t o) { x[o] = random_element(); });
    for_each_y_offset(s, columns, column, [&](int64_t, int64_t o) {
      y[o] = random_element();
      is_logical_y[o] = true;
    });
  }
  std::vector<T> bias(size_t(s.y_length()));
  for (T &value : bias) value = random_element();

  // alpha = 0 or an empty reduction: y := beta*y + bias, exactly. Otherwise the fp64 reference
  // (exact on integer data) plus the bias, and the magnitudes that scale the rounding bound.
  const bool empty_reduction = s.x_length() == 0;
  const bool exact_epilogue = empty_reduction || alpha == 0;
  std::vector<double> want(y.size()), magnitude(y.size());
  if (!exact_epilogue) {
    for (int64_t column = 0; column < c.nrhs; ++column) {
      const T *x_c = x.data() + column * rhs.ldx, *y_c = y.data() + column * rhs.ldy;
      const std::vector<double> values = reference_gemv(s, alpha, a.data(), x_c, beta, y_c);
      const std::vector<double> bound_terms =
          reference_gemv(s, std::fabs(alpha), a.data(), x_c, std::fabs(beta), y_c, Magnitude{});
      for_each_y_offset(s, columns, column, [&](int64_t i, int64_t o) {
        want[o] = values[i] + to_double(bias[i]);
        magnitude[o] = bound_terms[i] + std::fabs(to_double(bias[i]));
      });
    }
  }

  // What xgemv gets: NaN in Y for beta = 0, in A and X for alpha = 0; A and X are NULL where
  // they need not be read (host alpha = 0, an empty reduction).
  const bool device_mode = c.pointer_mode == XGEMV_POINTER_MODE_DEVICE;
  const bool a_x_given = !empty_reduction && (device_mode || alpha != 0);
  std::vector<T> a_given = a, x_given = x, y_given = y;
  if (beta == 0)
    for (size_t i = 0; i < y_given.size(); ++i)
      if (is_logical_y[i]) y_given[i] = quiet_nan<T>();
  if (alpha == 0) {
    for_each_matrix_offset(s, columns, 0, [&](int64_t o) { a_given[o] = quiet_nan<T>(); });
    for (int64_t column = 0; column < c.nrhs; ++column)
      for_each_x_offset(s, columns, column,
                        [&](int64_t, int64_t o) { x_given[o] = quiet_nan<T>(); });
  }
  GuardedDeviceBuffer<T> a_device(a.size(), c.a_misalignment);
  GuardedDeviceBuffer<T> x_device(x.size(), c.x_misalignment);
  GuardedDeviceBuffer<T> y_device(y.size(), c.y_misalignment);
  GuardedDeviceBuffer<T> bias_device(bias.size(), c.y_misalignment);
  GuardedDeviceBuffer<S> device_scalars(2);
  a_device.upload(a_given);
  x_device.upload(x_given);
  bias_device.upload(bias);
  device_scalars.upload({alpha, beta});
  const GemvOperands<T> operands = operands_in_mode<T>(
      c.pointer_mode, alpha, beta, device_scalars.data(), a_x_given ? a_device.data() : nullptr,
      a_x_given ? x_device.data() : nullptr, y_device.data());
  const auto call = [&] {
    const std::vector<T> y_after = call_on_fresh_y(c, gpu.xgemv(), y_device, y_given, [&] {
      return call_gemv_bias<T>(gpu.xgemv(), s, rhs, operands, bias_device.data());
    });
    EXPECT_NE(xgemv_get_last_kernel_variant(gpu.xgemv()), nullptr) << "no quick return";
    return y_after;
  };
  const std::vector<T> result = call();

  EXPECT_TRUE(untouched("A", a_device, a_given));
  EXPECT_TRUE(untouched("X", x_device, x_given));
  EXPECT_TRUE(untouched("bias", bias_device, bias));
  EXPECT_TRUE(y_device.guards_intact("Y"));
  EXPECT_TRUE(device_scalars.guards_intact("alpha, beta"));
  EXPECT_TRUE(bitwise_equal("Y outside its elements", result, y_given, &is_logical_y));
  if (exact_epilogue) {
    int64_t wrong = 0;
    for (int64_t column = 0; column < c.nrhs; ++column)
      for_each_y_offset(s, columns, column, [&](int64_t i, int64_t o) {
        const T expected = beta_y_plus_bias(beta, y[o], bias[i]);
        if (!same_bits(result[o], expected) && wrong++ < 5)
          ADD_FAILURE() << "column " << column << " y[" << i << "] = " << to_double(result[o])
                        << ", beta*y + bias = " << to_double(expected);
      });
    EXPECT_EQ(wrong, 0) << "elements of Y other than beta*y + bias";
  } else {
    EXPECT_TRUE(within_error_bound("the fp64 reference plus the bias", s, columns, c.nrhs, result,
                                   want, magnitude));
    if (c.integer_data) {
      EXPECT_TRUE(equals_exact_result(s, columns, c.nrhs, result, want));
    }
  }
  EXPECT_TRUE(bitwise_equal("Y of the same call repeated", call(), result));
  EXPECT_EQ(xgemv_set_batch_invariant(gpu.xgemv(), 0), XGEMV_STATUS_SUCCESS);
}

template <class T>
void run_bias_cases(const std::vector<GemvCase> &cases, const GpuHandles &gpu,
                    const std::string &label) {
  run_case_table<T>(cases, label, [&gpu](const GemvCase &c, uint64_t seed) {
    run_bias_case<T>(c, gpu, seed);
  });
}

// Every nrhs of kNrhsCounts on shapes of every family of each op: moderate tall and wide ones,
// columns shorter than 128 bytes (op T), a short output with a long reduction (split, on random
// and on integer data), a tall A of 8 columns (op N's few-column kernel on a large GPU); host
// scalars, and device scalars on the moderate shapes.
std::vector<GemvCase> correctness_cases() {
  const int64_t tall = by_profile<int64_t>(300000, 30000);
  std::vector<GemvCase> cases;
  for (const char op : kRealOps)
    for (const int64_t nrhs : kNrhsCounts) {
      for (const auto &[m, n] : {std::pair<int64_t, int64_t>{1031, 67}, {67, 1031}, {13, 31}}) {
        cases.push_back(bias_case(op, m, n, nrhs));
        GemvCase device = bias_case(op, m, n, nrhs);
        device.pointer_mode = XGEMV_POINTER_MODE_DEVICE;
        cases.push_back(device);
      }
      cases.push_back(short_output_case(op, nrhs));
      GemvCase exact = short_output_case(op, nrhs);
      exact.integer_data = true;
      cases.push_back(exact);
      cases.push_back(op == 'N' ? bias_case(op, tall, 8, nrhs) : bias_case(op, 8, tall, nrhs));
    }
  // Padded leading dimensions, misaligned bases (the bias too) and odd lda.
  for (const char op : kRealOps)
    for (const int64_t nrhs : {1, 5, 17}) {
      GemvCase misaligned = bias_case(op, 1031, 67, nrhs);
      misaligned.lda_padding = 1;
      misaligned.ldx_padding = 3;
      misaligned.ldy_padding = 5;
      misaligned.a_misalignment = misaligned.x_misalignment = misaligned.y_misalignment = 1;
      cases.push_back(misaligned);
    }
  return cases;
}

// alpha = 0 (A and X NULL with host scalars, NaN with device ones) and beta = 0 (NaN in Y), with
// beta in {0, 1, 0.5, random} and alpha in {0, random}: y := beta*y + bias exactly when alpha is
// 0, also for beta = 1, which is no quick return with a bias.
std::vector<GemvCase> scalar_cases() {
  constexpr ScalarChoice kAlphas[] = {ScalarChoice::zero, ScalarChoice::random};
  constexpr ScalarChoice kBetas[] = {ScalarChoice::zero, ScalarChoice::one, ScalarChoice::half,
                                     ScalarChoice::random};
  std::vector<GemvCase> bases;
  for (const char op : kRealOps)
    for (const int64_t nrhs : {1, 5, 17}) bases.push_back(bias_case(op, 129, 67, nrhs));
  return with_scalars(bases, kAlphas, kBetas);
}

// Empty reductions (op N with n = 0, op T with m = 0) in both pointer modes: y := beta*y + bias,
// A and X NULL; and a batch-invariant handle for one vector.
std::vector<GemvCase> empty_reduction_cases() {
  constexpr ScalarChoice kBetas[] = {ScalarChoice::zero, ScalarChoice::one, ScalarChoice::random};
  std::vector<GemvCase> cases;
  for (const char op : kRealOps)
    for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE})
      for (const int64_t nrhs : {1, 5, 17})
        for (const ScalarChoice beta : kBetas) {
          GemvCase c = op == 'N' ? bias_case(op, 67, 0, nrhs) : bias_case(op, 0, 67, nrhs);
          c.beta = beta;
          c.pointer_mode = mode;
          c.batch_invariant = nrhs == 1 && beta == ScalarChoice::random;
          cases.push_back(c);
        }
  return cases;
}

// Case tables run as bias calls.
template <class T>
class BiasCaseTest : public GemvCaseTest<T> {
 protected:
  static void run(const std::vector<GemvCase> &cases) {
    run_bias_cases<T>(cases, BiasCaseTest::gpu(), BiasCaseTest::test_name());
  }
};
XGEMV_TYPED_TEST_SUITE(BiasCalls, BiasCaseTest<T>);

TYPED_TEST(BiasCalls, MatchTheReferencePlusTheBias) { this->run(correctness_cases()); }
TYPED_TEST(BiasCalls, AlphaZeroAndBetaZeroInBothPointerModes) { this->run(scalar_cases()); }
TYPED_TEST(BiasCalls, EmptyReductionGivesBetaYPlusBias) { this->run(empty_reduction_cases()); }

// One vector in a batch-invariant handle runs the several-vector kernels: still the reference.
TYPED_TEST(BiasCalls, OneVectorInABatchInvariantHandle) {
  std::vector<GemvCase> cases;
  for (const char op : kRealOps) {
    GemvCase moderate = bias_case(op, 1031, 67, 1);
    moderate.batch_invariant = true;
    cases.push_back(moderate);
    GemvCase exact = short_output_case(op, 1);
    exact.integer_data = true;
    exact.batch_invariant = true;
    cases.push_back(exact);
  }
  this->run(cases);
}

// Device memory for a problem of `shape` with `columns` columns of X and Y (the smallest leading
// dimensions), random data, and the calls the bit-for-bit checks compare; Y is uploaded afresh
// before each call.
template <class T>
class BitsProblem {
 public:
  using S = ScalarOf<T>;

  BitsProblem(const GemvShape &shape, int64_t columns, xgemv_pointer_mode mode, uint64_t seed)
      : shape_(shape),
        rhs_{columns, std::max<int64_t>(1, shape.x_length()),
             std::max<int64_t>(1, shape.y_length())},
        mode_(mode),
        random_(seed),
        alpha_(static_cast<S>(random_.nontrivial_scalar())),
        beta_(static_cast<S>(random_.nontrivial_scalar())),
        a_(std::max<int64_t>(1, shape.matrix_extent())),
        x_(size_t(rhs_.ldx * columns)),
        y_(size_t(rhs_.ldy * columns)),
        bias_(size_t(std::max<int64_t>(1, shape.y_length()))),
        scalars_(2) {
    std::vector<T> a(a_.size()), x(x_.size()), bias(bias_.size());
    y_initial_.resize(y_.size());
    for (std::vector<T> *v : {&a, &x, &y_initial_, &bias})
      for (T &value : *v) value = random_.element<T>();
    a_.upload(a);
    x_.upload(x);
    bias_.upload(bias);
    scalars_.upload({alpha_, beta_});
  }

  const std::vector<T> &y_initial() const { return y_initial_; }
  const T *bias() const { return bias_.data(); }

  // Y after xgemv_gemv_bias with `nrhs` columns and `bias` (NULL: none); *variant (if given) the
  // variant that ran it.
  std::vector<T> run_bias(xgemv_handle h, int64_t nrhs, const T *bias,
                          std::string *variant = nullptr) {
    prepare(h);
    EXPECT_EQ(call_gemv_bias<T>(h, shape_, RhsLayout{nrhs, rhs_.ldx, rhs_.ldy}, operands(), bias),
              XGEMV_STATUS_SUCCESS);
    return finish(h, variant);
  }
  // Y after xgemv_?gemv_nrhs with `nrhs` columns.
  std::vector<T> run_nrhs(xgemv_handle h, int64_t nrhs, std::string *variant = nullptr) {
    prepare(h);
    EXPECT_EQ(xgemv_gemv_nrhs<T>(h, shape_, RhsLayout{nrhs, rhs_.ldx, rhs_.ldy}, operands()),
              XGEMV_STATUS_SUCCESS);
    return finish(h, variant);
  }
  // Y after xgemv_?gemv on column 0 (incx = incy = 1).
  std::vector<T> run_single_vector(xgemv_handle h, std::string *variant = nullptr) {
    prepare(h);
    EXPECT_EQ(xgemv_gemv<T>(h, shape_, nullptr, operands()), XGEMV_STATUS_SUCCESS);
    return finish(h, variant);
  }

  // A skip mask over Y for bitwise_equal: true everywhere but in columns [first, last).
  std::vector<bool> all_but_columns(int64_t first, int64_t last) const {
    std::vector<bool> skip(y_.size(), true);
    for (int64_t i = first * rhs_.ldy; i < last * rhs_.ldy; ++i) skip[size_t(i)] = false;
    return skip;
  }

 private:
  void prepare(xgemv_handle h) {
    y_.upload(y_initial_);
    EXPECT_EQ(xgemv_set_pointer_mode(h, mode_), XGEMV_STATUS_SUCCESS);
  }
  std::vector<T> finish(xgemv_handle h, std::string *variant) {
    check_cuda(cudaDeviceSynchronize(), "synchronize after xgemv");
    const char *ran = xgemv_get_last_kernel_variant(h);
    EXPECT_NE(ran, nullptr);
    if (variant != nullptr) *variant = ran != nullptr ? ran : "";
    return y_.download();
  }
  GemvOperands<T> operands() const {
    return operands_in_mode<T>(mode_, alpha_, beta_, scalars_.data(), a_.data(), x_.data(),
                               y_.data());
  }

  GemvShape shape_;
  RhsLayout rhs_;
  xgemv_pointer_mode mode_;
  RandomSource random_;
  S alpha_, beta_;
  GuardedDeviceBuffer<T> a_, x_, y_, bias_;
  GuardedDeviceBuffer<S> scalars_;
  std::vector<T> y_initial_;
};

// A problem of the bit-for-bit checks: its shape and pointer mode.
struct BitsConfiguration {
  GemvShape shape;
  xgemv_pointer_mode mode;

  std::string describe() const {
    return std::string("op ") + shape.trans + " m=" + std::to_string(shape.m) +
           " n=" + std::to_string(shape.n) +
           (mode == XGEMV_POINTER_MODE_DEVICE ? ", device" : ", host") + " scalars";
  }
};

// For each op, tall, wide, and a short output with a long reduction (split), in both pointer
// modes.
std::vector<BitsConfiguration> bits_configurations() {
  const int64_t k = long_reduction();
  std::vector<BitsConfiguration> configurations;
  for (const char op : kRealOps) {
    const int64_t short_m = op == 'N' ? 7 : k, short_n = op == 'N' ? k : 7;
    for (const auto &[m, n] :
         {std::pair<int64_t, int64_t>{1031, 67}, {67, 1031}, {short_m, short_n}})
      for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE})
        configurations.push_back({GemvShape{op, m, n, m, 1, 1}, mode});
  }
  return configurations;
}

// A NULL bias gives the call without one, bit for bit, on the same kernel: the nrhs call for
// nrhs >= 2; xgemv_?gemv for one vector (the single-vector kernels), or the nrhs call in a
// batch-invariant handle.
TYPED_TEST(BiasCalls, NullBiasGivesTheBitsOfTheCallWithout) {
  using T = TypeParam;
  const xgemv_handle h = this->gpu().xgemv();
  size_t index = 0;
  for (const BitsConfiguration &b : bits_configurations())
    for (const int64_t nrhs : kNrhsCounts)
      for (const bool invariant : {false, true}) {
        if (invariant && nrhs != 1) continue;
        SCOPED_TRACE(b.describe() + ", nrhs " + std::to_string(nrhs) +
                     (invariant ? ", batch-invariant handle" : ""));
        BitsProblem<T> p(b.shape, nrhs, b.mode, this->seed(index++));
        EXPECT_EQ(xgemv_set_batch_invariant(h, invariant), XGEMV_STATUS_SUCCESS);
        std::string with_null_bias, without_bias;
        const std::vector<T> got = p.run_bias(h, nrhs, nullptr, &with_null_bias);
        const std::vector<T> want = nrhs == 1 && !invariant ? p.run_single_vector(h, &without_bias)
                                                            : p.run_nrhs(h, nrhs, &without_bias);
        EXPECT_EQ(xgemv_set_batch_invariant(h, 0), XGEMV_STATUS_SUCCESS);
        EXPECT_TRUE(bitwise_equal("Y with a NULL bias", got, want));
        EXPECT_EQ(with_null_bias, without_bias) << "the variants that ran";
      }
}

// Column j of the bias call has the same bits whatever nrhs >= 2 is: nrhs = 5 against 16, and
// 2 against 17 (a second pass of 16), on the same buffers; the narrow call leaves the columns
// past it untouched.
TYPED_TEST(BiasCalls, ColumnsDoNotDependOnNrhs) {
  using T = TypeParam;
  const xgemv_handle h = this->gpu().xgemv();
  size_t index = 0;
  for (const BitsConfiguration &b : bits_configurations())
    for (const auto &[narrow, wide] : {std::pair<int64_t, int64_t>{5, 16}, {2, 17}}) {
      SCOPED_TRACE(b.describe() + ", nrhs " + std::to_string(narrow) + " against " +
                   std::to_string(wide));
      BitsProblem<T> p(b.shape, wide, b.mode, this->seed(index++));
      const std::vector<T> wide_y = p.run_bias(h, wide, p.bias());
      const std::vector<T> narrow_y = p.run_bias(h, narrow, p.bias());
      const std::vector<bool> outside_narrow = p.all_but_columns(0, narrow);
      EXPECT_TRUE(bitwise_equal("columns < nrhs", narrow_y, wide_y, &outside_narrow));
      const std::vector<bool> outside_past_narrow = p.all_but_columns(narrow, wide);
      EXPECT_TRUE(bitwise_equal("Y past nrhs columns (untouched)", narrow_y, p.y_initial(),
                                &outside_past_narrow));
    }
}

// An empty reduction reads neither A, X nor alpha: a NaN alpha (host or device) and NULL A and X
// still give y := beta*y + bias exactly. Without a bias the same call is a quick return.
TYPED_TEST(BiasCalls, EmptyReductionReadsNeitherANorXNorAlpha) {
  using T = TypeParam;
  using S = ScalarOf<T>;
  const xgemv_handle h = this->gpu().xgemv();
  constexpr int64_t kOutputs = 67, kNrhs = 5;
  RandomSource random(this->seed(0));
  std::vector<T> y(kOutputs * kNrhs), bias(kOutputs);
  for (T &value : y) value = random.element<T>();
  for (T &value : bias) value = random.element<T>();
  GuardedDeviceBuffer<T> y_device(y.size()), bias_device(bias.size());
  bias_device.upload(bias);
  const S nan = std::numeric_limits<S>::quiet_NaN(), beta = S(-0.75);
  GuardedDeviceBuffer<S> device_scalars(2);
  device_scalars.upload({nan, beta});
  for (const char op : kRealOps)
    for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE}) {
      SCOPED_TRACE(std::string("op ") + op +
                   (mode == XGEMV_POINTER_MODE_DEVICE ? ", device" : ", host") + " scalars");
      const GemvShape shape = op == 'N' ? GemvShape{op, kOutputs, 0, kOutputs, 1, 1}
                                        : GemvShape{op, 0, kOutputs, 1, 1, 1};
      const RhsLayout rhs{kNrhs, 1, kOutputs};
      const GemvOperands<T> operands = operands_in_mode<T>(mode, nan, beta, device_scalars.data(),
                                                           nullptr, nullptr, y_device.data());
      ASSERT_EQ(xgemv_set_pointer_mode(h, mode), XGEMV_STATUS_SUCCESS);
      y_device.upload(y);
      EXPECT_EQ(call_gemv_bias<T>(h, shape, rhs, operands, bias_device.data()),
                XGEMV_STATUS_SUCCESS);
      EXPECT_NE(xgemv_get_last_kernel_variant(h), nullptr);
      check_cuda(cudaDeviceSynchronize(), "empty reduction with a bias");
      const std::vector<T> result = y_device.download();
      for (int64_t column = 0; column < kNrhs; ++column)
        for (int64_t i = 0; i < kOutputs; ++i) {
          const size_t o = size_t(column * kOutputs + i);
          EXPECT_TRUE(same_bits(result[o], beta_y_plus_bias(beta, y[o], bias[size_t(i)])))
              << "column " << column << " y[" << i << "] = " << to_double(result[o]);
        }
      y_device.upload(y);
      EXPECT_EQ(call_gemv_bias<T>(h, shape, rhs, operands, nullptr), XGEMV_STATUS_SUCCESS);
      EXPECT_EQ(xgemv_get_last_kernel_variant(h), nullptr) << "no bias: a quick return";
      check_cuda(cudaDeviceSynchronize(), "empty reduction without a bias");
      EXPECT_TRUE(bitwise_equal("Y after a quick return", y_device.download(), y));
    }
  EXPECT_TRUE(y_device.guards_intact("Y"));
  EXPECT_EQ(xgemv_set_pointer_mode(h, XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
}

// The edge set of a forced variant for op: shapes around tile sizes, a long reduction that splits
// (random data and, exactly, integer data), an empty reduction, alpha = 0 with beta = 1, beta = 0
// with device scalars; one vector, and (several-vector variants) 3 and 17.
std::vector<GemvCase> variant_cases(char op, bool several_rhs) {
  const int64_t k = long_reduction();
  std::vector<int64_t> counts = {1};
  if (several_rhs) counts.insert(counts.end(), {3, 17});
  std::vector<GemvCase> cases;
  for (const int64_t nrhs : counts) {
    for (const auto &[m, n] : {std::pair<int64_t, int64_t>{1, 1}, {13, 31}, {255, 257},
                               {1025, 67}, {67, 1025}})
      cases.push_back(bias_case(op, m, n, nrhs));
    GemvCase split = op == 'N' ? bias_case(op, 5, k, nrhs) : bias_case(op, k, 5, nrhs);
    cases.push_back(split);
    split.integer_data = true;
    cases.push_back(split);
    GemvCase empty = op == 'N' ? bias_case(op, 33, 0, nrhs) : bias_case(op, 0, 33, nrhs);
    cases.push_back(empty);
    GemvCase alpha_zero = bias_case(op, 67, 129, nrhs);
    alpha_zero.alpha = ScalarChoice::zero;
    alpha_zero.beta = ScalarChoice::one;
    cases.push_back(alpha_zero);
    GemvCase beta_zero = bias_case(op, 129, 67, nrhs);
    beta_zero.beta = ScalarChoice::zero;
    beta_zero.pointer_mode = XGEMV_POINTER_MODE_DEVICE;
    cases.push_back(beta_zero);
  }
  return cases;
}

TYPED_TEST(BiasCalls, EveryVariantAddsTheBias) {
  using T = TypeParam;
  int variants_of_op[2] = {0, 0};
  for (const std::string &name : variant_names()) {
    SCOPED_TRACE("variant " + name);
    const ForcedVariant forced(this->gpu().xgemv(), name);
    ASSERT_EQ(forced.status(), XGEMV_STATUS_SUCCESS);
    for (const char op : kRealOps) {
      if (!implements_op<T>(this->gpu(), op, name)) continue;
      ++variants_of_op[op == 'T'];
      run_bias_cases<T>(variant_cases(op, implements_several_rhs_op<T>(this->gpu(), op, name)),
                        this->gpu(), "bias variant " + name + " op " + op);
    }
  }
  EXPECT_GT(variants_of_op[0], 0) << "no variant implements op N";
  EXPECT_GT(variants_of_op[1], 0) << "no variant implements op T";
}

}  // namespace
}  // namespace xgemv_test
