// Every variant's kernels for fp32 A, x, y and scalars.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<
    TypeSet<float, float, float, float>>() noexcept;
}  // namespace xgemv
