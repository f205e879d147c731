// The C ABI of xgemv_quant.h's conversions: the checks of each entry point, in the order its
// documentation gives (first failure wins), then its launcher (convert.cu) on the handle's
// stream. Nothing here allocates, synchronises or throws.
#include <cstdint>

#include "context.hpp"
#include "core.hpp"
#include "quant/convert.hpp"
#include "quant/qweight.hpp"

namespace {

using xgemv::quant::CheckpointTensors;
using xgemv::quant::PlainTensors;

// A tensor of `rows` rows of leading dimension ld reaching `columns` columns: ld >= columns,
// and rows x ld within 2^60 elements (so that no offset into it overflows).
constexpr int64_t kMaxTensorElements = int64_t(1) << 60;
bool leading_dimension_ok(int64_t ld, int64_t columns, int64_t rows) {
  return ld >= columns && ld <= kMaxTensorElements / rows;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

size_t type_bytes(xgemv_datatype type) { return type == XGEMV_R_32F ? 4 : 2; }

// Whether p (NULL counts as aligned) is a multiple of `bytes`.
bool aligned(const void *p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

xgemv_status cuda_failure(cudaError_t error) {
  xgemv::set_last_cuda_error(error);
  return XGEMV_STATUS_CUDA_ERROR;
}

// The current device must be the handle's; then the launch, on the handle's stream.
template <class Launch>
xgemv_status on_handle_device(xgemv_handle handle, Launch &&launch) noexcept {
  if (const xgemv_status status = xgemv::check_handle_device(handle);
      status != XGEMV_STATUS_SUCCESS)
    return status;
  if (const cudaError_t error = launch(handle->stream); error != cudaSuccess)
    return cuda_failure(error);
  return XGEMV_STATUS_SUCCESS;
}

// Scales per row of xgemv_qweight_pack's scales, and its rows.
int64_t plain_scale_columns(const xgemv_qweight_info &info) {
  switch (info.format) {
    case XGEMV_QFORMAT_INT4: return info.inputs / info.group_size;
    case XGEMV_QFORMAT_FP8_E4M3_BLOCK: return ceil_div(info.inputs, 128);
    default: return 1;
  }
}
int64_t plain_scale_rows(const xgemv_qweight_info &info) {
  return info.format == XGEMV_QFORMAT_FP8_E4M3_BLOCK ? ceil_div(info.outputs, 128)
                                                     : info.outputs;
}

}  // namespace

extern "C" {

xgemv_status xgemv_qweight_pack(xgemv_handle handle, xgemv_qweight weight, const void *codes,
                                int64_t ldc, const void *scales, int64_t lds,
                                const uint8_t *zeros, int64_t ldz,
                                const int32_t *permutation) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (weight == nullptr || codes == nullptr || scales == nullptr) return XGEMV_STATUS_NULL_POINTER;
  const xgemv_qweight_info &info = weight->info;
  // A part the weight has needs its tensor; one it does not have takes none.
  if ((info.zero_points != 0 && zeros == nullptr) || (info.permuted != 0 && permutation == nullptr))
    return XGEMV_STATUS_NULL_POINTER;
  if (!leading_dimension_ok(ldc, info.inputs, info.outputs) ||
      !leading_dimension_ok(lds, plain_scale_columns(info), plain_scale_rows(info)) ||
      (zeros != nullptr) != (info.zero_points != 0) ||
      (zeros != nullptr && !leading_dimension_ok(ldz, info.inputs / info.group_size,
                                                 info.outputs)) ||
      (permutation != nullptr) != (info.permuted != 0))
    return XGEMV_STATUS_INVALID_VALUE;
  if (!aligned(scales, type_bytes(info.scale_type)) || !aligned(permutation, 4))
    return XGEMV_STATUS_MISALIGNED;
  const PlainTensors tensors{codes, ldc, scales, lds, zeros, ldz, permutation};
  return on_handle_device(handle, [&](cudaStream_t stream) {
    return xgemv::quant::launch_pack(*weight, tensors, stream);
  });
}

xgemv_status xgemv_qweight_pack_gptq(xgemv_handle handle, xgemv_qweight weight,
                                     const int32_t *qweight, const int32_t *qzeros,
                                     const void *scales, const int32_t *g_idx,
                                     int zeros_minus_one) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (weight == nullptr || qweight == nullptr || scales == nullptr)
    return XGEMV_STATUS_NULL_POINTER;
  const xgemv_qweight_info &info = weight->info;
  if ((info.zero_points != 0 && qzeros == nullptr) || (info.permuted != 0 && g_idx == nullptr))
    return XGEMV_STATUS_NULL_POINTER;
  if ((qzeros != nullptr) != (info.zero_points != 0) ||
      (zeros_minus_one != 0 && zeros_minus_one != 1))
    return XGEMV_STATUS_INVALID_VALUE;
  if (info.format != XGEMV_QFORMAT_INT4) return XGEMV_STATUS_INVALID_QFORMAT;
  if (info.outputs % 8 != 0 || info.inputs % 8 != 0) return XGEMV_STATUS_INVALID_QSHAPE;
  if ((g_idx != nullptr) != (info.permuted != 0)) return XGEMV_STATUS_INVALID_VALUE;
  if (!aligned(qweight, 4) || !aligned(qzeros, 4) || !aligned(g_idx, 4) ||
      !aligned(scales, type_bytes(info.scale_type)))
    return XGEMV_STATUS_MISALIGNED;
  const CheckpointTensors tensors{qweight, qzeros, scales, g_idx, zeros_minus_one == 1};
  return on_handle_device(handle, [&](cudaStream_t stream) {
    return xgemv::quant::launch_pack_gptq(*weight, tensors, stream);
  });
}

xgemv_status xgemv_qweight_pack_awq(xgemv_handle handle, xgemv_qweight weight,
                                    const int32_t *qweight, const int32_t *qzeros,
                                    const void *scales) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (weight == nullptr || qweight == nullptr || qzeros == nullptr || scales == nullptr)
    return XGEMV_STATUS_NULL_POINTER;
  const xgemv_qweight_info &info = weight->info;
  if (info.format != XGEMV_QFORMAT_INT4 || info.zero_points == 0)
    return XGEMV_STATUS_INVALID_QFORMAT;
  if (info.outputs % 8 != 0) return XGEMV_STATUS_INVALID_QSHAPE;
  if (info.permuted != 0) return XGEMV_STATUS_INVALID_VALUE;  // AWQ gives no permutation
  if (!aligned(qweight, 4) || !aligned(qzeros, 4) || !aligned(scales, type_bytes(info.scale_type)))
    return XGEMV_STATUS_MISALIGNED;
  const CheckpointTensors tensors{qweight, qzeros, scales, nullptr, false};
  return on_handle_device(handle, [&](cudaStream_t stream) {
    return xgemv::quant::launch_pack_awq(*weight, tensors, stream);
  });
}

