// sum_parts (core.hpp): the last step of a reduction split across devices (the NCCL GEMV adds
// every rank's gathered partial sums), with the BLAS epilogue of the kernels.
#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "context.hpp"
#include "core.hpp"
#include "kernels/epilogue.cuh"

namespace xgemv {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill any GPU; longer y is walked grid-stride.
constexpr int64_t kMaxBlocks = 4096;

// One thread per output: the same operations on every rank, so every rank gets the same bits.
template <class TY, class S>
__global__ void sum_parts_kernel(const S *parts, int count_of_parts, int64_t stride,
                                 int64_t count, kernels::Scalars<S> scalars, TY *y) {
  const S alpha = scalars.alpha(), beta = scalars.beta();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const S *part = parts + i;
    S sum = part[0];
    for (int r = 1; r < count_of_parts; ++r) sum += part[r * stride];
    kernels::store_output<TY>(y + i, sum, alpha, beta, /*bias=*/nullptr);
  }
}

}  // namespace

template <class TY, class S>
xgemv_status sum_parts(xgemv_handle handle, const S *parts, int count_of_parts, int64_t stride,
                       int64_t count, const S *alpha, const S *beta, TY *y) noexcept {
  if (const xgemv_status status = check_handle_device(handle);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  if (count <= 0) return XGEMV_STATUS_SUCCESS;
  if (alpha == nullptr || beta == nullptr || parts == nullptr || y == nullptr)
    return XGEMV_STATUS_NULL_POINTER;
  kernels::Scalars<S> scalars{};
  if (handle->pointer_mode == XGEMV_POINTER_MODE_DEVICE) {
    scalars.alpha_ptr = alpha;
    scalars.beta_ptr = beta;
  } else {
    scalars.alpha_value = *alpha;
    scalars.beta_value = *beta;
  }
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, kMaxBlocks);
  sum_parts_kernel<TY, S><<<unsigned(blocks), kThreads, 0, handle->stream>>>(
      parts, count_of_parts, stride, count, scalars, y);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) {
    set_last_cuda_error(error);
    return XGEMV_STATUS_CUDA_ERROR;
  }
  return XGEMV_STATUS_SUCCESS;
}

template xgemv_status sum_parts<float, float>(xgemv_handle, const float *, int, int64_t, int64_t,
                                              const float *, const float *, float *) noexcept;
template xgemv_status sum_parts<double, double>(xgemv_handle, const double *, int, int64_t,
                                                int64_t, const double *, const double *,
                                                double *) noexcept;
template xgemv_status sum_parts<__half, float>(xgemv_handle, const float *, int, int64_t, int64_t,
                                               const float *, const float *, __half *) noexcept;
template xgemv_status sum_parts<__nv_bfloat16, float>(xgemv_handle, const float *, int, int64_t,
                                                      int64_t, const float *, const float *,
                                                      __nv_bfloat16 *) noexcept;

}  // namespace xgemv
