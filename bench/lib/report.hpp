// The one writer of every bench: a run's records as results.csv (one superset schema),
// results.json (the run, a summary, the verdict lines, the targets and the records) and
// summary.md, the console's progress lines, and the tables and verdicts that end a run. The
// tables are declared as data (views(): which records, which columns), as the targets are.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "record.hpp"
#include "verdict.hpp"

namespace xgemv::bench {

// "%.*f" of a value, or `missing` when it is absent or not finite.
std::string fixed(const std::optional<double>& value, int decimals, const char* missing = "");

// Console progress: a header, then one line per record as it is measured, its name after
// `counter` ("[3/90] ").
std::string progress_header();
std::string progress_line(const Record& r, const std::string& counter = "");

// A table of records: a row per case (and P) of the records in the scope, the cases in order of
// first appearance; `columns` are its headers, "|" between them: a field of the case ("case",
// "layers", "GEMVs", "GB", "P") or a library's field ("xgemv us", "cublas-gemmex/cublas-gemm
// t/t1": of the first of those libraries in the row), where a field is one of us, ms, GB/s,
// bound GB/s, % of bound, speed-up, t/t1, % of GEMV, function, mode. A row needs a record of the
// first library named.
struct View {
  std::string title;
  Scope scope;
  std::string columns;
};
const std::vector<View>& views();

// Per suite, dtype, format, library, nrhs and P (the bounds left out), in order of first
// appearance: the records timed, geo-means and worst of the speed-up, of the share of the bound
// and of time(nrhs)/time(1).
nlohmann::ordered_json summary_json(const std::vector<Record>& records);
nlohmann::ordered_json record_json(const Record& r);
void write_csv(std::ostream& out, const RunInfo& info, const std::vector<Record>& records);
nlohmann::ordered_json to_json(const RunInfo& info, const std::vector<Record>& records);
void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<Record>& records);
// The views that have rows, then the verdict lines: the end of summary.md and of the console.
void write_tables(std::ostream& out, const std::vector<Record>& records, bool markdown);

// The end of a run: the metrics derived, results.csv, results.json and summary.md written into
// `out_dir`, every failed record named, then the tables and verdict lines, last on the console
// (what closing notes quote). Returns `exit_code`, else 1 when a record failed.
int finish_run(const std::string& out_dir, const RunInfo& info, std::vector<Record>& records,
               int exit_code);

}  // namespace xgemv::bench
