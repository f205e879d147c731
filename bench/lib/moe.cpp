#include "moe.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "options.hpp"
#include "support/random_data.hpp"

namespace xgemv::bench {
namespace {

constexpr int64_t kActivationBytes = 2;  // x, h and y are bf16

bool valid_expert(int64_t id, int64_t experts) { return id >= 0 && id < experts; }

int64_t aligned(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// The experts 0 .. count - 1 in random order.
std::vector<int32_t> shuffled_experts(int64_t count, xgemv_test::RandomSource& random) {
  std::vector<int32_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = count - 1; i > 0; --i)
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(random.integer(0, i))]);
  return order;
}

}  // namespace

const std::vector<MoeModel>& moe_models() {
  // Published configurations: experts, hidden, expert intermediate, experts per token.
  static const std::vector<MoeModel> all = {
      {"qwen3-30b-a3b", 128, 2048, 768, 8}, {"qwen3-235b-a22b", 128, 4096, 1536, 8},
      {"deepseek-v3", 256, 7168, 2048, 8},  {"gpt-oss-120b", 128, 2880, 2880, 4},
      {"mixtral-8x7b", 8, 4096, 14336, 2},  {"olmoe-1b-7b", 64, 2048, 1024, 8},
  };
  return all;
}

const MoeModel* find_moe_model(const std::string& name) {
  for (const MoeModel& model : moe_models())
    if (model.name == name) return &model;
  return nullptr;
}

std::string_view routing_name(RoutingKind kind) {
  return kind == RoutingKind::uniform ? "uniform" : "skewed";
}

std::optional<RoutingKind> parse_routing(std::string_view name) {
  for (RoutingKind kind : kRoutingKinds)
    if (routing_name(kind) == name) return kind;
  return std::nullopt;
}

MoeRouting make_routing(RoutingKind kind, int64_t experts, int64_t tokens, int64_t top_k,
                        uint64_t seed) {
  if (top_k < 1 || top_k > experts)
    throw std::invalid_argument("a routing of " + std::to_string(top_k) + " distinct of " +
                                std::to_string(experts) + " experts");
  xgemv_test::RandomSource random(seed);
  MoeRouting routing{tokens, top_k, {}, {}};
  routing.ids.reserve(static_cast<size_t>(tokens * top_k));
  routing.weights.reserve(routing.ids.capacity());
  std::vector<int32_t> order = shuffled_experts(experts, random);
  std::vector<double> popularity(static_cast<size_t>(experts));
  for (int64_t rank = 0; rank < experts; ++rank)
    popularity[static_cast<size_t>(rank)] = std::pow(static_cast<double>(rank + 1), -kSkewExponent);
  for (int64_t t = 0; t < tokens; ++t) {
    if (kind == RoutingKind::uniform) {
      // A partial shuffle: the first top_k of `order` become a uniform choice of distinct experts.
      for (int64_t j = 0; j < top_k; ++j) {
        std::swap(order[static_cast<size_t>(j)],
                  order[static_cast<size_t>(random.integer(j, experts - 1))]);
        routing.ids.push_back(order[static_cast<size_t>(j)]);
      }
    } else {
      // Without replacement: a chosen rank's weight drops to 0 for the token's next draws.
      std::vector<double> left = popularity;
      double total = std::accumulate(left.begin(), left.end(), 0.0);
      for (int64_t j = 0; j < top_k; ++j) {
        double u = random.uniform(0, total);
        size_t chosen = 0;
        for (size_t rank = 0; rank < left.size(); ++rank) {
          if (left[rank] == 0) continue;
          chosen = rank;  // the last rank still free if rounding leaves u past every weight
          if (u < left[rank]) break;
          u -= left[rank];
        }
        total -= left[chosen];
        left[chosen] = 0;
        routing.ids.push_back(order[chosen]);
      }
    }
    // The weights of a softmax over the chosen: positive, summing to 1.
    std::vector<double> raw(static_cast<size_t>(top_k));
    for (double& w : raw) w = random.uniform(0.05, 1.0);
    const double sum = std::accumulate(raw.begin(), raw.end(), 0.0);
    for (double w : raw) routing.weights.push_back(static_cast<float>(w / sum));
  }
  return routing;
}

