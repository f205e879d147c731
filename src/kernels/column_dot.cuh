// The per-output dot of op T: a group of kGroup lanes reduces one contiguous column of A
// against x in 16-byte steps, kUnroll independent loads in flight per lane.
#pragma once

#include "early_stage.cuh"
#include "elements.cuh"

namespace xgemv::kernels {

// How x is read: 16-byte loads when contiguous and aligned like the column, realigned 16-byte
// loads when contiguous but shifted against it (odd lda), element loads when strided.
enum class XAccess { kAligned, kShifted, kStrided };

// The end of the 16-byte steps over [k0, k1): a shifted x reads the aligned block past its 16
// bytes, so the vector steps stop one block early for that block to hold elements below k1.
template <class TA>
__device__ __forceinline__ int64_t vector_steps_end(XAccess x_access, int64_t k1) {
  return x_access == XAccess::kShifted ? k1 - kElemsPer16B<TA> : k1;
}

// Calls consume(s, x_raw) with the x of each of kSteps consecutive steps from k, in order, as
// dot_column consumes them (lane `lane` of the group: its kElems elements of each step). A
// shifted x straddles two aligned blocks per lane and step; each lane loads only the lower one
// and takes the upper one from the next lane (the group's last lane from lane 0's lower block
// of the step after, which lane 0 alone loads for the last step). One load per 16 bytes of x,
// as when aligned, rather than two: with x out of L1 (a long split reduction), the second load
// doubled x's traffic from L2. Each step is realigned only as it is consumed, so that the
// realigned copies do not add to the registers of the loads in flight.
template <int kGroup, int kSteps, class TA, class TX, class Consume>
__device__ __forceinline__ void for_x_steps(const TX *x, int64_t incx, XAccess x_access, int64_t k,
                                            int lane, Consume &&consume) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kStep = int64_t(kGroup) * kElems;
  if (x_access == XAccess::kAligned) {
    int4 x_raw[kSteps];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) x_raw[s] = load16_cached(x + k + s * kStep + lane * kElems);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) consume(s, x_raw[s]);
  } else if (x_access == XAccess::kShifted) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(x + k + lane * kElems);
    const int4 *block = reinterpret_cast<const int4 *>(address & ~uintptr_t(15));
    int4 lower[kSteps + 1];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) lower[s] = __ldg(block + s * kGroup);
    lower[kSteps] = lane == 0 ? __ldg(block + kSteps * kGroup) : make_int4(0, 0, 0, 0);
    const unsigned mask = group_lane_mask<kGroup>();
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const int4 upper = shfl16(mask, lane == 0 ? lower[s + 1] : lower[s], (lane + 1) % kGroup,
                                kGroup);
      consume(s, funnel16<TX>(lower[s], upper, unsigned(address & 15u)));
    }
  } else {
    int4 x_raw[kSteps];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      TX xs[kElems];
#pragma unroll
      for (int e = 0; e < kElems; ++e)
        xs[e] = __ldg(x + (k + s * kStep + lane * kElems + e) * incx);
      x_raw[s] = pack16(xs);
    }
#pragma unroll
    for (int s = 0; s < kSteps; ++s) consume(s, x_raw[s]);
  }
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
  for_x_steps<kGroup, kUnroll, TA>(x, incx, x_access, k, lane, [&](int u, int4 x_raw) {
    accumulate_step<TA, TX>(acc, a_raw[u], x_raw);
  });
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
    int4 a_raw[kUnroll];
    load_a_steps<kGroup, kUnroll>(a_raw, column, k, lane);
    for_x_steps<kGroup, kUnroll, TA>(x, incx, x_access, k, lane, [&](int u, int4 x_raw) {
      accumulate_step<TA, TX>(acc, a_raw[u], x_raw);
    });
  }
  // The single steps and the tail stay rolled: unrolled copies raised the register pressure of
  // the whole kernel (fp32 spilled more).
#pragma unroll 1
  for (; k + kStep <= vector_end; k += kStep) {
    const int4 a_raw = load16_streaming(column + k + lane * kElems);
    for_x_steps<kGroup, 1, TA>(x, incx, x_access, k, lane, [&](int, int4 x_raw) {
      accumulate_step<TA, TX>(acc, a_raw, x_raw);
    });
  }
#pragma unroll 1
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
    for_x_steps<kGroup, kUnroll, TA>(x, incx, x_access, ks, lane, [&](int u, int4 x_raw) {
      accumulate_step<TA, TX>(acc, stage.staged(s * kUnroll + u), x_raw);
    });
  }
  return k + steps * kUnroll * kStep;
}

// Elements before p reaches a 16-byte boundary (p itself is element-aligned).
template <class T>
__device__ __forceinline__ int elements_to_alignment(const T *p) {
  return int(((16u - (reinterpret_cast<uintptr_t>(p) & 15u)) & 15u) / sizeof(T));
}

}  // namespace xgemv::kernels
