#include "nrhs_report.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "format.hpp"
#include "measure.hpp"

namespace xgemv::bench {
namespace {

std::optional<double> ratio(const std::optional<double>& time, const std::optional<double>& base) {
  if (!time || !base || !(*base > 0)) return std::nullopt;
  return *time / *base;
}

std::string point_name(const NrhsRow& row) {
  return row.point.family + " nrhs " + std::to_string(row.point.nrhs);
}

bool failed(const std::string& status) {
  return status == "check failed" || status.rfind("error", 0) == 0;
}

std::optional<double> lowest(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return *std::min_element(values.begin(), values.end());
}

std::optional<double> geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return geometric_mean(values);
}

std::string band_text(const NrhsTargetBand& band) {
  std::string text = "<= " + fixed(band.bound, 2) + "x for nrhs " + std::to_string(band.low) +
                     ".." + std::to_string(band.high) + ": ";
  if (band.checked == 0) return text + "none in this run";
  text += band.met == band.checked ? "yes" : "NO";
  text += " (" + std::to_string(band.met) + "/" + std::to_string(band.checked);
  if (band.worst) text += ", worst " + speedup_text(band.worst) + ": " + band.worst_point;
  return text + ")";
}

}  // namespace

std::optional<double> nrhs_ratio_target(int64_t nrhs) {
  if (nrhs < 2 || nrhs > kNrhsTargetMax) return std::nullopt;
  return nrhs <= kNrhsTightMax ? kNrhsTightRatio : kNrhsLooseRatio;
}

std::vector<NrhsFamily> nrhs_families(const std::vector<NrhsPoint>& points) {
  std::vector<NrhsFamily> families;
  for (const NrhsPoint& point : points) {
    auto family = std::find_if(families.begin(), families.end(), [&](const NrhsFamily& f) {
      return f.group == point.group && f.family == point.family;
    });
    if (family == families.end()) {
      family = families.emplace(families.end());
      family->group = point.group;
      family->family = point.family;
      family->targeted = point.targeted;
    }
    if (family->cublas_function.empty()) family->cublas_function = point.cublas_function;
    family->rows.push_back({point, std::nullopt, std::nullopt, std::nullopt});
  }
  for (NrhsFamily& family : families) {
    std::stable_sort(family.rows.begin(), family.rows.end(),
                     [](const NrhsRow& a, const NrhsRow& b) { return a.point.nrhs < b.point.nrhs; });
    const auto one = std::find_if(family.rows.begin(), family.rows.end(),
                                  [](const NrhsRow& row) { return row.point.nrhs == 1; });
    const NrhsPoint base = one == family.rows.end() ? NrhsPoint{} : one->point;
    for (NrhsRow& row : family.rows) {
      row.xgemv_ratio = ratio(row.point.xgemv, base.xgemv);
      row.cublas_ratio = ratio(row.point.cublas, base.cublas);
      row.speedup = ratio(row.point.cublas, row.point.xgemv);
    }
  }
  return families;
}

std::vector<NrhsSummary> summarize_nrhs(const std::vector<NrhsFamily>& families) {
  struct Samples {
    NrhsSummary summary;
    std::vector<double> xgemv_ratios, cublas_ratios, speedups;
  };
  std::vector<Samples> groups;
  for (const NrhsFamily& family : families)
    for (const NrhsRow& row : family.rows) {
      auto group = std::find_if(groups.begin(), groups.end(), [&](const Samples& g) {
        return g.summary.group == family.group && g.summary.nrhs == row.point.nrhs;
      });
      if (group == groups.end()) {
        group = groups.emplace(groups.end());
        group->summary.group = family.group;
        group->summary.nrhs = row.point.nrhs;
      }
      if (row.point.xgemv) ++group->summary.families;
      if (row.xgemv_ratio) group->xgemv_ratios.push_back(*row.xgemv_ratio);
      if (row.cublas_ratio) group->cublas_ratios.push_back(*row.cublas_ratio);
      if (row.speedup) group->speedups.push_back(*row.speedup);
    }
  // By group in order of first appearance, then ascending nrhs.
  std::stable_sort(groups.begin(), groups.end(), [&](const Samples& a, const Samples& b) {
    const auto first = [&](const std::string& name) {
      return std::find_if(families.begin(), families.end(),
                          [&](const NrhsFamily& f) { return f.group == name; }) -
             families.begin();
    };
    return std::make_pair(first(a.summary.group), a.summary.nrhs) <
           std::make_pair(first(b.summary.group), b.summary.nrhs);
  });
  std::vector<NrhsSummary> summaries;
  for (Samples& group : groups) {
    group.summary.geomean_xgemv_ratio = geomean(group.xgemv_ratios);
    if (!group.xgemv_ratios.empty())
      group.summary.worst_xgemv_ratio =
          *std::max_element(group.xgemv_ratios.begin(), group.xgemv_ratios.end());
    group.summary.geomean_cublas_ratio = geomean(group.cublas_ratios);
    group.summary.geomean_speedup = geomean(group.speedups);
    group.summary.worst_speedup = lowest(group.speedups);
    summaries.push_back(group.summary);
  }
  return summaries;
}

