// Marks the helpers that CUDA code may also call on the device (the bench's kernels, the hashed
// fills); for any other compiler they are plain host functions.
#pragma once

#ifdef __CUDACC__
#define XGEMV_TEST_HOST_DEVICE __host__ __device__
#else
#define XGEMV_TEST_HOST_DEVICE
#endif
