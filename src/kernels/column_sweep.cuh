// The column sweep of op N: kRowThreads lanes own a tile of rows (one 16-byte slice each per
// column), and the block's column slots walk different columns, kUnroll in flight per slot,
// each column scaled by its (broadcast) x element. Slices move in 16-byte loads (aligned
// columns), realigned 16-byte loads (misaligned columns of inner tiles) or masked element loads.
#pragma once

#include "early_stage.cuh"
#include "elements.cuh"

namespace xgemv::kernels {

// Row of element e of a thread inside the tile. Vector path: one contiguous 16-byte slice.
// Scalar path (last tile, misaligned A): consecutive threads take consecutive rows for every e,
// so each scalar load is coalesced.
template <bool kVector, int kRowThreads, int kElems>
__device__ __forceinline__ int tile_row(int row_lane, int e) {
  return kVector ? row_lane * kElems + e : row_lane + kRowThreads * e;
}

// The A of column j of the tile: one 16-byte slice (vector path) or kElems masked scalars.
template <bool kVector, int kRowThreads, class TA>
__device__ __forceinline__ int4 load_tile_column(const TA *tile, int64_t lda, int64_t j,
                                                 int64_t rows_left, int row_lane) {
  constexpr int kElems = kElemsPer16B<TA>;
  const TA *column = tile + j * lda;
  if constexpr (kVector) {
    return load16_streaming(column + row_lane * kElems);
  } else {
    TA a[kElems];
#pragma unroll
    for (int e = 0; e < kElems; ++e) {
      const int r = tile_row<false, kRowThreads, kElems>(row_lane, e);
      a[e] = r < rows_left ? __ldcs(column + r) : TA(0.0f);
    }
    return pack16(a);
  }
}

// acc[e] += A[row e, j] * x[j] for one column's 16 bytes (the one summation order of every path,
// so that early start gives the same bits).
template <class TA, class S>
__device__ __forceinline__ void accumulate_column(S (&acc)[kElemsPer16B<TA>], int4 a_raw, S xj) {
  constexpr int kElems = kElemsPer16B<TA>;
  S a[kElems];
  widen16<TA>(a_raw, a);
#pragma unroll
  for (int e = 0; e < kElems; ++e) acc[e] += a[e] * xj;
}

// The column slot's walk over its columns j in [c0, c1): kUnroll columns' loads in flight
// (load(j), and x[j]), then consumed in column order (consume(j, loaded, x[j])).
template <int kBlockThreads, int kRowThreads, int kUnroll, class TX, class Load, class Consume>
__device__ __forceinline__ void sweep_slot_columns(const TX *x, int64_t incx, int64_t c0,
                                                   int64_t c1, int slot, Load &&load,
                                                   Consume &&consume) {
  constexpr int kSlots = kBlockThreads / kRowThreads;
  using Loaded = decltype(load(c0));
  using S = decltype(to_acc(*x));
  int64_t j = c0 + slot;
  for (; j + (kUnroll - 1) * kSlots < c1; j += kUnroll * kSlots) {
    Loaded loaded[kUnroll];
    S xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      loaded[u] = load(j + u * kSlots);
      xv[u] = to_acc(__ldg(x + (j + u * kSlots) * incx));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) consume(j + u * kSlots, loaded[u], xv[u]);
  }
  for (; j < c1; j += kSlots) consume(j, load(j), to_acc(__ldg(x + j * incx)));
}

// acc[e] += sum over the slot's columns j in [c0, c1) of A[row e, j] * x[j].
template <bool kVector, int kBlockThreads, int kRowThreads, int kUnroll, class TA, class TX,
          class S>
__device__ __forceinline__ void accumulate_columns(const TA *tile, int64_t lda, const TX *x,
                                                   int64_t incx, int64_t c0, int64_t c1,
                                                   int64_t rows_left, int row_lane, int slot,
                                                   S (&acc)[kElemsPer16B<TA>]) {
  sweep_slot_columns<kBlockThreads, kRowThreads, kUnroll>(
      x, incx, c0, c1, slot,
      [&](int64_t j) {
        return load_tile_column<kVector, kRowThreads>(tile, lda, j, rows_left, row_lane);
      },
      [&](int64_t, int4 a_raw, S xj) { accumulate_column<TA>(acc, a_raw, xj); });
}

