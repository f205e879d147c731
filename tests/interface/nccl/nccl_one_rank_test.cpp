// libxgemv_nccl on one GPU: a communicator of one rank (ncclCommInitAll with one device), so
// that every layout goes through NCCL where only one GPU is. Both splits, both results, ops N
// and T, all four element types, host and device scalars, the BLAS specials (beta = 0 with NaN in
// y, alpha = 0 with NaN in A and x, the quick return), strided x and y, padded lda: the outputs
// split bit for bit the single-GPU call on the whole matrix, the reduction split within the
// rounding bound of OpenBLAS with the same bits from call to call (split_case.hpp). Also the
// checks that need a communicator, an empty problem, and calls captured in a CUDA graph.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "split_case.hpp"
#include "support/graph_capture.hpp"
#include "support/test_profile.hpp"

namespace xgemv_test {
namespace {

constexpr xgemv_split kOutputs = XGEMV_SPLIT_OUTPUTS, kReduction = XGEMV_SPLIT_REDUCTION;
constexpr xgemv_result kAll = XGEMV_RESULT_ALL, kOwn = XGEMV_RESULT_OWN_BLOCK;

class NcclOneRank : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ranks_ = std::make_unique<Ranks>(std::vector<int>{0}); }
  static void TearDownTestSuite() { ranks_.reset(); }
  void SetUp() override { ASSERT_NE(ranks_, nullptr) << "making the communicator failed"; }
  static const Ranks &ranks() { return *ranks_; }
  static const Rank &rank() { return (*ranks_)[0]; }

 private:
  static inline std::unique_ptr<Ranks> ranks_;
};

struct ScalarPair {
  ScalarChoice alpha, beta;
};
constexpr ScalarPair kScalarPairs[] = {
    {ScalarChoice::random, ScalarChoice::random},
    {ScalarChoice::random, ScalarChoice::zero},  // y NaN: must not be read
    {ScalarChoice::zero, ScalarChoice::random},  // A, x NaN: must not be read
    {ScalarChoice::zero, ScalarChoice::one},     // quick return (host scalars)
    {ScalarChoice::one, ScalarChoice::one},
};

template <class T>
void every_layout(const Ranks &ranks) {
  struct Shape {
    int64_t m, n, lda_padding, incx, incy;
  };
  // incy applies to the outputs split keeping own blocks; y is contiguous everywhere else.
  const Shape shapes[] = {{257, 131, 3, 1, 1}, {64, 1000, 0, -2, -3}, {1, 1, 0, 1, 1}};
  std::vector<SplitCase> cases;
  for (const xgemv_split split : {kOutputs, kReduction})
    for (const xgemv_result result : {kAll, kOwn})
      for (const char trans : {'N', 'T'})
        for (const xgemv_pointer_mode mode : {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE})
          for (const ScalarPair &scalars : kScalarPairs)
            for (const Shape &shape : shapes) {
              const bool strided_y = split == kOutputs && result == kOwn;
              cases.push_back({split, result, trans, shape.m, shape.n, shape.lda_padding,
                               shape.incx, strided_y ? shape.incy : 1, scalars.alpha,
                               scalars.beta, mode, {}});
            }
  // Long reductions, which the core splits across thread blocks.
  const int64_t long_axis = by_profile<int64_t>(70000, 3000);
  for (const xgemv_split split : {kOutputs, kReduction}) {
    cases.push_back({split, kAll, 'N', 64, long_axis, 0, 1, 1, ScalarChoice::random,
                     ScalarChoice::random, XGEMV_POINTER_MODE_HOST, {}});
    cases.push_back({split, kAll, 'T', long_axis, 64, 0, 1, 1, ScalarChoice::random,
                     ScalarChoice::random, XGEMV_POINTER_MODE_HOST, {}});
  }
  for (size_t i = 0; i < cases.size(); ++i)
    run_split_case<T>(cases[i], ranks, case_seed(std::string("one rank ") + Element<T>::name, i));
}

TEST_F(NcclOneRank, EveryLayoutMatchesTheSingleGpuCall) {
  for_each_element_type([&]<class T>() { every_layout<T>(ranks()); });
}

