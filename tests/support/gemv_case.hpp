// One GEMV test case on the GPU, end to end: fresh random data with guard values in every gap,
// the OpenBLAS and cuBLAS references (gemv, or gemm for several right-hand sides), the xgemv
// call (twice, for bitwise repeatability), and every check the BLAS contract implies. Cases on
// integer data are also checked exactly: there the rounding bound (which grows with k) cannot
// hide a dropped or doubled element.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "support/cublas_reference.hpp"
#include "support/device_buffer.hpp"
#include "support/random_data.hpp"
#include "support/reference_blas.hpp"
#include "support/reference_gemv.hpp"
#include "support/xgemv_calls.hpp"

namespace xgemv_test {

enum class ScalarChoice { zero, one, minus_one_and_a_half, random, minus_one, half };

struct GemvCase {
  char trans = 'N';
  int64_t m = 1, n = 1;
  int64_t lda_padding = 0;  // lda = max(1, m) + lda_padding
  int64_t incx = 1, incy = 1;
  ScalarChoice alpha = ScalarChoice::random, beta = ScalarChoice::random;
  xgemv_pointer_mode pointer_mode = XGEMV_POINTER_MODE_HOST;
  // Elements past a 256-byte boundary: 1 defeats every vector load width.
  size_t a_misalignment = 0, x_misalignment = 0, y_misalignment = 0;
  bool batched = false;  // through the strided-batched entry point
  int64_t batch_count = 1;
  int64_t stride_padding = 0;  // elements between consecutive problems, beyond their extent
  // Through the few-right-hand-side entry point instead (incx and incy stay 1): nrhs columns of
  // X and Y, ldx = max(1, rows of X) + ldx_padding, ldy = max(1, rows of Y) + ldy_padding.
  bool several_rhs = false;
  int64_t nrhs = 1;
  int64_t ldx_padding = 0, ldy_padding = 0;
  // Integers in [-2, 2] and integer or half-integer scalars: every partial sum is exact in the
  // accumulation type (for k*4*|alpha| < 2^24), so y must equal the exact result rounded to T.
  bool integer_data = false;
  // Calls on a batch-invariant handle (xgemv_set_batch_invariant), for the single-vector forms.
  bool batch_invariant = false;

