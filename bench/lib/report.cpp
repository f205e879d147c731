#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "decode.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "suites.hpp"

namespace xgemv::bench {
namespace {

using Json = nlohmann::ordered_json;

Json optional_json(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? Json(*value) : Json(nullptr);
}

std::string general(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

std::string ratio_text(const std::optional<double>& value) {
  return value ? fixed(value, 2) + "x" : "-";
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? separator : "") + parts[i];
  return text;
}

std::string check_text(const Record& r) {
  std::string text = r.status;
  if (!r.worst.empty()) {
    text += " (" + std::to_string(r.checked) + " checked";
    if (r.failed_checks > 0) text += ", " + std::to_string(r.failed_checks) + " failed";
    text += "; worst " + r.worst + " err " + general(*r.max_error) + " / tol " +
            general(*r.tolerance) + ")";
  } else if (r.max_error) {
    text += " (err " + general(*r.max_error) + ")";
  }
  return text + (r.kernels > 0 ? " [" + std::to_string(r.kernels) + " kernels]" : "");
}

// Digits of the CSV's floating-point columns; the others get 4 significant digits.
int csv_decimals(const std::string& key) {
  static const std::map<std::string, int> decimals = {
      {"us", 3},      {"fastest_rank_us", 3}, {"spread_pct", 1},
      {"GBps", 1},    {"bound_GBps", 1},      {"pct_bound", 1},
      {"speedup", 3}, {"t_over_t1", 3},       {"t_over_reads", 3},
      {"share_pct", 1}};
  const auto found = decimals.find(key);
  return found == decimals.end() ? -1 : found->second;
}

std::string csv_cell(const std::string& key, const Json& value) {
  if (value.is_null()) return "";
  if (value.is_number_float()) {
    const int decimals = csv_decimals(key);
    return decimals < 0 ? general(value.get<double>()) : fixed(value.get<double>(), decimals);
  }
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

// The run's facts every CSV line repeats.
Json run_columns(const RunInfo& info) {
  return {{"device", info.device},
          {"sm_clock_max_mhz", info.sm_clock_max_mhz},
          {"mem_clock_max_mhz", info.mem_clock_max_mhz},
          {"driver", info.driver},
          {"cuda", info.cuda},
          {"nccl", info.nccl},
          {"commit", info.commit},
          {"date", info.date}};
}

Json run_json(const RunInfo& info) {
  Json run = run_columns(info);
  run.update({{"host_cpu", info.host_cpu},
              {"host_blas", info.host_blas},
              {"command", info.command},
              {"mode", info.mode},
              {"quick", info.quick},
              {"method", info.method}});
  run.update(info.facts);
  return run;
}

// The fields a view's column may show, as its header names them.
const std::vector<std::string> kFields = {
    "case", "layers",     "GEMVs",      "GB",       "P",         "us",       "ms",  "GB/s",
    "t/t1", "bound GB/s", "% of bound", "speed-up", "% of GEMV", "function", "mode"};

// A field of a record: "-" without the record or the value, FAILED for a value a failed record
// lacks.
std::string cell(const Record* r, const std::string& field) {
  if (!r) return "-";
  if (field == "case") return r->label();
  if (field == "layers") return std::to_string(r->layers) + "/" + std::to_string(r->model_layers);
  if (field == "GEMVs") return std::to_string(r->gemvs);
  if (field == "P") return std::to_string(r->gpus);
  if (field == "function") return r->function.empty() ? "-" : r->function;
  if (field == "mode") return r->mode;
  const std::optional<double> ms = r->us ? std::optional(*r->us / 1e3) : std::nullopt;
  const struct {
    const char* name;
    std::optional<double> value;
    int decimals;
    const char* unit;
  } numbers[] = {{"GB", static_cast<double>(r->bytes) / 1e9, 2, ""},
                 {"us", r->us, 2, ""},
                 {"ms", ms, 3, ""},
                 {"GB/s", r->gbps, 0, ""},
                 {"bound GB/s", r->bound_gbps, 0, ""},
                 {"% of bound", r->pct_bound, 1, ""},
                 {"speed-up", r->speedup, 2, "x"},
                 {"t/t1", r->nrhs_ratio, 2, "x"},
                 {"% of GEMV", r->share_pct, 1, ""}};
  for (const auto& number : numbers)
    if (field == number.name)
      return number.value  ? fixed(number.value, number.decimals) + number.unit
             : r->failed() ? "FAILED"
                           : "-";
  return "-";
}

// A column's libraries and field: "cublas-gemmex/cublas-gemm t/t1" is {cublas-gemmex,
// cublas-gemm} and t/t1, its longest field at the end.
std::pair<std::vector<std::string>, std::string> parse_column(const std::string& column) {
  std::string field;
  for (const std::string& name : kFields)
    if (name.size() > field.size() && column.size() >= name.size() &&
        column.compare(column.size() - name.size(), name.size(), name) == 0 &&
        (column.size() == name.size() || column[column.size() - name.size() - 1] == ' '))
      field = name;
  std::vector<std::string> libs;
  std::string rest = column.substr(0, column.size() - field.size());
  while (!rest.empty() && rest.back() == ' ') rest.pop_back();
  for (size_t start = 0; start < rest.size();) {
    const size_t end = std::min(rest.find('/', start), rest.size());
    libs.push_back(rest.substr(start, end - start));
    start = end + 1;
  }
  return {libs, field};
}

using Table = std::vector<std::vector<std::string>>;  // the header first

void write_table(std::ostream& out, const Table& table, bool markdown) {
  std::vector<size_t> widths(table.front().size(), 0);
  for (const auto& row : table)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  for (size_t line = 0; line < table.size(); ++line) {
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string& text = table[line][i];
      const std::string pad(widths[i] - std::min(widths[i], text.size()), ' ');
      if (markdown)
        out << "| " << text << ' ';
      else
        out << (i ? " " : "") << (i ? pad + text : text + pad);
    }
    out << (markdown ? "|\n" : "\n");
    if (markdown && line == 0) {
      for (size_t i = 0; i < widths.size(); ++i) out << (i ? "|---:" : "|---");
      out << "|\n";
    }
  }
}

// The rows of a view: its records by case and P, the cases in order of first appearance, each
// case's P ascending.
Table view_table(const View& view, const std::vector<Record>& records) {
  std::vector<std::vector<const Record*>> rows;
  std::map<std::string, size_t> row_of;
  std::map<std::string, size_t> first_seen;  // case label: its first row
  for (const Record& r : records) {
    if (!view.scope.matches(r)) continue;
    const auto [row, added] =
        row_of.emplace(r.suite + '|' + r.weight_format() + '|' + r.name(), rows.size());
    if (added) rows.emplace_back();
    rows[row->second].push_back(&r);
    first_seen.emplace(r.suite + '|' + r.label(), first_seen.size());
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return first_seen[a.front()->suite + '|' + a.front()->label()] <
           first_seen[b.front()->suite + '|' + b.front()->label()];
  });
  Table table(1);
  std::vector<std::pair<std::vector<std::string>, std::string>> columns;
  for (size_t start = 0; start < view.columns.size();) {
    const size_t end = std::min(view.columns.find(" | ", start), view.columns.size());
    table[0].push_back(view.columns.substr(start, end - start));
    columns.push_back(parse_column(table[0].back()));
    start = end + 3;
  }
  for (const auto& row : rows) {
    std::vector<std::string> cells;
    bool keyed = false, key_present = false;
    for (const auto& [libs, field] : columns) {
      const Record* found = libs.empty() ? row.front() : nullptr;
      for (const std::string& lib : libs)
        for (const Record* r : row)
          if (!found && r->lib == lib) found = r;
      if (!libs.empty() && !keyed) {
        keyed = true;
        key_present = found != nullptr;
      }
      cells.push_back(cell(found, field));
    }
    if (key_present) table.push_back(cells);
  }
  return table;
}

}  // namespace

