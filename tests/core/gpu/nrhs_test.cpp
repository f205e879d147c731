// The few-right-hand-side calls (xgemv_?gemv_nrhs) for every element type:
//  - against OpenBLAS gemm (16-bit upcast to fp32) and cuBLAS GemmEx on the same columns, over
//    nrhs 1..17 and 32, ldx/ldy padding, ops N/T/C, odd and edge shapes, short outputs with long
//    reductions (exact on integer data), alpha/beta specials in both pointer modes, misaligned
//    bases and odd lda. Every case also checks guards, gaps, untouched inputs, a NaN-poisoned Y
//    for beta = 0, NaN-poisoned A and X for alpha = 0, and a repeated call (gemv_case.hpp);
//  - batch invariance: column j's bits do not depend on nrhs or on the other columns, and a
//    batch-invariant handle's single-vector calls (and strided batches) give those bits;
//  - every several-right-hand-side kernel variant, forced, on an edge set; and the refusal,
//    touching nothing, of nrhs > 1 by every variant that does not compute it.
// The variants are found by probing the table (kernel_variants.hpp), not by name.
#include <algorithm>
#include <cstdint>
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

constexpr char kOps[] = {'N', 'T', 'C'};
constexpr char kRealOps[] = {'N', 'T'};  // op C is op T for the real types
constexpr ScalarChoice kScalars[] = {ScalarChoice::zero, ScalarChoice::one, ScalarChoice::minus_one,
                                     ScalarChoice::half, ScalarChoice::random};

// The reduction length of the short-output shapes: long enough for split reductions.
int64_t long_reduction() { return by_profile<int64_t>(20011, 2003); }

GemvCase nrhs_case(char op, int64_t m, int64_t n, int64_t nrhs) {
  return {.trans = op, .m = m, .n = n, .several_rhs = true, .nrhs = nrhs};
}

// 1..17 (every count up to one group of 16, and one past it) and 32 (two full groups).
std::vector<int64_t> every_nrhs() {
  std::vector<int64_t> counts;
  for (int64_t nrhs = 1; nrhs <= 17; ++nrhs) counts.push_back(nrhs);
  counts.push_back(32);
  return counts;
}

std::vector<GemvCase> every_nrhs_cases() {
  constexpr int64_t kShapes[][2] = {{67, 1031}, {1031, 67}};
  std::vector<GemvCase> cases;
  for (const auto &[m, n] : kShapes)
    for (const char op : kOps)
      for (const int64_t nrhs : every_nrhs()) cases.push_back(nrhs_case(op, m, n, nrhs));
  return cases;
}

std::vector<GemvCase> padded_leading_dimension_cases() {
  constexpr int64_t kPaddings[][2] = {{1, 0}, {0, 1}, {3, 5}, {64, 7}};  // ldx, ldy
  std::vector<GemvCase> cases;
  for (const char op : kRealOps)
    for (const auto &[ldx_padding, ldy_padding] : kPaddings)
      for (const int64_t nrhs : {2, 16, 17}) {
        GemvCase c = nrhs_case(op, 129, 67, nrhs);
        c.ldx_padding = ldx_padding;
        c.ldy_padding = ldy_padding;
        cases.push_back(c);
      }
  return cases;
}

// 0, 1, primes, sizes either side of the usual block sizes; nrhs = 0 is a quick return.
std::vector<GemvCase> edge_shape_cases() {
  constexpr int64_t kShapes[][2] = {{0, 0},     {0, 7},     {7, 0},     {1, 1},
                                    {1, 257},   {257, 1},   {2, 3},     {13, 31},
                                    {127, 129}, {129, 127}, {255, 257}, {1023, 1025}};
  std::vector<GemvCase> cases;
  for (const auto &[m, n] : kShapes)
    for (const char op : kOps)
      for (const int64_t nrhs : {1, 5, 16, 17}) cases.push_back(nrhs_case(op, m, n, nrhs));
  for (const char op : kOps) cases.push_back(nrhs_case(op, 33, 65, 0));
  return cases;
}

