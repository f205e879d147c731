// The mixture-of-experts suite (--suite moe) without a GPU: the MoE layers of published models,
// the routings of T tokens (uniform, skewed), the experts a routing touches and the bytes a call
// of xgemv_moe.h reads, the cases of a command line, what the check of a call compares, and the
// suite's records. See bench/README.md (Mixture of experts).
#pragma once

#include <xgemv/xgemv_quant.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "measure.hpp"
#include "random_values.hpp"
#include "record.hpp"
#include "support/moe_reference.hpp"
#include "weights.hpp"

namespace xgemv::bench {

struct Options;

// The MoE layer of a published model: `experts` experts of hidden size H and intermediate size I,
// each token routed to `top_k` of them.
struct MoeModel {
  std::string name;  // used in --model and in tags: qwen3-30b-a3b
  int64_t experts = 0, hidden = 0, intermediate = 0, top_k = 0;
};
const std::vector<MoeModel>& moe_models();
const MoeModel* find_moe_model(const std::string& name);

// Tokens of a call by default (--tokens takes any positive numbers).
inline constexpr int64_t kMoeTokens[] = {1, 2, 4, 8, 16, 32, 64};
// Weight formats by default (--weights; bf16 is the dense experts).
inline constexpr const char* kMoeFormats[] = {"bf16", "int4-g128"};

enum class RoutingKind { uniform, skewed };
inline constexpr RoutingKind kRoutingKinds[] = {RoutingKind::uniform, RoutingKind::skewed};
std::string_view routing_name(RoutingKind kind);
std::optional<RoutingKind> parse_routing(std::string_view name);
// skewed: the expert of popularity rank r is drawn with weight 1 / (r + 1)^kSkewExponent.
inline constexpr double kSkewExponent = 1.2;

// The routing of one call as the calls read it: `top_k` distinct experts per token and their
// weights.
struct MoeRouting {
  int64_t tokens = 0, top_k = 0;
  std::vector<int32_t> ids;    // [tokens][top_k]
  std::vector<float> weights;  // [tokens][top_k], positive, each token's summing to 1
};
// uniform: each token's experts uniformly at random; skewed: drawn without replacement with
// probability proportional to 1 / (rank + 1)^kSkewExponent over a random permutation of the
// experts, one permutation for all the routing's tokens (its own per routing, so that the hot
// experts of successive calls differ, as a model's next layer has other experts). The same
// arguments give the same routing.
MoeRouting make_routing(RoutingKind kind, int64_t experts, int64_t tokens, int64_t top_k,
                        uint64_t seed);

// A routing's pairs (t * top_k + j) grouped by expert, the experts in order of first choice: the
// per-expert GEMMs of a cuBLAS MoE, each on its pairs' rows gathered contiguously.
struct ExpertGroup {
  int32_t expert = 0;
  int64_t first = 0, rows = 0;  // its pairs: pairs[first, first + rows)
};
struct ExpertGroups {
  std::vector<ExpertGroup> groups;  // one per distinct valid expert: the experts a call reads
  std::vector<int64_t> pairs;       // the valid pairs, group after group
};
// Ids outside [0, experts) choose nothing (xgemv_moe.h).
ExpertGroups group_by_expert(const MoeRouting& routing, int64_t experts);

enum class Projection { up, down };
std::string_view projection_name(Projection projection);

// The experts of one projection of a model in one weight format: up [2I][H] (the gate rows, then
// the up rows: XGEMV_MOE_SWIGLU), down [H][I], each row-major.
struct MoeExperts {
  Projection projection = Projection::up;
  int64_t count = 0, outputs = 0, inputs = 0;
  std::optional<WeightFormat> quantized;  // bf16 without
  xgemv_qweight_info info{};              // quantized: each expert's
  xgemv_qweight_layout layout{};          // quantized: each expert's storage
  int64_t expert_bytes = 0;  // one expert: bf16 outputs x inputs x 2; quantized its layout's bytes
  std::string unavailable;   // why the format cannot hold these experts; empty if it can

  int64_t bytes() const { return count * expert_bytes; }
  // Copies of the experts in their storage, kCopyAlignment apart: as many as make kRotationBytes
  // (the calls take them in turn, so that experts smaller than a few L2s are read cold as well).
  int64_t copies() const;
  int64_t copy_stride_bytes() const;
  // The bytes of a call's input and output: up x [T][H] and h [T][k][I]; down h and y [T][H].
  int64_t call_io_bytes(int64_t tokens, int64_t top_k) const;
  // The experts' storage: the copies, and room past them for a ceiling read of a call of up to
  // `tokens` tokens.
  int64_t storage_bytes(int64_t tokens, int64_t top_k) const;
};
MoeExperts moe_experts(const MoeModel& model, Projection projection,
                       const std::optional<WeightFormat>& quantized);

// Seed of the random values of expert `expert` of a projection (random_values.hpp). A quantized
// expert is filled and quantized on its own; a bf16 stack is filled at once, from its first
// expert's seed.
constexpr uint64_t expert_seed(Projection projection, int64_t expert) {
  return kSeedA + ((static_cast<uint64_t>(projection) + 1) << 32) + static_cast<uint64_t>(expert);
}

// A case: both projections of a model's layer at T tokens, one routing kind, one weight format.
struct MoeCase {
  MoeModel model;
  std::optional<WeightFormat> quantized;  // bf16 without
  int64_t tokens = 1;
  RoutingKind routing = RoutingKind::uniform;

