// The cuBLAS drop-in's routing decisions, on the CPU: which calls xgemv serves (valid BLAS
// only; cuBLAS keeps the rest, interface/README.md) and how a one-row / one-column GEMM becomes a
// GEMV, checked by running both on the host for every op combination.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cublas/gemv_routing.hpp"

namespace xgemv::cublas_dropin {
namespace {

using FloatCall = GemvCall<float, float, float>;
using HalfCall = GemvCall<__half, __half, float>;
using Bf16Call = GemvCall<__nv_bfloat16, __nv_bfloat16, float>;
using HalfToFloatCall = GemvCall<__half, float, float>;
using Bf16ToFloatCall = GemvCall<__nv_bfloat16, float, float>;

// Whether the verdict is "xgemv serves it, as a Call".
template <class Call>
bool serves_as(const Route &verdict) {
  return verdict.call.has_value() && std::holds_alternative<Call>(*verdict.call);
}

const float kOne = 1.0f;

std::string reason_of(const Route &route) {
  return route.forward_reason != nullptr ? route.forward_reason : "";
}

Route sgemv(cublasOperation_t op, int m, int n, int lda, int incx, int incy) {
  static float a[1], x[1], y[1];
  return route(op, m, n, &kOne, a, lda, x, incx, &kOne, y, incy);
}

TEST(GemvRouting, ServesValidBlasCallsWithTheirOp) {
  const struct {
    cublasOperation_t op;
    char trans;
  } ops[] = {{CUBLAS_OP_N, 'N'}, {CUBLAS_OP_T, 'T'}, {CUBLAS_OP_C, 'C'}};
  for (const auto &op : ops) {
    const Route verdict = sgemv(op.op, 5, 3, 5, -2, 1);
    ASSERT_TRUE(verdict.call.has_value()) << reason_of(verdict);
    const auto &call = std::get<FloatCall>(*verdict.call);
    EXPECT_EQ(call.trans, op.trans);
    EXPECT_EQ(call.m, 5);
    EXPECT_EQ(call.n, 3);
    EXPECT_EQ(call.incx, -2);
  }
  // Empty problems are valid BLAS (quick return) and xgemv's to serve.
  EXPECT_TRUE(sgemv(CUBLAS_OP_N, 0, 3, 1, 1, 1).call.has_value());
}

// What cuBLAS accepts and Reference BLAS does not stays with cuBLAS, which answers for itself
// (m = -1 SUCCESS, incx = 0 computes, CONJG as op N, lda < m INVALID_VALUE, ...).
TEST(GemvRouting, ForwardsWhatIsNotValidBlas) {
  const struct {
    Route verdict;
    const char *reason_part;
  } cases[] = {
      {sgemv(CUBLAS_OP_CONJG, 2, 2, 2, 1, 1), "op"},
      {sgemv(static_cast<cublasOperation_t>(7), 2, 2, 2, 1, 1), "op"},
      {sgemv(CUBLAS_OP_N, -1, 2, 2, 1, 1), "m < 0"},
      {sgemv(CUBLAS_OP_T, 2, -1, 2, 1, 1), "n < 0"},
      {sgemv(CUBLAS_OP_T, 3, 2, 2, 1, 1), "lda"},
      {sgemv(CUBLAS_OP_N, 0, 0, 0, 1, 1), "lda"},
      {sgemv(CUBLAS_OP_N, 2, 2, 2, 0, 1), "incx"},
      {sgemv(CUBLAS_OP_N, 2, 2, 2, 1, 0), "incy"},
  };
  for (const auto &c : cases) {
    EXPECT_FALSE(c.verdict.call.has_value());
    EXPECT_NE(reason_of(c.verdict).find(c.reason_part), std::string::npos) << reason_of(c.verdict);
  }
}

TEST(GemvRouting, BatchedFormsCarryTheirBatch) {
  const float *const *no_arrays = nullptr;
  float *const *no_outputs = nullptr;
  const Route arrays =
      route(CUBLAS_OP_T, 4, 3, &kOne, no_arrays, 4, no_arrays, 1, &kOne, no_outputs, 1, 9);
  ASSERT_TRUE(arrays.call.has_value());
  EXPECT_EQ(std::get<FloatCall>(*arrays.call).batch_count, 9);

  static __half a[1], x[1], y[1];
  const Route strided = route(CUBLAS_OP_N, int64_t(4), int64_t(3), &kOne, a, int64_t(4), 12LL, x,
                              int64_t(1), 3LL, &kOne, y, int64_t(1), 4LL, int64_t(5));
  ASSERT_TRUE(strided.call.has_value());
  const auto &call = std::get<HalfCall>(*strided.call);
  EXPECT_EQ(call.batch_count, 5);
  EXPECT_EQ(call.stride_a, 12);
  EXPECT_EQ(call.stride_y, 4);

  EXPECT_TRUE(route(CUBLAS_OP_T, 4, 3, &kOne, no_arrays, 4, no_arrays, 1, &kOne, no_outputs, 1, 0)
                  .call.has_value());
  EXPECT_FALSE(route(CUBLAS_OP_T, 4, 3, &kOne, no_arrays, 4, no_arrays, 1, &kOne, no_outputs, 1, -1)
                   .call.has_value());
}

// --- GEMM as GEMV
// ---------------------------------------------------------------------------------

double element(const std::vector<double> &matrix, int64_t ld, int64_t row, int64_t col) {
  return matrix[size_t(row + col * ld)];
}

// C = alpha*op(A)*op(B) + beta*C on the host, column-major; real ops (C equals T).
std::vector<double> host_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                              const std::vector<double> &a, int64_t lda,
                              const std::vector<double> &b, int64_t ldb, std::vector<double> c,
                              int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < k; ++l)
        sum += (trans_a ? element(a, lda, l, i) : element(a, lda, i, l)) *
               (trans_b ? element(b, ldb, j, l) : element(b, ldb, l, j));
      c[size_t(i + j * ldc)] = 2 * sum - c[size_t(i + j * ldc)];
    }
  }
  return c;
}