std::string fixed(const std::optional<double>& value, int decimals, const char* missing) {
  if (!value || !std::isfinite(*value)) return missing;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, *value);
  return text;
}

std::string progress_header() {
  char text[256];
  std::snprintf(text, sizeof text, "%-44s %-17s %10s %9s %7s %9s  %s", "case", "library", "us",
                "GB/s", "%bound", "speed-up", "check");
  return text;
}

std::string progress_line(const Record& r, const std::string& counter) {
  char text[1024];
  std::snprintf(text, sizeof text, "%-44s %-17s %10s %9s %7s %9s  %s", (counter + r.name()).c_str(),
                r.lib.c_str(), fixed(r.us, 2, "-").c_str(), fixed(r.gbps, 1, "-").c_str(),
                fixed(r.pct_bound, 1, "-").c_str(), ratio_text(r.speedup).c_str(),
                check_text(r).c_str());
  return text;
}

const std::vector<View>& views() {
  static const std::vector<View> list = {
      {"xgemv vs cuBLAS (its gemv and GemmEx with one column), one vector",
       Scope{shape_suite_names(), {}},
       "case | xgemv us | xgemv GB/s | cublas GB/s | cublas-gemmex GB/s | ceiling GB/s | "
       "xgemv % of bound | xgemv speed-up | xgemv function"},
      {"Several vectors: xgemv_?gemv_nrhs and the cuBLAS GEMM with as many columns (t/t1: time "
       "over the same library's at nrhs 1)",
       Scope{shape_suite_names(), {}}.with(&Scope::nrhs, {1, kAnyNrhs}),
       "case | xgemv-nrhs us | xgemv-nrhs t/t1 | cublas-gemmex/cublas-gemm us | "
       "cublas-gemmex/cublas-gemm t/t1 | xgemv-nrhs speed-up | xgemv-nrhs % of bound"},
      {"Decode steps (ms per step; bound: one-read)",
       Scope{{"decode"}, {}}.with(&Scope::formats, {"bf16", "fp16"}),
       "case | layers | GEMVs | GB | one-read ms | per-gemv-reads ms | xgemv ms | "
       "xgemv-early-start ms | cublas ms | cublas-gemmex ms | xgemv % of bound | "
       "xgemv-early-start % of bound | xgemv speed-up | xgemv-early-start speed-up"},
      {"Decode steps on several vectors (ms per step)",
       Scope{{"decode"}, {}}.with(&Scope::nrhs, {1, kAnyNrhs}),
       "case | xgemv-nrhs ms | xgemv-nrhs t/t1 | cublas-gemmex ms | cublas-gemmex t/t1 | "
       "xgemv-nrhs speed-up | xgemv-nrhs % of bound"},
      {"Quantized weights: xgemv_qgemv_nrhs (bound: the stream read of the bytes it reads; "
       "speed-up over cuBLAS on the dense 16-bit matrix; t/t1: over its own time at nrhs 1)",
       Scope{shape_suite_names(), {}}.with(&Scope::nrhs, {1, kAnyNrhs}),
       "case | xgemv-q us | xgemv-q t/t1 | xgemv-q GB/s | ceiling GB/s | xgemv-q % of bound | "
       "xgemv-q speed-up | xgemv-q function"},
      {"Decode steps with quantized weights (ms per step; speed-up over cuBLAS on the dense "
       "16-bit step)",
       Scope{{"decode"}, {}}.with(&Scope::nrhs, {1, kAnyNrhs}),
       "case | GB | xgemv-q-early-start ms | xgemv-q ms | one-read ms | per-gemv-reads ms | "
       "xgemv-q-early-start % of bound | xgemv-q speed-up | xgemv-q-early-start speed-up"},
      {"Mixture of experts: xgemv_moe_up (SwiGLU) and xgemv_moe_down per call (nrhs: tokens; "
       "GEMVs: the experts a call reads; bound: the stream read of their bytes; speed-up over "
       "cuBLAS GemmEx per expert on the bf16 experts)",
       Scope{}.with(&Scope::suites, {"moe"}).with(&Scope::nrhs, {1, kAnyNrhs}),
       "case | GEMVs | GB | xgemv us | ceiling us | cublas-gemmex us | xgemv % of bound | "
       "xgemv speed-up | xgemv function"},
      {"Bandwidth over P GPUs (bound: P one-GPU stream reads; speed-up over one GPU)",
       Scope{{"nccl-bandwidth"}, {}}.with(&Scope::gpus, {1, kAnyGpus}),
       "case | P | xgemv-nccl GB/s | ceiling GB/s | xgemv-nccl bound GB/s | "
       "xgemv-nccl % of bound | xgemv-nccl speed-up"},
      {"Tensor-parallel decode steps (ms per step)",
       Scope{{"nccl-decode"}, {}}.with(&Scope::gpus, {1, kAnyGpus}),
       "case | layers | GB | P | xgemv-nccl ms | xgemv-nccl mode | ceiling ms | "
       "xgemv-nccl % of bound | xgemv-nccl speed-up"},
      {"Small exchanges beside the decode-size split GEMV of their size",
       Scope{{"nccl-exchange"}, {}}.with(&Scope::gpus, {1, kAnyGpus}),
       "case | P | nccl/xgemv-nccl us | nccl/xgemv-nccl mode | nccl % of GEMV | "
       "nccl/xgemv-nccl speed-up"},
  };
  return list;
}

