/*
 * xgemv_nccl.h — one GEMV split over several GPUs, one rank per GPU, through NCCL.
 *
 *   y := alpha * op(A) * x + beta * y        (the whole problem: A is m x n, column-major)
 *
 * Each rank (a process or a thread per GPU) calls the same function with its own xgemv handle
 * (on its GPU; the call runs on the handle's stream), the caller's NCCL communicator, and its
 * part of the operands. The two layouts of a tensor-parallel linear layer:
 *
 *  - XGEMV_SPLIT_OUTPUTS: rank r owns the outputs [starts[r], starts[r+1]) of op(A) (rows of
 *    op(A), elements of y). Its A is that block, column-major with its own lda: for 'N' the rows
 *    starts[r]..starts[r+1]-1 of A (m_r x n), for 'T'/'C' those columns of A (m x n_r). x is the
 *    whole x on every rank. With XGEMV_RESULT_OWN_BLOCK y is the rank's block of y (length
 *    m_r or n_r, incy any); with XGEMV_RESULT_ALL y is the whole y (incy 1) and every rank ends
 *    with all of it (each block computed by its owner, then broadcast).
 *  - XGEMV_SPLIT_REDUCTION: rank r owns the reduction elements [starts[r], starts[r+1]) (columns
 *    of op(A), elements of x). Its A is that block (for 'N' those columns of A, m x n_r; for
 *    'T'/'C' those rows, m_r x n) and x is its block of x. The partial sums are exchanged in
 *    fp32 (fp64 for fp64) with ncclAllGather and added in rank order on every rank, so the result
 *    is bitwise the same on every rank and from run to run for a fixed rank count and split;
 *    alpha and beta are applied once, after that sum. With XGEMV_RESULT_ALL y is the whole y
 *    (incy 1) on every rank; with XGEMV_RESULT_OWN_BLOCK rank r keeps only the outputs
 *    [r*q, min((r+1)*q, outputs)), q = ceil(outputs / ranks), and y is that block (incy 1).
 *
 * starts: ranks + 1 host offsets, starts[0] == 0, non-decreasing, starts[ranks] == the length
 * of the split axis (an empty block is allowed), the same on every rank. The BLAS rules of
 * xgemv.h hold for the whole problem: beta == 0 never reads y, alpha == 0 reads neither A nor x
 * (no rank's; with device scalars the reduction split computes its partial sums before it reads
 * alpha, so there A and x are read, but their values never reach y), NaN/Inf propagate, host or
 * device scalars (the handle's pointer mode), the quick return m == 0 or n == 0 or alpha == 0
 * and beta == 1 (host scalars) touches nothing and communicates nothing. fp16/bf16: 16-bit
 * storage, fp32 scalars and accumulation.
 *
 * workspace: device memory of at least xgemv_nccl_workspace_bytes(...) bytes (NULL when that is
 * 0), used on the handle's stream during the call only. No allocation, no synchronisation:
 * calls are stream-ordered and can be captured into a CUDA graph with the NCCL calls.
 *
 * Statuses: those of xgemv.h for the argument checks of the whole problem (trans 1, m 2, n 3,
 * lda 6, incx 8, incy 11, checked against the local block), then XGEMV_STATUS_INVALID_SPLIT for
 * a bad layout, starts array or rank count, XGEMV_STATUS_NOT_SUPPORTED for incy != 1 where y is
 * exchanged, XGEMV_STATUS_NULL_POINTER for a missing workspace, XGEMV_STATUS_NCCL_ERROR when NCCL
 * fails (xgemv_nccl_last_error gives its result). A NULL communicator, like a NULL handle, is
 * XGEMV_STATUS_INVALID_HANDLE; it is found after the layout and result values are checked and
 * before the starts, which need its rank count (where the split cuts the rows of A, lda is then
 * checked against 1 only). On an argument error nothing is read, written or communicated; every
 * rank must get the same verdict, so pass the same arguments everywhere.
 */
#ifndef XGEMV_XGEMV_NCCL_H
#define XGEMV_XGEMV_NCCL_H

#include <nccl.h>

#include "xgemv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum xgemv_split {
  XGEMV_SPLIT_OUTPUTS = 0,  /* each rank owns a block of outputs (rows of op(A)) */
  XGEMV_SPLIT_REDUCTION = 1 /* each rank owns a block of the reduction (columns of op(A)) */
} xgemv_split;

typedef enum xgemv_result {
  XGEMV_RESULT_OWN_BLOCK = 0, /* each rank keeps its block of y */
  XGEMV_RESULT_ALL = 1        /* every rank ends with the whole y */
} xgemv_result;

/* The statuses of these calls beyond those of the single-GPU ones are in xgemv.h's enum, so
 * that xgemv_status_string knows them: XGEMV_STATUS_INVALID_SPLIT (40: layout, result, starts or
 * rank count) and XGEMV_STATUS_NCCL_ERROR (41: NCCL failed, see xgemv_nccl_last_error). */

/* The workspace bytes a call with these arguments needs on each rank (0 for the outputs split). */
XGEMV_API size_t xgemv_nccl_workspace_bytes(xgemv_split split, xgemv_result result, char trans,
                                            int64_t m, int64_t n, int ranks, int element_bytes);

/* The NCCL result behind the calling thread's last XGEMV_STATUS_NCCL_ERROR (ncclSuccess if none). */
XGEMV_API ncclResult_t xgemv_nccl_last_error(void);

XGEMV_API xgemv_status xgemv_nccl_sgemv(xgemv_handle handle, ncclComm_t comm, xgemv_split split,
                                        xgemv_result result, const int64_t *starts, char trans,
                                        int64_t m, int64_t n, const float *alpha, const float *A,
                                        int64_t lda, const float *x, int64_t incx,
                                        const float *beta, float *y, int64_t incy,
                                        void *workspace, size_t workspace_bytes);
XGEMV_API xgemv_status xgemv_nccl_dgemv(xgemv_handle handle, ncclComm_t comm, xgemv_split split,
                                        xgemv_result result, const int64_t *starts, char trans,
                                        int64_t m, int64_t n, const double *alpha,
                                        const double *A, int64_t lda, const double *x,
                                        int64_t incx, const double *beta, double *y,
                                        int64_t incy, void *workspace, size_t workspace_bytes);
XGEMV_API xgemv_status xgemv_nccl_hgemv(xgemv_handle handle, ncclComm_t comm, xgemv_split split,
                                        xgemv_result result, const int64_t *starts, char trans,
                                        int64_t m, int64_t n, const float *alpha,
                                        const xgemv_half *A, int64_t lda, const xgemv_half *x,
                                        int64_t incx, const float *beta, xgemv_half *y,
                                        int64_t incy, void *workspace, size_t workspace_bytes);
XGEMV_API xgemv_status xgemv_nccl_bf16gemv(xgemv_handle handle, ncclComm_t comm,
                                           xgemv_split split, xgemv_result result,
                                           const int64_t *starts, char trans, int64_t m,
                                           int64_t n, const float *alpha,
                                           const xgemv_bfloat16 *A, int64_t lda,
                                           const xgemv_bfloat16 *x, int64_t incx,
                                           const float *beta, xgemv_bfloat16 *y, int64_t incy,
                                           void *workspace, size_t workspace_bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XGEMV_XGEMV_NCCL_H */
