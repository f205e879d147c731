#include "decode_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "format.hpp"
#include "measure.hpp"
#include "options.hpp"

namespace xgemv::bench {
namespace {

std::string gigabytes(int64_t bytes) { return fixed(static_cast<double>(bytes) / 1e9, 2); }

std::string layers_text(const DecodeRow& row) {
  return std::to_string(row.layers) + "/" + std::to_string(row.model_layers);
}

// The rows of each step (model and dtype), by library, in order of first appearance.
struct StepRows {
  const DecodeRow* first = nullptr;
  std::map<std::string, const DecodeRow*> by_library;

  std::optional<double> ms(const std::string& library) const { return get(library, &DecodeRow::ms); }
  std::optional<double> get(const std::string& library,
                            std::optional<double> DecodeRow::*value) const {
    const auto row = by_library.find(library);
    return row == by_library.end() ? std::nullopt : row->second->*value;
  }
};

// The steps of one vector: those of several have the nrhs report.
std::vector<StepRows> group_by_step(const std::vector<DecodeRow>& rows) {
  std::vector<StepRows> steps;
  for (const DecodeRow& row : rows) {
    if (row.nrhs != 1) continue;
    auto step = std::find_if(steps.begin(), steps.end(), [&](const StepRows& s) {
      return s.first->model == row.model && s.first->dtype == row.dtype;
    });
    if (step == steps.end()) step = steps.insert(steps.end(), StepRows{&row, {}});
    step->by_library[row.library] = &row;
  }
  return steps;
}

std::string check_text(const DecodeRow& row) {
  std::string text = row.status;
  if (row.checked_gemvs > 0) {
    text += " (" + std::to_string(row.checked_gemvs) + " GEMVs";
    if (row.failed_gemvs > 0) text += ", " + std::to_string(row.failed_gemvs) + " failed";
    text += "; worst " + row.worst_gemv + " err " + general(row.max_error) + " / tol " +
            general(row.tolerance) + ")";
  }
  return text;
}

std::string row_name(const DecodeRow& row) {
  return row.model + " " + std::string(dtype_name(row.dtype)) +
         (row.nrhs == 1 ? "" : " nrhs " + std::to_string(row.nrhs)) + " " + row.library;
}

}  // namespace

std::string describe_step(const DecodeStep& step) {
  return step.model.name + (step.nrhs == 1 ? "" : ", nrhs " + std::to_string(step.nrhs)) + ": " +
         std::to_string(step.layers) + " of " +
         std::to_string(step.model.layers) + " layers + LM head, " +
         std::to_string(step.gemvs.size()) + " GEMVs, " + gigabytes(step.bytes()) +
         " GB per step";
}

std::string decode_progress_header() {
  char text[256];
  std::snprintf(text, sizeof text, "%-13s %-5s %4s %-7s %-17s %8s %9s %7s %9s %7s  %s", "model",
                "dtype", "nrhs", "layers", "library", "ms", "GB/s", "%read", "vs cuBLAS",
                "kernels", "check");
  return text;
}

std::string decode_progress_line(const DecodeRow& row) {
  char text[768];
  std::snprintf(text, sizeof text, "%-13s %-5s %4lld %-7s %-17s %8s %9s %7s %9s %7d  %s",
                row.model.c_str(), std::string(dtype_name(row.dtype)).c_str(),
                static_cast<long long>(row.nrhs), layers_text(row).c_str(), row.library.c_str(),
                fixed(row.ms, 3, "-").c_str(), fixed(row.gbps, 0, "-").c_str(),
                fixed(row.pct_one_read, 1, "-").c_str(),
                speedup_text(row.speedup_vs_cublas).c_str(), row.kernels,
                check_text(row).c_str());
  return text;
}

std::vector<DecodeSummary> summarize_decode(const std::vector<DecodeRow>& rows) {
  struct Samples {
    DecodeSummary summary;
    std::vector<double> speedups, pcts;
  };
  std::vector<Samples> groups;
  for (const DecodeRow& row : rows) {
    if (row.is_read() || !row.ms || row.nrhs != 1) continue;
    auto group = std::find_if(groups.begin(), groups.end(), [&](const Samples& g) {
      return g.summary.dtype == row.dtype && g.summary.library == row.library;
    });
    if (group == groups.end()) {
      group = groups.emplace(groups.end());
      group->summary.dtype = row.dtype;
      group->summary.library = row.library;
    }
    ++group->summary.steps;
    if (row.speedup_vs_cublas) {
      if (!group->summary.worst_speedup || *row.speedup_vs_cublas < *group->summary.worst_speedup) {
        group->summary.worst_speedup = row.speedup_vs_cublas;
        group->summary.worst_step = row.model;
      }
      group->speedups.push_back(*row.speedup_vs_cublas);
    }
    if (row.pct_one_read) group->pcts.push_back(*row.pct_one_read);
  }
  std::vector<DecodeSummary> summaries;
  for (Samples& group : groups) {
    if (!group.speedups.empty()) group.summary.geomean_speedup = geometric_mean(group.speedups);
    if (!group.pcts.empty()) {
      group.summary.geomean_pct_one_read = geometric_mean(group.pcts);
      group.summary.lowest_pct_one_read = *std::min_element(group.pcts.begin(), group.pcts.end());
    }
    summaries.push_back(group.summary);
  }
  return summaries;
}

std::string format_decode_verdict(const std::vector<DecodeRow>& rows) {
  std::string text = "verdict: speed-up per step over the faster cuBLAS (gemv or GemmEx):";
  bool any = false;
  for (const char* library : {"xgemv", kXgemvEarlyStart}) {
    std::string dtypes;
    for (const DecodeSummary& summary : summarize_decode(rows)) {
      if (summary.library != library || !summary.geomean_speedup) continue;
      dtypes += std::string(dtypes.empty() ? "" : ", ") + std::string(dtype_name(summary.dtype)) +
                " " + speedup_text(summary.geomean_speedup) + " geo-mean, worst " +
                speedup_text(summary.worst_speedup) + " (" + summary.worst_step + ")";
    }
    if (dtypes.empty()) continue;
    text += std::string(any ? ";" : "") + " " + library + " " + dtypes;
    any = true;
  }
  if (!any) text += " n/a";
  std::string failures;
  int failed = 0;
  for (const DecodeRow& row : rows) {
    if (!row.failed()) continue;
    failures += std::string(failed++ ? ", " : "") + row_name(row) + " (" + row.status + ")";
  }
  if (failed) text += "; FAILED " + std::to_string(failed) + " row(s): " + failures;
  return text;
}

std::vector<NrhsFamily> decode_nrhs_families(const std::vector<DecodeRow>& rows) {
  std::vector<NrhsPoint> points;
  std::vector<std::string> swept;  // families with an xgemv-nrhs row or a step of several vectors
  for (const DecodeRow& row : rows) {
    const std::string family = row.model + " " + std::string(dtype_name(row.dtype));
    if (row.nrhs != 1 || row.library == kXgemvNrhs)
      if (std::find(swept.begin(), swept.end(), family) == swept.end()) swept.push_back(family);
    auto point = std::find_if(points.begin(), points.end(), [&](const NrhsPoint& p) {
      return p.family == family && p.nrhs == row.nrhs;
    });
    if (point == points.end()) {
      point = points.emplace(points.end());
      point->group = "decode " + std::string(dtype_name(row.dtype));
      point->family = family;
      point->targeted = true;
      point->nrhs = row.nrhs;
    }
    if (row.library == kXgemvNrhs) {
      point->xgemv = row.ms;
      point->xgemv_pct_bound = row.pct_one_read;
      point->xgemv_status = row.status;
    } else if (row.library == kCublasGemmEx) {
      point->cublas = row.ms;
      point->cublas_function = row.function;
    }
  }
  points.erase(std::remove_if(points.begin(), points.end(),
                              [&](const NrhsPoint& point) {
                                return std::find(swept.begin(), swept.end(), point.family) ==
                                       swept.end();
                              }),
               points.end());
  return nrhs_families(points);
}

const std::vector<std::string>& decode_csv_columns() {
  static const std::vector<std::string> columns = {
      "model", "dtype", "nrhs", "layers", "model_layers", "gemvs", "weight_bytes", "bytes", "lib",
      "function", "status", "kernels", "replays", "ms", "GBps", "pct_one_read",
      "speedup_vs_cublas", "checked_gemvs", "failed_gemvs", "max_error", "tolerance",
      "worst_gemv", "device", "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_max_mhz", "driver",
      "cuda", "commit", "date"};
  return columns;
}

void write_decode_csv(std::ostream& out, const RunInfo& info, const std::vector<DecodeRow>& rows) {
  const auto& columns = decode_csv_columns();
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
  out << '\n';
  for (const DecodeRow& row : rows) {
    const std::vector<std::string> fields = {
        row.model, std::string(dtype_name(row.dtype)), std::to_string(row.nrhs),
        std::to_string(row.layers),
        std::to_string(row.model_layers), std::to_string(row.gemvs),
        std::to_string(row.weight_bytes), std::to_string(row.bytes), row.library, row.function,
        row.status, std::to_string(row.kernels), std::to_string(row.replays), fixed(row.ms, 4),
        fixed(row.gbps, 1), fixed(row.pct_one_read, 1), fixed(row.speedup_vs_cublas, 3),
        std::to_string(row.checked_gemvs), std::to_string(row.failed_gemvs),
        general(row.max_error), general(row.tolerance), row.worst_gemv, info.device,
        std::to_string(row.sm_clock_mhz), std::to_string(info.sm_clock_max_mhz),
        std::to_string(info.mem_clock_max_mhz), info.driver, info.cuda, info.commit, info.date};
    for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_field(fields[i]);
    out << '\n';
  }
}

nlohmann::ordered_json decode_to_json(const RunInfo& info, const std::vector<DecodeRow>& rows) {
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  for (const DecodeRow& row : rows) {
    records.push_back({
        {"model", row.model}, {"dtype", dtype_name(row.dtype)}, {"nrhs", row.nrhs},
        {"layers", row.layers},
        {"model_layers", row.model_layers}, {"gemvs", row.gemvs},
        {"weight_bytes", row.weight_bytes}, {"bytes", row.bytes}, {"lib", row.library},
        {"function", row.function}, {"status", row.status}, {"kernels", row.kernels},
        {"replays", row.replays}, {"ms", optional_json(row.ms)},
        {"GBps", optional_json(row.gbps)}, {"pct_one_read", optional_json(row.pct_one_read)},
        {"speedup_vs_cublas", optional_json(row.speedup_vs_cublas)},
        {"checked_gemvs", row.checked_gemvs}, {"failed_gemvs", row.failed_gemvs},
        {"max_error", optional_json(row.max_error)}, {"tolerance", optional_json(row.tolerance)},
        {"worst_gemv", row.worst_gemv}, {"sm_clock_mhz", row.sm_clock_mhz},
    });
  }
  nlohmann::ordered_json summary = nlohmann::ordered_json::array();
  for (const DecodeSummary& row : summarize_decode(rows)) {
    summary.push_back({{"dtype", dtype_name(row.dtype)}, {"lib", row.library},
                       {"steps", row.steps},
                       {"geomean_speedup_vs_cublas", optional_json(row.geomean_speedup)},
                       {"worst_speedup_vs_cublas", optional_json(row.worst_speedup)},
                       {"worst_step", row.worst_step},
                       {"geomean_pct_one_read", optional_json(row.geomean_pct_one_read)},
                       {"lowest_pct_one_read", optional_json(row.lowest_pct_one_read)}});
  }
  nlohmann::ordered_json json = {{"run", run_json(info)}, {"summary", summary}};
  if (const std::vector<NrhsFamily> families = decode_nrhs_families(rows); !families.empty())
    json["nrhs"] = nrhs_json(families, kDecodeNrhsUnits, kDecodeNrhsScope);
  json["records"] = records;
  return json;
}

void write_decode_markdown(std::ostream& out, const RunInfo& info,
                           const std::vector<DecodeRow>& rows) {
  const DecodeTimingPlan plan = plan_decode_timing(info.quick);
  out << "# xgemv-bench decode steps\n\n";
  write_run_table(out, info,
                  "one CUDA graph per step and library, median of " +
                      std::to_string(plan.replays) + " replays after " +
                      std::to_string(plan.warmup_replays) +
                      " warm-up replays; every GEMV's output checked after one replay");
  out << "A step is every layer's qkv, o, gate_up and down GEMV and the LM head, batch 1, each "
         "with weights of its own (op T, m = in_features, n = out_features); large models run "
         "their first layers (column layers: run / published). one-read: one read kernel over all the step's "
         "weights; per-GEMV reads: one read kernel per matrix, the step's launches without "
         "arithmetic. % of one-read = one-read ms / ms * 100. Speed-up = the faster of cuBLAS "
         "gemv and GemmEx over the library.\n\n";

  out << "## Summary\n\n"
      << "| dtype | library | steps | speed-up vs cuBLAS (geo-mean) | worst | "
         "% of one-read (geo-mean) | lowest |\n"
      << "|---|---|---:|---:|---:|---:|---:|\n";
  for (const DecodeSummary& row : summarize_decode(rows)) {
    out << "| " << dtype_name(row.dtype) << " | " << row.library << " | " << row.steps << " | "
        << speedup_text(row.geomean_speedup) << " | " << speedup_text(row.worst_speedup)
        << (row.worst_step.empty() ? "" : " (" + row.worst_step + ")") << " | "
        << fixed(row.geomean_pct_one_read, 1, "-") << " | "
        << fixed(row.lowest_pct_one_read, 1, "-") << " |\n";
  }

  out << "\n## Steps (ms per step)\n\n"
      << "| model | dtype | layers | GEMVs | GB per step | one-read | per-GEMV reads | xgemv | "
         "xgemv early start | cuBLAS gemv | cuBLAS GemmEx | xgemv % of one-read | "
         "early start % of one-read | xgemv speed-up | early start speed-up |\n"
      << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const StepRows& step : group_by_step(rows)) {
    const DecodeRow& first = *step.first;
    out << "| " << first.model << " | " << dtype_name(first.dtype) << " | "
        << layers_text(first) << " | " << first.gemvs << " | " << gigabytes(first.bytes);
    for (const std::string& library : kDecodeLibraries)
      out << " | " << fixed(step.ms(library), 3, "-");
    out << " | " << fixed(step.get("xgemv", &DecodeRow::pct_one_read), 1, "-") << " | "
        << fixed(step.get(kXgemvEarlyStart, &DecodeRow::pct_one_read), 1, "-") << " | "
        << speedup_text(step.get("xgemv", &DecodeRow::speedup_vs_cublas)) << " | "
        << speedup_text(step.get(kXgemvEarlyStart, &DecodeRow::speedup_vs_cublas)) << " |\n";
  }
  out << "\n" << format_decode_verdict(rows) << "\n";
  if (const std::vector<NrhsFamily> families = decode_nrhs_families(rows); !families.empty())
    write_nrhs_markdown(out, families, kDecodeNrhsUnits, kDecodeNrhsScope);

