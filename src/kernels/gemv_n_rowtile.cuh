// op(A) = A: y[i] = alpha * sum_j A[i, j] x[j] + beta * y[i]. Rows are contiguous, so the
// counterpart of the row-block design: a block owns a tile of kRowThreads * 16/sizeof(T)
// output rows; kRowThreads threads span the tile with one 16-byte slice each per column, and the
// block's kRowTileThreads / kRowThreads column slots walk different columns (x[j] is a broadcast
// load), summed through shared memory in slot order. Wide tiles give long contiguous runs per
// column; narrow ones serve short m. grid.y splits the columns when the row tiles alone cannot
// fill the GPU.
#pragma once

#include "params.cuh"

namespace xgemv::kernels {

inline constexpr int kRowTileThreads = 256;
inline constexpr int kRowTileUnroll = 4;  // columns in flight per column slot

template <class TA, int kRowThreads>
inline constexpr int kRowTileRows = kRowThreads * kElemsPer16B<TA>;

// Row of element e of a thread inside the tile. Vector path: one contiguous 16-byte slice.
// Scalar path (last tile, misaligned A): consecutive threads take consecutive rows for every e,
// so each scalar load is coalesced.
template <bool kVector, int kRowThreads, int kElems>
__device__ __forceinline__ int tile_row(int row_lane, int e) {
  return kVector ? row_lane * kElems + e : row_lane + kRowThreads * e;
}

template <bool kVector, int kRowThreads, class TA, class S>
__device__ __forceinline__ void accumulate_columns(const TA *tile, int64_t lda, const TA *x,
                                                   int64_t incx, int64_t c0, int64_t c1,
                                                   int64_t rows_left, int row_lane, int slot,
                                                   S (&acc)[kElemsPer16B<TA>]) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int kSlots = kRowTileThreads / kRowThreads;
  auto load_column = [&](int64_t j) {
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
  };
  auto accumulate = [&](int4 a_raw, S xj) {
    S a[kElems];
    widen16<TA>(a_raw, a);
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc[e] += a[e] * xj;
  };
  int64_t j = c0 + slot;
  for (; j + (kRowTileUnroll - 1) * kSlots < c1; j += kRowTileUnroll * kSlots) {
    int4 a_raw[kRowTileUnroll];
    S xv[kRowTileUnroll];
#pragma unroll
    for (int u = 0; u < kRowTileUnroll; ++u) {
      a_raw[u] = load_column(j + u * kSlots);
      xv[u] = to_acc(__ldg(x + (j + u * kSlots) * incx));
    }
#pragma unroll
    for (int u = 0; u < kRowTileUnroll; ++u) accumulate(a_raw[u], xv[u]);
  }
  for (; j < c1; j += kSlots) accumulate(load_column(j), to_acc(__ldg(x + j * incx)));
}

template <class TA, class TY, class S, int kRowThreads>
__global__ void __launch_bounds__(kRowTileThreads, 4) gemv_n_rowtile(const GemvParams<TA, TY, S> p) {
  static_assert(kRowTileThreads % kRowThreads == 0);
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int kRows = kRowTileRows<TA, kRowThreads>;
  constexpr int kSlots = kRowTileThreads / kRowThreads;
  const S alpha = p.alpha(), beta = p.beta();
  if (alpha == S(0) && beta == S(1)) return;  // quick return, decided on the device

  const int row_lane = threadIdx.x % kRowThreads;
  const int slot = threadIdx.x / kRowThreads;
  const int64_t r0 = int64_t(blockIdx.x) * kRows;
  const int64_t rows_left = p.m - r0;
  const int split = blockIdx.y;
  const int64_t c0 = split * p.split_len;
  const int64_t c1 = min(p.n, c0 + p.split_len);
  const bool vector_lda = (p.lda * int64_t(sizeof(TA))) % 16 == 0;
  __shared__ S slot_sums[kSlots][kRows];
  __shared__ S tile_sums[kRows];

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *tile = p.a_of(b) + r0;
    const TA *x = p.x_of(b, p.n);
    TY *y = p.y_of(b, p.m);
    // Full, aligned tiles take 16-byte loads; the last tile and misaligned A take masked scalars.
    const bool vector_ok = vector_lda && rows_left >= kRows && is_aligned16(tile);
    S acc[kElems];
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc[e] = S(0);
    if (alpha != S(0)) {
      if (vector_ok)
        accumulate_columns<true, kRowThreads>(tile, p.lda, x, p.incx, c0, c1, rows_left, row_lane, slot, acc);
      else
        accumulate_columns<false, kRowThreads>(tile, p.lda, x, p.incx, c0, c1, rows_left, row_lane, slot, acc);
    }
#pragma unroll
    for (int e = 0; e < kElems; ++e)
      slot_sums[slot][vector_ok ? tile_row<true, kRowThreads, kElems>(row_lane, e)
                                : tile_row<false, kRowThreads, kElems>(row_lane, e)] = acc[e];
    __syncthreads();
    for (int r = threadIdx.x; r < kRows; r += kRowTileThreads) {
      S sum = S(0);
#pragma unroll
      for (int s = 0; s < kSlots; ++s) sum += slot_sums[s][r];
      tile_sums[r] = sum;
    }
    __syncthreads();

    const int64_t tile_index = b * gridDim.x + blockIdx.x;
    if (p.ksplit == 1 || combine_splits<kRows, kRowTileThreads>(p.partials, p.tile_counters,
                                                                tile_index, p.ksplit, split,
                                                                tile_sums)) {
      for (int r = threadIdx.x; r < kRows; r += kRowTileThreads)
        if (r < rows_left) store_output(y + (r0 + r) * p.incy, tile_sums[r], alpha, beta);
    }
    __syncthreads();  // slot_sums and tile_sums are reused by the next batch item
  }
}

}  // namespace xgemv::kernels
