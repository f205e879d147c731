// What a kernel variant is to the dispatch: a descriptor in one ordered table
// (variant_table.cuh). Each variant says which problems it can compute (implements), plans its
// launch from the problem and the device (plan), says whether the automatic choice should take
// it (suits, planning when it does), and launches for each element-type set (launch_functions, one translation unit
// per set in src/instances/).
#pragma once

#include "launch/launch_plan.hpp"

namespace xgemv {

// A variant's launch for one element-type set.
using LaunchFunction = cudaError_t (*)(const GemvProblem &problem, const LaunchPlan &plan,
                                       const LaunchContext &context);

// Which calls a variant serves. A call runs on one family only: mixture-of-experts calls on the
// routed family (dense or quantized experts); quantized weights on the quantized family; several
// right-hand sides (and, in a batch-invariant handle, single vectors) on the
// several-right-hand-side family; other single vectors on the single-vector family. The choice
// and plan of a several-vector, quantized or routed variant never depend on rhs_count (nor on
// the tokens), so that each column's bits do not either.
enum class VariantFamily { kSingleVector, kSeveralRhs, kQuantized, kRouted };

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

}  // namespace xgemv
