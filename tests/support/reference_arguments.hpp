// The BLAS arguments of a GemvShape as a reference library takes them: its value of the op, and
// 32-bit integers. Anything a reference cannot take throws, naming the reference.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace xgemv_test {

// The library's value of op `trans` among its three, for N, T and C (either case).
template <class Op>
Op reference_op(char trans, Op n, Op t, Op c, const char *reference) {
  switch (trans) {
    case 'N':
    case 'n': return n;
    case 'T':
    case 't': return t;
    case 'C':
    case 'c': return c;
  }
  throw std::invalid_argument(std::string(reference) + " reference: trans '" + trans + "'");
}

// `value` as the library's integer type Int (32 bits).
template <class Int>
Int reference_int(int64_t value, const char *reference) {
  if (value < std::numeric_limits<Int>::min() || value > std::numeric_limits<Int>::max())
    throw std::out_of_range(std::string(reference) +
                            " reference: argument does not fit its integer");
  return static_cast<Int>(value);
}

}  // namespace xgemv_test
