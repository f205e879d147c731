// libxgemv_nccl without a GPU: every check that comes before the communicator is asked anything,
// through the C ABI with a NULL handle and a NULL communicator, for every element type (the
// right status in the right order, nothing dereferenced: the data pointers and the starts array
// are poisoned), the workspace size, the status strings and the last NCCL error.
#include <climits>
#include <cstdint>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "nccl_calls.hpp"
#include "support/typed_tests.hpp"

namespace xgemv_test {
namespace {

// An odd address in the never-mapped first page: dereferencing it faults.
template <class P>
P *poisoned() {
  return reinterpret_cast<P *>(uintptr_t{1});
}

// The split and result values are held as int, as a C caller may hold them, and converted only
// where they are passed: an enum object holding a value no enumerator names would be undefined
// behaviour to read in C++.
struct SplitArgumentCase {
  const char *what;
  int split;
  int result;
  char trans;
  int64_t m, n, lda, incx, incy;
  xgemv_status expected;
};

constexpr xgemv_split kOutputs = XGEMV_SPLIT_OUTPUTS, kReduction = XGEMV_SPLIT_REDUCTION;
constexpr xgemv_result kAll = XGEMV_RESULT_ALL, kOwn = XGEMV_RESULT_OWN_BLOCK;
constexpr int kBadSplit = 2, kBadResult = -1;

// The order is the contract: the BLAS arguments (trans, m, n of the whole problem; lda against
// the rows of the rank's A, incx, incy), then the split and result values, then the
// communicator (a NULL one is an invalid handle), whose rank count the starts are checked with.
// Without a communicator the rows of a block are unknown: where the split cuts the rows of A
// (outputs of op N, reduction of op T) only lda >= 1 is checked before it.
const SplitArgumentCase kCases[] = {
    {"trans 'X'", kOutputs, kAll, 'X', 2, 2, 2, 1, 1, XGEMV_STATUS_INVALID_TRANS},
    {"trans before a bad split", kBadSplit, kAll, 'X', 2, 2, 2, 1, 1,
     XGEMV_STATUS_INVALID_TRANS},
    {"m < 0", kReduction, kAll, 'N', -1, 2, 1, 1, 1, XGEMV_STATUS_INVALID_M},
    {"n < 0", kOutputs, kOwn, 'T', 2, -1, 2, 1, 1, XGEMV_STATUS_INVALID_N},
    {"m before n", kOutputs, kAll, 'N', -1, -1, 1, 1, 1, XGEMV_STATUS_INVALID_M},
    // Splits that keep every row of A on each rank: lda >= m.
    {"outputs of op T: lda < m", kOutputs, kAll, 'T', 5, 3, 4, 1, 1, XGEMV_STATUS_INVALID_LDA},
    {"reduction of op N: lda < m", kReduction, kOwn, 'N', 5, 3, 4, 1, 1,
     XGEMV_STATUS_INVALID_LDA},
    {"reduction of op C: rows cut, lda < m allowed", kReduction, kAll, 'C', 5, 3, 4, 1, 1,
     XGEMV_STATUS_INVALID_HANDLE},
    {"outputs of op N: rows cut, lda < m allowed", kOutputs, kOwn, 'N', 5, 3, 1, 1, 1,
     XGEMV_STATUS_INVALID_HANDLE},
    {"outputs of op N: lda = 0", kOutputs, kAll, 'N', 5, 3, 0, 1, 1, XGEMV_STATUS_INVALID_LDA},
    {"reduction of op T: lda < 0", kReduction, kAll, 't', 5, 3, -1, 1, 1,
     XGEMV_STATUS_INVALID_LDA},
    {"lda < 1 before a bad split", kBadSplit, kAll, 'T', 5, 3, 0, 1, 1,
     XGEMV_STATUS_INVALID_LDA},
    {"a bad split leaves the rows unknown: lda >= 1 only", kBadSplit, kAll, 'T', 5, 3, 4, 1, 1,
     XGEMV_STATUS_INVALID_SPLIT},
    {"incx = 0", kOutputs, kAll, 'N', 2, 2, 2, 0, 1, XGEMV_STATUS_INVALID_INCX},
    {"lda before incx", kReduction, kAll, 'N', 2, 2, 1, 0, 0, XGEMV_STATUS_INVALID_LDA},
    {"incy = 0", kReduction, kOwn, 'T', 2, 2, 2, 1, 0, XGEMV_STATUS_INVALID_INCY},
    {"incx before incy", kOutputs, kOwn, 'N', 2, 2, 2, 0, 0, XGEMV_STATUS_INVALID_INCX},
    {"incy before a bad result", kOutputs, kBadResult, 'N', 2, 2, 2, 1, 0,
     XGEMV_STATUS_INVALID_INCY},
    {"m = 0 does not hide incy = 0", kOutputs, kAll, 'N', 0, 2, 1, 1, 0,
     XGEMV_STATUS_INVALID_INCY},
    // The layout values, before the communicator.
    {"unknown split", kBadSplit, kAll, 'N', 2, 2, 2, 1, 1, XGEMV_STATUS_INVALID_SPLIT},
    {"unknown result", kReduction, kBadResult, 'N', 2, 2, 2, 1, 1, XGEMV_STATUS_INVALID_SPLIT},
    {"result 2", kOutputs, 2, 'T', 2, 2, 2, 1, 1,
     XGEMV_STATUS_INVALID_SPLIT},
    // Valid so far: the NULL communicator, before the starts and the handle, quick returns and
    // increments that only a communicator-checked layout refuses included.
    {"valid, lower-case n", kOutputs, kAll, 'n', 3, 2, 3, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"valid, negative increments", kOutputs, kOwn, 'C', 3, 4, 7, -3, -1,
     XGEMV_STATUS_INVALID_HANDLE},
    {"incy 2 where y is exchanged: decided after the layout", kReduction, kAll, 'N', 3, 2, 3, 1,
     2, XGEMV_STATUS_INVALID_HANDLE},
    {"quick return m = 0", kReduction, kOwn, 'N', 0, 3, 1, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
    {"quick return n = 0", kOutputs, kAll, 'T', 3, 0, 3, 1, 1, XGEMV_STATUS_INVALID_HANDLE},
};

XGEMV_TYPED_TEST_SUITE(NcclArgumentChecks, ::testing::Test);

TYPED_TEST(NcclArgumentChecks, NullCommunicatorReportsTheFirstBadArgumentAndTouchesNothing) {
  using T = TypeParam;
  using S = ScalarOf<T>;
  for (const SplitArgumentCase &c : kCases) {
    for (const bool poison : {true, false}) {
      SCOPED_TRACE(std::string(c.what) + (poison ? ", poisoned pointers" : ", NULL pointers"));
      const int64_t *starts = poison ? poisoned<const int64_t>() : nullptr;
      const S *alpha = poison ? poisoned<const S>() : nullptr;
      const S *beta = poison ? poisoned<const S>() : nullptr;
      const T *a = poison ? poisoned<const T>() : nullptr;
      const T *x = poison ? poisoned<const T>() : nullptr;
      T *y = poison ? poisoned<T>() : nullptr;
      void *workspace = poison ? poisoned<void>() : nullptr;
      const xgemv_status status =
          xgemv_nccl_gemv<T>(nullptr, nullptr, static_cast<xgemv_split>(c.split),
                             static_cast<xgemv_result>(c.result), starts, c.trans, c.m, c.n,
                             alpha, a, c.lda, x, c.incx, beta, y, c.incy, workspace, 1 << 20);
      EXPECT_EQ(status, c.expected) << xgemv_status_string(status);
      EXPECT_EQ(xgemv_status_argument(status), xgemv_status_argument(c.expected));
    }
  }
  EXPECT_EQ(xgemv_nccl_last_error(), ncclSuccess) << "no NCCL call was made";
}

TEST(NcclWorkspace, ReductionGathersEveryRanksPartialSumsBesideItsOwn) {
  // (ranks + 1) * outputs * sizeof(accumulator), rounded up to 256 bytes; outputs = m for op N,
  // n for op T and C; fp32 partial sums for fp16, bf16 and fp32, fp64 for fp64.
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', 1000, 7, 2, 2), 12032u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kOwn, 'N', 1000, 7, 2, 2), 12032u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'T', 7, 1000, 2, 4), 12032u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'c', 7, 1000, 2, 4), 12032u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', 1000, 7, 2, 8), 24064u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', 32, 5, 1, 4), 256u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', 33, 5, 1, 4), 512u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'n', 1, 1, 8, 2), 256u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kOwn, 'T', 1, 4096, 7, 8), 8u * 4096 * 8);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', 0, 5, 2, 4), 0u);
}

