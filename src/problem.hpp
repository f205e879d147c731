// The one description of a GEMV problem, from every ABI boundary down to the kernels.
//
// Each ABI layer (the C ABI in api.cpp, the cuBLAS drop-in, the BLAS/CBLAS libraries) builds a
// GemvProblem with the builder of its call form (single, strided batch, pointer arrays), checks
// it once with check_problem, and hands the CheckedProblem to the core (core.hpp). The kernels
// take the same struct by value (it is plain data), so no layer copies its fields into another.
//
// Element types are four independent runtime tags (A, x, y, scalars): a variant says which
// combinations it implements (src/variants/), so a new combination (an 8-bit A with a 16-bit x,
// say) is a new tag and a new instance, not a new description. Several right-hand sides and
// scale arrays extend VectorOperand / MatrixOperand with their own fields (columns and a leading
// dimension, a scale pointer and its granularity) without another copy of these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <xgemv/xgemv.h>

#if defined(__CUDACC__)
#define XGEMV_HOST_DEVICE __host__ __device__
#else
#define XGEMV_HOST_DEVICE
#endif

namespace xgemv {

enum class ElementType : std::uint8_t { kF32, kF64, kF16, kBF16, kInt4, kInt8, kE4M3 };

// The codes of quantized weights (xgemv_quant.h): tags only, A of a quantized problem is the
// packed codes of a weight's storage.
struct Int4Code {};
struct Int8Code {};
struct E4M3Code {};

constexpr bool is_quantized(ElementType type) {
  return type == ElementType::kInt4 || type == ElementType::kInt8 || type == ElementType::kE4M3;
}

template <class T>
constexpr ElementType element_type_of();
template <>
constexpr ElementType element_type_of<float>() { return ElementType::kF32; }
template <>
constexpr ElementType element_type_of<double>() { return ElementType::kF64; }
template <>
constexpr ElementType element_type_of<__half>() { return ElementType::kF16; }
template <>
constexpr ElementType element_type_of<__nv_bfloat16>() { return ElementType::kBF16; }
template <>
constexpr ElementType element_type_of<Int4Code>() { return ElementType::kInt4; }
template <>
constexpr ElementType element_type_of<Int8Code>() { return ElementType::kInt8; }
template <>
constexpr ElementType element_type_of<E4M3Code>() { return ElementType::kE4M3; }

// Bytes of one element (codes: 1; two 4-bit codes share a byte, which only the quantized
// variants read).
constexpr int element_bytes(ElementType type) {
  return type == ElementType::kF64   ? 8
         : type == ElementType::kF32 ? 4
         : is_quantized(type)        ? 1
                                     : 2;
}

// The element types of one problem.
struct ElementTypes {
  ElementType a, x, y, scalar;
  friend constexpr bool operator==(const ElementTypes &l, const ElementTypes &r) {
    return l.a == r.a && l.x == r.x && l.y == r.y && l.scalar == r.scalar;
  }
};

template <class TA, class TX, class TY, class TS>
constexpr ElementTypes element_types_of() {
  return {element_type_of<TA>(), element_type_of<TX>(), element_type_of<TY>(),
          element_type_of<TS>()};
}

// 'T', 't', 'C', 'c' (C equals T for the real types here).
constexpr bool is_transposed(char trans) {
  return trans == 'T' || trans == 't' || trans == 'C' || trans == 'c';
}

// A column-major matrix; problem b of a batch starts at data + b * stride elements, or at
// array[b] in the pointer-array form.
struct MatrixOperand {
  const void *data;
  int64_t ld, stride;
  const void *const *array;
};

// A BLAS vector: the pointer is the first element in memory, also for a negative increment
// (logical element 0 then sits at the far end). With several right-hand sides, vector c starts
// ld elements after vector c - 1 (X and Y as column-major matrices: inc 1, ld the leading
// dimension; a row-major view has inc = ld of the matrix and ld = 1).
template <class Pointer>
struct VectorOperand {
  Pointer data;
  int64_t inc, stride;
  const Pointer *array;
  int64_t ld = 0;
};

// The rest of a quantized weight (A holds its packed codes): where its scales, zero points and
// permutation lie in its storage and how its scale groups run (xgemv_quant.h, packed layout).
struct QuantOperand {
  const void *scales = nullptr;
  const unsigned char *zeros = nullptr;  // INT4 with zero points, else nullptr (q - 8)
  const int32_t *permutation = nullptr;  // permuted inputs, else nullptr
  ElementType scale_type = ElementType::kF32;
  // Packed input k is in scale group k >> group_shift (groups of 32, 64 or 128; a shift past
  // every input for the per-output formats).
  int group_shift = 0;
  int64_t k_blocks = 0;      // blocks of 64 (4-bit) or 32 (8-bit) inputs
  int64_t scale_groups = 0;  // scale groups per tile of 16 outputs
};

// The activation a routed up projection applies (xgemv_moe.h): h = W x + b, or a SwiGLU of its
// rows in halves (gate rows first), interleaved, or interleaved and clamped (alpha, limit).
enum class MoeActivation : std::uint8_t { kIdentity, kSwiglu, kSwigluInterleaved, kSwigluClamped };

// A mixture-of-experts call (xgemv_moe.h), as a routed problem: A is expert 0 (expert e at
// a.data + e * a.stride, elements of a dense A, bytes of storage for codes, whose QuantOperand is
// expert 0's too), m its inputs and n its outputs (rows); y_length() is the projection's rows.
// Up: x holds the tokens (token t at x + t * x.ld), y the pairs' h (pair t * top_k + j at
// y + (t * top_k + j) * y.ld, of `outputs` values, or outputs / 2 after a SwiGLU). Down: x holds
// the pairs' h (pair p at x + p * x.ld), y the tokens (y + t * y.ld).
struct RoutedOperand {
  bool down = false;  // the down projection (a token's weighted sum over its experts), else up
  int top_k = 0;
  int64_t tokens = 0, experts = 0;
  const void *ids = nullptr;  // [tokens, top_k], int32 or (ids_64) int64; outside [0, experts): none
  bool ids_64 = false;
  const void *weights = nullptr;  // down: [tokens, top_k] of weight_type
  ElementType weight_type = ElementType::kF32;
  MoeActivation activation = MoeActivation::kIdentity;
  float alpha = 0.0f, limit = 0.0f;  // kSwigluClamped
  const void *expert_bias = nullptr;  // [experts, n] of y's type, added before the activation
  bool accumulate = false;            // down: y[t] += the sum, else y[t] = the sum
  // down: the caller's workspace for the pairs' sums (fp32), or nullptr for the handle's.
  void *partials = nullptr;
  std::size_t partial_bytes = 0;
};

struct GemvProblem {
  ElementTypes types;
  char trans;
  int64_t m, n;  // A is m x n, whatever op is
  MatrixOperand a;
  VectorOperand<const void *> x;
  VectorOperand<void *> y;
  int64_t batch_count;
  // Host or device pointers (the handle's pointer mode), of the scalar type.
  const void *alpha, *beta;
  // y := alpha*op(A)*x + beta*y + bias: a contiguous device vector of y's element type and
  // y_length(), the same for every right-hand side and batch item, added in the accumulation
  // type before the one rounding to y's type. nullptr: none (BLAS GEMV).
  const void *bias = nullptr;
  // Right-hand sides: vectors x_c = x + c * x.ld and y_c = y + c * y.ld, c < rhs_count, all with
  // the same A (the few-right-hand-side calls; 1 for every other form).
  int64_t rhs_count = 1;
  // Column bits independent of rhs_count: run on the several-right-hand-side kernels even for
  // one vector (the few-right-hand-side calls, and every call of a batch-invariant handle).
  bool invariant_columns = false;
  // Quantized weights only (types.a is a code type).
  QuantOperand quant{};
  // Mixture-of-experts calls only (routed()).
  RoutedOperand routing{};

