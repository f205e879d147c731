// The one place kernels are launched: a plan's grid on the context's stream, as a programmatic
// dependent launch where the device has it, with the opt-in a large dynamic shared memory needs.
#pragma once

#include "launch/launch_plan.hpp"

namespace xgemv {

// Launches `kernel` with `args` (its one parameter, by value) on the plan's grid. The kernel
// must begin by letting its successor launch and, before it reads anything its predecessor may
// write, by waiting for it (kernels/kernel_args.cuh, begin_kernel).
template <class Args>
cudaError_t launch_kernel(void (*kernel)(Args), const Args &args, const LaunchPlan &plan,
                          const LaunchContext &context) {
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = plan.grid;
  config.blockDim = plan.block;
  config.dynamicSmemBytes = plan.shared_bytes;
  config.stream = context.stream;
  config.attrs = &attribute;
  config.numAttrs = context.programmatic ? 1 : 0;
  // Past 48 KiB with its static shared memory (at most kStaticSharedBytesBound) a kernel must
  // opt in, on the current device; not a stream operation, so also inside a graph capture.
  if (plan.shared_bytes + kStaticSharedBytesBound > kDefaultBlockSharedBytes)
    if (const cudaError_t error = cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(plan.shared_bytes));
        error != cudaSuccess)
      return error;
  return cudaLaunchKernelEx(&config, kernel, args);
}

}  // namespace xgemv
