/* The public headers as a C99 program sees them (built with -std=c99 -Wall -Wextra -Werror):
 * every declaration usable, and a tiny run through the library. xgemv_quant.h includes xgemv.h. */
#include <xgemv/xgemv_quant.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  /* Every entry point, by address: each declaration must be valid C. */
  typedef void (*any_function)(void);
  const any_function entry_points[] = {
      (any_function)xgemv_create,
      (any_function)xgemv_destroy,
      (any_function)xgemv_set_stream,
      (any_function)xgemv_get_stream,
      (any_function)xgemv_set_pointer_mode,
      (any_function)xgemv_get_pointer_mode,
      (any_function)xgemv_set_early_start,
      (any_function)xgemv_get_early_start,
      (any_function)xgemv_set_batch_invariant,
      (any_function)xgemv_get_batch_invariant,
      (any_function)xgemv_status_string,
      (any_function)xgemv_status_argument,
      (any_function)xgemv_last_cuda_error,
      (any_function)xgemv_cuda_error_string,
      (any_function)xgemv_version_string,
      (any_function)xgemv_version,
      (any_function)xgemv_sgemv,
      (any_function)xgemv_dgemv,
      (any_function)xgemv_hgemv,
      (any_function)xgemv_bf16gemv,
      (any_function)xgemv_sgemv_strided_batched,
      (any_function)xgemv_dgemv_strided_batched,
      (any_function)xgemv_hgemv_strided_batched,
      (any_function)xgemv_bf16gemv_strided_batched,
      (any_function)xgemv_sgemv_nrhs,
      (any_function)xgemv_dgemv_nrhs,
      (any_function)xgemv_hgemv_nrhs,
      (any_function)xgemv_bf16gemv_nrhs,
      (any_function)xgemv_gemv_bias,
      (any_function)xgemv_kernel_variant_count,
      (any_function)xgemv_kernel_variant_name,
      (any_function)xgemv_set_kernel_variant,
      (any_function)xgemv_get_last_kernel_variant,
      (any_function)xgemv_qweight_get_layout,
      (any_function)xgemv_qweight_create,
      (any_function)xgemv_qweight_destroy,
      (any_function)xgemv_qweight_get_info,
      (any_function)xgemv_qweight_pack,
      (any_function)xgemv_qweight_pack_gptq,
      (any_function)xgemv_qweight_pack_awq,
      (any_function)xgemv_qweight_quantize,
      (any_function)xgemv_qweight_dequantize,
      (any_function)xgemv_qgemv,
      (any_function)xgemv_qgemv_nrhs,
      (any_function)xgemv_qgemv_bias,
  };
  char expected_version[32];
  const float one = 1.0f;
  const double one_double = 1.0;
  float y = 0.0f;
  double y_double = 0.0;
  int enabled = 0;
  const xgemv_half *half_data = NULL; /* the 16-bit types are opaque in C */
  const xgemv_bfloat16 *bf16_data = NULL;
  xgemv_handle handle = NULL;
  xgemv_pointer_mode mode = XGEMV_POINTER_MODE_DEVICE;
  /* The header's own example of a weight's info; storage at an address never read. */
  xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16BF, XGEMV_R_16F, 32, 256, 128, 1, 0};
  xgemv_qweight_layout layout;
  xgemv_qweight weight = NULL;
  void *storage = (void *)(uintptr_t)0x100000;
  size_t i;

  for (i = 0; i < sizeof entry_points / sizeof entry_points[0]; ++i)
    if (entry_points[i] == NULL) return 1;
  snprintf(expected_version, sizeof expected_version, "%d.%d.%d", XGEMV_VERSION_MAJOR,
           XGEMV_VERSION_MINOR, XGEMV_VERSION_PATCH);
  if (strcmp(xgemv_version_string(), expected_version) != 0) return 2;
  if (xgemv_sgemv(handle, 'X', 1, 1, &one, &y, 1, &y, 1, &one, &y, 1) != XGEMV_STATUS_INVALID_TRANS)
    return 3;
  if (xgemv_hgemv(handle, 'N', 1, 1, &one, half_data, 1, half_data, 0, &one, NULL, 1) !=
      XGEMV_STATUS_INVALID_INCX)
    return 4;
  if (xgemv_bf16gemv(handle, 'N', 1, 1, &one, bf16_data, 1, bf16_data, 1, &one, NULL, 0) !=
      XGEMV_STATUS_INVALID_INCY)
    return 5;
  if (xgemv_get_pointer_mode(handle, &mode) != XGEMV_STATUS_INVALID_HANDLE) return 6;
  /* The few-right-hand-side calls: ldx 8, ldy 11, nrhs 12. */
  if (xgemv_sgemv_nrhs(handle, 'N', 2, 3, &one, &y, 2, &y, 2, &one, &y, 2, 1) !=
      XGEMV_STATUS_INVALID_LDX)
    return 7;
  if (xgemv_dgemv_nrhs(handle, 'T', 2, 3, &one_double, &y_double, 2, &y_double, 2, &one_double,
                       &y_double, 2, 1) != XGEMV_STATUS_INVALID_LDY)
    return 8;
  if (xgemv_hgemv_nrhs(handle, 'N', 1, 1, &one, half_data, 1, half_data, 1, &one, NULL, 1, -1) !=
      XGEMV_STATUS_INVALID_NRHS)
    return 9;
  if (xgemv_status_argument(XGEMV_STATUS_INVALID_NRHS) != 12) return 10;
  if (xgemv_bf16gemv_nrhs(handle, 'C', 1, 1, &one, bf16_data, 1, bf16_data, 1, &one, NULL, 1, 0) !=
      XGEMV_STATUS_INVALID_HANDLE)
    return 11;
  if (xgemv_get_batch_invariant(handle, &enabled) != XGEMV_STATUS_INVALID_HANDLE) return 12;
  /* The bias call: its element type first, then the nrhs calls' checks. */
  if (xgemv_gemv_bias(handle, (xgemv_datatype)3, 'X', 1, 1, &one, &y, 1, &y, 1, &one, &y, 1, 1,
                      &y) != XGEMV_STATUS_INVALID_VALUE)
    return 18;
  if (xgemv_gemv_bias(handle, XGEMV_R_64F, 'T', 2, 3, &one_double, &y_double, 2, &y_double, 2,
                      &one_double, &y_double, 2, 1, &y_double) != XGEMV_STATUS_INVALID_LDY)
    return 19;
  if (xgemv_gemv_bias(handle, XGEMV_R_16BF, 'N', 1, 1, &one, bf16_data, 1, bf16_data, 1, &one,
                      NULL, 1, 1, NULL) != XGEMV_STATUS_INVALID_HANDLE)
    return 20;
  /* Quantized weights: 2 tiles x 4 k-blocks of 512 bytes of codes; the GEMV's own checks (ldx 8)
   * before the handle's. */
  if (xgemv_qweight_get_layout(&info, &layout) != XGEMV_STATUS_SUCCESS ||
      layout.codes_bytes != 4096 || layout.row_tiles != 2)
    return 13;
  if (xgemv_qweight_create(&weight, &info, storage) != XGEMV_STATUS_SUCCESS) return 14;
  if (xgemv_qgemv_nrhs(handle, &one, weight, NULL, 255, &one, NULL, 32, XGEMV_R_32F, 1) !=
      XGEMV_STATUS_INVALID_LDX)
    return 15;
  if (xgemv_qgemv(handle, &one, weight, NULL, &one, NULL, XGEMV_R_16BF) !=
      XGEMV_STATUS_INVALID_HANDLE)
    return 16;
  if (xgemv_qgemv_bias(handle, &one, weight, NULL, 256, &one, NULL, 31, XGEMV_R_32F, 1, NULL) !=
      XGEMV_STATUS_INVALID_LDY)
    return 21;
  if (xgemv_qweight_destroy(weight) != XGEMV_STATUS_SUCCESS) return 17;
  printf("C99: xgemv %s, %s\n", xgemv_version_string(),
         xgemv_status_string(XGEMV_STATUS_INVALID_TRANS));
  return 0;
}
