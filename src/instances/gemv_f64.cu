// Every variant's kernels for fp64 A, x, y and scalars.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<
    TypeSet<double, double, double, double>>() noexcept;
}  // namespace xgemv
