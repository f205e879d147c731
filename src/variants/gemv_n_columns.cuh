// op(A) = A with few columns (tall-skinny A): y[i] = alpha * sum_j A[i, j] x[j] + beta * y[i]
// for n <= kMaxColumns. A row tile wastes its column slots here (n_rowtile: 8 or 32 slots per
// block for a handful of columns), so each thread owns its rows outright: kChunks 16-byte row
// slices, one per chunk of kThreads * kElems rows, and walks every column itself (x[j] is a
// broadcast load), kLoadsInFlight slices of several columns in flight. No reduction across
// threads and no split, so the automatic choice takes it only for A tall enough that its row
// tiles alone occupy at least half the SMs. The last tile and misaligned A (odd lda, offset
// base) take masked scalar loads, consecutive threads on consecutive rows. y goes through
// shared memory so that its reads and writes are coalesced on either path.
#pragma once

#include "kernels/elements.cuh"
#include "variants/variant_base.hpp"

namespace xgemv::kernels {

// Row of element e of a thread's slice inside its chunk of kThreads * kElems rows. Vector
// path: the thread's contiguous 16 bytes. Scalar path: consecutive threads take consecutive
// rows for every e, so each scalar load is coalesced.
template <bool kVector, int kThreads, int kElems>
__device__ __forceinline__ int chunk_row(int e) {
  return kVector ? int(threadIdx.x) * kElems + e : e * kThreads + int(threadIdx.x);
}

// acc[c][e] += sum over the columns of A[row(c, e), j] * x[j], columns in order.
template <bool kVector, int kThreads, int kChunks, int kUnroll, class TA, class TX, class S>
__device__ __forceinline__ void sweep_columns(const TA *tile, int64_t lda, const TX *x,
                                              int64_t incx, int64_t n, int64_t rows_left,
                                              S (&acc)[kChunks][kElemsPer16B<TA>]) {
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int kChunkRows = kThreads * kElems;
  auto load_slice = [&](const TA *column, int chunk) {
    const TA *slice = column + chunk * kChunkRows;
    if constexpr (kVector) {
      return load16_streaming(slice + chunk_row<true, kThreads, kElems>(0));
    } else {
      TA a[kElems];
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        const int r = chunk_row<false, kThreads, kElems>(e);
        a[e] = chunk * kChunkRows + r < rows_left ? __ldcs(slice + r) : TA(0.0f);
      }
      return pack16(a);
    }
  };
  auto accumulate = [&](const int4 (&raw)[kChunks], S xj) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      S a[kElems];
      widen16<TA>(raw[c], a);
#pragma unroll
      for (int e = 0; e < kElems; ++e) acc[c][e] += a[e] * xj;
    }
  };
  // Steps of kUnroll columns, the last one masked, so that its loads are in flight together.
  for (int64_t j = 0; j < n; j += kUnroll) {
    int4 raw[kUnroll][kChunks];
    S xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const bool in_range = j + u < n;
      const TA *column = tile + (j + u) * lda;
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
        raw[u][c] = in_range ? load_slice(column, c) : make_int4(0, 0, 0, 0);
      xv[u] = in_range ? to_acc(__ldg(x + (j + u) * incx)) : S(0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) accumulate(raw[u], xv[u]);
  }
}

