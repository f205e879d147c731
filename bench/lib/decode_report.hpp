// The decode suite's writers: console progress, decode.csv, decode.json, decode.md, and the
// compact table with its verdict line that ends the run.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "decode.hpp"
#include "nrhs_report.hpp"
#include "report.hpp"

namespace xgemv::bench {

// "llama3-70b: 13 of 80 layers + LM head, 53 GEMVs, 24.35 GB per step", for --list and progress;
// "llama3-70b, nrhs 4: ..." for a step of several vectors.
std::string describe_step(const DecodeStep& step);

// Console progress: a header, then one line per row as it is measured.
std::string decode_progress_header();
std::string decode_progress_line(const DecodeRow& row);

// Per dtype and library (the reads left out), in order of first appearance; the steps of one
// vector (nrhs 1), as the step tables: those of several have the nrhs report.
struct DecodeSummary {
  Dtype dtype = Dtype::bf16;
  std::string library;
  int steps = 0;  // timed
  std::optional<double> geomean_speedup, worst_speedup, geomean_pct_one_read, lowest_pct_one_read;
  std::string worst_step;  // model of the worst speed-up
};
std::vector<DecodeSummary> summarize_decode(const std::vector<DecodeRow>& rows);
// "verdict: ..." of the xgemv rows: speed-up over the faster cuBLAS per dtype (geo-mean and
// worst step), and every row that failed.
std::string format_decode_verdict(const std::vector<DecodeRow>& rows);

// The nrhs report of the decode steps: every (model, dtype) that ran with --nrhs, xgemv-nrhs
// beside cublas-gemmex with the same columns; the targets count every step.
inline const std::string kDecodeNrhsScope = "xgemv, bf16/fp16 decode steps";
inline constexpr NrhsUnits kDecodeNrhsUnits = {"ms", "ms", 3, "one-read"};
std::vector<NrhsFamily> decode_nrhs_families(const std::vector<DecodeRow>& rows);

const std::vector<std::string>& decode_csv_columns();
void write_decode_csv(std::ostream& out, const RunInfo& info, const std::vector<DecodeRow>& rows);
nlohmann::ordered_json decode_to_json(const RunInfo& info, const std::vector<DecodeRow>& rows);
void write_decode_markdown(std::ostream& out, const RunInfo& info,
                           const std::vector<DecodeRow>& rows);
// One line per step (model and dtype): ms per library, the reads, xgemv's share of the one-read
// time and its speed-ups; then the verdict line.
void write_decode_table(std::ostream& out, const std::vector<DecodeRow>& rows);

}  // namespace xgemv::bench
