#include <algorithm>

#include "problem.hpp"

namespace xgemv {

xgemv_status check_gemv_arguments(char trans, int64_t m, int64_t n, int64_t lda, int64_t incx,
                                  int64_t incy) noexcept {
  switch (trans) {
    case 'N': case 'n': case 'T': case 't': case 'C': case 'c': break;
    default: return XGEMV_STATUS_INVALID_TRANS;
  }
  if (m < 0) return XGEMV_STATUS_INVALID_M;
  if (n < 0) return XGEMV_STATUS_INVALID_N;
  // Reference BLAS checks lda against m whatever trans is.
  if (lda < (m > 1 ? m : 1)) return XGEMV_STATUS_INVALID_LDA;
  if (incx == 0) return XGEMV_STATUS_INVALID_INCX;
  if (incy == 0) return XGEMV_STATUS_INVALID_INCY;
  return XGEMV_STATUS_SUCCESS;
}

xgemv_status check_multi_rhs_arguments(char trans, int64_t m, int64_t n, int64_t lda,
                                       int64_t ldx, int64_t ldy, int64_t nrhs) noexcept {
  if (const xgemv_status status = check_gemv_arguments(trans, m, n, lda, 1, 1);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  const bool transposed = is_transposed(trans);
  const int64_t x_rows = transposed ? m : n, y_rows = transposed ? n : m;
  if (ldx < std::max<int64_t>(1, x_rows)) return XGEMV_STATUS_INVALID_LDX;
  if (ldy < std::max<int64_t>(1, y_rows)) return XGEMV_STATUS_INVALID_LDY;
  if (nrhs < 0) return XGEMV_STATUS_INVALID_NRHS;
  return XGEMV_STATUS_SUCCESS;
}

std::optional<CheckedProblem> check_problem(const GemvProblem &problem,
                                            xgemv_status *status) noexcept {
  *status = check_gemv_arguments(problem.trans, problem.m, problem.n, problem.a.ld,
                                 problem.x.inc, problem.y.inc);
  if (*status == XGEMV_STATUS_SUCCESS && problem.batch_count < 0)
    *status = XGEMV_STATUS_INVALID_BATCH;
  if (*status == XGEMV_STATUS_SUCCESS && problem.rhs_count < 0) *status = XGEMV_STATUS_INVALID_NRHS;
  if (*status != XGEMV_STATUS_SUCCESS) return std::nullopt;
  return CheckedProblem(problem);
}

CheckedProblem CheckedProblem::on_packed_copies(const void *a, const void *x,
                                                void *y) const noexcept {
  CheckedProblem packed = *this;
  GemvProblem &p = packed.problem_;
  if (a != nullptr) p.a = {a, std::max<int64_t>(p.m, 1), 0, nullptr};
  if (x != nullptr) p.x = {x, p.x.inc > 0 ? 1 : -1, 0, nullptr};
  if (y != nullptr) p.y = {y, p.y.inc > 0 ? 1 : -1, 0, nullptr};
  return packed;
}

namespace {
// Whether the host scalar at `scalar` equals `value`, in the problem's scalar type.
bool host_scalar_is(const GemvProblem &p, const void *scalar, int value) {
  return p.types.scalar == ElementType::kF64 ? *static_cast<const double *>(scalar) == value
                                             : *static_cast<const float *>(scalar) == float(value);
}
}  // namespace

bool computes_nothing(const CheckedProblem &checked) noexcept {
  const GemvProblem &p = *checked;
  if (p.y_length() == 0 || p.rhs_count == 0 || p.batch_count == 0) return true;
  return p.x_length() == 0 && p.bias == nullptr;
}

bool is_quick_return(const CheckedProblem &checked, bool device_scalars) noexcept {
  const GemvProblem &p = *checked;
  if (computes_nothing(checked)) return true;
  if (device_scalars || p.bias != nullptr || p.alpha == nullptr || p.beta == nullptr) return false;
  return host_scalar_is(p, p.alpha, 0) && host_scalar_is(p, p.beta, 1);
}

bool reads_matrix_and_x(const CheckedProblem &checked, bool device_scalars) noexcept {
  if (checked->x_length() == 0) return false;
  return device_scalars || !host_scalar_is(*checked, checked->alpha, 0);
}

}  // namespace xgemv