template <class TA, class TX, class TY, class S, class Variant>
__global__ void __launch_bounds__(Variant::kThreads, Variant::kBlocksPerSm)
    gemv_n_columns(const KernelArgs<S> args) {
  constexpr int kThreads = Variant::kThreads;
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int kChunks = Variant::chunks(sizeof(TA), sizeof(S));
  constexpr int kUnroll = Variant::kLoadsInFlight / kChunks;
  // Scalar 16-bit loads take a register each until packed: half the columns in flight.
  constexpr int kScalarUnroll = sizeof(TA) >= 4 ? kUnroll : kUnroll / 2;
  constexpr int kChunkRows = kThreads * kElems;
  constexpr int kRows = kChunkRows * kChunks;
  const GemvProblem &p = args.problem;
  begin_kernel</*kEarlyStart=*/false>();
  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  const int64_t r0 = int64_t(blockIdx.x) * kRows;
  const int64_t rows_left = p.m - r0;
  const bool vector_lda = (p.a.ld * int64_t(sizeof(TA))) % 16 == 0;
  __shared__ S chunk_sums[kChunkRows];

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *tile = matrix_of<TA>(p, b) + r0;
    const TX *x = x_of<TX>(p, b);
    TY *y = y_of<TY>(p, b);
    const bool vector_ok = vector_lda && rows_left >= kRows && is_aligned16(tile);
    S acc[kChunks][kElems];
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
      for (int e = 0; e < kElems; ++e) acc[c][e] = S(0);
    if (alpha != S(0)) {
      if (vector_ok)
        sweep_columns<true, kThreads, kChunks, kUnroll>(tile, p.a.ld, x, p.x.inc, p.n, rows_left,
                                                       acc);
      else
        sweep_columns<false, kThreads, kChunks, kScalarUnroll>(tile, p.a.ld, x, p.x.inc, p.n,
                                                        rows_left, acc);
    }
    // One chunk of sums at a time through shared memory, stored by consecutive threads.
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
#pragma unroll
      for (int e = 0; e < kElems; ++e)
        chunk_sums[vector_ok ? chunk_row<true, kThreads, kElems>(e)
                             : chunk_row<false, kThreads, kElems>(e)] = acc[c][e];
      __syncthreads();
      for (int r = threadIdx.x; r < kChunkRows; r += kThreads) {
        const int64_t row = int64_t(c) * kChunkRows + r;
        if (row < rows_left)
          store_output(y + (r0 + row) * p.y.inc, chunk_sums[r], alpha, beta,
                       bias_at<TY>(p, r0 + row));
      }
      __syncthreads();  // chunk_sums is reused by the next chunk and batch item
    }
  }
}

}  // namespace xgemv::kernels

namespace xgemv {

struct GemvNColumns : VariantBase<GemvNColumns, VariantFamily::kSingleVector> {
  static constexpr int kThreads = 256;
  static constexpr int kBlocksPerSm = 4;    // residency the launch bounds ask for (64 registers)
  static constexpr int kMaxColumns = 16;    // the widest A the automatic choice gives it
  static constexpr int kLoadsInFlight = 8;  // 16-byte loads per thread per column step
  static constexpr VariantName kName = variant_name("n_columns", kMaxColumns);

  // Row slices per thread: 16 accumulator registers (4 slices of fp32 or fp64 elements, 2 of
  // 16-bit elements widened to fp32), the rest of the 64 for the loads in flight.
  static constexpr int chunks(int a_bytes, int accumulator_bytes) {
    return 4 * a_bytes / accumulator_bytes;
  }
  static int64_t tile_rows(const GemvProblem &p) {
    return int64_t(kThreads) * a_elements_per_16_bytes(p) *
           chunks(element_bytes(p.types.a), element_bytes(p.types.scalar));
  }

  static bool implements(const GemvProblem &p) { return !p.transposed(); }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &) {
    return {dim3(unsigned(ceil_div(p.m, tile_rows(p))), 1, grid_z(p.batch_count)), dim3(kThreads),
            {}};
  }

  // Up to 16 columns (n_rowtile's slots would be mostly idle), and tiles for at least half the
  // SMs: a block keeps 256 x 8 x 16 = 32 KB in flight, what an SM needs (Little's law on the
  // H200: ~26 KB), so half the SMs already stream more than n_rowtile does at n <= 16 (26-38%
  // of the ceiling on 2M x 8 on the H200). Shorter A keeps n_rowtile, whose
  // smaller tiles and column slots spread it over more blocks.
  static bool prefers(const GemvProblem &p, const DeviceLimits &device) {
    return p.n <= kMaxColumns && 2 * ceil_div(p.m, tile_rows(p)) >= device.sm_count;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context) {
    return kernels::launch_kernel(&kernels::gemv_n_columns<TA, TX, TY, S, GemvNColumns>, problem,
                                  plan, context);
  }
};

}  // namespace xgemv