// Outputs of 1..16 rows with a long reduction (m small for op N, n small for op T), on random
// data and, exactly, on integer data.
std::vector<GemvCase> short_output_cases() {
  struct Columns {
    int64_t nrhs;
    bool integer_data;
  };
  constexpr Columns kColumns[] = {{3, false}, {17, true}};
  const int64_t k = long_reduction();
  std::vector<GemvCase> cases;
  for (int64_t rows = 1; rows <= 16; ++rows)
    for (const char op : kRealOps)
      for (const Columns &columns : kColumns) {
        GemvCase c =
            op == 'N' ? nrhs_case(op, rows, k, columns.nrhs) : nrhs_case(op, k, rows, columns.nrhs);
        c.integer_data = columns.integer_data;
        cases.push_back(c);
      }
  return cases;
}

// alpha x beta in {0, 1, -1, 0.5, random}^2, host and device scalars; beta = 0 poisons Y with
// NaN, alpha = 0 poisons A and X.
std::vector<GemvCase> scalar_cases() {
  std::vector<GemvCase> bases;
  for (const char op : kRealOps) bases.push_back(nrhs_case(op, 129, 67, 5));
  return with_scalars(bases, kScalars, kScalars);
}

std::vector<GemvCase> alignment_cases() {
  constexpr Placement kPlacements[] = {
      {1, 0, 0, 0, 0, 0},  {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 0},  // each base off by one element
      {1, 1, 1, 1, 0, 0},                                           // all of them, lda = m + 1
      {1, 1, 1, 1, 1, 1},                                           // and odd ldx, ldy
      {0, 0, 0, 2, 0, 0},  // aligned bases, but lda breaks column alignment
      {3, 5, 7, 64, 9, 3},
  };
  std::vector<GemvCase> cases;
  for (const char op : kRealOps)
    for (const Placement &placement : kPlacements)
      for (const int64_t nrhs : {3, 16, 17})
        cases.push_back(placed(nrhs_case(op, 1031, 67, nrhs), placement));
  // Lower-case trans is as valid as upper case.
  for (const char op : {'n', 't', 'c'}) cases.push_back(nrhs_case(op, 129, 67, 4));
  return cases;
}

XGEMV_TYPED_TEST_SUITE(NrhsCorrectness, GemvCaseTest<T>);

TYPED_TEST(NrhsCorrectness, EveryNrhsUpTo17And32) { this->run(every_nrhs_cases()); }
TYPED_TEST(NrhsCorrectness, PaddedLeadingDimensions) {
  this->run(padded_leading_dimension_cases());
}
TYPED_TEST(NrhsCorrectness, EdgeShapes) { this->run(edge_shape_cases()); }
TYPED_TEST(NrhsCorrectness, ShortOutputsWithLongReductions) { this->run(short_output_cases()); }
TYPED_TEST(NrhsCorrectness, ScalarsInBothPointerModes) { this->run(scalar_cases()); }
TYPED_TEST(NrhsCorrectness, MisalignedPointersAndOddLeadingDimensions) {
  this->run(alignment_cases());
}

// --- Batch invariance --------------------------------------------------------------------------

// The widest call of the invariance checks: one column past a group of 16.
constexpr int64_t kWideNrhs = 17;

int64_t padding_to_multiple(int64_t value, int64_t multiple) {
  return (multiple - value % multiple) % multiple;
}

// nrhs = kWideNrhs with ldx and ldy rounded up to 64 elements, so that every column starts at
// the alignment of the base (modulo 128 bytes for every type), as a single-vector call on that
// column needs to be comparable.
GemvCase invariance_case(char op, int64_t m, int64_t n) {
  GemvCase c = nrhs_case(op, m, n, kWideNrhs);
  const GemvShape s = c.shape();
  c.ldx_padding = padding_to_multiple(std::max<int64_t>(1, s.x_length()), 64);
  c.ldy_padding = padding_to_multiple(std::max<int64_t>(1, s.y_length()), 64);
  return c;
}

