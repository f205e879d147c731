// Which cublasLtMatmul calls xgemv serves: the matmuls that are a GEMV or a few-vector GEMV (D
// with at most 16 columns or rows, gemv_routing.hpp), with the default or the bias epilogue, in
// the types and compute types of served_gemm_types. A call arrives as opaque descriptors; the
// drop-in reads them (lt_descriptors.hpp) into an LtMatmul, plain values, so that the decision
// itself is testable without cuBLASLt. Everything else goes to the real cuBLASLt untouched.
#pragma once

#include <cstdint>

#include <cublasLt.h>

#include "gemv_routing.hpp"

namespace xgemv::cublas_dropin {

// One matrix layout (cublasLtMatrixLayoutAttribute_t).
struct LtLayout {
  cudaDataType type = CUDA_R_32F;
  int32_t order = CUBLASLT_ORDER_COL;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;  // elements
  int64_t plane_offset = 0;  // planar complex: not served
  uint32_t batch_mode = 0;   // 0: strided; pointer arrays are not served
};

// One cublasLtMatmul call, its descriptors read: D = alpha*op(A)*op(B) + beta*C (+ bias).
struct LtMatmul {
  cublasComputeType_t compute_type = CUBLAS_COMPUTE_32F;
  cudaDataType scale_type = CUDA_R_32F;
  int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N, trans_c = CUBLAS_OP_N;
  int32_t fill_mode = CUBLAS_FILL_MODE_FULL;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void *bias = nullptr;
  int32_t bias_type = -1;  // -1: D's type
  int64_t bias_batch_stride = 0;
  // The first attribute set to a value xgemv does not implement (the fp8 scale and amax
  // pointers, ...), by name; nullptr: none.
  const char *unserved_attribute = nullptr;
  const void *alpha = nullptr, *beta = nullptr;  // host or device (pointer_mode)
  const void *a = nullptr, *b = nullptr, *c = nullptr;
  void *d = nullptr;
  LtLayout a_layout, b_layout, c_layout, d_layout;
};

// The verdict on one call. Served, the problem computes D in place: it is y, and C is either D
// itself (same pointer and layout) or not read (host beta == 0). Several vectors follow the
// GEMM rule (route_gemv_of_gemm); a bias needs the vectors in D's columns (the bias runs along
// D's rows, as y does) and one bias for every batch item (bias batch stride 0).
Route route_lt_matmul(const LtMatmul &call);

// xgemv's pointer mode for the call's (route_lt_matmul serves host and device only).
xgemv_pointer_mode lt_pointer_mode(const LtMatmul &call) noexcept;

}  // namespace xgemv::cublas_dropin
