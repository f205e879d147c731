// The cuBLAS drop-in's routing decisions, on the CPU: which calls xgemv serves (valid BLAS
// only; cuBLAS keeps the rest, interface/README.md), how a GEMM whose C has at most 16 columns
// or rows becomes one GEMV problem of that many vectors, checked by running both on the host for
// every op combination, and which of those GEMMs xgemv serves: one vector always, several only
// where the problem is 16-bit and transposed (op T, xgemv's tensor-core kernel). Then
// cublasLtMatmul's calls, their descriptors read: layouts (row order, batches), the bias
// epilogue, and every descriptor value that sends a call to cuBLASLt.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "cublas/gemv_routing.hpp"
#include "cublas/lt_routing.hpp"

namespace xgemv::cublas_dropin {
namespace {

constexpr ElementTypes kFloat = element_types_of<float, float, float, float>();
constexpr ElementTypes kDouble = element_types_of<double, double, double, double>();
constexpr ElementTypes kHalf = element_types_of<__half, __half, __half, float>();
constexpr ElementTypes kBf16 = element_types_of<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float>();
constexpr ElementTypes kHalfToFloat = element_types_of<__half, __half, float, float>();
constexpr ElementTypes kBf16ToFloat = element_types_of<__nv_bfloat16, __nv_bfloat16, float, float>();

// Whether the verdict is "xgemv serves it, with these element types".
bool serves_as(const Route &verdict, const ElementTypes &types) {
  return verdict.problem.has_value() && (*verdict.problem)->types == types;
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
    ASSERT_TRUE(serves_as(verdict, kFloat)) << reason_of(verdict);
    const GemvProblem &problem = **verdict.problem;
    EXPECT_EQ(problem.trans, op.trans);
    EXPECT_EQ(problem.m, 5);
    EXPECT_EQ(problem.n, 3);
    EXPECT_EQ(problem.x.inc, -2);
  }
  // Empty problems are valid BLAS (quick return) and xgemv's to serve.
  EXPECT_TRUE(sgemv(CUBLAS_OP_N, 0, 3, 1, 1, 1).problem.has_value());
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
    EXPECT_FALSE(c.verdict.problem.has_value());
    EXPECT_NE(reason_of(c.verdict).find(c.reason_part), std::string::npos) << reason_of(c.verdict);
  }
}

TEST(GemvRouting, BatchedFormsCarryTheirBatch) {
  const float *const *no_arrays = nullptr;
  float *const *no_outputs = nullptr;
  const Route arrays =
      route(CUBLAS_OP_T, 4, 3, &kOne, no_arrays, 4, no_arrays, 1, &kOne, no_outputs, 1, 9);
  ASSERT_TRUE(serves_as(arrays, kFloat));
  EXPECT_EQ((*arrays.problem)->batch_count, 9);

  static __half a[1], x[1], y[1];
  const Route strided = route(CUBLAS_OP_N, int64_t(4), int64_t(3), &kOne, a, int64_t(4), 12LL, x,
                              int64_t(1), 3LL, &kOne, y, int64_t(1), 4LL, int64_t(5));
  ASSERT_TRUE(serves_as(strided, kHalf));
  const GemvProblem &problem = **strided.problem;
  EXPECT_EQ(problem.batch_count, 5);
  EXPECT_EQ(problem.a.stride, 12);
  EXPECT_EQ(problem.y.stride, 4);

  EXPECT_TRUE(route(CUBLAS_OP_T, 4, 3, &kOne, no_arrays, 4, no_arrays, 1, &kOne, no_outputs, 1, 0)
                  .problem.has_value());
  EXPECT_FALSE(route(CUBLAS_OP_T, 4, 3, &kOne, no_arrays, 4, no_arrays, 1, &kOne, no_outputs, 1, -1)
                   .problem.has_value());
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

// Y = alpha*op(M)*X + beta*Y on the host for the problem's shape, strides and vectors (vector r
// of x at r * x.ld, of y at r * y.ld), the matrix and vectors given by value (positive
// increments here).
std::vector<double> host_gemv(const GemvProblem &g, const std::vector<double> &matrix,
                              const std::vector<double> &x, std::vector<double> y) {
  const bool transposed = g.transposed();
  const int64_t rows = transposed ? g.n : g.m, cols = transposed ? g.m : g.n;
  for (int64_t r = 0; r < g.rhs_count; ++r) {
    for (int64_t i = 0; i < rows; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < cols; ++j)
        sum += (transposed ? element(matrix, g.a.ld, j, i) : element(matrix, g.a.ld, i, j)) *
               x[size_t(r * g.x.ld + j * g.x.inc)];
      double &out = y[size_t(r * g.y.ld + i * g.y.inc)];
      out = 2 * sum - out;
    }
  }
  return y;
}

// gemv_of_gemm on stand-in operands: only the shape and which operand is the matrix matter.
char kOperandA, kOperandB, kOperandC;
std::optional<GemvProblem> gemv_of(cublasOperation_t op_a, cublasOperation_t op_b, int64_t m,
                                   int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                                   const char **reason) {
  return gemv_of_gemm(op_a, op_b, m, n, k, &kOne, &kOperandA, lda, &kOperandB, ldb, &kOne,
                      &kOperandC, ldc, kFloat, GemmBatch{}, reason);
}

std::vector<double> numbered(size_t count, int seed) {
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = double((i * 7 + size_t(seed) * 13) % 11) - 5;
  return values;
}

struct GemmShape {
  int64_t m, n, k;
};

// One column, one row, 2..16 columns (m up to 16 too: the columns win), 2..16 rows beside more
// than 16 columns, and the edges 16 / 17.
const GemmShape kServedShapes[] = {{7, 1, 5},  {1, 6, 4},  {1, 1, 9},  {13, 1, 1}, {1, 8, 1},
                                   {7, 4, 5},  {5, 16, 3}, {16, 16, 2}, {3, 3, 6},  {2, 17, 4},
                                   {16, 20, 3}, {30, 2, 1}, {1, 17, 3}, {17, 1, 2}};

