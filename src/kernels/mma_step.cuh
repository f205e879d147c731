// The tensor-core steps of the several-vector kernels: mma.m16n8k16 on 16-bit A and x with fp32
// sums, mma.m16n8k8 on fp64, and 16-byte loads as the mma's register units. The op T kernel
// (variants/gemv_t_mma.cuh) feeds rows of A straight from columns it loads; the op N kernel
// (variants/gemv_n_mma.cuh) pairs up elements of the columns it loads first (pair_rows).
#pragma once

#include <type_traits>

#include "rhs_tile.cuh"

namespace xgemv::kernels {

// d += A (16 x 16, row fragments) * B (16 x 8, column fragments) in fp32.
template <class T>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const unsigned (&a)[4],
                                            unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
#endif
}

// The tensor-core step of element type T. A lane's 16 bytes of a column (or of a vector) are
// kUnits registers of type Unit, and a chunk is kUnits / 2 mma: mma h takes the units 2h and
// 2h + 1 of each of the lane's two columns (fragment rows quad and quad + 8) and of its vector
// (fragment column quad), which the mma's k side pairs up alike for A and x.
template <class T>
struct MmaStep {
  using Unit = unsigned;  // two 16-bit elements
  using Sum = float;
  static constexpr int kUnits = 4;

  __device__ __forceinline__ static void mma(Sum (&d)[4], const Unit (&lo)[kUnits],
                                             const Unit (&hi)[kUnits], const Unit (&x)[kUnits],
                                             int h) {
    const unsigned fragment[4] = {lo[2 * h], hi[2 * h], lo[2 * h + 1], hi[2 * h + 1]};
    mma_16x8x16<T>(d, fragment, x[2 * h], x[2 * h + 1]);
  }

  // Rows of the A fragment from kElemsPer16B<T> loaded columns (column c's 16 bytes are rows
  // 0..7 of reduction element c, as units of rows 2w and 2w + 1): rows 2s (lo) and 2s + 1 (hi)
  // as units of reduction elements 2i and 2i + 1, one byte permutation each.
  __device__ __forceinline__ static void pair_rows(const Unit (&columns)[kElemsPer16B<T>][kUnits],
                                                   int s, Unit (&lo)[kUnits],
                                                   Unit (&hi)[kUnits]) {
#pragma unroll
    for (int i = 0; i < kUnits; ++i) {
      lo[i] = __byte_perm(columns[2 * i][s], columns[2 * i + 1][s], 0x5410);
      hi[i] = __byte_perm(columns[2 * i][s], columns[2 * i + 1][s], 0x7632);
    }
  }
};

template <>
struct MmaStep<double> {
  using Unit = double;
  using Sum = double;
  static constexpr int kUnits = 2;

  // mma.m16n8k8.f64; h is always 0.
  __device__ __forceinline__ static void mma(Sum (&d)[4], const Unit (&lo)[kUnits],
                                             const Unit (&hi)[kUnits], const Unit (&x)[kUnits],
                                             int) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(lo[0]), "d"(hi[0]), "d"(lo[1]), "d"(hi[1]), "d"(x[0]), "d"(x[1]));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // Before sm_90 the fp64 mma is 8 x 8 x 4: rows lo (d[0..1]) and hi (d[2..3]) apart, each
    // unit at the reduction slot quad_lane of its own mma.
    const Unit *rows[2] = {lo, hi};
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int u = 0; u < kUnits; ++u)
        asm volatile(
            "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
            : "+d"(d[2 * r]), "+d"(d[2 * r + 1])
            : "d"(rows[r][u]), "d"(x[u]));
#endif
  }

  // One unit is one element: rows 0 (lo) and 1 (hi) of the two loaded columns; s is always 0.
  __device__ __forceinline__ static void pair_rows(const Unit (&columns)[2][kUnits], int,
                                                   Unit (&lo)[kUnits], Unit (&hi)[kUnits]) {
#pragma unroll
    for (int i = 0; i < kUnits; ++i) {
      lo[i] = columns[i][0];
      hi[i] = columns[i][1];
    }
  }
};

// A lane's 16 bytes of T at p (elements p[0], p[stride], ...; those at index >= valid read as
// zero) as the mma's units.
template <class T, bool kStreaming>
__device__ __forceinline__ void load_units(const T *p, int64_t stride, int64_t valid, bool whole,
                                           typename MmaStep<T>::Unit (&units)[MmaStep<T>::kUnits]) {
  T elements[kElemsPer16B<T>];
  load_run<kElemsPer16B<T>, kStreaming>(p, stride, valid, whole, elements);
  memcpy(units, elements, sizeof(units));
}