  XGEMV_HOST_DEVICE bool transposed() const { return is_transposed(trans); }
  XGEMV_HOST_DEVICE int64_t x_length() const { return transposed() ? m : n; }
  XGEMV_HOST_DEVICE int64_t y_length() const { return transposed() ? n : m; }
  XGEMV_HOST_DEVICE bool pointer_arrays() const { return a.array != nullptr; }
  XGEMV_HOST_DEVICE bool routed() const { return routing.top_k > 0; }
};

// --- builders, one per call form ------------------------------------------------------------

// One problem (batch_count 1, zero strides) or a strided batch.
template <class TA, class TX, class TY, class TS>
GemvProblem strided_problem(char trans, int64_t m, int64_t n, const TS *alpha, const TA *a,
                            int64_t lda, int64_t stride_a, const TX *x, int64_t incx,
                            int64_t stride_x, const TS *beta, TY *y, int64_t incy,
                            int64_t stride_y, int64_t batch_count) {
  return {element_types_of<TA, TX, TY, TS>(),
          trans,
          m,
          n,
          {a, lda, stride_a, nullptr},
          {x, incx, stride_x, nullptr},
          {y, incy, stride_y, nullptr},
          batch_count,
          alpha,
          beta};
}

template <class TA, class TX, class TY, class TS>
GemvProblem single_problem(char trans, int64_t m, int64_t n, const TS *alpha, const TA *a,
                           int64_t lda, const TX *x, int64_t incx, const TS *beta, TY *y,
                           int64_t incy) {
  return strided_problem(trans, m, n, alpha, a, lda, 0, x, incx, 0, beta, y, incy, 0, 1);
}

// Y := alpha*op(A)*X + beta*Y for nrhs column-major X (ldx) and Y (ldy).
template <class TA, class TX, class TY, class TS>
GemvProblem multi_rhs_problem(char trans, int64_t m, int64_t n, const TS *alpha, const TA *a,
                              int64_t lda, const TX *x, int64_t ldx, const TS *beta, TY *y,
                              int64_t ldy, int64_t nrhs) {
  GemvProblem problem = single_problem(trans, m, n, alpha, a, lda, x, 1, beta, y, 1);
  problem.x.ld = ldx;
  problem.y.ld = ldy;
  problem.rhs_count = nrhs;
  problem.invariant_columns = true;
  return problem;
}

// batch_count problems whose A, x, y come from device arrays of pointers.
template <class TA, class TX, class TY, class TS>
GemvProblem pointer_array_problem(char trans, int64_t m, int64_t n, const TS *alpha,
                                  const TA *const *a_array, int64_t lda,
                                  const TX *const *x_array, int64_t incx, const TS *beta,
                                  TY *const *y_array, int64_t incy, int64_t batch_count) {
  return {element_types_of<TA, TX, TY, TS>(),
          trans,
          m,
          n,
          {nullptr, lda, 0, reinterpret_cast<const void *const *>(a_array)},
          {nullptr, incx, 0, reinterpret_cast<const void *const *>(x_array)},
          {nullptr, incy, 0, reinterpret_cast<void *const *>(y_array)},
          batch_count,
          alpha,
          beta};
}

// --- the one argument checker ---------------------------------------------------------------

// Reference BLAS order (trans 1, m 2, n 3, lda 6, incx 8, incy 11), first failure wins; lda is
// checked against m whatever trans is. Pure host code, no CUDA call.
xgemv_status check_gemv_arguments(char trans, int64_t m, int64_t n, int64_t lda, int64_t incx,
                                  int64_t incy) noexcept;

// The few-right-hand-side form: trans 1, m 2, n 3, lda 6, ldx 8 (>= max(1, rows of X)), ldy 11
// (>= max(1, rows of Y)), nrhs 12 (>= 0), first failure wins.
xgemv_status check_multi_rhs_arguments(char trans, int64_t m, int64_t n, int64_t lda,
                                       int64_t ldx, int64_t ldy, int64_t nrhs) noexcept;

// A problem that passed check_problem: what the core accepts.
class CheckedProblem {
 public:
  const GemvProblem &operator*() const noexcept { return problem_; }
  const GemvProblem *operator->() const noexcept { return &problem_; }

