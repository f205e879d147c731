// op(A) = A: y[i] = alpha * sum_j A[i, j] x[j] + beta * y[i]. Rows are contiguous, so the
// counterpart of the row-block design: a block owns a tile of 32 * 16/sizeof(T) output rows,
// each lane one 16-byte slice of the tile in every column; the block's warps walk different
// columns (x[j] is a broadcast load) and are summed through shared memory in warp order; grid.y
// splits the columns when the row tiles alone cannot fill the GPU.
#pragma once

#include "params.cuh"

namespace xgemv::kernels {

inline constexpr int kRowTileWarps = 8;
inline constexpr int kRowTileThreads = kRowTileWarps * 32;
inline constexpr int kRowTileUnroll = 4;  // columns in flight per warp

template <class TA>
inline constexpr int kRowTileRows = 32 * kElemsPer16B<TA>;

// Row of element e of a lane inside the tile; the layout mirrors chunk_offset of op T.
template <bool kVector, int kElems>
__device__ __forceinline__ int tile_row(int lane, int e) {
  return kVector ? lane * kElems + e : lane + 32 * e;
}

template <bool kVector, class TA, class S>
__device__ __forceinline__ void accumulate_columns(const TA *tile, int64_t lda, const TA *x,
                                                   int64_t incx, int64_t c0, int64_t c1,
                                                   int64_t rows_left, int lane, int warp,
                                                   S (&acc)[kElemsPer16B<TA>]) {
  constexpr int kElems = kElemsPer16B<TA>;
  auto load_column = [&](int64_t j, TA (&av)[kElems]) {
    const TA *column = tile + j * lda;
    if constexpr (kVector) {
      load16_streaming(column + lane * kElems, av);
    } else {
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        const int r = tile_row<false, kElems>(lane, e);
        av[e] = r < rows_left ? __ldcs(column + r) : TA(0.0f);
      }
    }
  };
  int64_t j = c0 + warp;
  for (; j + (kRowTileUnroll - 1) * kRowTileWarps < c1; j += kRowTileUnroll * kRowTileWarps) {
    TA av[kRowTileUnroll][kElems];
    S xv[kRowTileUnroll];
#pragma unroll
    for (int u = 0; u < kRowTileUnroll; ++u) {
      load_column(j + u * kRowTileWarps, av[u]);
      xv[u] = to_acc(__ldg(x + (j + u * kRowTileWarps) * incx));
    }
#pragma unroll
    for (int u = 0; u < kRowTileUnroll; ++u)
#pragma unroll
      for (int e = 0; e < kElems; ++e) acc[e] += to_acc(av[u][e]) * xv[u];
  }
  for (; j < c1; j += kRowTileWarps) {
    TA av[kElems];
    load_column(j, av);
    const S xj = to_acc(__ldg(x + j * incx));
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc[e] += to_acc(av[e]) * xj;
  }
}

template <class TA, class TY, class S>
__global__ void __launch_bounds__(kRowTileThreads, 4) gemv_n_rowtile(const GemvParams<TA, TY, S> p) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int kRows = kRowTileRows<TA>;
  const S alpha = p.alpha(), beta = p.beta();
  if (alpha == S(0) && beta == S(1)) return;  // quick return, decided on the device

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int64_t r0 = int64_t(blockIdx.x) * kRows;
  const int64_t rows_left = p.m - r0;
  const int split = blockIdx.y;
  const int64_t c0 = split * p.split_len;
  const int64_t c1 = min(p.n, c0 + p.split_len);
  const bool vector_lda = (p.lda * int64_t(sizeof(TA))) % 16 == 0;
  __shared__ S warp_sums[kRowTileWarps][kRows];
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
        accumulate_columns<true>(tile, p.lda, x, p.incx, c0, c1, rows_left, lane, warp, acc);
      else
        accumulate_columns<false>(tile, p.lda, x, p.incx, c0, c1, rows_left, lane, warp, acc);
    }
#pragma unroll
    for (int e = 0; e < kElems; ++e)
      warp_sums[warp][vector_ok ? tile_row<true, kElems>(lane, e) : tile_row<false, kElems>(lane, e)] =
          acc[e];
    __syncthreads();
    for (int r = threadIdx.x; r < kRows; r += kRowTileThreads) {
      S sum = S(0);
#pragma unroll
      for (int w = 0; w < kRowTileWarps; ++w) sum += warp_sums[w][r];
      tile_sums[r] = sum;
    }
    __syncthreads();

    if (p.ksplit == 1) {
      for (int r = threadIdx.x; r < kRows; r += kRowTileThreads)
        if (r < rows_left) store_output(y + (r0 + r) * p.incy, tile_sums[r], alpha, beta);
      __syncthreads();  // warp_sums and tile_sums are reused by the next batch item
      continue;
    }
    S total;
    const int64_t tile_index = b * gridDim.x + blockIdx.x;
    if (combine_splits<kRows>(p.partials, p.tile_counters, tile_index, p.ksplit, split,
                              tile_sums, total)) {
      if (threadIdx.x < kRows && threadIdx.x < rows_left)
        store_output(y + (r0 + threadIdx.x) * p.incy, total, alpha, beta);
    }
  }
}

}  // namespace xgemv::kernels
