// A kernel fault on purpose, for the faults test: afterwards the process's CUDA context is lost
// and every CUDA call returns the same (sticky) error.
#pragma once

#include <cuda_runtime_api.h>

namespace xgemv_test {

// Launches a kernel that writes to an unmapped address and waits for it; returns the error the
// wait reported (cudaErrorIllegalAddress).
cudaError_t provoke_sticky_fault();

}  // namespace xgemv_test