nlohmann::ordered_json summary_json(const std::vector<Record>& records) {
  struct Group {
    const Record* first;
    int cases = 0;
    std::vector<const Record*> timed;
  };
  std::vector<Group> groups;
  std::map<std::string, size_t> group_of;
  for (const Record& r : records) {
    if (r.is_bound() || !r.us) continue;
    const std::string key = r.suite + '|' + std::string(dtype_name(r.dtype)) + '|' +
                            r.weight_format() + '|' + r.lib + '|' + std::to_string(r.nrhs) + '|' +
                            std::to_string(r.gpus);
    const auto [group, added] = group_of.emplace(key, groups.size());
    if (added) groups.push_back({&r});
    groups[group->second].timed.push_back(&r);
  }
  Json summary = Json::array();
  for (const Group& group : groups) {
    const Record& r = *group.first;
    Json row = {{"suite", r.suite},
                {"dtype", dtype_name(r.dtype)},
                {"format", r.weight_format()},
                {"lib", r.lib},
                {"nrhs", r.nrhs},
                {"P", r.gpus},
                {"cases", group.timed.size()}};
    for (const auto& [name, member, highest_worst] :
         {std::tuple{"speedup", &Record::speedup, false},
          std::tuple{"pct_bound", &Record::pct_bound, false},
          std::tuple{"t_over_t1", &Record::nrhs_ratio, true}}) {
      std::vector<double> values;
      const Record* worst = nullptr;
      for (const Record* timed : group.timed) {
        const std::optional<double>& value = timed->*member;
        if (!value) continue;
        values.push_back(*value);
        if (!worst || (highest_worst ? *value > *(worst->*member) : *value < *(worst->*member)))
          worst = timed;
      }
      row[std::string("geomean_") + name] =
          optional_json(values.empty() ? std::nullopt : std::optional(geometric_mean(values)));
      row[std::string("worst_") + name] = optional_json(worst ? worst->*member : std::nullopt);
      row[std::string("worst_") + name + "_case"] = worst ? worst->name() : "";
    }
    summary.push_back(row);
  }
  return summary;
}

