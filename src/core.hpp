// Internal C++ API of the core, shared by every ABI layer (the C ABI in api.cpp, the cuBLAS
// drop-in and the BLAS/CBLAS libraries in interface/). Nothing here is exported.
#pragma once

#include <cstdint>

#include <xgemv/xgemv.h>

namespace xgemv {

// The one argument checker, in Reference BLAS order (trans 1, m 2, n 3, lda 6, incx 8, incy 11):
// the first failure wins. Pure host code, no CUDA call.
xgemv_status check_gemv_arguments(char trans, int64_t m, int64_t n, int64_t lda, int64_t incx,
                                  int64_t incy) noexcept;

// 'T', 't', 'C', 'c' (C equals T for real types). Only meaningful after the check passed.
inline bool is_transposed(char trans) noexcept {
  return trans == 'T' || trans == 't' || trans == 'C' || trans == 'c';
}

// One GEMV call, possibly batched. TA: A and x element type; TY: y element type; S: scalar and
// accumulation type. Pointers are as the caller gave them (first element in memory, also for
// negative increments). alpha/beta are host or device pointers according to the handle's mode.
// For the pointer-array batch form, a/x/y are unused and a_array/x_array/y_array are device
// arrays of batch_count pointers.
template <class TA, class TY, class S>
struct GemvCall {
  char trans = 'N';
  int64_t m = 0, n = 0;
  const S *alpha = nullptr;
  const TA *a = nullptr;
  int64_t lda = 1;
  const TA *x = nullptr;
  int64_t incx = 1;
  const S *beta = nullptr;
  TY *y = nullptr;
  int64_t incy = 1;
  int64_t batch_count = 1;
  int64_t stride_a = 0, stride_x = 0, stride_y = 0;
  const TA *const *a_array = nullptr;
  const TA *const *x_array = nullptr;
  TY *const *y_array = nullptr;
};

// The strided form of a call (batch_count 1 and zero strides for a single GEMV): what every ABI
// layer builds from its own argument list.
template <class TA, class TY, class S>
GemvCall<TA, TY, S> strided_gemv_call(char trans, int64_t m, int64_t n, const S *alpha,
                                      const TA *a, int64_t lda, int64_t stride_a, const TA *x,
                                      int64_t incx, int64_t stride_x, const S *beta, TY *y,
                                      int64_t incy, int64_t stride_y, int64_t batch_count) {
  GemvCall<TA, TY, S> call;
  call.trans = trans;
  call.m = m;
  call.n = n;
  call.alpha = alpha;
  call.a = a;
  call.lda = lda;
  call.x = x;
  call.incx = incx;
  call.beta = beta;
  call.y = y;
  call.incy = incy;
  call.batch_count = batch_count;
  call.stride_a = stride_a;
  call.stride_x = stride_x;
  call.stride_y = stride_y;
  return call;
}

// Checks (BLAS arguments, then batch count, then handle), quick return, optional pointer checks,
// dispatch and launch on the handle's stream. Never throws; never synchronises.
// Instantiated for <float,float,float>, <double,double,double>, <__half,__half,float>,
// <__nv_bfloat16,__nv_bfloat16,float>, <__half,float,float>, <__nv_bfloat16,float,float>.
template <class TA, class TY, class S>
xgemv_status gemv(xgemv_handle handle, const GemvCall<TA, TY, S> &call) noexcept;

// Records the CUDA error behind an XGEMV_STATUS_CUDA_ERROR for xgemv_last_cuda_error().
void set_last_cuda_error(cudaError_t error) noexcept;

}  // namespace xgemv
