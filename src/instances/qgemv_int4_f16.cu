// The quantized variants' kernels for int4 codes with f16 activations, y in f16 or fp32.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<TypeSet<Int4Code, __half, __half, float>>() noexcept;
template const LaunchFunction *launch_functions<TypeSet<Int4Code, __half, float, float>>() noexcept;
}  // namespace xgemv
