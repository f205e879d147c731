// The quantized variants' kernels for int8 codes with bf16 activations, y in bf16 or fp32.
#include "variants/launch_functions.cuh"

namespace xgemv {
template const LaunchFunction *launch_functions<TypeSet<Int8Code, __nv_bfloat16, __nv_bfloat16, float>>() noexcept;
template const LaunchFunction *launch_functions<TypeSet<Int8Code, __nv_bfloat16, float, float>>() noexcept;
}  // namespace xgemv
