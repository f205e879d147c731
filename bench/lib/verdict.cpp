#include "verdict.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <tuple>

#include "decode.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "suites.hpp"
#include "weights.hpp"

namespace xgemv::bench {
namespace {

bool within(const std::vector<std::string>& list, const std::string& item) {
  return list.empty() || std::find(list.begin(), list.end(), item) != list.end();
}

std::optional<double> value_of(const Record& r, Metric metric) {
  switch (metric) {
    case Metric::speedup:
      return r.speedup;
    case Metric::pct_bound:
      return r.pct_bound;
    case Metric::nrhs_ratio:
      return r.nrhs_ratio;
    case Metric::share_pct:
      return r.share_pct;
    case Metric::reads_ratio:
      return r.reads_ratio;
  }
  return std::nullopt;
}

const char* metric_key(Metric metric) {
  const char* keys[] = {"speedup", "pct_bound", "t_over_t1", "share_pct", "t_over_reads"};
  return keys[static_cast<int>(metric)];
}

// 1.03x for the ratios, 65% (33.3% for a share) for the percentages.
std::string metric_text(Metric metric, double value) {
  char text[32];
  if (metric == Metric::speedup || metric == Metric::nrhs_ratio || metric == Metric::reads_ratio)
    std::snprintf(text, sizeof text, "%.2fx", value);
  else
    std::snprintf(text, sizeof text, "%.*f%%", metric == Metric::share_pct ? 1 : 0, value);
  return text;
}

std::string name_of(const Record& r, Target::Names names) {
  if (names == Target::tag) return r.tag;
  return names == Target::suite_and_label ? r.suite + " " + r.name() : r.name();
}

// The clause of one target over the records in its scope; empty where there is nothing to say.
std::string clause(const Target& t, const std::vector<const Record*>& in, int run_gpus) {
  const auto value = [&](const Record* r) { return value_of(*r, t.metric); };
  const auto worst_of = [&](const std::vector<const Record*>& records) {
    const Record* worst = nullptr;
    for (const Record* r : records)
      if (value(r) && (!worst || (t.kind == Target::at_most ? *value(r) > *value(worst)
                                                            : *value(r) < *value(worst))))
        worst = r;
    return worst;
  };
  // "<geo-mean> geo-mean, worst <worst> (<name>)", or empty without a value.
  const auto statistic = [&](const std::vector<const Record*>& records) {
    std::vector<double> values;
    for (const Record* r : records)
      if (value(r)) values.push_back(*value(r));
    const Record* worst = worst_of(records);
    if (!worst) return std::string();
    return metric_text(t.metric, geometric_mean(values)) + " geo-mean, worst " +
           metric_text(t.metric, *value(worst)) + " (" + name_of(*worst, t.names) + ")";
  };
  switch (t.kind) {
    case Target::failures: {
      std::string names;
      int count = 0;
      for (const Record* r : in) {
        if (!r->failed()) continue;
        names += std::string(count++ ? ", " : "") + name_of(*r, t.names) +
                 (t.scope.libs.size() == 1 ? "" : " " + r->lib) + " (" + r->status + ")";
      }
      if (count == 0) return "";
      std::string text = t.text;
      text.replace(text.find("{}"), 2, std::to_string(count));
      return text + ": " + names;
    }
    case Target::worst: {
      const Record* worst = worst_of(in);
      return t.text + " " +
             (worst ? metric_text(t.metric, *value(worst)) + " (" + name_of(*worst, t.names) + ")"
                    : "n/a");
    }
    case Target::geomean: {
      const std::string text = statistic(in);
      return t.text + " " + (text.empty() ? "n/a" : text);
    }
    case Target::geomean_per_dtype: {
      std::vector<Dtype> dtypes;  // in order of first appearance
      for (const Record* r : in)
        if (std::find(dtypes.begin(), dtypes.end(), r->dtype) == dtypes.end())
          dtypes.push_back(r->dtype);
      std::string text;
      for (Dtype dtype : dtypes) {
        std::vector<const Record*> of_dtype;
        std::copy_if(in.begin(), in.end(), std::back_inserter(of_dtype),
                     [&](const Record* r) { return r->dtype == dtype; });
        if (const std::string part = statistic(of_dtype); !part.empty())
          text += (text.empty() ? "" : ", ") + std::string(dtype_name(dtype)) + " " + part;
      }
      return text.empty() ? "" : t.text + " " + text;
    }
    case Target::at_least:
    case Target::at_most: {
      if (t.scope.gpus.low > run_gpus)
        return t.text + ": not measured (only " + std::to_string(run_gpus) + " GPU(s))";
      if (in.empty()) return t.text + ": none in this run";
      size_t met = 0;
      std::string misses;
      for (const Record* r : in) {
        const std::optional<double> v = value(r);
        if (v && (t.kind == Target::at_least ? *v >= t.threshold : *v <= t.threshold)) {
          ++met;
        } else {
          misses += (misses.empty() ? " below: " : ", ") + name_of(*r, t.names) + " " +
                    (v ? metric_text(t.metric, *v) : "untimed");
        }
      }
      std::string text = t.text + ": " + (met == in.size() ? "yes" : "NO") + " (" +
                         std::to_string(met) + "/" + std::to_string(in.size());
      if (const Record* worst = worst_of(in); t.show_worst && worst)
        text += ", worst " + metric_text(t.metric, *value(worst)) + ": " + name_of(*worst, t.names);
      return text + ")" + (t.list_misses ? misses : "");
    }
  }
  return "";
}

}  // namespace

bool Scope::matches(const Record& r, bool any_gpus) const {
  return within(suites, r.suite) && within(libs, r.lib) &&
         (dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), r.dtype) != dtypes.end()) &&
         nrhs.contains(r.nrhs) && (any_gpus || gpus.contains(r.gpus)) &&
         r.matrix_bytes >= min_matrix_bytes && (tag.empty() || r.tag == tag) &&
         within(formats, r.weight_format());
}

