/*
 * xgemv — BLAS GEMV on NVIDIA GPUs.
 *
 *   y := alpha * op(A) * x + beta * y
 *
 * A is column-major m x n with leading dimension lda; op(A) is A ('N'), A^T ('T') or A^H ('C',
 * equal to A^T for the real types here). A, x and y are device (or managed) pointers. Semantics
 * follow Reference BLAS sgemv.f exactly:
 *
 *  - Arguments are checked in Reference BLAS order and the first failure is returned as a status
 *    whose value is the BLAS argument position (trans 1, m 2, n 3, lda 6, incx 8, incy 11);
 *    lda must be >= max(1, m) whatever trans is. On any error nothing is read or written.
 *  - Quick return (nothing read, y untouched) when m == 0, n == 0, or alpha == 0 and beta == 1.
 *  - beta == 0: y is written without being read (NaN/Inf in y do not leak through).
 *    alpha == 0: y := beta * y; A and x are not read.
 *  - Negative increments: pass the first element in memory; logical element 0 sits at the far
 *    end, as in BLAS. x has length n for 'N' and m for 'T'/'C'; y the other one.
 *  - NaN/Inf in A or x propagate (no shortcut on x[j] == 0).
 *  - fp16/bf16 keep A, x, y in 16-bit storage; alpha, beta and the accumulation are fp32.
 *    fp32 accumulates in fp32, fp64 in fp64.
 *
 * Calls go through a handle (xgemv_create), which carries the device, the stream, the pointer
 * mode of alpha/beta and a small workspace allocated once at creation (for the deterministic
 * combine of split reductions). A handle serves one stream at a time, like a cuBLAS handle:
 * create one per concurrent stream or thread.
 *
 * Scalars alpha and beta are host pointers (XGEMV_POINTER_MODE_HOST, the default, read during the
 * call) or device pointers (XGEMV_POINTER_MODE_DEVICE, read by the kernel, as needed for CUDA
 * graph capture); with device scalars the quick-return, alpha == 0 and beta == 0 rules hold
 * inside the kernel with the same results.
 *
 * Calls are stream-ordered on the handle's stream: no device synchronisation, no allocation, no
 * host-device copy; every call can be captured into a CUDA graph. Results are bitwise
 * reproducible: the same call on the same device gives the same bits.
 *
 * Setting the environment variable XGEMV_CHECK_POINTERS=1 makes every call verify that A, x, y
 * (a bias, device scalars) are device allocations of the handle's device or managed memory, and
 * return XGEMV_STATUS_INVALID_POINTER otherwise (host memory, pinned host memory included, and
 * freed pointers) instead of faulting; it costs a driver query per pointer and is off by default.
 *
 * Usable from C99 and C++.
 */
#ifndef XGEMV_XGEMV_H
#define XGEMV_XGEMV_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
#include <cuda_bf16.h>
#include <cuda_fp16.h>
typedef __half xgemv_half;
typedef __nv_bfloat16 xgemv_bfloat16;
#else
/* In C the CUDA 16-bit types are opaque: the same structs as __half / __nv_bfloat16 in C++. */
typedef struct __half xgemv_half;
typedef struct __nv_bfloat16 xgemv_bfloat16;
#endif

#if defined(_WIN32)
#define XGEMV_API
#else
#define XGEMV_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define XGEMV_VERSION_MAJOR 0
#define XGEMV_VERSION_MINOR 3
#define XGEMV_VERSION_PATCH 0

/* Status of a call. The argument errors carry the Reference BLAS argument position as their
 * value, so `xerbla`-style reporting is `(int)status`. */
