// The quantized variants' kernels for int8 codes with f16 activations, y in f16 or fp32.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<TypeSet<Int8Code, __half, __half, float>>() noexcept;
template const LaunchFunction *launch_functions<TypeSet<Int8Code, __half, float, float>>() noexcept;
}  // namespace xgemv