TEST(NcclWorkspace, OutputsSplitNeedsNone) {
  for (const xgemv_result result : {kAll, kOwn})
    for (const char trans : {'N', 'T', 'C'})
      EXPECT_EQ(xgemv_nccl_workspace_bytes(kOutputs, result, trans, 1000, 1000, 4, 2), 0u);
}

TEST(NcclWorkspace, ArgumentsACallRefusesNeedNone) {
  EXPECT_EQ(xgemv_nccl_workspace_bytes(static_cast<xgemv_split>(kBadSplit), kAll, 'N', 10, 10, 2,
                                       4),
            0u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, static_cast<xgemv_result>(kBadResult), 'N', 10,
                                       10, 2, 4),
            0u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'X', 10, 10, 2, 4), 0u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', -1, 10, 2, 4), 0u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', 10, -1, 2, 4), 0u);
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', 10, 10, 0, 4), 0u);
  for (const int element_bytes : {0, 1, 3, 16, -4})
    EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', 10, 10, 2, element_bytes), 0u)
        << element_bytes;
}

TEST(NcclWorkspace, SizesBeyondSizeTSaySo) {
  EXPECT_EQ(xgemv_nccl_workspace_bytes(kReduction, kAll, 'N', INT64_MAX, 1, INT_MAX, 8),
            SIZE_MAX);
}

TEST(NcclStatus, TheSplitStatusesHaveTheirOwnDescriptions) {
  EXPECT_EQ(static_cast<int>(XGEMV_STATUS_INVALID_SPLIT), 40);
  EXPECT_EQ(static_cast<int>(XGEMV_STATUS_NCCL_ERROR), 41);
  const std::string split = xgemv_status_string(XGEMV_STATUS_INVALID_SPLIT);
  const std::string nccl = xgemv_status_string(XGEMV_STATUS_NCCL_ERROR);
  EXPECT_NE(split.find("split"), std::string::npos) << split;
  EXPECT_NE(nccl.find("NCCL"), std::string::npos) << nccl;
  EXPECT_NE(split, xgemv_status_string(static_cast<xgemv_status>(39)));
  EXPECT_NE(nccl, xgemv_status_string(static_cast<xgemv_status>(39)));
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_INVALID_SPLIT), 0);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_NCCL_ERROR), 0);
}

TEST(NcclStatus, LastErrorIsPerThreadAndNoneAtFirst) {
  EXPECT_EQ(xgemv_nccl_last_error(), ncclSuccess);
  ncclResult_t on_thread = ncclInternalError;
  std::thread([&] { on_thread = xgemv_nccl_last_error(); }).join();
  EXPECT_EQ(on_thread, ncclSuccess);
}

}  // namespace
}  // namespace xgemv_test
