#include "decode_suite.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "decode_bench.hpp"
#include "lib/decode.hpp"
#include "lib/decode_report.hpp"

namespace xgemv::bench {
namespace {

void write_files(const std::string& out_dir, const RunInfo& info,
                 const std::vector<DecodeRow>& rows) {
  std::filesystem::create_directories(out_dir);
  const std::filesystem::path dir(out_dir);
  std::ofstream csv(dir / "decode.csv");
  write_decode_csv(csv, info, rows);
  std::ofstream(dir / "decode.json") << decode_to_json(info, rows).dump(1) << '\n';
  std::ofstream markdown(dir / "decode.md");
  write_decode_markdown(markdown, info, rows);
  std::cout << "wrote " << (dir / "decode.csv").string() << ", decode.json, decode.md\n";
}

}  // namespace

int run_decode_suite(const Options& options, RunInfo info) {
  std::vector<DecodeStep> steps;
  std::vector<Dtype> dtypes;
  try {
    steps = plan_decode_steps(options);
    dtypes = decode_dtypes(options);
  } catch (const std::invalid_argument& error) {
    std::cerr << "xgemv-bench: " << error.what() << '\n';
    return 2;
  }
  const std::vector<int64_t> nrhs_values = options.nrhs_values();
  std::string nrhs_text;
  for (int64_t nrhs : nrhs_values)
    nrhs_text += (nrhs_text.empty() ? "" : ",") + std::to_string(nrhs);
  const size_t models = steps.size() / nrhs_values.size();
  if (options.list) {
    for (const DecodeStep& step : steps) std::cout << "decode " << describe_step(step) << '\n';
    std::cout << models << " models, " << dtypes.size() << " dtypes"
              << (options.nrhs_sweep() ? ", nrhs " + nrhs_text : "") << "\n";
    return 0;
  }

  std::string why_no_gpu;
  std::unique_ptr<DecodeBench> device;
  try {
    device = DecodeBench::open(options.device, &why_no_gpu);
  } catch (const std::exception& error) {
    // A GPU that is there but fails to set up is a failure, not a machine without one.
    std::cerr << "xgemv-bench: stopped: " << error.what() << '\n';
    return 2;
  }
  if (!device) {
    std::cout << "xgemv-bench: no GPU (" << why_no_gpu << "): the decode suite needs one\n";
    return 2;
  }
  info.mode = "graph";
  device->describe(info);
  const DecodeTimingPlan plan = plan_decode_timing(options.quick);
  std::cout << "device " << info.device << " (SM clock max " << info.sm_clock_max_mhz
            << " MHz), driver " << info.driver << ", CUDA " << info.cuda << "\ncommit "
            << info.commit << ", decode: " << models << " models x " << dtypes.size()
            << " dtypes" << (options.nrhs_sweep() ? " x nrhs " + nrhs_text : "")
            << ", one CUDA graph per step and library, median of " << plan.replays
            << " replays" << (info.quick ? " (quick)" : "") << "\n"
            << decode_progress_header() << std::endl;

  std::vector<DecodeRow> rows;
  int exit_code = 0;
  try {
    for (size_t i = 0; i < steps.size(); ++i) {
      const DecodeStep& step = steps[i];
      std::cout << "[" << i + 1 << "/" << steps.size() << "] " << describe_step(step)
                << std::endl;
      device->reserve(step);
      for (Dtype dtype : dtypes) {
        std::vector<DecodeRow> step_rows = device->run(step, dtype, options);
        const int sm_clock = device->sm_clock_mhz();
        for (DecodeRow& row : step_rows) row.sm_clock_mhz = sm_clock;
        derive_decode_metrics(step_rows);
        for (const DecodeRow& row : step_rows)
          std::cout << decode_progress_line(row) << std::endl;
        rows.insert(rows.end(), step_rows.begin(), step_rows.end());
      }
    }
  } catch (const std::exception& error) {
    // A fault (e.g. a kernel's illegal address) poisons the context: report what was measured.
    std::cerr << "xgemv-bench: stopped: " << error.what() << '\n';
    exit_code = 2;
  }

  derive_decode_metrics(rows);
  write_files(options.out_dir, info, rows);
  for (const DecodeRow& row : rows)
    if (row.failed()) {
      std::cout << "FAILED: " << row.model << ' ' << dtype_name(row.dtype) << ' ' << row.library
                << ": " << row.status << '\n';
      exit_code = exit_code ? exit_code : 1;
    }
  // Last: the compact table and verdict that closing notes quote.
  std::cout << "\ndecode steps, ms per step (median of graph replays); %read: one-read ms / ms; "
               "speed: the faster of cuBLAS gemv and GemmEx over xgemv (x) and xgemv with early "
               "start (es)\n";
  write_decode_table(std::cout, rows);
  if (const std::vector<NrhsFamily> families = decode_nrhs_families(rows); !families.empty()) {
    std::cout << "\nfew right-hand sides, ms per step: xgemv-nrhs (xgemv_?gemv_nrhs) and cuBLAS "
                 "GemmEx with nrhs columns; t/t1: time over the library's own time at nrhs 1; "
                 "speed-up: GemmEx ms / xgemv-nrhs ms; %one-read: one-read ms / xgemv-nrhs ms\n";
    write_nrhs_table(std::cout, families, kDecodeNrhsUnits, kDecodeNrhsScope);
  }
  return exit_code;
}

}  // namespace xgemv::bench