// Whether every column of X and Y starts at its base's alignment modulo 128 bytes.
template <class T>
bool columns_aligned_like_base(const GemvCase &c) {
  const RhsLayout rhs = c.rhs_layout();
  const auto aligned = [](int64_t ld) { return ld * int64_t(sizeof(T)) % 128 == 0; };
  return aligned(rhs.ldx) && aligned(rhs.ldy);
}

std::vector<GemvCase> invariance_cases() {
  const int64_t k = long_reduction();
  const int64_t shapes[][2] = {{67, 1031}, {1031, 67}, {16, k}, {k, 16}, {4099, 33}};
  std::vector<GemvCase> cases;
  for (const char op : kRealOps) {
    for (const auto &[m, n] : shapes) cases.push_back(invariance_case(op, m, n));
    GemvCase misaligned = invariance_case(op, 129, 65);
    misaligned.lda_padding = 1;
    misaligned.a_misalignment = misaligned.x_misalignment = misaligned.y_misalignment = 1;
    cases.push_back(misaligned);
    GemvCase device_scalars = invariance_case(op, 257, 129);
    device_scalars.pointer_mode = XGEMV_POINTER_MODE_DEVICE;
    cases.push_back(device_scalars);
    // Odd leading dimensions: columns at differing alignments (only nrhs against nrhs).
    GemvCase odd = nrhs_case(op, 129, 65, kWideNrhs);
    odd.ldx_padding = 1;
    odd.ldy_padding = 3;
    cases.push_back(odd);
  }
  return cases;
}

// One A and kWideNrhs columns of X and Y (random data, guard values in every gap) on the device
// at the case's alignment, with the case's scalars and pointer mode, and the calls the invariance
// checks compare.
template <class T>
class InvarianceProblem {
 public:
  using S = ScalarOf<T>;

  InvarianceProblem(const GemvCase &c, uint64_t seed)
      : shape_(c.shape()),
        rhs_(c.rhs_layout()),
        columns_(rhs_.as_batch()),
        pointer_mode_(c.pointer_mode),
        random_(seed),
        alpha_(choose_scalar<S>(c.alpha, false, random_)),
        beta_(choose_scalar<S>(c.beta, false, random_)),
        a_(columns_.a_span(shape_), guard_value<T>()),
        x_(columns_.x_span(shape_), guard_value<T>()),
        y_(columns_.y_span(shape_), guard_value<T>()),
        a_device_(a_.size(), c.a_misalignment),
        x_device_(x_.size(), c.x_misalignment),
        y_device_(y_.size(), c.y_misalignment),
        device_scalars_(2) {
    for_each_matrix_offset(shape_, columns_, 0, [&](int64_t o) { a_[o] = random_.element<T>(); });
    refill_columns(x_, y_, 0, kWideNrhs);
    a_device_.upload(a_);
    device_scalars_.upload({alpha_, beta_});
  }

  const GemvShape &shape() const { return shape_; }
  const RhsLayout &rhs() const { return rhs_; }
  const std::vector<T> &x() const { return x_; }
  const std::vector<T> &y() const { return y_; }

  // Fresh random values in the logical elements of columns [first, last) of images of X and Y.
  void refill_columns(std::vector<T> &x, std::vector<T> &y, int64_t first, int64_t last) {
    for (int64_t column = first; column < last; ++column) {
      for_each_x_offset(shape_, columns_, column,
                        [&](int64_t, int64_t o) { x[o] = random_.element<T>(); });
      for_each_y_offset(shape_, columns_, column,
                        [&](int64_t, int64_t o) { y[o] = random_.element<T>(); });
    }
  }