NrhsVerdict make_nrhs_verdict(const std::vector<NrhsFamily>& families, std::string scope) {
  NrhsVerdict verdict;
  verdict.scope = std::move(scope);
  std::vector<double> speedups;
  for (const NrhsFamily& family : families)
    for (const NrhsRow& row : family.rows) {
      if (failed(row.point.xgemv_status))
        verdict.xgemv_failures.push_back(point_name(row) + " (" + row.point.xgemv_status + ")");
      if (!family.targeted || !nrhs_ratio_target(row.point.nrhs)) continue;
      NrhsTargetBand& band =
          row.point.nrhs <= verdict.tight.high ? verdict.tight : verdict.loose;
      ++band.checked;
      if (row.xgemv_ratio) {
        if (*row.xgemv_ratio <= band.bound) ++band.met;
        if (!band.worst || *row.xgemv_ratio > *band.worst) {
          band.worst = row.xgemv_ratio;
          band.worst_point = point_name(row);
        }
      }
      if (row.speedup) {
        speedups.push_back(*row.speedup);
        if (!verdict.worst_speedup || *row.speedup < *verdict.worst_speedup) {
          verdict.worst_speedup = row.speedup;
          verdict.worst_speedup_point = point_name(row);
        }
      }
    }
  verdict.geomean_speedup = geomean(speedups);
  return verdict;
}

std::string format_nrhs_verdict(const NrhsVerdict& verdict) {
  std::string text = "nrhs verdict (" + verdict.scope + "): time(nrhs)/time(1) " +
                     band_text(verdict.tight) + "; " + band_text(verdict.loose) +
                     "; speed-up vs cuBLAS GemmEx over nrhs 2.." +
                     std::to_string(kNrhsTargetMax) + ": ";
  text += verdict.geomean_speedup ? speedup_text(verdict.geomean_speedup) + " geo-mean, worst " +
                                        speedup_text(verdict.worst_speedup) + " (" +
                                        verdict.worst_speedup_point + ")"
                                  : std::string("n/a");
  for (size_t i = 0; i < verdict.xgemv_failures.size(); ++i)
    text += (i == 0 ? "; xgemv-nrhs FAILED on " + std::to_string(verdict.xgemv_failures.size()) +
                          " case(s): "
                    : ", ") +
            verdict.xgemv_failures[i];
  return text;
}

void write_nrhs_markdown(std::ostream& out, const std::vector<NrhsFamily>& families,
                         const NrhsUnits& units, const std::string& scope) {
  const std::string bound = units.bound;
  out << "\n## Few right-hand sides\n\n"
      << "xgemv: `xgemv_?gemv_nrhs` with nrhs columns (nrhs 1 too, so that its rows compare "
         "with each other); cuBLAS: the GEMM with the same columns (fp16/bf16 `cublasGemmEx`, "
         "CUBLAS_COMPUTE_32F; fp32 `cublasSgemm`; fp64 `cublasDgemm`). time/time(1): each "
         "library's time over its own time at nrhs 1. Speed-up: cuBLAS's time over xgemv's at "
         "the same nrhs. xgemv's targets: time/time(1) <= "
      << fixed(kNrhsTightRatio, 2) << "x for nrhs 2.." << kNrhsTightMax << " and <= "
      << fixed(kNrhsLooseRatio, 2) << "x for nrhs " << kNrhsTightMax + 1 << ".."
      << kNrhsTargetMax << ", counted over " << scope << ".\n\n"
      << "| group | nrhs | families | xgemv time/time(1) (geo-mean) | worst | cuBLAS "
         "time/time(1) (geo-mean) | speed-up vs cuBLAS (geo-mean) | worst |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const NrhsSummary& row : summarize_nrhs(families))
    out << "| " << row.group << " | " << row.nrhs << " | " << row.families << " | "
        << speedup_text(row.geomean_xgemv_ratio) << " | " << speedup_text(row.worst_xgemv_ratio)
        << " | " << speedup_text(row.geomean_cublas_ratio) << " | "
        << speedup_text(row.geomean_speedup) << " | " << speedup_text(row.worst_speedup)
        << " |\n";
  for (const NrhsFamily& family : families) {
    out << "\n### " << family.family << "\n\n"
        << "| nrhs | xgemv " << units.time_markdown << " | xgemv time/time(1) | xgemv % of "
        << bound << " | cuBLAS " << units.time_markdown << " ("
        << (family.cublas_function.empty() ? "-" : family.cublas_function)
        << ") | cuBLAS time/time(1) | speed-up vs cuBLAS |\n"
        << "|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const NrhsRow& row : family.rows)
      out << "| " << row.point.nrhs << " | " << fixed(row.point.xgemv, units.decimals, "-")
          << " | " << speedup_text(row.xgemv_ratio) << " | "
          << fixed(row.point.xgemv_pct_bound, 1, "-") << " | "
          << fixed(row.point.cublas, units.decimals, "-") << " | "
          << speedup_text(row.cublas_ratio) << " | " << speedup_text(row.speedup) << " |\n";
  }
  out << "\n" << format_nrhs_verdict(make_nrhs_verdict(families, scope)) << "\n";
}

