/*
 * xgemv_quant.h — GEMV with quantized weights (weight-only quantization): 4-bit integers with a
 * scale per group of inputs, 8-bit integers or fp8 e4m3 with a scale per output, fp8 e4m3 with a
 * scale per 128 x 128 block. Activations are fp16 or bf16; accumulation is fp32.
 *
 *   Y := alpha * W * X + beta * Y      (W: outputs x inputs, X: inputs x nrhs, Y: outputs x nrhs)
 *
 * This is the `x @ W.T` of a decoder's linear layers (PyTorch's `W` is outputs x inputs,
 * row-major), which is BLAS op T of the column-major inputs x outputs matrix. Only that
 * orientation is served: there is no op N (y := W^T x) for quantized weights.
 *
 * ## The value of a weight
 *
 * Every weight is a code q, a scale s and, for 4-bit codes with zero points, an integer zero
 * point z. Its value is the real number
 *
 *     w = v * s,   v = q - 8 (INT4, symmetric) | q - z (INT4 with zero points)
 *                  | q (INT8, q in -128..127) | the e4m3 number q encodes (FP8_E4M3*)
 *
 * computed exactly (v is an integer in -15..15, -128..127 or an e4m3 value, all exact in fp16 and
 * in bf16; for fp16 and bf16 scales v * s is exact in fp32). An e4m3 code S.EEEE.MMM is
 * (-1)^S * 2^(E-7) * 1.MMM (E > 0), (-1)^S * 2^-6 * 0.MMM (E == 0), NaN for S.1111.111; there is
 * no infinity (the "fn" variant of e4m3, max 448).
 *
 * Which scale a weight uses (W[o][k]: output o, input k):
 *   XGEMV_QFORMAT_INT4           s = S[o][k / group_size] (group_size 32, 64 or 128, dividing
 *                                `inputs`), z = Z[o][k / group_size] in 0..15 with zero points;
 *   XGEMV_QFORMAT_INT8           s = S[o];
 *   XGEMV_QFORMAT_FP8_E4M3       s = S[o];
 *   XGEMV_QFORMAT_FP8_E4M3_BLOCK s = S[o / 128][k / 128] (the layout of published fp8
 *                                checkpoints' `weight_scale_inv`; any outputs and inputs).
 * With a permutation (GPTQ act-order) input k of the packed matrix is input P[k] of x, and the
 * groups are contiguous in the packed order (see xgemv_qweight_pack_gptq).
 *
 * ## What a call computes
 *
 * For every output o and vector c: the products v * x (exact) are summed in fp32 in runs of
 * inputs that lie within one scale group, each run's sum is multiplied by its scale in fp32 and
 * the runs are accumulated in fp32, then y := alpha * sum + beta * y with the BLAS rules of xgemv.h (beta == 0 never reads y, alpha == 0
 * reads neither W nor x, host or device scalars, NaN and Inf propagate). The order of every sum
 * depends on the weight's shape and format only: results are bitwise reproducible, and column
 * c of Y has the same bits whatever nrhs is and whatever the other columns hold. With a bias
 * (xgemv_qgemv_bias) y := alpha * sum + beta * y + bias, the bias added last, in fp32.
 *
 * ## The packed layout (xgemv's own)
 *
 * A weight lives in one device buffer, its storage (xgemv_qweight_get_layout gives its size and
 * the offsets of its four parts; 256-byte aligned, as cudaMalloc returns). The conversion
 * functions below write it from checkpoint tensors; the layout is defined here so that it can
 * be checked and written by others, but it may change between minor versions of xgemv.
 *
 *  - Codes. Outputs come in row tiles of 16 (T = ceil(outputs / 16) tiles, the last padded) and
 *    inputs in k-blocks of KB = 64 (4-bit codes) or 32 (8-bit codes) (KB_count =
 *    ceil(inputs / KB), the last padded). Tile t, k-block b is 512 contiguous bytes at offset
 *    (t * KB_count + b) * 512 of the codes part: 32 slots of 16 bytes, slot l (l = 0..31,
 *    g = l / 4, c = l % 4) holding outputs o0 = 16 t + g and o1 = o0 + 8 as four little-endian
 *    32-bit words u_s, s = 0..3.
 *      4-bit: word u_s holds inputs k = KB * b + 16 s + 4 c + e (e = 0..3) of o0 and o1; the
 *      nibble at bits 4j..4j+3 of u_s is, for j = 0..7: o0 e0, o1 e0, o0 e2, o1 e2, o0 e1,
 *      o1 e1, o0 e3, o1 e3 (the pairs (j, j + 4) are the 16-bit halves of one mma fragment
 *      register).
 *      8-bit: words u_{2s} and u_{2s+1} (s = 0, 1) hold inputs k = KB * b + 16 s + 4 c + e of o0
 *      and of o1 respectively, byte e of the word for input e.
 *    Padding codes encode v = 0 (4-bit: q = 8, or q = z; 8-bit: 0).
 *  - Scales, of scale_type: S_p[(t * G + j) * 16 + r] is the scale of output 16 t + r for
 *    packed group j, G = ceil(KB_count * KB / group) (group: group_size for INT4, 128 for
 *    FP8_E4M3_BLOCK, KB_count * KB (one group) for the per-output formats). Padding scales are 0.
 *  - Zero points (INT4 with zero points only): byte (t * G + j) * 8 + r / 2, bits 4 (r % 2) ..
 *    4 (r % 2) + 3, is z of output 16 t + r, packed group j. Padding zero points are 8.
 *  - Permutation (permuted weights only): int32 P[k], k < inputs: packed input k is x[P[k]].
 *
 * ## Use
 *
 *   xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16BF, XGEMV_R_16F, out, in, 128, 1, 0};
 *   xgemv_qweight_layout layout;
 *   xgemv_qweight_get_layout(&info, &layout);
 *   cudaMalloc(&storage, layout.bytes);
 *   xgemv_qweight w;
 *   xgemv_qweight_create(&w, &info, storage);
 *   xgemv_qweight_pack_awq(handle, w, qweight, qzeros, scales);   // or _pack, _pack_gptq, _quantize
 *   xgemv_qgemv(handle, &alpha, w, x, &beta, y, XGEMV_R_16BF);    // as often as wanted
 *
 * Conversions and GEMVs run on the handle's stream, asynchronously, without allocating; both can
 * be captured in CUDA graphs. The handle's pointer mode, early start (the weight, its scales,
 * zero points and permutation count as A) and forced kernel variant apply as for xgemv.h.
 */
