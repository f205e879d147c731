// The device reference: cuBLAS, with host scalars on the handle's stream.
#pragma once

#include <string>

#include <cublas_v2.h>

#include "element_types.hpp"
#include "gemv_layout.hpp"

namespace xgemv_test {

// y := alpha*op(A)*x + beta*y by cuBLAS, pointers and strides as for xgemv. One problem
// (batch == nullptr): cublasSgemv_v2 / cublasDgemv_v2, and for fp16/bf16 (which cuBLAS offers
// only batched) cublasHSHgemvStridedBatched / cublasTSTgemvStridedBatched with a batch of 1.
// A batch: the strided-batched form of each type. Returns cuBLAS's status; throws
// std::out_of_range for an argument beyond cuBLAS's int.
template <class T>
cublasStatus_t cublas_gemv(cublasHandle_t handle, const GemvShape &s, const BatchLayout *batch,
                           ScalarOf<T> alpha, const T *a, const T *x, ScalarOf<T> beta, T *y);

// Y := alpha*op(A)*X + beta*Y for rhs.count columns by cublasGemmEx with host scalars, on the
// same columns as the few-right-hand-side calls (X, Y column-major, leading dimensions rhs.ldx,
// rhs.ldy; s.incx and s.incy are not used). Every type in its own storage, scalars and
// accumulation in ScalarOf<T>, in cuBLAS's pedantic compute types (IEEE arithmetic in the
// accumulation type, no reduced-precision inputs or reductions). Returns cuBLAS's status; throws
// std::out_of_range for an argument beyond cuBLAS's int.
template <class T>
cublasStatus_t cublas_gemm(cublasHandle_t handle, const GemvShape &s, const RhsLayout &rhs,
                           ScalarOf<T> alpha, const T *a, const T *x, ScalarOf<T> beta, T *y);

// Y := alpha * A^T X + beta * Y by cublasGemmEx in CUBLAS_COMPUTE_32F with host scalars, for
// mixed types: A (k x n, lda) and X (k x nrhs, ldx) of ab_type, Y (n x nrhs, ldy) of y_type, all
// column-major. Reductions stay in fp32 (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION for the
// call: no split-K partial sums rounded to a 16-bit Y), so that fp32 accumulation bounds its
// error. Returns cuBLAS's status; throws std::out_of_range for an argument beyond cuBLAS's int.
cublasStatus_t cublas_gemm_t_compute_32f(cublasHandle_t handle, int64_t n, int64_t nrhs, int64_t k,
                                         float alpha, const void *a, cudaDataType_t ab_type,
                                         int64_t lda, const void *x, int64_t ldx, float beta,
                                         void *y, cudaDataType_t y_type, int64_t ldy);

// The file that provides cublasSgemv_v2 in this process, symbolic links resolved.
std::string cublas_library_path();

}  // namespace xgemv_test
