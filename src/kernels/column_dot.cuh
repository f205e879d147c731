// The per-output dot of op T: a group of kGroup lanes reduces one contiguous column of A
// against x in 16-byte steps, kUnroll independent loads in flight per lane.
#pragma once

#include "elements.cuh"

namespace xgemv::kernels {

// How x is read: 16-byte loads when contiguous and aligned like the column, realigned 16-byte
// loads when contiguous but shifted against it (odd lda), element loads when strided.
enum class XAccess { kAligned, kShifted, kStrided };

// dot(column[k0:k1], x[k0:k1]) over the group's lanes, lane-partial. column + k0 must be 16-byte
// aligned: each lane owns kElems contiguous elements per step (one 16-byte load).
template <int kGroup, int kUnroll, class TA, class TX, class S>
__device__ __forceinline__ S dot_column(const TA *column, const TX *x, int64_t incx,
                                        XAccess x_access, int64_t k0, int64_t k1, int lane) {
  // x moves in the same 16-byte steps as A: an 8-bit A with a 16-bit x needs 32-byte x steps.
  static_assert(sizeof(TA) == sizeof(TX));
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kStep = int64_t(kGroup) * kElems;
  auto load_step = [&](int64_t k, int4 &a_raw, int4 &x_raw) {
    a_raw = load16_streaming(column + k + lane * kElems);
    if (x_access == XAccess::kAligned) {
      x_raw = load16_cached(x + k + lane * kElems);
    } else if (x_access == XAccess::kShifted) {
      x_raw = load16_cached_unaligned(x + k + lane * kElems);
    } else {
      TX xs[kElems];
#pragma unroll
      for (int e = 0; e < kElems; ++e) xs[e] = __ldg(x + (k + lane * kElems + e) * incx);
      x_raw = pack16(xs);
    }
  };
  S acc = S(0);
  auto accumulate = [&](int4 a_raw, int4 x_raw) {
    S a[kElems], xv[kElems];
    widen16<TA>(a_raw, a);
    widen16<TX>(x_raw, xv);
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc += a[e] * xv[e];
  };
  // A shifted x load reads into the aligned block past its 16 bytes: stop the vector steps one
  // block early so that block still holds elements below k1.
  const int64_t vector_end = x_access == XAccess::kShifted ? k1 - kElems : k1;
  int64_t k = k0;
  for (; k + kUnroll * kStep <= vector_end; k += kUnroll * kStep) {
    int4 a_raw[kUnroll], x_raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) load_step(k + u * kStep, a_raw[u], x_raw[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) accumulate(a_raw[u], x_raw[u]);
  }
  for (; k + kStep <= vector_end; k += kStep) {
    int4 a_raw, x_raw;
    load_step(k, a_raw, x_raw);
    accumulate(a_raw, x_raw);
  }
  for (; k < k1; k += kStep) {  // the masked tail: at most one step (two when x is shifted)
#pragma unroll
    for (int e = 0; e < kElems; ++e) {
      const int64_t i = k + lane * kElems + e;
      if (i < k1) acc += to_acc(column[i]) * to_acc(x[i * incx]);
    }
  }
  return acc;
}

// Elements before p reaches a 16-byte boundary (p itself is element-aligned).
template <class T>
__device__ __forceinline__ int elements_to_alignment(const T *p) {
  return int(((16u - (reinterpret_cast<uintptr_t>(p) & 15u)) & 15u) / sizeof(T));
}

}  // namespace xgemv::kernels
