#include "split_layout.hpp"

#include <algorithm>
#include <cstdint>

#include "problem.hpp"

namespace xgemv::nccl {

bool cuts_rows_of_a(xgemv_split split, char trans) noexcept {
  return (split == XGEMV_SPLIT_OUTPUTS) != is_transposed(trans);
}

xgemv_status describe_layout(xgemv_split split, xgemv_result result, const int64_t *starts,
                             int ranks, int rank, char trans, int64_t m, int64_t n,
                             SplitLayout *layout) noexcept {
  if (!valid_split(split) || !valid_result(result) || ranks < 1 || rank < 0 || rank >= ranks ||
      starts == nullptr)
    return XGEMV_STATUS_INVALID_SPLIT;
  const bool transposed = is_transposed(trans);
  const int64_t outputs = transposed ? n : m, reduction = transposed ? m : n;
  const int64_t axis = split == XGEMV_SPLIT_OUTPUTS ? outputs : reduction;
  // Every offset is read, so that every rank (whatever its own block) refuses the same array.
  if (starts[0] != 0 || starts[ranks] != axis) return XGEMV_STATUS_INVALID_SPLIT;
  for (int r = 0; r < ranks; ++r)
    if (starts[r] > starts[r + 1]) return XGEMV_STATUS_INVALID_SPLIT;

  SplitLayout l{};
  l.split = split;
  l.result = result;
  l.ranks = ranks;
  l.rank = rank;
  l.outputs = outputs;
  l.block_begin = starts[rank];
  l.block_length = starts[rank + 1] - starts[rank];
  const bool rows = cuts_rows_of_a(split, trans);
  l.local_m = rows ? l.block_length : m;
  l.local_n = rows ? n : l.block_length;
  if (split == XGEMV_SPLIT_OUTPUTS && result == XGEMV_RESULT_OWN_BLOCK) {
    l.kept_begin = l.block_begin;
    l.kept_length = l.block_length;
  } else if (split == XGEMV_SPLIT_REDUCTION && result == XGEMV_RESULT_OWN_BLOCK) {
    // Equal blocks of q = ceil(outputs / ranks) outputs, the last ones shorter or empty.
    const int64_t q = outputs / ranks + (outputs % ranks != 0);
    l.kept_begin = std::min<int64_t>(rank * q, outputs);
    l.kept_length = std::min<int64_t>(q, outputs - l.kept_begin);
  } else {
    l.kept_begin = 0;
    l.kept_length = outputs;
  }
  *layout = l;
  return XGEMV_STATUS_SUCCESS;
}

std::size_t workspace_bytes(xgemv_split split, xgemv_result result, char trans, int64_t m,
                            int64_t n, int ranks, int element_bytes) noexcept {
  if (!valid_split(split) || !valid_result(result) || ranks < 1 || m < 0 || n < 0 ||
      (element_bytes != 2 && element_bytes != 4 && element_bytes != 8) ||
      check_gemv_arguments(trans, 0, 0, 1, 1, 1) != XGEMV_STATUS_SUCCESS)
    return 0;
  if (split != XGEMV_SPLIT_REDUCTION) return 0;
  constexpr std::size_t kAlignment = 256;
  const std::size_t slots = static_cast<std::size_t>(ranks) + 1;
  const std::size_t outputs = static_cast<std::size_t>(is_transposed(trans) ? n : m);
  const std::size_t element = accumulator_bytes(element_bytes);
  if (outputs > (SIZE_MAX - (kAlignment - 1)) / element / slots) return SIZE_MAX;
  const std::size_t bytes = slots * outputs * element;
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace xgemv::nccl
