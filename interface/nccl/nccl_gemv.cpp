// The C ABI of xgemv_nccl.h: one template over the element type, thin typed entry points. The
// local GEMV of each rank is the core's (check_and_run on the handle's stream); NCCL moves the
// blocks of y or the partial sums; the core's sum_parts adds those. Nothing here throws or
// allocates.
#include <xgemv/xgemv_nccl.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core.hpp"
#include "split_layout.hpp"

namespace xgemv::nccl {
namespace {

thread_local ncclResult_t last_nccl_error = ncclSuccess;

// fp64 accumulates in fp64; fp32 and the 16-bit types (fp32 scalars) in fp32.
template <class T>
using Accumulator = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
constexpr ncclDataType_t nccl_type() {
  if constexpr (std::is_same_v<T, double>) return ncclFloat64;
  else if constexpr (std::is_same_v<T, float>) return ncclFloat32;
  else if constexpr (std::is_same_v<T, __half>) return ncclFloat16;
  else return ncclBfloat16;
}

xgemv_status nccl_failure(ncclResult_t result) {
  last_nccl_error = result;
  return XGEMV_STATUS_NCCL_ERROR;
}

xgemv_status cuda_failure(cudaError_t error) {
  set_last_cuda_error(error);
  return XGEMV_STATUS_CUDA_ERROR;
}

// A nonblocking communicator answers ncclInProgress while it is still enqueueing; the next
// operation on the stream must wait until it has, so wait here (on the host, not the device).
xgemv_status nccl_done(ncclComm_t comm, ncclResult_t result) {
  while (result == ncclInProgress) {
    ncclResult_t state = ncclSuccess;
    if (const ncclResult_t query = ncclCommGetAsyncError(comm, &state); query != ncclSuccess)
      return nccl_failure(query);
    result = state;
  }
  return result == ncclSuccess ? XGEMV_STATUS_SUCCESS : nccl_failure(result);
}

// The layout from the communicator's rank count and rank. Only local queries: nothing is
// communicated before every check has passed. *nccl_result: the NCCL result of a failed query.
xgemv_status layout_of(ncclComm_t comm, xgemv_split split, xgemv_result result,
                       const int64_t *starts, char trans, int64_t m, int64_t n,
                       SplitLayout *layout, ncclResult_t *nccl_result) {
  if (!valid_split(split) || !valid_result(result)) return XGEMV_STATUS_INVALID_SPLIT;
  if (comm == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  int ranks = 0, rank = -1;
  *nccl_result = ncclCommCount(comm, &ranks);
  if (*nccl_result == ncclSuccess) *nccl_result = ncclCommUserRank(comm, &rank);
  if (*nccl_result != ncclSuccess) return XGEMV_STATUS_NCCL_ERROR;
  return describe_layout(split, result, starts, ranks, rank, trans, m, n, layout);
}

// y := beta*y for the `length` elements of y (increment incy) through the core: a GEMV with
// alpha == 0 reads neither A nor x and scales y by the BLAS rules (beta == 0 writes zeros).
template <class T, class S>
xgemv_status scale_locally(xgemv_handle handle, int64_t length, const S *alpha, const S *beta,
                           T *y, int64_t incy) {
  return check_and_run(handle, single_problem<T, T, T, S>('N', length, 1, alpha, nullptr,
                                                          std::max<int64_t>(1, length), nullptr,
                                                          1, beta, y, incy));
}

template <class T, class S = Accumulator<T>>
xgemv_status gemv(xgemv_handle handle, ncclComm_t comm, xgemv_split split, xgemv_result result,
                  const int64_t *starts, char trans, int64_t m, int64_t n, const S *alpha,
                  const T *a, int64_t lda, const T *x, int64_t incx, const S *beta, T *y,
                  int64_t incy, void *workspace, size_t workspace_size) noexcept {
  // The BLAS arguments first, in their order: trans, m and n of the whole problem, then lda
  // against the rows of the rank's A, incx and incy (the one checker, twice). Where the rows
  // depend on a layout that is not valid, only lda >= 1 is checked and the layout's error
  // follows.
  if (const xgemv_status status = check_gemv_arguments(trans, m, n, std::max<int64_t>(1, m), 1, 1);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  SplitLayout layout{};
  ncclResult_t query_result = ncclSuccess;
  const xgemv_status layout_status =
      layout_of(comm, split, result, starts, trans, m, n, &layout, &query_result);
  const int64_t local_rows = layout_status == XGEMV_STATUS_SUCCESS ? layout.local_m
                             : valid_split(split) && !cuts_rows_of_a(split, trans) ? m
                                                                                   : 0;
  if (const xgemv_status status = check_gemv_arguments(trans, local_rows, 0, lda, incx, incy);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  if (layout_status == XGEMV_STATUS_NCCL_ERROR) return nccl_failure(query_result);
  if (layout_status != XGEMV_STATUS_SUCCESS) return layout_status;
  if (layout.exchanges_y() && incy != 1) return XGEMV_STATUS_NOT_SUPPORTED;
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  clear_last_kernel_variant(handle);  // until a local GEMV launches (an empty block launches none)

  // Quick return (m == 0 or n == 0; alpha == 0 and beta == 1 with host scalars): nothing
  // touched, nothing communicated, on every rank alike.
  if (m == 0 || n == 0) return XGEMV_STATUS_SUCCESS;
  if (alpha == nullptr || beta == nullptr) return XGEMV_STATUS_NULL_POINTER;
  xgemv_pointer_mode pointer_mode = XGEMV_POINTER_MODE_HOST;
  cudaStream_t stream = nullptr;
  xgemv_get_pointer_mode(handle, &pointer_mode);
  xgemv_get_stream(handle, &stream);
  const bool device_scalars = pointer_mode == XGEMV_POINTER_MODE_DEVICE;
  const bool alpha_zero = !device_scalars && *alpha == S(0);
  if (alpha_zero && *beta == S(1)) return XGEMV_STATUS_SUCCESS;

  const bool reduction = split == XGEMV_SPLIT_REDUCTION;
  if (reduction) {
    const size_t needed =
        workspace_bytes(split, result, trans, m, n, layout.ranks, static_cast<int>(sizeof(T)));
    if (workspace == nullptr || workspace_size < needed) return XGEMV_STATUS_NULL_POINTER;
  }
  if (y == nullptr && layout.kept_length > 0) return XGEMV_STATUS_NULL_POINTER;
  if (!alpha_zero && !layout.local_block_empty() && (a == nullptr || x == nullptr))
    return XGEMV_STATUS_NULL_POINTER;
  if (const xgemv_status status = check_handle_device(handle); status != XGEMV_STATUS_SUCCESS)
    return status;

  // alpha == 0 (host scalars): y := beta*y where the rank holds it, without reading A or x and
  // without exchanging anything (every rank scales its own y the same way).
  if (alpha_zero) return scale_locally(handle, layout.kept_length, alpha, beta, y, incy);

  if (!reduction) {
    // Each rank computes its block of y; with XGEMV_RESULT_ALL each block is then broadcast in
    // place from its owner, all in one group.
    T *block = layout.result == XGEMV_RESULT_ALL ? y + layout.block_begin : y;
    if (const xgemv_status status = check_and_run(
            handle, single_problem<T, T, T, S>(trans, layout.local_m, layout.local_n, alpha, a,
                                               lda, x, incx, beta, block, incy));
        status != XGEMV_STATUS_SUCCESS)
      return status;
    if (layout.result != XGEMV_RESULT_ALL) return XGEMV_STATUS_SUCCESS;
    if (const xgemv_status status = nccl_done(comm, ncclGroupStart());
        status != XGEMV_STATUS_SUCCESS)
      return status;
    ncclResult_t first_failure = ncclSuccess;
    for (int r = 0; r < layout.ranks; ++r) {
      const int64_t begin = starts[r], length = starts[r + 1] - starts[r];
      if (length == 0) continue;
      const ncclResult_t queued = ncclBroadcast(y + begin, y + begin, static_cast<size_t>(length),
                                                nccl_type<T>(), r, comm, stream);
      if (first_failure == ncclSuccess && queued != ncclSuccess && queued != ncclInProgress)
        first_failure = queued;
    }
    // The group is always closed, so that a failed enqueue does not leave it open.
    const xgemv_status closed = nccl_done(comm, ncclGroupEnd());
    if (first_failure != ncclSuccess) return nccl_failure(first_failure);
    return closed;
  }

  // The reduction split: the rank's partial sums 1*op(A_r)*x_r (zeros for an empty block) in S,
  // gathered from every rank, then added in rank order and stored by one kernel.
  S *own = static_cast<S *>(workspace);
  S *gathered = own + layout.outputs;
  const size_t partial_bytes = static_cast<size_t>(layout.outputs) * sizeof(S);
  if (layout.local_block_empty()) {
    if (const cudaError_t error = cudaMemsetAsync(own, 0, partial_bytes, stream);
        error != cudaSuccess)
      return cuda_failure(error);
  } else {
    // Host scalars 1 and 0 whatever the handle's pointer mode: alpha and beta are applied once,
    // after the sum.
    static constexpr S kOne = 1, kZero = 0;
    if (const xgemv_status status = check_and_run(
            handle,
            single_problem<T, T, S, S>(trans, layout.local_m, layout.local_n, &kOne, a, lda, x,
                                       incx, &kZero, own, 1),
            RunOptions{std::nullopt, XGEMV_POINTER_MODE_HOST});
        status != XGEMV_STATUS_SUCCESS)
      return status;
  }
  if (const xgemv_status status =
          nccl_done(comm, ncclAllGather(own, gathered, static_cast<size_t>(layout.outputs),
                                        nccl_type<S>(), comm, stream));
      status != XGEMV_STATUS_SUCCESS)
    return status;
  return sum_parts<T, S>(handle, gathered + layout.kept_begin, layout.ranks, layout.outputs,
                         layout.kept_length, alpha, beta, y);
}

}  // namespace
}  // namespace xgemv::nccl

extern "C" {

size_t xgemv_nccl_workspace_bytes(xgemv_split split, xgemv_result result, char trans, int64_t m,
                                  int64_t n, int ranks, int element_bytes) {
  return xgemv::nccl::workspace_bytes(split, result, trans, m, n, ranks, element_bytes);
}

ncclResult_t xgemv_nccl_last_error(void) { return xgemv::nccl::last_nccl_error; }

// xgemv_nccl_sgemv, _dgemv, _hgemv, _bf16gemv: generated from src/element_types.json.
#include "nccl_typed_calls.inc"

}  // extern "C"
