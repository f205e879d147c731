// The launches of a mixture-of-experts call (a routed problem, problem.hpp), host side: how many
// tokens one launch takes, its grid, and the launches over consecutive tokens. A token's results
// never depend on which launch carries it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "launch/launch_plan.hpp"

namespace xgemv {

// Pairs (tokens * top_k) one launch decodes into a block's shared memory.
inline constexpr int kMaxRoutedPairs = 1024;
// The most experts a projection may have (a bit each in a block's shared memory) and the most
// each token may choose.
inline constexpr int64_t kMaxExperts = 8192;
inline constexpr int64_t kMaxTopK = 32;

// Outputs of the up projection: `rows`, or rows / 2 after a SwiGLU.
constexpr int64_t up_outputs(MoeActivation activation, int64_t rows) {
  return activation == MoeActivation::kIdentity ? rows : rows / 2;
}

// Output tiles of a routed kernel whose tiles are tile_rows rows of the weight: up with an
// activation, each tile's rows are the gate and up rows of tile_rows / 2 outputs.
constexpr int64_t routed_output_tiles(const GemvProblem &p, int64_t tile_rows) {
  const bool gated = !p.routing.down && p.routing.activation != MoeActivation::kIdentity;
  return gated ? ceil_div(p.n / 2, tile_rows / 2) : ceil_div(p.n, tile_rows);
}

// The fp32 sums of the down projection's pairs: tokens * top_k * outputs.
constexpr std::size_t routed_partial_bytes(int64_t tokens, int64_t top_k, int64_t outputs) {
  return std::size_t(tokens) * std::size_t(top_k) * std::size_t(outputs) * sizeof(float);
}

// Tokens one launch takes: its pairs decode in a block; down, their sums fit the workspace and
// their arrival counters (one per token and output tile) the handle's. 0: not even one.
inline int64_t routed_tokens_per_launch(const GemvProblem &p, int64_t tiles) {
  const RoutedOperand &r = p.routing;
  int64_t tokens = std::min<int64_t>(p.routing.tokens, kMaxRoutedPairs / r.top_k);
  if (r.down) {
    const std::size_t bytes = r.partials != nullptr ? r.partial_bytes : kSplitPartialBytes;
    tokens = std::min<int64_t>(tokens, int64_t(bytes / routed_partial_bytes(1, r.top_k, p.n)));
    tokens = std::min<int64_t>(tokens, kSplitTileCounters / tiles);
  }
  return tokens;
}

// Output tiles one block of a routed launch takes (in turn, its routing decoded once for them):
// as many as leave the launch kRoutedWaves rounds of the device's resident blocks, up to
// kMaxRoutedTilesPerBlock. The slots are an upper bound of the experts the ids choose.
inline constexpr int64_t kRoutedWaves = 4, kMaxRoutedTilesPerBlock = 8;
inline int64_t routed_tiles_per_block(int64_t tiles, int64_t slots, const DeviceLimits &device,
                                      int blocks_per_sm) {
  const int64_t resident = int64_t(device.sm_count) * blocks_per_sm;
  return std::clamp<int64_t>(tiles * slots / (kRoutedWaves * resident), 1,
                             kMaxRoutedTilesPerBlock);
}

// The grid of a routed launch: `tile_blocks` on x (each a run of consecutive output tiles), one
// expert slot on y per expert that its `tokens` can choose (no more than their pairs, nor the
// experts).
inline LaunchPlan routed_plan(const GemvProblem &p, int64_t tile_blocks, int64_t tokens,
                              int threads) {
  const int64_t slots = std::min(tokens * p.routing.top_k, p.routing.experts);
  return {dim3(unsigned(tile_blocks), unsigned(std::max<int64_t>(slots, 1)), 1), dim3(threads),
          {}};
}

// The plan of a routed call's first (largest) launch, from which every launch takes its tile
// blocks.
inline LaunchPlan routed_call_plan(const GemvProblem &p, int64_t tiles, int threads,
                                   const DeviceLimits &device, int blocks_per_sm) {
  const int64_t tokens = routed_tokens_per_launch(p, tiles);
  const int64_t slots = std::min(tokens * p.routing.top_k, p.routing.experts);
  const int64_t per_block = routed_tiles_per_block(tiles, slots, device, blocks_per_sm);
  return routed_plan(p, ceil_div(tiles, per_block), tokens, threads);
}

// Runs launch(part, plan) for consecutive tokens, as many at a time as one launch takes (x, y,
// ids and weights of part moved on to its first token), each on the tile blocks of the call's
// plan; TX, TY: x's and y's element types.
template <class TX, class TY, class Launch>
cudaError_t for_each_routed_launch(const GemvProblem &p, int64_t tiles, const LaunchPlan &call,
                                   Launch &&launch) {
  const RoutedOperand &r = p.routing;
  const int64_t per_launch = routed_tokens_per_launch(p, tiles);
  if (per_launch <= 0) return cudaErrorNotSupported;
  const int id_bytes = r.ids_64 ? 8 : 4;
  const int weight_bytes = element_bytes(r.weight_type);
  for (int64_t t0 = 0; t0 < r.tokens; t0 += per_launch) {
    GemvProblem part = p;
    const int64_t tokens = std::min(per_launch, r.tokens - t0), pairs0 = t0 * r.top_k;
    part.routing.tokens = tokens;
    part.rhs_count = tokens;
    part.routing.ids = static_cast<const char *>(r.ids) + pairs0 * id_bytes;
    if (r.weights != nullptr)
      part.routing.weights = static_cast<const char *>(r.weights) + pairs0 * weight_bytes;
    part.x.data = static_cast<const TX *>(p.x.data) + (r.down ? pairs0 : t0) * p.x.ld;
    part.y.data = static_cast<TY *>(p.y.data) + (r.down ? t0 : pairs0) * p.y.ld;
    const LaunchPlan plan = routed_plan(part, call.grid.x, tokens, int(call.block.x));
    if (const cudaError_t error = launch(part, plan); error != cudaSuccess)
      return error;
  }
  return cudaSuccess;
}

}  // namespace xgemv
