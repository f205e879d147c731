// A predecessor kernel for the launch-order tests: it lets the next kernel on the stream launch
// at once (programmatic dependent launch), then writes late.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace xgemv_test {

// Enqueues a kernel that allows its successor to launch, waits delay_ns, then copies count
// floats from src to dst. Returns the launch's error.
cudaError_t copy_after_delay(float *dst, const float *src, int64_t count, uint64_t delay_ns,
                             cudaStream_t stream);

}  // namespace xgemv_test
