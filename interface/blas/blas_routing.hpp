// Where a valid BLAS GEMV runs, by where its arrays live:
//   device or managed memory (cudaPointerGetAttributes)  -> the GPU, through the core, on a
//       per-thread handle on the legacy default stream (so that it orders after the caller's
//       work on blocking streams), synchronised before returning: BLAS callers expect y ready.
//       Host arrays mixed in are staged through the GPU.
//   host memory only -> the next BLAS in the process (a GEMV reads A once: copying it over PCIe
//       cannot beat the CPU), or, with XGEMV_BLAS_HOST=gpu, staged through the GPU (slow; runs
//       host-based BLAS test programs on the GPU kernels). With no usable GPU, host arrays still
//       go to the next BLAS.
// XGEMV_BLAS_LOG=1 writes one line per call to stderr naming who served it.
#pragma once

#include "problem.hpp"

namespace xgemv::blas {

// Names per precision: the exported entry points and the Fortran name xerbla_ reports.
template <class T>
struct GemvNames;
template <>
struct GemvNames<float> {
  static constexpr const char *fortran = "sgemv_", *xerbla = "SGEMV ", *cblas = "cblas_sgemv";
};
template <>
struct GemvNames<double> {
  static constexpr const char *fortran = "dgemv_", *xerbla = "DGEMV ", *cblas = "cblas_dgemv";
};

// Runs a checked GEMV of T (column-major: CBLAS row-major calls are folded already; host scalars,
// as in every BLAS ABI) where its arrays are (see above). `entry` ("sgemv_", "cblas_sgemv", ...)
// names it in the log. Never throws, never ends the process.
template <class T>
void run_gemv(const char *entry, const CheckedProblem &problem) noexcept;

extern template void run_gemv<float>(const char *, const CheckedProblem &) noexcept;
extern template void run_gemv<double>(const char *, const CheckedProblem &) noexcept;

}  // namespace xgemv::blas
