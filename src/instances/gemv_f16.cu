// Every variant's kernels for fp16 A, x, y with fp32 scalars.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<
    TypeSet<__half, __half, __half, float>>() noexcept;
}  // namespace xgemv
