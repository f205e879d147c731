// The element-type sets xgemv serves (A, x, y, scalars), each instantiated in a translation
// unit of its own (src/instances/), and how the dispatch finds a set's launch functions.
#pragma once

#include "variant.hpp"

namespace xgemv {

template <class TA, class TX, class TY, class TS>
struct TypeSet {
  static constexpr ElementTypes kTypes = element_types_of<TA, TX, TY, TS>();
};

template <class... Sets>
struct TypeSetList {};

// fp32, fp64; fp16 and bf16 storage with fp32 scalars, y in 16 bits or in fp32.
using ServedTypeSets =
    TypeSetList<TypeSet<float, float, float, float>, TypeSet<double, double, double, double>,
                TypeSet<__half, __half, __half, float>,
                TypeSet<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float>,
                TypeSet<__half, __half, float, float>,
                TypeSet<__nv_bfloat16, __nv_bfloat16, float, float>>;

// Quantized weights (the codes of xgemv_quant.h) with fp16 or bf16 activations, y in the
// activation type or in fp32.
using QuantizedTypeSets =
    TypeSetList<TypeSet<Int4Code, __half, __half, float>, TypeSet<Int4Code, __half, float, float>,
                TypeSet<Int4Code, __nv_bfloat16, __nv_bfloat16, float>,
                TypeSet<Int4Code, __nv_bfloat16, float, float>,
                TypeSet<Int8Code, __half, __half, float>, TypeSet<Int8Code, __half, float, float>,
                TypeSet<Int8Code, __nv_bfloat16, __nv_bfloat16, float>,
                TypeSet<Int8Code, __nv_bfloat16, float, float>,
                TypeSet<E4M3Code, __half, __half, float>, TypeSet<E4M3Code, __half, float, float>,
                TypeSet<E4M3Code, __nv_bfloat16, __nv_bfloat16, float>,
                TypeSet<E4M3Code, __nv_bfloat16, float, float>>;

// Every variant's launch for one set, in table order. Defined in variant_table.cuh and
// instantiated only in src/instances/, so that each set's kernels build in parallel.
template <class Set>
const LaunchFunction *launch_functions() noexcept;

// The launch functions of the set `types` belongs to, or nullptr if none is served.
template <class... Sets>
const LaunchFunction *launch_functions_for(const ElementTypes &types, TypeSetList<Sets...>) {
  const LaunchFunction *found = nullptr;
  ((found == nullptr && types == Sets::kTypes ? (found = launch_functions<Sets>()) : found), ...);
  return found;
}

}  // namespace xgemv
