// Reading a cublasLtMatmul call's descriptors (opaque to the caller and to us) with the real
// cuBLASLt's getters, into the plain LtMatmul that lt_routing.hpp decides on.
#pragma once

#include <optional>

#include <cublasLt.h>

#include "lt_routing.hpp"

namespace xgemv::cublas_dropin {

// The call, or nullopt with the reason (a getter failed: the call stays with cuBLASLt, which
// reports on its own descriptors).
std::optional<LtMatmul> read_lt_matmul(cublasLtMatmulDesc_t operation, const void *alpha,
                                       const void *a, cublasLtMatrixLayout_t a_layout,
                                       const void *b, cublasLtMatrixLayout_t b_layout,
                                       const void *beta, const void *c,
                                       cublasLtMatrixLayout_t c_layout, void *d,
                                       cublasLtMatrixLayout_t d_layout,
                                       const char **reason) noexcept;

}  // namespace xgemv::cublas_dropin
