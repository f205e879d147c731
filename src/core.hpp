// Internal C++ API of the core, shared by every ABI layer (the C ABI in api.cpp, the cuBLAS
// drop-in and the BLAS/CBLAS libraries in interface/). Nothing here is exported.
#pragma once

#include <xgemv/xgemv.h>

#include "problem.hpp"

namespace xgemv {

// Runs a checked problem on the handle's stream: the handle, quick return, NULL and (with
// XGEMV_CHECK_POINTERS) device-pointer checks, then the kernel variant and its launch. Never
// throws; never synchronises.
xgemv_status run(xgemv_handle handle, const CheckedProblem &problem) noexcept;

// check_problem, then run: what the C ABI does with every call.
xgemv_status check_and_run(xgemv_handle handle, const GemvProblem &problem) noexcept;

// Records the CUDA error behind an XGEMV_STATUS_CUDA_ERROR for xgemv_last_cuda_error().
void set_last_cuda_error(cudaError_t error) noexcept;

}  // namespace xgemv
