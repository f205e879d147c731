// Ordering with the kernel before an xgemv call (programmatic dependent launch). A predecessor
// that lets its successor launch at once and writes A, x or y only after a delay proves that
// the default mode reads nothing before it has finished, and that early start reads x, y and
// the scalars only after it; chains of calls, each reading the y of the one before, prove the
// same between xgemv's own kernels, on streams and in CUDA graphs. Integer data: exact checks.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "late_writer.hpp"
#include "support/device_buffer.hpp"
#include "support/graph_capture.hpp"
#include "support/reference_gemv.hpp"
#include "support/xgemv_calls.hpp"

namespace xgemv_test {
namespace {

constexpr uint64_t kDelayNs = 50000;

std::vector<float> small_integers(size_t count, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> value(-2, 2);
  std::vector<float> v(count);
  for (float &e : v) e = float(value(random));
  return v;
}

class LaunchOrder : public ::testing::TestWithParam<bool /*early start*/> {
 protected:
  void SetUp() override {
    ASSERT_EQ(xgemv_create(&handle_), XGEMV_STATUS_SUCCESS);
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
    ASSERT_EQ(xgemv_set_stream(handle_, stream_), XGEMV_STATUS_SUCCESS);
    ASSERT_EQ(xgemv_set_early_start(handle_, GetParam() ? 1 : 0), XGEMV_STATUS_SUCCESS);
    int enabled = -1;
    ASSERT_EQ(xgemv_get_early_start(handle_, &enabled), XGEMV_STATUS_SUCCESS);
    ASSERT_EQ(enabled, GetParam() ? 1 : 0);
  }
  void TearDown() override {
    xgemv_destroy(handle_);
    cudaStreamDestroy(stream_);
  }
  xgemv_handle handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

enum class Written { a, x, y };

// The predecessor overwrites one operand late; the call must see the new values (early start:
// only x and y may be written by the predecessor).
void late_write_case(xgemv_handle handle, cudaStream_t stream, const GemvShape &s,
                     Written written, bool in_graph) {
  SCOPED_TRACE(::testing::Message() << "op " << s.trans << " " << s.m << "x" << s.n << " writes "
                                    << "axy"[int(written)] << (in_graph ? " in a graph" : ""));
  const float alpha = 1, beta = written == Written::y ? -1.5f : 0.5f;
  const std::vector<float> a_old = small_integers(size_t(s.matrix_extent()), 1);
  const std::vector<float> x_old = small_integers(size_t(s.x_extent()), 2);
  const std::vector<float> y_old = small_integers(size_t(s.y_extent()), 3);
  const std::vector<float> &old = written == Written::a ? a_old : written == Written::x ? x_old : y_old;
  const std::vector<float> fresh = small_integers(old.size(), 4);
  GuardedDeviceBuffer<float> a(a_old.size()), x(x_old.size()), y(y_old.size()), source(fresh.size());
  a.upload(a_old);
  x.upload(x_old);
  y.upload(y_old);
  source.upload(fresh);
  float *target = written == Written::a ? a.data() : written == Written::x ? x.data() : y.data();

  const auto enqueue = [&] {
    check_cuda(copy_after_delay(target, source.data(), int64_t(fresh.size()), kDelayNs, stream),
               "copy_after_delay");
    ASSERT_EQ(xgemv::gemv(handle, s.trans, s.m, s.n, &alpha, a.data(), s.lda, x.data(), s.incx,
                         &beta, y.data(), s.incy),
              XGEMV_STATUS_SUCCESS);
  };
  if (in_graph) {
    GraphCapture capture(stream, cudaStreamCaptureModeGlobal);
    enqueue();
    check_cuda(capture.end(), "end capture");
    capture.replay();
  } else {
    enqueue();
    check_cuda(cudaStreamSynchronize(stream), "calls");
  }
  const std::vector<double> expected = reference_gemv(
      s, alpha, written == Written::a ? fresh.data() : a_old.data(),
      written == Written::x ? fresh.data() : x_old.data(), beta,
      written == Written::y ? fresh.data() : y_old.data(), Identity{});
  const std::vector<float> got = y.download();
  for (int64_t i = 0; i < s.y_length(); ++i)
    ASSERT_EQ(got[size_t(vector_offset(i, s.y_length(), s.incy))], float(expected[size_t(i)]))
        << "y[" << i << "]";
}

TEST_P(LaunchOrder, CallsSeeWhatTheKernelBeforeThemWroteLate) {
  const GemvShape shapes[] = {{'T', 1024, 1024, 1024, 1, 1},
                              {'N', 1024, 1024, 1024, 1, 1},
                              {'T', 200000, 16, 200000, 1, 1},  // split reduction
                              {'T', 4099, 67, 4101, 1, 1},  // odd lda: x shifted against A
                              {'N', 333, 777, 335, -2, 3}};
  for (const GemvShape &s : shapes)
    for (const Written written : {Written::a, Written::x, Written::y})
      for (const bool in_graph : {false, true}) {
        if (GetParam() && written == Written::a) continue;  // early start's contract
        late_write_case(handle_, stream_, s, written, in_graph);
      }
}

// y_i = P_i^T y_{i-1} with permutation matrices P_i: every call reads the y its predecessor
// wrote, and the result is an exact permutation of the input.
TEST_P(LaunchOrder, ChainsOfCallsReadTheirPredecessorsOutput) {
  constexpr int64_t kSize = 2048;
  constexpr int kCalls = 24;
  std::mt19937 random(7);
  std::vector<std::vector<int64_t>> permutations(kCalls, std::vector<int64_t>(kSize));
  std::vector<std::unique_ptr<GuardedDeviceBuffer<float>>> matrices;
  for (auto &permutation : permutations) {
    std::iota(permutation.begin(), permutation.end(), 0);
    std::shuffle(permutation.begin(), permutation.end(), random);
    std::vector<float> matrix(size_t(kSize * kSize), 0.0f);
    for (int64_t j = 0; j < kSize; ++j) matrix[size_t(permutation[size_t(j)] + j * kSize)] = 1.0f;
    matrices.push_back(std::make_unique<GuardedDeviceBuffer<float>>(matrix.size()));
    matrices.back()->upload(matrix);
  }
  const std::vector<float> input = small_integers(size_t(kSize), 5);
  std::vector<float> expected = input;
  for (int i = 0; i < kCalls; ++i) {  // op T: y[j] = x[P(j)]; op N (odd i): y[P(j)] = x[j]
    std::vector<float> permuted(static_cast<size_t>(kSize));
    for (int64_t j = 0; j < kSize; ++j) {
      const size_t p = size_t(permutations[size_t(i)][size_t(j)]);
      if (i % 2 == 0) permuted[size_t(j)] = expected[p];
      else permuted[p] = expected[size_t(j)];
    }
    expected = permuted;
  }
  for (const bool in_graph : {false, true}) {
    SCOPED_TRACE(in_graph ? "in a graph" : "on a stream");
    std::vector<std::unique_ptr<GuardedDeviceBuffer<float>>> vectors;
    for (int i = 0; i <= kCalls; ++i)
      vectors.push_back(std::make_unique<GuardedDeviceBuffer<float>>(size_t(kSize)));
    vectors[0]->upload(input);
    const float alpha = 1, beta = 0;
    std::optional<GraphCapture> capture;
    if (in_graph) capture.emplace(stream_, cudaStreamCaptureModeGlobal);
    for (int i = 0; i < kCalls; ++i)
      ASSERT_EQ(xgemv::gemv(handle_, i % 2 == 0 ? 'T' : 'N', kSize, kSize, &alpha,
                           matrices[size_t(i)]->data(), kSize, vectors[size_t(i)]->data(), 1,
                           &beta, vectors[size_t(i) + 1]->data(), 1),
                XGEMV_STATUS_SUCCESS);
    if (capture) {
      check_cuda(capture->end(), "end capture");
      capture->replay();
    }
    check_cuda(cudaStreamSynchronize(stream_), "chain");
    EXPECT_EQ(vectors[kCalls]->download(), expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, LaunchOrder, ::testing::Values(false, true),
                         [](const auto &info) { return info.param ? "EarlyStart" : "Ordered"; });

}  // namespace
}  // namespace xgemv_test