void write_nrhs_table(std::ostream& out, const std::vector<NrhsFamily>& families,
                      const NrhsUnits& units, const std::string& scope) {
  int width = 6;
  for (const NrhsFamily& family : families)
    width = std::max(width, static_cast<int>(family.family.size()));
  const std::string xgemv_time = std::string("xgemv ") + units.time_console;
  const std::string cublas_time = std::string("cuBLAS ") + units.time_console;
  const std::string bound_share = std::string("%") + units.bound;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %5s %10s %7s %10s %7s %9s %9s", width, "family", "nrhs",
                xgemv_time.c_str(), "x t/t1", cublas_time.c_str(), "c t/t1", "speed-up",
                bound_share.c_str());
  out << line << '\n';
  for (const NrhsFamily& family : families)
    for (const NrhsRow& row : family.rows) {
      std::snprintf(line, sizeof line, "%-*s %5lld %10s %7s %10s %7s %9s %9s", width,
                    family.family.c_str(), static_cast<long long>(row.point.nrhs),
                    fixed(row.point.xgemv, units.decimals, "-").c_str(),
                    speedup_text(row.xgemv_ratio).c_str(),
                    fixed(row.point.cublas, units.decimals, "-").c_str(),
                    speedup_text(row.cublas_ratio).c_str(), speedup_text(row.speedup).c_str(),
                    fixed(row.point.xgemv_pct_bound, 1, "-").c_str());
      out << line << '\n';
    }
  out << format_nrhs_verdict(make_nrhs_verdict(families, scope)) << '\n';
}

nlohmann::ordered_json nrhs_json(const std::vector<NrhsFamily>& families, const NrhsUnits& units,
                                 const std::string& scope) {
  nlohmann::ordered_json summary = nlohmann::ordered_json::array();
  for (const NrhsSummary& row : summarize_nrhs(families))
    summary.push_back({{"group", row.group}, {"nrhs", row.nrhs}, {"families", row.families},
                       {"geomean_xgemv_ratio", optional_json(row.geomean_xgemv_ratio)},
                       {"worst_xgemv_ratio", optional_json(row.worst_xgemv_ratio)},
                       {"geomean_cublas_ratio", optional_json(row.geomean_cublas_ratio)},
                       {"geomean_speedup_vs_cublas", optional_json(row.geomean_speedup)},
                       {"worst_speedup_vs_cublas", optional_json(row.worst_speedup)}});
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const NrhsFamily& family : families) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const NrhsRow& row : family.rows)
      rows.push_back({{"nrhs", row.point.nrhs}, {"xgemv_time", optional_json(row.point.xgemv)},
                      {"xgemv_ratio", optional_json(row.xgemv_ratio)},
                      {"xgemv_pct_bound", optional_json(row.point.xgemv_pct_bound)},
                      {"xgemv_status", row.point.xgemv_status},
                      {"cublas_time", optional_json(row.point.cublas)},
                      {"cublas_ratio", optional_json(row.cublas_ratio)},
                      {"speedup_vs_cublas", optional_json(row.speedup)}});
    list.push_back({{"group", family.group}, {"family", family.family},
                    {"targeted", family.targeted}, {"cublas_function", family.cublas_function},
                    {"rows", rows}});
  }
  return {{"time_unit", units.time_console}, {"bound", units.bound}, {"scope", scope},
          {"summary", summary}, {"families", list},
          {"verdict", format_nrhs_verdict(make_nrhs_verdict(families, scope))}};
}

}  // namespace xgemv::bench