typedef enum xgemv_status {
  XGEMV_STATUS_SUCCESS = 0,
  XGEMV_STATUS_INVALID_TRANS = 1, /* trans is not one of N, T, C (either case) */
  XGEMV_STATUS_INVALID_M = 2,     /* m < 0 */
  XGEMV_STATUS_INVALID_N = 3,     /* n < 0 */
  XGEMV_STATUS_INVALID_LDA = 6,   /* lda < max(1, m) */
  XGEMV_STATUS_INVALID_INCX = 8,  /* incx == 0 */
  XGEMV_STATUS_INVALID_INCY = 11, /* incy == 0 */
  /* The few-right-hand-side calls (xgemv_sgemv_nrhs, ...) put X, ldx and Y, ldy where x, incx
   * and y, incy stand and nrhs last, so the positions stay those of gemv: */
  XGEMV_STATUS_INVALID_LDX = 8,   /* ldx < max(1, rows of X) (same value as INVALID_INCX) */
  XGEMV_STATUS_INVALID_LDY = 11,  /* ldy < max(1, rows of Y) (same value as INVALID_INCY) */
  XGEMV_STATUS_INVALID_NRHS = 12, /* nrhs < 0 */
  XGEMV_STATUS_INVALID_HANDLE = 20,       /* NULL handle */
  XGEMV_STATUS_INVALID_POINTER_MODE = 21, /* mode is neither HOST nor DEVICE */
  XGEMV_STATUS_INVALID_BATCH = 22,        /* batch_count < 0 */
  XGEMV_STATUS_NULL_POINTER = 23,         /* a pointer the call needs is NULL */
  XGEMV_STATUS_INVALID_POINTER = 24, /* XGEMV_CHECK_POINTERS: a pointer is not device-accessible */
  XGEMV_STATUS_WRONG_DEVICE = 25,    /* the current device is not the handle's device */
  XGEMV_STATUS_NOT_SUPPORTED = 26,   /* the forced kernel variant cannot compute this problem */
  XGEMV_STATUS_INVALID_VALUE = 27,   /* an unknown kernel variant name or element type */
  XGEMV_STATUS_CUDA_ERROR = 30,      /* the CUDA runtime reported an error; see xgemv_last_cuda_error */
  XGEMV_STATUS_INTERNAL_ERROR = 31,
  XGEMV_STATUS_NO_DEVICE = 32, /* xgemv_create: no NVIDIA driver or no CUDA device on this machine */
  /* Returned only by the multi-GPU calls of xgemv_nccl.h (libxgemv_nccl): */
  XGEMV_STATUS_INVALID_SPLIT = 40, /* a bad split layout, result, starts array or rank count */
  XGEMV_STATUS_NCCL_ERROR = 41,    /* NCCL failed; see xgemv_nccl_last_error */
  /* Returned only by the quantized-weight calls of xgemv_quant.h: */
  XGEMV_STATUS_INVALID_QFORMAT = 50,    /* unknown format or data type, or a bad combination */
  XGEMV_STATUS_INVALID_QSHAPE = 51,     /* outputs or inputs out of range for the format */
  XGEMV_STATUS_INVALID_GROUP_SIZE = 52, /* a group size the format does not take */
  XGEMV_STATUS_MISALIGNED = 53          /* a pointer without the alignment the call requires */
} xgemv_status;

/* Element types, with the values of cudaDataType_t (library_types.h) for the same types. The
 * integer ones are the index types of xgemv_moe.h's expert ids. */
typedef enum xgemv_datatype {
  XGEMV_R_32F = 0,  /* float */
  XGEMV_R_64F = 1,  /* double */
  XGEMV_R_16F = 2,  /* __half */
  XGEMV_R_32I = 10, /* int32_t */
  XGEMV_R_16BF = 14, /* __nv_bfloat16 */
  XGEMV_R_64I = 24  /* int64_t */
} xgemv_datatype;

typedef enum xgemv_pointer_mode {
  XGEMV_POINTER_MODE_HOST = 0,  /* alpha, beta point to host memory (same values as cuBLAS) */
  XGEMV_POINTER_MODE_DEVICE = 1 /* alpha, beta point to device memory */
} xgemv_pointer_mode;

/* Opaque handle: device, stream, pointer mode and workspace. */
typedef struct xgemv_context *xgemv_handle;

/* Creates a handle on the current device and allocates its workspace (synchronous, like
 * cublasCreate). It may also be called while a stream is being captured into a CUDA graph, in
 * any capture mode (inside torch.cuda.graph, say): the allocation runs in relaxed capture mode
 * and puts nothing into the graph. Stream 0, XGEMV_POINTER_MODE_HOST.
 * XGEMV_STATUS_NO_DEVICE when the machine has no NVIDIA driver or no CUDA device (the CUDA
 * error behind it is still recorded for xgemv_last_cuda_error). */