  // A skip mask for bitwise_equal over Y: true everywhere but at the logical elements of
  // columns [first, last).
  std::vector<bool> all_but_columns(int64_t first, int64_t last) const {
    std::vector<bool> skip(y_.size(), true);
    for (int64_t column = first; column < last; ++column)
      for_each_y_offset(shape_, columns_, column, [&](int64_t, int64_t o) { skip[o] = false; });
    return skip;
  }
  // The opposite: true exactly at the logical elements of columns [first, last).
  std::vector<bool> only_columns(int64_t first, int64_t last) const {
    std::vector<bool> skip = all_but_columns(first, last);
    skip.flip();
    return skip;
  }

  // Y after xgemv_?gemv_nrhs with nrhs columns of images x and y.
  std::vector<T> run_nrhs(xgemv_handle h, const std::vector<T> &x, const std::vector<T> &y,
                          int64_t nrhs) {
    upload(x, y, h);
    EXPECT_EQ(xgemv_gemv_nrhs<T>(h, shape_, RhsLayout{nrhs, rhs_.ldx, rhs_.ldy}, operands()),
              XGEMV_STATUS_SUCCESS)
        << "nrhs " << nrhs;
    return finish();
  }

  // Y after one single-vector call (xgemv_?gemv, incx = incy = 1) on each column in place;
  // check_variant(column, name) is given the variant each call reports having run.
  template <class CheckVariant>
  std::vector<T> run_single_vector_calls(xgemv_handle h, CheckVariant &&check_variant) {
    upload(x_, y_, h);
    const GemvOperands<T> all = operands();
    for (int64_t column = 0; column < kWideNrhs; ++column) {
      const GemvShape vector_shape{shape_.trans, shape_.m, shape_.n, shape_.lda, 1, 1};
      GemvOperands<T> one = all;
      one.x = all.x + column * rhs_.ldx;
      one.y = all.y + column * rhs_.ldy;
      EXPECT_EQ(xgemv_gemv<T>(h, vector_shape, nullptr, one), XGEMV_STATUS_SUCCESS)
          << "column " << column;
      check_variant(column, xgemv_get_last_kernel_variant(h));
    }
    return finish();
  }

  // Y after one strided batch whose problem b is column b (stride_a 0, strides ldx and ldy).
  std::vector<T> run_strided_batch_over_columns(xgemv_handle h) {
    upload(x_, y_, h);
    const BatchLayout batch = columns_;
    EXPECT_EQ(xgemv_gemv<T>(h, GemvShape{shape_.trans, shape_.m, shape_.n, shape_.lda, 1, 1},
                            &batch, operands()),
              XGEMV_STATUS_SUCCESS);
    return finish();
  }

  // Whether every column of `got` is within the error bound of OpenBLAS gemm on the clean data.
  ::testing::AssertionResult within_error_bound_of_openblas(const std::vector<T> &got) const {
    const std::vector<S> reference =
        openblas_gemm<T>(shape_, rhs_, alpha_, a_.data(), x_.data(), beta_, y_.data());
    std::vector<double> want(got.size()), magnitude(got.size());
    for (int64_t column = 0; column < kWideNrhs; ++column) {
      const int64_t x_offset = column * rhs_.ldx, y_offset = column * rhs_.ldy;
      const std::vector<double> bound_terms =
          reference_gemv(shape_, std::fabs(alpha_), a_.data(), x_.data() + x_offset,
                         std::fabs(beta_), y_.data() + y_offset, Magnitude{});
      for_each_y_offset(shape_, columns_, column, [&](int64_t i, int64_t o) {
        want[o] = reference[o];
        magnitude[o] = bound_terms[i];
      });
    }
    return within_error_bound("OpenBLAS", shape_, columns_, kWideNrhs, got, want, magnitude);
  }

 private:
  void upload(const std::vector<T> &x, const std::vector<T> &y, xgemv_handle h) {
    x_device_.upload(x);
    y_device_.upload(y);
    EXPECT_EQ(xgemv_set_pointer_mode(h, pointer_mode_), XGEMV_STATUS_SUCCESS);
  }
  std::vector<T> finish() {
    check_cuda(cudaDeviceSynchronize(), "synchronize after xgemv");
    return y_device_.download();
  }
  GemvOperands<T> operands() const {
    return operands_in_mode<T>(pointer_mode_, alpha_, beta_, device_scalars_.data(),
                               a_device_.data(), x_device_.data(), y_device_.data());
  }

