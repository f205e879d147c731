// The BLAS epilogue of every GEMV kernel: the scalars (host values or device pointers) and
// y := alpha*dot + beta*y (+ bias) with the BLAS rules.
#pragma once

#include "elements.cuh"

namespace xgemv::kernels {

// alpha and beta as the kernel reads them: device pointers when the handle's pointer mode is
// DEVICE (read inside the kernel, so a graph replays with the values of the replay), else the
// host values copied at launch.
template <class S>
struct Scalars {
  S alpha_value, beta_value;
  const S *alpha_ptr, *beta_ptr;

  __device__ S alpha() const { return alpha_ptr ? *alpha_ptr : alpha_value; }
  __device__ S beta() const { return beta_ptr ? *beta_ptr : beta_value; }
};

// Reference BLAS's quick return, decided on the device for device scalars: alpha == 0 and
// beta == 1 leave y as it is, unless a bias is still to be added.
template <class S>
__device__ __forceinline__ bool leaves_y_unchanged(S alpha, S beta, const void *bias) {
  return alpha == S(0) && beta == S(1) && bias == nullptr;
}

// a + b, rounded once and never fused with the product that made a.
__device__ __forceinline__ float add_unfused(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_unfused(double a, double b) { return __dadd_rn(a, b); }

// y := alpha*dot + beta*y + *bias. beta == 0 never reads y (NaN in y must not leak through);
// alpha == 0 is y := beta*y exactly (dot is not even computed then). The bias element (nullptr:
// none) is added last, to the value the call without it stores, so y is that value plus the bias
// rounded once to TY; without one nothing is added (+0 would turn a -0 result into +0).
template <class TY, class S>
__device__ __forceinline__ void store_output(TY *y, S dot, S alpha, S beta, const TY *bias) {
  S value;
  if (alpha == S(0)) value = beta == S(0) ? S(0) : beta * to_acc(*y);
  else if (beta == S(0)) value = alpha * dot;
  else value = beta * to_acc(*y) + alpha * dot;
  if (bias != nullptr) value = add_unfused(value, to_acc(*bias));
  *y = from_acc<TY>(value);
}

}  // namespace xgemv::kernels