// d[g] += the sums of one warp over its chunks of [k0, k1) for a tile of 16 rows of A (op T:
// rows of the reduction's length, contiguous), this lane's fragment rows quad and quad + 8 at
// a_lo and a_hi (lo_in, hi_in: inside the matrix, else masked to zero) and its vectors
// g * 8 + quad of `vectors` (StridedVectors or a policy of the same members). Per chunk (4 lanes x
// 16 bytes of each row) each lane loads 16 contiguous bytes of both rows straight into its
// fragments: the chunk's elements are summed in a permuted order, the same for A and x. The
// block's kWarps warps take interleaved steps of kUnroll chunks. Whole steps (every load aligned
// and inside [k0, k1): `aligned`, A's rows and the vectors 16-byte aligned) load without masks:
// masked rows and vectors read real data into sums that are never stored. The order of each
// vector's sum depends on the shape alone, never on the vectors' count.
template <class TA, int kVectorSides, int kUnroll, int kWarps, class Vectors>
__device__ __forceinline__ void mma_tile_steps(const TA *a_lo, const TA *a_hi, bool lo_in,
                                               bool hi_in, bool aligned, const Vectors &vectors,
                                               int64_t k0, int64_t k1,
                                               typename MmaStep<TA>::Sum (&d)[kVectorSides][4]) {
  using Step = MmaStep<TA>;
  using Unit = typename Step::Unit;
  constexpr int kUnits = Step::kUnits;
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kChunk = 4 * kElems, kWarpStep = kChunk * kUnroll;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int quad = lane / 4, quad_lane = lane % 4;
  const TA *x_sides[kVectorSides];
#pragma unroll
  for (int g = 0; g < kVectorSides; ++g) x_sides[g] = vectors.column(g * 8 + quad);
  const auto warp_step = [&](int64_t k, auto whole) {
    constexpr bool kWhole = decltype(whole)::value;
    Unit a_units[kUnroll][2][kUnits], x_units[kUnroll][kVectorSides][kUnits];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t kk = k + u * kChunk + kElems * quad_lane;
      const int64_t valid = kWhole ? kElems : k1 - kk;
      load_units<TA, true>(a_lo + kk, 1, lo_in ? valid : 0, kWhole, a_units[u][0]);
      load_units<TA, true>(a_hi + kk, 1, hi_in ? valid : 0, kWhole, a_units[u][1]);
#pragma unroll
      for (int g = 0; g < kVectorSides; ++g)
        load_units<TA, false>(x_sides[g] + kk * vectors.inc, vectors.inc,
                              g * 8 + quad < vectors.count ? valid : 0, kWhole, x_units[u][g]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int h = 0; h < kUnits / 2; ++h)
#pragma unroll
        for (int g = 0; g < kVectorSides; ++g)
          Step::mma(d[g], a_units[u][0], a_units[u][1], x_units[u][g], h);
  };
  int64_t k = k0 + warp * kWarpStep;
  if (aligned)
    for (; k + kWarpStep <= k1; k += kWarps * kWarpStep) warp_step(k, std::true_type{});
  for (; k < k1; k += kWarps * kWarpStep) warp_step(k, std::false_type{});
}

// A warp's sums d[g] of a 16-row tile (fragment rows quad and quad + 8, vectors
// g * 8 + 2 * quad_lane + {0, 1}) into its values: value c * kOutputs + row of vector c.
template <int kOutputs, int kVectorSides, class S>
__device__ __forceinline__ void store_fragment_sums(const S (&d)[kVectorSides][4], S *values) {
  const int lane = threadIdx.x % 32, quad = lane / 4, quad_lane = lane % 4;
#pragma unroll
  for (int g = 0; g < kVectorSides; ++g)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = quad + (r / 2) * 8, c = g * 8 + 2 * quad_lane + r % 2;
      values[c * kOutputs + row] = d[g][r];
    }
}

// Whether A's and x's element type (the same) has a tensor-core step, at compile time with the
// step's sum type: 16-bit (fp32 sums) or fp64.
template <class TA, class TX, class S>
inline constexpr bool kHasMmaStep =
    std::is_same_v<TA, TX> && std::is_same_v<typename MmaStep<TA>::Sum, S> &&
    (std::is_same_v<TA, __half> || std::is_same_v<TA, __nv_bfloat16> ||
     std::is_same_v<TA, double>);

}  // namespace xgemv::kernels
