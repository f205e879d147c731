// xgemv-nccl-bench: one GEMV split over several GPUs through NCCL (xgemv_nccl.h), one thread per
// GPU, at P = 1, 2, 4, ... GPUs: the bandwidth of large matrices against P one-GPU stream reads,
// tensor-parallel decode steps of Llama-3-70B and Llama-3.1-405B layers, and the small exchanges
// beside a decode-size split GEMV. See bench/README.md (Several GPUs).
#include <xgemv/xgemv.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/nccl_plan.hpp"
#include "lib/options.hpp"
#include "lib/report.hpp"
#include "nccl_bench.hpp"
#include "system_info.hpp"

namespace xgemv::bench {
namespace {

std::string version_text() {
  return "xgemv-nccl-bench " XGEMV_PROJECT_VERSION ", libxgemv " +
         std::string(xgemv_version_string()) + ", NCCL " + NcclBench::nccl_version() + ", commit " +
         project_commit("");
}

std::string gib(int64_t bytes) { return fixed(double(bytes) / double(int64_t{1} << 30), 2); }

std::string counts_text(const std::vector<int>& counts) {
  std::string text;
  for (int count : counts) text += (text.empty() ? "" : ", ") + std::to_string(count);
  return text;
}

// The models of the decode part with the layers `budget_bytes` holds.
std::vector<TensorParallelStep> plan_steps(int64_t budget_bytes) {
  std::vector<TensorParallelStep> steps;
  for (const std::string& name : kTensorParallelModels)
    steps.push_back(plan_tensor_parallel_step(*find_decode_model(name), budget_bytes));
  return steps;
}

std::string describe_step(const TensorParallelStep& step) {
  return step.model.name + ": " + std::to_string(step.layers) + " of " +
         std::to_string(step.model.layers) + " layers (" + gib(step.layer_bytes) +
         " GiB each on one GPU), " + std::to_string(step.gemvs.size()) + " split GEMVs, " +
         fixed(double(step.bytes()) / 1e9, 2) + " GB per step";
}

void list_plan(const NcclOptions& options) {
  const std::vector<SplitGemv> cases =
      options.wants_part(kPartBandwidth)
          ? bandwidth_cases(options.bandwidth_dtypes(), options.quick)
          : std::vector<SplitGemv>{};
  if (options.gpus)
    std::cout << "P = " << counts_text(gpu_counts(options.gpus)) << " (the first " << options.gpus
              << " GPU(s))\n";
  else
    std::cout << "P = 1, 2, 4, ... up to every visible GPU\n";
  for (const SplitGemv& gemv : cases)
    std::cout << kPartBandwidth << ' ' << gemv.label() << "  (" << gib(gemv.whole_case().a_bytes())
              << " GiB)\n";
  if (options.wants_part(kPartDecode)) {
    if (options.decode_gib > 0) {
      for (const TensorParallelStep& step : plan_steps(options.decode_budget(0)))
        std::cout << kPartDecode << ' ' << describe_step(step) << '\n';
    } else {
      for (const TensorParallelStep& step : plan_steps(0))
        std::cout << kPartDecode << ' ' << step.model.name << ": as many of its "
                  << step.model.layers << " layers (" << gib(step.layer_bytes)
                  << " GiB each on one GPU) as GPU 0 holds less " << gib(kDecodeMemoryMargin)
                  << " GiB"
                  << (options.quick ? " (at most " + gib(kQuickDecodeBudget) + " GiB)" : "")
                  << '\n';
    }
  }
  if (options.wants_part(kPartExchange)) {
    for (const ExchangeCase& exchange : exchange_cases())
      std::cout << kPartExchange << ' ' << exchange.label() << '\n';
    for (int64_t bytes : kExchangeBytes)
      std::cout << kPartExchange << ' ' << exchange_share_gemv(bytes).label() << "  ("
                << (bytes >> 10) << " KB partials)\n";
  }
  std::cout << cases.size() << " bandwidth cases\n";
}

// Adds the rows measured and prints them.
void add_rows(std::vector<Record>& rows, std::vector<Record> measured) {
  const size_t first = rows.size();
  rows.insert(rows.end(), measured.begin(), measured.end());
  derive_metrics(rows);
  for (size_t i = first; i < rows.size(); ++i) std::cout << progress_line(rows[i]) << std::endl;
}

int run(int argc, char** argv) {
  CommandLine<NcclOptions> command_line(version_text, XGEMV_NCCL_BENCH_DEFAULT_OUT_DIR);
  NcclOptions options;
  try {
    options = command_line.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return command_line.exit(error);
  }
  if (options.list) {
    list_plan(options);
    return 0;
  }

  std::string why_no_gpu;
  const int visible = NcclBench::visible_gpus(&why_no_gpu);
  if (visible == 0) {
    std::cout << "xgemv-nccl-bench: no GPU (" << why_no_gpu << "): nothing to measure\n";
    return options.skip_exit_code;
  }
  if (options.gpus > visible) {
    std::cerr << "xgemv-nccl-bench: --gpus " << options.gpus << ": only " << visible
              << " CUDA device(s) visible\n";
    return 2;
  }
  const int gpus = options.gpus ? options.gpus : visible;

  RunInfo info;
  info.commit = project_commit(options.commit);
  info.date = utc_now_iso8601();
  info.host_cpu = host_cpu_name();
  info.host_blas = "no host library";
  for (int i = 0; i < argc; ++i) info.command += (i ? " " : "") + std::string(argv[i]);
  info.mode = "stream (bandwidth) and graph (decode, exchanges)";
  info.quick = options.quick;
  const NcclTimingPlan plan = plan_nccl_timing(options.quick);
  info.method = "one thread per GPU; median over " + std::to_string(plan.repetitions) +
                " repetitions (after " + std::to_string(plan.warmup) +
                ") of the slowest rank's time between CUDA events on its stream, every "
                "repetition started by an all-reduce of one value; every rank's output checked "
                "against an fp64 reference before it is timed";
  const std::vector<int> counts = gpu_counts(gpus);
  std::unique_ptr<NcclBench> bench;
  std::vector<TensorParallelStep> steps;
  int64_t decode_budget = 0;
  try {
    bench = NcclBench::open(gpus);
    info.facts = {{"GPUs visible", visible}, {"P", counts}, {"GPUs used", bench->describe(info)}};
    if (options.wants_part(kPartDecode)) {
      decode_budget = options.decode_budget(bench->free_bytes());
      info.facts["decode budget (GiB of weights on one GPU)"] = gib(decode_budget);
      steps = plan_steps(decode_budget);
    }
  } catch (const std::exception& error) {
    // GPUs that are there but fail to set up are a failure, not a machine without them.
    std::cerr << "xgemv-nccl-bench: stopped: " << error.what() << '\n';
    return 2;
  }
  const std::vector<SplitGemv> cases =
      options.wants_part(kPartBandwidth)
          ? bandwidth_cases(options.bandwidth_dtypes(), options.quick)
          : std::vector<SplitGemv>{};
  const std::vector<ExchangeCase> exchanges =
      options.wants_part(kPartExchange) ? exchange_cases() : std::vector<ExchangeCase>{};
  std::cout << "device " << info.device << " (SM clock max " << info.sm_clock_max_mhz
            << " MHz), driver " << info.driver << ", CUDA " << info.cuda << ", NCCL "
            << info.nccl << "\ncommit " << info.commit << "; " << visible
            << " GPU(s) visible, P = " << counts_text(counts) << "; " << cases.size()
            << " bandwidth cases, " << steps.size() << " decode models, " << exchanges.size()
            << " exchanges; median of " << plan.repetitions << " repetitions"
            << (options.quick ? " (quick)" : "") << "\n";
  if (gpus == 1)
    std::cout << "xgemv-nccl-bench: 1 GPU: P = 1 only; the targets on several GPUs are not "
                 "measured\n";
  for (const TensorParallelStep& step : steps)
    std::cout << "decode " << describe_step(step)
              << (step.layers == 0 ? ": not run (one layer exceeds the budget of " +
                                         gib(decode_budget) + " GiB)"
                                   : "")
              << '\n';
  std::cout << progress_header() << std::endl;

  std::vector<Record> rows;
  int exit_code = 0;
  try {
    for (int ranks : counts) {
      bench->use_gpus(ranks);
      const bool one = ranks == 1;
      for (const SplitGemv& gemv : cases)
        add_rows(rows, bench->run_split(split_record(kPartBandwidth, gemv), {gemv},
                                        {true, false, one}, plan));
      for (const TensorParallelStep& step : steps)
        if (step.layers > 0)
          add_rows(rows, bench->run_split(tensor_parallel_record(step), step.gemvs,
                                          {false, true, one}, plan));
      for (const ExchangeCase& exchange : exchanges)
        add_rows(rows, {bench->run_exchange(exchange_record(exchange), exchange, plan)});
      if (!exchanges.empty())
        for (int64_t bytes : kExchangeBytes) {
          const SplitGemv gemv = exchange_share_gemv(bytes);
          Record share = split_record(kPartExchange, gemv);
          share.exchange_bytes = bytes;
          add_rows(rows, bench->run_split(share, {gemv}, {true, true, false}, plan));
        }
    }
  } catch (const std::exception& error) {
    // A fault poisons a context, and the communicators are aborted: report what was measured.
    std::cerr << "xgemv-nccl-bench: stopped: " << error.what() << '\n';
    exit_code = 2;
  }

  return finish_run(options.out_dir, info, rows, exit_code);
}

}  // namespace
}  // namespace xgemv::bench

int main(int argc, char** argv) { return xgemv::bench::run(argc, argv); }
