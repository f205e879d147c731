#include "gemv_routing.hpp"

#include <algorithm>

#include "dropin_settings.hpp"

namespace xgemv::cublas_dropin {
namespace {

bool is_fp64_compute(cublasComputeType_t compute_type) {
  return compute_type == CUBLAS_COMPUTE_64F || compute_type == CUBLAS_COMPUTE_64F_PEDANTIC;
}

bool is_fp32_compute(cublasComputeType_t compute_type) {
  switch (compute_type) {
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
      return true;
    default:
      return false;
  }
}

// The GEMM type combinations xgemv serves: A/B type, C type, the GEMV's element types.
struct ServedGemmTypes {
  cudaDataType ab_type, c_type;
  ElementTypes types;
};
constexpr ServedGemmTypes kServedGemmTypes[] = {
    {CUDA_R_32F, CUDA_R_32F, element_types_of<float, float, float, float>()},
    {CUDA_R_64F, CUDA_R_64F, element_types_of<double, double, double, double>()},
    {CUDA_R_16F, CUDA_R_16F, element_types_of<__half, __half, __half, float>()},
    {CUDA_R_16BF, CUDA_R_16BF,
     element_types_of<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float>()},
    {CUDA_R_16F, CUDA_R_32F, element_types_of<__half, __half, float, float>()},
    {CUDA_R_16BF, CUDA_R_32F, element_types_of<__nv_bfloat16, __nv_bfloat16, float, float>()},
};

}  // namespace

char blas_trans(cublasOperation_t op) noexcept {
  switch (op) {
    case CUBLAS_OP_N: return 'N';
    case CUBLAS_OP_T: return 'T';
    case CUBLAS_OP_C: return 'C';
    default: return '\0';
  }
}

Route checked_route(const GemvProblem &problem) {
  if (problem.trans == '\0') return {std::nullopt, "op is not N, T or C"};
  xgemv_status status = XGEMV_STATUS_SUCCESS;
  std::optional<CheckedProblem> checked = check_problem(problem, &status);
  if (!checked) return {std::nullopt, xgemv_status_string(status)};
  return {std::move(checked), nullptr};
}

std::optional<GemvProblem> gemv_of_gemm(cublasOperation_t transa, cublasOperation_t transb,
                                        int64_t m, int64_t n, int64_t k, const void *alpha,
                                        const void *a, int64_t lda, const void *b, int64_t ldb,
                                        const void *beta, void *c, int64_t ldc,
                                        const ElementTypes &types, const GemmBatch &batch,
                                        const char **reason) {
  const char trans_a = blas_trans(transa), trans_b = blas_trans(transb);
  if (trans_a == '\0' || trans_b == '\0') {
    *reason = "op is not N, T or C";
    return std::nullopt;
  }
  if (m <= 0 || n <= 0 || k <= 0) {
    *reason = "empty GEMM (m, n or k <= 0)";
    return std::nullopt;
  }
  const bool columns = gemm_vectors_in_columns(m, n);
  if (!columns && m > kMaxGemmVectors) {
    *reason = "a GEMM (C has more than 16 rows and more than 16 columns)";
    return std::nullopt;
  }
  const bool a_plain = trans_a == 'N', b_plain = trans_b == 'N';
  const int64_t rows_a = a_plain ? m : k, rows_b = b_plain ? k : n;
  if (lda < std::max<int64_t>(1, rows_a) || ldb < std::max<int64_t>(1, rows_b) ||
      ldc < std::max<int64_t>(1, m)) {
    *reason = "invalid GEMM leading dimension";
    return std::nullopt;
  }
  // x_r = x + r*ldx and y_r = c + r*ldy, r < count, with elements inc apart.
  const auto gemv = [&](char trans, int64_t rows, int64_t cols, const void *matrix, int64_t ld,
                        int64_t matrix_stride, const void *x, int64_t incx, int64_t ldx,
                        int64_t x_stride, int64_t incy, int64_t ldy, int64_t count) {
    GemvProblem problem{types,
                        trans,
                        rows,
                        cols,
                        {matrix, ld, matrix_stride, nullptr},
                        {x, incx, x_stride, nullptr},
                        {c, incy, batch.stride_c, nullptr},
                        batch.count,
                        alpha,
                        beta};
    problem.x.ld = ldx;
    problem.y.ld = ldy;
    problem.rhs_count = count;
    return problem;
  };
  // Columns of C: y_j = op(A) * (column j of op(B)); column j of B^T is row j of B.
  if (columns)
    return gemv(a_plain ? 'N' : 'T', rows_a, a_plain ? k : m, a, lda, batch.stride_a, b,
                b_plain ? 1 : ldb, b_plain ? ldb : 1, batch.stride_b, 1, ldc, n);
  // Rows of C (C^T = op(B)^T op(A)^T): y_i = op(B)^T * (row i of op(A)), y_i row i of C (inc
  // ldc); row i of A is strided by lda, row i of A^T is column i of A.
  return gemv(b_plain ? 'T' : 'N', rows_b, b_plain ? n : k, b, ldb, batch.stride_b, a,
              a_plain ? lda : 1, a_plain ? 1 : lda, batch.stride_a, ldc, 1, m);
}

const ElementTypes *served_gemm_types(cudaDataType a_type, cudaDataType b_type,
                                      cudaDataType c_type, cublasComputeType_t compute_type,
                                      const char **reason) {
  if (a_type != b_type) {
    *reason = "A and B types differ";
    return nullptr;
  }
  const bool fp64 = a_type == CUDA_R_64F;
  if (fp64 ? !is_fp64_compute(compute_type) : !is_fp32_compute(compute_type)) {
    *reason = fp64 ? "compute type is not 64F" : "compute type is not 32F";
    return nullptr;
  }
  for (const ServedGemmTypes &types : kServedGemmTypes)
    if (types.ab_type == a_type && types.c_type == c_type) return &types.types;
  *reason = "data types not served";
  return nullptr;
}

// The most vectors one problem is served with, by op and A's type: as many as xgemv's kernel
// is at least as fast as cuBLAS's GEMM with as many columns, measured over the 25 llm shapes,
// geo-mean (worst), on the H200:
// - op T: 16-bit on the tensor cores 1.07-1.08x at 2-8 vectors (0.94x), 1.00x at 16 (0.80x);
//   fp64 on the fp64 tensor cores 1.02-1.10x at 2-16 (0.93x); fp32 on the CUDA cores
//   1.21-1.59x at 2-8 (0.95x), 0.87x at 16 in two passes of 8; in one pass through the
//   shared-memory ring 1.09x at 12 and 1.10x at 16, but 7 of 25 shapes below 1.0x (0.94x),
//   and on an H100 1.02-1.04x at 9-16 with up to 16 of 25 below (0.81x at 9), and unaligned
//   columns still in passes of 8, so Sgemm keeps them;
// - op N: 16-bit on the tensor cores 1.01-1.04x at 2-8 (0.85x), 0.95x at 16; fp64 1.10-1.15x
//   at 2-16 (0.97x).
// fp32 op N on the CUDA cores, since its kernel stages x in shared memory, on an H100:
// 1.58x at 2 vectors (1.06x), 1.55x at 4 (1.06x), 1.22x at 8 (0.90x), 1.09x at 16 (0.82x), so
// Sgemm keeps more than 4 (docs/design-notes.md, the cuBLAS drop-in's choices).
namespace {
int64_t served_vectors(const GemvProblem &gemv) {
  const ElementType a = gemv.types.a;
  if (gemv.transposed()) return a == ElementType::kF32 ? 8 : 16;
  return a == ElementType::kF64 ? 16 : a == ElementType::kF32 ? 4 : 8;
}
}  // namespace

Route route_gemv_of_gemm(const std::optional<GemvProblem> &gemv, const char *reason) {
  if (!gemv) return {std::nullopt, reason};
  if (gemv->rhs_count > served_vectors(*gemv))
    return {std::nullopt,
            "several vectors where cuBLAS's GEMM is faster (more than 4 of fp32 op N; more than 8 "
            "of fp32 op T or of 16-bit op N)"};
  return checked_route(*gemv);
}

Route route_gemm(cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
                 int64_t k, const void *alpha, const void *a, cudaDataType a_type, int64_t lda,
                 const void *b, cudaDataType b_type, int64_t ldb, const void *beta, void *c,
                 cudaDataType c_type, int64_t ldc, cublasComputeType_t compute_type) {
  const char *reason = nullptr;
  const ElementTypes *types = served_gemm_types(a_type, b_type, c_type, compute_type, &reason);
  if (types == nullptr) return {std::nullopt, reason};
  const std::optional<GemvProblem> gemv = gemv_of_gemm(transa, transb, m, n, k, alpha, a, lda, b,
                                                       ldb, beta, c, ldc, *types, GemmBatch{},
                                                       &reason);
  return route_gemv_of_gemm(gemv, reason);
}

}  // namespace xgemv::cublas_dropin
