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

// The file that provides cublasSgemv_v2 in this process, symbolic links resolved.
std::string cublas_library_path();

}  // namespace xgemv_test