const std::vector<Target>& targets() {
  static const std::vector<Target> table = [] {
    using T = Target;
    const std::string shapes = "verdict: ", nccl = "verdict: ", exchanges = "exchanges: ";
    const std::string decode =
        "verdict: speed-up per step over the faster cuBLAS (gemv or GemmEx): ";
    const std::string llm_nrhs_line =
        "nrhs verdict (xgemv, bf16/fp16 llm shapes): time(nrhs)/time(1) ";
    const std::string decode_nrhs_line =
        "nrhs verdict (xgemv, bf16/fp16 decode steps): time(nrhs)/time(1) ";
    const auto at_nrhs = [](const Scope& scope, int64_t low, int64_t high) {
      return scope.with(&Scope::nrhs, {low, high});
    };
    const Scope xgemv{shape_suite_names(), {"xgemv"}};
    const Scope llm_nrhs{{"llm"}, {kXgemvNrhs}, {Dtype::bf16, Dtype::fp16}};
    const Scope step_nrhs{{"decode"}, {kXgemvNrhs}};
    const Scope split =
        Scope{{"nccl-bandwidth"}, {"xgemv-nccl"}}.with(&Scope::min_matrix_bytes, int64_t{1} << 30);
    const Scope tensor_parallel =
        Scope{{"nccl-decode"}, {"xgemv-nccl"}, {}, {}, {2, 2}}.with(&Scope::tag, "llama3-70b");
    const Scope nccl_rows{
        {"nccl-bandwidth", "nccl-decode", "nccl-exchange"}, {}, {}, {}, {1, kAnyGpus}};
    const Scope collectives{{"nccl-exchange"}, {"nccl"}, {}, {}, {2, kAnyGpus}};
    std::vector<Target> list = {
        // The shape suites, one vector: xgemv beside the fastest cuBLAS and the ceiling.
        {shapes, T::worst, xgemv, Metric::speedup, 0, "worst speed-up vs cuBLAS"},
        {shapes, T::at_least, xgemv, Metric::speedup, 1.0, "every case at >= 1.00x cuBLAS",
         T::label, false, true},
        {shapes, T::at_least, xgemv.with(&Scope::min_matrix_bytes, int64_t{32} << 20),
         Metric::pct_bound, 93, "matrices >= 32 MiB at >= 93% of ceiling", T::label, true},
        {shapes, T::at_least, xgemv.with(&Scope::min_matrix_bytes, int64_t{256} << 20),
         Metric::pct_bound, 80, "matrices >= 256 MiB at >= 80% of ceiling", T::label, false, true},
        {shapes, T::failures, xgemv, Metric::speedup, 0, "xgemv FAILED on {} case(s)"},
        // Decode steps, one vector.
        {decode, T::geomean_per_dtype, Scope{{"decode"}, {"xgemv"}}, Metric::speedup, 0, "xgemv",
         T::tag},
        {decode, T::geomean_per_dtype, Scope{{"decode"}, {kXgemvEarlyStart}}, Metric::speedup, 0,
         kXgemvEarlyStart, T::tag},
        {decode, T::failures, at_nrhs(Scope{{"decode"}, {}}, 1, kAnyNrhs), Metric::speedup, 0,
         "FAILED {} row(s)"},
        // Decode steps against their own launches without the arithmetic.
        {"decode reads verdict: time per step over the graph of per-GEMV reads: ", T::at_most,
         at_nrhs(Scope{{"decode"}, {kXgemvEarlyStart}}, 1, 1), Metric::reads_ratio, 1.04,
         "xgemv-early-start <= 1.04x", T::label, true, true},
    };
    // Several vectors: xgemv_?gemv_nrhs against its own one-vector time and beside the GEMM of as
    // many columns. No bound past 16: the call computes 16 vectors at a time.
    for (const auto& [line, scope, all, names] :
         {std::tuple{llm_nrhs_line, llm_nrhs, Scope{shape_suite_names(), {kXgemvNrhs}},
                     T::suite_and_label},
          std::tuple{decode_nrhs_line, step_nrhs, step_nrhs, T::label}}) {
      list.push_back({line, T::at_most, at_nrhs(scope, 2, 8), Metric::nrhs_ratio, 1.10,
                      "<= 1.10x for nrhs 2..8", names, true});
      list.push_back({line, T::at_most, at_nrhs(scope, 9, 16), Metric::nrhs_ratio, 1.25,
                      "<= 1.25x for nrhs 9..16", names, true});
      list.push_back({line, T::geomean, at_nrhs(scope, 2, 16), Metric::speedup, 0,
                      "speed-up vs cuBLAS GemmEx over nrhs 2..16:", names});
      list.push_back({line, T::at_least, at_nrhs(scope, 2, 16), Metric::speedup, 1.0,
                      "at >= 1.00x GemmEx for nrhs 2..16", names, true});
      if (line == llm_nrhs_line)
        list.push_back({line, T::at_least, at_nrhs(scope, 2, 8), Metric::pct_bound, 90,
                        "at >= 90% of ceiling for nrhs 2..8", names, true});
      list.push_back({line, T::failures, at_nrhs(all, 1, kAnyNrhs), Metric::speedup, 0,
                      "xgemv-nrhs FAILED on {} case(s)", names});
    }
    // Several fp32 and fp64 vectors beside Sgemm / Dgemm of as many columns: the drop-in serves
    // them where the first clause's speed-up holds (interface/README.md).
    const std::string wide_nrhs_line = "nrhs verdict (xgemv, fp32/fp64 llm shapes): ";
    const Scope wide_nrhs{{"llm"}, {kXgemvNrhs}, {Dtype::fp32, Dtype::fp64}};
    list.push_back({wide_nrhs_line, T::geomean_per_dtype, at_nrhs(wide_nrhs, 2, 8),
                    Metric::speedup, 0, "speed-up vs cuBLAS GEMM over nrhs 2..8:", T::label});
    list.push_back({wide_nrhs_line, T::geomean_per_dtype, at_nrhs(wide_nrhs, 9, 16),
                    Metric::speedup, 0, "over nrhs 9..16:", T::label});
    list.push_back({wide_nrhs_line, T::at_least, at_nrhs(wide_nrhs, 2, 16), Metric::speedup, 1.0,
                    "at >= 1.00x the GEMM for nrhs 2..16", T::label, true});
    // Quantized weights (--weights): xgemv_qgemv_nrhs against the stream read of the bytes it
    // reads, its own one-vector time, and cuBLAS on the dense 16-bit matrix.
    const std::string quant = "quant verdict (xgemv-q, llm shapes): ";
    const std::string quant_decode = "quant decode verdict: speed-up per step over cuBLAS bf16/fp16: ";
    const Scope quantized = Scope{{"llm"}, {kXgemvQuantized}}.with(&Scope::min_matrix_bytes,
                                                                   int64_t{16} << 20);
    const Scope quantized_steps{{"decode"}, {kXgemvQuantizedEarlyStart}};
    list.insert(
        list.end(),
        {
            {quant, T::at_least, quantized.with(&Scope::formats, {"int4-g128"}), Metric::pct_bound,
             90, "int4-g128 >= 16 MiB at >= 90% of the bound, one vector", T::label, true, true},
            {quant, T::at_least, quantized.with(&Scope::formats, {"int8", "fp8"}),
             Metric::pct_bound, 90, "int8, fp8 >= 16 MiB at >= 90% of the bound, one vector",
             T::label, true, true},
            {quant, T::at_most, at_nrhs(Scope{{"llm"}, {kXgemvQuantized}}, 2, 16),
             Metric::nrhs_ratio, 1.15, "time(nrhs)/time(1) <= 1.15x for nrhs 2..16", T::label,
             true},
            {quant, T::geomean,
             Scope{{"llm"}, {kXgemvQuantized}}.with(&Scope::formats, {"int4-g128"}),
             Metric::speedup, 0, "int4-g128 speed-up vs cuBLAS bf16/fp16, one vector:"},
            {quant, T::failures, at_nrhs(Scope{shape_suite_names(), {kXgemvQuantized}}, 1, kAnyNrhs),
             Metric::speedup, 0, "xgemv-q FAILED on {} case(s)"},
        });
    for (const char* format : {"int4-g128", "int8", "fp8"})
      list.push_back({quant_decode, T::geomean, quantized_steps.with(&Scope::formats, {format}),
                      Metric::speedup, 0, std::string(format), T::tag});
    list.push_back({quant_decode, T::failures,
                    at_nrhs(Scope{{"decode"}, {kXgemvQuantized, kXgemvQuantizedEarlyStart}}, 1,
                            kAnyNrhs),
                    Metric::speedup, 0, "FAILED {} row(s)"});
    // Mixture of experts (--suite moe, nrhs = tokens): the routed calls against the stream read
    // of the experts they touch, and beside cuBLAS GemmEx per expert on the bf16 experts.
    const std::string moe = "moe verdict: ";
    const Scope moe_rows = Scope{}.with(&Scope::suites, {"moe"}).with(&Scope::nrhs, {1, kAnyNrhs});
    const Scope moe_calls = moe_rows.with(&Scope::libs, {"xgemv"});
    const Scope moe_large = moe_calls.with(&Scope::min_matrix_bytes, int64_t{8} << 20);
    for (const std::string format : {"bf16", "int4-g128"}) {
      const std::vector<std::string> formats = {format};
      list.push_back({moe, T::at_least, at_nrhs(moe_large, 1, 16).with(&Scope::formats, formats),
                      Metric::pct_bound, 85,
                      format + " xgemv at >= 85% of the stream read of the touched experts' bytes "
                               "for T = 1..16 on cases >= 8 MiB",
                      T::label, true});
      list.push_back({moe, T::at_least, at_nrhs(moe_large, 32, 64).with(&Scope::formats, formats),
                      Metric::pct_bound, 75, ">= 75% at T = 32, 64", T::label, true});
      list.push_back({moe, T::geomean, moe_calls.with(&Scope::formats, formats), Metric::speedup, 0,
                      "speed-up vs cuBLAS GemmEx per expert (bf16)"});
    }
    list.push_back({moe, T::failures, moe_rows, Metric::speedup, 0, "FAILED {} row(s)"});
    // Several GPUs: the speed-up over one GPU, and the exchanges beside the split GEMV.
    list.insert(
        list.end(),
        {
            {nccl, T::at_least, split.with(&Scope::gpus, {2, 2}), Metric::speedup, 1.8,
             "matrices >= 1 GiB, 2 GPUs >= 1.80x over one GPU", T::label, true, true},
            {nccl, T::at_least, split.with(&Scope::gpus, {4, 4}), Metric::speedup, 3.4,
             "matrices >= 1 GiB, 4 GPUs >= 3.40x over one GPU", T::label, true, true},
            {nccl, T::at_least, tensor_parallel, Metric::speedup, 1.6,
             "llama3-70b tensor-parallel layers, 2 GPUs >= 1.60x over one GPU", T::label, true,
             true},
            {nccl, T::failures, nccl_rows, Metric::speedup, 0, "FAILED {} row(s)"},
            {exchanges, T::at_most, collectives, Metric::share_pct, 50,
             "a collective at most 50% of the decode-size split GEMV of its size", T::label, true},
        });
    return list;
  }();
  return table;
}

