// Internal C++ API of the core, shared by every ABI layer (the C ABI in api.cpp, the cuBLAS
// drop-in, the BLAS/CBLAS libraries and the NCCL GEMV in interface/). Nothing here is exported.
// The interfaces include this header and problem.hpp only: they see a handle through these
// functions and the public API, never its inside, and no kernel.
#pragma once

#include <cstdint>
#include <optional>

#include <xgemv/xgemv.h>

#include "problem.hpp"

namespace xgemv {

// What one call may set apart from its handle: the stream it runs on and the pointer mode of
// its alpha and beta. Unset, the handle's.
struct RunOptions {
  std::optional<cudaStream_t> stream;
  std::optional<xgemv_pointer_mode> pointer_mode;
};

// Runs a checked problem: the handle, quick return, NULL and (with XGEMV_CHECK_POINTERS)
// device-pointer checks, then the kernel variant and its launch, on the handle's stream and
// pointer mode unless `options` sets them. Never throws; never synchronises.
xgemv_status run(xgemv_handle handle, const CheckedProblem &problem,
                 const RunOptions &options = {}) noexcept;

// check_problem, then run: what the C ABI does with every call.
xgemv_status check_and_run(xgemv_handle handle, const GemvProblem &problem,
                           const RunOptions &options = {}) noexcept;

// XGEMV_STATUS_INVALID_HANDLE for NULL, XGEMV_STATUS_WRONG_DEVICE unless the handle's device is
// current, XGEMV_STATUS_CUDA_ERROR where the runtime cannot say.
xgemv_status check_handle_device(xgemv_handle handle) noexcept;

// Until a kernel of the current call launches, xgemv_get_last_kernel_variant says none (a call
// made of several core calls clears it once, first).
void clear_last_kernel_variant(xgemv_handle handle) noexcept;

// For i < count: y[i] := alpha*sum + beta*y[i], sum = parts[r * stride + i] over r = 0 .. parts
// - 1 added in that order from part 0 (not from 0, which would turn -0 into +0), in S, with the
// BLAS rules (beta == 0 never reads y, alpha == 0 gives beta*y). alpha and beta are in the
// handle's pointer mode. On the handle's stream, as a plain launch (it starts after all the
// work before it). Instantiated for (TY, S) = (float, float), (double, double), (__half,
// float), (__nv_bfloat16, float).
template <class TY, class S>
xgemv_status sum_parts(xgemv_handle handle, const S *parts, int count_of_parts, int64_t stride,
                       int64_t count, const S *alpha, const S *beta, TY *y) noexcept;

// Records the CUDA error behind an XGEMV_STATUS_CUDA_ERROR for xgemv_last_cuda_error().
void set_last_cuda_error(cudaError_t error) noexcept;

// The one reader of the environment switches: set to anything but "" or "0".
bool environment_flag(const char *name) noexcept;
// The switch's value, or nullptr where it is unset or "".
const char *environment_value(const char *name) noexcept;

}  // namespace xgemv
