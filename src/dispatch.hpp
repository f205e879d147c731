// The walk over the variant table (variants/variant_table.cuh): which variant runs a problem.
#pragma once

#include "context.hpp"
#include "problem.hpp"

namespace xgemv {

int kernel_variant_count() noexcept;
const char *kernel_variant_name(int index) noexcept;  // nullptr out of range
int find_kernel_variant(const char *name) noexcept;   // -1 if no variant has that name

// Plans and launches the problem with the handle's forced variant, or with the first variant
// that implements and suits it (else the last that implements it). XGEMV_STATUS_NOT_SUPPORTED
// when the forced variant does not implement it or its element types are not served.
xgemv_status launch_variant(xgemv_context &handle, const GemvProblem &problem,
                            cudaStream_t stream, bool device_scalars) noexcept;

}  // namespace xgemv
