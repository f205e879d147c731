#include "reference_blas.hpp"

#include <cblas.h>

#include <climits>
#include <stdexcept>
#include <type_traits>

#include "library_path.hpp"

namespace xgemv_test {
namespace {

CBLAS_TRANSPOSE cblas_trans(char trans) {
  switch (trans) {
    case 'N':
    case 'n': return CblasNoTrans;
    case 'T':
    case 't': return CblasTrans;
    case 'C':
    case 'c': return CblasConjTrans;
  }
  throw std::invalid_argument(std::string("openblas_gemv: trans '") + trans + "'");
}

blasint to_blasint(int64_t value) {
  if (value < INT_MIN || value > INT_MAX)
    throw std::out_of_range("openblas_gemv: argument does not fit OpenBLAS's integer");
  return static_cast<blasint>(value);
}

template <class S, class T>
std::vector<S> upcast(const T *data, int64_t count) {
  std::vector<S> result(count);
  for (int64_t i = 0; i < count; ++i) result[i] = static_cast<S>(to_double(data[i]));
  return result;
}

}  // namespace

template <class T>
std::vector<ScalarOf<T>> openblas_gemv(const GemvShape &s, ScalarOf<T> alpha, const T *a,
                                       const T *x, ScalarOf<T> beta, const T *y) {
  using S = ScalarOf<T>;
  std::vector<S> y_out = upcast<S>(y, s.y_extent());
  // fp32/fp64 inputs go to OpenBLAS as they are; 16-bit ones are upcast first.
  std::vector<S> a_upcast, x_upcast;
  const S *a_in, *x_in;
  if constexpr (std::is_same_v<T, S>) {
    a_in = a;
    x_in = x;
  } else {
    a_upcast = upcast<S>(a, s.matrix_extent());
    x_upcast = upcast<S>(x, s.x_extent());
    a_in = a_upcast.data();
    x_in = x_upcast.data();
  }
  const auto gemv = [] {
    if constexpr (std::is_same_v<S, float>)
      return cblas_sgemv;
    else
      return cblas_dgemv;
  }();
  gemv(CblasColMajor, cblas_trans(s.trans), to_blasint(s.m), to_blasint(s.n), alpha, a_in,
       to_blasint(s.lda), x_in, to_blasint(s.incx), beta, y_out.data(), to_blasint(s.incy));
  return y_out;
}

template std::vector<float> openblas_gemv<float>(const GemvShape &, float, const float *,
                                                 const float *, float, const float *);
template std::vector<double> openblas_gemv<double>(const GemvShape &, double, const double *,
                                                   const double *, double, const double *);
template std::vector<float> openblas_gemv<__half>(const GemvShape &, float, const __half *,
                                                  const __half *, float, const __half *);
template std::vector<float> openblas_gemv<__nv_bfloat16>(const GemvShape &, float,
                                                         const __nv_bfloat16 *,
                                                         const __nv_bfloat16 *, float,
                                                         const __nv_bfloat16 *);

std::string openblas_library_path() {
  return library_defining(reinterpret_cast<const void *>(&cblas_sgemv));
}

std::string openblas_config() { return openblas_get_config(); }

}  // namespace xgemv_test
