#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>

#include "format.hpp"
#include "measure.hpp"
#include "options.hpp"

namespace xgemv::bench {
namespace {

// The rows of each case, by case_index, in order of first appearance.
std::vector<std::vector<Measurement*>> group_by_case(std::vector<Measurement>& rows) {
  std::vector<std::vector<Measurement*>> groups;
  std::map<int, size_t> group_of_case;
  for (Measurement& row : rows) {
    auto [it, inserted] = group_of_case.emplace(row.case_index, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(&row);
  }
  return groups;
}

}  // namespace

void derive_metrics(std::vector<Measurement>& rows) {
  for (auto& group : group_by_case(rows)) {
    std::optional<double> ceiling_gbps, best_cublas_us;
    for (Measurement* row : group) {
      row->gbps.reset();
      if (!row->us || *row->us <= 0) continue;
      row->gbps = static_cast<double>(row->c.bytes()) / *row->us / 1e3;
      if (row->library == kCeiling) ceiling_gbps = row->gbps;
      if (row->is_cublas()) best_cublas_us = std::min(best_cublas_us.value_or(*row->us), *row->us);
    }
    for (Measurement* row : group) {
      row->ceiling_gbps.reset();
      row->pct_ceiling.reset();
      row->speedup_vs_cublas.reset();
      if (!row->gbps || row->library == kCeiling) continue;
      if (row->on_device() && ceiling_gbps) {
        row->ceiling_gbps = ceiling_gbps;
        row->pct_ceiling = 100.0 * *row->gbps / *ceiling_gbps;
      }
      if (best_cublas_us) row->speedup_vs_cublas = *best_cublas_us / *row->us;
    }
  }
}

std::vector<Comparison> compare_xgemv_to_cublas(const std::vector<Measurement>& rows) {
  std::vector<Comparison> comparisons;
  std::map<int, size_t> comparison_of_case;
  for (const Measurement& row : rows) {
    if (row.c.nrhs != 1) continue;
    if (row.library != "xgemv" && !row.is_cublas() && row.library != kCeiling) continue;
    auto [it, inserted] = comparison_of_case.emplace(row.case_index, comparisons.size());
    if (inserted) comparisons.emplace_back().c = row.c;
    Comparison& comparison = comparisons[it->second];
    if (row.library == "xgemv") {
      comparison.xgemv_status = row.status;
      comparison.xgemv_function = row.function;
    }
    if (!row.gbps) continue;
    if (row.library == kCeiling) {
      comparison.ceiling_gbps = row.gbps;
    } else if (row.library == "xgemv") {
      comparison.xgemv_us = row.us;
      comparison.xgemv_gbps = row.gbps;
      comparison.pct_ceiling = row.pct_ceiling;
      comparison.speedup = row.speedup_vs_cublas;
    } else if (!comparison.cublas_gbps || *row.gbps > *comparison.cublas_gbps) {
      comparison.cublas_gbps = row.gbps;
      comparison.cublas_function = row.function;
    }
  }
  // A case with only a ceiling row (e.g. --lib openblas) compares nothing.
  comparisons.erase(std::remove_if(comparisons.begin(), comparisons.end(),
                                   [](const Comparison& c) {
                                     return c.xgemv_status.empty() && !c.cublas_gbps;
                                   }),
                    comparisons.end());
  return comparisons;
}

Verdict make_verdict(const std::vector<Comparison>& comparisons) {
  Verdict verdict;
  for (const Comparison& comparison : comparisons) {
    const std::string& status = comparison.xgemv_status;
    if (status == "check failed" || status.rfind("error", 0) == 0)
      verdict.xgemv_failures.push_back(comparison.c.label() + " (" + status + ")");
    if (comparison.speedup &&
        (!verdict.worst_speedup || *comparison.speedup < *verdict.worst_speedup)) {
      verdict.worst_speedup = comparison.speedup;
      verdict.worst_case = comparison.c.label();
    }
    if (comparison.c.a_bytes() < kLargeMatrixBytes) continue;
    ++verdict.large_matrices;
    if (comparison.pct_ceiling && *comparison.pct_ceiling >= kLargeMatrixTargetPct) {
      ++verdict.large_on_target;
    } else {
      verdict.large_misses.push_back(comparison.c.label() + " " +
                                     fixed(comparison.pct_ceiling, 0, "untimed") +
                                     (comparison.pct_ceiling ? "%" : ""));
    }
  }
  return verdict;
}

std::string format_verdict(const Verdict& verdict) {
  std::string text = "verdict: worst speed-up vs cuBLAS ";
  text += verdict.worst_speedup
              ? speedup_text(verdict.worst_speedup) + " (" + verdict.worst_case + ")"
              : std::string("n/a");
  text += "; matrices >= 256 MiB at >= 80% of ceiling: ";
  if (verdict.large_matrices == 0) {
    text += "none in this run";
  } else {
    text += verdict.large_on_target == verdict.large_matrices ? "yes" : "NO";
    text += " (" + std::to_string(verdict.large_on_target) + "/" +
            std::to_string(verdict.large_matrices) + ")";
    for (size_t i = 0; i < verdict.large_misses.size(); ++i)
      text += (i == 0 ? " below: " : ", ") + verdict.large_misses[i];
  }
  for (size_t i = 0; i < verdict.xgemv_failures.size(); ++i)
    text += (i == 0 ? "; xgemv FAILED on " + std::to_string(verdict.xgemv_failures.size()) +
                          " case(s): "
                    : ", ") +
            verdict.xgemv_failures[i];
  return text;
}

std::vector<SummaryRow> summarize(const std::vector<Measurement>& rows) {
  struct Samples {
    SummaryRow row;
    std::vector<double> speedups, pcts;
  };
  std::vector<Samples> groups;
  for (const Measurement& row : rows) {
    if (row.library == kCeiling || !row.us || row.c.nrhs != 1) continue;
    auto group = std::find_if(groups.begin(), groups.end(), [&](const Samples& g) {
      return g.row.suite == row.c.suite && g.row.dtype == row.c.dtype &&
             g.row.library == row.library;
    });
    if (group == groups.end()) {
      group = groups.emplace(groups.end());
      group->row.suite = row.c.suite;
      group->row.dtype = row.c.dtype;
      group->row.library = row.library;
    }
    ++group->row.cases;
    if (row.speedup_vs_cublas) group->speedups.push_back(*row.speedup_vs_cublas);
    if (row.pct_ceiling) group->pcts.push_back(*row.pct_ceiling);
  }
  std::vector<SummaryRow> summary;
  for (Samples& group : groups) {
    if (!group.speedups.empty()) {
      group.row.geomean_speedup = geometric_mean(group.speedups);
      group.row.worst_speedup = *std::min_element(group.speedups.begin(), group.speedups.end());
    }
    if (!group.pcts.empty()) {
      group.row.geomean_pct_ceiling = geometric_mean(group.pcts);
      group.row.lowest_pct_ceiling = *std::min_element(group.pcts.begin(), group.pcts.end());
    }
    summary.push_back(group.row);
  }
  return summary;
}

std::vector<NrhsFamily> shape_nrhs_families(const std::vector<Measurement>& rows) {
  std::vector<NrhsPoint> points;
  std::vector<std::string> swept;  // families with a row of --nrhs or a case of several vectors
  std::map<int, size_t> point_of_case;
  for (const Measurement& row : rows) {
    const Case& c = row.c;
    const bool sixteen_bit = c.dtype == Dtype::fp16 || c.dtype == Dtype::bf16;
    const std::string family = c.suite + " " + c.with_nrhs(1).label();
    if (c.nrhs != 1 || row.library == kXgemvNrhs || row.library == kCublasGemm)
      if (std::find(swept.begin(), swept.end(), family) == swept.end()) swept.push_back(family);
    auto [it, inserted] = point_of_case.emplace(row.case_index, points.size());
    if (inserted) {
      NrhsPoint& point = points.emplace_back();
      point.group = c.suite + " " + std::string(dtype_name(c.dtype));
      point.family = family;
      point.targeted = c.suite == "llm" && sixteen_bit;
      point.nrhs = c.nrhs;
    }
    NrhsPoint& point = points[it->second];
    if (row.library == kXgemvNrhs) {
      point.xgemv = row.us;
      point.xgemv_pct_bound = row.pct_ceiling;
      point.xgemv_status = row.status;
    } else if (row.library == (sixteen_bit ? kCublasGemmEx : kCublasGemm)) {
      point.cublas = row.us;
      point.cublas_function = row.function;
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

std::string progress_header() {
  char text[256];
  std::snprintf(text, sizeof text, "%-9s %-5s %-2s %-15s %4s %-18s %-14s %10s %9s %6s %9s  %s",
                "case", "dtype", "op", "m x n", "nrhs", "tag", "library", "us", "GB/s", "%ceil",
                "vs cuBLAS", "check");
  return text;
}

std::string progress_line(int case_number, int case_count, const Measurement& row) {
  char counter[32];
  std::snprintf(counter, sizeof counter, "[%d/%d]", case_number, case_count);
  std::string check = row.status;
  if (row.max_error) check += " (err " + general(row.max_error) + ")";
  char text[512];
  std::snprintf(text, sizeof text, "%-9s %-5s %-2c %-15s %4lld %-18s %-14s %10s %9s %6s %9s  %s",
                counter, std::string(dtype_name(row.c.dtype)).c_str(), row.c.op,
                row.c.shape().c_str(), static_cast<long long>(row.c.nrhs), row.c.tag.c_str(),
                row.library.c_str(), fixed(row.us, 2, "-").c_str(),
                fixed(row.gbps, 1, "-").c_str(), fixed(row.pct_ceiling, 1, "-").c_str(),
                speedup_text(row.speedup_vs_cublas).c_str(), check.c_str());
  return text;
}

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> columns = {
      "suite", "tag", "dtype", "op", "m", "n", "nrhs", "lda", "incx", "incy", "alpha", "beta",
      "bytes",
      "lib", "function", "mode", "status", "max_error", "tolerance", "copies",
      "calls_per_batch", "batches", "us", "GBps", "ceiling_GBps", "pct_ceiling",
      "speedup_vs_cublas", "device", "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_max_mhz",
      "driver", "cuda", "commit", "date"};
  return columns;
}

void write_csv(std::ostream& out, const RunInfo& info, const std::vector<Measurement>& rows) {
  const auto& columns = csv_columns();
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
  out << '\n';
  for (const Measurement& row : rows) {
    const Case& c = row.c;
    const std::vector<std::string> fields = {
        c.suite, c.tag, std::string(dtype_name(c.dtype)), std::string(1, c.op),
        std::to_string(c.m), std::to_string(c.n), std::to_string(c.nrhs), std::to_string(c.lda()),
        std::to_string(c.incx),
        std::to_string(c.incy), general(c.alpha), general(c.beta), std::to_string(c.bytes()),
        row.library, row.function, row.mode, row.status, general(row.max_error),
        general(row.tolerance), std::to_string(row.copies), std::to_string(row.calls_per_batch),
        std::to_string(row.batches), fixed(row.us, 3), fixed(row.gbps, 1),
        fixed(row.ceiling_gbps, 1), fixed(row.pct_ceiling, 1), fixed(row.speedup_vs_cublas, 3),
        info.device, std::to_string(row.sm_clock_mhz), std::to_string(info.sm_clock_max_mhz),
        std::to_string(info.mem_clock_max_mhz), info.driver, info.cuda, info.commit, info.date};
    for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_field(fields[i]);
    out << '\n';
  }
}

nlohmann::ordered_json run_json(const RunInfo& info) {
  return {{"device", info.device}, {"sm_clock_max_mhz", info.sm_clock_max_mhz},
          {"mem_clock_max_mhz", info.mem_clock_max_mhz}, {"driver", info.driver},
          {"cuda", info.cuda}, {"commit", info.commit}, {"date", info.date},
          {"host_cpu", info.host_cpu}, {"host_blas", info.host_blas},
          {"command", info.command}, {"mode", info.mode}, {"quick", info.quick}};
}

nlohmann::ordered_json to_json(const RunInfo& info, const std::vector<Measurement>& rows) {
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  for (const Measurement& row : rows) {
    const Case& c = row.c;
    records.push_back({
        {"suite", c.suite}, {"tag", c.tag}, {"dtype", dtype_name(c.dtype)},
        {"op", std::string(1, c.op)}, {"m", c.m}, {"n", c.n}, {"nrhs", c.nrhs}, {"lda", c.lda()},
        {"incx", c.incx}, {"incy", c.incy}, {"alpha", c.alpha}, {"beta", c.beta},
        {"bytes", c.bytes()}, {"lib", row.library}, {"function", row.function},
        {"mode", row.mode}, {"status", row.status}, {"max_error", optional_json(row.max_error)},
        {"tolerance", optional_json(row.tolerance)}, {"copies", row.copies},
        {"calls_per_batch", row.calls_per_batch}, {"batches", row.batches},
        {"us", optional_json(row.us)}, {"GBps", optional_json(row.gbps)},
        {"ceiling_GBps", optional_json(row.ceiling_gbps)},
        {"pct_ceiling", optional_json(row.pct_ceiling)},
        {"speedup_vs_cublas", optional_json(row.speedup_vs_cublas)},
        {"device", info.device}, {"sm_clock_mhz", row.sm_clock_mhz},
        {"sm_clock_max_mhz", info.sm_clock_max_mhz}, {"mem_clock_max_mhz", info.mem_clock_max_mhz},
        {"driver", info.driver}, {"cuda", info.cuda}, {"commit", info.commit}, {"date", info.date},
    });
  }
  nlohmann::ordered_json summary = nlohmann::ordered_json::array();
  for (const SummaryRow& row : summarize(rows)) {
    summary.push_back({{"suite", row.suite}, {"dtype", dtype_name(row.dtype)},
                       {"lib", row.library}, {"cases", row.cases},
                       {"geomean_speedup_vs_cublas", optional_json(row.geomean_speedup)},
                       {"worst_speedup_vs_cublas", optional_json(row.worst_speedup)},
                       {"geomean_pct_ceiling", optional_json(row.geomean_pct_ceiling)},
                       {"lowest_pct_ceiling", optional_json(row.lowest_pct_ceiling)}});
  }
  nlohmann::ordered_json json = {{"run", run_json(info)}, {"summary", summary}};
  if (const std::vector<NrhsFamily> families = shape_nrhs_families(rows); !families.empty())
    json["nrhs"] = nrhs_json(families, kShapeNrhsUnits, kShapeNrhsScope);
  json["records"] = records;
  return json;
}

namespace {

void write_markdown_comparisons(std::ostream& out, const std::vector<Comparison>& comparisons) {
  out << "| dtype | op | m x n | tag | xgemv µs | xgemv GB/s | xgemv function | cuBLAS GB/s | "
         "cuBLAS function | ceiling GB/s | xgemv % of ceiling | speed-up vs cuBLAS |\n"
      << "|---|---|---:|---|---:|---:|---|---:|---|---:|---:|---:|\n";
  for (const Comparison& row : comparisons) {
    out << "| " << dtype_name(row.c.dtype) << " | " << row.c.op << " | " << row.c.shape()
        << " | " << row.c.tag << " | " << fixed(row.xgemv_us, 2, "-") << " | "
        << fixed(row.xgemv_gbps, 0, "-") << " | "
        << (row.xgemv_function.empty() ? "-" : row.xgemv_function) << " | "
        << fixed(row.cublas_gbps, 0, "-") << " | "
        << (row.cublas_function.empty() ? "-" : row.cublas_function) << " | "
        << fixed(row.ceiling_gbps, 0, "-") << " | " << fixed(row.pct_ceiling, 1, "-") << " | "
        << speedup_text(row.speedup) << " |\n";
  }
}

}  // namespace

void write_run_table(std::ostream& out, const RunInfo& info, const std::string& method) {
  out << "| | |\n|---|---|\n"
      << "| date | " << info.date << " |\n"
      << "| device | " << info.device << " (SM clock max " << info.sm_clock_max_mhz
      << " MHz, memory clock max " << info.mem_clock_max_mhz << " MHz) |\n"
      << "| driver, CUDA runtime | " << info.driver << ", " << info.cuda << " |\n"
      << "| commit | " << info.commit << " |\n"
      << "| host | " << info.host_cpu << "; " << info.host_blas << " |\n"
      << "| timing | " << info.mode << (info.quick ? ", quick" : "") << "; " << method << " |\n"
      << "| command | `" << info.command << "` |\n\n";
}

void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<Measurement>& rows) {
  out << "# xgemv-bench results\n\n";
  write_run_table(out, info,
                  "medians of batches of back-to-back calls, A rotated over >= 1 GiB of copies");
  out << "Speed-up is cuBLAS's time over the library's, against the fastest cuBLAS function for "
         "each case (fp16/bf16: the gemv or the one-column GemmEx). The ceiling is a stream read "
         "of the same bytes (A + x + y; with nrhs vectors A + X + Y, A once) in the same run.\n\n";

  out << "## Summary\n\n"
      << "| suite | dtype | library | cases | speed-up vs cuBLAS (geo-mean) | worst | "
         "% of ceiling (geo-mean) | lowest |\n"
      << "|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const SummaryRow& row : summarize(rows)) {
    out << "| " << row.suite << " | " << dtype_name(row.dtype) << " | " << row.library << " | "
        << row.cases << " | " << speedup_text(row.geomean_speedup) << " | "
        << speedup_text(row.worst_speedup) << " | " << fixed(row.geomean_pct_ceiling, 1, "-")
        << " | " << fixed(row.lowest_pct_ceiling, 1, "-") << " |\n";
  }

  const std::vector<Comparison> comparisons = compare_xgemv_to_cublas(rows);
  std::vector<std::string> suites;
  for (const Comparison& row : comparisons)
    if (std::find(suites.begin(), suites.end(), row.c.suite) == suites.end())
      suites.push_back(row.c.suite);
  for (const std::string& suite : suites) {
    std::vector<Comparison> in_suite;
    std::copy_if(comparisons.begin(), comparisons.end(), std::back_inserter(in_suite),
                 [&](const Comparison& row) { return row.c.suite == suite; });
    out << "\n## " << suite << "\n\n";
    write_markdown_comparisons(out, in_suite);
  }
  if (!comparisons.empty()) out << "\n" << format_verdict(make_verdict(comparisons)) << "\n";
  if (const std::vector<NrhsFamily> families = shape_nrhs_families(rows); !families.empty())
    write_nrhs_markdown(out, families, kShapeNrhsUnits, kShapeNrhsScope);

  std::vector<const Measurement*> problems;
  for (const Measurement& row : rows)
    if (row.status != "ok" && row.status.rfind("skipped", 0) != 0) problems.push_back(&row);
  if (!problems.empty()) {
    out << "\n## Failures\n\n";
    for (const Measurement* row : problems)
      out << "- " << row->c.suite << " " << row->c.label() << " " << row->library << ": "
          << row->status << (row->max_error ? " (max error " + general(row->max_error) + ")" : "")
          << "\n";
  }
}

void write_comparison_table(std::ostream& out, const std::vector<Comparison>& comparisons) {
  char line[256];
  std::snprintf(line, sizeof line, "%-5s %-2s %-15s %-14s %10s %10s %10s %8s %9s", "dtype", "op",
                "m x n", "tag", "xgemv GB/s", "cuBLAS", "ceiling", "% ceil", "speed-up");
  out << line << '\n';
  for (const Comparison& row : comparisons) {
    std::snprintf(line, sizeof line, "%-5s %-2c %-15s %-14s %10s %10s %10s %8s %9s",
                  std::string(dtype_name(row.c.dtype)).c_str(), row.c.op, row.c.shape().c_str(),
                  row.c.tag.c_str(), fixed(row.xgemv_gbps, 0, "-").c_str(),
                  fixed(row.cublas_gbps, 0, "-").c_str(), fixed(row.ceiling_gbps, 0, "-").c_str(),
                  fixed(row.pct_ceiling, 1, "-").c_str(), speedup_text(row.speedup).c_str());
    out << line << '\n';
  }
  out << format_verdict(make_verdict(comparisons)) << '\n';
}

}  // namespace xgemv::bench
