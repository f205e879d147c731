// The passes of the several-right-hand-side variants, host side: at most kMaxRhsPerPass vectors
// a launch, and a batch in one launch where the split workspace holds every item's sums.
#pragma once

#include <algorithm>

#include "launch/launch_plan.hpp"

namespace xgemv {

// Vectors one launch carries; more are computed in further passes, each reading A again.
inline constexpr int kMaxRhsPerPass = 16;

// Runs launch_pass(pass) for every kPassVectors vectors of the problem (the vectors of each
// pass starting at x + c0 * x.ld, y + c0 * y.ld), in order, on the same stream.
template <class TX, class TY, int kPassVectors, class LaunchPass>
cudaError_t for_each_rhs_pass(const GemvProblem &problem, LaunchPass &&launch_pass) {
  static_assert(kPassVectors <= kMaxRhsPerPass);
  for (int64_t c0 = 0; c0 < problem.rhs_count; c0 += kPassVectors) {
    GemvProblem pass = problem;
    pass.rhs_count = std::min<int64_t>(kPassVectors, problem.rhs_count - c0);
    if (c0 > 0) {
      pass.x.data = static_cast<const TX *>(problem.x.data) + c0 * problem.x.ld;
      pass.y.data = static_cast<TY *>(problem.y.data) + c0 * problem.y.ld;
    }
    if (const cudaError_t error = launch_pass(pass); error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

// Runs launch(part, plan) over the passes of kPassVectors vectors of the problem. The
// several-vector variants plan a batch as one problem (their bits depend on the shape alone),
// so a batch runs in one launch when the workspace holds every item's partial sums
// (tile_values of accumulator_bytes per tile and split), and otherwise one launch per item,
// with the same bits.
template <class TA, class TX, class TY, int kPassVectors = kMaxRhsPerPass, class Launch>
cudaError_t for_each_rhs_launch(const GemvProblem &problem, const LaunchPlan &plan,
                                int64_t tile_values, int accumulator_bytes, Launch &&launch) {
  const int64_t tiles = int64_t(plan.grid.x) * problem.batch_count;
  const bool one_launch =
      plan.split.count == 1 ||
      (tiles <= kSplitTileCounters &&
       tiles * plan.split.count * tile_values * accumulator_bytes <=
           int64_t(kSplitPartialBytes));
  if (one_launch)
    return for_each_rhs_pass<TX, TY, kPassVectors>(
        problem, [&](const GemvProblem &pass) { return launch(pass, plan); });
  LaunchPlan single = plan;
  single.grid.z = 1;
  for (int64_t b = 0; b < problem.batch_count; ++b) {
    GemvProblem item = problem;
    item.batch_count = 1;
    if (problem.pointer_arrays()) {
      item.a.array += b;
      item.x.array += b;
      item.y.array += b;
    } else {
      item.a.data = static_cast<const TA *>(problem.a.data) + b * problem.a.stride;
      item.x.data = static_cast<const TX *>(problem.x.data) + b * problem.x.stride;
      item.y.data = static_cast<TY *>(problem.y.data) + b * problem.y.stride;
    }
    const cudaError_t error = for_each_rhs_pass<TX, TY, kPassVectors>(
        item, [&](const GemvProblem &pass) { return launch(pass, single); });
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace xgemv
