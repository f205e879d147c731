// Checking a library's output against the fp64 reference before it is timed.
#pragma once

#include <vector>

#include "case.hpp"

namespace xgemv::bench {

// Largest |y - y_ref| / max|y_ref| a correct GEMV of this case stays under: the rounding of
// each stored output plus a random-walk accumulation error (the data have random signs), with
// a safety factor of 4. Absolute when y_ref is all zeros.
double tolerance(const Case& c);

struct CheckResult {
  double max_error = 0;  // max |y - y_ref| / max|y_ref|; +inf for NaN/Inf in y
  double tolerance = 0;
  bool passed = false;
};
CheckResult compare_to_reference(const Case& c, const std::vector<double>& y,
                                 const std::vector<double>& y_ref);

// The logical elements of a strided vector (first element in memory first, BLAS rule),
// converted to double.
template <class T>
std::vector<double> gather_vector(const T* data, int64_t length, int64_t inc) {
  std::vector<double> values(static_cast<size_t>(length));
  for (int64_t k = 0; k < length; ++k)
    values[k] = static_cast<double>(data[vector_offset(k, length, inc)]);
  return values;
}

}  // namespace xgemv::bench
