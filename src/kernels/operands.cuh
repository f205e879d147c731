// The operands of a GemvProblem as a kernel reads them: typed pointers of batch item b, with
// BLAS's start-point rule for negative increments applied once, and the bias.
#pragma once

#include "problem.hpp"

namespace xgemv::kernels {

// Logical element 0 of a vector with a negative increment sits at the far end.
template <class T>
__device__ __forceinline__ T *logical_start(T *p, int64_t length, int64_t inc) {
  return inc < 0 ? p - (length - 1) * inc : p;
}

template <class TA>
__device__ __forceinline__ const TA *matrix_of(const GemvProblem &p, int64_t b) {
  return static_cast<const TA *>(p.a.array ? p.a.array[b]
                                           : static_cast<const TA *>(p.a.data) + b * p.a.stride);
}

template <class TX>
__device__ __forceinline__ const TX *x_of(const GemvProblem &p, int64_t b) {
  const TX *x = static_cast<const TX *>(p.x.array ? p.x.array[b]
                                                  : static_cast<const TX *>(p.x.data) + b * p.x.stride);
  return logical_start(x, p.x_length(), p.x.inc);
}

template <class TY>
__device__ __forceinline__ TY *y_of(const GemvProblem &p, int64_t b) {
  TY *y = static_cast<TY *>(p.y.array ? p.y.array[b] : static_cast<TY *>(p.y.data) + b * p.y.stride);
  return logical_start(y, p.y_length(), p.y.inc);
}

// Element i of the problem's bias (one vector for every right-hand side and batch item), or
// nullptr when it has none.
template <class TY>
__device__ __forceinline__ const TY *bias_at(const GemvProblem &p, int64_t i) {
  return p.bias != nullptr ? static_cast<const TY *>(p.bias) + i : nullptr;
}

}  // namespace xgemv::kernels
