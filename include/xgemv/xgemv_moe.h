/*
 * xgemv_moe.h — mixture-of-experts decode: the GEMVs of the experts that T tokens chose, one
 * call per projection, with the experts' weights dense (fp16, bf16) or quantized (every format of
 * xgemv_quant.h).
 *
 * A mixture-of-experts layer routes each token t to k of E experts: expert ids e(t, j) and
 * weights w(t, j), j < k. Its two projections are the calls below:
 *
 *   up:   h[t, j, :] = act(W_up[e(t, j)] x[t] + b_up[e(t, j)])               for every (t, j)
 *   down: y[t, :]    = (y[t, :] if accumulate) + sum_j w(t, j) (W_down[e(t, j)] h[t, j, :] + b_down[e(t, j)])
 *
 * W_up and W_down are the experts (an xgemv_experts each): E matrices of `outputs` x `inputs`,
 * each row-major (PyTorch's nn.Linear weight, [out, in]), stacked. An expert that any token chose
 * is read once per call, however many tokens chose it: its tokens are its right-hand sides (so a
 * call costs about one read of the chosen experts' bytes, E (1 - (1 - k/E)^T) experts for
 * uniform routing). A call reads the ids and weights on the device: no host synchronisation, no
 * allocation, capturable in CUDA graphs, on the handle's stream (early start as xgemv.h says:
 * the kernels launch early and wait for the work before them, whose ids they need first).
 *
 * ## Numbers
 *
 * Each product W x (or W h) is summed in fp32 over the inputs in an order fixed by the experts'
 * shape and format (quantized: as xgemv_quant.h computes it), then the bias (in fp32), then the
 * activation in fp32, rounded once to the activation type (up); down: each term
 * w(t, j) * (W h + b) is formed in fp32 and the terms are added in the order j = 0, 1, ..., k - 1
 * (no atomics), then to y[t] (accumulate) in fp32, rounded once. So the results are bitwise
 * reproducible, and a token's results do not depend on the other tokens of the call, their
 * number or their order (batch invariance). NaN and Inf propagate.
 *
 * Ids outside [0, E) choose nothing (the expert-parallel sentinel): their h rows are left as they
 * are (up) and they add nothing (down); a token whose ids all lie outside gets y[t] = 0, or keeps
 * y[t] with accumulate. The same expert twice for one token counts twice.
 *
 * ## Activations of the up projection (`outputs` rows of W_up; h has `outputs` or outputs / 2)
 *
 *   XGEMV_MOE_IDENTITY           h = W x + b                            (outputs values)
 *   XGEMV_MOE_SWIGLU             g = rows [0, I), u = rows [I, 2I), h = silu(g) * u, I = outputs / 2
 *                                (Qwen3-MoE, Mixtral, DeepSeek-V3, OLMoE: gate rows first)
 *   XGEMV_MOE_SWIGLU_INTERLEAVED g = rows 2i, u = rows 2i + 1, h = silu(g) * u
 *   XGEMV_MOE_SWIGLU_CLAMPED     as interleaved, with g = min(g, limit), u = clamp(u, -limit,
 *                                limit), h = (u + 1) * g * sigmoid(alpha * g) (gpt-oss: alpha
 *                                1.702, limit 7)
 * with silu(g) = g / (1 + exp(-g)) and the bias (if any) added to g and u before.
 *
 * ## Use
 *
 *   xgemv_experts up, down;
 *   xgemv_experts_create(&up, XGEMV_R_16BF, E, 2 * I, H, d_gate_up, H, 2 * I * H);
 *   xgemv_experts_create(&down, XGEMV_R_16BF, E, H, I, d_down, I, H * I);
 *   xgemv_moe_routing routing = {T, k, d_ids, XGEMV_R_32I, d_weights, XGEMV_R_32F};
 *   xgemv_moe_up(handle, up, &routing, XGEMV_MOE_SWIGLU, 0, 0, NULL, d_x, H, d_h, I);
 *   xgemv_moe_down(handle, down, &routing, NULL, d_h, I, 0, d_y, H, NULL, 0);
 */
#ifndef XGEMV_XGEMV_MOE_H
#define XGEMV_XGEMV_MOE_H

#include <stddef.h>

#include "xgemv.h"
#include "xgemv_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The experts of one projection. Host object; the weights stay the caller's. */
typedef struct xgemv_experts_st *xgemv_experts;

/* Dense experts of `type` (XGEMV_R_16F or XGEMV_R_16BF, also the type of x, h and y): expert e's
 * row o (o < outputs) is the `inputs` elements at weights + e * expert_stride + o * ld. Checks,
 * first failure wins: NULL experts or weights (XGEMV_STATUS_NULL_POINTER), type
 * (XGEMV_STATUS_INVALID_VALUE), count, outputs, inputs >= 1 and below 2^31
 * and count at most 8192 (INVALID_QSHAPE), ld >= inputs and expert_stride >= outputs * ld
 * (INVALID_LDA). Needs no GPU. */
