#include "cublas_reference.hpp"

#include <type_traits>

#include "library_path.hpp"
#include "reference_arguments.hpp"

namespace xgemv_test {
namespace {

cublasOperation_t cublas_op(char trans) {
  return reference_op(trans, CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C, "cuBLAS");
}

int to_int(int64_t value) { return reference_int<int>(value, "cuBLAS"); }

// The cudaDataType of T and the pedantic compute type of its accumulation.
template <class T>
constexpr cudaDataType_t data_type() {
  return per_element_type<T>(CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF);
}
template <class T>
constexpr cublasComputeType_t pedantic_compute_type() {
  return std::is_same_v<ScalarOf<T>, double> ? CUBLAS_COMPUTE_64F_PEDANTIC
                                             : CUBLAS_COMPUTE_32F_PEDANTIC;
}

}  // namespace

template <class T>
cublasStatus_t cublas_gemv(cublasHandle_t handle, const GemvShape &s, const BatchLayout *batch,
                           ScalarOf<T> alpha, const T *a, const T *x, ScalarOf<T> beta, T *y) {
  if (const cublasStatus_t status = cublasSetPointerMode_v2(handle, CUBLAS_POINTER_MODE_HOST);
      status != CUBLAS_STATUS_SUCCESS)
    return status;
  const cublasOperation_t op = cublas_op(s.trans);
  const int m = to_int(s.m), n = to_int(s.n), lda = to_int(s.lda);
  const int incx = to_int(s.incx), incy = to_int(s.incy);
  if (batch == nullptr) {
    if constexpr (std::is_same_v<T, float>) {
      return cublasSgemv_v2(handle, op, m, n, &alpha, a, lda, x, incx, &beta, y, incy);
    } else if constexpr (std::is_same_v<T, double>) {
      return cublasDgemv_v2(handle, op, m, n, &alpha, a, lda, x, incx, &beta, y, incy);
    }
  }
  const BatchLayout one{};
  const BatchLayout &b = batch ? *batch : one;
  const int count = to_int(b.count);
  if constexpr (std::is_same_v<T, float>) {
    return cublasSgemvStridedBatched(handle, op, m, n, &alpha, a, lda, b.stride_a, x, incx,
                                     b.stride_x, &beta, y, incy, b.stride_y, count);
  } else if constexpr (std::is_same_v<T, double>) {
    return cublasDgemvStridedBatched(handle, op, m, n, &alpha, a, lda, b.stride_a, x, incx,
                                     b.stride_x, &beta, y, incy, b.stride_y, count);
  } else if constexpr (std::is_same_v<T, __half>) {
    return cublasHSHgemvStridedBatched(handle, op, m, n, &alpha, a, lda, b.stride_a, x, incx,
                                       b.stride_x, &beta, y, incy, b.stride_y, count);
  } else {
    return cublasTSTgemvStridedBatched(handle, op, m, n, &alpha, a, lda, b.stride_a, x, incx,
                                       b.stride_x, &beta, y, incy, b.stride_y, count);
  }
}

template cublasStatus_t cublas_gemv<float>(cublasHandle_t, const GemvShape &, const BatchLayout *,
                                           float, const float *, const float *, float, float *);
template cublasStatus_t cublas_gemv<double>(cublasHandle_t, const GemvShape &, const BatchLayout *,
                                            double, const double *, const double *, double,
                                            double *);
template cublasStatus_t cublas_gemv<__half>(cublasHandle_t, const GemvShape &, const BatchLayout *,
                                            float, const __half *, const __half *, float, __half *);
template cublasStatus_t cublas_gemv<__nv_bfloat16>(cublasHandle_t, const GemvShape &,
                                                   const BatchLayout *, float,
                                                   const __nv_bfloat16 *, const __nv_bfloat16 *,
                                                   float, __nv_bfloat16 *);

template <class T>
cublasStatus_t cublas_gemm(cublasHandle_t handle, const GemvShape &s, const RhsLayout &rhs,
                           ScalarOf<T> alpha, const T *a, const T *x, ScalarOf<T> beta, T *y) {
  if (const cublasStatus_t status = cublasSetPointerMode_v2(handle, CUBLAS_POINTER_MODE_HOST);
      status != CUBLAS_STATUS_SUCCESS)
    return status;
  // op(A) is y_length x x_length; X is x_length x count; Y is y_length x count.
  return cublasGemmEx(handle, cublas_op(s.trans), CUBLAS_OP_N, to_int(s.y_length()),
                      to_int(rhs.count), to_int(s.x_length()), &alpha, a, data_type<T>(),
                      to_int(s.lda), x, data_type<T>(), to_int(rhs.ldx), &beta, y,
                      data_type<T>(), to_int(rhs.ldy), pedantic_compute_type<T>(),
                      CUBLAS_GEMM_DEFAULT);
}

template cublasStatus_t cublas_gemm<float>(cublasHandle_t, const GemvShape &, const RhsLayout &,
                                           float, const float *, const float *, float, float *);
template cublasStatus_t cublas_gemm<double>(cublasHandle_t, const GemvShape &, const RhsLayout &,
                                            double, const double *, const double *, double,
                                            double *);
template cublasStatus_t cublas_gemm<__half>(cublasHandle_t, const GemvShape &, const RhsLayout &,
                                            float, const __half *, const __half *, float, __half *);
template cublasStatus_t cublas_gemm<__nv_bfloat16>(cublasHandle_t, const GemvShape &,
                                                   const RhsLayout &, float,
                                                   const __nv_bfloat16 *, const __nv_bfloat16 *,
                                                   float, __nv_bfloat16 *);

cublasStatus_t cublas_gemm_t_compute_32f(cublasHandle_t handle, int64_t n, int64_t nrhs, int64_t k,
                                         float alpha, const void *a, cudaDataType_t ab_type,
                                         int64_t lda, const void *x, int64_t ldx, float beta,
                                         void *y, cudaDataType_t y_type, int64_t ldy) {
  const int n_int = to_int(n), nrhs_int = to_int(nrhs), k_int = to_int(k);
  const int lda_int = to_int(lda), ldx_int = to_int(ldx), ldy_int = to_int(ldy);
  if (const cublasStatus_t status = cublasSetPointerMode_v2(handle, CUBLAS_POINTER_MODE_HOST);
      status != CUBLAS_STATUS_SUCCESS)
    return status;
  cublasMath_t mode = CUBLAS_DEFAULT_MATH;
  if (const cublasStatus_t status = cublasGetMathMode(handle, &mode);
      status != CUBLAS_STATUS_SUCCESS)
    return status;
  if (const cublasStatus_t status = cublasSetMathMode(
          handle, cublasMath_t(mode | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
      status != CUBLAS_STATUS_SUCCESS)
    return status;
  const cublasStatus_t status = cublasGemmEx(
      handle, CUBLAS_OP_T, CUBLAS_OP_N, n_int, nrhs_int, k_int, &alpha, a, ab_type, lda_int, x,
      ab_type, ldx_int, &beta, y, y_type, ldy_int, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  cublasSetMathMode(handle, mode);
  return status;
}

std::string cublas_library_path() {
  return library_defining(reinterpret_cast<const void *>(&cublasSgemv_v2));
}

}  // namespace xgemv_test
