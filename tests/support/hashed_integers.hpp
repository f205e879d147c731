// Integer-valued data defined by a hash of the element index: generated on the device at memory
// speed (no host copy of a multi-GiB matrix) and recomputed on the host for an exact reference.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "host_device.hpp"

namespace xgemv_test {

// An integer in [lo, hi] (hi - lo < 2^32) that depends on seed and index only.
XGEMV_TEST_HOST_DEVICE inline int32_t hashed_integer(uint64_t seed, uint64_t index, int32_t lo,
                                                     int32_t hi) {
  uint64_t z = seed ^ (index * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + static_cast<int32_t>(z % static_cast<uint64_t>(hi - lo + 1));
}

// data[i] := hashed_integer(seed, i, lo, hi) for i < count, on `stream`. T: float, double,
// __half or __nv_bfloat16 (values must be exact in T). Returns the launch status.
template <class T>
cudaError_t fill_hashed_integers(T *data, int64_t count, uint64_t seed, int32_t lo, int32_t hi,
                                 cudaStream_t stream);

}  // namespace xgemv_test