  std::vector<const DecodeRow*> problems;
  for (const DecodeRow& row : rows)
    if (row.status != "ok" && row.status.rfind("skipped", 0) != 0) problems.push_back(&row);
  if (!problems.empty()) {
    out << "\n## Failures\n\n";
    for (const DecodeRow* row : problems)
      out << "- " << row_name(*row) << ": " << check_text(*row) << "\n";
  }
}

void write_decode_table(std::ostream& out, const std::vector<DecodeRow>& rows) {
  char line[320];
  std::snprintf(line, sizeof line,
                "%-13s %-5s %-7s %6s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s", "model", "dtype",
                "layers", "GB", "one-read", "per-GEMV", "xgemv", "xgemv-es", "cuBLAS", "GemmEx",
                "x %read", "es %read", "x speed", "es speed");
  out << line << '\n';
  for (const StepRows& step : group_by_step(rows)) {
    const DecodeRow& first = *step.first;
    std::snprintf(
        line, sizeof line, "%-13s %-5s %-7s %6s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s",
        first.model.c_str(), std::string(dtype_name(first.dtype)).c_str(),
        layers_text(first).c_str(), gigabytes(first.bytes).c_str(),
        fixed(step.ms(kOneRead), 3, "-").c_str(), fixed(step.ms(kPerGemvReads), 3, "-").c_str(),
        fixed(step.ms("xgemv"), 3, "-").c_str(), fixed(step.ms(kXgemvEarlyStart), 3, "-").c_str(),
        fixed(step.ms("cublas"), 3, "-").c_str(), fixed(step.ms("cublas-gemmex"), 3, "-").c_str(),
        fixed(step.get("xgemv", &DecodeRow::pct_one_read), 1, "-").c_str(),
        fixed(step.get(kXgemvEarlyStart, &DecodeRow::pct_one_read), 1, "-").c_str(),
        speedup_text(step.get("xgemv", &DecodeRow::speedup_vs_cublas)).c_str(),
        speedup_text(step.get(kXgemvEarlyStart, &DecodeRow::speedup_vs_cublas)).c_str());
    out << line << '\n';
  }
  out << format_decode_verdict(rows) << '\n';
}

}  // namespace xgemv::bench
