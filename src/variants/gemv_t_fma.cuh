// op(A) = A^T with several right-hand sides on the CUDA cores, any element types (fp32 and
// fp64 run here; 16-bit A runs on the tensor cores, gemv_t_mma.cuh):
// y_c[j] = alpha * dot(A[:, j], x_c) + beta * y_c[j]. A warp owns kTFmaOutputs outputs and walks
// the reduction in 16-byte steps per lane, each step of A multiplied into every vector's
// accumulator, so A is read once for all vectors and each x load serves kOutputs columns. The
// block's warps take interleaved steps; grid.y splits the reduction when the outputs alone
// cannot fill the GPU.
#pragma once

#include "kernels/rhs_tile.cuh"

namespace xgemv {

// Outputs per warp: kOutputs x kMaxRhsPerPass accumulators fit the registers of 4 resident
// blocks for fp32 (64), and for fp64 (64 doubles) with half the outputs.
template <class S>
inline constexpr int kTFmaOutputs = sizeof(S) == 8 ? 2 : 4;

struct GemvTFma {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  // Residency the launch bounds ask for: 4 blocks (128 registers); the accumulators of 8 and 16
  // vectors would spill there, so 3 blocks (168) and 2 (255) for those instances.
  static constexpr int kBlocksPerSm = 4;
  // A split fills one wave and no more (as t_rowblock's, which was measured).
  static constexpr int64_t kSplitWaves = 1;
  static constexpr int blocks_per_sm(int vectors) {
    return vectors >= 16 ? 2 : vectors >= 8 ? 3 : kBlocksPerSm;
  }
  static constexpr int kUnroll = 2;  // 16-byte steps in flight per lane and output
  static constexpr VariantName kName = variant_name("t_fma", kernels::kMaxRhsPerPass);
  static constexpr VariantFamily kFamily = VariantFamily::kSeveralRhs;

  static bool implements(const GemvProblem &p) { return p.transposed(); }

  static int64_t outputs(const GemvProblem &p) {
    return p.types.scalar == ElementType::kF64 ? kTFmaOutputs<double> : kTFmaOutputs<float>;
  }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(p.n, outputs(p));
    const kernels::SplitPlan split = kernels::plan_split(
        tiles, /*batch: planned as one problem*/ 1, p.m,
        int64_t(32) * a_elements_per_16_bytes(p) * kUnroll * kWarps,
        outputs(p) * kernels::kMaxRhsPerPass, device.sm_count, kBlocksPerSm, kSplitWaves,
        element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  static bool suits(const GemvProblem &p, const DeviceLimits &device, LaunchPlan &plan) {
    plan = GemvTFma::plan(p, device);
    return true;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, const LaunchPlan &plan,
                            const LaunchContext &context);
};

namespace kernels {

// kVectors: the vectors this instance carries (the pass's count rounded up to a power of two).
template <class TA, class TX, class TY, class S, int kVectors>
__global__ void __launch_bounds__(GemvTFma::kThreads, GemvTFma::blocks_per_sm(kVectors))
    gemv_t_fma(const KernelArgs<S> args) {
  using Variant = GemvTFma;
  constexpr int kOutputs = kTFmaOutputs<S>;
  constexpr int kWarps = Variant::kWarps, kUnroll = Variant::kUnroll;
  constexpr int kElems = kElemsPer16B<TA>;
  constexpr int64_t kWarpStep = int64_t(32) * kElems * kUnroll;
  begin_kernel<false>();
  const GemvProblem &p = args.problem;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t j0 = int64_t(blockIdx.x) * kOutputs;
  const int64_t k0 = int64_t(blockIdx.y) * args.split.length;
  const int64_t k1 = min(p.m, k0 + args.split.length);
  __shared__ S warp_sums[kWarps][kOutputs * kMaxRhsPerPass];

  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;  // quick return, decided on the device

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = matrix_of<TA>(p, b);
    const TX *x = x_of<TX>(p, b);
    TY *y = y_of<TY>(p, b);
    S acc[kOutputs][kVectors] = {};
    if (alpha != S(0)) {
      const bool a_whole = vectors_aligned(a, p.a.ld, 16);
      const bool x_whole = p.x.inc == 1 && vectors_aligned(x, p.x.ld, int(sizeof(TX)) * kElems);
      for (int64_t k = k0 + warp * kWarpStep; k < k1; k += kWarps * kWarpStep) {
        const bool full = k + kWarpStep <= k1;
        TA a_run[kUnroll][kOutputs][kElems];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int o = 0; o < kOutputs; ++o) {
            const int64_t kk = k + (u * 32 + lane) * kElems, column = j0 + o;
            load_run<kElems, true>(a + min(column, p.n - 1) * p.a.ld + kk, 1,
                                   column < p.n ? k1 - kk : 0, full && a_whole, a_run[u][o]);
          }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t kk = k + (u * 32 + lane) * kElems;
#pragma unroll
          for (int c = 0; c < kVectors; ++c) {
            TX x_run[kElems];
            load_run<kElems, false>(x + min(int64_t(c), p.rhs_count - 1) * p.x.ld + kk * p.x.inc,
                                    p.x.inc, c < p.rhs_count ? k1 - kk : 0, full && x_whole,
                                    x_run);
#pragma unroll
            for (int o = 0; o < kOutputs; ++o)
#pragma unroll
              for (int e = 0; e < kElems; ++e)
                acc[o][c] += to_acc(a_run[u][o][e]) * to_acc(x_run[e]);
          }
        }
      }
    }
    // Lane sums to the warp's (a fixed butterfly), then lane 0 publishes them.
#pragma unroll
    for (int o = 0; o < kOutputs; ++o)
#pragma unroll
      for (int c = 0; c < kVectors; ++c)
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
          acc[o][c] += __shfl_xor_sync(0xffffffffu, acc[o][c], offset);
    for (int i = lane; i < kOutputs * kMaxRhsPerPass; i += 32) {
      const int c = i / kOutputs, o = i % kOutputs;
      S value = S(0);
#pragma unroll
      for (int cc = 0; cc < kVectors; ++cc)
#pragma unroll
        for (int oo = 0; oo < kOutputs; ++oo)
          if (cc == c && oo == o) value = acc[oo][cc];
      warp_sums[warp][i] = value;
    }
    finish_rhs_tile<kOutputs, kWarps, Variant::kThreads>(
        args, b * gridDim.x + blockIdx.x, warp_sums, y, j0, p.rhs_count, alpha, beta);
  }
}

}  // namespace kernels

template <class TA, class TX, class TY, class S>
cudaError_t GemvTFma::launch(const GemvProblem &problem, const LaunchPlan &plan,
                             const LaunchContext &context) {
  using kernels::gemv_t_fma;
  return for_each_rhs_launch<TA, TX, TY>(
      problem, plan, outputs(problem) * kernels::kMaxRhsPerPass, int(sizeof(S)),
      [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
        const auto kernel = kernels::kernel_for_vectors(pass.rhs_count, [](auto vectors) {
          return &gemv_t_fma<TA, TX, TY, S, decltype(vectors)::value>;
        });
        return kernels::launch_kernel(kernel, pass, pass_plan, context);
      });
}

}  // namespace xgemv
