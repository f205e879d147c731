#include "gemv_routing.hpp"

#include <algorithm>
#include <cstdio>

#include "dropin_settings.hpp"
#include "real_cublas.hpp"
#include "xgemv_handles.hpp"

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

// "T m=64 n=32 batch=1", for the log.
void describe(const AnyGemvCall &call, char *text, std::size_t size) {
  std::visit(
      [&](const auto &typed) {
        std::snprintf(text, size, "%c m=%lld n=%lld batch=%lld", typed.trans,
                      static_cast<long long>(typed.m), static_cast<long long>(typed.n),
                      static_cast<long long>(typed.batch_count));
      },
      call);
}

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

ServeResult serve(const char *entry, cublasHandle_t handle, const AnyGemvCall &call) noexcept {
  if (handle == nullptr) return {CUBLAS_STATUS_SUCCESS, "NULL handle"};
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  if (real_get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS ||
      real_get_pointer_mode(handle, &pointer_mode) != CUBLAS_STATUS_SUCCESS)
    return {CUBLAS_STATUS_SUCCESS, "cannot read the handle's stream or pointer mode"};

  xgemv_status status = XGEMV_STATUS_INTERNAL_ERROR;
  {
    const HandleLease lease = acquire_xgemv_handle(handle, stream);
    if (!lease) return {CUBLAS_STATUS_SUCCESS, lease.reason()};
    xgemv_set_pointer_mode(lease.get(), pointer_mode == CUBLAS_POINTER_MODE_DEVICE
                                            ? XGEMV_POINTER_MODE_DEVICE
                                            : XGEMV_POINTER_MODE_HOST);
    status =
        std::visit([&](const auto &typed) { return xgemv::gemv(lease.get(), typed); }, call);
  }

  switch (status) {
    case XGEMV_STATUS_SUCCESS:
      if (logging_enabled()) {
        char text[96];
        describe(call, text, sizeof text);
        log_call(entry, "xgemv", text);
      }
      return {CUBLAS_STATUS_SUCCESS, nullptr};
    case XGEMV_STATUS_CUDA_ERROR:  // the launch failed, as a cuBLAS kernel launch could
      log_call(entry, "xgemv", cudaGetErrorString(xgemv_last_cuda_error()));
      return {CUBLAS_STATUS_EXECUTION_FAILED, nullptr};
    case XGEMV_STATUS_INTERNAL_ERROR:
      log_call(entry, "xgemv", "internal error");
      return {CUBLAS_STATUS_INTERNAL_ERROR, nullptr};
    default:  // refused before touching anything (device, pointers): cuBLAS gives its own answer
      return {CUBLAS_STATUS_SUCCESS, xgemv_status_string(status)};
  }
}

}  // namespace xgemv::cublas_dropin