// acc[e] += sum over the slot's columns j in [c0, c1) of A[row e, j] * x[j], for a full tile
// whose columns are not 16-byte aligned (odd lda, A at an offset), with rows above it and kElems
// rows or more below it. Each lane loads the aligned block under the start of its 16-byte slice
// and takes the block after it from the next lane of its row group; the group's last lane loads
// that one itself. One 16-byte load per lane and column, as when aligned, instead of kElems
// element loads; the blocks are realigned (funnel16) only as they are consumed, so that the
// realigned copies do not add to the registers of the loads in flight. The blocks reach at most
// 15 bytes past either end of the tile's slices: rows of the same column. The same
// accumulate_column order as the other paths, so the same bits as the masked path.
template <int kBlockThreads, int kRowThreads, int kUnroll, class TA, class TX, class S>
__device__ __forceinline__ void accumulate_shifted_columns(const TA *tile, int64_t lda,
                                                           const TX *x, int64_t incx, int64_t c0,
                                                           int64_t c1, int row_lane, int slot,
                                                           S (&acc)[kElemsPer16B<TA>]) {
  constexpr int kElems = kElemsPer16B<TA>;
  const unsigned mask = group_lane_mask<kRowThreads>();
  const bool last_lane = row_lane == kRowThreads - 1;
  // The slice's address; its offset in the aligned block is recomputed as it is consumed, not
  // kept beside the loads in flight.
  const auto slice_address = [&](int64_t j) {
    return reinterpret_cast<uintptr_t>(tile + j * lda + row_lane * kElems);
  };
  struct Blocks {
    int4 lower, upper;  // upper: the last lane's only
  };
  sweep_slot_columns<kBlockThreads, kRowThreads, kUnroll>(
      x, incx, c0, c1, slot,
      [&](int64_t j) {
        const uintptr_t address = slice_address(j);
        const int4 *block = reinterpret_cast<const int4 *>(address & ~uintptr_t(15));
        return Blocks{__ldcs(block), last_lane && (address & 15u) != 0 ? __ldcs(block + 1)
                                                                         : make_int4(0, 0, 0, 0)};
      },
      [&](int64_t j, const Blocks &b, S xj) {
        const int4 next = shfl16(mask, b.lower, (row_lane + 1) % kRowThreads, kRowThreads);
        const unsigned offset = unsigned(slice_address(j) & 15u);
        accumulate_column<TA>(acc, funnel16<TA>(b.lower, last_lane ? b.upper : next, offset), xj);
      });
}

// Early start (vector tiles only): how many of the first kSteps iterations of
// accumulate_columns' unrolled loop over [c0, c1) are full ones for this column slot: the steps
// early start stages, and then consumes.
template <int kBlockThreads, int kRowThreads, int kUnroll, int kSteps>
__device__ __forceinline__ int staged_column_steps(int64_t c0, int64_t c1, int slot) {
  constexpr int kSlots = kBlockThreads / kRowThreads;
  int steps = 0;
#pragma unroll
  for (int s = 0; s < kSteps; ++s)
    steps += c0 + slot + int64_t(s) * kUnroll * kSlots + (kUnroll - 1) * kSlots < c1;
  return steps;
}

// Copies the A of those steps into the stage (vector path), step s column u in slot
// s * kUnroll + u.
template <int kBlockThreads, int kRowThreads, int kUnroll, int kSteps, class TA>
__device__ __forceinline__ void stage_first_columns(
    EarlyStage<kBlockThreads, kSteps * kUnroll> &stage, int steps, const TA *tile, int64_t lda,
    int64_t c0, int row_lane, int slot) {
  constexpr int kSlots = kBlockThreads / kRowThreads;
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    if (s >= steps) break;
    const int64_t j = c0 + slot + int64_t(s) * kUnroll * kSlots;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      stage.stage(s * kUnroll + u, tile + (j + u * kSlots) * lda + row_lane * kElemsPer16B<TA>);
  }
  commit_staged();
}

// The staged steps consumed exactly as accumulate_columns' loop would consume them (same x
// loads, same accumulate_column order, so the same bits). Returns the c0 from which
// accumulate_columns continues. One step at a time: unrolled, the steps' loads would raise the
// register pressure of the whole kernel.
template <int kBlockThreads, int kRowThreads, int kUnroll, int kSteps, class TA, class TX, class S>
__device__ __forceinline__ int64_t accumulate_staged_columns(
    const EarlyStage<kBlockThreads, kSteps * kUnroll> &stage, int steps, const TX *x,
    int64_t incx, int64_t c0, int slot, S (&acc)[kElemsPer16B<TA>]) {
  constexpr int kSlots = kBlockThreads / kRowThreads;
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {
    const int64_t j = c0 + slot + int64_t(s) * kUnroll * kSlots;
    S xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) xv[u] = to_acc(__ldg(x + (j + u * kSlots) * incx));
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      accumulate_column<TA>(acc, stage.staged(s * kUnroll + u), xv[u]);
  }
  return c0 + int64_t(steps) * kUnroll * kSlots;
}

}  // namespace xgemv::kernels