std::vector<std::string> verdict_lines(const std::vector<Record>& records) {
  int run_gpus = 1;
  for (const Record& r : records) run_gpus = std::max(run_gpus, r.gpus);
  struct Line {
    std::string opening;
    bool present = false, measured = false;
    std::vector<std::string> clauses;
  };
  std::vector<Line> lines;
  for (const Target& t : targets()) {
    // Lines of the same opening are one line only where their targets follow each other.
    if (lines.empty() || lines.back().opening != t.line) lines.push_back({t.line});
    Line& line = lines.back();
    std::vector<const Record*> in;
    for (const Record& r : records) {
      line.present = line.present || t.scope.matches(r, true);
      if (t.scope.matches(r)) in.push_back(&r);
    }
    const std::string text = clause(t, in, run_gpus);
    if (text.empty()) continue;
    line.measured = line.measured || t.kind != Target::failures;
    line.clauses.push_back(text);
  }
  std::vector<std::string> text;
  for (Line& line : lines) {
    if (!line.present) continue;
    if (!line.measured) line.clauses.insert(line.clauses.begin(), "n/a");
    std::string joined = line.opening;
    for (size_t i = 0; i < line.clauses.size(); ++i) joined += (i ? "; " : "") + line.clauses[i];
    text.push_back(joined);
  }
  return text;
}

nlohmann::ordered_json targets_json() {
  const char* kinds[] = {"worst",    "geomean", "geomean_per_dtype",
                         "at_least", "at_most", "failures"};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Target& t : targets())
    list.push_back({{"line", t.line},
                    {"text", t.text},
                    {"kind", kinds[t.kind]},
                    {"metric", metric_key(t.metric)},
                    {"threshold", t.threshold},
                    {"suites", t.scope.suites},
                    {"libs", t.scope.libs},
                    {"nrhs", {t.scope.nrhs.low, t.scope.nrhs.high}},
                    {"gpus", {t.scope.gpus.low, t.scope.gpus.high}}});
  return list;
}

}  // namespace xgemv::bench
