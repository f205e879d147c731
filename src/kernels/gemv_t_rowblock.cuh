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

// How x is read: 16-byte loads when contiguous and aligned like the column, realigned 16-byte
// loads when contiguous but shifted against it (odd lda), element loads when strided.
enum class XAccess { kAligned, kShifted, kStrided };

// dot(column[k0:k1], x[k0:k1]) over the group's lanes, lane-partial. column + k0 must be 16-byte
// aligned: each lane owns kElems contiguous elements per step (one 16-byte load).
template <int kGroup, class TA, class S>
__device__ __forceinline__ S dot_column(const TA *column, const TA *x, int64_t incx,
                                        XAccess x_access, int64_t k0, int64_t k1, int lane) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kStep = int64_t(kGroup) * kElems;
  auto load_step = [&](int64_t k, int4 &a_raw, int4 &x_raw) {
    a_raw = load16_streaming(column + k + lane * kElems);
    if (x_access == XAccess::kAligned) {
      x_raw = load16_cached(x + k + lane * kElems);
    } else if (x_access == XAccess::kShifted) {
      x_raw = load16_cached_unaligned(x + k + lane * kElems);
    } else {
      TA xs[kElems];
#pragma unroll
      for (int e = 0; e < kElems; ++e) xs[e] = __ldg(x + (k + lane * kElems + e) * incx);
      x_raw = pack16(xs);
    }
  };
  S acc = S(0);
  auto accumulate = [&](int4 a_raw, int4 x_raw) {
    S a[kElems], xv[kElems];
    widen16<TA>(a_raw, a);
    widen16<TA>(x_raw, xv);
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc += a[e] * xv[e];
  };
  // A shifted x load reads into the aligned block past its 16 bytes: stop the vector steps one
  // block early so that block still holds elements below k1.
  const int64_t vector_end = x_access == XAccess::kShifted ? k1 - kElems : k1;
  int64_t k = k0;
  for (; k + kRowBlockUnroll * kStep <= vector_end; k += kRowBlockUnroll * kStep) {
    int4 a_raw[kRowBlockUnroll], x_raw[kRowBlockUnroll];
#pragma unroll
    for (int u = 0; u < kRowBlockUnroll; ++u) load_step(k + u * kStep, a_raw[u], x_raw[u]);
#pragma unroll
    for (int u = 0; u < kRowBlockUnroll; ++u) accumulate(a_raw[u], x_raw[u]);
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
  __shared__ S block_dots[kOutputs];

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = p.a_of(b);
    const TA *x = p.x_of(b, p.m);
    TY *y = p.y_of(b, p.n);
    S dot = S(0);
    if (alpha != S(0) && has_output) {
      // Columns of a misaligned A (odd lda, offset base) peel their first few elements so that
      // the rest still moves in 16-byte loads.
      const TA *column = a + j * p.lda;
      const int64_t head = min(int64_t(elements_to_alignment(column + k0)), k1 - k0);
      for (int64_t i = k0 + lane; i < k0 + head; i += kGroup) dot += to_acc(column[i]) * to_acc(x[i * p.incx]);
      const XAccess x_access = p.incx != 1 ? XAccess::kStrided
                               : is_aligned16(x + k0 + head) ? XAccess::kAligned
                                                              : XAccess::kShifted;
      dot += dot_column<kGroup, TA, S>(column, x, p.incx, x_access, k0 + head, k1, lane);
    }
#pragma unroll
    for (int offset = kGroup / 2; offset > 0; offset /= 2)
      dot += __shfl_xor_sync(0xffffffffu, dot, offset, kGroup);

    if (lane == 0) block_dots[slot] = dot;
    __syncthreads();
    const int64_t tile = b * gridDim.x + blockIdx.x;
    if (p.ksplit == 1 || combine_splits<kOutputs, kRowBlockThreads>(
                             p.partials, p.tile_counters, tile, p.ksplit, split, block_dots)) {
      const int64_t jj = int64_t(blockIdx.x) * kOutputs + threadIdx.x;
      if (threadIdx.x < kOutputs && jj < p.n)
        store_output(y + jj * p.incy, block_dots[threadIdx.x], alpha, beta);
    }
    __syncthreads();  // block_dots is reused by the next batch item
  }
}

}  // namespace xgemv::kernels
