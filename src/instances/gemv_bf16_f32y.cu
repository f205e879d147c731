// Every variant's kernels for bf16 A, x with fp32 y and scalars.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<
    TypeSet<__nv_bfloat16, __nv_bfloat16, float, float>>() noexcept;
}  // namespace xgemv
