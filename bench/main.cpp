// xgemv-bench: xgemv beside cuBLAS (same buffers, same run) and OpenBLAS (host copies), each
// shape with its stream-read ceiling; or whole decode steps as CUDA graphs (--suite decode). See
// bench/README.md.
#include <xgemv/xgemv.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "device_bench.hpp"
#include "host_bench.hpp"
#include "lib/decode.hpp"
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

// The GPU, or nullptr with the reason there is none.
std::unique_ptr<DeviceBench> open_device(int ordinal, std::string& why_not) {
  if (nvidia_driver_or_gpu_missing()) {
    why_not = xgemv_status_string(XGEMV_STATUS_NO_DEVICE);
    return nullptr;
  }
  try {
    return DeviceBench::open(ordinal, &why_not);
  } catch (const std::exception& error) {
    why_not = error.what();
    return nullptr;
  }
}

void print_device(DeviceBench& device, RunInfo& info) {
  device.describe(info);
  std::cout << "device " << info.device << " (SM clock max " << info.sm_clock_max_mhz
            << " MHz), driver " << info.driver << ", CUDA " << info.cuda << "\n";
}

// Whole decode steps. The exit code: 0, 1 when a record failed, 2 when the run could not start
// or had to stop (the records so far are written).
int run_decode(const Options& options, RunInfo info) {
  std::vector<DecodeStep> steps;
  std::vector<Dtype> dtypes;
  try {
    steps = plan_decode_steps(options);
    dtypes = decode_dtypes(options);
  } catch (const std::invalid_argument& error) {
    std::cerr << "xgemv-bench: " << error.what() << '\n';
    return 2;
  }
  std::string nrhs_text;
  for (int64_t nrhs : options.nrhs_values())
    nrhs_text += (nrhs_text.empty() ? "" : ",") + std::to_string(nrhs);
  const size_t models = steps.size() / options.nrhs_values().size();
  if (options.list) {
    for (const DecodeStep& step : steps) std::cout << "decode " << describe_step(step) << '\n';
    std::cout << models << " models, " << dtypes.size() << " dtypes"
              << (options.nrhs_sweep() ? ", nrhs " + nrhs_text : "") << "\n";
    return 0;
  }
  std::string why_no_gpu;
  const std::unique_ptr<DeviceBench> device = open_device(options.device, why_no_gpu);
  if (!device) {
    std::cout << "xgemv-bench: no GPU (" << why_no_gpu << "): the decode suite needs one\n";
    return 2;
  }
  info.mode = "graph";
  const DecodeTimingPlan plan = plan_decode_timing(options.quick);
  info.method = "one CUDA graph per step and library, median of " +
                std::to_string(plan.replays) + " replays after " + std::to_string(plan.warmup) +
                " warm-up replays; every GEMV's output checked after one replay";
  print_device(*device, info);
  std::cout << "commit " << info.commit << ", decode: " << models << " models x "
            << dtypes.size() << " dtypes" << (options.nrhs_sweep() ? " x nrhs " + nrhs_text : "")
            << ", " << info.method << (info.quick ? " (quick)" : "") << "\n"
            << progress_header() << std::endl;

  std::vector<Record> records;
  int exit_code = 0;
  try {
    for (size_t i = 0; i < steps.size(); ++i) {
      std::cout << "[" << i + 1 << "/" << steps.size() << "] " << describe_step(steps[i])
                << std::endl;
      device->reserve(steps[i]);
      for (Dtype dtype : dtypes) {
        std::vector<Record> step_records = device->run(steps[i], dtype, options);
        const int sm_clock = device->sm_clock_mhz();  // sampled after the step's records
        for (Record& r : step_records) r.sm_clock_mhz = sm_clock;
        derive_metrics(step_records);
        for (const Record& r : step_records) std::cout << progress_line(r) << std::endl;
        records.insert(records.end(), step_records.begin(), step_records.end());
      }
    }
  } catch (const std::exception& error) {
    // A fault (e.g. a kernel's illegal address) poisons the context: report what was measured.
    std::cerr << "xgemv-bench: stopped: " << error.what() << '\n';
    exit_code = 2;
  }
  return finish_run(options.out_dir, info, records, exit_code);
}

// The shape cases: on the GPU when there is one, OpenBLAS on the host.
int run_shapes(const Options& options, RunInfo info) {
  std::vector<Case> cases;
  try {
    cases = build_cases(options);
  } catch (const std::invalid_argument& error) {
    std::cerr << "xgemv-bench: " << error.what() << '\n';
    return 2;
  }
  if (options.list) {
    for (const Case& c : cases)
      std::cout << c.suite << ' ' << case_record(c, "", "", "").label() << "  (" << c.bytes()
                << " bytes)\n";
    std::cout << cases.size() << " cases\n";
    return 0;
  }
  if (cases.empty()) {
    std::cerr << "xgemv-bench: no case matches the filters\n";
    return 2;
  }
  info.method = "medians of batches of back-to-back calls, A rotated over >= 1 GiB of copies";
  std::string why_no_gpu;
  const std::unique_ptr<DeviceBench> device = open_device(options.device, why_no_gpu);
  if (device) {
    print_device(*device, info);
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
  std::vector<Record> records;
  int exit_code = 0;
  try {
    if (device) device->reserve(cases);
    if (options.wants_library("openblas")) host.reserve(cases);
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      std::vector<double> reference;
      std::vector<Record> case_records;
      if (device) case_records = device->run(c, options, reference);
      if (options.runs_row("openblas", c.nrhs) && HostBench::supports(c)) {
        host.prepare(c);
        if (!device) reference = host.reference(c);
        case_records.push_back(host.run_openblas(c, reference, options));
      }
      const int sm_clock = device ? device->sm_clock_mhz() : 0;  // sampled after the case
      for (Record& r : case_records) r.sm_clock_mhz = sm_clock;
      derive_metrics(case_records);
      for (const Record& r : case_records)
        std::cout << progress_line(r, "[" + std::to_string(i + 1) + "/" +
                                          std::to_string(cases.size()) + "] ")
                  << std::endl;
      records.insert(records.end(), case_records.begin(), case_records.end());
    }
  } catch (const std::exception& error) {
    // A fault (e.g. a kernel's illegal address) poisons the context: report what was measured.
    std::cerr << "xgemv-bench: stopped: " << error.what() << '\n';
    exit_code = 2;
  }
  return finish_run(options.out_dir, info, records, exit_code);
}

int run(int argc, char** argv) {
  CommandLine<Options> command_line(version_text, XGEMV_BENCH_DEFAULT_OUT_DIR);
  Options options;
  try {
    options = command_line.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return command_line.exit(error);
  }
  RunInfo info;
  info.commit = project_commit(options.commit);
  info.date = utc_now_iso8601();
  info.host_cpu = host_cpu_name();
  info.host_blas = HostBench::describe();
  for (int i = 0; i < argc; ++i) info.command += (i ? " " : "") + std::string(argv[i]);
  info.mode = options.graph ? "graph" : "stream";
  info.quick = options.quick;
  return options.decode() ? run_decode(options, info) : run_shapes(options, info);
}

}  // namespace
}  // namespace xgemv::bench

int main(int argc, char** argv) { return xgemv::bench::run(argc, argv); }
