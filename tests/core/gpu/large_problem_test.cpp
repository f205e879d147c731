// One fp16 problem with m*n > 2^31 elements (offsets past 32 bits) in both ops. A is generated on
// the device from a hash of the element index; its small integers keep every fp32 partial sum
// exact, so the host computes the exact answer in integers and xgemv must match it after the one
// rounding to fp16. cuBLAS is checked against the same answer within the usual bound.
// The sanitizer profile keeps the code path with 2^20 + 3*2^10 elements.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemv_case.hpp"
#include "support/hashed_integers.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test {
namespace {

constexpr int64_t kRows = int64_t(1) << 16;
constexpr int64_t kColumns = (int64_t(1) << 15) + 3;  // m*n = 2^31 + 3*2^16
constexpr int64_t kSanitizerRows = int64_t(1) << 10, kSanitizerColumns = (int64_t(1) << 10) + 3;
constexpr uint64_t kMatrixSeed = 0xA11CE;
constexpr int32_t kMatrixBound = 2;  // |A| <= 2, |x| <= 2: |partial sums| <= 4*2^16 < 2^24

static_assert(kRows * kColumns > (int64_t(1) << 31));

struct ExactResult {
  std::vector<double> y;          // alpha*op(A)*x + beta*y, exact
  std::vector<double> magnitude;  // |alpha| |op(A)| |x| + |beta| |y|, for the cuBLAS bound
};

// Exact y for integer alpha, beta and data, computed in int64 from the same hash as the device
// fill, on every host core (each thread owns a range of outputs).
ExactResult exact_gemv(const GemvShape &s, int64_t alpha, const std::vector<int64_t> &x,
                       int64_t beta, const std::vector<int64_t> &y) {
  const int64_t outputs = s.y_length();
  std::vector<int64_t> dot(outputs, 0), dot_magnitude(outputs, 0);
  const auto element = [&](int64_t i, int64_t j) {
    return int64_t{
        hashed_integer(kMatrixSeed, uint64_t(j * s.lda + i), -kMatrixBound, kMatrixBound)};
  };
  const auto compute = [&](int64_t first, int64_t last) {
    if (s.transposed()) {
      for (int64_t j = first; j < last; ++j)
        for (int64_t i = 0; i < s.m; ++i) {
          const int64_t product = element(i, j) * x[i];
          dot[j] += product;
          dot_magnitude[j] += std::abs(product);
        }
    } else {
      for (int64_t j = 0; j < s.n; ++j)
        for (int64_t i = first; i < last; ++i) {
          const int64_t product = element(i, j) * x[j];
          dot[i] += product;
          dot_magnitude[i] += std::abs(product);
        }
    }
  };
  const int64_t threads = std::max(1u, std::thread::hardware_concurrency());
  const int64_t chunk = (outputs + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (int64_t first = 0; first < outputs; first += chunk)
    workers.emplace_back(compute, first, std::min(outputs, first + chunk));
  for (std::thread &worker : workers) worker.join();

  ExactResult result{std::vector<double>(outputs), std::vector<double>(outputs)};
  for (int64_t i = 0; i < outputs; ++i) {
    result.y[i] = double(alpha * dot[i] + beta * y[i]);
    result.magnitude[i] = double(std::abs(alpha) * dot_magnitude[i] + std::abs(beta * y[i]));
  }
  return result;
}

std::vector<int64_t> hashed_vector(int64_t length, uint64_t seed, int32_t bound) {
  std::vector<int64_t> values(length);
  for (int64_t i = 0; i < length; ++i) values[i] = hashed_integer(seed, uint64_t(i), -bound, bound);
  return values;
}

std::vector<__half> to_half(const std::vector<int64_t> &values) {
  std::vector<__half> result(values.size());
  for (size_t i = 0; i < values.size(); ++i) result[i] = from_double<__half>(double(values[i]));
  return result;
}

TEST(LargeProblem, Fp16BeyondTwoToThe31ElementsIsExact) {
  GpuHandles gpu;
  const int64_t rows = by_profile(kRows, kSanitizerRows);
  const int64_t columns = by_profile(kColumns, kSanitizerColumns);
  GuardedDeviceBuffer<__half> a(size_t(rows * columns));
  check_cuda(fill_hashed_integers(a.data(), rows * columns, kMatrixSeed, -kMatrixBound,
                                  kMatrixBound, nullptr),
             "fill A");
  struct OpCase {
    char trans;
    int64_t alpha, beta;
  };
  for (const OpCase &op : {OpCase{'N', 1, 0}, OpCase{'T', 2, -1}}) {
    const GemvShape s{op.trans, rows, columns, rows, 1, 1};
    SCOPED_TRACE(std::string("op ") + op.trans + " m=" + std::to_string(s.m) +
                 " n=" + std::to_string(s.n));
    const std::vector<int64_t> x = hashed_vector(s.x_length(), 0xB0B, kMatrixBound);
    const std::vector<int64_t> y = hashed_vector(s.y_length(), 0xCAFE, 8);
    const ExactResult exact = exact_gemv(s, op.alpha, x, op.beta, y);

    GuardedDeviceBuffer<__half> x_device(x.size()), y_device(y.size());
    x_device.upload(to_half(x));
    const float alpha = float(op.alpha), beta = float(op.beta);
    const GemvOperands<__half> operands{&alpha, a.data(), x_device.data(), &beta, y_device.data()};
    const auto call_xgemv = [&] {
      y_device.upload(to_half(y));
      EXPECT_EQ(xgemv_gemv<__half>(gpu.xgemv(), s, nullptr, operands), XGEMV_STATUS_SUCCESS);
      check_cuda(cudaDeviceSynchronize(), "synchronize after xgemv");
      return y_device.download();
    };
    const std::vector<__half> result = call_xgemv();
    // y is dense (incy = 1): its logical vectors are its storage images.
    EXPECT_TRUE(equals_exact_result(s, BatchLayout{}, 1, result, exact.y));
    EXPECT_TRUE(bitwise_equal("y of the same call repeated", call_xgemv(), result));
    EXPECT_TRUE(a.guards_intact("A"));
    EXPECT_TRUE(y_device.guards_intact("y"));

    y_device.upload(to_half(y));
    ASSERT_EQ(cublas_gemv<__half>(gpu.cublas(), s, nullptr, alpha, a.data(), x_device.data(), beta,
                                  y_device.data()),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_TRUE(within_error_bound("the exact result", s, BatchLayout{}, 1, y_device.download(),
                                   exact.y, exact.magnitude))
        << "cuBLAS itself";
  }
}

}  // namespace
}  // namespace xgemv_test