// m == 0 or n == 0, and alpha == 0 with beta == 1 (host scalars): success, nothing read or
// written, no workspace needed, for every layout.
template <class T>
void empty_problems(const Rank &rank) {
  using S = ScalarOf<T>;
  const S zero = 0, one = 1, two = 2;
  GuardedDeviceBuffer<T> y(16);
  std::vector<T> y_initial(16, from_double<T>(0.75));
  y.upload(y_initial);
  xgemv_set_pointer_mode(rank.handle, XGEMV_POINTER_MODE_HOST);
  for (const xgemv_split split : {kOutputs, kReduction})
    for (const xgemv_result result : {kAll, kOwn})
      for (const char trans : {'N', 'T'}) {
        SCOPED_TRACE(std::string(split_name(split)) + ", " + result_name(result) + ", op " +
                     trans + ", " + Element<T>::name);
        struct Empty {
          int64_t m, n;
          const S *alpha, *beta;
        };
        for (const Empty &e : {Empty{0, 5, &two, &two}, Empty{5, 0, &two, &two},
                               Empty{0, 0, nullptr, nullptr}, Empty{5, 4, &zero, &one}}) {
          const bool transposed = trans == 'T';
          const int64_t axis = split == kOutputs ? (transposed ? e.n : e.m)
                                                 : (transposed ? e.m : e.n);
          const int64_t starts[] = {0, axis};
          EXPECT_EQ(xgemv_nccl_gemv<T>(rank.handle, rank.comm, split, result, starts, trans, e.m,
                                       e.n, e.alpha, nullptr, std::max<int64_t>(1, e.m),
                                       nullptr, 1, e.beta, e.m == 5 && e.n == 4 ? y.data()
                                                                                 : nullptr,
                                       1, nullptr, 0),
                    XGEMV_STATUS_SUCCESS)
              << "m=" << e.m << " n=" << e.n;
        }
      }
  check_cuda(cudaStreamSynchronize(rank.stream), "synchronize");
  EXPECT_TRUE(bitwise_equal("y after quick returns", y.download(), y_initial));
  EXPECT_TRUE(y.guards_intact("y"));
}

TEST_F(NcclOneRank, EmptyProblemsTouchNothing) {
  for_each_element_type([&]<class T>() { empty_problems<T>(rank()); });
}

