// The BLAS epilogue of every GEMV kernel: the scalars (host values or device pointers) and
// y := alpha*dot + beta*y with the BLAS rules.
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

// y := alpha*dot + beta*y. beta == 0 never reads y (NaN in y must not leak through);
// alpha == 0 is y := beta*y exactly (dot is not even computed then). A per-output scale of
// quantized weights multiplies dot here, before alpha.
template <class TY, class S>
__device__ __forceinline__ void store_output(TY *y, S dot, S alpha, S beta) {
  S value;
  if (alpha == S(0)) value = beta == S(0) ? S(0) : beta * to_acc(*y);
  else if (beta == S(0)) value = alpha * dot;
  else value = beta * to_acc(*y) + alpha * dot;
  *y = from_acc<TY>(value);
}

}  // namespace xgemv::kernels
