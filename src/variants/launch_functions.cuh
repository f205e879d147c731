// The definition of launch_functions (type_sets.hpp), for the instance translation units only:
// where it is visible, every variant's kernels for a set are compiled.
#pragma once

#include "variant_table.cuh"

namespace xgemv {

template <class Set>
const LaunchFunction *launch_functions() noexcept {
  return KernelVariants::launch_functions(Set{});
}

}  // namespace xgemv
