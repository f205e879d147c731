#include "decode.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "options.hpp"

namespace xgemv::bench {
namespace {

int64_t aligned(int64_t bytes) {
  return (bytes + kDecodeAlignment - 1) / kDecodeAlignment * kDecodeAlignment;
}

DecodeGemv lm_head(const DecodeModel& model) { return {"lm_head", model.hidden, model.vocabulary}; }

// Weight buffer bytes of a list of GEMVs, each matrix aligned.
int64_t weight_buffer_bytes(const std::vector<DecodeGemv>& gemvs) {
  int64_t bytes = 0;
  for (const DecodeGemv& gemv : gemvs) bytes += aligned(gemv.weight_bytes());
  return bytes;
}

}  // namespace

const std::vector<DecodeModel>& models() {
  // Published configurations: hidden, layers, heads, kv heads, head dim, intermediate, vocabulary.
  static const std::vector<DecodeModel> all = {
      {"qwen2.5-0.5b", 896, 24, 14, 2, 64, 4864, 151936},
      {"qwen2.5-1.5b", 1536, 28, 12, 2, 128, 8960, 151936},
      {"llama3.2-1b", 2048, 16, 32, 8, 64, 8192, 128256},
      {"gemma2-2b", 2304, 26, 8, 4, 256, 9216, 256000},
      {"llama3.2-3b", 3072, 28, 24, 8, 128, 8192, 128256},
      {"qwen2.5-7b", 3584, 28, 28, 4, 128, 18944, 152064},
      {"llama2-7b", 4096, 32, 32, 32, 128, 11008, 32000},
      {"llama3-8b", 4096, 32, 32, 8, 128, 14336, 128256},
      {"mistral-7b", 4096, 32, 32, 8, 128, 14336, 32000},
      {"llama2-13b", 5120, 40, 40, 40, 128, 13824, 32000},
      {"llama3-70b", 8192, 80, 64, 8, 128, 28672, 128256},
      {"llama3.1-405b", 16384, 126, 128, 8, 128, 53248, 128256},
  };
  return all;
}

const std::vector<DecodeModel>& decode_models() {
  static const std::vector<DecodeModel> chosen = [] {
    std::vector<DecodeModel> list;
    for (const char* name :
         {"llama3.2-1b", "qwen2.5-7b", "llama3-8b", "llama2-13b", "llama3-70b", "llama3.1-405b"})
      list.push_back(*find_decode_model(name));
    return list;
  }();
  return chosen;
}

const DecodeModel* find_decode_model(const std::string& name) {
  for (const DecodeModel& model : models())
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

std::vector<DecodeGemv> layer_gemvs(const DecodeModel& model, const std::string& prefix) {
  const int64_t attention = model.query_heads * model.head_dim;
  return {
      {prefix + "qkv", model.hidden, attention + 2 * model.kv_heads * model.head_dim},
      {prefix + "o", attention, model.hidden},
      {prefix + "gate_up", model.hidden, 2 * model.intermediate},
      {prefix + "down", model.intermediate, model.hidden},
  };
}

DecodeStep plan_decode_step(const DecodeModel& model, int64_t budget_bytes, int64_t nrhs) {
  const int64_t layer_bytes = weight_buffer_bytes(layer_gemvs(model, ""));
  const int64_t head_bytes = weight_buffer_bytes({lm_head(model)});
  if (budget_bytes < head_bytes + layer_bytes)
    throw std::invalid_argument(model.name + ": one layer and the LM head take " +
                                std::to_string((head_bytes + layer_bytes) >> 20) +
                                " MiB, more than the step budget (" +
                                std::to_string(budget_bytes >> 20) + " MiB, --step-gib)");

  DecodeStep step;
  step.model = model;
  step.nrhs = nrhs;
  step.layers = std::min(model.layers, (budget_bytes - head_bytes) / layer_bytes);
  for (int64_t layer = 0; layer < step.layers; ++layer)
    for (DecodeGemv& gemv : layer_gemvs(model, "L" + std::to_string(layer) + "."))
      step.gemvs.push_back(std::move(gemv));
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
  const auto& wanted = options.models;
  for (const DecodeModel& model : wanted.empty() ? decode_models() : models()) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), model.name) == wanted.end())
      continue;
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

std::string describe_step(const DecodeStep& step) {
  char gigabytes[32];
  std::snprintf(gigabytes, sizeof gigabytes, "%.2f", static_cast<double>(step.bytes()) / 1e9);
  return step.model.name + (step.nrhs == 1 ? "" : ", nrhs " + std::to_string(step.nrhs)) + ": " +
         std::to_string(step.layers) + " of " + std::to_string(step.model.layers) +
         " layers + LM head, " + std::to_string(step.gemvs.size()) + " GEMVs, " + gigabytes +
         " GB per step";
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

Record step_record(const DecodeStep& step, Dtype dtype, std::string lib, std::string function) {
  Record r;
  r.suite = "decode";
  r.tag = step.model.name;
  r.dtype = dtype;
  r.nrhs = step.nrhs;
  r.layers = step.layers;
  r.model_layers = step.model.layers;
  r.gemvs = static_cast<int64_t>(step.gemvs.size());
  r.matrix_bytes = step.weight_bytes();
  r.bytes = step.bytes();
  r.lib = std::move(lib);
  r.function = std::move(function);
  r.mode = "graph";
  r.calls_per_batch = 1;  // a batch is one replay
  return r;
}

}  // namespace xgemv::bench