#ifndef XGEMV_XGEMV_QUANT_H
#define XGEMV_XGEMV_QUANT_H

#include <stddef.h>

#include "xgemv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum xgemv_qformat {
  XGEMV_QFORMAT_INT4 = 1,          /* 4-bit codes, a scale (and zero point) per group of inputs */
  XGEMV_QFORMAT_INT8 = 2,          /* int8 codes, a scale per output */
  XGEMV_QFORMAT_FP8_E4M3 = 3,      /* fp8 e4m3 codes, a scale per output */
  XGEMV_QFORMAT_FP8_E4M3_BLOCK = 4 /* fp8 e4m3 codes, a scale per 128 x 128 block */
} xgemv_qformat;

/* What a quantized weight is. */
typedef struct xgemv_qweight_info {
  xgemv_qformat format;
  xgemv_datatype activation_type; /* x and the products: XGEMV_R_16F or XGEMV_R_16BF */
  xgemv_datatype scale_type;      /* how the scales are kept: XGEMV_R_16F, _16BF or _32F */
  int64_t outputs;                /* rows of W, the length of y: 1 .. 2^40 */
  int64_t inputs;                 /* columns of W, the length of x (the reduction): 1 .. 2^31-1 */
  int64_t group_size;             /* INT4: 32, 64 or 128, dividing inputs; other formats: 0 */
  int zero_points;                /* INT4: 1 for a zero point per group, 0 for q - 8; else 0 */
  int permuted;                   /* 1: the inputs are permuted (GPTQ act-order); INT4 only */
} xgemv_qweight_info;