XGEMV_API xgemv_status xgemv_create(xgemv_handle *handle);
/* Frees the handle and its workspace; waits for the handle's stream first, so not while a stream
 * is being captured. NULL is accepted. */
XGEMV_API xgemv_status xgemv_destroy(xgemv_handle handle);
XGEMV_API xgemv_status xgemv_set_stream(xgemv_handle handle, cudaStream_t stream);
XGEMV_API xgemv_status xgemv_get_stream(xgemv_handle handle, cudaStream_t *stream);
XGEMV_API xgemv_status xgemv_set_pointer_mode(xgemv_handle handle, xgemv_pointer_mode mode);
XGEMV_API xgemv_status xgemv_get_pointer_mode(xgemv_handle handle, xgemv_pointer_mode *mode);

/* Early start, for engines that launch their kernels with programmatic dependent launch (PDL,
 * Hopper and newer). xgemv's kernels are always launched so that the next kernel on the stream
 * may launch early, and, by default, read nothing before the work before them on the stream has
 * finished (exactly stream-ordered). With early start enabled on a handle, its kernels begin
 * streaming A before that work has finished and read x, y and device scalars only after it:
 * the caller promises that the work just before each call on the stream does not write A
 * (weights written long before, as in inference, are fine). Off by default. */
XGEMV_API xgemv_status xgemv_set_early_start(xgemv_handle handle, int enabled);
XGEMV_API xgemv_status xgemv_get_early_start(xgemv_handle handle, int *enabled);

/* Batch invariance, for engines whose results must not depend on how many sequences are decoded
 * together. The few-right-hand-side calls below always compute column j of Y with the same bits
 * whatever nrhs is and whatever the other columns hold (for the same A, lda, op and the same
 * alignment of X and Y). With batch invariance enabled on a handle, its single-vector calls
 * (xgemv_sgemv, ..., and the strided batches) run on the same kernels as nrhs == 1, so they give
 * those bits too; off by default, because the single-vector kernels are faster for one vector.
 * The environment variable XGEMV_BATCH_INVARIANT=1 enables it on every handle xgemv_create
 * makes. */
XGEMV_API xgemv_status xgemv_set_batch_invariant(xgemv_handle handle, int enabled);
XGEMV_API xgemv_status xgemv_get_batch_invariant(xgemv_handle handle, int *enabled);

/* A short English description of a status; never NULL. */
XGEMV_API const char *xgemv_status_string(xgemv_status status);

/* The Reference BLAS argument position a status names (1, 2, 3, 6, 8, 11; 12 for nrhs), or 0. */
XGEMV_API int xgemv_status_argument(xgemv_status status);

/* The CUDA error behind the calling thread's last XGEMV_STATUS_CUDA_ERROR or
 * XGEMV_STATUS_NO_DEVICE (cudaSuccess if none). */
XGEMV_API cudaError_t xgemv_last_cuda_error(void);

/* The CUDA runtime's description of xgemv_last_cuda_error() ("no error" if none), so that
 * callers need not link the CUDA runtime to print it; never NULL. */
XGEMV_API const char *xgemv_cuda_error_string(void);

/* "major.minor.patch" of the library actually loaded. */
XGEMV_API const char *xgemv_version_string(void);
XGEMV_API void xgemv_version(int *major, int *minor, int *patch);

/* y := alpha*op(A)*x + beta*y, one problem. */
XGEMV_API xgemv_status xgemv_sgemv(xgemv_handle handle, char trans,
                                   int64_t m, int64_t n, const float *alpha, const float *A,
                                   int64_t lda, const float *x, int64_t incx, const float *beta,
                                   float *y, int64_t incy);
XGEMV_API xgemv_status xgemv_dgemv(xgemv_handle handle, char trans,
                                   int64_t m, int64_t n, const double *alpha, const double *A,
                                   int64_t lda, const double *x, int64_t incx, const double *beta,
                                   double *y, int64_t incy);
XGEMV_API xgemv_status xgemv_hgemv(xgemv_handle handle, char trans,
                                   int64_t m, int64_t n, const float *alpha, const xgemv_half *A,
                                   int64_t lda, const xgemv_half *x, int64_t incx,
                                   const float *beta, xgemv_half *y, int64_t incy);
