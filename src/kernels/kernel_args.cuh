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