/* Where the parts of a weight's storage lie (bytes; a part a weight does not have is 0 bytes). */
typedef struct xgemv_qweight_layout {
  size_t bytes; /* the whole storage */
  size_t codes_offset, codes_bytes;
  size_t scales_offset, scales_bytes;
  size_t zeros_offset, zeros_bytes;
  size_t permutation_offset, permutation_bytes;
  int64_t row_tiles;    /* T: tiles of 16 outputs */
  int64_t k_blocks;     /* KB_count: blocks of 64 (4-bit) or 32 (8-bit) inputs */
  int64_t scale_groups; /* G: scale groups per tile in the storage */
} xgemv_qweight_layout;

/* A weight: its info and its storage, checked once at creation. Host object; the storage stays
 * the caller's (freed by the caller after xgemv_qweight_destroy). */
typedef struct xgemv_qweight_st *xgemv_qweight;

/* Checks info and fills *layout. Statuses: XGEMV_STATUS_NULL_POINTER, INVALID_QFORMAT (format,
 * activation_type or scale_type unknown, zero points or a permutation with a format other than
 * INT4), INVALID_QSHAPE (outputs or inputs out of their ranges, or storage beyond 2^62 bytes),
 * INVALID_GROUP_SIZE (INT4 with a group size other than 32, 64, 128 or one not dividing inputs;
 * another format with a nonzero group size). Needs no GPU. */
XGEMV_API xgemv_status xgemv_qweight_get_layout(const xgemv_qweight_info *info,
                                                xgemv_qweight_layout *layout);

/* Makes a weight of `info` kept in `storage` (device memory of layout.bytes, 256-byte aligned:
 * else XGEMV_STATUS_MISALIGNED; NULL: XGEMV_STATUS_NULL_POINTER), after the checks of
 * xgemv_qweight_get_layout. The storage's contents are written by a conversion below. Needs no
 * GPU (nothing is read or launched). */
XGEMV_API xgemv_status xgemv_qweight_create(xgemv_qweight *weight, const xgemv_qweight_info *info,
                                            void *storage);
/* NULL is accepted. Does not free the storage. */
XGEMV_API xgemv_status xgemv_qweight_destroy(xgemv_qweight weight);
XGEMV_API xgemv_status xgemv_qweight_get_info(xgemv_qweight weight, xgemv_qweight_info *info);

/* --- conversions into the storage (device to device, on the handle's stream) ------------------
 * Every input is a device tensor, row-major with the leading dimension given (elements), aligned
 * to its element type. Code values are taken as stored (a 4-bit code is the low nibble of its
 * byte, values beyond 0..15 are masked), so no input can make a later GEMV read out of bounds.
 * The packing conversions (xgemv_qweight_pack, _pack_gptq, _pack_awq, _quantize) write every
 * byte of the storage (layout.bytes): padding codes of v = 0, padding scales 0, padding zero
 * points 8, the permutation, and zeros between the parts, so that the result does not depend on
 * what the buffer held before.
 *
 * Checks of every conversion, first failure wins: handle NULL (XGEMV_STATUS_INVALID_HANDLE);
 * weight, or a tensor the call always needs, NULL (NULL_POINTER); then the call's own checks in
 * the order given with it; then a tensor not aligned to its element type (MISALIGNED); the
 * current device not the handle's (WRONG_DEVICE); the launches (CUDA_ERROR). A leading dimension
 * is invalid (INVALID_VALUE) below the minimum given, or where rows x ld would exceed 2^60
 * elements. */

/* From plain codes: codes[o * ldc + k] one byte per weight (INT4: q in 0..15 in the low nibble;
 * INT8: int8; FP8_E4M3*: the e4m3 bits), ldc >= inputs; scales of info.scale_type: INT4
 * scales[o * lds + k / group_size] (lds >= inputs / group_size), INT8 and FP8_E4M3
 * scales[o * lds] (lds >= 1), FP8_E4M3_BLOCK scales[(o / 128) * lds + k / 128]
 * (lds >= ceil(inputs / 128)); zeros (INT4 with zero points, else NULL) uint8
 * zeros[o * ldz + k / group_size] in the low nibble (ldz >= inputs / group_size); permutation
 * (permuted weights, else NULL) int32 P[k] as in the packed layout, a permutation of 0..inputs-1
 * (an entry outside 0..inputs-1 is stored as P[k] = k, so that no GEMV reads outside x; a P that
 * is not a permutation gives wrong results). Codes, scales, zeros are in the packed input order.
 * Checks: codes, scales, and the zeros or permutation the weight has, NULL (NULL_POINTER);
 * then INVALID_VALUE for ldc, lds or (zeros given) ldz out of range, zeros given for a weight
 * without zero points, a permutation given for a weight that is not permuted. */
