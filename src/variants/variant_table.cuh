// The one dispatch table: every kernel variant, in the order the automatic choice tries them.
// A call runs the first variant that implements the problem and suits it; when none suits, the
// last one that implements it (each family ends with its most general member). Adding a variant
// is its own file and one line here; the GPU tests run every variant on the cases it implements
// (tests/core/gpu/variants_test.cpp).
#pragma once

#include "gemv_n_columns.cuh"
#include "gemv_n_fma.cuh"
#include "gemv_n_mma.cuh"
#include "gemv_n_rows.cuh"
#include "gemv_n_rowtile.cuh"
#include "gemv_t_fma.cuh"
#include "gemv_t_mma.cuh"
#include "gemv_t_rowblock.cuh"
#include "gemv_t_short.cuh"
#include "moe_mma.cuh"
#include "moe_qmma.cuh"
#include "qgemv_mma.cuh"
#include "type_sets.hpp"

namespace xgemv {

// The launch of a variant whose family never serves the set (quantized variants and dense
// sets, dense variants and quantized sets): the dispatch never calls it.
inline cudaError_t launch_not_served(const GemvProblem &, const LaunchPlan &, const LaunchContext &) {
  return cudaErrorNotSupported;
}

template <class... Variants>
struct VariantList {
  static constexpr int kCount = sizeof...(Variants);
  static constexpr KernelVariant kDescriptors[] = {
      {Variants::kName.text, Variants::kFamily, &Variants::implements, &Variants::plan,
       &Variants::suits}...};

  // Only the variants of the set's kind are compiled for it.
  template <class Variant, class TA, class TX, class TY, class TS>
  static constexpr LaunchFunction launch_of() {
    if constexpr (Variant::kReadsCodes == is_quantized(element_type_of<TA>()))
      return &Variant::template launch<TA, TX, TY, TS>;
    else
      return &launch_not_served;
  }

  template <class TA, class TX, class TY, class TS>
  static const LaunchFunction *launch_functions(TypeSet<TA, TX, TY, TS>) noexcept {
    static constexpr LaunchFunction functions[] = {launch_of<Variants, TA, TX, TY, TS>()...};
    return functions;
  }
};

using KernelVariants = VariantList<
    // op T: columns shorter than 128 bytes; then lanes per output from 32 (long reductions)
    // down to 2 (wide matrices)
    GemvTShort, GemvTRowBlock<32>, GemvTRowBlock<16>, GemvTRowBlock<8>, GemvTRowBlock<4>,
    GemvTRowBlock<2>,
    // op N: at most 16 rows; at most 16 columns of a tall A; then 32-lane row tiles (unless
    // their split would end on a long combine that 8-lane tiles avoid), 8-lane tiles
    GemvNRows, GemvNColumns, GemvNRowTile<32>, GemvNRowTile<kNarrowRowTileThreads>,
    // several right-hand sides (and one, in a batch-invariant handle): 16-bit and fp64 op T and
    // op N on the tensor cores, then op T and op N on the CUDA cores for every type
    GemvTMma, GemvNMma, GemvTFma, GemvNFma,
    // quantized weights, 1 to 16 vectors per pass, on the tensor cores
    QgemvMma,
    // mixture-of-experts projections: dense 16-bit experts, quantized experts
    MoeMma, MoeQmma>;

}  // namespace xgemv
