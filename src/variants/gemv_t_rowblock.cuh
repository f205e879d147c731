// op(A) = A^T: y[j] = alpha * dot(A[:, j], x) + beta * y[j]. Column j of column-major A is
// contiguous, so this is the row-block design (row-major rows = our columns): a group of kGroup
// lanes owns one output and walks the reduction axis in 16-byte steps (column_dot.cuh), fp32
// (fp64 for fp64) register accumulator, shuffle reduction across the group, masked tails. A block
// owns kThreads / kGroup consecutive outputs; grid.y splits the reduction axis when the outputs
// alone cannot fill the GPU. Smaller groups pack several outputs into a warp for short
// reductions (wide op T).
#pragma once

#include "kernels/column_dot.cuh"
#include "kernels/kernel_args.cuh"

namespace xgemv {

template <int kGroup>
struct GemvTRowBlock {
  static_assert(kGroup >= 2 && kGroup <= 32 && (kGroup & (kGroup - 1)) == 0);
  static constexpr int kThreads = 256;
  static constexpr int kBlocksPerSm = 4;  // residency the launch bounds ask for (64 registers)
  static constexpr int kUnroll = 4;       // independent 16-byte loads in flight per lane
  static constexpr int kOutputs = kThreads / kGroup;
  static constexpr VariantName kName = variant_name("t_rowblock", kGroup);

  static bool implements(const GemvProblem &p) {
    return p.transposed() && element_bytes(p.types.a) == element_bytes(p.types.x);
  }

  static LaunchPlan plan(const GemvProblem &p, const DeviceLimits &device) {
    const int64_t tiles = ceil_div(p.n, kOutputs);
    const kernels::SplitPlan split = kernels::plan_split(
        tiles, p.batch_count, p.m, int64_t(kUnroll) * kGroup * a_elements_per_16_bytes(p),
        kOutputs, int64_t(device.sm_count) * kBlocksPerSm, element_bytes(p.types.scalar));
    return {dim3(unsigned(tiles), unsigned(split.count), grid_z(p.batch_count)), dim3(kThreads),
            split};
  }

  // As many lanes per output as still give each lane kUnroll 16-byte loads (the table lists
  // the groups largest first).
  static bool suits(const GemvProblem &p, const DeviceLimits &device, LaunchPlan &plan) {
    if (p.m / (int64_t(a_elements_per_16_bytes(p)) * kUnroll) < kGroup) return false;
    plan = GemvTRowBlock::plan(p, device);
    return true;
  }

  template <class TA, class TX, class TY, class S>
  static cudaError_t launch(const GemvProblem &problem, bool device_scalars,
                            const LaunchPlan &plan, const kernels::SplitWorkspace &workspace,
                            cudaStream_t stream);
};

namespace kernels {

template <class TA, class TX, class TY, class S, int kGroup>
__global__ void __launch_bounds__(GemvTRowBlock<kGroup>::kThreads,
                                  GemvTRowBlock<kGroup>::kBlocksPerSm)
    gemv_t_rowblock(const KernelArgs<S> args) {
  using Variant = GemvTRowBlock<kGroup>;
  constexpr int kOutputs = Variant::kOutputs;
  const GemvProblem &p = args.problem;
  const S alpha = args.scalars.alpha(), beta = args.scalars.beta();
  if (alpha == S(0) && beta == S(1)) return;  // quick return, decided on the device

  const int lane = threadIdx.x % kGroup;
  const int slot = threadIdx.x / kGroup;
  const int64_t j = int64_t(blockIdx.x) * kOutputs + slot;
  const bool has_output = j < p.n;
  const int split = blockIdx.y;
  const int64_t k0 = split * args.split.length;
  const int64_t k1 = min(p.m, k0 + args.split.length);
  __shared__ S block_dots[kOutputs];

  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = matrix_of<TA>(p, b);
    const TX *x = x_of<TX>(p, b);
    TY *y = y_of<TY>(p, b);
    S dot = S(0);
    if (alpha != S(0) && has_output) {
      // Columns of a misaligned A (odd lda, offset base) peel their first few elements so that
      // the rest still moves in 16-byte loads.
      const TA *column = a + j * p.a.ld;
      const int64_t head = min(int64_t(elements_to_alignment(column + k0)), k1 - k0);
      for (int64_t i = k0 + lane; i < k0 + head; i += kGroup)
        dot += to_acc(column[i]) * to_acc(x[i * p.x.inc]);
      const XAccess x_access = p.x.inc != 1 ? XAccess::kStrided
                               : is_aligned16(x + k0 + head) ? XAccess::kAligned
                                                              : XAccess::kShifted;
      dot += dot_column<kGroup, Variant::kUnroll, TA, TX, S>(column, x, p.x.inc, x_access,
                                                              k0 + head, k1, lane);
    }
#pragma unroll
    for (int offset = kGroup / 2; offset > 0; offset /= 2)
      dot += __shfl_xor_sync(0xffffffffu, dot, offset, kGroup);

    if (lane == 0) block_dots[slot] = dot;
    __syncthreads();
    const int64_t tile = b * gridDim.x + blockIdx.x;
    if (args.split.count == 1 ||
        combine_splits<kOutputs, Variant::kThreads>(args.workspace, tile, args.split.count, split,
                                                    block_dots)) {
      const int64_t jj = int64_t(blockIdx.x) * kOutputs + threadIdx.x;
      if (threadIdx.x < kOutputs && jj < p.n)
        store_output(y + jj * p.y.inc, block_dots[threadIdx.x], alpha, beta);
    }
    __syncthreads();  // block_dots is reused by the next batch item
  }
}

}  // namespace kernels

template <int kGroup>
template <class TA, class TX, class TY, class S>
cudaError_t GemvTRowBlock<kGroup>::launch(const GemvProblem &problem, bool device_scalars,
                                          const LaunchPlan &plan,
                                          const kernels::SplitWorkspace &workspace,
                                          cudaStream_t stream) {
  return kernels::launch_kernel(&kernels::gemv_t_rowblock<TA, TX, TY, S, kGroup>, plan, stream,
                                kernels::kernel_args<S>(problem, device_scalars, plan, workspace));
}

}  // namespace xgemv
