#include "hashed_integers.hpp"

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace xgemv_test {
namespace {

template <class T>
__global__ void fill_hashed_integers_kernel(T *data, int64_t count, uint64_t seed, int32_t lo,
                                            int32_t hi) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] = static_cast<T>(static_cast<float>(hashed_integer(seed, i, lo, hi)));
}

}  // namespace

template <class T>
cudaError_t fill_hashed_integers(T *data, int64_t count, uint64_t seed, int32_t lo, int32_t hi,
                                 cudaStream_t stream) {
  constexpr int kThreads = 256;
  // A grid-stride loop: enough blocks to fill any GPU, whatever count is.
  const auto grid =
      static_cast<unsigned>(std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, 65536));
  fill_hashed_integers_kernel<<<grid, kThreads, 0, stream>>>(data, count, seed, lo, hi);
  return cudaGetLastError();
}

template cudaError_t fill_hashed_integers<float>(float *, int64_t, uint64_t, int32_t, int32_t,
                                                 cudaStream_t);
template cudaError_t fill_hashed_integers<double>(double *, int64_t, uint64_t, int32_t, int32_t,
                                                  cudaStream_t);
template cudaError_t fill_hashed_integers<__half>(__half *, int64_t, uint64_t, int32_t, int32_t,
                                                  cudaStream_t);
template cudaError_t fill_hashed_integers<__nv_bfloat16>(__nv_bfloat16 *, int64_t, uint64_t,
                                                         int32_t, int32_t, cudaStream_t);

}  // namespace xgemv_test