// The checks that need the communicator's rank count, the handle or the workspace: each refused
// call writes nothing and leaves no CUDA error behind.
TEST_F(NcclOneRank, ChecksWithACommunicatorRefuseAndTouchNothing) {
  const Rank &r = rank();
  constexpr int64_t m = 8, n = 4;
  GuardedDeviceBuffer<float> a(m * n), x(m), y(m);
  const std::vector<float> y_initial(m, 0.5f);
  y.upload(y_initial);
  const float one = 1, half = 0.5f;
  const size_t bytes = xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', m, n, 1, 4);
  ASSERT_GT(bytes, 0u);
  GuardedDeviceBuffer<unsigned char> workspace(bytes);
  xgemv_set_pointer_mode(r.handle, XGEMV_POINTER_MODE_HOST);
  struct Refused {
    const char *what;
    xgemv_handle handle;
    xgemv_split split;
    xgemv_result result;
    std::vector<int64_t> starts;  // empty: NULL
    char trans;
    int64_t lda, incy;
    const float *alpha;
    const float *a;
    float *y;
    void *workspace;
    size_t workspace_bytes;
    xgemv_status expected;
  };
  // m x n = 8 x 4, op N: 8 outputs, a reduction of 4; op T: 4 outputs, a reduction of 8.
  const std::vector<Refused> refused = {
      {"NULL starts", r.handle, kOutputs, kAll, {}, 'N', m, 1, &one, a.data(), y.data(),
       nullptr, 0, XGEMV_STATUS_INVALID_SPLIT},
      {"starts[0] != 0", r.handle, kOutputs, kAll, {1, m}, 'N', m, 1, &one, a.data(), y.data(),
       nullptr, 0, XGEMV_STATUS_INVALID_SPLIT},
      {"starts short of the axis", r.handle, kOutputs, kOwn, {0, m - 1}, 'N', m, 1, &one,
       a.data(), y.data(), nullptr, 0, XGEMV_STATUS_INVALID_SPLIT},
      {"starts of the outputs for the reduction", r.handle, kReduction, kAll, {0, m}, 'N', m, 1,
       &one, a.data(), y.data(), workspace.data(), bytes, XGEMV_STATUS_INVALID_SPLIT},
      {"the layout before incy", r.handle, kReduction, kAll, {0, m}, 'N', m, 2, &one, a.data(),
       y.data(), workspace.data(), bytes, XGEMV_STATUS_INVALID_SPLIT},
      {"lda < rows of the block (outputs, op N)", r.handle, kOutputs, kOwn, {0, m}, 'N', m - 1,
       1, &one, a.data(), y.data(), nullptr, 0, XGEMV_STATUS_INVALID_LDA},
      {"lda < rows of the block (reduction, op T)", r.handle, kReduction, kAll, {0, m}, 'T',
       m - 1, 1, &one, a.data(), y.data(), workspace.data(), bytes, XGEMV_STATUS_INVALID_LDA},
      {"incy 2, whole y", r.handle, kOutputs, kAll, {0, m}, 'N', m, 2, &one, a.data(), y.data(),
       nullptr, 0, XGEMV_STATUS_NOT_SUPPORTED},
      {"incy -1, reduction own block", r.handle, kReduction, kOwn, {0, n}, 'N', m, -1, &one,
       a.data(), y.data(), workspace.data(), bytes, XGEMV_STATUS_NOT_SUPPORTED},
      {"NULL handle", nullptr, kOutputs, kAll, {0, m}, 'N', m, 1, &one, a.data(), y.data(),
       nullptr, 0, XGEMV_STATUS_INVALID_HANDLE},
      {"NULL alpha", r.handle, kOutputs, kAll, {0, m}, 'N', m, 1, nullptr, a.data(), y.data(),
       nullptr, 0, XGEMV_STATUS_NULL_POINTER},
      {"NULL A", r.handle, kOutputs, kOwn, {0, m}, 'N', m, 1, &one, nullptr, y.data(), nullptr,
       0, XGEMV_STATUS_NULL_POINTER},
      {"NULL y", r.handle, kReduction, kAll, {0, n}, 'N', m, 1, &one, a.data(), nullptr,
       workspace.data(), bytes, XGEMV_STATUS_NULL_POINTER},
      {"NULL workspace", r.handle, kReduction, kAll, {0, n}, 'N', m, 1, &one, a.data(), y.data(),
       nullptr, bytes, XGEMV_STATUS_NULL_POINTER},
      {"workspace one byte short", r.handle, kReduction, kOwn, {0, n}, 'N', m, 1, &one, a.data(),
       y.data(), workspace.data(), bytes - 1, XGEMV_STATUS_NULL_POINTER},
  };
  for (const Refused &c : refused) {
    SCOPED_TRACE(c.what);
    const xgemv_status status = xgemv_nccl_sgemv(
        c.handle, r.comm, c.split, c.result, c.starts.empty() ? nullptr : c.starts.data(),
        c.trans, m, n, c.alpha, c.a, c.lda, x.data(), 1, &half, c.y, c.incy, c.workspace,
        c.workspace_bytes);
    EXPECT_EQ(status, c.expected) << xgemv_status_string(status);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_TRUE(bitwise_equal("y after refused calls", y.download(), y_initial));
  // The same arguments otherwise valid are accepted (the outputs split keeping its block takes
  // any incy; a larger workspace will do).
  EXPECT_EQ(xgemv_nccl_sgemv(r.handle, r.comm, kOutputs, kOwn, std::vector<int64_t>{0, n}.data(),
                             'T', m, n, &one, a.data(), m, x.data(), 1, &half, y.data(), 2,
                             nullptr, 0),
            XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(xgemv_nccl_sgemv(r.handle, r.comm, kReduction, kOwn,
                             std::vector<int64_t>{0, n}.data(), 'N', m, n, &one, a.data(), m,
                             x.data(), 1, &half, y.data(), 1, workspace.data(), bytes),
            XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(cudaStreamSynchronize(r.stream), cudaSuccess);
  EXPECT_TRUE(workspace.guards_intact("workspace"));
}

// Calls captured on the handle's stream and replayed: the eager call's bits; with device scalars
// a replay reads the values the scalars hold then.
template <class T>
void graph_replays(const Rank &rank) {
  using S = ScalarOf<T>;
  constexpr int64_t m = 300, n = 200;
  RandomSource random(case_seed(std::string("graph ") + Element<T>::name, 0));
  std::vector<T> a(m * n), x(std::max(m, n)), y(std::max(m, n));
  for (T &v : a) v = random.element<T>();
  for (T &v : x) v = random.element<T>();
  for (T &v : y) v = random.element<T>();
  GuardedDeviceBuffer<T> a_device(a.size()), x_device(x.size()), y_device(y.size());
  a_device.upload(a);
  x_device.upload(x);
  GuardedDeviceBuffer<S> scalars(2);
  for (const xgemv_split split : {kOutputs, kReduction})
    for (const char trans : {'N', 'T'})
      for (const xgemv_pointer_mode mode :
           {XGEMV_POINTER_MODE_HOST, XGEMV_POINTER_MODE_DEVICE}) {
        SCOPED_TRACE(std::string(split_name(split)) + ", op " + trans +
                     (mode == XGEMV_POINTER_MODE_DEVICE ? ", device scalars" : ", host scalars") +
                     ", " + Element<T>::name);
        const int64_t axis = split == kOutputs ? (trans == 'T' ? n : m) : (trans == 'T' ? m : n);
        const int64_t starts[] = {0, axis};
        const size_t bytes = xgemv_nccl_workspace_bytes(split, kAll, trans, m, n, 1, sizeof(T));
        GuardedDeviceBuffer<unsigned char> workspace(bytes);
        S alpha = S(1.25), beta = S(-0.5);
        scalars.upload({alpha, beta});
        xgemv_set_pointer_mode(rank.handle, mode);
        const bool device = mode == XGEMV_POINTER_MODE_DEVICE;
        const auto call = [&] {
          return xgemv_nccl_gemv<T>(rank.handle, rank.comm, split, kAll, starts, trans, m, n,
                                    device ? scalars.data() : &alpha, a_device.data(), m,
                                    x_device.data(), 1, device ? scalars.data() + 1 : &beta,
                                    y_device.data(), 1, bytes ? workspace.data() : nullptr,
                                    bytes);
        };
        const auto eager = [&] {
          y_device.upload(y);
          EXPECT_EQ(call(), XGEMV_STATUS_SUCCESS);
          check_cuda(cudaStreamSynchronize(rank.stream), "synchronize");
          return y_device.download();
        };
        const std::vector<T> eager_y = eager();

        // Thread-local capture: NCCL's own threads may use the CUDA runtime meanwhile.
        GraphCapture capture(rank.stream, cudaStreamCaptureModeThreadLocal);
        const xgemv_status captured = call();
        check_cuda(capture.end(), "cudaStreamEndCapture");
        ASSERT_EQ(captured, XGEMV_STATUS_SUCCESS) << xgemv_status_string(captured);
        const auto replay = [&] {
          y_device.upload(y);
          capture.replay();
          return y_device.download();
        };
        EXPECT_TRUE(bitwise_equal("y of a replay", replay(), eager_y));
        EXPECT_TRUE(bitwise_equal("y of a second replay", replay(), eager_y));
        if (device) {
          // New values in the device scalars: the replay reads them (alpha 0: y := beta*y).
          for (const S new_alpha : {S(-2), S(0)}) {
            alpha = new_alpha;
            beta = S(0.75);
            scalars.upload({alpha, beta});
            const std::vector<T> replayed = replay();
            EXPECT_TRUE(bitwise_equal("y of a replay with new scalars", replayed, eager()));
          }
        }
        EXPECT_TRUE(workspace.guards_intact("workspace"));
      }
}

TEST_F(NcclOneRank, CapturedCallsReplayTheirResults) {
  for_each_element_type([&]<class T>() { graph_replays<T>(rank()); });
}

}  // namespace
}  // namespace xgemv_test