  GemvShape shape_;
  RhsLayout rhs_;
  BatchLayout columns_;
  xgemv_pointer_mode pointer_mode_;
  RandomSource random_;
  S alpha_, beta_;
  std::vector<T> a_, x_, y_;
  GuardedDeviceBuffer<T> a_device_, x_device_, y_device_;
  GuardedDeviceBuffer<S> device_scalars_;
};

// Sets a handle's batch-invariant mode for a scope; off again after it, passed or not.
class BatchInvariantMode {
 public:
  BatchInvariantMode(xgemv_handle handle, bool enabled) : handle_(handle) {
    EXPECT_EQ(xgemv_set_batch_invariant(handle, enabled), XGEMV_STATUS_SUCCESS);
    int reported = -1;
    EXPECT_EQ(xgemv_get_batch_invariant(handle, &reported), XGEMV_STATUS_SUCCESS);
    EXPECT_EQ(reported, enabled ? 1 : 0);
  }
  ~BatchInvariantMode() { xgemv_set_batch_invariant(handle_, 0); }
  BatchInvariantMode(const BatchInvariantMode &) = delete;
  BatchInvariantMode &operator=(const BatchInvariantMode &) = delete;

 private:
  xgemv_handle handle_;
};

XGEMV_TYPED_TEST_SUITE(NrhsBatchInvariance, GemvCaseTest<T>);

// Column j of the nrhs = 17 call against, for every nrhs in 1..16: the nrhs call with fresh data
// in the columns of the buffers past nrhs (j < nrhs equal bit for bit, Y past nrhs untouched);
// the nrhs = 17 call with that same data (columns < nrhs equal); and the nrhs = 17 call in
// which only column nrhs - 1 keeps its data (that column equal).
TYPED_TEST(NrhsBatchInvariance, ColumnsDoNotDependOnNrhsOrOnTheOtherColumns) {
  using T = TypeParam;
  const xgemv_handle h = this->gpu().xgemv();
  const std::vector<GemvCase> cases = invariance_cases();
  for (size_t index = 0; index < cases.size(); ++index) {
    SCOPED_TRACE(describe(cases[index]));
    InvarianceProblem<T> p(cases[index], this->seed(index));
    const std::vector<T> wide = p.run_nrhs(h, p.x(), p.y(), kWideNrhs);
    for (int64_t nrhs = 1; nrhs < kWideNrhs; ++nrhs) {
      SCOPED_TRACE("nrhs " + std::to_string(nrhs));
      std::vector<T> x = p.x(), y = p.y();
      p.refill_columns(x, y, nrhs, kWideNrhs);
      const std::vector<bool> outside_first = p.all_but_columns(0, nrhs);
      const std::vector<T> narrow = p.run_nrhs(h, x, y, nrhs);
      EXPECT_TRUE(bitwise_equal("columns < nrhs against nrhs = 17", narrow, wide, &outside_first));
      const std::vector<bool> first = p.only_columns(0, nrhs);
      EXPECT_TRUE(bitwise_equal("Y past nrhs columns (untouched)", narrow, y, &first));
      EXPECT_TRUE(bitwise_equal("columns < nrhs, nrhs = 17 with other data past them",
                                p.run_nrhs(h, x, y, kWideNrhs), wide, &outside_first));

      std::vector<T> x_one = p.x(), y_one = p.y();
      p.refill_columns(x_one, y_one, 0, nrhs - 1);
      p.refill_columns(x_one, y_one, nrhs, kWideNrhs);
      const std::vector<bool> outside_one = p.all_but_columns(nrhs - 1, nrhs);
      EXPECT_TRUE(bitwise_equal("column nrhs - 1, nrhs = 17 with other data in every other column",
                                p.run_nrhs(h, x_one, y_one, kWideNrhs), wide, &outside_one));
    }
  }
}