XGEMV_API xgemv_status xgemv_qweight_pack(xgemv_handle handle, xgemv_qweight weight,
                                          const void *codes, int64_t ldc, const void *scales,
                                          int64_t lds, const uint8_t *zeros, int64_t ldz,
                                          const int32_t *permutation);

/* From a GPTQ checkpoint (INT4; group_size the checkpoint's): qweight int32 [inputs / 8][outputs],
 * nibble i (bits 4i..4i+3) of qweight[r][o] the code of input 8 r + i of output o; qzeros int32
 * [groups][outputs / 8], nibble i of qzeros[j][m] the zero point of output 8 m + i in group j
 * (stored minus one by older GPTQ files: pass zeros_minus_one = 1 to add 1 back, modulo 16), NULL for a
 * symmetric weight (info.zero_points 0); scales [groups][outputs] of info.scale_type; g_idx int32
 * [inputs] the group of each input (act-order), or NULL for k / group_size. With g_idx the weight
 * must be made with info.permuted = 1: its inputs are sorted by group (stably), and each group
 * must hold exactly group_size inputs, as GPTQ's act-order gives (other g_idx values give wrong
 * results, never out-of-bounds accesses). outputs must be a multiple of 8 and inputs of 8
 * (else XGEMV_STATUS_INVALID_QSHAPE). Checks: qweight, scales, and qzeros for a weight with
 * zero points or g_idx for a permuted one, NULL (NULL_POINTER); then INVALID_VALUE for qzeros
 * given for a weight without zero points, or zeros_minus_one other than 0 and 1; INVALID_QFORMAT
 * for a weight that is not INT4; INVALID_QSHAPE as above; INVALID_VALUE for g_idx given for a
 * weight that is not permuted. */
XGEMV_API xgemv_status xgemv_qweight_pack_gptq(xgemv_handle handle, xgemv_qweight weight,
                                               const int32_t *qweight, const int32_t *qzeros,
                                               const void *scales, const int32_t *g_idx,
                                               int zeros_minus_one);

/* From an AWQ checkpoint (INT4 with zero points; GEMM packing): qweight int32 [inputs][outputs/8],
 * nibble i of qweight[k][m] the code of input k of output 8 m + order[i], order = {0, 2, 4, 6, 1,
 * 3, 5, 7}; qzeros int32 [groups][outputs / 8] with the same nibble order; scales
 * [groups][outputs] of info.scale_type. outputs must be a multiple of 8. Checks: qweight, qzeros,
 * scales NULL (NULL_POINTER); then INVALID_QFORMAT for a weight that is not INT4 with zero
 * points; INVALID_QSHAPE for outputs not a multiple of 8; INVALID_VALUE for a permuted weight
 * (AWQ gives no permutation). */
XGEMV_API xgemv_status xgemv_qweight_pack_awq(xgemv_handle handle, xgemv_qweight weight,
                                              const int32_t *qweight, const int32_t *qzeros,
                                              const void *scales);

/* Quantizes dense weights (row-major [outputs][ldw] of info.activation_type, ldw >= inputs) by
 * round to nearest (ties to even), with scales rounded to info.scale_type first and the codes
 * computed with the rounded scale (every quotient in fp32, rounded to nearest even):
 *   INT4 symmetric: s = max|w| / 7 per group, q = clamp(rint(w / s), -8, 7) + 8;
 *   INT4 with zero points: s = (max w - min w) / 15 per group (both over the group and 0),
 *     z = clamp(rint(-min / s), 0, 15), q = clamp(rint(w / s) + z, 0, 15);
 *   INT8: s = max|w| / 127 per output, q = clamp(rint(w / s), -127, 127);
 *   FP8_E4M3: s = max|w| / 448 per output, FP8_E4M3_BLOCK: per 128 x 128 block, q = e4m3(w / s)
 *     rounded to nearest even, saturated to +-448.
 * A group (output, block) whose scale, rounded to scale_type, is 0 (all weights 0, or too small
 * for scale_type) gets codes of v = 0, and with zero points z = 8 (q = 8). Deterministic: the
 * same weights give the same bits. Not for permuted weights. Checks: weights NULL
 * (NULL_POINTER); then INVALID_VALUE for ldw out of range or a permuted weight. */
