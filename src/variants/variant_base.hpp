// What the variants' descriptors share (variant.hpp's KernelVariant): the family and the
// automatic choice, and the launch over passes of the tensor-core several-vector variants.
#pragma once

#include <type_traits>

#include "kernels/kernel_args.cuh"
#include "kernels/mma_step.cuh"
#include "launch/rhs_passes.hpp"
#include "variants/variant.hpp"

namespace xgemv {

// The base of variant `Derived` of family kVariantFamily, whose A is the codes of quantized
// weights where kCodesA says so (its kernels are built for the quantized element-type sets, the
// others' for the dense ones). The automatic choice (suits) takes it where
// Derived::prefers(problem, device) holds, cheap shape tests that run on every call (every
// problem it implements unless Derived says otherwise), with Derived::plan.
template <class Derived, VariantFamily kVariantFamily,
          bool kCodesA = kVariantFamily == VariantFamily::kQuantized>
struct VariantBase {
  static constexpr VariantFamily kFamily = kVariantFamily;
  static constexpr bool kReadsCodes = kCodesA;

  static bool prefers(const GemvProblem &, const DeviceLimits &) { return true; }

  static bool suits(const GemvProblem &p, const DeviceLimits &device, LaunchPlan &plan) {
    if (!Derived::prefers(p, device)) return false;
    plan = Derived::plan(p, device);
    return true;
  }
};

// The types the tensor-core several-vector variants implement (kernels::kHasMmaStep): 16-bit
// (fp32 sums) or fp64 A, and x of the same type.
inline bool has_mma_step(const GemvProblem &p) {
  const bool mma_type = p.types.a == ElementType::kF16 || p.types.a == ElementType::kBF16 ||
                        p.types.a == ElementType::kF64;
  return mma_type && p.types.x == p.types.a;
}

// Launches a tensor-core several-vector kernel over the passes of the problem (tiles of
// tile_values sums): kernel_of(sides) is its instance for 1 or 2 sides of 8 vectors, picked by
// each pass's count. Types without a tensor-core step are never chosen (implements).
template <class TA, class TX, class TY, class S, class KernelOf>
cudaError_t launch_mma_passes(const GemvProblem &problem, const LaunchPlan &plan,
                              const LaunchContext &context, int64_t tile_values,
                              KernelOf &&kernel_of) {
  if constexpr (kernels::kHasMmaStep<TA, TX, S>) {
    return for_each_rhs_launch<TA, TX, TY>(
        problem, plan, tile_values, int(sizeof(S)),
        [&](const GemvProblem &pass, const LaunchPlan &pass_plan) {
          return kernels::launch_kernel(pass.rhs_count <= 8
                                            ? kernel_of(std::integral_constant<int, 1>{})
                                            : kernel_of(std::integral_constant<int, 2>{}),
                                        pass, pass_plan, context);
        });
  } else {
    return cudaErrorNotSupported;
  }
}

}  // namespace xgemv
