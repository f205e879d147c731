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

// The GEMV of a GEMM, typed: y = C, the vector is the operand that is not the matrix.
template <class TA, class TY>
Route gemv_of_gemm_typed(const GemvOfGemm &gemv, const void *alpha, const void *matrix,
                         const void *vector, const void *beta, void *c) {
  GemvCall<TA, TY, float> call;
  call.m = gemv.m;
  call.n = gemv.n;
  call.alpha = static_cast<const float *>(alpha);
  call.a = static_cast<const TA *>(matrix);
  call.lda = gemv.lda;
  call.x = static_cast<const TA *>(vector);
  call.incx = gemv.incx;
  call.beta = static_cast<const float *>(beta);
  call.y = static_cast<TY *>(c);
  call.incy = gemv.incy;
  return checked_gemv(gemv.trans, call);
}

// The GemmEx type combinations xgemv serves: A/B type, C type, the typed GEMV.
struct ServedGemmTypes {
  cudaDataType ab_type, c_type;
  Route (*make)(const GemvOfGemm &, const void *, const void *, const void *, const void *,
                void *);
};
constexpr ServedGemmTypes kServedGemmTypes[] = {
    {CUDA_R_32F, CUDA_R_32F, &gemv_of_gemm_typed<float, float>},
    {CUDA_R_16F, CUDA_R_16F, &gemv_of_gemm_typed<__half, __half>},
    {CUDA_R_16BF, CUDA_R_16BF, &gemv_of_gemm_typed<__nv_bfloat16, __nv_bfloat16>},
    {CUDA_R_16F, CUDA_R_32F, &gemv_of_gemm_typed<__half, float>},
    {CUDA_R_16BF, CUDA_R_32F, &gemv_of_gemm_typed<__nv_bfloat16, float>},
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

Route checked_gemv(char trans, AnyGemvCall call) {
  if (trans == '\0') return Route::forward("op is not N, T or C");
  return std::visit(
      [&](auto &typed) {
        typed.trans = trans;
        const xgemv_status status = check_gemv_arguments(typed.trans, typed.m, typed.n, typed.lda,
                                                         typed.incx, typed.incy);
        if (status != XGEMV_STATUS_SUCCESS) return Route::forward(xgemv_status_string(status));
        if (typed.batch_count < 0) return Route::forward("batch count < 0");
        return Route::serve(typed);
      },
      call);
}

std::optional<GemvOfGemm> gemv_of_gemm(cublasOperation_t transa, cublasOperation_t transb,
                                       int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                                       int64_t ldc, const char **reason) {
  const char trans_a = blas_trans(transa), trans_b = blas_trans(transb);
  if (trans_a == '\0' || trans_b == '\0') {
    *reason = "op is not N, T or C";
    return std::nullopt;
  }
  if (m <= 0 || n <= 0 || k <= 0) {
    *reason = "empty GEMM (m, n or k <= 0)";
    return std::nullopt;
  }
  if (m != 1 && n != 1) {
    *reason = "a GEMM (C is neither one row nor one column)";
    return std::nullopt;
  }
  const bool a_plain = trans_a == 'N', b_plain = trans_b == 'N';
  const int64_t rows_a = a_plain ? m : k, rows_b = b_plain ? k : n;
  if (lda < std::max<int64_t>(1, rows_a) || ldb < std::max<int64_t>(1, rows_b) ||
      ldc < std::max<int64_t>(1, m)) {
    *reason = "invalid GEMM leading dimension";
    return std::nullopt;
  }
  if (n == 1) {
    // C is a column: y = op(A) * (column 0 of op(B)); that column of B^T is row 0 of B.
    return GemvOfGemm{a_plain ? 'N' : 'T', rows_a, a_plain ? k : m, lda,
                      /*matrix_is_b=*/false, b_plain ? 1 : ldb, 1};
  }
  // C is a row (stride ldc): y = op(B)^T * (row 0 of op(A)); that row of A is strided by lda.
  return GemvOfGemm{b_plain ? 'T' : 'N', rows_b, b_plain ? n : k, ldb,
                    /*matrix_is_b=*/true, a_plain ? lda : 1, ldc};
}

Route route_gemm(cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
                 int64_t k, const void *alpha, const void *a, cudaDataType a_type, int64_t lda,
                 const void *b, cudaDataType b_type, int64_t ldb, const void *beta, void *c,
                 cudaDataType c_type, int64_t ldc, cublasComputeType_t compute_type) {
  if (!is_fp32_compute(compute_type)) return Route::forward("compute type is not 32F");
  if (a_type != b_type) return Route::forward("A and B types differ");
  const char *reason = nullptr;
  const std::optional<GemvOfGemm> gemv =
      gemv_of_gemm(transa, transb, m, n, k, lda, ldb, ldc, &reason);
  if (!gemv) return Route::forward(reason);
  for (const ServedGemmTypes &types : kServedGemmTypes) {
    if (types.ab_type == a_type && types.c_type == c_type)
      return types.make(*gemv, alpha, gemv->matrix_is_b ? b : a, gemv->matrix_is_b ? a : b, beta,
                        c);
  }
  return Route::forward("data types not served");
}

}  // namespace xgemv::cublas_dropin
