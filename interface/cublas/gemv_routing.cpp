#include "gemv_routing.hpp"

#include <algorithm>

#include "dropin_settings.hpp"

namespace xgemv::cublas_dropin {
namespace {

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

// The GemmEx type combinations xgemv serves: A/B type, C type, the GEMV's element types.
struct ServedGemmTypes {
  cudaDataType ab_type, c_type;
  ElementTypes types;
};
constexpr ServedGemmTypes kServedGemmTypes[] = {
    {CUDA_R_32F, CUDA_R_32F, element_types_of<float, float, float, float>()},
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
                                        const ElementTypes &types, const char **reason) {
  const char trans_a = blas_trans(transa), trans_b = blas_trans(transb);
  if (trans_a == '\0' || trans_b == '\0') {
    *reason = "op is not N, T or C";
    return std::nullopt;
  }
  if (m <= 0 || n <= 0 || k <= 0) {
    *reason = "empty GEMM (m, n or k <= 0)";
    return std::nullopt;
  }
  // Where the vectors are: in the columns of C (the matrix is A) or in its rows (the matrix is
  // B). One vector first, either way (the single-vector kernels), then the columns, then the
  // rows.
  const bool columns = n == 1 || (m != 1 && n <= kMaxGemmVectors);
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
                        const void *x, int64_t incx, int64_t ldx, int64_t incy, int64_t ldy,
                        int64_t count) {
    GemvProblem problem{types,  trans, rows, cols, {matrix, ld, 0, nullptr}, {x, incx, 0, nullptr},
                        {c, incy, 0, nullptr}, 1, alpha, beta};
    problem.x.ld = ldx;
    problem.y.ld = ldy;
    problem.rhs_count = count;
    return problem;
  };
  // Columns of C: y_j = op(A) * (column j of op(B)); column j of B^T is row j of B.
  if (columns)
    return gemv(a_plain ? 'N' : 'T', rows_a, a_plain ? k : m, a, lda, b, b_plain ? 1 : ldb,
                b_plain ? ldb : 1, 1, ldc, n);
  // Rows of C (C^T = op(B)^T op(A)^T): y_i = op(B)^T * (row i of op(A)), y_i row i of C (inc
  // ldc); row i of A is strided by lda, row i of A^T is column i of A.
  return gemv(b_plain ? 'T' : 'N', rows_b, b_plain ? n : k, b, ldb, a, a_plain ? lda : 1,
              a_plain ? 1 : lda, ldc, 1, m);
}

Route route_gemm(cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
                 int64_t k, const void *alpha, const void *a, cudaDataType a_type, int64_t lda,
                 const void *b, cudaDataType b_type, int64_t ldb, const void *beta, void *c,
                 cudaDataType c_type, int64_t ldc, cublasComputeType_t compute_type) {
  if (!is_fp32_compute(compute_type)) return {std::nullopt, "compute type is not 32F"};
  if (a_type != b_type) return {std::nullopt, "A and B types differ"};
  const ServedGemmTypes *served = nullptr;
  for (const ServedGemmTypes &types : kServedGemmTypes)
    if (types.ab_type == a_type && types.c_type == c_type) served = &types;
  const char *reason = "data types not served";
  const std::optional<GemvProblem> gemv =
      served ? gemv_of_gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                            served->types, &reason)
             : std::nullopt;
  if (!gemv) return {std::nullopt, reason};
  // Several vectors are served where xgemv runs them on the tensor cores (16-bit op T, the
  // layout of x @ W.T); its CUDA-core kernels for several fp32 vectors or op N lose to cuBLAS's
  // GEMM from about four vectors on (bench/results), so those calls stay with cuBLAS.
  const bool sixteen_bit = gemv->types.a == ElementType::kF16 || gemv->types.a == ElementType::kBF16;
  if (gemv->rhs_count > 1 && !(sixteen_bit && gemv->transposed()))
    return {std::nullopt, "several vectors of fp32 or op N (cuBLAS's GEMM is faster there)"};
  return checked_route(*gemv);
}

}  // namespace xgemv::cublas_dropin