ExpertGroups group_by_expert(const MoeRouting& routing, int64_t experts) {
  std::vector<std::vector<int64_t>> pairs_of(static_cast<size_t>(experts));
  std::vector<int32_t> order;  // the experts in order of first choice
  for (size_t pair = 0; pair < routing.ids.size(); ++pair) {
    const int32_t id = routing.ids[pair];
    if (!valid_expert(id, experts)) continue;
    std::vector<int64_t>& pairs = pairs_of[static_cast<size_t>(id)];
    if (pairs.empty()) order.push_back(id);
    pairs.push_back(static_cast<int64_t>(pair));
  }
  ExpertGroups grouped;
  for (int32_t id : order) {
    const std::vector<int64_t>& pairs = pairs_of[static_cast<size_t>(id)];
    grouped.groups.push_back(
        {id, static_cast<int64_t>(grouped.pairs.size()), static_cast<int64_t>(pairs.size())});
    grouped.pairs.insert(grouped.pairs.end(), pairs.begin(), pairs.end());
  }
  return grouped;
}

std::string_view projection_name(Projection projection) {
  return projection == Projection::up ? "up" : "down";
}

int64_t MoeExperts::call_io_bytes(int64_t tokens, int64_t top_k) const {
  const int64_t elements = projection == Projection::up
                               ? tokens * inputs + tokens * top_k * (outputs / 2)
                               : tokens * top_k * inputs + tokens * outputs;
  return elements * kActivationBytes;
}

int64_t MoeExperts::copy_stride_bytes() const {
  return aligned(std::max<int64_t>(1, bytes()), kCopyAlignment);
}

int64_t MoeExperts::copies() const {
  return std::max<int64_t>(1, (kRotationBytes + copy_stride_bytes() - 1) / copy_stride_bytes());
}

int64_t MoeExperts::storage_bytes(int64_t tokens, int64_t top_k) const {
  // The ceiling reads whole 16-byte words.
  return aligned(copies() * copy_stride_bytes() + call_io_bytes(tokens, top_k) + 16,
                 kCopyAlignment);
}

MoeExperts moe_experts(const MoeModel& model, Projection projection,
                       const std::optional<WeightFormat>& quantized) {
  MoeExperts experts;
  experts.projection = projection;
  experts.count = model.experts;
  experts.outputs = projection == Projection::up ? 2 * model.intermediate : model.hidden;
  experts.inputs = projection == Projection::up ? model.hidden : model.intermediate;
  experts.quantized = quantized;
  if (!quantized) {
    experts.expert_bytes = experts.outputs * experts.inputs * kActivationBytes;
    return experts;
  }
  experts.info = weight_info(*quantized, Dtype::bf16, experts.outputs, experts.inputs);
  if (const xgemv_status status = xgemv_qweight_get_layout(&experts.info, &experts.layout);
      status != XGEMV_STATUS_SUCCESS)
    experts.unavailable = xgemv_status_string(status);
  else
    experts.expert_bytes = static_cast<int64_t>(experts.layout.bytes);
  return experts;
}

std::string MoeCase::format_name() const { return quantized ? quantized->name : "bf16"; }

bool MoeCase::same_experts(const MoeCase& other) const {
  return model.name == other.model.name && format_name() == other.format_name();
}

std::vector<MoeCase> plan_moe_cases(const Options& options) {
  for (const std::string& name : options.models)
    if (!find_moe_model(name)) throw std::invalid_argument("unknown --model " + name);
  std::vector<std::optional<WeightFormat>> formats;
  std::vector<std::string> format_names;
  for (const std::string& name :
       options.weights.empty()
           ? std::vector<std::string>(std::begin(kMoeFormats), std::end(kMoeFormats))
           : options.weights) {
    if (std::find(format_names.begin(), format_names.end(), name) != format_names.end()) continue;
    if (name == "bf16") {
      formats.emplace_back(std::nullopt);
    } else if (const std::optional<WeightFormat> format = parse_weight_format(name)) {
      formats.emplace_back(format);
    } else {
      throw std::invalid_argument("unknown --weights " + name);
    }
    format_names.push_back(name);
  }
  std::vector<int64_t> tokens = options.tokens;
  if (tokens.empty()) tokens.assign(std::begin(kMoeTokens), std::end(kMoeTokens));
  for (int64_t count : tokens)
    if (count < 1) throw std::invalid_argument("--tokens must be positive");
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  std::vector<RoutingKind> routings;
  for (RoutingKind kind : kRoutingKinds) {
    const bool wanted =
        options.routings.empty() || std::find(options.routings.begin(), options.routings.end(),
                                              routing_name(kind)) != options.routings.end();
    if (wanted) routings.push_back(kind);
  }
  for (const std::string& name : options.routings)
    if (!parse_routing(name)) throw std::invalid_argument("unknown --routing " + name);

  std::vector<MoeCase> cases;
  const auto& wanted = options.models;
  for (const MoeModel& model : moe_models()) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), model.name) == wanted.end())
      continue;
    for (const std::optional<WeightFormat>& format : formats)
      for (int64_t count : tokens)
        for (RoutingKind kind : routings) cases.push_back({model, format, count, kind});
  }
  return cases;
}

