// CUDA runtime errors as exceptions: GoogleTest reports them as test failures, the bench stops on
// them and reports what it measured.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace xgemv_test {

inline void check_cuda(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                             cudaGetErrorString(status));
}

}  // namespace xgemv_test
