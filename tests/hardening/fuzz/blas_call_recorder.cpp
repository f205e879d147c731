#include "blas_call_recorder.hpp"

namespace xgemv::blas {

template <class T>
void run_gemv(const BlasGemv<T> &call) noexcept {
  ++xgemv_fuzz::gemv_record<T>.calls;
  xgemv_fuzz::gemv_record<T>.last = call;
}

template void run_gemv(const BlasGemv<float> &) noexcept;
template void run_gemv(const BlasGemv<double> &) noexcept;

}  // namespace xgemv::blas
