// Every variant's kernels for fp16 A, x with fp32 y and scalars.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<
    TypeSet<__half, __half, float, float>>() noexcept;
}  // namespace xgemv