nlohmann::ordered_json record_json(const Record& r) {
  // The columns in their order, several to a line.
  // clang-format off
  return {{"suite", r.suite}, {"case", r.label()}, {"tag", r.tag}, {"dtype", dtype_name(r.dtype)},
          {"format", r.weight_format()}, {"op", std::string(1, r.op)}, {"m", r.m}, {"n", r.n},
          {"nrhs", r.nrhs}, {"lda", r.lda}, {"incx", r.incx}, {"incy", r.incy},
          {"alpha", r.alpha}, {"beta", r.beta}, {"layout", r.layout}, {"layers", r.layers},
          {"model_layers", r.model_layers}, {"gemvs", r.gemvs}, {"P", r.gpus},
          {"matrix_bytes", r.matrix_bytes}, {"bytes", r.bytes},
          {"exchange_bytes", r.exchange_bytes}, {"lib", r.lib}, {"function", r.function},
          {"mode", r.mode}, {"status", r.status}, {"checked", r.checked},
          {"failed_checks", r.failed_checks}, {"max_error", optional_json(r.max_error)},
          {"tolerance", optional_json(r.tolerance)}, {"worst", r.worst}, {"copies", r.copies},
          {"calls_per_batch", r.calls_per_batch}, {"batches", r.batches},
          {"kernels", r.kernels}, {"us", optional_json(r.us)},
          {"spread_pct", optional_json(r.spread_pct)},
          {"fastest_rank_us", optional_json(r.fastest_rank_us)},
          {"sm_clock_mhz", r.sm_clock_mhz}, {"GBps", optional_json(r.gbps)},
          {"bound_GBps", optional_json(r.bound_gbps)}, {"pct_bound", optional_json(r.pct_bound)},
          {"speedup", optional_json(r.speedup)}, {"t_over_t1", optional_json(r.nrhs_ratio)},
          {"t_over_reads", optional_json(r.reads_ratio)},
          {"share_pct", optional_json(r.share_pct)}, {"share_of", r.share_of}};
  // clang-format on
}

void write_csv(std::ostream& out, const RunInfo& info, const std::vector<Record>& records) {
  const Json run = run_columns(info);
  std::vector<std::string> header;
  const Json columns = record_json(Record{});
  for (const auto& item : columns.items()) header.push_back(item.key());
  for (const auto& item : run.items()) header.push_back(item.key());
  out << join(header, ",") << '\n';
  for (const Record& r : records) {
    std::vector<std::string> cells;
    for (const Json& part : {record_json(r), run})
      for (const auto& item : part.items()) cells.push_back(csv_cell(item.key(), item.value()));
    out << join(cells, ",") << '\n';
  }
}

nlohmann::ordered_json to_json(const RunInfo& info, const std::vector<Record>& records) {
  Json list = Json::array();
  for (const Record& r : records) list.push_back(record_json(r));
  return {{"run", run_json(info)},
          {"summary", summary_json(records)},
          {"verdicts", verdict_lines(records)},
          {"targets", targets_json()},
          {"records", list}};
}

