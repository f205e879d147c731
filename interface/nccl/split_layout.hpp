// One rank's part of a GEMV split over several GPUs (xgemv_nccl.h): the block of the split axis
// it owns, the shape of its local GEMV and the outputs its y holds. Plain host code with no CUDA
// or NCCL call, so that the layout rules are unit-tested on the CPU for any rank count; the
// rank count and rank come from the communicator in nccl_gemv.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include <xgemv/xgemv_nccl.h>

namespace xgemv::nccl {

constexpr bool valid_split(xgemv_split split) {
  return split == XGEMV_SPLIT_OUTPUTS || split == XGEMV_SPLIT_REDUCTION;
}
constexpr bool valid_result(xgemv_result result) {
  return result == XGEMV_RESULT_OWN_BLOCK || result == XGEMV_RESULT_ALL;
}

// Whether the split cuts the rows of A (so that the local lda is checked against the block):
// the outputs of op N and the reduction of op T are rows of A; the other two are its columns.
bool cuts_rows_of_a(xgemv_split split, char trans) noexcept;

struct SplitLayout {
  xgemv_split split;
  xgemv_result result;
  int ranks, rank;
  int64_t outputs;                    // elements of the whole y
  int64_t block_begin, block_length;  // the rank's block of the split axis
  int64_t local_m, local_n;           // the rank's A (its lda is checked against local_m)
  // The outputs the rank's y holds: y[i] (logical element i) is output kept_begin + i.
  int64_t kept_begin, kept_length;

  // Every layout but the outputs split with each rank keeping its block moves y through NCCL
  // (whole-y broadcasts, or the reduction's partial sums), so y must be contiguous there.
  bool exchanges_y() const {
    return split != XGEMV_SPLIT_OUTPUTS || result != XGEMV_RESULT_OWN_BLOCK;
  }
  bool local_block_empty() const { return local_m == 0 || local_n == 0; }
};

// The layout of rank `rank` of `ranks` for the whole problem (trans, m, n), or
// XGEMV_STATUS_INVALID_SPLIT for an unknown split or result, a rank count below 1, a rank out of
// range, a NULL starts array, or starts that are not ranks + 1 non-decreasing offsets from 0 to
// the length of the split axis. trans, m and n are taken as checked (check_gemv_arguments).
xgemv_status describe_layout(xgemv_split split, xgemv_result result, const int64_t *starts,
                             int ranks, int rank, char trans, int64_t m, int64_t n,
                             SplitLayout *layout) noexcept;

// xgemv_nccl_workspace_bytes: the reduction split gathers every rank's partial sums of all the
// outputs next to its own, in the accumulator type; nothing for the outputs split. 0 also for
// arguments a call refuses; SIZE_MAX when the size does not fit in size_t.
std::size_t workspace_bytes(xgemv_split split, xgemv_result result, char trans, int64_t m,
                            int64_t n, int ranks, int element_bytes) noexcept;

// Bytes of one element of the accumulator type of a storage element of `element_bytes`: fp64
// accumulates in fp64, fp32, fp16 and bf16 in fp32.
constexpr std::size_t accumulator_bytes(int element_bytes) { return element_bytes == 8 ? 8 : 4; }

}  // namespace xgemv::nccl
