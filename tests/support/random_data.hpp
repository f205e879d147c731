// Fast, seeded random data for tests: every case gets fresh values, and a failing case can be
// replayed from the seed it prints.
#pragma once

#include <cstdint>
#include <string_view>

#include "element_types.hpp"

namespace xgemv_test {

// splitmix64: tiny, fast (test matrices reach 10^8 elements) and good enough for test data.
class RandomSource {
 public:
  explicit RandomSource(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * (next() >> 11) * 0x1p-53; }

  // Uniform in [-1, 1), rounded to T.
  template <class T>
  T element() {
    return from_double<T>(uniform(-1.0, 1.0));
  }

  // A scalar that is neither 0 nor 1 in magnitude: 0.25 <= |s| < 2, either sign.
  double nontrivial_scalar() {
    const double magnitude = uniform(0.25, 2.0);
    return (next() & 1) ? magnitude : -magnitude;
  }

  // Uniform integer in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

// A distinct, reproducible seed for case `index` of a table named `label` (FNV-1a of the label).
inline uint64_t case_seed(std::string_view label, uint64_t index) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (char c : label) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  return hash + index;
}

}  // namespace xgemv_test
