// interface/cublas/gemv_routing.cpp holds serve(), which runs a served call, next to the routing
// decisions the fuzzer checks. The fuzzer never serves a call, so the functions serve() needs
// are defined here to abort: the fuzz build then needs neither the CUDA runtime, cuBLAS nor the
// core's kernels. (With serve() in a file of its own this file would go.)
#include <cstdio>
#include <cstdlib>

#include "core.hpp"
#include "real_cublas.hpp"
#include "xgemv_handles.hpp"

namespace {

[[noreturn]] void never_served(const char *function) {
  std::fprintf(stderr, "xgemv fuzz: %s called: the routing fuzzer must never serve a call\n",
               function);
  std::abort();
}

}  // namespace

namespace xgemv {

template <class TA, class TY, class S>
xgemv_status gemv(xgemv_handle, const GemvCall<TA, TY, S> &) noexcept {
  never_served("xgemv::gemv");
}

template xgemv_status gemv(xgemv_handle, const GemvCall<float, float, float> &) noexcept;
template xgemv_status gemv(xgemv_handle, const GemvCall<double, double, double> &) noexcept;
template xgemv_status gemv(xgemv_handle, const GemvCall<__half, __half, float> &) noexcept;
template xgemv_status gemv(xgemv_handle,
                           const GemvCall<__nv_bfloat16, __nv_bfloat16, float> &) noexcept;
template xgemv_status gemv(xgemv_handle, const GemvCall<__half, float, float> &) noexcept;
template xgemv_status gemv(xgemv_handle, const GemvCall<__nv_bfloat16, float, float> &) noexcept;

namespace cublas_dropin {

cublasStatus_t real_get_stream(cublasHandle_t, cudaStream_t *) noexcept {
  never_served("real_get_stream");
}
cublasStatus_t real_get_pointer_mode(cublasHandle_t, cublasPointerMode_t *) noexcept {
  never_served("real_get_pointer_mode");
}
HandleLease acquire_xgemv_handle(cublasHandle_t, cudaStream_t) noexcept {
  never_served("acquire_xgemv_handle");
}

}  // namespace cublas_dropin
}  // namespace xgemv

extern "C" {
xgemv_status xgemv_set_pointer_mode(xgemv_handle, xgemv_pointer_mode) {
  never_served("xgemv_set_pointer_mode");
}
const char *cudaGetErrorString(cudaError_t) { never_served("cudaGetErrorString"); }
}