xgemv_status xgemv_qweight_quantize(xgemv_handle handle, xgemv_qweight weight,
                                    const void *weights, int64_t ldw) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (weight == nullptr || weights == nullptr) return XGEMV_STATUS_NULL_POINTER;
  const xgemv_qweight_info &info = weight->info;
  if (!leading_dimension_ok(ldw, info.inputs, info.outputs) || info.permuted != 0)
    return XGEMV_STATUS_INVALID_VALUE;
  if (!aligned(weights, type_bytes(info.activation_type))) return XGEMV_STATUS_MISALIGNED;
  return on_handle_device(handle, [&](cudaStream_t stream) {
    return xgemv::quant::launch_quantize(*weight, weights, ldw, stream);
  });
}

xgemv_status xgemv_qweight_dequantize(xgemv_handle handle, xgemv_qweight weight, void *out,
                                      int64_t ldw, xgemv_datatype out_type) {
  if (handle == nullptr) return XGEMV_STATUS_INVALID_HANDLE;
  if (weight == nullptr || out == nullptr) return XGEMV_STATUS_NULL_POINTER;
  const xgemv_qweight_info &info = weight->info;
  if (!leading_dimension_ok(ldw, info.inputs, info.outputs)) return XGEMV_STATUS_INVALID_VALUE;
  if (out_type != XGEMV_R_32F && out_type != XGEMV_R_16F && out_type != XGEMV_R_16BF)
    return XGEMV_STATUS_INVALID_QFORMAT;
  if (!aligned(out, type_bytes(out_type))) return XGEMV_STATUS_MISALIGNED;
  return on_handle_device(handle, [&](cudaStream_t stream) {
    return xgemv::quant::launch_dequantize(*weight, out, ldw, out_type, stream);
  });
}

}  // extern "C"