  std::string format_name() const;  // bf16, int4-g128, ...
  // Whether the case runs on the experts of `other` (the same model and format).
  bool same_experts(const MoeCase& other) const;
};
// The cases --model (default every MoE model), --weights (default kMoeFormats), --tokens
// (default kMoeTokens) and --routing (default both) ask for, model by model, then format by
// format (each model's experts of a format are made once), then tokens, then routing. Throws
// std::invalid_argument.
std::vector<MoeCase> plan_moe_cases(const Options& options);

// The routings a call rotates through, call after call, so that the experts it reads are cold in
// L2: until their touched experts' bytes reach kRotationBytes, at most kMaxMoeRoutings.
inline constexpr int64_t kMaxMoeRoutings = 64;

// One projection of a case as timed.
struct MoeCall {
  MoeExperts experts;
  int64_t tokens = 0, top_k = 0;
  std::vector<MoeRouting> routings;
  std::vector<ExpertGroups> groups;  // of each routing
  double mean_experts = 0;           // distinct valid experts per routing, over the routings

  // The touched experts' bytes: mean_experts x the bytes of one expert, rounded.
  int64_t touched_bytes() const;
  // What a call must move: the touched experts once, its input and output once.
  int64_t bytes() const;
  // The calls take the routings and the copies of the experts in turn: call i routing i % R on
  // copy i % C, lcm(R, C) calls before they repeat.
  int64_t rotation_calls() const;
  // The ceiling: reads of bytes() from successive offsets of the experts' storage, as many as
  // lie within the copies (at least one, which may run past them by the input and output).
  RotationLayout ceiling_rotation() const;
};
// The routings of a case are the same for both projections and every format: routing r of
// (model, tokens, routing kind) comes from one seed. An unavailable format plans no routing.
MoeCall plan_moe_call(const MoeCase& c, Projection projection);

// "qwen3-30b-a3b bf16, T 4, uniform: up 1536x2048, 28.8 of 128 experts, 0.18 GB, 6 routings,
// 2 copies; down ..." (the --list line).
std::string describe_moe_case(const MoeCase& c);

// The record of one projection of a case, nothing measured yet: suite moe, tag
// "<model>.<up|down>.<routing>", nrhs T, the format, gemvs the mean experts touched, matrix bytes
// the touched experts', bytes what a call moves.
Record moe_record(const MoeCase& c, const MoeCall& call, std::string lib, std::string function,
                  std::string mode);

// --- the check of a call -------------------------------------------------------------------------

// Rows first, first + stride, ..., `count` of them.
struct RowSample {
  int64_t first = 0, stride = 1, count = 0;
  int64_t row(int64_t i) const { return first + i * stride; }
};
// At most kCheckedRows of `rows` rows, spread over all of them an odd stride apart (so they fall
// on every position of a tile of 16 rows): the outputs a check compares.
inline constexpr int64_t kCheckedRows = 128;
RowSample sample_rows(int64_t rows);

// What the check of a call compares, on its first routing: the outputs of its first and last
// tokens (up: h of their pairs; down: y), a sample of each, against the fp64 reference and bounds
// of support/moe_reference on the rows of the experts those tokens chose.
struct MoeCheck {
  std::vector<int64_t> tokens;   // 0 and T - 1
  std::vector<int64_t> pairs;    // their pairs, t * top_k + j, token after token
  std::vector<int32_t> experts;  // the experts of those pairs, in order of first choice
  // The tokens' routing, its ids indexing `experts`.
  xgemv_test::moe::Routing routing;
  RowSample outputs;  // the outputs compared: of h's I values (up) or y's H (down)
  // The rows of each expert the reference reads, as the reference's experts: up the gate rows of
  // the outputs, then their up rows (I further); down the outputs' rows. In the outputs of a
  // per-expert GEMM (cuBLAS's) the same are its columns.
  std::vector<RowSample> expert_rows;

  int64_t reference_rows() const;  // the rows of expert_rows
  // Rows of a [T][rows_per_token] operand that the checked tokens own (x, y: 1; h: top_k).
  std::vector<RowSample> token_rows(int64_t rows_per_token) const;
  // The pairs as tokens of one expert each with weight 1: through reference_down, each pair's
  // product alone (a per-expert GEMM's output).
  xgemv_test::moe::Routing pair_routing() const;
};
MoeCheck plan_check(const MoeCall& call);

// Where the checked pairs' rows lie among a routing's gathered rows (ExpertGroups::pairs).
std::vector<RowSample> gathered_rows(const ExpertGroups& groups, const std::vector<int64_t>& pairs);

// The columns `columns` of each row of `rows` (row_length values each), row after row.
std::vector<double> sample_columns(const std::vector<double>& rows, int64_t row_length,
                                   const std::vector<RowSample>& columns);

// `y` against a reference of a bound per element (its defined elements): fails where any
// |y - value| exceeds its bound (NaN and Inf included); the element furthest past its bound gives
// the error and the tolerance, both over max |value| as the bench's other checks report them.
CheckResult compare_to_bounds(const std::vector<double>& y,
                              const xgemv_test::moe::Reference& reference);

}  // namespace xgemv::bench
