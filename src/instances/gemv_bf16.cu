// Every variant's kernels for bf16 A, x, y with fp32 scalars.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<
    TypeSet<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float>>() noexcept;
}  // namespace xgemv