TEST(GemmAsGemv, EveryOpCombinationMatchesTheGemm) {
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  int checked = 0;
  for (cublasOperation_t op_a : ops) {
    for (cublasOperation_t op_b : ops) {
      for (const GemmShape &s : kServedShapes) {
        for (int64_t pad : {0, 3}) {
          const bool ta = op_a != CUBLAS_OP_N, tb = op_b != CUBLAS_OP_N;
          const int64_t lda = (ta ? s.k : s.m) + pad, ldb = (tb ? s.n : s.k) + pad + 1;
          const int64_t ldc = s.m + 2 * pad;
          const auto a = numbered(size_t(lda * (ta ? s.m : s.k)), 1);
          const auto b = numbered(size_t(ldb * (tb ? s.k : s.n)), 2);
          const auto c = numbered(size_t(ldc * s.n), 3);
          const char *reason = nullptr;
          const auto gemv = gemv_of(op_a, op_b, s.m, s.n, s.k, lda, ldb, ldc, &reason);
          ASSERT_TRUE(gemv.has_value()) << reason << " m " << s.m << " n " << s.n;
          ASSERT_EQ(gemv->y.data, &kOperandC);
          const bool matrix_is_b = gemv->a.data == &kOperandB;
          ASSERT_EQ(gemv->x.data, matrix_is_b ? &kOperandA : &kOperandB);
          const auto expected = host_gemm(ta, tb, s.m, s.n, s.k, a, lda, b, ldb, c, ldc);
          const auto got = host_gemv(*gemv, matrix_is_b ? b : a, matrix_is_b ? a : b, c);
          EXPECT_EQ(got, expected) << "op_a " << op_a << " op_b " << op_b << " m " << s.m << " n "
                                   << s.n << " k " << s.k << " pad " << pad;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 9 * 2 * int(std::size(kServedShapes)));
}

// Which operand is the matrix, and the vectors' layout, call by call (lda 20, ldb 30, ldc 40:
// every stride says where it comes from).
TEST(GemmAsGemv, TheVectorsAreTheColumnsOrRowsOfC) {
  const struct {
    cublasOperation_t op_a, op_b;
    int64_t m, n, k;
    bool matrix_is_b;
    char trans;
    int64_t rows, cols, rhs_count, incx, ldx, incy, ldy;
  } cases[] = {
      // One column / one row: a single vector.
      {CUBLAS_OP_T, CUBLAS_OP_N, 12, 1, 9, false, 'T', 9, 12, 1, 1, 30, 1, 40},
      {CUBLAS_OP_N, CUBLAS_OP_T, 1, 12, 9, true, 'N', 12, 9, 1, 20, 1, 40, 1},
      // Columns of C (PyTorch's Linear on a batch of 4 is the first): op(A) and op(B)'s columns.
      {CUBLAS_OP_T, CUBLAS_OP_N, 12, 4, 9, false, 'T', 9, 12, 4, 1, 30, 1, 40},
      {CUBLAS_OP_N, CUBLAS_OP_N, 12, 16, 9, false, 'N', 12, 9, 16, 1, 30, 1, 40},
      {CUBLAS_OP_N, CUBLAS_OP_T, 12, 2, 9, false, 'N', 12, 9, 2, 30, 1, 1, 40},
      {CUBLAS_OP_C, CUBLAS_OP_C, 12, 7, 9, false, 'T', 9, 12, 7, 30, 1, 1, 40},
      // Both at most 16: the columns.
      {CUBLAS_OP_N, CUBLAS_OP_N, 5, 6, 9, false, 'N', 5, 9, 6, 1, 30, 1, 40},
      // 2..16 columns with one row: the row, one vector.
      {CUBLAS_OP_T, CUBLAS_OP_N, 1, 8, 9, true, 'T', 9, 8, 1, 1, 20, 40, 1},
      // Rows of C (C^T = op(B)^T op(A)^T): op(B)^T and op(A)'s rows; y strided by ldc.
      {CUBLAS_OP_N, CUBLAS_OP_N, 3, 17, 9, true, 'T', 9, 17, 3, 20, 1, 40, 1},
      {CUBLAS_OP_T, CUBLAS_OP_N, 16, 30, 9, true, 'T', 9, 30, 16, 1, 20, 40, 1},
      {CUBLAS_OP_N, CUBLAS_OP_T, 2, 25, 9, true, 'N', 25, 9, 2, 20, 1, 40, 1},
      {CUBLAS_OP_T, CUBLAS_OP_T, 5, 18, 9, true, 'N', 18, 9, 5, 1, 20, 40, 1},
  };
  for (const auto &c : cases) {
    const char *reason = nullptr;
    const auto gemv = gemv_of(c.op_a, c.op_b, c.m, c.n, c.k, 20, 30, 40, &reason);
    ASSERT_TRUE(gemv.has_value()) << reason;
    const std::string call = "ops " + std::to_string(c.op_a) + "," + std::to_string(c.op_b) +
                             " m " + std::to_string(c.m) + " n " + std::to_string(c.n);
    EXPECT_EQ(gemv->a.data, c.matrix_is_b ? &kOperandB : &kOperandA) << call;
    EXPECT_EQ(gemv->x.data, c.matrix_is_b ? &kOperandA : &kOperandB) << call;
    EXPECT_EQ(gemv->a.ld, c.matrix_is_b ? 30 : 20) << call;
    EXPECT_EQ(gemv->trans, c.trans) << call;
    EXPECT_EQ(gemv->m, c.rows) << call;
    EXPECT_EQ(gemv->n, c.cols) << call;
    EXPECT_EQ(gemv->rhs_count, c.rhs_count) << call;
    EXPECT_EQ(gemv->x.inc, c.incx) << call;
    EXPECT_EQ(gemv->y.inc, c.incy) << call;
    if (c.rhs_count > 1) {  // one vector: ld says nothing
      EXPECT_EQ(gemv->x.ld, c.ldx) << call;
      EXPECT_EQ(gemv->y.ld, c.ldy) << call;
    }
    EXPECT_EQ(gemv->batch_count, 1) << call;
    EXPECT_FALSE(gemv->pointer_arrays()) << call;
  }
}

TEST(GemmAsGemv, OnlyValidGemmsOfFewRowsOrColumns) {
  const struct {
    cublasOperation_t op_a, op_b;
    int64_t m, n, k, lda, ldb, ldc;
    const char *reason_part;
  } forwarded[] = {
      {CUBLAS_OP_N, CUBLAS_OP_N, 17, 17, 3, 17, 3, 17, "a GEMM"},
      {CUBLAS_OP_T, CUBLAS_OP_N, 4096, 32, 64, 64, 64, 4096, "a GEMM"},
      {CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 0, 4, 1, 4, "empty"},  // C := beta*C
      {CUBLAS_OP_T, CUBLAS_OP_N, 8, 4, 0, 1, 1, 8, "empty"},
      {CUBLAS_OP_N, CUBLAS_OP_N, 0, 1, 3, 1, 3, 1, "empty"},
      {CUBLAS_OP_N, CUBLAS_OP_N, 4, -2, 3, 4, 3, 4, "empty"},
      {CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 3, 3, 3, 4, "leading dimension"},  // lda < m
      {CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 3, 4, 2, 4, "leading dimension"},  // ldb < k
      {CUBLAS_OP_T, CUBLAS_OP_N, 1, 4, 3, 3, 3, 0, "leading dimension"},  // ldc < 1
      {CUBLAS_OP_T, CUBLAS_OP_N, 8, 4, 3, 3, 3, 7, "leading dimension"},  // ldc < m
      {CUBLAS_OP_N, CUBLAS_OP_T, 8, 4, 3, 8, 3, 8, "leading dimension"},  // ldb < n
      {CUBLAS_OP_N, CUBLAS_OP_N, 3, 20, 5, 2, 5, 3, "leading dimension"},  // rows: lda < m
      {CUBLAS_OP_CONJG, CUBLAS_OP_N, 4, 1, 3, 4, 3, 4, "op"},
  };
  for (const auto &c : forwarded) {
    const char *reason = nullptr;
    EXPECT_FALSE(gemv_of(c.op_a, c.op_b, c.m, c.n, c.k, c.lda, c.ldb, c.ldc, &reason))
        << "m " << c.m << " n " << c.n << " k " << c.k;
    ASSERT_NE(reason, nullptr);
    EXPECT_NE(std::string(reason).find(c.reason_part), std::string::npos) << reason;
  }
  const char *reason = nullptr;
  // An op value cuBLAS tolerates and BLAS has no name for (passed directly: an enum object
  // holding it would be undefined behaviour to read).
  EXPECT_FALSE(gemv_of(CUBLAS_OP_N, static_cast<cublasOperation_t>(7), 4, 4, 3, 4, 3, 4, &reason));
  EXPECT_NE(std::string(reason).find("op"), std::string::npos) << reason;
  EXPECT_TRUE(gemv_of(CUBLAS_OP_T, CUBLAS_OP_N, 1, 4, 3, 3, 3, 1, &reason));
  EXPECT_TRUE(gemv_of(CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, 2, 3, 2, &reason));
  EXPECT_TRUE(gemv_of(CUBLAS_OP_T, CUBLAS_OP_N, 4096, 16, 64, 64, 64, 4096, &reason));
  EXPECT_TRUE(gemv_of(CUBLAS_OP_T, CUBLAS_OP_N, 16, 4096, 64, 64, 64, 16, &reason));
}

// A GemmEx of C with 2 rows and `columns` columns (transa T, transb N: PyTorch's Linear).
Route gemm_ex(cudaDataType ab, cudaDataType c, cublasComputeType_t compute, int columns) {
  static char a[16], b[16], out[16];
  return route(CUBLAS_OP_T, CUBLAS_OP_N, 2, columns, 3, &kOne, a, ab, 3, b, ab, 3, &kOne, out, c,
               2, compute, CUBLAS_GEMM_DEFAULT);
}

// The reason route_gemm gives for several vectors it leaves to cuBLAS.
bool several_vectors_forwarded(const Route &verdict) {
  return !verdict.problem && reason_of(verdict).find("several vectors") != std::string::npos;
}

TEST(GemmExRouting, ServesMatchingTypesWithFp32Compute) {
  // One column (one vector) and 4 columns (several, op T here): the same type rules for every
  // type.
  for (const int columns : {1, 4}) {
    const auto route_of = [&](cudaDataType ab, cudaDataType c, cublasComputeType_t compute) {
      return gemm_ex(ab, c, compute, columns);
    };
    EXPECT_TRUE(serves_as(route_of(CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F), kHalf));
    EXPECT_TRUE(serves_as(route_of(CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F_PEDANTIC), kBf16));
    const Route fp32 = route_of(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
    EXPECT_TRUE(serves_as(fp32, kFloat)) << reason_of(fp32);
    EXPECT_TRUE(serves_as(route_of(CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F), kHalfToFloat));
    EXPECT_TRUE(serves_as(route_of(CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F), kBf16ToFloat));
    EXPECT_EQ((*route_of(CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F).problem)->rhs_count, columns);

    EXPECT_FALSE(route_of(CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F).problem);  // half scalars
    const Route fp64 = route_of(CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F);
    EXPECT_TRUE(serves_as(fp64, kDouble)) << reason_of(fp64);
    EXPECT_EQ((*fp64.problem)->rhs_count, columns);
    EXPECT_FALSE(route_of(CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_32F).problem);
    EXPECT_FALSE(route_of(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_64F).problem);
    EXPECT_FALSE(route_of(CUDA_R_32F, CUDA_R_16F, CUBLAS_COMPUTE_32F).problem);
    EXPECT_FALSE(route_of(CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I).problem);
  }
  static char a[16], b[16], out[16];
  EXPECT_FALSE(route(CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 3, &kOne, a, CUDA_R_16F, 4, b, CUDA_R_16BF, 3,
                     &kOne, out, CUDA_R_16F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
                   .problem);
}

TEST(GemmExRouting, SeveralColumnsOrRowsAreOneProblem) {
  static __nv_bfloat16 a[1], b[1], c[1];
  // PyTorch's Linear on 4 rows: C (out x 4) = W^T(k x out)^T * X^T, W row-major (out x k).
  const int64_t out = 1024, k = 2048, batch = 4;
  const Route linear = route(CUBLAS_OP_T, CUBLAS_OP_N, out, batch, k, &kOne, a, CUDA_R_16BF, k,
                             b, CUDA_R_16BF, k, &kOne, c, CUDA_R_16BF, out, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  ASSERT_TRUE(serves_as(linear, kBf16)) << reason_of(linear);
  const GemvProblem &p = **linear.problem;
  EXPECT_EQ(p.trans, 'T');
  EXPECT_EQ(p.m, k);
  EXPECT_EQ(p.n, out);
  EXPECT_EQ(p.rhs_count, batch);
  EXPECT_EQ(p.x.inc, 1);
  EXPECT_EQ(p.x.ld, k);
  EXPECT_EQ(p.y.inc, 1);
  EXPECT_EQ(p.y.ld, out);
  // The same product as rows: C (4 x out) = X * W^T with X^T stored (k x 4) and B = W^T
  // stored (k x out): op T on B, one problem of 4 vectors, each a column of X^T.
  const Route rows = route(CUBLAS_OP_T, CUBLAS_OP_N, batch, out, k, &kOne, b, CUDA_R_16BF, k, a,
                           CUDA_R_16BF, k, &kOne, c, CUDA_R_16BF, batch, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT);
  ASSERT_TRUE(serves_as(rows, kBf16)) << reason_of(rows);
  const GemvProblem &r = **rows.problem;
  EXPECT_EQ(r.trans, 'T');
  EXPECT_EQ(r.a.data, a);
  EXPECT_EQ(r.m, k);
  EXPECT_EQ(r.n, out);
  EXPECT_EQ(r.rhs_count, batch);
  EXPECT_EQ(r.x.inc, 1);
  EXPECT_EQ(r.x.ld, k);
  EXPECT_EQ(r.y.inc, batch);
  EXPECT_EQ(r.y.ld, 1);
  // X column-major (rows x k) and W as op T: the rows become an op N problem (its mapping is
  // in TheVectorsAreTheColumnsOrRowsOfC), served up to 8 vectors of 16-bit, then cuBLAS's.
  for (const int64_t vectors : {batch, int64_t(12)}) {
    const Route op_n = route(CUBLAS_OP_N, CUBLAS_OP_T, vectors, out, k, &kOne, b, CUDA_R_16BF,
                             vectors, a, CUDA_R_16BF, out, &kOne, c, CUDA_R_16BF, vectors,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (vectors > 8) {
      EXPECT_TRUE(several_vectors_forwarded(op_n)) << reason_of(op_n);
      continue;
    }
    ASSERT_TRUE(serves_as(op_n, kBf16)) << reason_of(op_n);
    EXPECT_EQ((*op_n.problem)->trans, 'N');
    EXPECT_EQ((*op_n.problem)->rhs_count, vectors);
    EXPECT_EQ((*op_n.problem)->a.data, a);
  }
  // 17 x 17 is a GEMM.
  const int64_t wide = kMaxGemmVectors + 1;
  const Route gemm = route(CUBLAS_OP_T, CUBLAS_OP_N, wide, wide, k, &kOne, a, CUDA_R_16BF, k, b,
                           CUDA_R_16BF, k, &kOne, c, CUDA_R_16BF, wide, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT);
  EXPECT_FALSE(gemm.problem);
  EXPECT_NE(reason_of(gemm).find("a GEMM"), std::string::npos) << reason_of(gemm);
}

TEST(GemmExRouting, SgemmOfOneColumnOrRowIsAnSgemv) {
  static float a[64], b[64], c[64];
  const Route verdict = route(CUBLAS_OP_N, CUBLAS_OP_N, 8, 1, 5, &kOne, a, 8, b, 5, &kOne, c, 8);
  ASSERT_TRUE(serves_as(verdict, kFloat)) << reason_of(verdict);
  const GemvProblem &problem = **verdict.problem;
  EXPECT_EQ(problem.trans, 'N');
  EXPECT_EQ(problem.m, 8);
  EXPECT_EQ(problem.n, 5);
  EXPECT_EQ(problem.rhs_count, 1);
  EXPECT_EQ(problem.a.data, a);
  EXPECT_EQ(problem.x.data, b);
  EXPECT_EQ(problem.y.data, c);
  // The 64-bit form, one row of a wide C: a single vector on B.
  const Route row = route(CUBLAS_OP_N, CUBLAS_OP_N, int64_t(1), int64_t(40), int64_t(5), &kOne,
                          a, int64_t(1), b, int64_t(5), &kOne, c, int64_t(1));
  ASSERT_TRUE(serves_as(row, kFloat)) << reason_of(row);
  EXPECT_EQ((*row.problem)->rhs_count, 1);
  EXPECT_EQ((*row.problem)->a.data, b);
  EXPECT_EQ((*row.problem)->trans, 'T');
  // Several fp32 vectors: op N is served up to 4 (2 columns) and stays with cuBLAS beyond (6
  // and 16), op T is served up to 8 vectors (2 and 6 columns, op T on A) and forwarded beyond (16
  // columns; 16 rows of a wide C, op T on B, in the 64-bit form).
  for (const int columns : {2, 6, 16}) {
    for (const cublasOperation_t op_a : {CUBLAS_OP_N, CUBLAS_OP_T}) {
      const Route verdict = route(op_a, CUBLAS_OP_N, 8, columns, 5, &kOne, a,
                                  op_a == CUBLAS_OP_N ? 8 : 5, b, 5, &kOne, c, 8);
      if (columns <= (op_a == CUBLAS_OP_N ? 4 : 8)) {
        ASSERT_TRUE(serves_as(verdict, kFloat)) << reason_of(verdict);
        EXPECT_EQ((*verdict.problem)->rhs_count, columns);
        EXPECT_EQ((*verdict.problem)->trans, op_a == CUBLAS_OP_N ? 'N' : 'T');
      } else {
        EXPECT_TRUE(several_vectors_forwarded(verdict)) << reason_of(verdict);
      }
    }
  }
  EXPECT_TRUE(several_vectors_forwarded(route(CUBLAS_OP_N, CUBLAS_OP_N, int64_t(16), int64_t(40),
                                              int64_t(1), &kOne, a, int64_t(16), b, int64_t(1),
                                              &kOne, c, int64_t(16))));
  // A real GEMM stays with cuBLAS.
  EXPECT_FALSE(
      route(CUBLAS_OP_N, CUBLAS_OP_N, 20, 17, 5, &kOne, a, 20, b, 5, &kOne, c, 20).problem);
}

TEST(GemmExRouting, DgemmIsGemmExWith64FEverywhere) {
  static double a[64], b[64], c[64];
  const double one = 1.0;
  // One column: a Dgemv of op N; the 64-bit form, 16 columns with op T on A: one transposed
  // problem of 16 vectors (the fp64 tensor cores).
  const Route column = route(CUBLAS_OP_N, CUBLAS_OP_N, 8, 1, 5, &one, a, 8, b, 5, &one, c, 8);
  ASSERT_TRUE(serves_as(column, kDouble)) << reason_of(column);
  EXPECT_EQ((*column.problem)->trans, 'N');
  EXPECT_EQ((*column.problem)->rhs_count, 1);
  const Route sixteen = route(CUBLAS_OP_T, CUBLAS_OP_N, int64_t(3), int64_t(16), int64_t(4), &one,
                              a, int64_t(4), b, int64_t(4), &one, c, int64_t(3));
  ASSERT_TRUE(serves_as(sixteen, kDouble)) << reason_of(sixteen);
  const GemvProblem &problem = **sixteen.problem;
  EXPECT_EQ(problem.trans, 'T');
  EXPECT_EQ(problem.rhs_count, 16);
  EXPECT_EQ(problem.a.data, a);
  EXPECT_EQ(problem.x.data, b);
  EXPECT_EQ(problem.y.data, c);
  // Several vectors of op N are served too (the fp64 tensor cores); a GEMM stays with cuBLAS.
  const Route op_n = route(CUBLAS_OP_N, CUBLAS_OP_N, 8, 16, 4, &one, a, 8, b, 4, &one, c, 8);
  ASSERT_TRUE(serves_as(op_n, kDouble)) << reason_of(op_n);
  EXPECT_EQ((*op_n.problem)->trans, 'N');
  EXPECT_EQ((*op_n.problem)->rhs_count, 16);
  EXPECT_FALSE(route(CUBLAS_OP_T, CUBLAS_OP_N, 17, 17, 2, &one, a, 2, b, 2, &one, c, 17).problem);
}

// The rule for several vectors, over every op pair, served type combination and vector count:
// xgemv serves a GEMM of 2..16 columns or rows as one problem, transposed (op T: columns with
// op(A) = A^T, rows with op(B) = B) or not (op N), up to a count by op and type: op T 16 of
// 16-bit A and B (C of that type or fp32) or of fp64, 8 of fp32; op N 16 of fp64, 8 of 16-bit,
// 4 of fp32. Beyond them cuBLAS's GEMM is faster and keeps the call. One column or one row
// is served for every served type and op.
TEST(GemmExRouting, SeveralVectorsAreServedUpToACountByOpAndType) {
  static char a[16], b[16], out[16];
  const struct {
    cudaDataType ab, c;
    cublasComputeType_t compute;
    ElementTypes types;
    int64_t most_op_t, most_op_n;
  } types[] = {{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, kFloat, 8, 4},
               {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, kDouble, 16, 16},
               {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, kHalf, 16, 8},
               {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, kBf16, 16, 8},
               {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, kHalfToFloat, 16, 8},
               {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, kBf16ToFloat, 16, 8}};
  // C's shape, and whether the vectors are its columns (else its rows): one column, one row
  // (also of a C with 2..16 columns), 2..16 columns (m up to 16 too), 2..16 rows of a wide C.
  const struct {
    int64_t m, n;
    bool columns;
  } shapes[] = {{40, 1, true},   {1, 40, false},  {1, 8, false},   {40, 2, true},
                {40, 4, true},   {40, 16, true},  {5, 6, true},    {2, 40, false},
                {4, 40, false},  {16, 40, false}, {16, 17, false}, {16, 16, true}};
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  int served = 0, forwarded = 0;
  for (const auto &t : types) {
    for (const auto &s : shapes) {
      for (const cublasOperation_t op_a : ops) {
        for (const cublasOperation_t op_b : ops) {
          const int64_t k = 3;
          const bool ta = op_a != CUBLAS_OP_N, tb = op_b != CUBLAS_OP_N;
          const int64_t lda = ta ? k : s.m, ldb = tb ? s.n : k;
          const Route verdict = route(op_a, op_b, s.m, s.n, k, &kOne, a, t.ab, lda, b, t.ab, ldb,
                                      &kOne, out, t.c, s.m, t.compute, CUBLAS_GEMM_DEFAULT);
          const int64_t vectors = s.columns ? s.n : s.m;
          // Columns: y_j = op(A) * x_j, transposed when op(A) is. Rows: y_i = op(B)^T * x_i,
          // transposed when op(B) is B.
          const bool transposed = s.columns ? ta : !tb;
          const bool expect_served = vectors <= (transposed ? t.most_op_t : t.most_op_n);
          const std::string call = "types " + std::to_string(t.ab) + "->" + std::to_string(t.c) +
                                   " ops " + std::to_string(op_a) + "," + std::to_string(op_b) +
                                   " m " + std::to_string(s.m) + " n " + std::to_string(s.n);
          if (!expect_served) {
            EXPECT_TRUE(several_vectors_forwarded(verdict)) << call << ": " << reason_of(verdict);
            ++forwarded;
            continue;
          }
          ASSERT_TRUE(serves_as(verdict, t.types)) << call << ": " << reason_of(verdict);
          const GemvProblem &p = **verdict.problem;
          EXPECT_EQ(p.rhs_count, vectors) << call;
          EXPECT_EQ(p.a.data, s.columns ? static_cast<const void *>(a) : b) << call;
          if (vectors > 1) EXPECT_EQ(p.trans, transposed ? 'T' : 'N') << call;
          ++served;
        }
      }
    }
  }
  // Per type 12 shapes x 9 op pairs: the 3 one-vector shapes are served for every pair. Of the
  // several-vector shapes (5 of columns, of which 3 have at most 8 and 2 at most 4; 4 of rows,
  // 2 with at most 8, both with at most 4), op T takes those of columns for the 6 pairs with
  // op(A) = A^T and those of rows for the 3 with op(B) = B, op N those of columns for the 3
  // others and of rows for the 6 others. Served: op T every one in 16-bit and fp64 (5 types),
  // those of at most 8 vectors in fp32; op N every one in fp64, those of at most 8 in 16-bit
  // (4 types), those of at most 4 in fp32.
  EXPECT_EQ(served, 6 * 3 * 9 + 5 * (5 * 6 + 4 * 3) + (3 * 6 + 2 * 3) + (5 * 3 + 4 * 6) +
                        4 * (3 * 3 + 2 * 6) + (2 * 3 + 2 * 6));
  // Forwarded: op N beyond 4 vectors in fp32 and beyond 8 in 16-bit, op T beyond 8 in fp32.
  EXPECT_EQ(forwarded, (3 * 3 + 2 * 6) + 4 * (2 * 3 + 2 * 6) + (2 * 6 + 2 * 3));

  // The Sgemm entry point follows the same rule: 4 fp32 vectors are served as op T and op N, 6
  // as op T and forwarded as op N.
  static float fa[64], fb[64], fc[64];
  for (const cublasOperation_t op_a : ops) {
    const int lda = op_a == CUBLAS_OP_N ? 8 : 5;
    EXPECT_TRUE(serves_as(route(op_a, CUBLAS_OP_N, 8, 1, 5, &kOne, fa, lda, fb, 5, &kOne, fc, 8),
                          kFloat));
    const Route four = route(op_a, CUBLAS_OP_N, 8, 4, 5, &kOne, fa, lda, fb, 5, &kOne, fc, 8);
    EXPECT_TRUE(serves_as(four, kFloat)) << reason_of(four);
    const Route six = route(op_a, CUBLAS_OP_N, 8, 6, 5, &kOne, fa, lda, fb, 5, &kOne, fc, 8);
    if (op_a == CUBLAS_OP_N)
      EXPECT_TRUE(several_vectors_forwarded(six)) << reason_of(six);
    else
      EXPECT_TRUE(serves_as(six, kFloat)) << reason_of(six);
  }
}

// --- cublasLtMatmul -------------------------------------------------------------------------

LtLayout column_layout(cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld) {
  return {type, CUBLASLT_ORDER_COL, rows, cols, ld};
}

// PyTorch's Linear with bias on `batch` rows (addmm's cuBLASLt path): D (out x batch) =
// W^T(k x out)^T * X^T (k x batch) + bias, C = D, host alpha 1 and beta 0.
const float kZero = 0.0f;
alignas(16) char kWeight[64], kInput[64], kBias[64], kOutput[64], kOtherOutput[64];
LtMatmul linear_with_bias(cudaDataType ab, cudaDataType cd, int64_t out, int64_t k,
                          int64_t batch) {
  LtMatmul call;
  call.trans_a = CUBLAS_OP_T;
  call.epilogue = CUBLASLT_EPILOGUE_BIAS;
  call.bias = kBias;
  call.alpha = &kOne;
  call.beta = &kZero;
  call.a = kWeight;
  call.b = kInput;
  call.c = kOutput;
  call.d = kOutput;
  call.a_layout = column_layout(ab, uint64_t(k), uint64_t(out), k);
  call.b_layout = column_layout(ab, uint64_t(k), uint64_t(batch), k);
  call.c_layout = call.d_layout = column_layout(cd, uint64_t(out), uint64_t(batch), out);
  return call;
}

bool lt_forwarded_for(const LtMatmul &call, const std::string &reason_part) {
  const Route verdict = route_lt_matmul(call);
  return !verdict.problem && reason_of(verdict).find(reason_part) != std::string::npos;
}

TEST(LtMatmulRouting, LinearWithBiasIsOneProblemWithTheBias) {
  for (const int64_t batch : {1, 2, 4, 16}) {
    const Route verdict =
        route_lt_matmul(linear_with_bias(CUDA_R_16BF, CUDA_R_16BF, 1024, 512, batch));
    ASSERT_TRUE(serves_as(verdict, kBf16)) << reason_of(verdict);
    const GemvProblem &p = **verdict.problem;
    EXPECT_EQ(p.trans, 'T');
    EXPECT_EQ(p.m, 512);
    EXPECT_EQ(p.n, 1024);
    EXPECT_EQ(p.rhs_count, batch);
    EXPECT_EQ(p.a.data, kWeight);
    EXPECT_EQ(p.a.ld, 512);
    EXPECT_EQ(p.x.data, kInput);
    EXPECT_EQ(p.y.data, kOutput);
    EXPECT_EQ(p.bias, kBias);
    EXPECT_EQ(p.batch_count, 1);
  }
  // Without the epilogue: no bias (TORCH_BLAS_PREFER_CUBLASLT's plain GEMMs).
  LtMatmul plain = linear_with_bias(CUDA_R_16F, CUDA_R_16F, 256, 128, 1);
  plain.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const Route verdict = route_lt_matmul(plain);
  ASSERT_TRUE(serves_as(verdict, kHalf)) << reason_of(verdict);
  EXPECT_EQ((*verdict.problem)->bias, nullptr);
  EXPECT_EQ(lt_pointer_mode(plain), XGEMV_POINTER_MODE_HOST);
}

TEST(LtMatmulRouting, ServesTheGemmTypesWithScalarsOfTheComputeType) {
  const struct {
    cudaDataType ab, cd;
    cublasComputeType_t compute;
    cudaDataType scale;
    ElementTypes types;
  } served[] = {
      {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, kHalf},
      {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, kBf16},
      {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, kHalfToFloat},
      {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, kBf16ToFloat},
      {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, kFloat},
      {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, kDouble},
  };
  const double zero = 0.0;
  for (const auto &t : served) {
    LtMatmul call = linear_with_bias(t.ab, t.cd, 64, 32, 1);
    call.compute_type = t.compute;
    call.scale_type = t.scale;
    if (t.scale == CUDA_R_64F) call.beta = &zero;
    const Route verdict = route_lt_matmul(call);
    EXPECT_TRUE(serves_as(verdict, t.types)) << t.ab << "->" << t.cd << ": " << reason_of(verdict);
    call.scale_type = t.scale == CUDA_R_64F ? CUDA_R_32F : CUDA_R_64F;
    EXPECT_TRUE(lt_forwarded_for(call, "scale type")) << t.ab;
  }
  LtMatmul half_compute = linear_with_bias(CUDA_R_16F, CUDA_R_16F, 64, 32, 1);
  half_compute.compute_type = CUBLAS_COMPUTE_16F;
  EXPECT_TRUE(lt_forwarded_for(half_compute, "compute type"));
  LtMatmul fp8 = linear_with_bias(CUDA_R_8F_E4M3, CUDA_R_16BF, 64, 32, 1);
  EXPECT_TRUE(lt_forwarded_for(fp8, "data types"));
  LtMatmul mixed = linear_with_bias(CUDA_R_16F, CUDA_R_16F, 64, 32, 1);
  mixed.c_layout.type = CUDA_R_32F;
  EXPECT_TRUE(lt_forwarded_for(mixed, "C and D types"));
  // Several fp32 vectors as for GemmEx: 4 served, 12 left to cuBLAS's GEMM.
  const Route fp32_four = route_lt_matmul(linear_with_bias(CUDA_R_32F, CUDA_R_32F, 64, 32, 4));
  ASSERT_TRUE(serves_as(fp32_four, kFloat)) << reason_of(fp32_four);
  EXPECT_EQ((*fp32_four.problem)->rhs_count, 4);
  EXPECT_TRUE(several_vectors_forwarded(
      route_lt_matmul(linear_with_bias(CUDA_R_32F, CUDA_R_32F, 64, 32, 12))));
}

TEST(LtMatmulRouting, RowOrderOperandsAreTheirTransposes) {
  // W row-major (out x k, ld k) with op N is W^T column-major with op T: the Linear above.
  LtMatmul call = linear_with_bias(CUDA_R_16BF, CUDA_R_16BF, 1024, 512, 4);
  call.trans_a = CUBLAS_OP_N;
  call.a_layout = column_layout(CUDA_R_16BF, 1024, 512, 512);
  call.a_layout.order = CUBLASLT_ORDER_ROW;
  Route verdict = route_lt_matmul(call);
  ASSERT_TRUE(serves_as(verdict, kBf16)) << reason_of(verdict);
  EXPECT_EQ((*verdict.problem)->trans, 'T');
  EXPECT_EQ((*verdict.problem)->m, 512);
  EXPECT_EQ((*verdict.problem)->a.ld, 512);
  // X row-major (batch x k) with op T is X^T column-major (k x batch) with op N.
  call.trans_b = CUBLAS_OP_T;
  call.b_layout = column_layout(CUDA_R_16BF, 4, 512, 512);
  call.b_layout.order = CUBLASLT_ORDER_ROW;
  verdict = route_lt_matmul(call);
  ASSERT_TRUE(serves_as(verdict, kBf16)) << reason_of(verdict);
  EXPECT_EQ((*verdict.problem)->x.inc, 1);
  EXPECT_EQ((*verdict.problem)->x.ld, 512);
  // Tiled orders and row-major C / D are cuBLASLt's.
  LtMatmul tiled = linear_with_bias(CUDA_R_16BF, CUDA_R_16BF, 64, 32, 1);
  tiled.a_layout.order = CUBLASLT_ORDER_COL32;
  EXPECT_TRUE(lt_forwarded_for(tiled, "tiled order"));
  LtMatmul row_output = linear_with_bias(CUDA_R_16BF, CUDA_R_16BF, 64, 32, 1);
  row_output.d_layout.order = CUBLASLT_ORDER_ROW;
  EXPECT_TRUE(lt_forwarded_for(row_output, "column order"));
}

TEST(LtMatmulRouting, StridedBatchesKeepTheirStrides) {
  LtMatmul call = linear_with_bias(CUDA_R_16F, CUDA_R_16F, 64, 32, 2);
  for (LtLayout *layout : {&call.a_layout, &call.b_layout, &call.c_layout, &call.d_layout})
    layout->batch_count = 3;
  call.a_layout.batch_stride = 0;  // one weight for every item
  call.b_layout.batch_stride = 70;
  call.c_layout.batch_stride = call.d_layout.batch_stride = 130;
  const Route verdict = route_lt_matmul(call);
  ASSERT_TRUE(serves_as(verdict, kHalf)) << reason_of(verdict);
  const GemvProblem &p = **verdict.problem;
  EXPECT_EQ(p.batch_count, 3);
  EXPECT_EQ(p.a.stride, 0);
  EXPECT_EQ(p.x.stride, 70);
  EXPECT_EQ(p.y.stride, 130);
  EXPECT_EQ(p.bias, kBias);
  // A bias per item, unequal counts, pointer arrays: cuBLASLt's.
  LtMatmul per_item = call;
  per_item.bias_batch_stride = 64;
  EXPECT_TRUE(lt_forwarded_for(per_item, "bias per batch item"));
  LtMatmul unequal = call;
  unequal.b_layout.batch_count = 1;
  EXPECT_TRUE(lt_forwarded_for(unequal, "batch counts"));
  LtMatmul arrays = call;
  arrays.a_layout.batch_mode = 1;
  EXPECT_TRUE(lt_forwarded_for(arrays, "pointer-array"));
  LtMatmul none = call;
  for (LtLayout *layout : {&none.a_layout, &none.b_layout, &none.c_layout, &none.d_layout})
    layout->batch_count = 0;
  EXPECT_TRUE(lt_forwarded_for(none, "batch count"));
}

TEST(LtMatmulRouting, DIsComputedInPlace) {
  // C elsewhere is served when it is not read (host beta 0), into D.
  LtMatmul apart = linear_with_bias(CUDA_R_16BF, CUDA_R_16BF, 64, 32, 2);
  apart.c = kOtherOutput;
  const Route verdict = route_lt_matmul(apart);
  ASSERT_TRUE(serves_as(verdict, kBf16)) << reason_of(verdict);
  EXPECT_EQ((*verdict.problem)->y.data, kOutput);
  // Read (beta 1), or possibly read (device beta): cuBLASLt's.
  LtMatmul read = apart;
  read.beta = &kOne;
  EXPECT_TRUE(lt_forwarded_for(read, "C is not D"));
  LtMatmul device = apart;
  device.pointer_mode = CUBLASLT_POINTER_MODE_DEVICE;
  EXPECT_TRUE(lt_forwarded_for(device, "C is not D"));
  // The same pointer with another leading dimension is another matrix.
  LtMatmul other_ld = linear_with_bias(CUDA_R_16BF, CUDA_R_16BF, 64, 32, 2);
  other_ld.beta = &kOne;
  other_ld.c_layout.ld = 80;
  EXPECT_TRUE(lt_forwarded_for(other_ld, "C is not D"));
  // In place with device scalars: served, in the device pointer mode.
  LtMatmul in_place = linear_with_bias(CUDA_R_16BF, CUDA_R_16BF, 64, 32, 2);
  in_place.pointer_mode = CUBLASLT_POINTER_MODE_DEVICE;
  EXPECT_TRUE(serves_as(route_lt_matmul(in_place), kBf16));
  EXPECT_EQ(lt_pointer_mode(in_place), XGEMV_POINTER_MODE_DEVICE);
}

TEST(LtMatmulRouting, WhatXgemvDoesNotComputeStaysWithCublasLt) {
  const LtMatmul base = linear_with_bias(CUDA_R_16BF, CUDA_R_16BF, 64, 32, 1);
  ASSERT_TRUE(route_lt_matmul(base).problem.has_value());
  const auto changed = [&](auto change) {
    LtMatmul call = base;
    change(call);
    return call;
  };
  const struct {
    LtMatmul call;
    const char *reason_part;
  } forwarded[] = {
      {changed([](LtMatmul &c) { c.unserved_attribute = "A scale pointer set"; }), "A scale"},
      {changed([](LtMatmul &c) { c.beta = nullptr; }), "NULL alpha or beta"},
      {changed([](LtMatmul &c) {
         c.alpha = nullptr;
         c.c = kOtherOutput;
       }),
       "NULL alpha or beta"},
      {changed([](LtMatmul &c) { c.trans_c = CUBLAS_OP_T; }), "transc"},
      {changed([](LtMatmul &c) { c.fill_mode = CUBLAS_FILL_MODE_LOWER; }), "fill mode"},
      {changed([](LtMatmul &c) { c.pointer_mode = CUBLASLT_POINTER_MODE_DEVICE_VECTOR; }),
       "pointer mode"},
      {changed([](LtMatmul &c) { c.epilogue = CUBLASLT_EPILOGUE_RELU_BIAS; }), "epilogue"},
      {changed([](LtMatmul &c) { c.epilogue = CUBLASLT_EPILOGUE_GELU; }), "epilogue"},
      {changed([](LtMatmul &c) { c.b_layout.plane_offset = 128; }), "planar"},
      {changed([](LtMatmul &c) { c.bias = nullptr; }), "without a bias"},
      {changed([](LtMatmul &c) { c.bias_type = CUDA_R_32F; }), "bias type"},
      {changed([](LtMatmul &c) { c.b_layout.rows = 31; }), "sizes"},
      {changed([](LtMatmul &c) { c.c_layout.cols = 2; }), "sizes"},
      {changed([](LtMatmul &c) { c.a_layout.ld = 16; }), "leading dimension"},
      // 17 x 17: a GEMM; k == 0: C scaled, not a GEMV.
      {changed([](LtMatmul &c) {
         c.a_layout = column_layout(CUDA_R_16BF, 32, 17, 32);
         c.b_layout = column_layout(CUDA_R_16BF, 32, 17, 32);
         c.c_layout = c.d_layout = column_layout(CUDA_R_16BF, 17, 17, 17);
       }),
       "a GEMM"},
      {changed([](LtMatmul &c) {
         c.a_layout.rows = c.b_layout.rows = 0;
       }),
       "empty"},
  };
  for (const auto &f : forwarded)
    EXPECT_TRUE(lt_forwarded_for(f.call, f.reason_part))
        << f.reason_part << ": " << reason_of(route_lt_matmul(f.call));
  // The bias of D's rows with the vectors in its rows (a wide D of one row): cuBLASLt's.
  LtMatmul wide = base;
  wide.trans_a = CUBLAS_OP_T;
  wide.a_layout = column_layout(CUDA_R_16BF, 32, 1, 32);
  wide.b_layout = column_layout(CUDA_R_16BF, 32, 64, 32);
  wide.c_layout = wide.d_layout = column_layout(CUDA_R_16BF, 1, 64, 1);
  EXPECT_TRUE(lt_forwarded_for(wide, "D's rows"));
  wide.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  EXPECT_TRUE(serves_as(route_lt_matmul(wide), kBf16)) << reason_of(route_lt_matmul(wide));
}

}  // namespace
}  // namespace xgemv::cublas_dropin
