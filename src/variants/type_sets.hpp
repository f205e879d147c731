// The element-type sets xgemv serves (A, x, y, scalars), each instantiated in a translation
// unit of its own (generated from src/element_types.json), and how the dispatch finds a set's
// launch functions.
#pragma once

#include "variant.hpp"

namespace xgemv {

template <class TA, class TX, class TY, class TS>
struct TypeSet {
  static constexpr ElementTypes kTypes = element_types_of<TA, TX, TY, TS>();
};

template <class... Sets>
struct TypeSetList {};

}  // namespace xgemv

// ServedTypeSets and QuantizedTypeSets, generated from src/element_types.json.
#include "variants/type_set_lists.hpp"

namespace xgemv {

// Every variant's launch for one set, in table order. Defined in launch_functions.cuh and
// instantiated only in the generated translation unit of each set, so that the sets build in
// parallel.
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
