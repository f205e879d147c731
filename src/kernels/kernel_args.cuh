// What every GEMV kernel takes, by value, and the ordering every kernel keeps with the kernel
// before it on the stream (the launch itself: launch/launch_kernel.cuh).
#pragma once

#include "epilogue.cuh"
#include "operands.cuh"
#include "split_combine.cuh"
#include "launch/launch_kernel.cuh"

namespace xgemv::kernels {

template <class S>
struct KernelArgs {
  GemvProblem problem;
  Scalars<S> scalars;
  SplitPlan split;
  SplitWorkspace workspace;
};

// Lets the next kernel on the stream launch now (programmatic dependent launch): it runs only
// its own early part until it waits for this one to finish. A no-op without a dependent.
__device__ __forceinline__ void allow_successor_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Waits until the kernel before this one on the stream has finished and its writes are
// visible. Every kernel calls it before reading x, y, device scalars or the workspace (and A,
// unless early start allows A first). A no-op when the launch had no programmatic dependency.
__device__ __forceinline__ void wait_for_predecessor() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// The start of every kernel: the successor may launch, and unless kEarlyStart lets this kernel
// stream A first (it then waits itself, once its first A loads are in flight; only A may be
// read before that), it waits for its predecessor here.
template <bool kEarlyStart>
__device__ __forceinline__ void begin_kernel() {
  allow_successor_launch();
  if constexpr (!kEarlyStart) wait_for_predecessor();
}

// Runs item(b, a, x, y) for each batch item b of this block (grid.z strides over the batch) with
// its operands; for none where alpha and beta leave y unchanged (reference BLAS's quick return,
// decided on the device for device scalars). A kernel calls it last: that return ends the kernel.
// A body as a lambda may compile to other code than in the kernel's own loop (cicc optimizes the
// lambda before inlining it): the kernels where it did keep their loop written out.
template <class TA, class TX, class TY, class S, class Item>
__device__ __forceinline__ void for_each_batch_item(const GemvProblem &p, S alpha, S beta,
                                                    Item &&item) {
  if (leaves_y_unchanged(alpha, beta, p.bias)) return;
  for (int64_t b = blockIdx.z; b < p.batch_count; b += gridDim.z) {
    const TA *a = matrix_of<TA>(p, b);
    const TX *x = x_of<TX>(p, b);
    TY *y = y_of<TY>(p, b);
    item(b, a, x, y);
  }
}

// Host scalars are read here, at launch, as the BLAS contract reads them during the call. An
// empty reduction (launched only with a bias: y := beta*y + bias) runs with a host alpha of 0,
// so that no kernel reads A, x or a device alpha (alpha times an empty sum would still turn an
// infinite alpha into NaN).
template <class S>
KernelArgs<S> kernel_args(const GemvProblem &problem, const LaunchPlan &plan,
                          const LaunchContext &context) {
  const S *alpha = problem.x_length() == 0 ? nullptr : static_cast<const S *>(problem.alpha);
  const S *beta = static_cast<const S *>(problem.beta);
  const bool device = context.device_scalars;
  const Scalars<S> scalars{alpha != nullptr && !device ? *alpha : S(0), device ? S(0) : *beta,
                           device ? alpha : nullptr, device ? beta : nullptr};
  return {problem, scalars, plan.split, context.workspace};
}

// Launches `kernel` (which must call begin_kernel first) on the problem with the plan's grid.
// Variants that stream A early pass their kEarlyStart instance when context.early_start is set.
template <class S>
cudaError_t launch_kernel(void (*kernel)(KernelArgs<S>), const GemvProblem &problem,
                          const LaunchPlan &plan, const LaunchContext &context) {
  return xgemv::launch_kernel(kernel, kernel_args<S>(problem, plan, context), plan, context);
}

}  // namespace xgemv::kernels
