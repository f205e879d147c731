#include "nccl_plan.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace xgemv::bench {
namespace {

constexpr int64_t kAlignment = 256;

int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

int log2_of(int64_t power_of_two) {
  int bits = 0;
  while ((int64_t{1} << bits) < power_of_two) ++bits;
  return bits;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<int> gpu_counts(int gpus) {
  std::vector<int> counts;
  for (int p = 1; p <= gpus; p *= 2) counts.push_back(p);
  if (gpus >= 1 && counts.back() != gpus) counts.push_back(gpus);
  return counts;
}

std::string layout_name(Split split, Result result) {
  return std::string(split == Split::outputs ? "outputs" : "reduction") +
         (result == Result::own_block ? "/own-block" : "/all");
}

Case SplitGemv::whole_case() const {
  Case c;
  c.dtype = dtype;
  c.op = op;
  c.m = m;
  c.n = n;
  return c;
}

std::string SplitGemv::label() const { return split_record(kPartBandwidth, *this).label(); }

std::vector<int64_t> even_starts(int64_t length, int ranks) {
  if (ranks < 1) throw std::invalid_argument("even_starts: ranks must be >= 1");
  std::vector<int64_t> starts(static_cast<size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) starts[r] = length * r / ranks;
  return starts;
}

RankBlock rank_block(const SplitGemv& gemv, const std::vector<int64_t>& starts, int rank) {
  const int ranks = static_cast<int>(starts.size()) - 1;
  if (rank < 0 || rank >= ranks) throw std::invalid_argument("rank_block: no such rank");
  const int64_t first = starts[rank], size = starts[rank + 1] - starts[rank];
  const bool transposed = gemv.op == 'T';
  RankBlock block;
  if (gemv.split == Split::outputs) {
    // Rows of op(A): for 'N' rows of A, for 'T' its columns; x is the whole x.
    block.rows = transposed ? gemv.m : size;
    block.columns = transposed ? size : gemv.n;
    block.x_length = gemv.reduction();
    block.partial_length = size;
    block.y_first = gemv.result == Result::own_block ? first : 0;
    block.y_length = gemv.result == Result::own_block ? size : gemv.outputs();
  } else {
    // Columns of op(A): for 'N' columns of A, for 'T' its rows; x is the rank's block of x.
    block.rows = transposed ? size : gemv.m;
    block.columns = transposed ? gemv.n : size;
    block.x_length = size;
    block.partial_length = gemv.outputs();
    if (gemv.result == Result::all) {
      block.y_first = 0;
      block.y_length = gemv.outputs();
    } else {
      const int64_t q = (gemv.outputs() + ranks - 1) / ranks;
      block.y_first = std::min(rank * q, gemv.outputs());
      block.y_length = std::min((rank + 1) * q, gemv.outputs()) - block.y_first;
    }
  }
  block.lda = std::max<int64_t>(1, block.rows);
  return block;
}

std::vector<double> combine_partials(const SplitGemv& gemv, const std::vector<int64_t>& starts,
                                     const std::vector<std::vector<double>>& partials) {
  const int ranks = static_cast<int>(starts.size()) - 1;
  if (static_cast<int>(partials.size()) != ranks)
    throw std::invalid_argument("combine_partials: one partial per rank");
  std::vector<double> y(static_cast<size_t>(gemv.outputs()), 0.0);
  for (int r = 0; r < ranks; ++r) {
    const RankBlock block = rank_block(gemv, starts, r);
    if (static_cast<int64_t>(partials[r].size()) != block.partial_length)
      throw std::invalid_argument("combine_partials: a partial of the wrong length");
    if (gemv.split == Split::outputs)
      std::copy(partials[r].begin(), partials[r].end(), y.begin() + starts[r]);
    else
      for (size_t i = 0; i < y.size(); ++i) y[i] += partials[r][i];
  }
  return y;
}

std::vector<double> expected_output(const SplitGemv& gemv, const std::vector<int64_t>& starts,
                                    int rank, const std::vector<double>& whole_y) {
  const RankBlock block = rank_block(gemv, starts, rank);
  return {whole_y.begin() + block.y_first, whole_y.begin() + block.y_first + block.y_length};
}

RankPlan plan_rank(const std::vector<SplitGemv>& gemvs, int ranks, int rank) {
  RankPlan plan;
  std::map<std::pair<Split, int64_t>, int64_t> x_offset_of_input;
  for (const SplitGemv& gemv : gemvs) {
    const int64_t element = element_size(gemv.dtype);
    RankGemv& local = plan.gemvs.emplace_back();
    local.starts = even_starts(gemv.split_length(), ranks);
    local.block = rank_block(gemv, local.starts, rank);
    local.weight_offset = plan.weight_buffer_bytes;
    plan.weight_buffer_bytes += aligned(local.block.a_elements() * element);
    auto [x, inserted] =
        x_offset_of_input.emplace(std::pair{gemv.split, gemv.reduction()}, plan.x_buffer_bytes);
    if (inserted) plan.x_buffer_bytes += aligned(local.block.x_length * element);
    local.x_offset = x->second;
    local.y_offset = plan.y_buffer_bytes;
    plan.y_buffer_bytes += aligned(local.block.y_length * element);
    plan.largest_partial = std::max(plan.largest_partial, local.block.partial_length);
  }
  // Buffers of no bytes still get an allocation (an empty block is allowed).
  plan.weight_buffer_bytes = std::max(plan.weight_buffer_bytes, kAlignment);
  plan.x_buffer_bytes = std::max(plan.x_buffer_bytes, kAlignment);
  plan.y_buffer_bytes = std::max(plan.y_buffer_bytes, kAlignment);
  return plan;
}

std::vector<SplitGemv> bandwidth_cases(const std::vector<Dtype>& dtypes, bool quick) {
  const std::vector<int64_t> gib =
      quick ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2, 4, 8};
  std::vector<std::pair<Split, Result>> layouts = {{Split::outputs, Result::own_block},
                                                   {Split::reduction, Result::all}};
  if (!quick)
    layouts = {{Split::outputs, Result::own_block},
               {Split::outputs, Result::all},
               {Split::reduction, Result::own_block},
               {Split::reduction, Result::all}};
  std::vector<SplitGemv> cases;
  for (Dtype dtype : dtypes)
    for (int64_t size : gib) {
      const int bits = log2_of(size * kLargeSplitBytes / element_size(dtype));
      for (char op : {'N', 'T'})
        for (const auto& [split, result] : layouts) {
          SplitGemv gemv;
          gemv.dtype = dtype;
          gemv.op = op;
          gemv.m = int64_t{1} << ((bits + 1) / 2);
          gemv.n = int64_t{1} << (bits / 2);
          gemv.split = split;
          gemv.result = result;
          cases.push_back(gemv);
        }
    }
  return cases;
}

int64_t TensorParallelStep::weight_bytes() const {
  int64_t total = 0;
  for (const SplitGemv& gemv : gemvs) total += gemv.whole_case().a_bytes();
  return total;
}

int64_t TensorParallelStep::bytes() const {
  int64_t total = 0;
  for (const SplitGemv& gemv : gemvs) total += gemv.whole_case().bytes();
  return total;
}

std::vector<SplitGemv> tensor_parallel_layer(const DecodeModel& model, int64_t layer) {
  std::vector<SplitGemv> gemvs;
  for (const DecodeGemv& gemv : layer_gemvs(model, "L" + std::to_string(layer) + ".")) {
    SplitGemv split;
    split.tag = gemv.tag;
    split.dtype = Dtype::bf16;
    split.op = 'T';
    split.m = gemv.in;
    split.n = gemv.out;
    // qkv and gate_up feed per-rank work (attention over the rank's heads, the activation of its
    // block of the intermediate); o and down are summed over the ranks.
    const bool row_parallel = ends_with(gemv.tag, ".o") || ends_with(gemv.tag, ".down");
    split.split = row_parallel ? Split::reduction : Split::outputs;
    split.result = row_parallel ? Result::all : Result::own_block;
    gemvs.push_back(split);
  }
  return gemvs;
}

TensorParallelStep plan_tensor_parallel_step(const DecodeModel& model, int64_t budget_bytes) {
  TensorParallelStep step;
  step.model = model;
  for (const SplitGemv& gemv : tensor_parallel_layer(model, 0))
    step.layer_bytes += aligned(gemv.whole_case().a_bytes());
  step.layers = std::clamp<int64_t>(budget_bytes / step.layer_bytes, 0, model.layers);
  for (int64_t layer = 0; layer < step.layers; ++layer)
    for (SplitGemv& gemv : tensor_parallel_layer(model, layer)) step.gemvs.push_back(gemv);
  return step;
}

std::string ExchangeCase::label() const { return exchange_record(*this).label(); }

std::vector<ExchangeCase> exchange_cases() {
  std::vector<ExchangeCase> cases;
  for (const char* collective : {kAllReduce, kAllGather})
    for (Dtype dtype : {Dtype::fp32, Dtype::bf16})
      for (int64_t bytes : kExchangeBytes) cases.push_back({collective, dtype, bytes});
  return cases;
}

SplitGemv exchange_share_gemv(int64_t exchange_bytes) {
  for (const DecodeModel& model : decode_models()) {
    if (model.hidden * 4 != exchange_bytes) continue;
    SplitGemv gemv;
    gemv.tag = model.name + ".down";
    gemv.dtype = Dtype::bf16;
    gemv.op = 'T';
    gemv.m = model.intermediate;
    gemv.n = model.hidden;
    gemv.split = Split::reduction;
    gemv.result = Result::all;
    return gemv;
  }
  throw std::invalid_argument("no decode model exchanges " + std::to_string(exchange_bytes) +
                              " bytes of fp32 partial sums");
}

std::string nccl_gemv_function(Dtype dtype) {
  const char* suffix[] = {"sgemv", "dgemv", "hgemv", "bf16gemv"};  // kAllDtypes order
  return std::string("xgemv_nccl_") + suffix[static_cast<int>(dtype)];
}

Record split_record(const std::string& part, const SplitGemv& gemv) {
  Record r = case_record(gemv.whole_case(), kXgemvNccl, nccl_gemv_function(gemv.dtype), "stream");
  r.suite = "nccl-" + part;
  r.tag = gemv.tag;
  r.layout = layout_name(gemv.split, gemv.result);
  return r;
}

Record tensor_parallel_record(const TensorParallelStep& step) {
  Record r;
  r.suite = std::string("nccl-") + kPartDecode;
  r.tag = step.model.name;
  r.dtype = Dtype::bf16;
  r.layout = "tensor-parallel";
  r.layers = step.layers;
  r.model_layers = step.model.layers;
  r.gemvs = static_cast<int64_t>(step.gemvs.size());
  r.matrix_bytes = step.weight_bytes();
  r.bytes = step.bytes();
  r.lib = kXgemvNccl;
  r.function = nccl_gemv_function(Dtype::bf16);
  r.mode = "graph";
  return r;
}

Record exchange_record(const ExchangeCase& exchange) {
  Record r;
  r.suite = std::string("nccl-") + kPartExchange;
  r.tag = exchange.collective + " " + std::to_string(exchange.bytes >> 10) + " KB";
  r.dtype = exchange.dtype;
  r.bytes = r.exchange_bytes = exchange.bytes;
  r.lib = kNcclLibrary;
  r.function = exchange.collective;
  r.mode = "graph";
  return r;
}

Record ceiling_record(const Record& of, int64_t bytes_read) {
  Record r = of;
  r.lib = kCeiling;
  r.function = "stream_read";
  r.mode = "stream";
  r.gpus = 1;
  r.bytes = bytes_read;
  r.exchange_bytes = 0;
  return r;
}

}  // namespace xgemv::bench
