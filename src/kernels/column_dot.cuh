// The per-output dot of op T: a group of kGroup lanes reduces one contiguous column of A
// against x in 16-byte steps, kUnroll independent loads in flight per lane.
#pragma once

#include "early_stage.cuh"
#include "elements.cuh"

namespace xgemv::kernels {

// How x is read: 16-byte loads when contiguous and aligned like the column, realigned 16-byte
// loads when contiguous but shifted against it (odd lda), element loads when strided.
enum class XAccess { kAligned, kShifted, kStrided };

// The end of the 16-byte steps over [k0, k1): a shifted x load reads into the aligned block past
// its 16 bytes, so the vector steps stop one block early for that block to hold elements below
// k1.
template <class TA>
__device__ __forceinline__ int64_t vector_steps_end(XAccess x_access, int64_t k1) {
  return x_access == XAccess::kShifted ? k1 - kElemsPer16B<TA> : k1;
}

// The x of the unrolled step at k, as dot_column reads it.
template <int kGroup, class TA, class TX>
__device__ __forceinline__ int4 load_x_at(const TX *x, int64_t incx, XAccess x_access, int64_t k,
                                          int lane) {
  constexpr int kElems = kElemsPer16B<TA>;
  if (x_access == XAccess::kAligned) return load16_cached(x + k + lane * kElems);
  if (x_access == XAccess::kShifted) return load16_cached_unaligned(x + k + lane * kElems);
  TX xs[kElems];
#pragma unroll
  for (int e = 0; e < kElems; ++e) xs[e] = __ldg(x + (k + lane * kElems + e) * incx);
  return pack16(xs);
}

// acc += the 16-byte step's products, element by element (the one summation order of every
// path, so that early start gives the same bits).
template <class TA, class TX, class S>
__device__ __forceinline__ void accumulate_step(S &acc, int4 a_raw, int4 x_raw) {
  constexpr int kElems = kElemsPer16B<TA>;
  S a[kElems], xv[kElems];
  widen16<TA>(a_raw, a);
  widen16<TX>(x_raw, xv);
#pragma unroll
  for (int e = 0; e < kElems; ++e) acc += a[e] * xv[e];
}

// The A of kUnroll steps from k (16-byte aligned), one 16-byte load per step.
template <int kGroup, int kUnroll, class TA>
__device__ __forceinline__ void load_a_steps(int4 (&a_raw)[kUnroll], const TA *column, int64_t k,
                                             int lane) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kStep = int64_t(kGroup) * kElems;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    a_raw[u] = load16_streaming(column + k + u * kStep + lane * kElems);
}

// acc += the kUnroll steps from k whose A is in a_raw (loaded ahead), with their x, in the order
// of dot_column's unrolled loop.
template <int kGroup, int kUnroll, class TA, class TX, class S>
__device__ __forceinline__ void accumulate_steps(const int4 (&a_raw)[kUnroll], const TX *x,
                                                 int64_t incx, XAccess x_access, int64_t k,
                                                 int lane, S &acc) {
  constexpr int64_t kStep = int64_t(kGroup) * kElemsPer16B<TA>;
  int4 x_raw[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    x_raw[u] = load_x_at<kGroup, TA>(x, incx, x_access, k + u * kStep, lane);
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) accumulate_step<TA, TX>(acc, a_raw[u], x_raw[u]);
}

