// xgemv-bench: xgemv beside cuBLAS (same buffers, same run) and OpenBLAS (host copies), each
// shape with its stream-read ceiling; or whole decode steps as CUDA graphs (--suite decode,
// decode_suite.cpp). See bench/README.md.
#include <xgemv/xgemv.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "decode_suite.hpp"
#include "device_bench.hpp"
#include "host_bench.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"
#include "lib/suites.hpp"
#include "system_info.hpp"

namespace xgemv::bench {
namespace {

std::string version_text() {
  return "xgemv-bench " XGEMV_PROJECT_VERSION ", libxgemv " + std::string(xgemv_version_string()) +
         ", commit " + project_commit("");
}

std::string comma_separated(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ",") + name;
  return text;
}

void list_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases)
    std::cout << c.suite << ' ' << c.label() << "  (" << c.bytes() << " bytes)\n";
  std::cout << cases.size() << " cases\n";
}

void write_files(const std::string& out_dir, const RunInfo& info,
                 const std::vector<Measurement>& rows) {
  std::filesystem::create_directories(out_dir);
  const std::filesystem::path dir(out_dir);
  std::ofstream csv(dir / "results.csv");
  write_csv(csv, info, rows);
  std::ofstream(dir / "results.json") << to_json(info, rows).dump(1) << '\n';
  std::ofstream markdown(dir / "summary.md");
  write_markdown(markdown, info, rows);
  std::cout << "wrote " << (dir / "results.csv").string() << ", results.json, summary.md\n";
}

// The facts of the run that need no GPU.
RunInfo describe_run(const Options& options, int argc, char** argv) {
  RunInfo info;
  info.commit = project_commit(options.commit);
  info.date = utc_now_iso8601();
  info.host_cpu = host_cpu_name();
  info.host_blas = HostBench::describe();
  for (int i = 0; i < argc; ++i) info.command += (i ? " " : "") + std::string(argv[i]);
  info.mode = options.graph ? "graph" : "stream";
  info.quick = options.quick;
  return info;
}

int run(int argc, char** argv) {
  CommandLine command_line(version_text, XGEMV_BENCH_DEFAULT_OUT_DIR);
  Options options;
  try {
    options = command_line.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return command_line.exit(error);
  }
  if (options.decode()) return run_decode_suite(options, describe_run(options, argc, argv));
  std::vector<Case> cases;
  try {
    cases = build_cases(options);
  } catch (const std::invalid_argument& error) {
    std::cerr << "xgemv-bench: " << error.what() << '\n';
    return 2;
  }
  if (options.list) {
    list_cases(cases);
    return 0;
  }
  if (cases.empty()) {
    std::cerr << "xgemv-bench: no case matches the filters\n";
    return 2;
  }

  RunInfo info = describe_run(options, argc, argv);

  std::string why_no_gpu;
  std::unique_ptr<DeviceBench> device;
  if (nvidia_driver_or_gpu_missing()) {
    why_no_gpu = xgemv_status_string(XGEMV_STATUS_NO_DEVICE);
  } else {
    try {
      device = DeviceBench::open(options.device, &why_no_gpu);
    } catch (const std::exception& error) {
      why_no_gpu = error.what();
    }
  }
  if (device) {
    device->describe(info);
    std::cout << "device " << info.device << " (SM clock max " << info.sm_clock_max_mhz
              << " MHz), driver " << info.driver << ", CUDA " << info.cuda << "\n";
  } else {
    if (const std::vector<std::string> named = options.device_libraries_named(); !named.empty()) {
      std::cerr << "xgemv-bench: --lib " << comma_separated(named) << " needs a GPU: "
                << why_no_gpu << '\n';
      return 2;
    }
    // Only the OpenBLAS rows can run: the cases they cannot (fp16, bf16; several vectors) are
    // not counted.
    const size_t case_count = cases.size();
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [](const Case& c) { return !HostBench::supports(c); }),
                cases.end());
    std::cout << "xgemv-bench: no GPU (" << why_no_gpu << "): OpenBLAS only, on the "
              << cases.size() << " fp32/fp64 " << (options.nrhs_sweep() ? "one-vector " : "")
              << "cases of " << case_count << "\n";
    if (cases.empty()) {
      std::cerr << "xgemv-bench: no case left to run without a GPU\n";
      return 2;
    }
  }
  std::cout << "host " << info.host_cpu << "; " << info.host_blas << "\ncommit " << info.commit
            << ", " << cases.size() << " cases, " << info.mode << (info.quick ? ", quick" : "")
            << "\n"
            << progress_header() << std::endl;

  HostBench host;
  std::vector<Measurement> rows;
  int exit_code = 0;
  try {
    if (device) device->reserve(cases);
    if (options.wants_library("openblas")) host.reserve(cases);
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      std::vector<Measurement> case_rows;
      std::vector<double> reference;
      if (device) {
        DeviceCaseResult result = device->run(c, options);
        reference = std::move(result.reference);
        case_rows = std::move(result.rows);
      }
      if (options.runs_row("openblas", c.nrhs) && HostBench::supports(c)) {
        host.prepare(c);
        if (!device) reference = host.reference(c);
        case_rows.push_back(host.run_openblas(c, reference, options));
      }
      const int sm_clock = device ? device->sm_clock_mhz() : 0;
      for (Measurement& row : case_rows) {
        row.case_index = static_cast<int>(i);
        row.sm_clock_mhz = sm_clock;
      }
      derive_metrics(case_rows);
      for (const Measurement& row : case_rows)
        std::cout << progress_line(static_cast<int>(i + 1), static_cast<int>(cases.size()), row)
                  << std::endl;
      rows.insert(rows.end(), case_rows.begin(), case_rows.end());
    }
  } catch (const std::exception& error) {
    // A fault (e.g. a kernel's illegal address) poisons the context: report what was measured.
    std::cerr << "xgemv-bench: stopped: " << error.what() << '\n';
    exit_code = 2;
  }

  derive_metrics(rows);
  write_files(options.out_dir, info, rows);
  for (const Measurement& row : rows)
    if (row.status == "check failed" || row.status.rfind("error", 0) == 0) {
      std::cout << "FAILED: " << row.c.label() << ' ' << row.library << ": " << row.status << '\n';
      exit_code = exit_code ? exit_code : 1;
    }
  // Last: the compact table and verdict that closing notes quote.
  const std::vector<Comparison> comparisons = compare_xgemv_to_cublas(rows);
  if (comparisons.empty()) {
    std::cout << "no xgemv or cuBLAS rows in this run (GPU: " << (device ? "yes" : "no") << ")\n";
  } else {
    std::cout << "\nxgemv vs cuBLAS (its fastest function per case), GB/s; ceiling: stream read "
                 "of the same bytes\n";
    write_comparison_table(std::cout, comparisons);
  }
  if (const std::vector<NrhsFamily> families = shape_nrhs_families(rows); !families.empty()) {
    std::cout << "\nfew right-hand sides, us per call: xgemv-nrhs (xgemv_?gemv_nrhs) and the "
                 "cuBLAS GEMM with nrhs columns (GemmEx; fp32/fp64 Sgemm/Dgemm); t/t1: time over "
                 "the library's own time at nrhs 1; speed-up: cuBLAS us / xgemv-nrhs us; ceiling: "
                 "stream read of A + X + Y\n";
    write_nrhs_table(std::cout, families, kShapeNrhsUnits, kShapeNrhsScope);
  }
  return exit_code;
}

}  // namespace
}  // namespace xgemv::bench

int main(int argc, char** argv) { return xgemv::bench::run(argc, argv); }
