// What every GEMV kernel takes, by value, and the one place kernels are launched.
#pragma once

#include "epilogue.cuh"
#include "operands.cuh"
#include "split_combine.cuh"
#include "variants/variant.hpp"

namespace xgemv::kernels {

template <class S>
struct KernelArgs {
  GemvProblem problem;
  Scalars<S> scalars;
  SplitPlan split;
  SplitWorkspace workspace;
};

// Host scalars are read here, at launch, as the BLAS contract reads them during the call.
template <class S>
KernelArgs<S> kernel_args(const GemvProblem &problem, bool device_scalars, const LaunchPlan &plan,
                          const SplitWorkspace &workspace) {
  const S *alpha = static_cast<const S *>(problem.alpha);
  const S *beta = static_cast<const S *>(problem.beta);
  Scalars<S> scalars = device_scalars ? Scalars<S>{S(0), S(0), alpha, beta}
                                      : Scalars<S>{*alpha, *beta, nullptr, nullptr};
  return {problem, scalars, plan.split, workspace};
}

template <class S>
cudaError_t launch_kernel(void (*kernel)(KernelArgs<S>), const LaunchPlan &plan,
                          cudaStream_t stream, const KernelArgs<S> &args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = plan.grid;
  config.blockDim = plan.block;
  config.stream = stream;
  return cudaLaunchKernelEx(&config, kernel, args);
}

}  // namespace xgemv::kernels
