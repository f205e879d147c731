// Device-side check that a buffer filled by fill_hashed_integers still holds its values, for
// buffers too large to download (the huge-problem tests).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace xgemv_test {

// How many elements of data[0, count) differ from hashed_integer(seed, i, lo, hi), not counting
// the elements of a strided vector at offsets k * skip_stride, k < skip_length (skip_length 0:
// none): those are the ones a call was allowed to write. Synchronises `stream`.
int64_t count_changed_hashed(const float *data, int64_t count, uint64_t seed, int32_t lo,
                             int32_t hi, int64_t skip_stride, int64_t skip_length,
                             cudaStream_t stream);

}  // namespace xgemv_test