void write_tables(std::ostream& out, const std::vector<Record>& records, bool markdown) {
  for (const View& view : views()) {
    const Table table = view_table(view, records);
    if (table.size() == 1) continue;
    out << (markdown ? "\n## " : "\n") << view.title << (markdown ? "\n\n" : "\n");
    write_table(out, table, markdown);
  }
  const std::vector<std::string> lines = verdict_lines(records);
  if (!lines.empty()) out << '\n';
  for (const std::string& line : lines) out << line << '\n';
}

void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<Record>& records) {
  const std::string program = info.command.substr(0, info.command.find(' '));
  out << "# " << std::filesystem::path(program).filename().string() << " results\n\n"
      << "| | |\n|---|---|\n"
      << "| date | " << info.date << " |\n"
      << "| device | " << info.device << " (SM clock max " << info.sm_clock_max_mhz
      << " MHz, memory clock max " << info.mem_clock_max_mhz << " MHz) |\n"
      << "| driver, CUDA runtime | " << info.driver << ", " << info.cuda << " |\n"
      << (info.nccl.empty() ? "" : "| NCCL | " + info.nccl + " |\n") << "| commit | " << info.commit
      << " |\n"
      << "| host | " << info.host_cpu << "; " << info.host_blas << " |\n"
      << "| timing | " << info.mode << (info.quick ? ", quick" : "") << "; " << info.method
      << " |\n"
      << "| command | `" << info.command << "` |\n";
  for (const auto& item : info.facts.items())
    out << "| " << item.key() << " | "
        << (item.value().is_string() ? item.value().get<std::string>() : item.value().dump())
        << " |\n";
  out << "\nGB/s: the bytes a call moves (A, x and y once; with nrhs vectors A once, X and Y) over "
         "its time. Speed-up: the fastest cuBLAS function of the case over the library, or for a "
         "case run on several GPUs one GPU over P. % of bound: of the same run's stream read of "
         "the same bytes (ceiling; a decode step: of its weights, one-read), on P GPUs of P "
         "one-GPU reads.\n\n## Summary\n\n";
  Table summary = {{"suite", "dtype", "lib", "nrhs", "P", "cases", "speed-up (geo-mean)", "worst",
                    "% of bound (geo-mean)", "lowest", "t/t1 (geo-mean)", "worst"}};
  for (const Json& row : summary_json(records)) {
    const auto number = [&](const char* key, int decimals) {
      return row[key].is_null() ? std::string("-") : fixed(row[key].get<double>(), decimals);
    };
    const auto ratio = [&](const char* key) {
      return row[key].is_null() ? std::string("-") : fixed(row[key].get<double>(), 2) + "x";
    };
    const std::string format = row["format"], dtype = row["dtype"];
    summary.push_back({row["suite"], format == dtype ? dtype : dtype + " " + format, row["lib"],
                       row["nrhs"].dump(), row["P"].dump(), row["cases"].dump(),
                       ratio("geomean_speedup"), ratio("worst_speedup"),
                       number("geomean_pct_bound", 1), number("worst_pct_bound", 1),
                       ratio("geomean_t_over_t1"), ratio("worst_t_over_t1")});
  }
  write_table(out, summary, true);
  write_tables(out, records, true);
  std::vector<std::string> failures;
  for (const Record& r : records)
    if (r.status != "ok" && r.status.rfind("skipped", 0) != 0)
      failures.push_back("- " + r.suite + " " + r.name() + " " + r.lib + ": " + check_text(r));
  if (!failures.empty()) out << "\n## Failures\n\n" << join(failures, "\n") << '\n';
}

int finish_run(const std::string& out_dir, const RunInfo& info, std::vector<Record>& records,
               int exit_code) {
  derive_metrics(records);
  const std::filesystem::path dir(out_dir);
  std::filesystem::create_directories(dir);
  std::ofstream csv(dir / "results.csv");
  write_csv(csv, info, records);
  std::ofstream(dir / "results.json") << to_json(info, records).dump(1) << '\n';
  std::ofstream markdown(dir / "summary.md");
  write_markdown(markdown, info, records);
  std::cout << "wrote " << (dir / "results.csv").string() << ", results.json, summary.md\n";
  for (const Record& r : records)
    if (r.failed()) {
      std::cout << "FAILED: " << r.suite << ' ' << r.name() << ' ' << r.lib << ": " << r.status
                << '\n';
      exit_code = exit_code ? exit_code : 1;
    }
  write_tables(std::cout, records, false);
  return exit_code;
}

}  // namespace xgemv::bench