int64_t MoeCall::touched_bytes() const {
  return std::llround(mean_experts * static_cast<double>(experts.expert_bytes));
}

int64_t MoeCall::bytes() const { return touched_bytes() + experts.call_io_bytes(tokens, top_k); }

int64_t MoeCall::rotation_calls() const {
  return std::lcm(static_cast<int64_t>(routings.size()), experts.copies());
}

RotationLayout MoeCall::ceiling_rotation() const {
  const int64_t region = experts.copies() * experts.copy_stride_bytes();
  RotationLayout layout;
  layout.copy_stride_bytes = aligned(std::max<int64_t>(1, bytes()), kCopyAlignment);
  layout.copies = bytes() <= region ? (region - bytes()) / layout.copy_stride_bytes + 1 : 1;
  return layout;
}

MoeCall plan_moe_call(const MoeCase& c, Projection projection) {
  MoeCall call;
  call.experts = moe_experts(c.model, projection, c.quantized);
  call.tokens = c.tokens;
  call.top_k = c.model.top_k;
  if (!call.experts.unavailable.empty()) return call;
  const std::string label =
      c.model.name + "/" + std::to_string(c.tokens) + "/" + std::string(routing_name(c.routing));
  int64_t touched = 0, experts_read = 0;
  while (static_cast<int64_t>(call.routings.size()) < kMaxMoeRoutings && touched < kRotationBytes) {
    call.routings.push_back(make_routing(c.routing, c.model.experts, c.tokens, c.model.top_k,
                                         xgemv_test::case_seed(label, call.routings.size())));
    call.groups.push_back(group_by_expert(call.routings.back(), c.model.experts));
    const auto experts = static_cast<int64_t>(call.groups.back().groups.size());
    experts_read += experts;
    touched += experts * call.experts.expert_bytes;
  }
  call.mean_experts = static_cast<double>(experts_read) / static_cast<double>(call.routings.size());
  return call;
}

std::string describe_moe_case(const MoeCase& c) {
  std::string text = c.model.name + " " + c.format_name() + ", T " + std::to_string(c.tokens) +
                     ", " + std::string(routing_name(c.routing));
  for (Projection projection : {Projection::up, Projection::down}) {
    const MoeCall call = plan_moe_call(c, projection);
    const MoeExperts& experts = call.experts;
    text += (projection == Projection::up ? ": " : "; ") +
            std::string(projection_name(projection)) + " " + std::to_string(experts.outputs) + "x" +
            std::to_string(experts.inputs);
    if (!experts.unavailable.empty()) {
      text += " (" + experts.unavailable + ")";
      continue;
    }
    char numbers[128];
    std::snprintf(numbers, sizeof numbers, ", %.1f of %lld experts, %.2f GB, %zu routing%s",
                  call.mean_experts, static_cast<long long>(experts.count),
                  static_cast<double>(call.bytes()) / 1e9, call.routings.size(),
                  call.routings.size() == 1 ? "" : "s");
    text += numbers;
    if (experts.copies() > 1) text += ", " + std::to_string(experts.copies()) + " copies";
  }
  return text;
}

Record moe_record(const MoeCase& c, const MoeCall& call, std::string lib, std::string function,
                  std::string mode) {
  Record r = run_record(std::move(lib), std::move(function), std::move(mode));
  r.suite = "moe";
  r.tag = c.model.name + "." + std::string(projection_name(call.experts.projection)) + "." +
          std::string(routing_name(c.routing));
  r.dtype = Dtype::bf16;
  r.format = c.quantized ? c.quantized->name : "";
  r.nrhs = c.tokens;
  r.gemvs = std::llround(call.mean_experts);
  r.matrix_bytes = call.touched_bytes();
  r.bytes = call.bytes();
  return r;
}

RowSample sample_rows(int64_t rows) {
  const int64_t stride = std::max<int64_t>(1, (rows + kCheckedRows - 1) / kCheckedRows) | 1;
  return {0, stride, rows < 1 ? 0 : (rows - 1) / stride + 1};
}