XGEMV_API xgemv_status xgemv_experts_create(xgemv_experts *experts, xgemv_datatype type,
                                            int64_t count, int64_t outputs, int64_t inputs,
                                            const void *weights, int64_t ld,
                                            int64_t expert_stride);

/* Quantized experts: `count` weights of one `info` (xgemv_quant.h; their activation type is that
 * of x, h and y), expert e's storage at storage + e * layout.bytes (the layout of
 * xgemv_qweight_get_layout, each written by its conversions: xgemv_qweight_create on that
 * address). The checks of xgemv_qweight_create, then count 1 .. 8192 (INVALID_QSHAPE), then
 * not permuted (act-order: XGEMV_STATUS_INVALID_QFORMAT). Needs no GPU. */
XGEMV_API xgemv_status xgemv_experts_create_quantized(xgemv_experts *experts,
                                                      const xgemv_qweight_info *info,
                                                      int64_t count, const void *storage);

XGEMV_API xgemv_status xgemv_experts_destroy(xgemv_experts experts);

typedef enum xgemv_moe_activation {
  XGEMV_MOE_IDENTITY = 0,
  XGEMV_MOE_SWIGLU = 1,
  XGEMV_MOE_SWIGLU_INTERLEAVED = 2,
  XGEMV_MOE_SWIGLU_CLAMPED = 3
} xgemv_moe_activation;

/* The routing of `tokens` tokens, each to `top_k` experts (1 .. 32): expert_ids [tokens, top_k]
 * row-major, of id_type XGEMV_R_32I or XGEMV_R_64I (PyTorch's topk gives int64); weights
 * [tokens, top_k] row-major, of weight_type XGEMV_R_32F or the activation type (read by
 * xgemv_moe_down only; NULL for xgemv_moe_up). Device memory. */
typedef struct xgemv_moe_routing {
  int64_t tokens;
  int64_t top_k;
  const void *expert_ids;
  xgemv_datatype id_type;
  const void *weights;
  xgemv_datatype weight_type;
} xgemv_moe_routing;

/* h[t, j, :] = act(W[e(t, j)] x[t] + bias[e(t, j)]): x[t] at x + t * ldx (ldx >= inputs), h of
 * pair (t, j) at h + (t * top_k + j) * ldh (ldh >= its length: outputs, or outputs / 2 with a
 * SwiGLU), bias [E, outputs] of the activation type or NULL; alpha and limit are read for
 * XGEMV_MOE_SWIGLU_CLAMPED only. Checks, first failure wins: NULL experts, routing
 * (XGEMV_STATUS_NULL_POINTER); activation, or a SwiGLU with odd outputs (with quantized experts
 * and XGEMV_MOE_SWIGLU: outputs not a multiple of 32, whole tiles of 16 rows in each half), or
 * an id_type other than 32I / 64I (XGEMV_STATUS_INVALID_VALUE); tokens < 0, top_k outside 1 .. 32
 * (XGEMV_STATUS_INVALID_NRHS); ldx (INVALID_LDX); ldh (INVALID_LDY); then, as every call, the
 * handle, the pointers (x, h, expert_ids: NULL_POINTER), the device. tokens == 0 is a quick
 * return. */
XGEMV_API xgemv_status xgemv_moe_up(xgemv_handle handle, xgemv_experts experts,
                                    const xgemv_moe_routing *routing,
                                    xgemv_moe_activation activation, float alpha, float limit,
                                    const void *bias, const void *x, int64_t ldx, void *h,
                                    int64_t ldh);

/* y[t, :] = (y[t, :] if accumulate) + sum_j weights[t, j] (W[e(t, j)] h[t, j, :] + bias[e(t,
 * j)]): h of pair (t, j) at h + (t * top_k + j) * ldh (ldh >= inputs), y[t] at y + t * ldy (ldy
 * >= outputs), bias [E, outputs] of the activation type or NULL. The terms of a token meet in a
 * workspace of fp32 sums: `workspace` (device memory of at least xgemv_moe_down_workspace_bytes,
 * 256-byte aligned) takes the whole call in one launch; NULL takes the handle's own, in as many
 * launches of consecutive tokens as it needs (the same results; each launch reads its tokens'
 * experts again). The checks of xgemv_moe_up with ldh for ldx (INVALID_LDX) and ldy
 * (INVALID_LDY), then weight_type (INVALID_VALUE) and the workspace: too small or misaligned
 * (XGEMV_STATUS_MISALIGNED), then the call's. */
XGEMV_API xgemv_status xgemv_moe_down(xgemv_handle handle, xgemv_experts experts,
                                      const xgemv_moe_routing *routing, const void *bias,
                                      const void *h, int64_t ldh, int accumulate, void *y,
                                      int64_t ldy, void *workspace, size_t workspace_bytes);

/* The workspace that takes a whole xgemv_moe_down call of these sizes in one launch. */
XGEMV_API size_t xgemv_moe_down_workspace_bytes(int64_t tokens, int64_t top_k, int64_t outputs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XGEMV_XGEMV_MOE_H */
