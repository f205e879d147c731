// op(A) = A^T: y[j] = alpha * dot(A[:, j], x) + beta * y[j]. Column j of column-major A is
// contiguous, so this is the seed's row-block design (row-major rows = our columns): a group of
// kGroup threads owns one output and walks the reduction axis in 16-byte chunks, fp32 (fp64 for
// fp64) register accumulator, shuffle reduction across the group, masked tails. A block owns
// kThreads / kGroup consecutive outputs; grid.y splits the reduction axis when the outputs
// alone cannot fill the GPU.
#pragma once

#include "params.cuh"

namespace xgemv::kernels {

inline constexpr int kRowBlockThreads = 256;
inline constexpr int kRowBlockUnroll = 4;  // independent 16-byte loads in flight per thread

// Offset of element e of a thread's chunk inside a group step. Vector path: each lane owns
// kElems contiguous elements (one 16-byte load). Scalar path (misaligned A): lanes are
// contiguous for every e, so each scalar load is still coalesced across the group.
template <bool kVector, int kGroup, int kElems>
__device__ __forceinline__ int chunk_offset(int lane, int e) {
  return kVector ? lane * kElems + e : lane + kGroup * e;
}

template <bool kVector, int kGroup, class TA, class S>
__device__ __forceinline__ S dot_column(const TA *column, const TA *x, int64_t incx,
                                        bool x_contiguous, int64_t k0, int64_t k1, int lane) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kStep = int64_t(kGroup) * kElems;
  S acc = S(0);
  auto load_step = [&](int64_t k, TA (&av)[kElems], TA (&xv)[kElems]) {
    if constexpr (kVector) {
      load16_streaming(column + k + lane * kElems, av);
      if (x_contiguous) {
        load16_cached(x + k + lane * kElems, xv);
        return;
      }
    } else {
#pragma unroll
      for (int e = 0; e < kElems; ++e) av[e] = __ldcs(column + k + chunk_offset<false, kGroup, kElems>(lane, e));
    }
#pragma unroll
    for (int e = 0; e < kElems; ++e)
      xv[e] = __ldg(x + (k + chunk_offset<kVector, kGroup, kElems>(lane, e)) * incx);
  };
  int64_t k = k0;
  for (; k + kRowBlockUnroll * kStep <= k1; k += kRowBlockUnroll * kStep) {
    TA av[kRowBlockUnroll][kElems], xv[kRowBlockUnroll][kElems];
#pragma unroll
    for (int u = 0; u < kRowBlockUnroll; ++u) load_step(k + u * kStep, av[u], xv[u]);
#pragma unroll
    for (int u = 0; u < kRowBlockUnroll; ++u)
#pragma unroll
      for (int e = 0; e < kElems; ++e) acc += to_acc(av[u][e]) * to_acc(xv[u][e]);
  }
  for (; k + kStep <= k1; k += kStep) {
    TA av[kElems], xv[kElems];
    load_step(k, av, xv);
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc += to_acc(av[e]) * to_acc(xv[e]);
  }
  if (k < k1) {  // the masked tail: fewer than one step left
#pragma unroll
    for (int e = 0; e < kElems; ++e) {
      const int64_t i = k + chunk_offset<kVector, kGroup, kElems>(lane, e);
      if (i < k1) acc += to_acc(column[i]) * to_acc(x[i * incx]);
    }
  }
  return acc;
}

template <class TA, class TY, class S, int kGroup>
__global__ void __launch_bounds__(kRowBlockThreads, 4)
    gemv_t_rowblock(const GemvParams<TA, TY, S> p) {
  static_assert(kGroup >= 1 && kGroup <= 32 && (kGroup & (kGroup - 1)) == 0);
  constexpr int kOutputs = kRowBlockThreads / kGroup;
  const S alpha = p.alpha(), beta = p.beta();
  if (alpha == S(0) && beta == S(1)) return;  // quick return, decided on the device

  const int lane = threadIdx.x % kGroup;
  const int slot = threadIdx.x / kGroup;
  const int64_t j = int64_t(blockIdx.x) * kOutputs + slot;
  const bool has_output = j < p.n;
  const int split = blockIdx.y;
  const int64_t k0 = split * p.split_len;
  const int64_t k1 = min(p.m, k0 + p.split_len);
  // Vector loads need every column start 16-byte aligned: lda here, the base per batch item.
  const bool vector_lda = (p.lda * int64_t(sizeof(TA))) % 16 == 0;
  __shared__ S block_dots[kOutputs];

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = p.a_of(b);
    const TA *x = p.x_of(b, p.m);
    TY *y = p.y_of(b, p.n);
    const bool vector_ok = vector_lda && is_aligned16(a);
    const bool x_contiguous = p.incx == 1 && is_aligned16(x);
    S dot = S(0);
    if (alpha != S(0) && has_output) {
      const TA *column = a + j * p.lda;
      dot = vector_ok ? dot_column<true, kGroup, TA, S>(column, x, p.incx, x_contiguous, k0, k1, lane)
                      : dot_column<false, kGroup, TA, S>(column, x, p.incx, false, k0, k1, lane);
    }
#pragma unroll
    for (int offset = kGroup / 2; offset > 0; offset /= 2)
      dot += __shfl_xor_sync(0xffffffffu, dot, offset, kGroup);

    if (p.ksplit == 1) {
      if (lane == 0 && has_output) store_output(y + j * p.incy, dot, alpha, beta);
      continue;
    }
    if (lane == 0) block_dots[slot] = dot;
    __syncthreads();
    S total;
    const int64_t tile = b * gridDim.x + blockIdx.x;
    if (combine_splits<kOutputs>(p.partials, p.tile_counters, tile, p.ksplit, split, block_dots,
                                 total)) {
      const int64_t jj = int64_t(blockIdx.x) * kOutputs + threadIdx.x;
      if (threadIdx.x < kOutputs && jj < p.n) store_output(y + jj * p.incy, total, alpha, beta);
    }
  }
}

}  // namespace xgemv::kernels
