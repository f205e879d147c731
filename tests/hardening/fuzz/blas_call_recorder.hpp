// Stands in for xgemv::blas::run_gemv (interface/blas/blas_routing.cpp), which would ask where
// the arrays live and run the call: in the fuzz build a call that passed the checks is recorded
// instead, so its arguments are compared with the reference while its poisoned pointers are
// never touched.
#pragma once

#include <optional>

#include "blas_routing.hpp"

namespace xgemv_fuzz {

template <class T>
struct GemvRecord {
  int calls = 0;
  const char *entry = nullptr;
  std::optional<xgemv::CheckedProblem> last;
  // The scalars' values when recorded: a CBLAS call's live only during the call.
  T alpha{}, beta{};
};

// The calls that reached run_gemv<T> since the last reset.
template <class T>
inline GemvRecord<T> gemv_record;

}  // namespace xgemv_fuzz
