// What a kernel variant is to the dispatch: a descriptor in one ordered table
// (variant_table.cuh). Each variant says which problems it can compute (implements), plans its
// launch from the problem and the device (plan), says whether the automatic choice should take
// it (suits, planning when it does), and launches for each element-type set (launch_functions, one translation unit
// per set in src/instances/).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/split_plan.hpp"
#include "problem.hpp"

namespace xgemv {

// What plans read off the device, once per handle.
struct DeviceLimits {
  int sm_count;
  int block_shared_bytes;  // the most shared memory a block may opt in to
};

// Where and how a call launches, from the handle.
struct LaunchContext {
  cudaStream_t stream;
  kernels::SplitWorkspace workspace;
  bool device_scalars;  // alpha and beta are device pointers
  // Programmatic dependent launch (compute capability 9.0+): the next kernel on the stream may
  // launch while this one runs; every kernel waits for the one before it before reading what
  // that one may write.
  bool programmatic;
  bool early_start;  // stream A before that wait (the handle's early-start mode)
};

struct LaunchPlan {
  dim3 grid, block;
  kernels::SplitPlan split;
  unsigned shared_bytes = 0;  // dynamic shared memory a block
};

// A kernel that takes dynamic shared memory keeps its static shared memory under this (it
// asserts so), so that its plan can tell whether a device fits it and drop the dynamic part
// where not.
inline constexpr unsigned kStaticSharedBytesBound = 16u << 10;
inline bool fits_device(const LaunchPlan &plan, const DeviceLimits &device) {
  return plan.shared_bytes == 0 ||
         int64_t(plan.shared_bytes) + kStaticSharedBytesBound <= device.block_shared_bytes;
}

// A variant's launch for one element-type set.
using LaunchFunction = cudaError_t (*)(const GemvProblem &problem, const LaunchPlan &plan,
                                       const LaunchContext &context);

// Which calls a variant serves. A call runs on one family only: quantized weights on the
// quantized family; several right-hand sides (and, in a batch-invariant handle, single vectors)
// on the several-right-hand-side family; other single vectors on the single-vector family. The
// choice and plan of a several-vector or quantized variant never depend on rhs_count, so that
// each column's bits do not either.
enum class VariantFamily { kSingleVector, kSeveralRhs, kQuantized };

struct KernelVariant {
  const char *name;
  VariantFamily family;
  // Whether the variant computes this problem correctly, whatever its speed: a forced variant
  // runs every problem it implements.
  bool (*implements)(const GemvProblem &problem);
  LaunchPlan (*plan)(const GemvProblem &problem, const DeviceLimits &device);
  // Whether the automatic choice takes it (the first implementing variant that suits wins),
  // and then its plan. Cheap shape tests come before planning: this runs on every call.
  bool (*suits)(const GemvProblem &problem, const DeviceLimits &device, LaunchPlan &plan);
};

// A variant's name, "<family>_<number>", built at compile time from its tile parameter.
struct VariantName {
  char text[32] = {};
};
constexpr VariantName variant_name(const char *family, int number) {
  VariantName name;
  int length = 0;
  while (family[length] != '\0') {
    name.text[length] = family[length];
    ++length;
  }
  name.text[length++] = '_';
  char digits[12] = {};
  int count = 0;
  do {
    digits[count++] = char('0' + number % 10);
    number /= 10;
  } while (number > 0);
  while (count > 0) name.text[length++] = digits[--count];
  return name;
}

// grid.z: batch items, each block looping over every gridDim.z-th one past the grid limit.
inline unsigned grid_z(int64_t batch_count) {
  return unsigned(batch_count < 65535 ? batch_count : 65535);
}

// Elements of A in one 16-byte load.
constexpr int a_elements_per_16_bytes(const GemvProblem &problem) {
  return 16 / element_bytes(problem.types.a);
}

// Whether every column of A starts 16-byte aligned in every batch item (known on the host unless
// A comes as pointer arrays): columns then move in 16-byte loads from their first element.
inline bool a_columns_aligned_16(const GemvProblem &problem) {
  const int64_t bytes = element_bytes(problem.types.a);
  return !problem.pointer_arrays() && reinterpret_cast<uintptr_t>(problem.a.data) % 16 == 0 &&
         problem.a.ld * bytes % 16 == 0 &&
         (problem.batch_count == 1 || problem.a.stride * bytes % 16 == 0);
}

}  // namespace xgemv