XGEMV_API xgemv_status xgemv_bf16gemv(xgemv_handle handle, char trans,
                                      int64_t m, int64_t n, const float *alpha,
                                      const xgemv_bfloat16 *A, int64_t lda,
                                      const xgemv_bfloat16 *x, int64_t incx, const float *beta,
                                      xgemv_bfloat16 *y, int64_t incy);

/* Few right-hand sides: Y := alpha*op(A)*X + beta*Y for nrhs vectors at once, each weight read
 * once per pass of up to 16 vectors (8 in fp32 op T where A's or X's columns are not 16-byte
 * aligned), so that a few cost little more than one.
 * X (rows: n for 'N', m for 'T'/'C') and Y (rows: m for 'N', n otherwise) are column-major with
 * nrhs columns and leading dimensions ldx and ldy. The gemv rules hold column by column (quick
 * return, beta == 0 never reads Y, alpha == 0 reads neither A nor X, NaN/Inf propagate), and
 * nrhs == 0 is a quick return. Argument order and error positions are gemv's with X, ldx and
 * Y, ldy in place of x, incx and y, incy and nrhs appended: trans 1, m 2, n 3, lda 6, ldx 8,
 * ldy 11, nrhs 12, checked in that order. Column j of Y is bitwise the same whatever nrhs is
 * (see xgemv_set_batch_invariant). fp16/bf16: 16-bit storage, fp32 scalars and accumulation
 * (the 16-bit op T kernels accumulate on the tensor cores, in fp32; fp64 op T runs on the fp64
 * tensor cores). */
XGEMV_API xgemv_status xgemv_sgemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                        const float *alpha, const float *A, int64_t lda,
                                        const float *X, int64_t ldx, const float *beta, float *Y,
                                        int64_t ldy, int64_t nrhs);
XGEMV_API xgemv_status xgemv_dgemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                        const double *alpha, const double *A, int64_t lda,
                                        const double *X, int64_t ldx, const double *beta,
                                        double *Y, int64_t ldy, int64_t nrhs);
XGEMV_API xgemv_status xgemv_hgemv_nrhs(xgemv_handle handle, char trans, int64_t m, int64_t n,
                                        const float *alpha, const xgemv_half *A, int64_t lda,
                                        const xgemv_half *X, int64_t ldx, const float *beta,
                                        xgemv_half *Y, int64_t ldy, int64_t nrhs);
XGEMV_API xgemv_status xgemv_bf16gemv_nrhs(xgemv_handle handle, char trans, int64_t m,
                                           int64_t n, const float *alpha,
                                           const xgemv_bfloat16 *A, int64_t lda,
                                           const xgemv_bfloat16 *X, int64_t ldx,
                                           const float *beta, xgemv_bfloat16 *Y, int64_t ldy,
                                           int64_t nrhs);

/* Bias epilogue, one entry point for every element type: Y := alpha*op(A)*X + beta*Y + bias for
 * nrhs column-major vectors, laid out as for the calls above (X rows: n for 'N', m for 'T'/'C';
 * Y rows: the other one). A, X, Y and bias are all of `type` (XGEMV_R_32F, _64F, _16F or _16BF);
 * alpha and beta are float (double for XGEMV_R_64F), in the handle's pointer mode. bias is a
 * contiguous device vector of the rows of Y, the same for every column, or NULL for none, which
 * gives exactly the result of the call without a bias. The bias is added to the value the call
 * without it computes, in the accumulation type (fp32; fp64 for fp64), and the sum is rounded
 * once to `type`. The gemv rules hold column by column (beta == 0 never reads Y, alpha == 0
 * reads neither A nor X, NaN/Inf propagate), except that a bias leaves two quick returns
 * computing: alpha == 0 and beta == 1 gives Y := Y + bias, and an empty reduction (m == 0 for
 * 'T'/'C', n == 0 for 'N') gives Y := beta*Y + bias, reading neither A, X nor alpha. Quick
 * returns (nothing read or written): no rows of Y, nrhs == 0, and without a bias those of gemv.
 * Checks, first failure wins: type (XGEMV_STATUS_INVALID_VALUE), then trans 1, m 2, n 3, lda 6,
 * ldx 8, ldy 11, nrhs 12 as for the calls above, then the handle (INVALID_HANDLE) and the
 * pointers (NULL_POINTER for alpha, beta and Y, and for A and X where they are read; a NULL bias
 * is none). Kernels: nrhs == 1 runs the single-vector kernels, as xgemv_?gemv (in a
 * batch-invariant handle, those of nrhs >= 2); nrhs >= 2 the several-vector kernels, so that
 * column j of Y has the same bits whatever nrhs >= 2 is. */