// y = alpha*op(M)*x + beta*y on the host, BLAS conventions (positive increments here).
std::vector<double> host_gemv(const GemvOfGemm &g, const std::vector<double> &matrix,
                              const std::vector<double> &x, std::vector<double> y) {
  const bool transposed = g.trans != 'N';
  const int64_t rows = transposed ? g.n : g.m, cols = transposed ? g.m : g.n;
  for (int64_t i = 0; i < rows; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j)
      sum += (transposed ? element(matrix, g.lda, j, i) : element(matrix, g.lda, i, j)) *
             x[size_t(j * g.incx)];
    y[size_t(i * g.incy)] = 2 * sum - y[size_t(i * g.incy)];
  }
  return y;
}

std::vector<double> numbered(size_t count, int seed) {
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = double((i * 7 + size_t(seed) * 13) % 11) - 5;
  return values;
}

TEST(GemmAsGemv, EveryOpCombinationMatchesTheGemm) {
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {{7, 1, 5}, {1, 6, 4}, {1, 1, 9}, {13, 1, 1}, {1, 8, 1}};
  int checked = 0;
  for (cublasOperation_t op_a : ops) {
    for (cublasOperation_t op_b : ops) {
      for (const Shape &s : shapes) {
        for (int64_t pad : {0, 3}) {
          const bool ta = op_a != CUBLAS_OP_N, tb = op_b != CUBLAS_OP_N;
          const int64_t lda = (ta ? s.k : s.m) + pad, ldb = (tb ? s.n : s.k) + pad;
          const int64_t ldc = s.m + pad;
          const auto a = numbered(size_t(lda * (ta ? s.m : s.k)), 1);
          const auto b = numbered(size_t(ldb * (tb ? s.k : s.n)), 2);
          const auto c = numbered(size_t(ldc * s.n), 3);
          const char *reason = nullptr;
          const auto gemv = gemv_of_gemm(op_a, op_b, s.m, s.n, s.k, lda, ldb, ldc, &reason);
          ASSERT_TRUE(gemv.has_value()) << reason;
          const auto expected = host_gemm(ta, tb, s.m, s.n, s.k, a, lda, b, ldb, c, ldc);
          const auto got =
              host_gemv(*gemv, gemv->matrix_is_b ? b : a, gemv->matrix_is_b ? a : b, c);
          EXPECT_EQ(got, expected) << "op_a " << op_a << " op_b " << op_b << " m " << s.m << " n "
                                   << s.n << " k " << s.k << " pad " << pad;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 90);
}

TEST(GemmAsGemv, OnlyValidOneRowOrOneColumnGemms) {
  const char *reason = nullptr;
  EXPECT_FALSE(gemv_of_gemm(CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, 2, 3, 2, &reason));
  EXPECT_FALSE(gemv_of_gemm(CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 0, 4, 1, 4, &reason));  // C := beta*C
  EXPECT_FALSE(gemv_of_gemm(CUBLAS_OP_N, CUBLAS_OP_N, 0, 1, 3, 1, 3, 1, &reason));
  EXPECT_FALSE(gemv_of_gemm(CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 3, 3, 3, 4, &reason));  // lda < m
  EXPECT_FALSE(gemv_of_gemm(CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 3, 4, 2, 4, &reason));  // ldb < k
  EXPECT_FALSE(gemv_of_gemm(CUBLAS_OP_T, CUBLAS_OP_N, 1, 4, 3, 3, 3, 0, &reason));  // ldc < 1
  EXPECT_FALSE(gemv_of_gemm(CUBLAS_OP_CONJG, CUBLAS_OP_N, 4, 1, 3, 4, 3, 4, &reason));
  EXPECT_TRUE(gemv_of_gemm(CUBLAS_OP_T, CUBLAS_OP_N, 1, 4, 3, 3, 3, 1, &reason));
}

Route gemm_ex(cudaDataType ab, cudaDataType c, cublasComputeType_t compute) {
  static char a[16], b[16], out[16];
  return route(CUBLAS_OP_T, CUBLAS_OP_N, 1, 4, 3, &kOne, a, ab, 3, b, ab, 3, &kOne, out, c, 1,
               compute, CUBLAS_GEMM_DEFAULT);
}

TEST(GemmExRouting, ServesMatchingTypesWithFp32Compute) {
  EXPECT_TRUE(serves_as<HalfCall>(gemm_ex(CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F)));
  EXPECT_TRUE(serves_as<Bf16Call>(gemm_ex(CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F_PEDANTIC)));
  EXPECT_TRUE(serves_as<FloatCall>(gemm_ex(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32)));
  EXPECT_TRUE(serves_as<HalfToFloatCall>(gemm_ex(CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F)));
  EXPECT_TRUE(serves_as<Bf16ToFloatCall>(gemm_ex(CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F)));

  EXPECT_FALSE(gemm_ex(CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F).call);  // half scalars
  EXPECT_FALSE(gemm_ex(CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F).call);
  EXPECT_FALSE(gemm_ex(CUDA_R_32F, CUDA_R_16F, CUBLAS_COMPUTE_32F).call);
  EXPECT_FALSE(gemm_ex(CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I).call);
  static char a[16], b[16], out[16];
  EXPECT_FALSE(route(CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 3, &kOne, a, CUDA_R_16F, 4, b, CUDA_R_16BF, 3,
                     &kOne, out, CUDA_R_16F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
                   .call);
}

TEST(GemmExRouting, SgemmOfOneColumnIsAnSgemv) {
  static float a[64], b[64], c[64];
  const Route verdict = route(CUBLAS_OP_N, CUBLAS_OP_N, 8, 1, 5, &kOne, a, 8, b, 5, &kOne, c, 8);
  ASSERT_TRUE(verdict.call.has_value());
  const auto &call = std::get<FloatCall>(*verdict.call);
  EXPECT_EQ(call.trans, 'N');
  EXPECT_EQ(call.m, 8);
  EXPECT_EQ(call.n, 5);
  EXPECT_EQ(call.a, a);
  EXPECT_EQ(call.x, b);
  EXPECT_EQ(call.y, c);
  // A real GEMM stays with cuBLAS.
  EXPECT_FALSE(route(CUBLAS_OP_N, CUBLAS_OP_N, 8, 2, 5, &kOne, a, 8, b, 5, &kOne, c, 8).call);
}

}  // namespace
}  // namespace xgemv::cublas_dropin
