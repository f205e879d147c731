#include "lt_routing.hpp"

#include <limits>

namespace xgemv::cublas_dropin {
namespace {

// A layout as a column-major matrix under an op: a row-major rows x cols matrix is the
// column-major cols x rows one, transposed (C equals T for the real types here).
struct StoredOperand {
  cublasOperation_t op;
  int64_t rows, cols, ld;  // the column-major matrix in memory
  int64_t op_rows() const { return op == CUBLAS_OP_N ? rows : cols; }
  int64_t op_cols() const { return op == CUBLAS_OP_N ? cols : rows; }
};

StoredOperand stored(const LtLayout &layout, cublasOperation_t op) {
  const auto size = [](uint64_t extent) { return static_cast<int64_t>(extent); };
  // An op BLAS has no name for stays what it is (and the call goes to cuBLASLt).
  const bool blas_op = op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
  if (layout.order == CUBLASLT_ORDER_ROW && blas_op)
    return {op == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N, size(layout.cols), size(layout.rows),
            layout.ld};
  return {op, size(layout.rows), size(layout.cols), layout.ld};
}

bool fits_int64(const LtLayout &layout) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  return layout.rows <= kMax && layout.cols <= kMax;
}

bool host_scalar_is_zero(const void *scalar, cudaDataType scale_type) {
  return scale_type == CUDA_R_64F ? *static_cast<const double *>(scalar) == 0.0
                                  : *static_cast<const float *>(scalar) == 0.0f;
}

// Why the call's descriptors ask for something xgemv does not compute, or nullptr.
const char *unserved_descriptor(const LtMatmul &call) {
  if (call.unserved_attribute != nullptr) return call.unserved_attribute;
  // cuBLASLt answers for NULL scalars itself; the checks below read a host beta.
  if (call.alpha == nullptr || call.beta == nullptr) return "NULL alpha or beta";
  if (call.trans_c != CUBLAS_OP_N) return "transc is not N";
  if (call.fill_mode != CUBLAS_FILL_MODE_FULL) return "fill mode is not full";
  if (call.pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
      call.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
    return "alpha or beta vectors (pointer mode)";
  if (call.epilogue != CUBLASLT_EPILOGUE_DEFAULT && call.epilogue != CUBLASLT_EPILOGUE_BIAS)
    return "an epilogue other than DEFAULT or BIAS";
  for (const LtLayout *layout : {&call.a_layout, &call.b_layout, &call.c_layout, &call.d_layout}) {
    if (layout->plane_offset != 0) return "planar complex layout";
    if (layout->batch_mode != 0) return "pointer-array batch";
    if (!fits_int64(*layout)) return "matrix size beyond int64";
  }
  for (const LtLayout *layout : {&call.a_layout, &call.b_layout})
    if (layout->order != CUBLASLT_ORDER_COL && layout->order != CUBLASLT_ORDER_ROW)
      return "A or B in a tiled order";
  if (call.c_layout.order != CUBLASLT_ORDER_COL || call.d_layout.order != CUBLASLT_ORDER_COL)
    return "C or D not in column order";
  return nullptr;
}

}  // namespace

Route route_lt_matmul(const LtMatmul &call) {
  if (const char *reason = unserved_descriptor(call)) return {std::nullopt, reason};

  const LtLayout &c = call.c_layout, &d = call.d_layout;
  const char *reason = nullptr;
  if (c.type != d.type) return {std::nullopt, "C and D types differ"};
  const ElementTypes *types = served_gemm_types(call.a_layout.type, call.b_layout.type, d.type,
                                                call.compute_type, &reason);
  if (types == nullptr) return {std::nullopt, reason};
  if (call.scale_type != (types->scalar == ElementType::kF64 ? CUDA_R_64F : CUDA_R_32F))
    return {std::nullopt, "scale type is not the compute type's"};

  // D (m x n) = op(A) (m x k) * op(B) (k x n), C of D's size.
  const StoredOperand a = stored(call.a_layout, call.trans_a);
  const StoredOperand b = stored(call.b_layout, call.trans_b);
  const int64_t m = static_cast<int64_t>(d.rows), n = static_cast<int64_t>(d.cols);
  const int64_t k = a.op_cols();
  if (c.rows != d.rows || c.cols != d.cols || a.op_rows() != m || b.op_rows() != k ||
      b.op_cols() != n)
    return {std::nullopt, "A, B, C and D sizes do not match"};

  const int32_t count = d.batch_count;
  if (count < 1) return {std::nullopt, "batch count below 1"};
  if (call.a_layout.batch_count != count || call.b_layout.batch_count != count ||
      c.batch_count != count)
    return {std::nullopt, "batch counts differ"};

  // xgemv computes in place: D is y. C must be D, or not be read.
  const bool in_place =
      call.c == call.d && c.ld == d.ld && (count == 1 || c.batch_stride == d.batch_stride);
  if (!in_place && !(call.pointer_mode == CUBLASLT_POINTER_MODE_HOST &&
                     host_scalar_is_zero(call.beta, call.scale_type)))
    return {std::nullopt, "C is not D and beta is not a host zero"};

  std::optional<GemvProblem> gemv =
      gemv_of_gemm(a.op, b.op, m, n, k, call.alpha, call.a, a.ld, call.b, b.ld, call.beta, call.d,
                   d.ld, *types,
                   GemmBatch{count, call.a_layout.batch_stride, call.b_layout.batch_stride,
                             d.batch_stride},
                   &reason);
  if (gemv && call.epilogue == CUBLASLT_EPILOGUE_BIAS) {
    if (call.bias == nullptr) return {std::nullopt, "bias epilogue without a bias"};
    if (call.bias_type != -1 && call.bias_type != d.type)
      return {std::nullopt, "bias type is not D's"};
    if (count > 1 && call.bias_batch_stride != 0)
      return {std::nullopt, "a bias per batch item"};
    if (!gemm_vectors_in_columns(m, n))
      return {std::nullopt, "bias with the vectors in D's rows"};
    gemv->bias = call.bias;
  }
  return route_gemv_of_gemm(gemv, reason);
}

xgemv_pointer_mode lt_pointer_mode(const LtMatmul &call) noexcept {
  return call.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE ? XGEMV_POINTER_MODE_DEVICE
                                                           : XGEMV_POINTER_MODE_HOST;
}

}  // namespace xgemv::cublas_dropin
