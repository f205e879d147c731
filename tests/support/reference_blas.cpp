#include "reference_blas.hpp"

#include <cblas.h>

#include <type_traits>

#include "library_path.hpp"
#include "reference_arguments.hpp"

namespace xgemv_test {
namespace {

CBLAS_TRANSPOSE cblas_trans(char trans) {
  return reference_op(trans, CblasNoTrans, CblasTrans, CblasConjTrans, "OpenBLAS");
}

blasint to_blasint(int64_t value) { return reference_int<blasint>(value, "OpenBLAS"); }

template <class S, class T>
std::vector<S> upcast(const T *data, int64_t count) {
  std::vector<S> result(count);
  for (int64_t i = 0; i < count; ++i) result[i] = static_cast<S>(to_double(data[i]));
  return result;
}

// The inputs as OpenBLAS takes them: fp32/fp64 as they are, 16-bit ones upcast to fp32 (kept in
// `upcast_copy` for as long as the pointer is used).
template <class S, class T>
const S *blas_input(const T *data, int64_t count, std::vector<S> &upcast_copy) {
  if constexpr (std::is_same_v<T, S>) {
    return data;
  } else {
    upcast_copy = upcast<S>(data, count);
    return upcast_copy.data();
  }
}

}  // namespace

template <class T>
std::vector<ScalarOf<T>> openblas_gemv(const GemvShape &s, ScalarOf<T> alpha, const T *a,
                                       const T *x, ScalarOf<T> beta, const T *y) {
  using S = ScalarOf<T>;
  std::vector<S> y_out = upcast<S>(y, s.y_extent());
  std::vector<S> a_upcast, x_upcast;
  const S *a_in = blas_input(a, s.matrix_extent(), a_upcast);
  const S *x_in = blas_input(x, s.x_extent(), x_upcast);
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

template <class T>
std::vector<ScalarOf<T>> openblas_gemm(const GemvShape &s, const RhsLayout &rhs,
                                       ScalarOf<T> alpha, const T *a, const T *x,
                                       ScalarOf<T> beta, const T *y) {
  using S = ScalarOf<T>;
  const BatchLayout columns = rhs.as_batch();
  std::vector<S> y_out = upcast<S>(y, columns.y_span(s));
  std::vector<S> a_upcast, x_upcast;
  const S *a_in = blas_input(a, s.matrix_extent(), a_upcast);
  const S *x_in = blas_input(x, columns.x_span(s), x_upcast);
  const auto gemm = [] {
    if constexpr (std::is_same_v<S, float>)
      return cblas_sgemm;
    else
      return cblas_dgemm;
  }();
  // op(A) is y_length x x_length; X is x_length x count; Y is y_length x count.
  gemm(CblasColMajor, cblas_trans(s.trans), CblasNoTrans, to_blasint(s.y_length()),
       to_blasint(rhs.count), to_blasint(s.x_length()), alpha, a_in, to_blasint(s.lda), x_in,
       to_blasint(rhs.ldx), beta, y_out.data(), to_blasint(rhs.ldy));
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

template std::vector<float> openblas_gemm<float>(const GemvShape &, const RhsLayout &, float,
                                                 const float *, const float *, float,
                                                 const float *);
template std::vector<double> openblas_gemm<double>(const GemvShape &, const RhsLayout &, double,
                                                   const double *, const double *, double,
                                                   const double *);
template std::vector<float> openblas_gemm<__half>(const GemvShape &, const RhsLayout &, float,
                                                  const __half *, const __half *, float,
                                                  const __half *);
template std::vector<float> openblas_gemm<__nv_bfloat16>(const GemvShape &, const RhsLayout &,
                                                         float, const __nv_bfloat16 *,
                                                         const __nv_bfloat16 *, float,
                                                         const __nv_bfloat16 *);

std::string openblas_library_path() {
  return library_defining(reinterpret_cast<const void *>(&cblas_sgemv));
}

std::string openblas_config() { return openblas_get_config(); }

}  // namespace xgemv_test
