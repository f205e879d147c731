// The last step of the reduction split: every rank's partial sums, gathered, added in rank order
// and stored with the BLAS epilogue. The kernel is in partial_sums.cu, the one CUDA translation
// unit of libxgemv_nccl.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace xgemv::nccl {

// For i < count: y[i] := alpha*sum + beta*y[i] with sum = the partial sums of output first + i of
// ranks 0, 1, ..., ranks - 1 in that order (gathered[r * outputs + first + i]), in S, and the BLAS
// rules (beta == 0 never reads y, alpha == 0 gives beta*y). alpha and beta are device pointers
// read by the kernel when device_scalars, else host pointers read here. Launched on `stream`;
// returns the launch's error. Instantiated for (TY, S) = (float, float), (double, double),
// (__half, float), (__nv_bfloat16, float).
template <class TY, class S>
cudaError_t launch_sum_partials(const S *gathered, int ranks, int64_t outputs, int64_t first,
                                int64_t count, const S *alpha, const S *beta,
                                bool device_scalars, TY *y, cudaStream_t stream) noexcept;

}  // namespace xgemv::nccl