XGEMV_API xgemv_status xgemv_qweight_quantize(xgemv_handle handle, xgemv_qweight weight,
                                              const void *weights, int64_t ldw);

/* Writes the weight's values w (as defined above, in the original input order: out[o][P[k]] is
 * packed input k) as a dense row-major [outputs][ldw] matrix of out_type (XGEMV_R_32F: w = v * s
 * rounded to fp32, exact for 16-bit scales; 16-bit types: that fp32 value rounded to nearest
 * even). ldw >= inputs; columns inputs..ldw-1 are not written. Checks: out NULL (NULL_POINTER);
 * then INVALID_VALUE for ldw out of range; INVALID_QFORMAT for an out_type other than
 * XGEMV_R_32F, _16F, _16BF. */
XGEMV_API xgemv_status xgemv_qweight_dequantize(xgemv_handle handle, xgemv_qweight weight,
                                                void *out, int64_t ldw, xgemv_datatype out_type);

/* --- GEMV ---------------------------------------------------------------------------------- */

/* y := alpha * W x + beta * y: x (inputs) of info.activation_type, y (outputs) of y_type (the
 * activation type or XGEMV_R_32F), contiguous; alpha, beta fp32 (the handle's pointer mode).
 * Any alignment of x and y (element-aligned). Checks, first failure wins: weight NULL
 * (XGEMV_STATUS_NULL_POINTER), y_type (INVALID_QFORMAT), then the handle's as for xgemv.h
 * (INVALID_HANDLE; NULL_POINTER for alpha, beta, and x, y unless nothing is read; WRONG_DEVICE;
 * NOT_SUPPORTED when the forced kernel variant is not a quantized one; CUDA_ERROR). */
XGEMV_API xgemv_status xgemv_qgemv(xgemv_handle handle, const float *alpha, xgemv_qweight weight,
                                   const void *x, const float *beta, void *y,
                                   xgemv_datatype y_type);

/* Y := alpha * W X + beta * Y for nrhs vectors (1..16 at the cost of about one; more in passes of
 * 16), X column-major inputs x nrhs, Y column-major outputs x nrhs. Checks, first failure wins:
 * weight NULL (NULL_POINTER), ldx >= inputs (INVALID_LDX), ldy >= outputs (INVALID_LDY),
 * nrhs >= 0 (INVALID_NRHS; 0 is a quick return), y_type (INVALID_QFORMAT), then the handle's as
 * for xgemv_qgemv. */
XGEMV_API xgemv_status xgemv_qgemv_nrhs(xgemv_handle handle, const float *alpha,
                                        xgemv_qweight weight, const void *X, int64_t ldx,
                                        const float *beta, void *Y, int64_t ldy,
                                        xgemv_datatype y_type, int64_t nrhs);

/* Y := alpha * W X + beta * Y + bias: xgemv_qgemv_nrhs with a bias, a contiguous device vector of
 * `outputs` elements of y_type, the same for every column, or NULL for none (then exactly
 * xgemv_qgemv_nrhs's result). The bias is added to the value xgemv_qgemv_nrhs computes, in fp32,
 * and the sum is rounded once to y_type; alpha == 0 and beta == 1 is then no quick return
 * (Y := Y + bias). Checks: those of xgemv_qgemv_nrhs, in its order. */
XGEMV_API xgemv_status xgemv_qgemv_bias(xgemv_handle handle, const float *alpha,
                                        xgemv_qweight weight, const void *X, int64_t ldx,
                                        const float *beta, void *Y, int64_t ldy,
                                        xgemv_datatype y_type, int64_t nrhs, const void *bias);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XGEMV_XGEMV_QUANT_H */
