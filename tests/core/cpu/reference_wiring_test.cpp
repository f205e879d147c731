// The references are what they claim to be: the host reference is OpenBLAS and exact on
// integer-valued problems (negative increments included), and the device reference is the real
// cuBLAS, not a symbol of ours; also the BLAS vector rule the tests and the bench index with, and
// the host reference GEMV they check by.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/cublas_reference.hpp"
#include "support/random_data.hpp"
#include "support/reference_blas.hpp"
#include "support/reference_gemv.hpp"
#include "support/typed_tests.hpp"

namespace xgemv_test {
namespace {

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

TEST(ReferenceWiring, HostReferenceIsOpenBlas) {
  const std::string path = openblas_library_path();
  EXPECT_NE(lower_case(path).find("openblas"), std::string::npos) << path;
  EXPECT_EQ(path.find("xgemv"), std::string::npos) << path;
  const std::string config = openblas_config();
  EXPECT_EQ(config.rfind("OpenBLAS", 0), 0u) << config;
  std::printf("host reference: %s (%s)\n", path.c_str(), config.c_str());
}

TEST(ReferenceWiring, DeviceReferenceIsCublas) {
  const std::string path = cublas_library_path();
  EXPECT_NE(path.find("libcublas"), std::string::npos) << path;
  EXPECT_EQ(path.find("xgemv"), std::string::npos) << path;
  std::printf("device reference: %s\n", path.c_str());
}

TEST(BlasLayout, StridedVectorsFollowTheBlasStartPointRule) {
  EXPECT_EQ(vector_extent<int64_t>(5, 1), 5);
  EXPECT_EQ(vector_extent<int64_t>(5, -3), 13);
  EXPECT_EQ(vector_extent<int64_t>(0, 2), 0);
  EXPECT_EQ(vector_offset<int64_t>(0, 5, 2), 0);
  EXPECT_EQ(vector_offset<int64_t>(4, 5, 2), 8);
  EXPECT_EQ(vector_offset<int64_t>(0, 5, -2), 8);  // logical element 0 sits at the far end
  EXPECT_EQ(vector_offset<int64_t>(4, 5, -2), 0);
}

// A = [1 2 3; 4 5 6] column-major (m = 2, n = 3).
const double kA[] = {1, 4, 2, 5, 3, 6};

TEST(ReferenceGemv, OpN) {
  const GemvShape s{'N', 2, 3, 2, 1, 1};
  const double x[] = {1, 1, 2};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double y0[] = {nan, nan};  // beta == 0: never read
  EXPECT_EQ(reference_gemv(s, 1, kA, x, 0, y0), (std::vector<double>{9, 21}));
}

TEST(ReferenceGemv, OpTWithScalarsAndNegativeIncrements) {
  const GemvShape s{'T', 2, 3, 2, -1, 2};  // x logical = {3, 1}
  const double x[] = {1, 3};
  const double y0[] = {10, 0, 20, 0, 30};
  // op(A) x = [1 4; 2 5; 3 6] [3; 1] = [7; 11; 15]
  EXPECT_EQ(reference_gemv(s, 2, kA, x, -1, y0),
            (std::vector<double>{2 * 7 - 10, 2 * 11 - 20, 2 * 15 - 30}));
}

TEST(ReferenceGemv, FloatOperandsAreWidenedToDouble) {
  const GemvShape s{'T', 3, 1, 3, 1, 1};
  const float a[] = {16777216.0f, 1.0f, 1.0f};
  const float x[] = {1.0f, 1.0f, 1.0f};
  EXPECT_EQ(reference_gemv(s, 1, a, x, 0, x)[0], 16777218.0);  // fp32 would give 16777216
}

// What Reference BLAS does not read, it does not read: NULL stands for each such operand.
TEST(ReferenceGemv, ReadsOnlyWhatBlasReads) {
  const GemvShape s{'N', 2, 3, 2, 1, 1};
  const double x[] = {1, 1, 2}, y0[] = {5, -7};
  const double *nothing = nullptr;
  EXPECT_EQ(reference_gemv(s, 1, kA, x, 0, nothing), (std::vector<double>{9, 21}));
  EXPECT_EQ(reference_gemv(s, 0, nothing, nothing, -2, y0), (std::vector<double>{-10, 14}));
  // A quick return (m == 0; op T, so y has n elements) leaves y as it was, even with beta == 0.
  const GemvShape no_rows{'T', 0, 2, 1, 1, 1};
  EXPECT_EQ(reference_gemv(no_rows, 2, nothing, nothing, 0, y0), (std::vector<double>{5, -7}));
}

XGEMV_TYPED_TEST_SUITE(ExactHostReference, ::testing::Test);

// Small integers are exact in every element type and every partial sum stays exact, so OpenBLAS
// must agree with reference_gemv to the last bit, and leave the gaps of strided y alone.
TYPED_TEST(ExactHostReference, AgreesExactlyOnIntegerProblems) {
  using T = TypeParam;
  using S = ScalarOf<T>;
  struct Case {
    int64_t m, n, lda_padding, incx, incy;
  };
  constexpr Case kCases[] = {{1, 1, 0, 1, 1},    {3, 5, 2, 2, -1},  {7, 4, 0, -3, 2},
                             {17, 9, 1, -1, -3}, {9, 17, 3, -2, 1}, {16, 16, 0, 1, -1}};
  constexpr char kOps[] = {'N', 'T', 'C'};
  constexpr double kScalars[][2] = {{2, 0}, {-1, 3}, {1, 1}, {0, -2}};
  uint64_t index = 0;
  for (const Case &c : kCases) {
    for (const char op : kOps) {
      for (const auto &[alpha, beta] : kScalars) {
        const GemvShape s{op, c.m, c.n, c.m + c.lda_padding, c.incx, c.incy};
        RandomSource random(case_seed(Element<T>::name, index++));
        auto integers = [&](int64_t count) {
          std::vector<T> values(count);
          for (T &v : values) v = from_double<T>(static_cast<double>(random.integer(-4, 4)));
          return values;
        };
        const std::vector<T> a = integers(s.matrix_extent()), x = integers(s.x_extent()),
                             y = integers(s.y_extent());
        SCOPED_TRACE(std::string("op ") + op + " m=" + std::to_string(s.m) +
                     " n=" + std::to_string(s.n) + " incx=" + std::to_string(s.incx) +
                     " incy=" + std::to_string(s.incy) + " alpha=" + std::to_string(alpha) +
                     " beta=" + std::to_string(beta));
        const std::vector<S> got = openblas_gemv<T>(s, static_cast<S>(alpha), a.data(), x.data(),
                                                    static_cast<S>(beta), y.data());
        const std::vector<double> want =
            reference_gemv(s, alpha, a.data(), x.data(), beta, y.data());
        std::vector<double> want_storage(y.size());
        for (size_t i = 0; i < y.size(); ++i) want_storage[i] = to_double(y[i]);
        for (int64_t i = 0; i < s.y_length(); ++i)
          want_storage[vector_offset(i, s.y_length(), s.incy)] = want[i];
        for (size_t i = 0; i < y.size(); ++i)
          EXPECT_EQ(static_cast<double>(got[i]), want_storage[i]) << "y storage offset " << i;
      }
    }
  }
}

}  // namespace
}  // namespace xgemv_test
