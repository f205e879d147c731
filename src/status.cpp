#include "core.hpp"

namespace xgemv {
namespace {
thread_local cudaError_t last_cuda_error = cudaSuccess;
}

void set_last_cuda_error(cudaError_t error) noexcept { last_cuda_error = error; }

}  // namespace xgemv

extern "C" {

const char *xgemv_status_string(xgemv_status status) {
  switch (status) {
    case XGEMV_STATUS_SUCCESS: return "success";
    case XGEMV_STATUS_INVALID_TRANS: return "invalid argument 1: trans is not N, T or C";
    case XGEMV_STATUS_INVALID_M: return "invalid argument 2: m < 0";
    case XGEMV_STATUS_INVALID_N: return "invalid argument 3: n < 0";
    case XGEMV_STATUS_INVALID_LDA: return "invalid argument 6: lda < max(1, m)";
    case XGEMV_STATUS_INVALID_INCX:
      return "invalid argument 8: incx == 0 (gemv) or ldx < max(1, rows of X) (gemv_nrhs)";
    case XGEMV_STATUS_INVALID_INCY:
      return "invalid argument 11: incy == 0 (gemv) or ldy < max(1, rows of Y) (gemv_nrhs)";
    case XGEMV_STATUS_INVALID_NRHS: return "invalid argument 12: nrhs < 0";
    case XGEMV_STATUS_INVALID_HANDLE: return "invalid handle (NULL)";
    case XGEMV_STATUS_INVALID_POINTER_MODE: return "invalid pointer mode";
    case XGEMV_STATUS_INVALID_BATCH: return "invalid batch count (< 0)";
    case XGEMV_STATUS_NULL_POINTER: return "a pointer the call needs is NULL";
    case XGEMV_STATUS_INVALID_POINTER: return "a pointer is not device-accessible";
    case XGEMV_STATUS_WRONG_DEVICE: return "the current device is not the handle's device";
    case XGEMV_STATUS_NOT_SUPPORTED:
      return "not supported: the forced kernel variant does not implement this problem";
    case XGEMV_STATUS_INVALID_VALUE:
      return "invalid value: an unknown kernel variant name or element type, or a conversion "
             "argument the quantized weight does not take (leading dimension, zero points, "
             "permutation)";
    case XGEMV_STATUS_CUDA_ERROR: return "CUDA runtime error (see xgemv_last_cuda_error)";
    case XGEMV_STATUS_INTERNAL_ERROR: return "internal error";
    case XGEMV_STATUS_NO_DEVICE: return "no NVIDIA driver or GPU found";
    case XGEMV_STATUS_INVALID_SPLIT:
      return "invalid split: layout, result, starts array or rank count (xgemv_nccl)";
    case XGEMV_STATUS_NCCL_ERROR: return "NCCL error (see xgemv_nccl_last_error)";
    case XGEMV_STATUS_INVALID_QFORMAT:
      return "invalid quantized format: unknown format or data type, or a bad combination";
    case XGEMV_STATUS_INVALID_QSHAPE:
      return "invalid quantized shape: outputs or inputs out of range for the format";
    case XGEMV_STATUS_INVALID_GROUP_SIZE:
      return "invalid group size: not one the quantized format takes, or not dividing inputs";
    case XGEMV_STATUS_MISALIGNED: return "misaligned pointer: the call requires a larger alignment";
  }
  return "unknown status";
}

int xgemv_status_argument(xgemv_status status) {
  switch (status) {
    case XGEMV_STATUS_INVALID_TRANS: case XGEMV_STATUS_INVALID_M: case XGEMV_STATUS_INVALID_N:
    case XGEMV_STATUS_INVALID_LDA: case XGEMV_STATUS_INVALID_INCX: case XGEMV_STATUS_INVALID_INCY:
    case XGEMV_STATUS_INVALID_NRHS:
      return static_cast<int>(status);
    default: return 0;
  }
}

cudaError_t xgemv_last_cuda_error(void) { return xgemv::last_cuda_error; }

const char *xgemv_version_string(void) {
#define XGEMV_STR2(x) #x
#define XGEMV_STR(x) XGEMV_STR2(x)
  return XGEMV_STR(XGEMV_VERSION_MAJOR) "." XGEMV_STR(XGEMV_VERSION_MINOR) "." XGEMV_STR(
      XGEMV_VERSION_PATCH);
#undef XGEMV_STR
#undef XGEMV_STR2
}

void xgemv_version(int *major, int *minor, int *patch) {
  if (major) *major = XGEMV_VERSION_MAJOR;
  if (minor) *minor = XGEMV_VERSION_MINOR;
  if (patch) *patch = XGEMV_VERSION_PATCH;
}

}  // extern "C"
