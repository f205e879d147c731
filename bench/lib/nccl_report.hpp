// xgemv-nccl-bench's results: one NcclRow per (part, case, GPU count, library), the metrics
// derived from them (GB/s, the ceiling of P GPUs, speed-up over one GPU, an exchange's share of a
// decode-size split GEMV), the verdict on the targets, and the writers (console progress,
// nccl.csv, nccl.json, nccl.md and the closing tables). No GPU needed.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "check.hpp"
#include "nccl_plan.hpp"
#include "report.hpp"

namespace xgemv::bench {

// Where and what ran: the run's facts (GPU 0's device, clocks and driver, commit, date, command),
// NCCL, and the GPUs.
struct NcclRunInfo {
  RunInfo run;
  std::string nccl = "unknown";  // the loaded library's version
  int visible_gpus = 0;
  std::vector<int> gpu_counts;       // the P that ran
  std::vector<std::string> devices;  // the name of every GPU used, by ordinal
  int64_t decode_budget_bytes = 0;   // weights of a decode step on one GPU

  int gpus() const { return gpu_counts.empty() ? 0 : gpu_counts.back(); }
};

// The libraries of the rows, beside kCeiling: the one-GPU stream read on GPU 0 of a bandwidth
// case's matrix or of a decode step's weights.
inline constexpr const char* kXgemvNccl = "xgemv-nccl";  // xgemv_nccl_?gemv on every rank
inline constexpr const char* kNcclLibrary = "nccl";      // a collective on every rank

struct NcclRow {
  std::string part;             // kPartBandwidth, kPartDecode, kPartExchange
  std::string key;              // the case, the same at every P: its label, a model, an exchange
  std::string library;          // kXgemvNccl, kNcclLibrary, kCeiling
  std::string function;         // xgemv_nccl_bf16gemv, ncclAllGather, stream_read
  std::string mode = "stream";  // stream launches, or graph replays
  int gpus = 1;                 // P
  Dtype dtype = Dtype::bf16;
  std::string op;        // N or T (empty for a collective)
  int64_t m = 0, n = 0;  // the whole problem (0 for a decode step and a collective)
  std::string layout;    // layout_name(); "tensor-parallel" for a decode step
  std::string model;     // a decode step's
  int64_t layers = 0, model_layers = 0, gemvs = 1;
  int64_t matrix_bytes = 0;  // every matrix of the whole problem
  int64_t bytes = 0;         // moved: A, x, y once (a step: of every GEMV); read by the ceiling; a
                             // collective's input on each rank
  int64_t exchange_bytes = 0;  // a collective's input; for the decode-size split GEMV beside the
                               // collectives, the fp32 partial sums each rank contributes
  std::string status = "ok";   // ok | check failed | error: ... | skipped: ...
  // The check of every rank's output (every GEMV of a step): the one whose error is the largest
  // share of its tolerance.
  int checked = 0, failed_checks = 0;
  std::optional<double> max_error, tolerance;
  std::string worst;  // "rank 1", "rank 0 L3.down"
  int repetitions = 0, calls_per_repetition = 1;
  std::optional<double> us;  // median over repetitions of the slowest rank's time, per call
  std::optional<double> fastest_rank_us;  // the same of the fastest rank
  int sm_clock_mhz = 0;                   // GPU 0's, sampled after the row
  // Filled by derive_nccl_metrics().
  std::optional<double> gbps, ceiling_gbps, pct_ceiling, speedup, share_pct;
  std::string share_of;  // the split GEMV a collective's share is of

  bool failed() const { return status == "check failed" || status.rfind("error", 0) == 0; }
};

// The entry point of a dtype: xgemv_nccl_sgemv, _dgemv, _hgemv, _bf16gemv.
std::string nccl_gemv_function(Dtype dtype);

// The rows as the device fills them: the case's facts, nothing measured.
NcclRow bandwidth_row(const SplitGemv& gemv);
NcclRow decode_row(const TensorParallelStep& step);
NcclRow exchange_row(const ExchangeCase& exchange);
NcclRow share_row(const SplitGemv& gemv, int64_t exchange_bytes);
// The one-GPU stream read of `bytes_read` beside `of` (P = 1).
NcclRow ceiling_row(const NcclRow& of, int64_t bytes_read);

// Folds one rank's check (of one GEMV) into the row; a failed check fails the row.
void add_check(NcclRow& row, const std::string& where, const CheckResult& check);

// GB/s of every timed row (bytes / time; for a collective NCCL's algorithm bandwidth); for the
// split GEMVs of the bandwidth and decode parts the ceiling of P GPUs (P x the one-GPU read of
// their case) and their share of it; for every row but the ceilings the speed-up over its own
// P = 1 row (time at 1 / time at P); for the collectives their time as a share of the
// decode-size split GEMV of the same exchange bytes and P.
void derive_nccl_metrics(std::vector<NcclRow>& rows);

// The targets: matrices >= 1 GiB at >= 1.8x one GPU on 2 GPUs and >= 3.4x on 4; Llama-3-70B's
// tensor-parallel layers at >= 1.6x one GPU on 2; an exchange dominates a split GEMV from half
// its time.
struct ScalingTarget {
  int gpus;
  double speedup;
};
inline constexpr ScalingTarget kBandwidthTargets[] = {{2, 1.8}, {4, 3.4}};
inline constexpr ScalingTarget kDecodeTarget = {2, 1.6};
inline const std::string kDecodeTargetModel = "llama3-70b";
inline constexpr double kDominantSharePct = 50.0;

struct TargetCheck {
  ScalingTarget target{};
  bool measured = false;  // the run had that many GPUs
  int checked = 0, met = 0;
  std::optional<double> worst;
  std::string worst_case;
  std::vector<std::string> misses;  // the cases under the target, failed or not timed
};
struct NcclVerdict {
  int gpus = 0;                        // the largest P of the run
  std::vector<TargetCheck> bandwidth;  // one per kBandwidthTargets
  TargetCheck decode;
  // The largest share of a decode-size split GEMV's time among the collectives at P >= 2 (at P =
  // 1 when the run had one GPU).
  std::optional<double> largest_share;
  std::string largest_share_case;
  int largest_share_gpus = 0;
};
NcclVerdict make_nccl_verdict(const std::vector<NcclRow>& rows, int gpus);
// "verdict: matrices >= 1 GiB, speed-up over one GPU: 2 GPUs >= 1.80x: yes (...); 4 GPUs >=
// 3.40x: not measured (only 2 GPU(s)); llama3-70b tensor-parallel layers, 2 GPUs >= 1.60x: ..."
std::string format_nccl_verdict(const NcclVerdict& verdict);
// "exchanges: ... they do not dominate (< 50% of the split GEMV)".
std::string format_exchange_verdict(const NcclVerdict& verdict);

// Console progress: a header, then one line per row as it is measured.
std::string nccl_progress_header();
std::string nccl_progress_line(const NcclRow& row);

const std::vector<std::string>& nccl_csv_columns();
void write_nccl_csv(std::ostream& out, const NcclRunInfo& info, const std::vector<NcclRow>& rows);
nlohmann::ordered_json nccl_to_json(const NcclRunInfo& info, const std::vector<NcclRow>& rows);
void write_nccl_markdown(std::ostream& out, const NcclRunInfo& info,
                         const std::vector<NcclRow>& rows);
// The three tables (bandwidth, decode steps, exchanges) over the GPU counts of the run, then the
// verdict and exchange lines: the end of the console output and the body of nccl.md.
void write_nccl_tables(std::ostream& out, const NcclRunInfo& info,
                       const std::vector<NcclRow>& rows);

}  // namespace xgemv::bench
