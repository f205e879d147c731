// IEEE specials: NaN and Inf in A, x, alpha, beta and y, in every element type, both ops and
// both pointer modes, compared element by element, NaN-aware, with the Reference BLAS answer
// (reference_gemv: sgemv.f's rules and loops in double) and with OpenBLAS. The data are small
// integers, so every finite element is exact and must match bit for bit after rounding to T; a
// special element must have the same class (NaN, +Inf, -Inf).
//
// Only cases whose answer does not depend on the order of evaluation are used: an infinite
// alpha meets positive data only (with mixed signs, sgemv.f's alpha*x(j)*A(i,j) sums +Inf and
// -Inf where an implementation that scales the dot product by alpha gets one infinity; both are
// valid BLAS). Where OpenBLAS itself departs from Reference BLAS, the test says so and judges
// xgemv by Reference BLAS.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "support/gemv_case.hpp"
#include "support/typed_tests.hpp"

namespace xgemv_test {
namespace {

constexpr double kInf = HUGE_VAL;
const double kNaN = std::nan("");

// The same value as far as IEEE classes go: both NaN, or equal (infinities with their sign).
bool same_value(double got, double want) {
  return (std::isnan(got) && std::isnan(want)) || got == want;
}

std::string value_text(double v) {
  std::ostringstream text;
  text << v;
  return text.str();
}

template <class T>
struct SpecialsProblem {
  using S = ScalarOf<T>;
  GemvShape shape;
  S alpha, beta;
  std::vector<T> a, x, y;

