// Results: one Measurement per (case, library), the metrics derived from a case's rows (GB/s,
// share of the ceiling, speed-up over cuBLAS), summaries, and the writers (console progress,
// CSV, JSON, markdown, the compact xgemv-vs-cuBLAS table and its verdict, and with --nrhs the
// table of time vs nrhs and its verdict).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "case.hpp"
#include "nrhs_report.hpp"

namespace xgemv::bench {

// Where and what ran; copied into every record.
struct RunInfo {
  std::string device = "none";
  int sm_clock_max_mhz = 0;
  int mem_clock_max_mhz = 0;
  std::string driver = "unknown";
  std::string cuda = "unknown";  // runtime version
  std::string commit = "unknown";
  std::string date;  // UTC, ISO 8601
  std::string host_cpu;
  std::string host_blas;  // OpenBLAS configuration and threads
  std::string command;
  std::string mode = "stream";  // stream or graph
  bool quick = false;
};

inline constexpr const char* kCeiling = "ceiling";  // the stream-read row of a GPU case

struct Measurement {
  Measurement() = default;
  Measurement(Case problem, std::string library_name, std::string entry_point,
              std::string timing_mode)
      : c(std::move(problem)),
        library(std::move(library_name)),
        function(std::move(entry_point)),
        mode(std::move(timing_mode)) {}

  int case_index = 0;  // rows of one case share it
  Case c;
  // xgemv, xgemv-nrhs, cublas, cublas-gemmex, cublas-gemm, openblas, ceiling, triton-seed
  std::string library;
  std::string function;  // the entry point called, e.g. cublasHSHgemvStridedBatched
  std::string mode;      // stream, graph or host
  std::string status = "ok";  // ok | check failed | error: ... | skipped: ...
  std::optional<double> max_error, tolerance;
  int64_t copies = 0;  // copies of A rotated
  int calls_per_batch = 0, batches = 0;
  std::optional<double> us;  // median time per call
  int sm_clock_mhz = 0;      // sampled right after the case (0: unknown)
  // Filled by derive_metrics().
  std::optional<double> gbps, ceiling_gbps, pct_ceiling, speedup_vs_cublas;

  bool is_cublas() const { return library.rfind("cublas", 0) == 0; }
  bool on_device() const { return mode != "host"; }
};

// GB/s of every timed row; for device rows the ceiling of their case and their share of it;
// for every row but the ceiling the speed-up over the fastest cuBLAS function of their case.
void derive_metrics(std::vector<Measurement>& rows);

// xgemv beside the fastest cuBLAS function on one case. The comparisons, their verdict and the
// summary are of the one-vector cases (nrhs 1); those of several vectors have the nrhs report.
struct Comparison {
  Case c;
  std::optional<double> xgemv_us, xgemv_gbps, cublas_gbps, ceiling_gbps, pct_ceiling, speedup;
  std::string cublas_function;
  std::string xgemv_function;  // entry point and kernel variant, "xgemv_hgemv/t_rowblock_32"
  std::string xgemv_status;    // empty without an xgemv row
};
std::vector<Comparison> compare_xgemv_to_cublas(const std::vector<Measurement>& rows);

inline constexpr int64_t kLargeMatrixBytes = int64_t{256} << 20;
inline constexpr double kLargeMatrixTargetPct = 80.0;

struct Verdict {
  std::optional<double> worst_speedup;
  std::string worst_case;
  int large_matrices = 0;  // A >= 256 MiB
  int large_on_target = 0;  // ... whose xgemv reached 80% of the ceiling
  std::vector<std::string> large_misses;
  std::vector<std::string> xgemv_failures;  // check failed or error
};
Verdict make_verdict(const std::vector<Comparison>& comparisons);
std::string format_verdict(const Verdict& verdict);

struct SummaryRow {
  std::string suite;
  Dtype dtype = Dtype::fp32;
  std::string library;
  int cases = 0;  // timed
  std::optional<double> geomean_speedup, worst_speedup, geomean_pct_ceiling, lowest_pct_ceiling;
};
// Per suite, dtype and library (all but the ceiling), in order of first appearance.
std::vector<SummaryRow> summarize(const std::vector<Measurement>& rows);

// The nrhs report of the shape cases: every problem that ran with --nrhs, xgemv-nrhs beside the
// cuBLAS GEMM with the same columns (cublas-gemmex for fp16/bf16, cublas-gemm for fp32/fp64);
// the targets count the fp16/bf16 cases of the llm suite.
inline const std::string kShapeNrhsScope = "xgemv, bf16/fp16 llm shapes";
inline constexpr NrhsUnits kShapeNrhsUnits = {"µs", "us", 2, "ceiling"};
std::vector<NrhsFamily> shape_nrhs_families(const std::vector<Measurement>& rows);

// Console progress: a header, then one line per row as it is measured.
std::string progress_header();
std::string progress_line(int case_number, int case_count, const Measurement& row);

// The run's facts (device, clocks, driver, commit, date, host, command, timing mode) as JSON,
// and as the markdown table that opens a summary, its timing line ending in `method`.
nlohmann::ordered_json run_json(const RunInfo& info);
void write_run_table(std::ostream& out, const RunInfo& info, const std::string& method);

const std::vector<std::string>& csv_columns();
void write_csv(std::ostream& out, const RunInfo& info, const std::vector<Measurement>& rows);
nlohmann::ordered_json to_json(const RunInfo& info, const std::vector<Measurement>& rows);
void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<Measurement>& rows);
// The compact table the closing notes quote, then the verdict line (one-vector cases).
void write_comparison_table(std::ostream& out, const std::vector<Comparison>& comparisons);

}  // namespace xgemv::bench
