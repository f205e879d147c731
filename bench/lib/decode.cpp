#include "decode.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "options.hpp"

namespace xgemv::bench {
namespace {

int64_t aligned(int64_t bytes) {
  return (bytes + kDecodeAlignment - 1) / kDecodeAlignment * kDecodeAlignment;
}

DecodeGemv lm_head(const DecodeModel& model) {
  return {"lm_head", model.hidden, model.vocabulary};
}

// Weight buffer bytes of a list of GEMVs, each matrix aligned.
int64_t weight_buffer_bytes(const std::vector<DecodeGemv>& gemvs) {
  int64_t bytes = 0;
  for (const DecodeGemv& gemv : gemvs) bytes += aligned(gemv.weight_bytes());
  return bytes;
}

}  // namespace

const std::vector<DecodeModel>& decode_models() {
  // Published configurations: hidden, layers, heads, kv heads, head dim, intermediate, vocabulary.
  static const std::vector<DecodeModel> models = {
      {"llama3.2-1b", 2048, 16, 32, 8, 64, 8192, 128256},
      {"qwen2.5-7b", 3584, 28, 28, 4, 128, 18944, 152064},
      {"llama3-8b", 4096, 32, 32, 8, 128, 14336, 128256},
      {"llama2-13b", 5120, 40, 40, 40, 128, 13824, 32000},
      {"llama3-70b", 8192, 80, 64, 8, 128, 28672, 128256},
      {"llama3.1-405b", 16384, 126, 128, 8, 128, 53248, 128256},
  };
  return models;
}

const DecodeModel* find_decode_model(const std::string& name) {
  for (const DecodeModel& model : decode_models())
    if (model.name == name) return &model;
  return nullptr;
}

int64_t DecodeStep::weight_bytes() const {
  int64_t total = 0;
  for (const DecodeGemv& gemv : gemvs) total += gemv.weight_bytes();
  return total;
}

int64_t DecodeStep::bytes() const {
  int64_t total = 0;
  for (const DecodeGemv& gemv : gemvs) total += gemv.bytes();
  return total;
}

int64_t DecodeStep::largest_output() const {
  int64_t largest = 0;
  for (const DecodeGemv& gemv : gemvs) largest = std::max(largest, gemv.out);
  return largest;
}

std::vector<DecodeGemv> layer_gemvs(const DecodeModel& model, int64_t layer) {
  const int64_t attention = model.query_heads * model.head_dim;
  const std::string prefix = "L" + std::to_string(layer) + ".";
  return {
      {prefix + "qkv", model.hidden, attention + 2 * model.kv_heads * model.head_dim},
      {prefix + "o", attention, model.hidden},
      {prefix + "gate_up", model.hidden, 2 * model.intermediate},
      {prefix + "down", model.intermediate, model.hidden},
  };
}

DecodeStep plan_decode_step(const DecodeModel& model, int64_t budget_bytes, int64_t nrhs) {
  const int64_t layer_bytes = weight_buffer_bytes(layer_gemvs(model, 0));
  const int64_t head_bytes = weight_buffer_bytes({lm_head(model)});
  if (budget_bytes < head_bytes + layer_bytes)
    throw std::invalid_argument(
        model.name + ": one layer and the LM head take " +
        std::to_string((head_bytes + layer_bytes) >> 20) + " MiB, more than the step budget (" +
        std::to_string(budget_bytes >> 20) + " MiB, --step-gib)");

  DecodeStep step;
  step.model = model;
  step.nrhs = nrhs;
  step.layers = std::min(model.layers, (budget_bytes - head_bytes) / layer_bytes);
  for (int64_t layer = 0; layer < step.layers; ++layer)
    for (DecodeGemv& gemv : layer_gemvs(model, layer)) step.gemvs.push_back(std::move(gemv));
  step.gemvs.push_back(lm_head(model));

  std::map<int64_t, int64_t> x_offset_of_width;
  for (DecodeGemv& gemv : step.gemvs) {
    gemv.nrhs = nrhs;
    gemv.weight_offset = step.weight_buffer_bytes;
    step.weight_buffer_bytes += aligned(gemv.weight_bytes());
    auto [x, inserted] = x_offset_of_width.emplace(gemv.in, step.x_buffer_bytes);
    if (inserted) step.x_buffer_bytes += aligned(nrhs * gemv.in * kDecodeElementBytes);
    gemv.x_offset = x->second;
    gemv.y_offset = step.y_buffer_bytes;
    step.y_buffer_bytes += aligned(nrhs * gemv.out * kDecodeElementBytes);
  }
  return step;
}

std::vector<DecodeStep> plan_decode_steps(const Options& options) {
  if (!(options.step_gib > 0)) throw std::invalid_argument("--step-gib must be positive");
  for (const std::string& name : options.models)
    if (!find_decode_model(name)) throw std::invalid_argument("unknown --model " + name);
  const auto budget = static_cast<int64_t>(options.step_gib * double(int64_t{1} << 30));
  std::vector<DecodeStep> steps;
  for (const DecodeModel& model : decode_models()) {
    const bool wanted = options.models.empty() ||
                        std::find(options.models.begin(), options.models.end(), model.name) !=
                            options.models.end();
    if (!wanted) continue;
    for (int64_t nrhs : options.nrhs_values())
      steps.push_back(plan_decode_step(model, budget, nrhs));
  }
  return steps;
}

std::vector<Dtype> decode_dtypes(const Options& options) {
  if (options.dtypes.empty()) return {std::begin(kDecodeDtypes), std::end(kDecodeDtypes)};
  std::vector<Dtype> dtypes;
  for (const std::string& name : options.dtypes) {
    const auto dtype = parse_dtype(name);
    if (dtype != Dtype::bf16 && dtype != Dtype::fp16)
      throw std::invalid_argument("the decode suite runs bf16 and fp16, not " + name);
    if (std::find(dtypes.begin(), dtypes.end(), *dtype) == dtypes.end()) dtypes.push_back(*dtype);
  }
  return dtypes;
}

Case decode_gemv_case(const DecodeStep& step, const DecodeGemv& gemv, Dtype dtype) {
  Case c;
  c.suite = "decode";
  c.tag = step.model.name + "." + gemv.tag;
  c.dtype = dtype;
  c.op = 'T';
  c.m = gemv.in;
  c.n = gemv.out;
  c.nrhs = step.nrhs;
  return c;
}

DecodeTimingPlan plan_decode_timing(bool quick) {
  return quick ? DecodeTimingPlan{2, 15} : DecodeTimingPlan{3, 31};
}

DecodeRow::DecodeRow(const DecodeStep& step, Dtype step_dtype, std::string library_name,
                     std::string entry_point)
    : model(step.model.name),
      dtype(step_dtype),
      nrhs(step.nrhs),
      layers(step.layers),
      model_layers(step.model.layers),
      gemvs(static_cast<int64_t>(step.gemvs.size())),
      weight_bytes(step.weight_bytes()),
      bytes(step.bytes()),
      library(std::move(library_name)),
      function(std::move(entry_point)) {}

void add_gemv_check(DecodeRow& row, const std::string& gemv_tag, const CheckResult& check) {
  ++row.checked_gemvs;
  if (!check.passed) {
    ++row.failed_gemvs;
    row.status = "check failed";
  }
  // NaN and Inf compare as infinitely far: the first of them stays the worst.
  const double share = check.max_error / check.tolerance;
  if (!row.max_error || share > *row.max_error / *row.tolerance) {
    row.max_error = check.max_error;
    row.tolerance = check.tolerance;
    row.worst_gemv = gemv_tag;
  }
}

void derive_decode_metrics(std::vector<DecodeRow>& rows) {
  // Per step: its one-read time and its faster cuBLAS time.
  std::map<std::tuple<std::string, Dtype, int64_t>, std::optional<double>> one_read_ms, cublas_ms;
  for (DecodeRow& row : rows) {
    row.gbps.reset();
    row.pct_one_read.reset();
    row.speedup_vs_cublas.reset();
    if (!row.ms || !(*row.ms > 0)) continue;
    row.gbps = static_cast<double>(row.bytes) / *row.ms / 1e6;
    const auto step = std::make_tuple(row.model, row.dtype, row.nrhs);
    if (row.library == kOneRead) one_read_ms[step] = row.ms;
    if (row.is_cublas()) {
      std::optional<double>& fastest = cublas_ms[step];
      fastest = std::min(fastest.value_or(*row.ms), *row.ms);
    }
  }
  for (DecodeRow& row : rows) {
    if (!row.gbps) continue;
    const auto step = std::make_tuple(row.model, row.dtype, row.nrhs);
    if (const auto& one_read = one_read_ms[step]; one_read && row.library != kOneRead)
      row.pct_one_read = 100.0 * *one_read / *row.ms;
    if (const auto& cublas = cublas_ms[step]; cublas && !row.is_read())
      row.speedup_vs_cublas = *cublas / *row.ms;
  }
}

}  // namespace xgemv::bench
