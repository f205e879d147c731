#include "blas_call_recorder.hpp"

namespace xgemv::blas {

template <class T>
void run_gemv(const char *entry, const CheckedProblem &problem) noexcept {
  ++xgemv_fuzz::gemv_record<T>.calls;
  xgemv_fuzz::gemv_record<T>.entry = entry;
  xgemv_fuzz::gemv_record<T>.last = problem;
  xgemv_fuzz::gemv_record<T>.alpha = *static_cast<const T *>(problem->alpha);
  xgemv_fuzz::gemv_record<T>.beta = *static_cast<const T *>(problem->beta);
}

template void run_gemv<float>(const char *, const CheckedProblem &) noexcept;
template void run_gemv<double>(const char *, const CheckedProblem &) noexcept;

}  // namespace xgemv::blas
