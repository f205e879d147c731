// The one measurement record of every suite (shape cases, decode steps, several vectors, several
// GPUs): the case, what ran it, what was measured, and the metrics derived from the records of
// one run. The writers (report.hpp) and the verdicts (verdict.hpp) know nothing else.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "case.hpp"
#include "check.hpp"

namespace xgemv::bench {

// Where and what ran: the same for every record of a run.
struct RunInfo {
  std::string device = "none";
  int sm_clock_max_mhz = 0, mem_clock_max_mhz = 0;
  std::string driver = "unknown", cuda = "unknown";  // cuda: the runtime's version
  std::string nccl;                                  // the NCCL library's, where it ran
  std::string commit = "unknown", date;              // date: UTC, ISO 8601
  std::string host_cpu, host_blas, command;
  std::string mode = "stream";  // stream, graph, or what each part used
  bool quick = false;
  std::string method;                                               // how it timed, in a few words
  nlohmann::ordered_json facts = nlohmann::ordered_json::object();  // a bench's own (its GPUs)
};

// The rows that bound a case from below in the same run: the stream read of its bytes (of a decode
// step's weights); P GPUs are bounded by P times the one-GPU read.
inline constexpr const char* kCeiling = "ceiling";
inline constexpr const char* kOneRead = "one-read";

struct Record {
  // The case. A record of one GEMV has its BLAS shape; a decode step or a collective has m = n = 0.
  std::string suite;  // llm, square, skinny, small, anchors, adhoc, decode, nccl-bandwidth, ...
  std::string tag;    // llama3-8b.qkv; a decode step's model; ncclAllGather 32 KB
  Dtype dtype = Dtype::fp32;
  std::string format;  // how the weights are stored: empty for the dtype's own elements
  char op = 'T';
  int64_t m = 0, n = 0, nrhs = 1, lda = 0, incx = 1, incy = 1;
  double alpha = 1, beta = 0;
  std::string layout;  // split over GPUs: outputs/own-block, reduction/all, tensor-parallel
  int64_t layers = 0, model_layers = 0, gemvs = 1;  // a step's layers run and published; GEMVs
  int gpus = 1;                                     // P
  int64_t matrix_bytes = 0;                         // the matrices
  int64_t bytes = 0;  // what the case moves once (bench/README.md, Method): GB/s are of it
  // A collective's input on each rank; beside the collectives, the fp32 partial sums a split GEMV
  // exchanges.
  int64_t exchange_bytes = 0;
  // What ran it.
  std::string lib;       // xgemv, xgemv-nrhs, cublas, cublas-gemmex, openblas, ceiling, ...
  std::string function;  // the entry point, with xgemv's kernel variants: xgemv_hgemv/t_rowblock_32
  std::string mode = "stream";  // stream, graph or host
  // The check before timing: ok | check failed | error: ... | skipped: ...
  std::string status = "ok";
  int checked = 0, failed_checks = 0;
  std::optional<double> max_error, tolerance;  // of the output furthest from its reference
  std::string worst;                           // which output that is: L3.down, rank 1
  // The timing.
  int64_t copies = 0;  // copies of A rotated
  int calls_per_batch = 0, batches = 0;
  int kernels = 0;  // kernel nodes of a step's graph
  // Per call: the median over the batches, their interquartile range as a percentage of it; on
  // several GPUs the slowest rank's times, and the fastest rank's median.
  std::optional<double> us, spread_pct, fastest_rank_us;
  int sm_clock_mhz = 0;  // sampled after the case (0: unknown)
  // Derived from the run's records by derive_metrics().
  std::optional<double> gbps, bound_gbps, pct_bound;
  // The reference's time over this one: the fastest cuBLAS record of the case; without one, on a
  // case run on several GPUs, the same library on one GPU.
  std::optional<double> speedup;
  std::optional<double> nrhs_ratio;  // time / the same library's time on the case at nrhs 1
  std::optional<double> share_pct;   // a collective's time over the split GEMV of its size
  // A decode step's time over its per-GEMV reads (the same launches without arithmetic).
  std::optional<double> reads_ratio;
  std::string share_of;

  // "fp16 T 4096x14336 llama3-8b.qkv", "llama3-8b bf16", with " nrhs 4" when nrhs != 1.
  std::string label() const;
  // The label, with " on 2 GPUs" where P > 1: how verdicts and failures name a record.
  std::string name() const;
  std::string weight_format() const;
  bool failed() const { return status == "check failed" || status.rfind("error", 0) == 0; }
  bool is_bound() const { return lib == kCeiling || lib == kOneRead; }
  // Folds the check of one output (`where`) in; one failed output fails the record.
  void add_check(const std::string& where, const CheckResult& check);
  // The median and spread of the timed batches' microseconds per call.
  void set_times(const std::vector<double>& us_per_call);
};

// The record of a shape case, nothing measured yet.
Record case_record(const Case& c, std::string lib, std::string function, std::string mode);
// A record of what ran (`lib`, `function`, `mode`), for the case's fields to be filled in.
Record run_record(std::string lib, std::string function, std::string mode);

// For every timed record: GB/s; its share of the same run's bound (not for host rows), its
// speed-up, its time over the same library's at nrhs 1 (cases of several vectors, and the nrhs 1
// case of a library that also ran them), and a collective's share of the split GEMV of its size.
void derive_metrics(std::vector<Record>& records);

}  // namespace xgemv::bench
