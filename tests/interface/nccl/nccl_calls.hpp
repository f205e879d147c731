// The four typed entry points of xgemv_nccl.h as one template, so that the tests of the NCCL
// library are written once for every element type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xgemv/xgemv_nccl.h>

#include "support/element_types.hpp"

namespace xgemv_test {

template <class T>
xgemv_status xgemv_nccl_gemv(xgemv_handle handle, ncclComm_t comm, xgemv_split split,
                             xgemv_result result, const int64_t *starts, char trans, int64_t m,
                             int64_t n, const ScalarOf<T> *alpha, const T *a, int64_t lda,
                             const T *x, int64_t incx, const ScalarOf<T> *beta, T *y,
                             int64_t incy, void *workspace, size_t workspace_bytes) {
  if constexpr (std::is_same_v<T, float>)
    return xgemv_nccl_sgemv(handle, comm, split, result, starts, trans, m, n, alpha, a, lda, x,
                            incx, beta, y, incy, workspace, workspace_bytes);
  else if constexpr (std::is_same_v<T, double>)
    return xgemv_nccl_dgemv(handle, comm, split, result, starts, trans, m, n, alpha, a, lda, x,
                            incx, beta, y, incy, workspace, workspace_bytes);
  else if constexpr (std::is_same_v<T, __half>)
    return xgemv_nccl_hgemv(handle, comm, split, result, starts, trans, m, n, alpha, a, lda, x,
                            incx, beta, y, incy, workspace, workspace_bytes);
  else
    return xgemv_nccl_bf16gemv(handle, comm, split, result, starts, trans, m, n, alpha, a, lda,
                               x, incx, beta, y, incy, workspace, workspace_bytes);
}

inline const char *split_name(xgemv_split split) {
  return split == XGEMV_SPLIT_OUTPUTS ? "outputs split" : "reduction split";
}
inline const char *result_name(xgemv_result result) {
  return result == XGEMV_RESULT_ALL ? "whole y on every rank" : "own block";
}

}  // namespace xgemv_test
