#include "partial_sums.hpp"

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/epilogue.cuh"

namespace xgemv::nccl {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill any GPU; longer y is walked grid-stride.
constexpr int64_t kMaxBlocks = 4096;

// One thread per output. The sum starts from rank 0's partial (not from 0, which would turn a
// -0 into +0) and adds the others in rank order: the same operations on every rank, so every
// rank gets the same bits.
template <class TY, class S>
__global__ void sum_partials(const S *gathered, int ranks, int64_t outputs, int64_t first,
                             int64_t count, kernels::Scalars<S> scalars, TY *y) {
  const S alpha = scalars.alpha(), beta = scalars.beta();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const S *partial = gathered + first + i;
    S sum = partial[0];
    for (int r = 1; r < ranks; ++r) sum += partial[r * outputs];
    kernels::store_output<TY>(y + i, sum, alpha, beta, /*bias=*/nullptr);
  }
}

}  // namespace

template <class TY, class S>
cudaError_t launch_sum_partials(const S *gathered, int ranks, int64_t outputs, int64_t first,
                                int64_t count, const S *alpha, const S *beta,
                                bool device_scalars, TY *y, cudaStream_t stream) noexcept {
  if (count <= 0) return cudaSuccess;
  kernels::Scalars<S> scalars{};
  if (device_scalars) {
    scalars.alpha_ptr = alpha;
    scalars.beta_ptr = beta;
  } else {
    scalars.alpha_value = *alpha;
    scalars.beta_value = *beta;
  }
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, kMaxBlocks);
  void *args[] = {&gathered, &ranks, &outputs, &first, &count, &scalars, &y};
  // A plain launch: it starts only after the all-gather before it on the stream has finished.
  return cudaLaunchKernel(reinterpret_cast<const void *>(&sum_partials<TY, S>),
                          dim3(static_cast<unsigned>(blocks)), dim3(kThreads), args, 0, stream);
}

#define XGEMV_NCCL_SUM_PARTIALS(TY, S)                                                       \
  template cudaError_t launch_sum_partials<TY, S>(const S *, int, int64_t, int64_t, int64_t, \
                                                  const S *, const S *, bool, TY *,          \
                                                  cudaStream_t) noexcept;
XGEMV_NCCL_SUM_PARTIALS(float, float)
XGEMV_NCCL_SUM_PARTIALS(double, double)
XGEMV_NCCL_SUM_PARTIALS(__half, float)
XGEMV_NCCL_SUM_PARTIALS(__nv_bfloat16, float)
#undef XGEMV_NCCL_SUM_PARTIALS

}  // namespace xgemv::nccl
