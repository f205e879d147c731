// The public headers as a C++17 program sees them (built with -std=c++17 -Wall -Wextra -Werror
// -Wpedantic): C linkage, the CUDA 16-bit types, the element types' cudaDataType_t values, and a
// tiny run through the library.
#include <xgemv/xgemv.h>
#include <xgemv/xgemv_quant.h>

#include <library_types.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

static_assert(std::is_same_v<xgemv_half, __half>);
static_assert(std::is_same_v<xgemv_bfloat16, __nv_bfloat16>);
static_assert(std::is_pointer_v<xgemv_handle>);
static_assert(std::is_same_v<decltype(&xgemv_hgemv),
                             xgemv_status (*)(xgemv_handle, char, int64_t, int64_t, const float *,
                                              const __half *, int64_t, const __half *, int64_t,
                                              const float *, __half *, int64_t)>);
static_assert(std::is_same_v<decltype(&xgemv_bf16gemv_nrhs),
                             xgemv_status (*)(xgemv_handle, char, int64_t, int64_t, const float *,
                                              const __nv_bfloat16 *, int64_t,
                                              const __nv_bfloat16 *, int64_t, const float *,
                                              __nv_bfloat16 *, int64_t, int64_t)>);
static_assert(std::is_same_v<decltype(&xgemv_gemv_bias),
                             xgemv_status (*)(xgemv_handle, xgemv_datatype, char, int64_t, int64_t,
                                              const void *, const void *, int64_t, const void *,
                                              int64_t, const void *, void *, int64_t, int64_t,
                                              const void *)>);
static_assert(XGEMV_STATUS_INVALID_LDA == 6 && XGEMV_STATUS_INVALID_INCY == 11);
static_assert(XGEMV_STATUS_INVALID_LDX == 8 && XGEMV_STATUS_INVALID_LDY == 11 &&
              XGEMV_STATUS_INVALID_NRHS == 12);

// Quantized weights: the element types carry cudaDataType_t's values, the layout is plain data,
// and every entry point has the declared signature.
static_assert(int{XGEMV_R_32F} == int{CUDA_R_32F} && int{XGEMV_R_64F} == int{CUDA_R_64F} &&
              int{XGEMV_R_16F} == int{CUDA_R_16F} && int{XGEMV_R_16BF} == int{CUDA_R_16BF});
static_assert(std::is_trivially_copyable_v<xgemv_qweight_info> &&
              std::is_trivially_copyable_v<xgemv_qweight_layout>);
static_assert(std::is_pointer_v<xgemv_qweight>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_get_layout),
                             xgemv_status (*)(const xgemv_qweight_info *, xgemv_qweight_layout *)>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_create),
                             xgemv_status (*)(xgemv_qweight *, const xgemv_qweight_info *, void *)>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_destroy), xgemv_status (*)(xgemv_qweight)>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_get_info),
                             xgemv_status (*)(xgemv_qweight, xgemv_qweight_info *)>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_pack),
                             xgemv_status (*)(xgemv_handle, xgemv_qweight, const void *, int64_t,
                                              const void *, int64_t, const uint8_t *, int64_t,
                                              const int32_t *)>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_pack_gptq),
                             xgemv_status (*)(xgemv_handle, xgemv_qweight, const int32_t *,
                                              const int32_t *, const void *, const int32_t *,
                                              int)>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_pack_awq),
                             xgemv_status (*)(xgemv_handle, xgemv_qweight, const int32_t *,
                                              const int32_t *, const void *)>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_quantize),
                             xgemv_status (*)(xgemv_handle, xgemv_qweight, const void *, int64_t)>);
static_assert(std::is_same_v<decltype(&xgemv_qweight_dequantize),
                             xgemv_status (*)(xgemv_handle, xgemv_qweight, void *, int64_t,
                                              xgemv_datatype)>);
static_assert(std::is_same_v<decltype(&xgemv_qgemv),
                             xgemv_status (*)(xgemv_handle, const float *, xgemv_qweight,
                                              const void *, const float *, void *,
                                              xgemv_datatype)>);
static_assert(std::is_same_v<decltype(&xgemv_qgemv_nrhs),
                             xgemv_status (*)(xgemv_handle, const float *, xgemv_qweight,
                                              const void *, int64_t, const float *, void *,
                                              int64_t, xgemv_datatype, int64_t)>);
static_assert(std::is_same_v<decltype(&xgemv_qgemv_bias),
                             xgemv_status (*)(xgemv_handle, const float *, xgemv_qweight,
                                              const void *, int64_t, const float *, void *,
                                              int64_t, xgemv_datatype, int64_t, const void *)>);

int main() {
  const double one = 1.0;
  double y = 0.0;
  if (xgemv_dgemv_strided_batched(nullptr, 'N', -1, 1, &one, &y, 1, 0, &y, 1, 0, &one, &y, 1, 0,
                                  1) != XGEMV_STATUS_INVALID_M)
    return 1;
  if (xgemv_dgemv_nrhs(nullptr, 'N', 1, 1, &one, &y, 1, &y, 1, &one, &y, 1, -1) !=
      XGEMV_STATUS_INVALID_NRHS)
    return 2;
  if (xgemv_gemv_bias(nullptr, XGEMV_R_64F, 'N', 1, 1, &one, &y, 1, &y, 1, &one, &y, 1, -1, &y) !=
      XGEMV_STATUS_INVALID_NRHS)
    return 6;
  if (std::strlen(xgemv_version_string()) == 0) return 3;
  const xgemv_qweight_info info = {XGEMV_QFORMAT_FP8_E4M3_BLOCK, XGEMV_R_16F, XGEMV_R_32F, 1, 1,
                                   0, 0, 0};
  xgemv_qweight_layout layout{};
  if (xgemv_qweight_get_layout(&info, &layout) != XGEMV_STATUS_SUCCESS || layout.k_blocks != 1)
    return 4;
  if (xgemv_qgemv_nrhs(nullptr, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, XGEMV_R_32F,
                       1) != XGEMV_STATUS_NULL_POINTER)
    return 5;
  std::printf("C++17: xgemv %s, %s\n", xgemv_version_string(),
              xgemv_status_string(XGEMV_STATUS_INVALID_M));
  return 0;
}