int64_t MoeCheck::reference_rows() const {
  int64_t rows = 0;
  for (const RowSample& sample : expert_rows) rows += sample.count;
  return rows;
}

std::vector<RowSample> MoeCheck::token_rows(int64_t rows_per_token) const {
  std::vector<RowSample> rows;
  for (int64_t t : tokens) rows.push_back({t * rows_per_token, 1, rows_per_token});
  return rows;
}

xgemv_test::moe::Routing MoeCheck::pair_routing() const {
  return {routing.tokens * routing.top_k, 1, routing.ids,
          std::vector<double>(routing.ids.size(), 1.0)};
}

MoeCheck plan_check(const MoeCall& call) {
  const MoeRouting& routing = call.routings.front();
  MoeCheck check;
  check.tokens = {0};
  if (call.tokens > 1) check.tokens.push_back(call.tokens - 1);
  check.routing.tokens = static_cast<int64_t>(check.tokens.size());
  check.routing.top_k = call.top_k;
  for (int64_t t : check.tokens)
    for (int64_t j = 0; j < call.top_k; ++j) {
      const int64_t pair = t * call.top_k + j;
      const int32_t id = routing.ids[static_cast<size_t>(pair)];
      int64_t index = -1;  // an id that chooses nothing stays one
      if (valid_expert(id, call.experts.count)) {
        const auto found = std::find(check.experts.begin(), check.experts.end(), id);
        index = found - check.experts.begin();
        if (found == check.experts.end()) check.experts.push_back(id);
      }
      check.pairs.push_back(pair);
      check.routing.ids.push_back(index);
      check.routing.weights.push_back(routing.weights[static_cast<size_t>(pair)]);
    }
  if (call.experts.projection == Projection::up) {
    const int64_t half = call.experts.outputs / 2;
    check.outputs = sample_rows(half);
    check.expert_rows = {check.outputs,
                         {half + check.outputs.first, check.outputs.stride, check.outputs.count}};
  } else {
    check.outputs = sample_rows(call.experts.outputs);
    check.expert_rows = {check.outputs};
  }
  return check;
}

std::vector<RowSample> gathered_rows(const ExpertGroups& groups,
                                     const std::vector<int64_t>& pairs) {
  std::vector<RowSample> rows;
  for (int64_t pair : pairs) {
    const auto found = std::find(groups.pairs.begin(), groups.pairs.end(), pair);
    if (found == groups.pairs.end())
      throw std::logic_error("pair " + std::to_string(pair) + " is not gathered");
    rows.push_back({found - groups.pairs.begin(), 1, 1});
  }
  return rows;
}

std::vector<double> sample_columns(const std::vector<double>& rows, int64_t row_length,
                                   const std::vector<RowSample>& columns) {
  std::vector<double> values;
  for (size_t start = 0; start + static_cast<size_t>(row_length) <= rows.size();
       start += static_cast<size_t>(row_length))
    for (const RowSample& sample : columns)
      for (int64_t i = 0; i < sample.count; ++i)
        values.push_back(rows[start + static_cast<size_t>(sample.row(i))]);
  return values;
}

CheckResult compare_to_bounds(const std::vector<double>& y,
                              const xgemv_test::moe::Reference& reference) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  const std::vector<double>& values = reference.values;
  double scale = 0;
  for (size_t i = 0; i < values.size(); ++i)
    if (reference.defined[i]) scale = std::max(scale, std::abs(values[i]));
  if (scale == 0) scale = 1;
  CheckResult result;
  if (y.size() != values.size()) {
    result.max_error = kInfinity;
    return result;
  }
  std::optional<size_t> worst;
  double worst_ratio = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!reference.defined[i]) continue;
    const double error = std::abs(y[i] - values[i]);
    // NaN and Inf are infinitely far; the first of them stays the worst.
    const double ratio = !std::isfinite(error) ? kInfinity : error / reference.bounds[i];
    if (!worst || ratio > worst_ratio) {
      worst = i;
      worst_ratio = ratio;
    }
  }
  if (!worst) return {0, 0, true};
  const double error = std::abs(y[*worst] - values[*worst]);
  result.max_error = (std::isfinite(error) ? error : kInfinity) / scale;
  result.tolerance = reference.bounds[*worst] / scale;
  result.passed = worst_ratio <= 1;
  return result;
}

}  // namespace xgemv::bench
