#include "dispatch.hpp"

#include <cstring>

#include "core.hpp"
#include "variants/variant_table.cuh"

namespace xgemv {
namespace {

constexpr const KernelVariant *kTable = KernelVariants::kDescriptors;

// Quantized weights run on the quantized family; several right-hand sides, and every call of a
// batch-invariant handle, on the family that computes several at once; other calls on the
// single-vector family.
VariantFamily family_of(const GemvProblem &problem, bool batch_invariant) {
  if (problem.routed()) return VariantFamily::kRouted;
  if (is_quantized(problem.types.a)) return VariantFamily::kQuantized;
  if (problem.rhs_count != 1 || problem.invariant_columns || batch_invariant)
    return VariantFamily::kSeveralRhs;
  return VariantFamily::kSingleVector;
}

int choose_variant(const GemvProblem &problem, VariantFamily family, const DeviceLimits &device,
                   LaunchPlan &plan) {
  int fallback = -1;
  for (int v = 0; v < KernelVariants::kCount; ++v) {
    if (kTable[v].family != family || !kTable[v].implements(problem)) continue;
    if (kTable[v].suits(problem, device, plan)) return v;
    fallback = v;
  }
  if (fallback >= 0) plan = kTable[fallback].plan(problem, device);
  return fallback;
}

}  // namespace

int kernel_variant_count() noexcept { return KernelVariants::kCount; }

const char *kernel_variant_name(int index) noexcept {
  return index >= 0 && index < KernelVariants::kCount ? kTable[index].name : nullptr;
}

int find_kernel_variant(const char *name) noexcept {
  for (int v = 0; v < KernelVariants::kCount; ++v)
    if (std::strcmp(kTable[v].name, name) == 0) return v;
  return -1;
}

xgemv_status launch_variant(xgemv_context &handle, const GemvProblem &problem,
                            cudaStream_t stream, bool device_scalars) noexcept {
  const LaunchFunction *launches = is_quantized(problem.types.a)
                                        ? launch_functions_for(problem.types, QuantizedTypeSets{})
                                        : launch_functions_for(problem.types, ServedTypeSets{});
  if (launches == nullptr) return XGEMV_STATUS_NOT_SUPPORTED;
  LaunchPlan plan;
  int variant = handle.forced_variant;
  const VariantFamily family = family_of(problem, handle.batch_invariant);
  if (variant >= 0) {
    // Routed calls only on routed variants and quantized weights only on quantized ones, and
    // back; a single vector on any dense variant (what the test asked for overrides the
    // handle's mode), several on their family.
    const VariantFamily forced = kTable[variant].family;
    const bool serves =
        (forced == VariantFamily::kRouted) == (family == VariantFamily::kRouted) &&
        (forced == VariantFamily::kQuantized) == (family == VariantFamily::kQuantized) &&
        (problem.rhs_count == 1 || forced != VariantFamily::kSingleVector);
    if (!serves || !kTable[variant].implements(problem)) return XGEMV_STATUS_NOT_SUPPORTED;
    plan = kTable[variant].plan(problem, handle.limits);
  } else {
    variant = choose_variant(problem, family, handle.limits, plan);
    if (variant < 0) return XGEMV_STATUS_NOT_SUPPORTED;
  }
  const LaunchContext context{stream, handle.workspace, device_scalars,
                              handle.programmatic_launch, handle.early_start};
  if (const cudaError_t error = launches[variant](problem, plan, context); error != cudaSuccess) {
    set_last_cuda_error(error);
    return XGEMV_STATUS_CUDA_ERROR;
  }
  handle.last_variant = variant;
  return XGEMV_STATUS_SUCCESS;
}

}  // namespace xgemv
