#include <algorithm>

#include "hash_check.hpp"
#include "support/check_cuda.hpp"
#include "support/hashed_integers.hpp"

namespace xgemv_test {
namespace {

__global__ void count_changed_hashed_kernel(const float *data, int64_t count, uint64_t seed,
                                            int32_t lo, int32_t hi, int64_t skip_stride,
                                            int64_t skip_length, unsigned long long *changed) {
  unsigned long long local = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const bool may_change =
        skip_length > 0 && i % skip_stride == 0 && i / skip_stride < skip_length;
    if (!may_change && data[i] != float(hashed_integer(seed, i, lo, hi))) ++local;
  }
  if (local != 0) atomicAdd(changed, local);
}

}  // namespace

int64_t count_changed_hashed(const float *data, int64_t count, uint64_t seed, int32_t lo,
                             int32_t hi, int64_t skip_stride, int64_t skip_length,
                             cudaStream_t stream) {
  unsigned long long *changed = nullptr;
  check_cuda(cudaMallocAsync(&changed, sizeof *changed, stream), "cudaMallocAsync");
  check_cuda(cudaMemsetAsync(changed, 0, sizeof *changed, stream), "cudaMemsetAsync");
  constexpr int kThreads = 256;
  const auto grid = static_cast<unsigned>(std::clamp<int64_t>(count / kThreads + 1, 1, 65536));
  count_changed_hashed_kernel<<<grid, kThreads, 0, stream>>>(
      data, count, seed, lo, hi, std::max<int64_t>(skip_stride, 1), skip_length, changed);
  check_cuda(cudaGetLastError(), "count_changed_hashed_kernel");
  unsigned long long result = 0;
  check_cuda(cudaMemcpyAsync(&result, changed, sizeof result, cudaMemcpyDeviceToHost, stream),
             "download count");
  check_cuda(cudaFreeAsync(changed, stream), "cudaFreeAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return static_cast<int64_t>(result);
}

}  // namespace xgemv_test
