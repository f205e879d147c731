// Few right-hand sides: how the time of one problem (a shape case, or a decode step) grows with
// the number of vectors, for xgemv's nrhs call and cuBLAS's GEMM with the same columns. Families
// (one problem at every nrhs) with each library's time(nrhs) / time(1) and the speed-up, their
// summary, the verdict on xgemv's targets, and the writers. The shape report (report.cpp) and the
// decode report (decode_report.cpp) hand their rows over as points.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace xgemv::bench {

// xgemv's targets: time(nrhs) / time(1) of the nrhs call at most 1.10 for nrhs 2 to 8 and 1.25
// for nrhs 9 to 16. None past 16: the call computes 16 vectors at a time.
inline constexpr int64_t kNrhsTightMax = 8;
inline constexpr double kNrhsTightRatio = 1.10;
inline constexpr int64_t kNrhsTargetMax = 16;
inline constexpr double kNrhsLooseRatio = 1.25;
// The bound on time(nrhs) / time(1) at nrhs, or none (nrhs 1, and past 16).
std::optional<double> nrhs_ratio_target(int64_t nrhs);

// One problem at one nrhs.
struct NrhsPoint {
  std::string group;   // what the summary sums over: "llm bf16", "decode fp16"
  std::string family;  // the problem without nrhs: "llm bf16 T 4096x6144 llama3-8b.qkv"
  bool targeted = false;  // counted by the verdict's targets
  int64_t nrhs = 1;
  std::optional<double> xgemv, cublas;  // times (µs per call, ms per step): xgemv-nrhs, the GEMM
  std::optional<double> xgemv_pct_bound;  // xgemv's share of the same run's lower bound
  std::string xgemv_status;     // of the xgemv-nrhs row; empty without one
  std::string cublas_function;  // the GEMM called: cublasGemmEx, cublasSgemm_v2, ...
};

// A point with its ratios: time(nrhs) / time(1) of each library, time(1) being its family's
// nrhs 1 point, and the speed-up, cuBLAS's time over xgemv's.
struct NrhsRow {
  NrhsPoint point;
  std::optional<double> xgemv_ratio, cublas_ratio, speedup;
};

struct NrhsFamily {
  std::string group, family, cublas_function;
  bool targeted = false;
  std::vector<NrhsRow> rows;  // ascending nrhs
};
// The points grouped by family (group and family name), in order of first appearance.
std::vector<NrhsFamily> nrhs_families(const std::vector<NrhsPoint>& points);

// Per group and nrhs, over its families.
struct NrhsSummary {
  std::string group;
  int64_t nrhs = 1;
  int families = 0;  // with an xgemv time
  std::optional<double> geomean_xgemv_ratio, worst_xgemv_ratio, geomean_cublas_ratio,
      geomean_speedup, worst_speedup;
};
std::vector<NrhsSummary> summarize_nrhs(const std::vector<NrhsFamily>& families);

// One band of nrhs and the bound its xgemv ratios are held to.
struct NrhsTargetBand {
  int64_t low = 0, high = 0;
  double bound = 0;
  int checked = 0, met = 0;  // targeted points in the band; an untimed one is not met
  std::optional<double> worst;  // the largest ratio
  std::string worst_point;
};

struct NrhsVerdict {
  std::string scope;  // what the targets are counted over, e.g. "xgemv, bf16/fp16 llm shapes"
  NrhsTargetBand tight{2, kNrhsTightMax, kNrhsTightRatio, 0, 0, std::nullopt, ""};
  NrhsTargetBand loose{kNrhsTightMax + 1, kNrhsTargetMax, kNrhsLooseRatio, 0, 0, std::nullopt, ""};
  // Over the targeted points of nrhs 2 to 16.
  std::optional<double> geomean_speedup, worst_speedup;
  std::string worst_speedup_point;
  std::vector<std::string> xgemv_failures;  // every family's: check failed or error
};
NrhsVerdict make_nrhs_verdict(const std::vector<NrhsFamily>& families, std::string scope);
// "nrhs verdict (<scope>): time(nrhs)/time(1) <= 1.10x for nrhs 2..8: yes (...); ...".
std::string format_nrhs_verdict(const NrhsVerdict& verdict);

// How a report names its times and its lower bound.
struct NrhsUnits {
  const char* time_markdown;  // "µs"
  const char* time_console;   // "us"
  int decimals;
  const char* bound;          // "ceiling", "one-read"
};

// "## Few right-hand sides": what the rows are, the summary, a table per family, the verdict.
void write_nrhs_markdown(std::ostream& out, const std::vector<NrhsFamily>& families,
                         const NrhsUnits& units, const std::string& scope);
// The console table (one line per family and nrhs), then the verdict line.
void write_nrhs_table(std::ostream& out, const std::vector<NrhsFamily>& families,
                      const NrhsUnits& units, const std::string& scope);
nlohmann::ordered_json nrhs_json(const std::vector<NrhsFamily>& families, const NrhsUnits& units,
                                 const std::string& scope);

}  // namespace xgemv::bench