// acc + dot(column[k0:k1], x[k0:k1]) over the group's lanes, lane-partial. column + k0 must be
// 16-byte aligned: each lane owns kElems contiguous elements per step (one 16-byte load).
template <int kGroup, int kUnroll, class TA, class TX, class S>
__device__ __forceinline__ S dot_column(const TA *column, const TX *x, int64_t incx,
                                        XAccess x_access, int64_t k0, int64_t k1, int lane,
                                        S acc) {
  // x moves in the same 16-byte steps as A: an 8-bit A with a 16-bit x needs 32-byte x steps.
  static_assert(sizeof(TA) == sizeof(TX));
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kStep = int64_t(kGroup) * kElems;
  const int64_t vector_end = vector_steps_end<TA>(x_access, k1);
  int64_t k = k0;
  for (; k + kUnroll * kStep <= vector_end; k += kUnroll * kStep) {
    int4 a_raw[kUnroll], x_raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      a_raw[u] = load16_streaming(column + k + u * kStep + lane * kElems);
      x_raw[u] = load_x_at<kGroup, TA>(x, incx, x_access, k + u * kStep, lane);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) accumulate_step<TA, TX>(acc, a_raw[u], x_raw[u]);
  }
  for (; k + kStep <= vector_end; k += kStep)
    accumulate_step<TA, TX>(acc, load16_streaming(column + k + lane * kElems),
                            load_x_at<kGroup, TA>(x, incx, x_access, k, lane));
  for (; k < k1; k += kStep) {  // the masked tail: at most one step (two when x is shifted)
#pragma unroll
    for (int e = 0; e < kElems; ++e) {
      const int64_t i = k + lane * kElems + e;
      if (i < k1) acc += to_acc(column[i]) * to_acc(x[i * incx]);
    }
  }
  return acc;
}

// Early start: how many of the first kSteps iterations of dot_column's unrolled loop from k
// end at or before vector_end: the steps early start stages, and then consumes.
template <int kGroup, int kUnroll, int kSteps, class TA>
__device__ __forceinline__ int staged_a_steps(int64_t k, int64_t vector_end) {
  constexpr int64_t kStep = int64_t(kGroup) * kElemsPer16B<TA>;
  int steps = 0;
#pragma unroll
  for (int s = 0; s < kSteps; ++s) steps += k + (s + 1) * kUnroll * kStep <= vector_end;
  return steps;
}

// Copies the A of those steps (k 16-byte aligned) into the stage, step s load u in slot
// s * kUnroll + u.
template <int kThreads, int kGroup, int kUnroll, int kSteps, class TA>
__device__ __forceinline__ void stage_a_steps(EarlyStage<kThreads, kSteps * kUnroll> &stage,
                                              int steps, const TA *column, int64_t k, int lane) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kStep = int64_t(kGroup) * kElems;
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    if (s >= steps) break;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      stage.stage(s * kUnroll + u, column + k + (s * kUnroll + u) * kStep + lane * kElems);
  }
  commit_staged();
}

// The staged steps consumed exactly as dot_column's loop would consume them (same x loads,
// same accumulate_step order, so the same bits). Returns the k from which dot_column continues.
// One step at a time: unrolled, the steps' loads would raise the register pressure of the
// whole kernel.
template <int kThreads, int kGroup, int kUnroll, int kSteps, class TA, class TX, class S>
__device__ __forceinline__ int64_t accumulate_staged_steps(
    const EarlyStage<kThreads, kSteps * kUnroll> &stage, int steps, const TX *x, int64_t incx,
    XAccess x_access, int64_t k, int lane, S &acc) {
  static_assert(sizeof(TA) == sizeof(TX));
  constexpr int64_t kStep = int64_t(kGroup) * kElemsPer16B<TA>;
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {
    const int64_t ks = k + s * kUnroll * kStep;
    int4 x_raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      x_raw[u] = load_x_at<kGroup, TA>(x, incx, x_access, ks + u * kStep, lane);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      accumulate_step<TA, TX>(acc, stage.staged(s * kUnroll + u), x_raw[u]);
  }
  return k + steps * kUnroll * kStep;
}

// Elements before p reaches a 16-byte boundary (p itself is element-aligned).
template <class T>
__device__ __forceinline__ int elements_to_alignment(const T *p) {
  return int(((16u - (reinterpret_cast<uintptr_t>(p) & 15u)) & 15u) / sizeof(T));
}

}  // namespace xgemv::kernels