// A batch-invariant handle: a single-vector call on column j (incx = incy = 1, in place) gives
// column j of the nrhs = 17 call bit for bit and runs the variant of the nrhs = 1 call; so does
// a strided batch over the columns. The handle back in its default mode: the single-vector calls
// run on single-vector variants (none that computes several right-hand sides) and stay within
// the error bound of OpenBLAS.
TYPED_TEST(NrhsBatchInvariance, BatchInvariantHandleGivesSingleVectorCallsTheColumnBits) {
  using T = TypeParam;
  const xgemv_handle h = this->gpu().xgemv();
  int enabled = -1;
  ASSERT_EQ(xgemv_get_batch_invariant(h, &enabled), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(enabled, 0) << "a new handle is not batch-invariant";
  const std::vector<GemvCase> cases = invariance_cases();
  for (size_t index = 0; index < cases.size(); ++index) {
    const GemvCase &c = cases[index];
    if (!columns_aligned_like_base<T>(c)) continue;
    SCOPED_TRACE(describe(c));
    const std::vector<std::string> several_rhs = several_rhs_variants<T>(this->gpu(), c.trans);
    InvarianceProblem<T> p(c, this->seed(index));
    const std::vector<T> wide = p.run_nrhs(h, p.x(), p.y(), kWideNrhs);
    p.run_nrhs(h, p.x(), p.y(), 1);
    const char *ran = xgemv_get_last_kernel_variant(h);
    ASSERT_NE(ran, nullptr);
    const std::string nrhs_one_variant = ran;
    {
      const BatchInvariantMode invariant(h, true);
      const std::vector<T> single =
          p.run_single_vector_calls(h, [&](int64_t column, const char *v) {
            EXPECT_STREQ(v, nrhs_one_variant.c_str()) << "column " << column;
          });
      EXPECT_TRUE(bitwise_equal("single-vector calls on the columns", single, wide));
      EXPECT_TRUE(bitwise_equal("strided batch over the columns",
                                p.run_strided_batch_over_columns(h), wide));
    }
    const std::vector<T> single = p.run_single_vector_calls(h, [&](int64_t column, const char *v) {
      ASSERT_NE(v, nullptr) << "column " << column;
      EXPECT_EQ(std::find(several_rhs.begin(), several_rhs.end(), v), several_rhs.end())
          << "default mode, column " << column << " ran " << v;
    });
    EXPECT_TRUE(p.within_error_bound_of_openblas(single));
  }
}

// The single-vector forms (increments, strided batches, both pointer modes, alpha/beta specials,
// misalignment) on a batch-invariant handle, which runs them on the several-right-hand-side
// kernels: correct, and run on such a kernel. Then the same on the default handle mode, which
// runs them on single-vector kernels.
TYPED_TEST(NrhsBatchInvariance, SingleVectorFormsInBothHandleModes) {
  using T = TypeParam;
  for (const char op : kRealOps) {
    std::vector<GemvCase> cases;
    for (const int64_t incx : {1, -3})
      for (const int64_t incy : {1, 2})
        cases.push_back({.trans = op, .m = 1031, .n = 67, .incx = incx, .incy = incy});
    const std::vector<GemvCase> specials = special_cases(op);
    cases.insert(cases.end(), specials.begin(), specials.end());
    cases.push_back({.trans = op,
                     .m = 129,
                     .n = 65,
                     .incx = 2,
                     .batched = true,
                     .batch_count = 3,
                     .stride_padding = 5});
    cases.push_back({.trans = op, .m = 16, .n = long_reduction(), .integer_data = true});
    const std::vector<std::string> several_rhs = several_rhs_variants<T>(this->gpu(), op);
    for (const bool invariant : {true, false}) {
      SCOPED_TRACE(invariant ? "batch-invariant handle" : "default handle");
      for (GemvCase &c : cases) c.batch_invariant = invariant;
      run_gemv_cases<T>(cases, this->gpu(),
                        std::string("SingleVectorForms") + op + (invariant ? "1" : "0"));
      const char *ran = xgemv_get_last_kernel_variant(this->gpu().xgemv());
      ASSERT_NE(ran, nullptr);
      EXPECT_EQ(std::find(several_rhs.begin(), several_rhs.end(), ran) != several_rhs.end(),
                invariant)
          << "op " << op << " ran " << ran;
    }
  }
}

// --- Kernel variants ---------------------------------------------------------------------------

// The edge set of one op for a forced several-right-hand-side variant: shapes around tile sizes
// with nrhs around a group of 16, padded leading dimensions, misalignment and odd lda, scalar
// specials in both pointer modes, long reductions exact on integer data, nrhs = 0.
std::vector<GemvCase> variant_edge_cases(char op) {
  const int64_t k = long_reduction();
  const int64_t shapes[][2] = {{1, 1},     {2, 3},     {7, 0},     {13, 31}, {63, 65}, {127, 129},
                               {255, 257}, {1025, 67}, {67, 1025}, {16, k},  {k, 16}};
  std::vector<GemvCase> cases;
  for (const auto &[m, n] : shapes)
    for (const int64_t nrhs : {1, 3, 16, 17}) cases.push_back(nrhs_case(op, m, n, nrhs));
  GemvCase padded = nrhs_case(op, 129, 65, 5);
  padded.ldx_padding = 1;
  padded.ldy_padding = 3;
  cases.push_back(padded);
  GemvCase misaligned = nrhs_case(op, 1031, 67, 17);
  misaligned.lda_padding = 1;
  misaligned.a_misalignment = misaligned.x_misalignment = misaligned.y_misalignment = 1;
  cases.push_back(misaligned);
  GemvCase beta_zero = nrhs_case(op, 67, 1031, 9);
  beta_zero.beta = ScalarChoice::zero;
  beta_zero.pointer_mode = XGEMV_POINTER_MODE_DEVICE;
  cases.push_back(beta_zero);
  GemvCase alpha_zero = nrhs_case(op, 67, 1031, 4);
  alpha_zero.alpha = ScalarChoice::zero;
  cases.push_back(alpha_zero);
  GemvCase minus_one = nrhs_case(op, 1031, 67, 16);
  minus_one.alpha = ScalarChoice::minus_one;
  minus_one.beta = ScalarChoice::half;
  cases.push_back(minus_one);
  for (const auto &[m, n] : {std::pair<int64_t, int64_t>{4099, 33}, {33, 4099}}) {
    GemvCase exact = nrhs_case(op, m, n, 32);
    exact.integer_data = true;
    cases.push_back(exact);
  }
  cases.push_back(nrhs_case(op, 33, 65, 0));
  return cases;
}

XGEMV_TYPED_TEST_SUITE(NrhsKernelVariants, GpuHandlesTest);

TYPED_TEST(NrhsKernelVariants, EverySeveralRhsVariantOnTheEdgeCasesOfItsOps) {
  for (const char op : kRealOps) {
    int variants = 0;
    for (const std::string &name : variant_names()) {
      SCOPED_TRACE("variant " + name);
      const ForcedVariant forced(this->gpu().xgemv(), name);
      ASSERT_EQ(forced.status(), XGEMV_STATUS_SUCCESS);
      if (!implements_several_rhs_op<TypeParam>(this->gpu(), op, name)) continue;
      ++variants;
      run_gemv_cases<TypeParam>(variant_edge_cases(op), this->gpu(),
                                "nrhs variant " + name + " op " + op);
    }
    EXPECT_GT(variants, 0) << "no variant computes several right-hand sides of op " << op;
  }
}

// Every variant that, forced, refuses nrhs = 2 for an op (the single-vector variants, and the
// several-right-hand-side ones on an op or type they do not implement) refuses nrhs > 1 as not
// supported, launches nothing and leaves Y as it was; there is at least one single-vector
// variant (one that computes the op for a single vector).
TYPED_TEST(NrhsKernelVariants, ForcedVariantRefusesSeveralRhsItDoesNotCompute) {
  using T = TypeParam;
  const xgemv_handle h = this->gpu().xgemv();
  constexpr int64_t kMaxNrhs = 32;
  GuardedDeviceBuffer<T> a(64), x(8 * kMaxNrhs), y(8 * kMaxNrhs);
  std::vector<T> y_before(y.size());
  RandomSource random(case_seed("ForcedVariantRefusesSeveralRhs", 0));
  for (T &value : y_before) value = random.element<T>();
  const ScalarOf<T> alpha = 1, beta = 0;
  const GemvOperands<T> operands{&alpha, a.data(), x.data(), &beta, y.data()};
  int single_vector_variants = 0;
  for (const std::string &name : variant_names()) {
    const ForcedVariant forced(h, name);
    for (const char op : kRealOps) {
      if (implements_several_rhs_op<T>(this->gpu(), op, name)) continue;
      // When this probe runs, the refusal below must not leave its name as the last variant.
      if (implements_op<T>(this->gpu(), op, name)) ++single_vector_variants;
      for (const int64_t nrhs : {int64_t{2}, int64_t{16}, int64_t{17}, kMaxNrhs}) {
        SCOPED_TRACE(name + " op " + op + " nrhs " + std::to_string(nrhs));
        y.upload(y_before);
        ASSERT_EQ(xgemv_set_pointer_mode(h, XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
        EXPECT_EQ(
            xgemv_gemv_nrhs<T>(h, GemvShape{op, 8, 8, 8, 1, 1}, RhsLayout{nrhs, 8, 8}, operands),
            XGEMV_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(xgemv_get_last_kernel_variant(h), nullptr);
        check_cuda(cudaDeviceSynchronize(), "refused call");
        EXPECT_TRUE(bitwise_equal("Y after a refused call", y.download(), y_before));
      }
    }
  }
  EXPECT_GT(single_vector_variants, 0);
  EXPECT_TRUE(y.guards_intact("Y"));
}

// The automatic choice runs every few-right-hand-side call, nrhs = 1 included, on a variant
// that computes several right-hand sides.
TYPED_TEST(NrhsKernelVariants, AutomaticChoiceRunsASeveralRhsVariant) {
  using T = TypeParam;
  const xgemv_handle h = this->gpu().xgemv();
  constexpr int64_t kMaxNrhs = 17;
  GuardedDeviceBuffer<T> a(64 * 64), x(64 * kMaxNrhs), y(64 * kMaxNrhs);
  const ScalarOf<T> alpha = 1, beta = 0;
  const GemvOperands<T> operands{&alpha, a.data(), x.data(), &beta, y.data()};
  ASSERT_EQ(xgemv_set_pointer_mode(h, XGEMV_POINTER_MODE_HOST), XGEMV_STATUS_SUCCESS);
  for (const char op : kRealOps) {
    const std::vector<std::string> several_rhs = several_rhs_variants<T>(this->gpu(), op);
    for (const int64_t nrhs : {int64_t{1}, int64_t{2}, kMaxNrhs}) {
      ASSERT_EQ(
          xgemv_gemv_nrhs<T>(h, GemvShape{op, 64, 64, 64, 1, 1}, RhsLayout{nrhs, 64, 64}, operands),
          XGEMV_STATUS_SUCCESS)
          << "op " << op << " nrhs " << nrhs;
      const char *ran = xgemv_get_last_kernel_variant(h);
      ASSERT_NE(ran, nullptr);
      EXPECT_NE(std::find(several_rhs.begin(), several_rhs.end(), ran), several_rhs.end())
          << "op " << op << " nrhs " << nrhs << " ran " << ran;
    }
  }
  check_cuda(cudaDeviceSynchronize(), "calls");
}

}  // namespace
}  // namespace xgemv_test
