// Huge problems, where 32-bit index arithmetic breaks: one dimension above 2^31 with the other
// tiny (tall and wide, in op N and op T, so that both the outputs and the reduction pass 2^31),
// and a tiny problem whose lda and increments put elements beyond 2^32 and 2^31 elements from
// the base pointer (op N and op C, negative increments included). fp32 with integer data from a
// hash of each element's offset, generated on the device; the host computes the exact answer in
// pieces from the same hash, so nothing of the size of the problem is ever copied to the host
// except y. Every logical y element must equal the exact value, and every other element of A, x
// and y must still hold its hash (checked on the device), the guards around them intact.
// The sanitizer profile keeps the shapes with dimensions near 2^20 instead of 2^31.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hash_check.hpp"
#include "support/gemv_case.hpp"
#include "support/hashed_integers.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test {
namespace {

constexpr uint64_t kSeedA = 0x5EED0A, kSeedX = 0x5EED0B, kSeedY = 0x5EED0C;
constexpr int32_t kBoundAX = 2, kBoundY = 8;

int64_t a_value(int64_t offset) { return hashed_integer(kSeedA, offset, -kBoundAX, kBoundAX); }
int64_t x_value(int64_t offset) { return hashed_integer(kSeedX, offset, -kBoundAX, kBoundAX); }
int64_t y_value(int64_t offset) { return hashed_integer(kSeedY, offset, -kBoundY, kBoundY); }

// 2^(e+1) + 5 for the long dimension; an increment of 2^e + 2 puts element 2 of a vector at
// 2^(e+1) + 4; lda = 3 * 2^e + 5 puts column 2 at 3 * 2^(e+1) + 10, past 2^32 when e = 30.
struct HugeSizes {
  int exponent = by_profile(30, 19);
  int64_t long_dimension = (int64_t(1) << (exponent + 1)) + 5;
  int64_t large_increment = (int64_t(1) << exponent) + 2;
  int64_t large_lda = 3 * (int64_t(1) << exponent) + 5;
  // A holds 3 columns of the long dimension; x and y one long vector each.
  int64_t a_elements = 3 * long_dimension;
  int64_t vector_elements = long_dimension;
};

struct HugeCase {
  const char *what;
  GemvShape shape;
  float alpha, beta;
};

std::vector<HugeCase> huge_cases(const HugeSizes &z) {
  const int64_t L = z.long_dimension, inc = z.large_increment, lda = z.large_lda;
  return {
      {"tall, op N: 2^31+ outputs", {'N', L, 3, L, 1, 1}, 2, -1},
      {"tall, op T: 2^31+ long reductions", {'T', L, 3, L, 1, 1}, -1, 2},
      {"wide, op N: a 2^31+ long reduction", {'N', 3, L, 3, 1, 1}, 1, 1},
      {"wide, op T: 2^31+ outputs", {'T', 3, L, 3, 1, 1}, 3, 0},
      {"large lda and increments, op N", {'N', 3, 3, lda, -inc, inc}, -2, 1},
      {"large lda and increments, op C", {'C', 3, 3, lda, inc, -inc}, 1, -3},
  };
}

std::string describe(const HugeCase &c) {
  std::ostringstream text;
  text << c.what << ": m=" << c.shape.m << " n=" << c.shape.n << " lda=" << c.shape.lda
       << " incx=" << c.shape.incx << " incy=" << c.shape.incy << " alpha=" << c.alpha
       << " beta=" << c.beta;
  return text.str();
}

// The exact y of logical outputs [first, first + count), in integers: the outputs split into one
// block per host thread when there are many, else the reduction split and the partial sums added.
std::vector<int64_t> exact_outputs(const HugeCase &c, int64_t first, int64_t count) {
  const GemvShape &s = c.shape;
  const int64_t x_length = s.x_length(), y_length = s.y_length();
  const auto product = [&](int64_t r, int64_t p) {
    const int64_t a_offset = s.transposed() ? p + r * s.lda : r + p * s.lda;
    return a_value(a_offset) * x_value(vector_offset(p, x_length, s.incx));
  };
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const bool split_outputs = count >= threads;
  const int64_t block = (count + threads - 1) / threads;
  std::vector<int64_t> dot(count, 0);
  std::vector<std::vector<int64_t>> partial(threads);  // per thread, when the reduction is split
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      if (split_outputs) {
        for (int64_t i = t * block; i < std::min(count, (t + 1) * block); ++i) {
          int64_t sum = 0;
          for (int64_t p = 0; p < x_length; ++p) sum += product(first + i, p);
          dot[i] = sum;
        }
      } else {
        std::vector<int64_t> sums(count, 0);  // local: no cache line shared with other threads
        for (int64_t p = t; p < x_length; p += threads)
          for (int64_t i = 0; i < count; ++i) sums[i] += product(first + i, p);
        partial[t] = std::move(sums);
      }
    });
  for (std::thread &worker : workers) worker.join();
  if (!split_outputs)
    for (const std::vector<int64_t> &sums : partial)
      for (int64_t i = 0; i < count; ++i) dot[i] += sums[i];
  std::vector<int64_t> y(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t y_in = c.beta == 0 ? 0 : y_value(vector_offset(first + i, y_length, s.incy));
    y[i] = int64_t(c.alpha) * dot[i] + int64_t(c.beta) * y_in;
  }
  return y;
}