  // The same single problem with some operands on packed copies (lda = max(1, m), increments
  // +-1 with the sign kept, so the logical order is unchanged); nullptr keeps an operand as it
  // is. Still valid, so still checked.
  CheckedProblem on_packed_copies(const void *a, const void *x, void *y) const noexcept;

 private:
  friend std::optional<CheckedProblem> check_problem(const GemvProblem &,
                                                     xgemv_status *) noexcept;
  explicit CheckedProblem(const GemvProblem &problem) noexcept : problem_(problem) {}
  GemvProblem problem_;
};

// The BLAS arguments, then batch_count >= 0 and rhs_count >= 0 (the layouts of several
// right-hand sides are checked by their builders' callers: check_multi_rhs_arguments for the
// C ABI, the cuBLAS rules in the drop-in). On failure *status says which and nothing is kept.
std::optional<CheckedProblem> check_problem(const GemvProblem &problem,
                                            xgemv_status *status) noexcept;

// Nothing to compute, whatever the scalars: no output (no rows of y, no right-hand side or an
// empty batch), or no reduction (m == 0 or n == 0, Reference BLAS) and no bias. An empty
// reduction with a bias still computes y := beta*y + bias.
bool computes_nothing(const CheckedProblem &problem) noexcept;

// Reference BLAS's quick return, as far as the problem alone tells: computes_nothing, or host
// scalars alpha == 0 and beta == 1 without a bias. Nothing is read or written then. Device
// scalars are decided inside the kernels, with the same result.
bool is_quick_return(const CheckedProblem &problem, bool device_scalars) noexcept;

// Whether A and x are read: not for an empty reduction, nor when alpha == 0 (Reference BLAS),
// known only for host scalars. alpha must not be NULL.
bool reads_matrix_and_x(const CheckedProblem &problem, bool device_scalars) noexcept;

}  // namespace xgemv
