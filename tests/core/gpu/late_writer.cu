#include "late_writer.hpp"

namespace xgemv_test {
namespace {

__global__ void copy_after_delay_kernel(float *dst, const float *src, int64_t count, uint64_t delay_ns) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < delay_ns);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

}  // namespace

cudaError_t copy_after_delay(float *dst, const float *src, int64_t count, uint64_t delay_ns,
                             cudaStream_t stream) {
  copy_after_delay_kernel<<<4, 256, 0, stream>>>(dst, src, count, delay_ns);
  return cudaGetLastError();
}

}  // namespace xgemv_test
