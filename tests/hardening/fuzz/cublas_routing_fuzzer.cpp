// The cuBLAS drop-in's routing decision (interface/cublas/gemv_routing.hpp): for every
// intercepted family, which calls xgemv serves and with which GEMV. The expectation is written
// out here from the drop-in's contract (interface/README.md and gemv_routing.hpp):
//  - gemv, gemvBatched, gemvStridedBatched: served exactly when the op is N, T or C, the
//    arguments are valid Reference BLAS (sgemv.f) and batch_count >= 0; the served call carries
//    the caller's arguments unchanged. Everything else goes to the real cuBLAS.
//  - GemmEx, Sgemm and Dgemm: served exactly when A and B share a type in {16F, 16BF, 32F} with a
//    compute type of the CUBLAS_COMPUTE_32F family and C of that type or 32F, or are 64F with
//    CUBLAS_COMPUTE_64F[_PEDANTIC] and C 64F, both ops are N, T or C, the GEMM is valid
//    (Reference sgemm.f leading dimensions) with m, n, k > 0, C has at most 16 columns or at
//    most 16 rows, and, where that gives several vectors, they are at most a count by the GEMV's
//    op and A's type: transposed (columns with op(A) T or C, rows with op(B) N) 8 of fp32 and 16
//    of the others, op N 16 of fp64, 8 of 16-bit and 4 of fp32; more stay with cuBLAS. The
//    served GEMV has that op, and is one
//    problem whose vectors are C's columns when n == 1, or when m != 1 and n <= 16, and C's rows
//    otherwise; it must compute exactly the GEMM's sums: the same output elements, each the sum
//    over the same k index of the same (A, B) element pairs (checked for every element of small
//    problems, on samples of large ones).
//  - cublasLtMatmul (its descriptors as read, LtMatmul): served exactly when the descriptor
//    values are the defaults xgemv computes (TRANSC N, fill mode full, host or device pointer
//    mode, default or bias epilogue, no unserved attribute, no planar complex, strided batches,
//    A and B column- or row-major, C and D column-major), C and D of one type and size, the
//    column-major GEMM of the layouts (a row-major operand is its transpose) is one GemmEx would
//    serve, every layout has the same batch count >= 1, D is computed in place (C is D with D's
//    layout, or a host beta is 0), and a bias is of D's type, with the vectors in D's columns and
//    one bias for the batch. With one batch item the served GEMV is checked as GemmEx's; with
//    several, served implies those rules (the checker may still refuse strides) and the strides
//    are the layouts'.
// Every pointer points into poisoned memory: deciding must not touch anything (but the host
// beta of a cublasLtMatmul whose C is not D, which decides whether C is read).
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <variant>

#include "fuzz_support.hpp"
#include "gemv_routing.hpp"
#include "lt_routing.hpp"
#include "support/gemv_layout.hpp"

