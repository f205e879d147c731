// The BLAS that serves host arrays: the next one in the process, never libxgemv_blas itself.
#pragma once

#include <cstddef>
#include <type_traits>

namespace xgemv::blas {

template <class T>
using FortranGemv = void (*)(const char *, const int *, const int *, const T *, const T *,
                             const int *, const T *, const int *, const T *, T *, const int *,
                             std::size_t);

struct NextBlas {
  FortranGemv<float> sgemv = nullptr;
  FortranGemv<double> dgemv = nullptr;
  const char *library = nullptr;  // its file, for the log

  template <class T>
  FortranGemv<T> gemv() const noexcept {
    if constexpr (std::is_same_v<T, float>) {
      return sgemv;
    } else {
      return dgemv;
    }
  }
};

// Looked up once: the next sgemv_/dgemv_ after this library in the process's search order (what
// the program linked after us, or what LD_PRELOAD put us in front of), else OpenBLAS
// (libopenblas.so.0), else the system BLAS (libblas.so.3), loaded privately. Empty if none.
const NextBlas &next_blas() noexcept;

}  // namespace xgemv::blas
