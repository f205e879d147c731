// The host reference: OpenBLAS, called through CBLAS.
#pragma once

#include <string>
#include <vector>

#include "element_types.hpp"
#include "gemv_layout.hpp"

namespace xgemv_test {

// y := alpha*op(A)*x + beta*y by cblas_sgemv (fp32, and fp16/bf16 upcast to fp32) or cblas_dgemv
// (fp64). a, x, y point at the first element in memory as for BLAS; y spans s.y_extent()
// elements. Returns the whole y storage in the scalar type: 16-bit results are not rounded back.
template <class T>
std::vector<ScalarOf<T>> openblas_gemv(const GemvShape &s, ScalarOf<T> alpha, const T *a,
                                       const T *x, ScalarOf<T> beta, const T *y);

// Y := alpha*op(A)*X + beta*Y for rhs.count columns by cblas_sgemm (fp32, and fp16/bf16 upcast
// to fp32) or cblas_dgemm: the host reference of the few-right-hand-side calls. X and Y are
// column-major with leading dimensions rhs.ldx and rhs.ldy (s.incx and s.incy are not used); Y
// spans rhs.as_batch().y_span(s) elements. Returns the whole Y storage in the scalar type.
template <class T>
std::vector<ScalarOf<T>> openblas_gemm(const GemvShape &s, const RhsLayout &rhs,
                                       ScalarOf<T> alpha, const T *a, const T *x,
                                       ScalarOf<T> beta, const T *y);

// The file that provides cblas_sgemv in this process, symbolic links resolved.
std::string openblas_library_path();

// openblas_get_config(): version, target and threading of the OpenBLAS build in use.
std::string openblas_config();

}  // namespace xgemv_test