  GemvShape shape() const {
    return {trans, m, n, std::max<int64_t>(1, m) + lda_padding, incx, incy};
  }
  RhsLayout rhs_layout() const {
    const GemvShape s = shape();
    return {nrhs, std::max<int64_t>(1, s.x_length()) + ldx_padding,
            std::max<int64_t>(1, s.y_length()) + ldy_padding};
  }
  // Where each problem lies: a strided batch's problems, or the columns of several right-hand
  // sides (a batch with stride_a 0).
  BatchLayout batch_layout() const {
    if (several_rhs) return rhs_layout().as_batch();
    const GemvShape s = shape();
    return {batch_count, s.matrix_extent() + stride_padding, s.x_extent() + stride_padding,
            s.y_extent() + stride_padding};
  }
  int64_t problems() const { return several_rhs ? nrhs : batched ? batch_count : 1; }
};

inline std::string describe(const GemvCase &c) {
  static constexpr const char *kScalarNames[] = {"0", "1", "-1.5", "random", "-1", "0.5"};
  const GemvShape s = c.shape();
  std::ostringstream text;
  text << "op " << c.trans << " m=" << c.m << " n=" << c.n << " lda=" << s.lda << " incx=" << c.incx
       << " incy=" << c.incy << " alpha=" << kScalarNames[static_cast<int>(c.alpha)]
       << " beta=" << kScalarNames[static_cast<int>(c.beta)]
       << (c.pointer_mode == XGEMV_POINTER_MODE_DEVICE ? " device scalars" : " host scalars");
  if (c.a_misalignment || c.x_misalignment || c.y_misalignment)
    text << " misaligned A+" << c.a_misalignment << " x+" << c.x_misalignment << " y+"
         << c.y_misalignment;
  if (c.batched) text << " batch " << c.batch_count << " stride padding " << c.stride_padding;
  if (c.several_rhs) {
    const RhsLayout rhs = c.rhs_layout();
    text << " nrhs=" << rhs.count << " ldx=" << rhs.ldx << " ldy=" << rhs.ldy;
  }
  if (c.integer_data) text << " integer data";
  if (c.batch_invariant) text << " batch-invariant handle";
  return text.str();
}

template <class S>
S choose_scalar(ScalarChoice choice, bool integer, RandomSource &random) {
  switch (choice) {
    case ScalarChoice::zero: return S(0);
    case ScalarChoice::one: return S(1);
    case ScalarChoice::minus_one_and_a_half: return S(-1.5);
    case ScalarChoice::minus_one: return S(-1);
    case ScalarChoice::half: return S(0.5);
    case ScalarChoice::random: break;
  }
  if (integer) return static_cast<S>(random.integer(2, 3) * (random.integer(0, 1) ? 1 : -1));
  return static_cast<S>(random.nontrivial_scalar());
}

// Whether every logical y element of xgemv's result is within the worst-case rounding bound of
// a reference: |got - want| <= 2 * ((k + 2) * u_accumulate + u_y) * magnitude, where magnitude
// = |alpha| |op(A)| |x| + |beta| |y| and k the reduction length. Two results each within
// (k + 2) u_accumulate of the exact value, plus one rounding to y's storage, per side.
template <class T>
::testing::AssertionResult within_error_bound(const char *reference, const GemvShape &s,
                                              const BatchLayout &batch, int64_t problems,
                                              const std::vector<T> &got,
                                              const std::vector<double> &want,
                                              const std::vector<double> &magnitude) {
  const double u_accumulate = Element<ScalarOf<T>>::unit_roundoff;
  const double u_y = Element<T>::unit_roundoff;
  const double factor = 2 * ((s.reduction_length() + 2) * u_accumulate + u_y);
  int64_t bad = 0;
  std::ostringstream first_bad;
  for (int64_t b = 0; b < problems; ++b) {
    for_each_y_offset(s, batch, b, [&](int64_t i, int64_t offset) {
      const double value = to_double(got[offset]);
      const double bound = factor * magnitude[offset];
      if (std::fabs(value - want[offset]) <= bound) return;  // false for NaN
      if (bad++ < 5)
        first_bad << "\n  problem " << b << " y[" << i << "] = " << value << ", " << reference
                  << " " << want[offset] << ", |difference| " << std::fabs(value - want[offset])
                  << " > bound " << bound;
    });
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " elements of y beyond the error bound against "
                                       << reference << ":" << first_bad.str();
}

// Whether every logical y element equals the exact result (an image of y's storage, like
// `got`) after rounding to T: one rounding, nothing else allowed.
template <class T>
::testing::AssertionResult equals_exact_result(const GemvShape &s, const BatchLayout &batch,
                                               int64_t problems, const std::vector<T> &got,
                                               const std::vector<double> &exact) {
  int64_t wrong = 0;
  std::ostringstream first_wrong;
  for (int64_t b = 0; b < problems; ++b) {
    for_each_y_offset(s, batch, b, [&](int64_t i, int64_t offset) {
      const double want = to_double(from_double<T>(exact[offset]));
      if (to_double(got[offset]) == want) return;
      if (wrong++ < 5)
        first_wrong << "\n  problem " << b << " y[" << i << "] = " << to_double(got[offset])
                    << ", exact result rounded to " << Element<T>::name << " " << want;
    });
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << wrong << " elements of y differ from the exact result:" << first_wrong.str();
}

// Bitwise equality of two images of a buffer, except where `skip` (if given) is true.
template <class T>
::testing::AssertionResult bitwise_equal(const char *what, const std::vector<T> &got,
                                         const std::vector<T> &want,
                                         const std::vector<bool> *skip = nullptr) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(skip && (*skip)[i]) && !same_bits(got[i], want[i]))
      return ::testing::AssertionFailure()
             << what << ": element " << i << " is " << to_double(got[i]) << ", expected "
             << to_double(want[i]) << " bit for bit";
  return ::testing::AssertionSuccess();
}

// Whether a buffer that a call must only read still holds `given`, its guards intact.
template <class T>
::testing::AssertionResult untouched(const char *name, const GuardedDeviceBuffer<T> &buffer,
                                     const std::vector<T> &given) {
  const ::testing::AssertionResult guards = buffer.guards_intact(name);
  const ::testing::AssertionResult contents = bitwise_equal(name, buffer.download(), given);
  if (guards && contents) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << (guards ? "" : guards.message()) << (guards || contents ? "" : "; ")
         << (contents ? "" : contents.message());
}

// Y after one call (`call` returns its status, which must be success) in the case's pointer and
// batch-invariant modes, with y uploaded afresh into y_device first.
template <class T, class Call>
std::vector<T> call_on_fresh_y(const GemvCase &c, xgemv_handle h, GuardedDeviceBuffer<T> &y_device,
                               const std::vector<T> &y, Call &&call) {
  y_device.upload(y);
  EXPECT_EQ(xgemv_set_pointer_mode(h, c.pointer_mode), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(xgemv_set_batch_invariant(h, c.batch_invariant), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(call(), XGEMV_STATUS_SUCCESS);
  check_cuda(cudaDeviceSynchronize(), "synchronize after the call");
  return y_device.download();
}

template <class T>
void run_gemv_case(const GemvCase &c, const GpuHandles &gpu, uint64_t seed) {
  using S = ScalarOf<T>;
  SCOPED_TRACE(describe(c) + ", seed " + std::to_string(seed));
  if (c.several_rhs && (c.batched || c.incx != 1 || c.incy != 1)) {
    ADD_FAILURE() << "several right-hand sides take neither a batch nor increments";
    return;
  }
  RandomSource random(seed);
  const GemvShape s = c.shape();
  const RhsLayout rhs = c.rhs_layout();
  const BatchLayout batch = c.batch_layout();
  const BatchLayout *batch_argument = c.batched ? &batch : nullptr;
  const int64_t problems = c.problems();
  const S alpha = choose_scalar<S>(c.alpha, c.integer_data, random);
  const S beta = choose_scalar<S>(c.beta, c.integer_data, random);
  const auto random_element = [&] {
    return c.integer_data ? from_double<T>(double(random.integer(-2, 2))) : random.element<T>();
  };
  const bool quick_return = s.m == 0 || s.n == 0 || problems == 0 || (alpha == 0 && beta == 1);

  // Host images of A, x and y: random logical elements; lda padding, increment gaps, stride and
  // ldx/ldy padding hold the guard value (NaN), so using them shows and writing them is caught.
  // Several right-hand sides share one A (stride_a 0): it is filled once.
  std::vector<T> a(batch.a_span(s), guard_value<T>());
  std::vector<T> x(batch.x_span(s), guard_value<T>());
  std::vector<T> y(batch.y_span(s), guard_value<T>());
  std::vector<bool> is_logical_y(y.size(), false);
  for (int64_t b = 0; b < problems; ++b) {
    if (b == 0 || batch.stride_a != 0)
      for_each_matrix_offset(s, batch, b, [&](int64_t o) { a[o] = random_element(); });
    for_each_x_offset(s, batch, b, [&](int64_t, int64_t o) { x[o] = random_element(); });
    for_each_y_offset(s, batch, b, [&](int64_t, int64_t o) {
      y[o] = random_element();
      is_logical_y[o] = true;
    });
  }
  GuardedDeviceBuffer<T> a_device(a.size(), c.a_misalignment);
  GuardedDeviceBuffer<T> x_device(x.size(), c.x_misalignment);
  GuardedDeviceBuffer<T> y_device(y.size(), c.y_misalignment);

  // References, on the clean data, for the cases that compute.
  const bool computes = !quick_return && alpha != 0;
  std::vector<double> openblas_y(y.size()), cublas_y(y.size()), magnitude(y.size()),
      exact_y(y.size());
  cublasStatus_t cublas_status = CUBLAS_STATUS_SUCCESS;
  if (computes) {
    // Several right-hand sides: one gemm over every column (the whole Y storage).
    const std::vector<S> gemm_reference =
        c.several_rhs ? openblas_gemm<T>(s, rhs, alpha, a.data(), x.data(), beta, y.data())
                      : std::vector<S>{};
    for (int64_t b = 0; b < problems; ++b) {
      const T *a_b = a.data() + b * batch.stride_a, *x_b = x.data() + b * batch.stride_x,
              *y_b = y.data() + b * batch.stride_y;
      const std::vector<S> gemv_reference =
          c.several_rhs ? std::vector<S>{} : openblas_gemv<T>(s, alpha, a_b, x_b, beta, y_b);
      const std::vector<double> bound_terms =
          reference_gemv(s, std::fabs(alpha), a_b, x_b, std::fabs(beta), y_b, Magnitude{});
      const std::vector<double> exact =
          c.integer_data ? reference_gemv(s, alpha, a_b, x_b, beta, y_b)
                         : std::vector<double>(s.y_length());
      for_each_y_offset(s, batch, b, [&](int64_t i, int64_t o) {
        openblas_y[o] = c.several_rhs ? gemm_reference[o] : gemv_reference[o - b * batch.stride_y];
        magnitude[o] = bound_terms[i];
        exact_y[o] = exact[i];
      });
    }
    a_device.upload(a);
    x_device.upload(x);
    y_device.upload(y);
    cublas_status = c.several_rhs
                        ? cublas_gemm<T>(gpu.cublas(), s, rhs, alpha, a_device.data(),
                                         x_device.data(), beta, y_device.data())
                        : cublas_gemv<T>(gpu.cublas(), s, batch_argument, alpha, a_device.data(),
                                         x_device.data(), beta, y_device.data());
    EXPECT_EQ(cublas_status, CUBLAS_STATUS_SUCCESS)
        << "cuBLAS declined a valid BLAS call: " << cublasGetStatusString(cublas_status);
    const std::vector<T> result = y_device.download();
    for (size_t i = 0; i < y.size(); ++i) cublas_y[i] = to_double(result[i]);
  }

  // What xgemv gets: beta == 0 must not read y, alpha == 0 must not read A and x; NaN there
  // shows any such read in the result.
  const std::vector<T> y_initial = y;
  if (beta == 0)
    for (size_t i = 0; i < y.size(); ++i)
      if (is_logical_y[i]) y[i] = quiet_nan<T>();
  if (alpha == 0) {
    for (int64_t b = 0; b < problems; ++b) {
      for_each_matrix_offset(s, batch, b, [&](int64_t o) { a[o] = quiet_nan<T>(); });
      for_each_x_offset(s, batch, b, [&](int64_t, int64_t o) { x[o] = quiet_nan<T>(); });
    }
  }
  a_device.upload(a);
  x_device.upload(x);
  GuardedDeviceBuffer<S> device_scalars(2);
  device_scalars.upload({alpha, beta});
  const GemvOperands<T> operands =
      operands_in_mode<T>(c.pointer_mode, alpha, beta, device_scalars.data(), a_device.data(),
                          x_device.data(), y_device.data());
  const auto call_xgemv = [&] {
    return call_on_fresh_y(c, gpu.xgemv(), y_device, y, [&] {
      return c.several_rhs ? xgemv_gemv_nrhs<T>(gpu.xgemv(), s, rhs, operands)
                           : xgemv_gemv<T>(gpu.xgemv(), s, batch_argument, operands);
    });
  };
  const std::vector<T> result = call_xgemv();

  EXPECT_TRUE(untouched("A", a_device, a));
  EXPECT_TRUE(untouched("x", x_device, x));
  EXPECT_TRUE(y_device.guards_intact("y"));
  EXPECT_TRUE(device_scalars.guards_intact("alpha, beta"));
  if (quick_return) {
    EXPECT_TRUE(bitwise_equal("y after a quick return", result, y));
  } else {
    EXPECT_TRUE(bitwise_equal("y outside its elements", result, y, &is_logical_y));
  }
  if (!quick_return && alpha == 0) {
    // y := beta*y exactly: one product in the scalar type, one rounding to T.
    for (size_t i = 0; i < y.size(); ++i) {
      if (!is_logical_y[i]) continue;
      const S scaled = beta * static_cast<S>(to_double(y_initial[i]));
      EXPECT_EQ(to_double(result[i]), to_double(from_double<T>(scaled)))
          << "alpha = 0: y storage offset " << i;
    }
  }
  if (computes) {
    EXPECT_TRUE(within_error_bound("OpenBLAS", s, batch, problems, result, openblas_y, magnitude));
    if (cublas_status == CUBLAS_STATUS_SUCCESS) {
      EXPECT_TRUE(within_error_bound("cuBLAS", s, batch, problems, result, cublas_y, magnitude));
    }
    if (c.integer_data) {
      EXPECT_TRUE(equals_exact_result(s, batch, problems, result, exact_y));
    }
  }
  EXPECT_TRUE(bitwise_equal("y of the same call repeated", call_xgemv(), result));
  EXPECT_EQ(xgemv_set_batch_invariant(gpu.xgemv(), 0), XGEMV_STATUS_SUCCESS);
}

// Runs run_case(case, seed) for a table of cases with fresh data each, seeded from `label` and
// the case's index; stops after a few failing cases so a broken kernel does not bury the report.
template <class T, class RunCase>
void run_case_table(const std::vector<GemvCase> &cases, const std::string &label,
                    RunCase run_case) {
  constexpr int kMaxFailingCases = 8;
  const ::testing::TestResult &result =
      *::testing::UnitTest::GetInstance()->current_test_info()->result();
  int failing_cases = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const int failures_before = result.total_part_count();
    run_case(cases[i], case_seed(label + Element<T>::name, i));
    if (result.total_part_count() > failures_before) ++failing_cases;
    if (failing_cases >= kMaxFailingCases) {
      ADD_FAILURE() << "stopped after " << failing_cases << " failing cases of " << cases.size();
      return;
    }
  }
}

template <class T>
void run_gemv_cases(const std::vector<GemvCase> &cases, const GpuHandles &gpu,
                    const std::string &label) {
  run_case_table<T>(cases, label, [&gpu](const GemvCase &c, uint64_t seed) {
    run_gemv_case<T>(c, gpu, seed);
  });
}

// The fixture of typed tests over tables of cases: run(cases) runs them for T, labelled by the
// test's name, which also seeds a test's own problems (seed(index)).
template <class T>
class GemvCaseTest : public GpuHandlesTest {
 protected:
  static std::string test_name() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  static void run(const std::vector<GemvCase> &cases) {
    run_gemv_cases<T>(cases, gpu(), test_name());
  }
  static uint64_t seed(size_t index) { return case_seed(test_name() + Element<T>::name, index); }
};

// --- Case tables ------------------------------------------------------------------------------

// The specials every single-vector case table of op holds: device scalars with beta = 0 (NaN in
// y), alpha = 0 (NaN in A and x), and misaligned bases with an odd lda.
inline std::vector<GemvCase> special_cases(char op) {
  return {{.trans = op,
           .m = 67,
           .n = 1031,
           .beta = ScalarChoice::zero,
           .pointer_mode = XGEMV_POINTER_MODE_DEVICE},
          {.trans = op, .m = 67, .n = 1031, .alpha = ScalarChoice::zero},
          {.trans = op,
           .m = 1031,
           .n = 67,
           .lda_padding = 1,
           .a_misalignment = 1,
           .x_misalignment = 1,
           .y_misalignment = 1}};
}

// Each of `bases` with alpha x beta over `alphas` x `betas` in both pointer modes, in that order
// (bases outermost): beta = 0 poisons y with NaN, alpha = 0 A and x.
inline std::vector<GemvCase> with_scalars(const std::vector<GemvCase> &bases,
                                          std::span<const ScalarChoice> alphas,
                                          std::span<const ScalarChoice> betas) {
  std::vector<GemvCase> cases;
  for (const GemvCase &base : bases)
    for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE})
      for (const ScalarChoice alpha : alphas)
        for (const ScalarChoice beta : betas) {
          GemvCase c = base;
          c.alpha = alpha;
          c.beta = beta;
          c.pointer_mode = mode;
          cases.push_back(c);
        }
  return cases;
}

// Where a case's operands lie: each base this many elements past a 256-byte boundary, and the
// leading dimensions padded past the smallest.
struct Placement {
  size_t a, x, y;
  int64_t lda_padding, ldx_padding = 0, ldy_padding = 0;
};

// Case c with its operands at placement p.
inline GemvCase placed(GemvCase c, const Placement &p) {
  std::tie(c.a_misalignment, c.x_misalignment, c.y_misalignment, c.lda_padding, c.ldx_padding,
           c.ldy_padding) = std::tie(p.a, p.x, p.y, p.lda_padding, p.ldx_padding, p.ldy_padding);
  return c;
}

}  // namespace xgemv_test