  // Logical element accessors (x and y by logical index, as the BLAS loops see them).
  T &a_at(int64_t i, int64_t j) { return a[j * shape.lda + i]; }
  T &x_at(int64_t j) { return x[vector_offset(j, shape.x_length(), shape.incx)]; }
  T &y_at(int64_t i) { return y[vector_offset(i, shape.y_length(), shape.incy)]; }
};

template <class T>
struct SpecialsCase {
  const char *what;
  bool positive_data;  // elements in [1, 2] instead of [-2, 2]
  std::function<void(SpecialsProblem<T> &)> place;
};

// Which row and column of A and which x element meet in output `r` for op N (row r) or op T
// (column r): (i, j) of A and the x index multiplied with it.
struct Meeting {
  int64_t i, j, x_index;
};
Meeting meeting(const GemvShape &s, int64_t output, int64_t k) {
  return s.transposed() ? Meeting{k, output, k} : Meeting{output, k, k};
}

template <class T>
std::vector<SpecialsCase<T>> specials_cases() {
  using P = SpecialsProblem<T>;
  using S = ScalarOf<T>;
  const T nan = from_double<T>(kNaN), inf = from_double<T>(kInf), minus_inf = from_double<T>(-kInf);
  const T zero = from_double<T>(0.0), one = from_double<T>(1.0);
  return {
      {"NaN in A", false, [=](P &p) { p.a_at(3, 4) = nan; }},
      {"Inf in A times x = 0 (no shortcut: NaN), -Inf in A times x != 0", false,
       [=](P &p) {
         const Meeting first = meeting(p.shape, 2, 5), second = meeting(p.shape, 6, 7);
         p.a_at(first.i, first.j) = inf;
         p.x_at(first.x_index) = zero;
         p.a_at(second.i, second.j) = minus_inf;
         p.x_at(second.x_index) = one;
       }},
      {"+Inf and -Inf in one reduction", false,
       [=](P &p) {
         const Meeting first = meeting(p.shape, 1, 2), second = meeting(p.shape, 1, 9);
         p.a_at(first.i, first.j) = inf;
         p.x_at(first.x_index) = one;
         p.a_at(second.i, second.j) = inf;
         p.x_at(second.x_index) = from_double<T>(-1.0);
       }},
      {"NaN in x", false, [=](P &p) { p.x_at(4) = nan; }},
      {"Inf in x, zeros in A", false,
       [=](P &p) {
         p.x_at(3) = inf;
         for (int64_t k = 0; k < p.shape.y_length(); k += 3) {
           const Meeting at = meeting(p.shape, k, 3);
           p.a_at(at.i, at.j) = zero;
         }
       }},
      {"alpha NaN", false, [=](P &p) { p.alpha = S(kNaN); }},
      {"alpha Inf, positive data", true, [=](P &p) { p.alpha = S(kInf); }},
      {"alpha -Inf, positive data, beta 0", true,
       [=](P &p) {
         p.alpha = S(-kInf);
         p.beta = S(0);
       }},
      {"beta NaN", false, [=](P &p) { p.beta = S(kNaN); }},
      {"beta Inf, zeros in y", false,
       [=](P &p) {
         p.beta = S(kInf);
         for (int64_t i = 0; i < p.shape.y_length(); i += 2) p.y_at(i) = zero;
       }},
      {"beta 0: NaN and Inf in y are not read", false,
       [=](P &p) {
         p.beta = S(0);
         for (int64_t i = 0; i < p.shape.y_length(); ++i) p.y_at(i) = i % 2 ? nan : minus_inf;
       }},
      {"alpha 0: NaN and Inf in A and x are not read", false,
       [=](P &p) {
         p.alpha = S(0);
         p.a_at(0, 0) = nan;
         p.a_at(5, 6) = inf;
         p.x_at(1) = nan;
         p.x_at(2) = minus_inf;
       }},
      {"alpha 0, beta 1: quick return, NaN in A and x", false,
       [=](P &p) {
         p.alpha = S(0);
         p.beta = S(1);
         for (T &v : p.a) v = nan;
         for (T &v : p.x) v = nan;
       }},
  };
}

XGEMV_TYPED_TEST_SUITE(Specials, ::testing::Test);

TYPED_TEST(Specials, PropagateAsReferenceBlas) {
  using T = TypeParam;
  using S = ScalarOf<T>;
  GpuHandles gpu;
  int openblas_departures = 0;
  for (const char trans : {'N', 'T'})
    for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE})
      for (const SpecialsCase<T> &c : specials_cases<T>()) {
        const std::string label = std::string(c.what) + ", op " + trans +
                                  (mode == XGEMV_POINTER_MODE_HOST ? ", host" : ", device") +
                                  " scalars";
        SCOPED_TRACE(label);
        RandomSource random(case_seed(label, 0));
        SpecialsProblem<T> p{{trans, 37, 29, 39, 2, -1}, S(1.5), S(-0.5), {}, {}, {}};
        const auto element = [&] {
          return from_double<T>(
              double(c.positive_data ? random.integer(1, 2) : random.integer(-2, 2)));
        };
        p.a.assign(p.shape.matrix_extent(), guard_value<T>());
        p.x.assign(p.shape.x_extent(), guard_value<T>());
        p.y.assign(p.shape.y_extent(), guard_value<T>());
        for (int64_t j = 0; j < p.shape.n; ++j)
          for (int64_t i = 0; i < p.shape.m; ++i) p.a_at(i, j) = element();
        for (int64_t j = 0; j < p.shape.x_length(); ++j) p.x_at(j) = element();
        for (int64_t i = 0; i < p.shape.y_length(); ++i) p.y_at(i) = element();
        c.place(p);

        const std::vector<double> want =
            reference_gemv(p.shape, p.alpha, p.a.data(), p.x.data(), p.beta, p.y.data());
        const std::vector<S> openblas =
            openblas_gemv<T>(p.shape, p.alpha, p.a.data(), p.x.data(), p.beta, p.y.data());
        GuardedDeviceBuffer<T> a(p.a.size()), x(p.x.size()), y(p.y.size());
        GuardedDeviceBuffer<S> scalars(2);
        a.upload(p.a);
        x.upload(p.x);
        y.upload(p.y);
        scalars.upload({p.alpha, p.beta});
        ASSERT_EQ(xgemv_set_pointer_mode(gpu.xgemv(), mode), XGEMV_STATUS_SUCCESS);
        const GemvOperands<T> operands = operands_in_mode<T>(mode, p.alpha, p.beta, scalars.data(),
                                                             a.data(), x.data(), y.data());
        ASSERT_EQ(xgemv_gemv<T>(gpu.xgemv(), p.shape, nullptr, operands), XGEMV_STATUS_SUCCESS);
        const std::vector<T> result = y.download();

        std::vector<bool> is_logical_y(p.y.size(), false);
        int wrong = 0;
        for (int64_t i = 0; i < p.shape.y_length(); ++i) {
          const int64_t o = vector_offset(i, p.shape.y_length(), p.shape.incy);
          is_logical_y[o] = true;
          const double expected = to_double(from_double<T>(want[i]));
          const double openblas_value = to_double(from_double<T>(double(openblas[o])));
          if (!same_value(openblas_value, expected) && openblas_departures++ < 5)
            std::printf(
                "note: OpenBLAS departs from Reference BLAS: %s, %s, y[%lld] = %s, "
                "Reference BLAS %s\n",
                Element<T>::name, label.c_str(), static_cast<long long>(i),
                value_text(openblas_value).c_str(), value_text(expected).c_str());
          if (!same_value(to_double(result[o]), expected) && wrong++ < 5)
            ADD_FAILURE() << "y[" << i << "] = " << to_double(result[o]) << ", Reference BLAS "
                          << expected << ", OpenBLAS " << openblas_value;
        }
        EXPECT_TRUE(bitwise_equal("y between its elements", result, p.y, &is_logical_y));
        EXPECT_TRUE(y.guards_intact("y"));
      }
  ASSERT_EQ(xgemv_set_pointer_mode(gpu.xgemv(), XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
}

}  // namespace
}  // namespace xgemv_test