XGEMV_API xgemv_status xgemv_gemv_bias(xgemv_handle handle, xgemv_datatype type, char trans,
                                       int64_t m, int64_t n, const void *alpha, const void *A,
                                       int64_t lda, const void *X, int64_t ldx, const void *beta,
                                       void *Y, int64_t ldy, int64_t nrhs, const void *bias);

/* Kernel variants. Every call runs one variant of an ordered table, chosen from the problem's
 * shape, types and the device; these functions list the table, force a variant on a handle (for
 * tests and benchmarks: a forced variant runs every problem it can compute, fast or not) and say
 * which variant ran. */
XGEMV_API int xgemv_kernel_variant_count(void);
/* The name of variant `index` (0 .. count - 1), or NULL. */
XGEMV_API const char *xgemv_kernel_variant_name(int index);
/* Forces the named variant for the handle's calls; NULL or "" restores the automatic choice.
 * XGEMV_STATUS_INVALID_VALUE for an unknown name. A call the forced variant cannot compute
 * returns XGEMV_STATUS_NOT_SUPPORTED and touches nothing. The environment variable
 * XGEMV_KERNEL_VARIANT=name forces it on every handle xgemv_create makes (an unknown name makes
 * xgemv_create fail with XGEMV_STATUS_INVALID_VALUE). */
XGEMV_API xgemv_status xgemv_set_kernel_variant(xgemv_handle handle, const char *name);
/* The name of the variant that ran the handle's last call, or NULL when that call launched
 * nothing (a quick return, an error) or there was none. */
XGEMV_API const char *xgemv_get_last_kernel_variant(xgemv_handle handle);

/* batch_count independent problems of one shape in one launch: problem b uses A + b*stride_a,
 * x + b*stride_x, y + b*stride_y (strides in elements) and the same alpha, beta. batch_count == 0
 * is a quick return; the argument checks of the single call come first. */
XGEMV_API xgemv_status xgemv_sgemv_strided_batched(
    xgemv_handle handle, char trans, int64_t m, int64_t n,
    const float *alpha, const float *A, int64_t lda, int64_t stride_a, const float *x,
    int64_t incx, int64_t stride_x, const float *beta, float *y, int64_t incy, int64_t stride_y,
    int64_t batch_count);
XGEMV_API xgemv_status xgemv_dgemv_strided_batched(
    xgemv_handle handle, char trans, int64_t m, int64_t n,
    const double *alpha, const double *A, int64_t lda, int64_t stride_a, const double *x,
    int64_t incx, int64_t stride_x, const double *beta, double *y, int64_t incy,
    int64_t stride_y, int64_t batch_count);
XGEMV_API xgemv_status xgemv_hgemv_strided_batched(
    xgemv_handle handle, char trans, int64_t m, int64_t n,
    const float *alpha, const xgemv_half *A, int64_t lda, int64_t stride_a, const xgemv_half *x,
    int64_t incx, int64_t stride_x, const float *beta, xgemv_half *y, int64_t incy,
    int64_t stride_y, int64_t batch_count);
XGEMV_API xgemv_status xgemv_bf16gemv_strided_batched(
    xgemv_handle handle, char trans, int64_t m, int64_t n,
    const float *alpha, const xgemv_bfloat16 *A, int64_t lda, int64_t stride_a,
    const xgemv_bfloat16 *x, int64_t incx, int64_t stride_x, const float *beta,
    xgemv_bfloat16 *y, int64_t incy, int64_t stride_y, int64_t batch_count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XGEMV_XGEMV_H */
