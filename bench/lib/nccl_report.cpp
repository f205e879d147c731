#include "nccl_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "format.hpp"
#include "measure.hpp"

namespace xgemv::bench {
namespace {

std::string gpus_text(int gpus) { return std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs"); }

std::string gigabytes(int64_t bytes) { return fixed(static_cast<double>(bytes) / 1e9, 2); }

// The rows of one part, by case (in order of first appearance), GPU count and library.
class PartTable {
 public:
  PartTable(const std::vector<NcclRow>& rows, const std::string& part) {
    for (const NcclRow& row : rows) {
      if (row.part != part) continue;
      if (std::find(keys_.begin(), keys_.end(), row.key) == keys_.end()) keys_.push_back(row.key);
      rows_[{row.key, row.gpus, row.library}] = &row;
    }
  }
  const std::vector<std::string>& keys() const { return keys_; }
  const NcclRow* find(const std::string& key, int gpus, const std::string& library) const {
    const auto row = rows_.find({key, gpus, library});
    return row == rows_.end() ? nullptr : row->second;
  }
  // Any row of the case, for its facts.
  const NcclRow* first(const std::string& key) const {
    for (const auto& [index, row] : rows_)
      if (std::get<0>(index) == key) return row;
    return nullptr;
  }
  // The timing modes of the case's rows of `library`: "graph", "stream" or "graph, stream".
  std::string modes(const std::string& key, const std::string& library) const {
    std::string text;
    for (const auto& [index, row] : rows_)
      if (std::get<0>(index) == key && std::get<2>(index) == library &&
          text.find(row->mode) == std::string::npos)
        text += (text.empty() ? "" : ", ") + row->mode;
    return text.empty() ? "-" : text;
  }

 private:
  std::vector<std::string> keys_;
  std::map<std::tuple<std::string, int, std::string>, const NcclRow*> rows_;
};

// A cell: the value, FAILED for a failed row, - where there is none.
std::string cell(const NcclRow* row, const std::optional<double>& value, int decimals) {
  if (row && row->failed()) return "FAILED";
  return fixed(value, decimals, "-");
}

std::string speedup_cell(const NcclRow* row) {
  if (row && row->failed()) return "FAILED";
  return speedup_text(row ? row->speedup : std::nullopt);
}

template <class Member>
std::optional<double> value_of(const NcclRow* row, Member member) {
  return row ? row->*member : std::nullopt;
}

std::string check_text(const NcclRow& row) {
  std::string text = row.status;
  if (row.checked > 0) {
    text += " (" + std::to_string(row.checked) + " checked";
    if (row.failed_checks > 0) text += ", " + std::to_string(row.failed_checks) + " failed";
    text += "; worst " + row.worst + " err " + general(row.max_error) + " / tol " +
            general(row.tolerance) + ")";
  }
  return text;
}

std::string row_name(const NcclRow& row) {
  return row.part + " " + row.key + " on " + gpus_text(row.gpus) + " " + row.library;
}

void write_bandwidth_table(std::ostream& out, const std::vector<NcclRow>& rows,
                           const std::vector<int>& counts) {
  const PartTable table(rows, kPartBandwidth);
  if (table.keys().empty()) return;
  out << "## 1. Bandwidth over all GPUs\n\n"
         "The whole split GEMV on P GPUs (every rank, the NCCL exchange included; L2 flushed "
         "before every repetition, the ranks started together), GB/s of the whole problem "
         "(A + x + y); % of P reads: against P times the one-GPU stream read of the matrix on "
         "GPU 0; vs 1 GPU: the time on one GPU over the time on P.\n\n"
      << "| case | GiB | 1-GPU read GB/s";
  for (int gpus : counts) {
    out << " | P=" << gpus << " GB/s | P=" << gpus << " % of P reads";
    if (gpus > 1) out << " | P=" << gpus << " vs 1 GPU";
  }
  out << " |\n|---|---:|---:";
  for (int gpus : counts) out << (gpus > 1 ? "|---:|---:|---:" : "|---:|---:");
  out << "|\n";
  for (const std::string& key : table.keys()) {
    const NcclRow* ceiling = table.find(key, 1, kCeiling);
    const NcclRow* first = table.first(key);
    out << "| " << key << " | "
        << fixed(static_cast<double>(first->matrix_bytes) / double(int64_t{1} << 30), 0) << " | "
        << cell(ceiling, value_of(ceiling, &NcclRow::gbps), 0);
    for (int gpus : counts) {
      const NcclRow* row = table.find(key, gpus, kXgemvNccl);
      out << " | " << cell(row, value_of(row, &NcclRow::gbps), 0) << " | "
          << cell(row, value_of(row, &NcclRow::pct_ceiling), 1);
      if (gpus > 1) out << " | " << speedup_cell(row);
    }
    out << " |\n";
  }
  out << "\n";
}

void write_decode_table(std::ostream& out, const std::vector<NcclRow>& rows,
                        const std::vector<int>& counts) {
  const PartTable table(rows, kPartDecode);
  if (table.keys().empty()) return;
  out << "## 2. Tensor-parallel decode steps (bf16)\n\n"
         "The model's first layers (as many as one GPU holds; the same at every P), each layer's "
         "qkv and gate_up split along their outputs (every rank keeps its block), o and down "
         "along the reduction (every rank ends with the whole result); ms per step, the slowest "
         "rank; % of P reads: against P times the one-GPU stream read of the step's weights; "
         "vs 1 GPU: the time on one GPU over the time on P.\n\n"
      << "| model | layers | GB per step | timing | 1-GPU read ms";
  for (int gpus : counts) {
    out << " | P=" << gpus << " ms | P=" << gpus << " % of P reads";
    if (gpus > 1) out << " | P=" << gpus << " vs 1 GPU";
  }
  out << " |\n|---|---:|---:|---|---:";
  for (int gpus : counts) out << (gpus > 1 ? "|---:|---:|---:" : "|---:|---:");
  out << "|\n";
  for (const std::string& key : table.keys()) {
    const NcclRow* ceiling = table.find(key, 1, kCeiling);
    const NcclRow* first = table.first(key);
    const auto ms = [](const NcclRow* row) -> std::optional<double> {
      return row && row->us ? std::optional<double>(*row->us / 1e3) : std::nullopt;
    };
    out << "| " << key << " | " << first->layers << "/" << first->model_layers << " | "
        << gigabytes(first->bytes) << " | " << table.modes(key, kXgemvNccl) << " | "
        << cell(ceiling, ms(ceiling), 3);
    for (int gpus : counts) {
      const NcclRow* row = table.find(key, gpus, kXgemvNccl);
      out << " | " << cell(row, ms(row), 3) << " | "
          << cell(row, value_of(row, &NcclRow::pct_ceiling), 1);
      if (gpus > 1) out << " | " << speedup_cell(row);
    }
    out << " |\n";
  }
  out << "\n";
}

void write_exchange_table(std::ostream& out, const std::vector<NcclRow>& rows,
                          const std::vector<int>& counts) {
  const PartTable table(rows, kPartExchange);
  if (table.keys().empty()) return;
  out << "## 3. Small exchanges\n\n"
         "µs per collective on P GPUs (back-to-back collectives, the slowest rank); bytes: each "
         "rank's input (an all-gather's output is P times it). % of GEMV: the collective's time "
         "over that of the decode-size split GEMV whose fp32 partial sums have its size (below, "
         "its down projection, reduction split, whole result), on the same P.\n\n"
      << "| exchange | timing";
  for (int gpus : counts) out << " | P=" << gpus << " µs | P=" << gpus << " % of GEMV";
  out << " |\n|---|---";
  for (size_t i = 0; i < counts.size(); ++i) out << "|---:|---:";
  out << "|\n";
  for (const std::string& key : table.keys()) {
    const NcclRow* first = table.first(key);
    const bool collective = first->library == kNcclLibrary;
    out << "| " << key
        << (collective ? "" : " (" + std::to_string(first->exchange_bytes >> 10) + " KB partials)")
        << " | " << table.modes(key, first->library);
    for (int gpus : counts) {
      const NcclRow* row = table.find(key, gpus, first->library);
      out << " | " << cell(row, value_of(row, &NcclRow::us), 2) << " | "
          << (collective ? cell(row, value_of(row, &NcclRow::share_pct), 1) : std::string("-"));
    }
    out << " |\n";
  }
  out << "\n";
}

TargetCheck check_target(const std::vector<NcclRow>& rows, const ScalingTarget& target, int gpus,
                         const std::string& part, const std::string& model) {
  TargetCheck check;
  check.target = target;
  check.measured = gpus >= target.gpus;
  if (!check.measured) return check;
  for (const NcclRow& row : rows) {
    if (row.part != part || row.library != kXgemvNccl || row.gpus != target.gpus) continue;
    if (part == kPartBandwidth && row.matrix_bytes < kLargeSplitBytes) continue;
    if (!model.empty() && row.model != model) continue;
    ++check.checked;
    if (row.speedup && (!check.worst || *row.speedup < *check.worst)) {
      check.worst = row.speedup;
      check.worst_case = row.key;
    }
    if (row.speedup && *row.speedup >= target.speedup) {
      ++check.met;
    } else {
      check.misses.push_back(row.key + (row.failed()  ? " (" + row.status + ")"
                                        : row.speedup ? " (" + speedup_text(row.speedup) + ")"
                                                      : " (not timed)"));
    }
  }
  return check;
}

std::string target_text(const TargetCheck& check, int gpus) {
  char bound[64];
  std::snprintf(bound, sizeof bound, "%d GPUs >= %.2fx", check.target.gpus, check.target.speedup);
  std::string text = bound;
  text += ": ";
  if (!check.measured) return text + "not measured (only " + std::to_string(gpus) + " GPU(s))";
  if (check.checked == 0) return text + "not run";
  text += check.met == check.checked ? "yes" : "NO";
  text += " (" + std::to_string(check.met) + "/" + std::to_string(check.checked);
  if (check.worst) text += ", worst " + speedup_text(check.worst) + ": " + check.worst_case;
  if (!check.misses.empty()) {
    text += "; missed:";
    for (size_t i = 0; i < check.misses.size(); ++i)
      text += std::string(i ? ", " : " ") + check.misses[i];
  }
  return text + ")";
}

}  // namespace

std::string nccl_gemv_function(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32:
      return "xgemv_nccl_sgemv";
    case Dtype::fp64:
      return "xgemv_nccl_dgemv";
    case Dtype::fp16:
      return "xgemv_nccl_hgemv";
    case Dtype::bf16:
      return "xgemv_nccl_bf16gemv";
  }
  return "?";
}

namespace {

NcclRow split_row(const std::string& part, const std::string& key, const SplitGemv& gemv) {
  NcclRow row;
  row.part = part;
  row.key = key;
  row.library = kXgemvNccl;
  row.function = nccl_gemv_function(gemv.dtype);
  row.dtype = gemv.dtype;
  row.op = std::string(1, gemv.op);
  row.m = gemv.m;
  row.n = gemv.n;
  row.layout = layout_name(gemv.split, gemv.result);
  row.matrix_bytes = gemv.whole_case().a_bytes();
  row.bytes = gemv.whole_case().bytes();
  return row;
}

}  // namespace

NcclRow bandwidth_row(const SplitGemv& gemv) {
  return split_row(kPartBandwidth, gemv.label(), gemv);
}

NcclRow decode_row(const TensorParallelStep& step) {
  NcclRow row;
  row.part = kPartDecode;
  row.key = step.model.name;
  row.library = kXgemvNccl;
  row.function = nccl_gemv_function(Dtype::bf16);
  row.mode = "graph";
  row.dtype = Dtype::bf16;
  row.op = "T";
  row.layout = "tensor-parallel";
  row.model = step.model.name;
  row.layers = step.layers;
  row.model_layers = step.model.layers;
  row.gemvs = static_cast<int64_t>(step.gemvs.size());
  row.matrix_bytes = step.weight_bytes();
  row.bytes = step.bytes();
  return row;
}

NcclRow exchange_row(const ExchangeCase& exchange) {
  NcclRow row;
  row.part = kPartExchange;
  row.key = exchange.label();
  row.library = kNcclLibrary;
  row.function = exchange.collective;
  row.mode = "graph";
  row.dtype = exchange.dtype;
  row.bytes = exchange.bytes;
  row.exchange_bytes = exchange.bytes;
  return row;
}

NcclRow share_row(const SplitGemv& gemv, int64_t exchange_bytes) {
  NcclRow row = split_row(kPartExchange, gemv.label(), gemv);
  row.mode = "graph";
  row.exchange_bytes = exchange_bytes;
  return row;
}

NcclRow ceiling_row(const NcclRow& of, int64_t bytes_read) {
  NcclRow row = of;
  row.library = kCeiling;
  row.function = "stream_read";
  row.mode = "stream";
  row.gpus = 1;
  row.bytes = bytes_read;
  row.exchange_bytes = 0;
  return row;
}

void add_check(NcclRow& row, const std::string& where, const CheckResult& check) {
  ++row.checked;
  if (!check.passed) {
    ++row.failed_checks;
    row.status = "check failed";
  }
  // NaN and Inf compare as infinitely far: the first of them stays the worst.
  const double share = check.max_error / check.tolerance;
  if (!row.max_error || share > *row.max_error / *row.tolerance) {
    row.max_error = check.max_error;
    row.tolerance = check.tolerance;
    row.worst = where;
  }
}

void derive_nccl_metrics(std::vector<NcclRow>& rows) {
  std::map<std::tuple<std::string, std::string, std::string>, const NcclRow*> one_gpu;
  std::map<std::pair<int, int64_t>, const NcclRow*> share_gemv;  // (P, exchange bytes)
  for (NcclRow& row : rows) {
    row.gbps.reset();
    row.ceiling_gbps.reset();
    row.pct_ceiling.reset();
    row.speedup.reset();
    row.share_pct.reset();
    row.share_of.clear();
    if (!row.us || !(*row.us > 0)) continue;
    row.gbps = static_cast<double>(row.bytes) / *row.us / 1e3;
    if (row.gpus == 1) one_gpu[{row.part, row.key, row.library}] = &row;
    if (row.part == kPartExchange && row.library == kXgemvNccl)
      share_gemv[{row.gpus, row.exchange_bytes}] = &row;
  }
  for (NcclRow& row : rows) {
    if (!row.gbps || row.library == kCeiling) continue;
    if (const auto base = one_gpu.find({row.part, row.key, row.library}); base != one_gpu.end())
      row.speedup = *base->second->us / *row.us;
    if (row.library == kXgemvNccl && row.part != kPartExchange)
      if (const auto read = one_gpu.find({row.part, row.key, kCeiling}); read != one_gpu.end()) {
        row.ceiling_gbps = row.gpus * *read->second->gbps;
        row.pct_ceiling = 100.0 * *row.gbps / *row.ceiling_gbps;
      }
    if (row.library == kNcclLibrary)
      if (const auto gemv = share_gemv.find({row.gpus, row.exchange_bytes});
          gemv != share_gemv.end()) {
        row.share_pct = 100.0 * *row.us / *gemv->second->us;
        row.share_of = gemv->second->key;
      }
  }
}

NcclVerdict make_nccl_verdict(const std::vector<NcclRow>& rows, int gpus) {
  NcclVerdict verdict;
  verdict.gpus = gpus;
  for (const ScalingTarget& target : kBandwidthTargets)
    verdict.bandwidth.push_back(check_target(rows, target, gpus, kPartBandwidth, ""));
  verdict.decode = check_target(rows, kDecodeTarget, gpus, kPartDecode, kDecodeTargetModel);
  for (const NcclRow& row : rows) {
    if (row.library != kNcclLibrary || !row.share_pct) continue;
    if (gpus > 1 && row.gpus < 2) continue;
    if (!verdict.largest_share || *row.share_pct > *verdict.largest_share) {
      verdict.largest_share = row.share_pct;
      verdict.largest_share_case = row.key + " vs " + row.share_of;
      verdict.largest_share_gpus = row.gpus;
    }
  }
  return verdict;
}

std::string format_nccl_verdict(const NcclVerdict& verdict) {
  std::string text = "verdict: matrices >= 1 GiB, speed-up over one GPU:";
  for (size_t i = 0; i < verdict.bandwidth.size(); ++i)
    text += std::string(i ? ";" : "") + " " + target_text(verdict.bandwidth[i], verdict.gpus);
  return text + "; " + kDecodeTargetModel + " tensor-parallel layers, " +
         target_text(verdict.decode, verdict.gpus);
}

std::string format_exchange_verdict(const NcclVerdict& verdict) {
  char bound[32];
  std::snprintf(bound, sizeof bound, "%.0f%%", kDominantSharePct);
  std::string text = "exchanges: ";
  if (!verdict.largest_share) return text + "not measured";
  if (verdict.gpus < 2)
    text +=
        "between GPUs not measured (only " + std::to_string(verdict.gpus) + " GPU(s)); on one GPU ";
  text += "the largest share of a decode-size split GEMV is " + fixed(verdict.largest_share, 1) +
          "% (" + verdict.largest_share_case + ", " + gpus_text(verdict.largest_share_gpus) + "): ";
  const bool dominate = *verdict.largest_share >= kDominantSharePct;
  return text + (dominate ? "they dominate (>= " : "they do not dominate (< ") + bound +
         " of the split GEMV's time)";
}

std::string nccl_progress_header() {
  char text[256];
  std::snprintf(text, sizeof text, "%-9s %4s %-11s %-52s %-6s %10s %8s %7s %8s  %s", "part", "P",
                "library", "case", "mode", "us", "GB/s", "%ceil", "vs 1 GPU", "check");
  return text;
}

std::string nccl_progress_line(const NcclRow& row) {
  char text[1024];
  std::snprintf(text, sizeof text, "%-9s %4d %-11s %-52s %-6s %10s %8s %7s %8s  %s",
                row.part.c_str(), row.gpus, row.library.c_str(), row.key.c_str(), row.mode.c_str(),
                fixed(row.us, 2, "-").c_str(), fixed(row.gbps, 0, "-").c_str(),
                fixed(row.pct_ceiling, 1, "-").c_str(), speedup_text(row.speedup).c_str(),
                check_text(row).c_str());
  return text;
}

const std::vector<std::string>& nccl_csv_columns() {
  static const std::vector<std::string> columns = {"part",
                                                   "case",
                                                   "P",
                                                   "lib",
                                                   "function",
                                                   "mode",
                                                   "dtype",
                                                   "op",
                                                   "m",
                                                   "n",
                                                   "layout",
                                                   "model",
                                                   "layers",
                                                   "model_layers",
                                                   "gemvs",
                                                   "matrix_bytes",
                                                   "bytes",
                                                   "exchange_bytes",
                                                   "status",
                                                   "checked",
                                                   "failed_checks",
                                                   "max_error",
                                                   "tolerance",
                                                   "worst",
                                                   "repetitions",
                                                   "calls_per_repetition",
                                                   "us",
                                                   "fastest_rank_us",
                                                   "GBps",
                                                   "ceiling_GBps",
                                                   "pct_ceiling",
                                                   "speedup_vs_1gpu",
                                                   "share_pct",
                                                   "share_of",
                                                   "device",
                                                   "sm_clock_mhz",
                                                   "sm_clock_max_mhz",
                                                   "mem_clock_max_mhz",
                                                   "driver",
                                                   "cuda",
                                                   "nccl",
                                                   "commit",
                                                   "date"};
  return columns;
}

void write_nccl_csv(std::ostream& out, const NcclRunInfo& info, const std::vector<NcclRow>& rows) {
  const auto& columns = nccl_csv_columns();
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
  out << '\n';
  const RunInfo& run = info.run;
  for (const NcclRow& row : rows) {
    const std::vector<std::string> fields = {row.part,
                                             row.key,
                                             std::to_string(row.gpus),
                                             row.library,
                                             row.function,
                                             row.mode,
                                             std::string(dtype_name(row.dtype)),
                                             row.op,
                                             std::to_string(row.m),
                                             std::to_string(row.n),
                                             row.layout,
                                             row.model,
                                             std::to_string(row.layers),
                                             std::to_string(row.model_layers),
                                             std::to_string(row.gemvs),
                                             std::to_string(row.matrix_bytes),
                                             std::to_string(row.bytes),
                                             std::to_string(row.exchange_bytes),
                                             row.status,
                                             std::to_string(row.checked),
                                             std::to_string(row.failed_checks),
                                             general(row.max_error),
                                             general(row.tolerance),
                                             row.worst,
                                             std::to_string(row.repetitions),
                                             std::to_string(row.calls_per_repetition),
                                             fixed(row.us, 3),
                                             fixed(row.fastest_rank_us, 3),
                                             fixed(row.gbps, 1),
                                             fixed(row.ceiling_gbps, 1),
                                             fixed(row.pct_ceiling, 1),
                                             fixed(row.speedup, 3),
                                             fixed(row.share_pct, 1),
                                             row.share_of,
                                             run.device,
                                             std::to_string(row.sm_clock_mhz),
                                             std::to_string(run.sm_clock_max_mhz),
                                             std::to_string(run.mem_clock_max_mhz),
                                             run.driver,
                                             run.cuda,
                                             info.nccl,
                                             run.commit,
                                             run.date};
    for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_field(fields[i]);
    out << '\n';
  }
}

nlohmann::ordered_json nccl_to_json(const NcclRunInfo& info, const std::vector<NcclRow>& rows) {
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  const RunInfo& run = info.run;
  for (const NcclRow& row : rows) {
    records.push_back({
        {"part", row.part},
        {"case", row.key},
        {"P", row.gpus},
        {"lib", row.library},
        {"function", row.function},
        {"mode", row.mode},
        {"dtype", dtype_name(row.dtype)},
        {"op", row.op},
        {"m", row.m},
        {"n", row.n},
        {"layout", row.layout},
        {"model", row.model},
        {"layers", row.layers},
        {"model_layers", row.model_layers},
        {"gemvs", row.gemvs},
        {"matrix_bytes", row.matrix_bytes},
        {"bytes", row.bytes},
        {"exchange_bytes", row.exchange_bytes},
        {"status", row.status},
        {"checked", row.checked},
        {"failed_checks", row.failed_checks},
        {"max_error", optional_json(row.max_error)},
        {"tolerance", optional_json(row.tolerance)},
        {"worst", row.worst},
        {"repetitions", row.repetitions},
        {"calls_per_repetition", row.calls_per_repetition},
        {"us", optional_json(row.us)},
        {"fastest_rank_us", optional_json(row.fastest_rank_us)},
        {"GBps", optional_json(row.gbps)},
        {"ceiling_GBps", optional_json(row.ceiling_gbps)},
        {"pct_ceiling", optional_json(row.pct_ceiling)},
        {"speedup_vs_1gpu", optional_json(row.speedup)},
        {"share_pct", optional_json(row.share_pct)},
        {"share_of", row.share_of},
        {"device", run.device},
        {"sm_clock_mhz", row.sm_clock_mhz},
        {"driver", run.driver},
        {"nccl", info.nccl},
        {"commit", run.commit},
        {"date", run.date},
    });
  }
  const NcclVerdict verdict = make_nccl_verdict(rows, info.gpus());
  nlohmann::ordered_json run_facts = run_json(run);
  run_facts["nccl"] = info.nccl;
  run_facts["visible_gpus"] = info.visible_gpus;
  run_facts["P"] = info.gpu_counts;
  run_facts["devices"] = info.devices;
  run_facts["decode_budget_bytes"] = info.decode_budget_bytes;
  return {{"run", run_facts},
          {"verdict", format_nccl_verdict(verdict)},
          {"exchanges", format_exchange_verdict(verdict)},
          {"records", records}};
}

void write_nccl_tables(std::ostream& out, const NcclRunInfo& info,
                       const std::vector<NcclRow>& rows) {
  write_bandwidth_table(out, rows, info.gpu_counts);
  write_decode_table(out, rows, info.gpu_counts);
  write_exchange_table(out, rows, info.gpu_counts);
  const NcclVerdict verdict = make_nccl_verdict(rows, info.gpus());
  out << format_nccl_verdict(verdict) << "\n" << format_exchange_verdict(verdict) << "\n";
}

void write_nccl_markdown(std::ostream& out, const NcclRunInfo& info,
                         const std::vector<NcclRow>& rows) {
  const NcclTimingPlan plan = plan_nccl_timing(info.run.quick);
  out << "# xgemv-nccl-bench: one GEMV split over several GPUs\n\n";
  write_run_table(out, info.run,
                  "one thread per GPU; median over " + std::to_string(plan.repetitions) +
                      " repetitions (after " + std::to_string(plan.warmup) +
                      ") of the slowest rank's time between CUDA events on its stream, every "
                      "repetition started by an all-reduce of one value; every rank's output "
                      "checked against an fp64 reference before it is timed");
  std::string devices;
  for (size_t i = 0; i < info.devices.size(); ++i)
    devices += std::string(i ? ", " : "") + std::to_string(i) + ": " + info.devices[i];
  out << "GPUs: " << info.visible_gpus << " visible, P = ";
  for (size_t i = 0; i < info.gpu_counts.size(); ++i) out << (i ? ", " : "") << info.gpu_counts[i];
  out << " (" << (devices.empty() ? "none" : devices) << "); NCCL " << info.nccl
      << "; decode budget " << fixed(double(info.decode_budget_bytes) / double(int64_t{1} << 30), 1)
      << " GiB of weights on one GPU.\n\n";
  if (info.gpus() == 1)
    out << "Only 1 GPU: P = 1 only; the targets on several GPUs are not measured.\n\n";
  write_nccl_tables(out, info, rows);

  std::vector<const NcclRow*> problems;
  for (const NcclRow& row : rows)
    if (row.status != "ok" && row.status.rfind("skipped", 0) != 0) problems.push_back(&row);
  if (!problems.empty()) {
    out << "\n## Failures\n\n";
    for (const NcclRow* row : problems)
      out << "- " << row_name(*row) << ": " << check_text(*row) << "\n";
  }
}

}  // namespace xgemv::bench