namespace xgemv_fuzz {
namespace {

using xgemv::GemvProblem;
using xgemv::cublas_dropin::Route;

// Where the fuzzer's operands "are": distinct addresses in poisoned memory.
struct Operands {
  const PoisonedMemory &poison = PoisonedMemory::instance();
  const void *alpha = poison.at<const void>(0), *beta = poison.at<const void>(64);
  const void *a = poison.at<const void>(1 << 20), *x = poison.at<const void>(2 << 20);
  void *y = poison.at<void>(3 << 20);
  const void *a_array = poison.at<const void>(4 << 20), *x_array = poison.at<const void>(5 << 20);
  void *y_array = poison.at<void>(6 << 20);
};

char blas_op_name(int op) {
  switch (op) {
    case CUBLAS_OP_N: return 'N';
    case CUBLAS_OP_T: return 'T';
    case CUBLAS_OP_C: return 'C';
    default: return '\0';
  }
}

int consume_op(FuzzedDataProvider &data) {
  return data.ConsumeBool() ? data.ConsumeIntegralInRange(0, 4) : data.ConsumeIntegral<int>();
}

void require_forwarded(const Route &route, const char *family) {
  require(!route.problem, "%s: served a call the contract sends to cuBLAS", family);
  require(route.forward_reason != nullptr && route.forward_reason[0] != '\0',
          "%s: forwarded without a reason for the log", family);
}

// --- gemv, gemvBatched, gemvStridedBatched ------------------------------------------------

enum class GemvFamily { single, batched, strided_batched };

template <class TA, class TY, class S, class Int>
void fuzz_gemv_family(FuzzedDataProvider &data, GemvFamily family) {
  const int op = consume_op(data);
  const Int m = consume_argument<Int>(data), n = consume_argument<Int>(data);
  const Int lda = consume_leading_dimension<Int>(data, m);
  const Int incx = consume_argument<Int>(data), incy = consume_argument<Int>(data);
  const Int batch_count = family == GemvFamily::single ? Int(1) : consume_argument<Int>(data);
  const long long stride_a = consume_argument<long long>(data);
  const long long stride_x = consume_argument<long long>(data);
  const long long stride_y = consume_argument<long long>(data);
  const Operands p;
  const auto *alpha = static_cast<const S *>(p.alpha), *beta = static_cast<const S *>(p.beta);
  const auto *a = static_cast<const TA *>(p.a), *x = static_cast<const TA *>(p.x);
  auto *y = static_cast<TY *>(p.y);
  const auto *a_array = static_cast<const TA *const *>(p.a_array);
  const auto *x_array = static_cast<const TA *const *>(p.x_array);
  auto *y_array = static_cast<TY *const *>(p.y_array);
  const auto cublas_op = static_cast<cublasOperation_t>(op);
  using xgemv::cublas_dropin::route;
  const Route verdict = [&] {
    switch (family) {
      case GemvFamily::single: return route(cublas_op, m, n, alpha, a, lda, x, incx, beta, y, incy);
      case GemvFamily::batched:
        return route(cublas_op, m, n, alpha, a_array, lda, x_array, incx, beta, y_array, incy,
                     batch_count);
      default:
        return route(cublas_op, m, n, alpha, a, lda, stride_a, x, incx, stride_x, beta, y, incy,
                     stride_y, batch_count);
    }
  }();

  const char trans = blas_op_name(op);
  const bool valid =
      trans != '\0' && reference_gemv_info(trans, m, n, lda, incx, incy) == 0 && batch_count >= 0;
  if (!valid) return require_forwarded(verdict, "gemv");
  require(verdict.problem.has_value(),
          "gemv op %d m %lld n %lld lda %lld incx %lld incy %lld batch "
          "%lld is valid BLAS but was forwarded (%s)",
          op, (long long)m, (long long)n, (long long)lda, (long long)incx, (long long)incy,
          (long long)batch_count, verdict.forward_reason ? verdict.forward_reason : "no reason");
  const GemvProblem &call = **verdict.problem;
  require(call.types == xgemv::element_types_of<TA, TA, TY, S>(),
          "gemv: served as another type combination");
  const bool pointer_arrays = family == GemvFamily::batched;
  const bool strided = family == GemvFamily::strided_batched;
  const auto same = [](const void *served, const void *given) { return served == given; };
  require(call.trans == trans && call.m == m && call.n == n && call.a.ld == lda &&
              call.x.inc == incx && call.y.inc == incy && call.batch_count == batch_count &&
              call.alpha == alpha && call.beta == beta,
          "gemv: the served call's shape or scalars differ from the caller's");
  require(same(call.a.data, pointer_arrays ? nullptr : a) &&
              same(call.x.data, pointer_arrays ? nullptr : x) &&
              same(call.y.data, pointer_arrays ? nullptr : y) &&
              same(call.a.array, pointer_arrays ? a_array : nullptr) &&
              same(call.x.array, pointer_arrays ? x_array : nullptr) &&
              same(call.y.array, pointer_arrays ? y_array : nullptr),
          "gemv: the served call's operands differ from the caller's");
  require(call.a.stride == (strided ? stride_a : 0) && call.x.stride == (strided ? stride_x : 0) &&
              call.y.stride == (strided ? stride_y : 0),
          "gemv: the served call's strides differ from the caller's");
}

// The six type combinations the core runs: {S,D}, HSH, TST, HSS, TSS. The plain gemv family
// exists for S and D only.
template <class Int>
void fuzz_gemv_types(FuzzedDataProvider &data, GemvFamily family) {
  switch (data.ConsumeIntegralInRange(0, family == GemvFamily::single ? 1 : 5)) {
    case 0: return fuzz_gemv_family<float, float, float, Int>(data, family);
    case 1: return fuzz_gemv_family<double, double, double, Int>(data, family);
    case 2: return fuzz_gemv_family<__half, __half, float, Int>(data, family);
    case 3: return fuzz_gemv_family<__nv_bfloat16, __nv_bfloat16, float, Int>(data, family);
    case 4: return fuzz_gemv_family<__half, float, float, Int>(data, family);
    default: return fuzz_gemv_family<__nv_bfloat16, float, float, Int>(data, family);
  }
}

// --- GemmEx and Sgemm --------------------------------------------------------------------

struct Gemm {
  int transa, transb;
  int64_t m, n, k, lda, ldb, ldc;
  cudaDataType a_type, b_type, c_type;
  cublasComputeType_t compute_type;
};

bool is_compute_32f(cublasComputeType_t type) {
  switch (type) {
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: return true;
    default: return false;
  }
}

// A and B of one served type; C of that type, or fp32 for 16-bit A and B; a 32F compute type,
// 64F for fp64.
bool types_served(const Gemm &g) {
  const bool fp64 = g.a_type == CUDA_R_64F;
  const bool ab_served =
      g.a_type == CUDA_R_32F || g.a_type == CUDA_R_16F || g.a_type == CUDA_R_16BF || fp64;
  const bool compute_served =
      fp64 ? g.compute_type == CUBLAS_COMPUTE_64F || g.compute_type == CUBLAS_COMPUTE_64F_PEDANTIC
           : is_compute_32f(g.compute_type);
  return ab_served && compute_served && g.a_type == g.b_type &&
         (g.c_type == g.a_type || (g.c_type == CUDA_R_32F && !fp64));
}

// The most columns or rows of C a served GEMM has.
constexpr int64_t kMaxVectors = 16;

// Whether the GEMV's vectors are C's columns (else its rows).
bool vectors_are_columns(const Gemm &g) { return g.n == 1 || (g.m != 1 && g.n <= kMaxVectors); }

// Whether the GEMM's GEMV is transposed: op(A) = A^T over C's columns, op(B) = B over its rows.
bool gemv_transposed(const Gemm &g) {
  return vectors_are_columns(g) ? blas_op_name(g.transa) != 'N' : blas_op_name(g.transb) == 'N';
}

// Whether xgemv must serve the GEMM (see the top of the file).
bool gemm_served(const Gemm &g) {
  const char ta = blas_op_name(g.transa), tb = blas_op_name(g.transb);
  if (!types_served(g) || ta == '\0' || tb == '\0') return false;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || (g.m > kMaxVectors && g.n > kMaxVectors)) return false;
  const int64_t rows_a = ta == 'N' ? g.m : g.k, rows_b = tb == 'N' ? g.k : g.n;
  if (g.lda < std::max<int64_t>(1, rows_a) || g.ldb < std::max<int64_t>(1, rows_b) ||
      g.ldc < std::max<int64_t>(1, g.m))
    return false;
  // Several vectors, up to a count by op and type: a transposed GEMV (y_j = A^T x_j over C's
  // columns, y_i = B^T x_i over its rows) 8 of fp32, 16 of the others; an op N one 16 of fp64,
  // 8 of 16-bit, 4 of fp32.
  const int64_t vectors = vectors_are_columns(g) ? g.n : g.m;
  const bool fp32 = g.a_type == CUDA_R_32F, fp64 = g.a_type == CUDA_R_64F;
  const int64_t most = gemv_transposed(g) ? (fp32 ? 8 : 16) : (fp64 ? 16 : fp32 ? 4 : 8);
  return vectors <= most;
}

// The element type a served GemmEx operand of `type` has (only served types reach this).
xgemv::ElementType element_type_of_cuda(cudaDataType type) {
  switch (type) {
    case CUDA_R_16F: return xgemv::ElementType::kF16;
    case CUDA_R_16BF: return xgemv::ElementType::kBF16;
    case CUDA_R_64F: return xgemv::ElementType::kF64;
    default: return xgemv::ElementType::kF32;
  }
}

// Element offsets, computed without overflow whatever the fuzzed sizes (up to 2^63 * 2^63).
using Offset = __int128;

// The served GEMV must compute C(i, j) = sum_l op(A)(i, l) * op(B)(l, j) for the GEMM's outputs,
// with the GEMV's reduction index being l: vector r of the GEMV is column r of C (i the GEMV's
// output index) or row r (j the output index). Compares, for vector r, output o of the GEMV and
// reduction index l, the C element written and the A and B elements multiplied.
void check_gemv_of_gemm(const Gemm &g, const GemvProblem &call, const Operands &p,
                        FuzzedDataProvider &data) {
  require(call.types.a == element_type_of_cuda(g.a_type) &&
              call.types.x == element_type_of_cuda(g.b_type) &&
              call.types.y == element_type_of_cuda(g.c_type) &&
              call.types.scalar == (g.a_type == CUDA_R_64F ? xgemv::ElementType::kF64
                                                           : xgemv::ElementType::kF32),
          "GEMM: served with element types other than the call's");
  require(call.alpha == p.alpha && call.beta == p.beta && call.y.data == p.y &&
              call.batch_count == 1 && call.a.array == nullptr,
          "GEMM: the GEMV's scalars, y or batch are not the GEMM's");
  const bool matrix_is_b = call.a.data == p.x;
  require((call.a.data == p.a && call.x.data == p.x) || (matrix_is_b && call.x.data == p.a),
          "GEMM: the GEMV's matrix and vector are not the GEMM's A and B");
  const bool columns = vectors_are_columns(g);
  const int64_t vectors = columns ? g.n : g.m;
  const bool transposed = call.transposed();
  const int64_t y_length = call.y_length(), x_length = call.x_length();
  require(y_length == (columns ? g.m : g.n) && x_length == g.k && call.rhs_count == vectors,
          "GEMM m %lld n %lld k %lld: the GEMV has %lld vectors of %lld outputs and reduces over "
          "%lld",
          (long long)g.m, (long long)g.n, (long long)g.k, (long long)call.rhs_count,
          (long long)y_length, (long long)x_length);

  const bool a_plain = g.transa == CUBLAS_OP_N, b_plain = g.transb == CUBLAS_OP_N;
  const auto check = [&](int64_t r, int64_t o, int64_t l) {
    // The GEMM: output (i, j), A and B elements of the product at reduction index l.
    const int64_t i = columns ? o : r, j = columns ? r : o;
    const Offset gemm_c = i + Offset(j) * g.ldc;
    const Offset gemm_a = a_plain ? i + Offset(l) * g.lda : l + Offset(i) * g.lda;
    const Offset gemm_b = b_plain ? l + Offset(j) * g.ldb : j + Offset(l) * g.ldb;
    // The GEMV: vector r, output o, matrix element (o, l) of op(matrix), vector element l.
    const Offset gemv_y =
        Offset(r) * call.y.ld + xgemv_test::vector_offset<Offset>(o, y_length, call.y.inc);
    const Offset gemv_matrix = transposed ? l + Offset(o) * call.a.ld : o + Offset(l) * call.a.ld;
    const Offset gemv_x =
        Offset(r) * call.x.ld + xgemv_test::vector_offset<Offset>(l, x_length, call.x.inc);
    const Offset gemv_a = matrix_is_b ? gemv_x : gemv_matrix;
    const Offset gemv_b = matrix_is_b ? gemv_matrix : gemv_x;
    require(gemv_y == gemm_c && gemv_a == gemm_a && gemv_b == gemm_b,
            "GEMM op %d/%d m %lld n %lld k %lld lda %lld ldb %lld ldc %lld, vector %lld, output "
            "%lld, index %lld: the GEMV writes C[%lld] from A[%lld]*B[%lld], the GEMM C[%lld] "
            "from A[%lld]*B[%lld]",
            g.transa, g.transb, (long long)g.m, (long long)g.n, (long long)g.k, (long long)g.lda,
            (long long)g.ldb, (long long)g.ldc, (long long)r, (long long)o, (long long)l,
            (long long)gemv_y, (long long)gemv_a, (long long)gemv_b, (long long)gemm_c,
            (long long)gemm_a, (long long)gemm_b);
  };
  constexpr int64_t kExhaustiveProducts = 1 << 12;
  if (Offset(y_length) * x_length <= kExhaustiveProducts / vectors) {  // vectors: 1..16
    for (int64_t r = 0; r < vectors; ++r)
      for (int64_t o = 0; o < y_length; ++o)
        for (int64_t l = 0; l < x_length; ++l) check(r, o, l);
    return;
  }
  const auto samples = [&](int64_t count) {
    return std::array<int64_t, 3>{0, count - 1, data.ConsumeIntegralInRange<int64_t>(0, count - 1)};
  };
  for (const int64_t r : samples(vectors))
    for (const int64_t o : samples(y_length))
      for (const int64_t l : samples(x_length)) check(r, o, l);
}

cudaDataType consume_data_type(FuzzedDataProvider &data) {
  static constexpr cudaDataType kTypes[] = {CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF,   CUDA_R_64F,
                                            CUDA_R_8I,  CUDA_C_32F, CUDA_R_8F_E4M3};
  return data.ConsumeBool() ? data.PickValueInArray(kTypes)
                            : static_cast<cudaDataType>(data.ConsumeIntegral<int>());
}

cublasComputeType_t consume_compute_type(FuzzedDataProvider &data) {
  return static_cast<cublasComputeType_t>(data.ConsumeBool() ? data.ConsumeIntegralInRange(64, 80)
                                                             : data.ConsumeIntegral<int>());
}

// The GEMM entry points: GemmEx (any types), Sgemm (32F everywhere), Dgemm (64F everywhere).
enum class GemmEntry { gemm_ex, sgemm, dgemm };

template <class Int>
void fuzz_gemm(FuzzedDataProvider &data, GemmEntry entry) {
  Gemm g{};
  g.transa = consume_op(data);
  g.transb = consume_op(data);
  // C has one, a few (up to just past 16) or any number of columns or rows: the first two are
  // the calls that may be served.
  const auto dimension = [&] {
    switch (data.ConsumeIntegralInRange(0, 2)) {
      case 0: return Int(1);
      case 1: return data.ConsumeIntegralInRange<Int>(2, Int(kMaxVectors + 1));
      default: return consume_argument<Int>(data);
    }
  };
  const Int m = dimension(), n = dimension(), k = consume_argument<Int>(data);
  const Int lda = consume_leading_dimension<Int>(data, g.transa == CUBLAS_OP_N ? m : k);
  const Int ldb = consume_leading_dimension<Int>(data, g.transb == CUBLAS_OP_N ? k : n);
  const Int ldc = consume_leading_dimension<Int>(data, m);
  g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = ldc;
  const bool dgemm = entry == GemmEntry::dgemm;
  g.a_type = g.b_type = g.c_type = dgemm ? CUDA_R_64F : CUDA_R_32F;
  g.compute_type = dgemm ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  if (entry == GemmEntry::gemm_ex) {
    g.a_type = consume_data_type(data);
    g.b_type = data.ConsumeBool() ? g.a_type : consume_data_type(data);
    g.c_type = data.ConsumeBool() ? g.a_type : consume_data_type(data);
    g.compute_type = consume_compute_type(data);
  }
  const Operands p;
  const auto transa = static_cast<cublasOperation_t>(g.transa);
  const auto transb = static_cast<cublasOperation_t>(g.transb);
  using xgemv::cublas_dropin::route;
  // Sgemm and Dgemm: the route of typed pointers.
  const auto typed_route = [&](auto element) {
    using T = decltype(element);
    return route(transa, transb, m, n, k, static_cast<const T *>(p.alpha),
                 static_cast<const T *>(p.a), lda, static_cast<const T *>(p.x), ldb,
                 static_cast<const T *>(p.beta), static_cast<T *>(p.y), ldc);
  };
  const Route verdict =
      entry == GemmEntry::sgemm   ? typed_route(float{})
      : entry == GemmEntry::dgemm ? typed_route(double{})
                                  : route(transa, transb, m, n, k, p.alpha, p.a, g.a_type, lda, p.x,
                                          g.b_type, ldb, p.beta, p.y, g.c_type, ldc,
                                          g.compute_type, CUBLAS_GEMM_DEFAULT);
  const char *const name = entry == GemmEntry::sgemm   ? "Sgemm"
                           : entry == GemmEntry::dgemm ? "Dgemm"
                                                       : "GemmEx";
  if (!gemm_served(g)) return require_forwarded(verdict, name);
  require(verdict.problem.has_value(),
          "%s op %d/%d m %lld n %lld k %lld lda %lld ldb %lld ldc %lld types %d %d %d compute %d "
          "is a GEMV but was forwarded (%s)",
          name, g.transa, g.transb, (long long)g.m, (long long)g.n,
          (long long)g.k, (long long)g.lda, (long long)g.ldb, (long long)g.ldc, int(g.a_type),
          int(g.b_type), int(g.c_type), int(g.compute_type),
          verdict.forward_reason ? verdict.forward_reason : "no reason");
  const GemvProblem &call = **verdict.problem;
  require(call.transposed() == gemv_transposed(g), "GEMM: the GEMV served has another op");
  check_gemv_of_gemm(g, call, p, data);
}

// --- cublasLtMatmul ------------------------------------------------------------------------

using xgemv::cublas_dropin::LtLayout;
using xgemv::cublas_dropin::LtMatmul;

// The layout of an m x n operand (stored rows x cols), mostly consistent, sometimes not.
LtLayout consume_layout(FuzzedDataProvider &data, cudaDataType type, int64_t rows, int64_t cols,
                        bool row_order) {
  LtLayout layout;
  layout.type = type;
  static constexpr int32_t kOrders[] = {CUBLASLT_ORDER_COL, CUBLASLT_ORDER_ROW,
                                        CUBLASLT_ORDER_COL32};
  layout.order = data.ConsumeIntegralInRange(0, 7) != 0
                     ? (row_order ? CUBLASLT_ORDER_ROW : CUBLASLT_ORDER_COL)
                     : data.PickValueInArray(kOrders);
  const bool row = layout.order == CUBLASLT_ORDER_ROW;
  // A row-major rows x cols matrix is stored as its transpose: the same data, the other order.
  layout.rows = uint64_t(row ? cols : rows);
  layout.cols = uint64_t(row ? rows : cols);
  if (data.ConsumeIntegralInRange(0, 15) == 0) layout.rows = data.ConsumeIntegral<uint64_t>();
  layout.ld = consume_leading_dimension<int64_t>(data, row ? int64_t(layout.cols)
                                                           : int64_t(layout.rows));
  return layout;
}

// The op of a row-major operand stored as its transpose (an op BLAS has no name for stays).
cublasOperation_t flipped(cublasOperation_t op) {
  if (blas_op_name(op) == '\0') return op;
  return op == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// The column-major GEMM the call's layouts describe (op and stored matrix of A and B), or
// nothing where the sizes do not make one: D (m x n) = op(A) (m x k) * op(B) (k x n).
struct LtGemm {
  bool consistent;
  Gemm gemm;
};
LtGemm gemm_of(const LtMatmul &call) {
  const auto stored = [](const LtLayout &l, cublasOperation_t op, int64_t *rows, int64_t *cols,
                         int *stored_op) {
    const bool row = l.order == CUBLASLT_ORDER_ROW;
    *rows = int64_t(row ? l.cols : l.rows);
    *cols = int64_t(row ? l.rows : l.cols);
    *stored_op = row ? int(flipped(op)) : int(op);
  };
  LtGemm out{};
  Gemm &g = out.gemm;
  int64_t a_rows, a_cols, b_rows, b_cols;
  stored(call.a_layout, call.trans_a, &a_rows, &a_cols, &g.transa);
  stored(call.b_layout, call.trans_b, &b_rows, &b_cols, &g.transb);
  g.m = int64_t(call.d_layout.rows);
  g.n = int64_t(call.d_layout.cols);
  g.k = g.transa == CUBLAS_OP_N ? a_cols : a_rows;
  g.lda = call.a_layout.ld;
  g.ldb = call.b_layout.ld;
  g.ldc = call.d_layout.ld;
  g.a_type = call.a_layout.type;
  g.b_type = call.b_layout.type;
  g.c_type = call.d_layout.type;
  g.compute_type = call.compute_type;
  const int64_t op_a_rows = g.transa == CUBLAS_OP_N ? a_rows : a_cols;
  const int64_t op_b_rows = g.transb == CUBLAS_OP_N ? b_rows : b_cols;
  const int64_t op_b_cols = g.transb == CUBLAS_OP_N ? b_cols : b_rows;
  out.consistent = op_a_rows == g.m && op_b_rows == g.k && op_b_cols == g.n &&
                   call.c_layout.rows == call.d_layout.rows &&
                   call.c_layout.cols == call.d_layout.cols;
  return out;
}

// Whether xgemv must serve the call (see the top of the file), apart from the checker's rules
// on batch strides.
bool lt_served(const LtMatmul &call, const LtGemm &lt) {
  const LtLayout *layouts[] = {&call.a_layout, &call.b_layout, &call.c_layout, &call.d_layout};
  for (const LtLayout *l : layouts) {
    if (l->plane_offset != 0 || l->batch_mode != 0 || l->batch_count != call.d_layout.batch_count)
      return false;
    if (l->rows > uint64_t(INT64_MAX) || l->cols > uint64_t(INT64_MAX)) return false;
  }
  const auto column_or_row = [](const LtLayout &l) {
    return l.order == CUBLASLT_ORDER_COL || l.order == CUBLASLT_ORDER_ROW;
  };
  if (call.unserved_attribute != nullptr || call.alpha == nullptr || call.beta == nullptr ||
      call.trans_c != CUBLAS_OP_N || call.fill_mode != CUBLAS_FILL_MODE_FULL ||
      (call.pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
       call.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE) ||
      (call.epilogue != CUBLASLT_EPILOGUE_DEFAULT && call.epilogue != CUBLASLT_EPILOGUE_BIAS) ||
      !column_or_row(call.a_layout) || !column_or_row(call.b_layout) ||
      call.c_layout.order != CUBLASLT_ORDER_COL || call.d_layout.order != CUBLASLT_ORDER_COL ||
      call.d_layout.batch_count < 1 || call.c_layout.type != call.d_layout.type || !lt.consistent)
    return false;
  const bool fp64 = call.a_layout.type == CUDA_R_64F;
  if (call.scale_type != (fp64 ? CUDA_R_64F : CUDA_R_32F) || !gemm_served(lt.gemm)) return false;
  const bool one_item = call.d_layout.batch_count == 1;
  const bool in_place = call.c == call.d && call.c_layout.ld == call.d_layout.ld &&
                        (one_item || call.c_layout.batch_stride == call.d_layout.batch_stride);
  const bool beta_zero = fp64 ? *static_cast<const double *>(call.beta) == 0.0
                              : *static_cast<const float *>(call.beta) == 0.0f;
  if (!in_place && !(call.pointer_mode == CUBLASLT_POINTER_MODE_HOST && beta_zero)) return false;
  if (call.epilogue == CUBLASLT_EPILOGUE_BIAS &&
      (call.bias == nullptr || (call.bias_type != -1 && call.bias_type != call.d_layout.type) ||
       (!one_item && call.bias_batch_stride != 0) || !vectors_are_columns(lt.gemm)))
    return false;
  return true;
}

void fuzz_lt_matmul(FuzzedDataProvider &data) {
  const Operands p;
  // Host scalars: of the scale type, 0 or 1 (beta decides whether C is read).
  static const float kFloats[] = {0.0f, 1.0f};
  static const double kDoubles[] = {0.0, 1.0};
  LtMatmul call;
  call.compute_type = consume_compute_type(data);
  static constexpr cudaDataType kScaleTypes[] = {CUDA_R_32F, CUDA_R_64F, CUDA_R_16F};
  call.scale_type = data.PickValueInArray(kScaleTypes);
  call.pointer_mode = data.ConsumeBool() ? data.ConsumeIntegralInRange(0, 1)
                                         : data.ConsumeIntegralInRange(-1, 5);
  call.trans_a = static_cast<cublasOperation_t>(consume_op(data));
  call.trans_b = static_cast<cublasOperation_t>(consume_op(data));
  call.trans_c = data.ConsumeIntegralInRange(0, 7) != 0 ? CUBLAS_OP_N : CUBLAS_OP_T;
  call.fill_mode = data.ConsumeIntegralInRange(0, 7) != 0 ? int32_t(CUBLAS_FILL_MODE_FULL)
                                                          : data.ConsumeIntegralInRange(0, 3);
  static constexpr uint32_t kEpilogues[] = {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS,
                                            CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_GELU};
  call.epilogue = data.ConsumeBool() ? data.PickValueInArray(kEpilogues)
                                     : data.ConsumeIntegral<uint32_t>();
  call.bias = data.ConsumeIntegralInRange(0, 7) != 0 ? p.a_array : nullptr;
  call.bias_type = data.ConsumeBool() ? -1 : int32_t(consume_data_type(data));
  call.bias_batch_stride = data.ConsumeBool() ? 0 : consume_argument<int64_t>(data);
  if (data.ConsumeIntegralInRange(0, 15) == 0) call.unserved_attribute = "A scale pointer set";
  const bool fp64_scalars = call.scale_type == CUDA_R_64F;
  const int alpha_index = data.ConsumeIntegralInRange(0, 1), beta_index = data.ConsumeBool();
  call.alpha = fp64_scalars ? static_cast<const void *>(&kDoubles[alpha_index])
                            : static_cast<const void *>(&kFloats[alpha_index]);
  call.beta = fp64_scalars ? static_cast<const void *>(&kDoubles[beta_index])
                           : static_cast<const void *>(&kFloats[beta_index]);
  if (data.ConsumeIntegralInRange(0, 31) == 0) call.beta = nullptr;
  call.a = p.a;
  call.b = p.x;
  call.d = p.y;
  call.c = data.ConsumeIntegralInRange(0, 3) != 0 ? p.y : p.y_array;

  // D of one, a few or any number of columns and rows; A and B of matching sizes mostly.
  const auto dimension = [&] {
    switch (data.ConsumeIntegralInRange(0, 2)) {
      case 0: return int64_t(1);
      case 1: return data.ConsumeIntegralInRange<int64_t>(2, 17);
      default: return consume_argument<int64_t>(data);
    }
  };
  const int64_t m = dimension(), n = dimension(), k = consume_argument<int64_t>(data);
  const cudaDataType ab = consume_data_type(data);
  const cudaDataType b_type = data.ConsumeIntegralInRange(0, 7) != 0 ? ab : consume_data_type(data);
  const cudaDataType cd = data.ConsumeBool() ? ab : consume_data_type(data);
  const bool a_transposed = call.trans_a != CUBLAS_OP_N, b_transposed = call.trans_b != CUBLAS_OP_N;
  call.a_layout = consume_layout(data, ab, a_transposed ? k : m, a_transposed ? m : k,
                                 data.ConsumeBool());
  call.b_layout = consume_layout(data, b_type, b_transposed ? n : k, b_transposed ? k : n,
                                 data.ConsumeBool());
  call.d_layout = consume_layout(data, cd, m, n, false);
  call.c_layout = call.d_layout;
  if (data.ConsumeIntegralInRange(0, 7) == 0) call.c_layout.ld = consume_argument<int64_t>(data);
  if (data.ConsumeIntegralInRange(0, 15) == 0) call.c_layout.type = consume_data_type(data);
  // Batches: one item mostly; else a count (sometimes unequal) and any strides.
  const int32_t count = data.ConsumeIntegralInRange(0, 3) != 0 ? 1
                                                               : data.ConsumeIntegralInRange(-1, 9);
  for (LtLayout *l : {&call.a_layout, &call.b_layout, &call.c_layout, &call.d_layout}) {
    l->batch_count = data.ConsumeIntegralInRange(0, 15) != 0 ? count
                                                             : data.ConsumeIntegralInRange(0, 9);
    l->batch_stride = count == 1 ? 0 : consume_argument<int64_t>(data);
    l->plane_offset = data.ConsumeIntegralInRange(0, 31) != 0 ? 0 : 64;
    l->batch_mode = data.ConsumeIntegralInRange(0, 31) != 0 ? 0u : 1u;
  }
  if (call.c == call.d && data.ConsumeBool()) call.c_layout.batch_stride = call.d_layout.batch_stride;

  const LtGemm lt = gemm_of(call);
  const Route verdict = xgemv::cublas_dropin::route_lt_matmul(call);
  const bool expected = lt_served(call, lt);
  const bool one_item = call.d_layout.batch_count == 1;
  if (!expected) return require_forwarded(verdict, "cublasLtMatmul");
  if (!verdict.problem) {
    // A batch's strides may still be refused by the checker.
    require(!one_item, "cublasLtMatmul: a GEMV of one item was forwarded (%s)",
            verdict.forward_reason ? verdict.forward_reason : "no reason");
    return require_forwarded(verdict, "cublasLtMatmul");
  }
  const GemvProblem &served = **verdict.problem;
  require(served.bias == (call.epilogue == CUBLASLT_EPILOGUE_BIAS ? call.bias : nullptr),
          "cublasLtMatmul: the bias served is not the call's");
  require(served.batch_count == call.d_layout.batch_count,
          "cublasLtMatmul: the batch served is not the call's");
  require(served.transposed() == gemv_transposed(lt.gemm),
          "cublasLtMatmul: the GEMV served has another op");
  if (!one_item) {
    const bool matrix_is_b = served.a.data == p.x;
    require(served.a.stride == (matrix_is_b ? call.b_layout : call.a_layout).batch_stride &&
                served.x.stride == (matrix_is_b ? call.a_layout : call.b_layout).batch_stride &&
                served.y.stride == call.d_layout.batch_stride,
            "cublasLtMatmul: the batch strides served are not the layouts'");
  }
  // The products of one item are GemmEx's: the same elements of A, B and D.
  GemvProblem item = served;
  item.batch_count = 1;
  Operands scalars;
  scalars.alpha = call.alpha;
  scalars.beta = call.beta;
  check_gemv_of_gemm(lt.gemm, item, scalars, data);
}

}  // namespace
}  // namespace xgemv_fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, std::size_t size) {
  using namespace xgemv_fuzz;
  FuzzedDataProvider data(bytes, size);
  const bool int64_api = data.ConsumeBool();  // the _64 entry points
  // In the order drawn: the three gemv families, GemmEx, Sgemm, Dgemm (each with int or int64_t
  // arguments), cublasLtMatmul.
  const int entry = data.ConsumeIntegralInRange(0, 6);
  const auto fuzz_entry = [&](auto index) {
    using Int = decltype(index);
    constexpr GemvFamily kFamilies[] = {GemvFamily::single, GemvFamily::batched,
                                        GemvFamily::strided_batched};
    constexpr GemmEntry kGemms[] = {GemmEntry::gemm_ex, GemmEntry::sgemm, GemmEntry::dgemm};
    if (entry < 3)
      fuzz_gemv_types<Int>(data, kFamilies[entry]);
    else
      fuzz_gemm<Int>(data, kGemms[entry - 3]);
  };
  if (entry == 6)
    fuzz_lt_matmul(data);
  else if (int64_api)
    fuzz_entry(int64_t{});
  else
    fuzz_entry(int{});
  return 0;
}