// Compares the logical y elements with the exact values: downloaded in chunks when y is long
// (contiguous in these cases), element by element when it is short.
::testing::AssertionResult y_is_exact(const HugeCase &c, const float *y) {
  const GemvShape &s = c.shape;
  const int64_t y_length = s.y_length();
  const int64_t chunk = y_length > 64 ? int64_t(1) << 24 : y_length;
  std::vector<float> got(chunk);
  int64_t wrong = 0;
  std::ostringstream first_wrong;
  for (int64_t first = 0; first < y_length; first += chunk) {
    const int64_t count = std::min(chunk, y_length - first);
    if (s.incy == 1) {
      check_cuda(cudaMemcpy(got.data(), y + first, count * sizeof(float), cudaMemcpyDeviceToHost),
                 "download y");
    } else {
      for (int64_t i = 0; i < count; ++i)
        check_cuda(cudaMemcpy(&got[i], y + vector_offset(first + i, y_length, s.incy),
                              sizeof(float), cudaMemcpyDeviceToHost),
                   "download y element");
    }
    const std::vector<int64_t> want = exact_outputs(c, first, count);
    for (int64_t i = 0; i < count; ++i) {
      // Integers below 2^24 are exact in fp32, and so is every partial sum of these data.
      if (std::abs(want[i]) < (int64_t(1) << 24) && got[i] == float(want[i])) continue;
      if (wrong++ < 5)
        first_wrong << "\n  y[" << first + i << "] = " << got[i] << ", exact " << want[i];
    }
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << wrong << " elements of y are not exact:" << first_wrong.str();
}

TEST(HugeProblem, IndicesBeyond32BitsAreExact) {
  const HugeSizes z;
  const double needed_bytes = double(z.a_elements + 2 * z.vector_elements) * sizeof(float);
  size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (double(free_bytes) < needed_bytes * 1.05)
    GTEST_SKIP() << "needs " << needed_bytes / 1e9 << " GB of device memory, " << free_bytes / 1e9
                 << " GB free";

  xgemv_handle handle = nullptr;
  ASSERT_EQ(xgemv_create(&handle), XGEMV_STATUS_SUCCESS);
  GuardedDeviceBuffer<float> a(z.a_elements), x(z.vector_elements), y(z.vector_elements);
  check_cuda(fill_hashed_integers(a.data(), z.a_elements, kSeedA, -kBoundAX, kBoundAX, nullptr),
             "fill A");
  check_cuda(
      fill_hashed_integers(x.data(), z.vector_elements, kSeedX, -kBoundAX, kBoundAX, nullptr),
      "fill x");

  for (const HugeCase &c : huge_cases(z)) {
    SCOPED_TRACE(describe(c));
    const GemvShape &s = c.shape;
    ASSERT_LE(s.matrix_extent(), z.a_elements);
    ASSERT_LE(std::max(s.x_extent(), s.y_extent()), z.vector_elements);
    check_cuda(
        fill_hashed_integers(y.data(), z.vector_elements, kSeedY, -kBoundY, kBoundY, nullptr),
        "fill y");
    EXPECT_EQ(xgemv_sgemv(handle, s.trans, s.m, s.n, &c.alpha, a.data(), s.lda, x.data(), s.incx,
                          &c.beta, y.data(), s.incy),
              XGEMV_STATUS_SUCCESS);
    check_cuda(cudaDeviceSynchronize(), "synchronize after xgemv");

    EXPECT_TRUE(y_is_exact(c, y.data()));
    EXPECT_EQ(count_changed_hashed(y.data(), z.vector_elements, kSeedY, -kBoundY, kBoundY,
                                   std::abs(s.incy), s.y_length(), nullptr),
              0)
        << "elements of y's storage between its elements changed";
    for (const ::testing::AssertionResult &guards :
         {a.guards_intact("A"), x.guards_intact("x"), y.guards_intact("y")})
      EXPECT_TRUE(guards);
  }
  // A and x are only read: checked once, after all the calls (each check hashes every element).
  EXPECT_EQ(
      count_changed_hashed(a.data(), z.a_elements, kSeedA, -kBoundAX, kBoundAX, 1, 0, nullptr), 0)
      << "elements of A changed";
  EXPECT_EQ(
      count_changed_hashed(x.data(), z.vector_elements, kSeedX, -kBoundAX, kBoundAX, 1, 0, nullptr),
      0)
      << "elements of x changed";
  EXPECT_EQ(xgemv_destroy(handle), XGEMV_STATUS_SUCCESS);
  std::printf(
      "huge problems: long dimension %lld, A %lld elements (%.1f GB), lda %lld, increment %lld\n",
      static_cast<long long>(z.long_dimension), static_cast<long long>(z.a_elements),
      double(z.a_elements) * sizeof(float) / 1e9, static_cast<long long>(z.large_lda),
      static_cast<long long>(z.large_increment));
}

}  // namespace
}  // namespace xgemv_test
