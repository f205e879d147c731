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

namespace xgemv::blas {

// A GEMV that passed the argument checks, in column-major BLAS terms (CBLAS row-major calls are
// folded already). Scalars are host values, as in every BLAS ABI.
template <class T>
struct BlasGemv {
  const char *entry;  // "sgemv_", "cblas_sgemv", ...: for the log
  char trans;
  int m, n;
  T alpha;
  const T *a;
  int lda;
  const T *x;
  int incx;
  T beta;
  T *y;
  int incy;
};

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

// Runs a checked call where its arrays are (see above). Never throws, never ends the process.
template <class T>
void run_gemv(const BlasGemv<T> &call) noexcept;

extern template void run_gemv(const BlasGemv<float> &) noexcept;
extern template void run_gemv(const BlasGemv<double> &) noexcept;

}  // namespace xgemv::blas
