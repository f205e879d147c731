#include "options.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "moe.hpp"
#include "nccl_plan.hpp"
#include "suites.hpp"
#include "weights.hpp"

namespace xgemv::bench {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

const CLI::Validator kPositive(
    [](const std::string& text) {
      double value = 0;
      return CLI::detail::lexical_cast(text, value) && value > 0 ? std::string()
                                                                 : "must be > 0, got " + text;
    },
    ">0");

// An option of comma-separated values (given once or more).
template <class T>
CLI::Option* list_option(CLI::App& app, const std::string& name, std::vector<T>& values,
                         const std::string& help) {
  return app.add_option(name, values, help)->delimiter(',');
}

// The options both benches take; `dtype_help` and `quick_help` say what they mean for this one.
void add_run_options(CLI::App& app, RunOptions& options, const std::string& default_out_dir,
                     std::function<std::string()> version, const std::string& dtype_help,
                     const std::string& quick_help) {
  app.set_version_flag("--version", std::move(version), "Print the versions and exit");
  std::vector<std::string> dtype_names;
  for (Dtype dtype : kAllDtypes) dtype_names.emplace_back(dtype_name(dtype));
  list_option(app, "-d,--dtype", options.dtypes, dtype_help)->check(CLI::IsMember(dtype_names));
  app.add_flag("--quick", options.quick, quick_help);
  app.add_flag("--list", options.list, "Print what would run (the cases, steps or plan) and exit");
  app.add_option("-o,--out-dir", options.out_dir,
                 "Folder for results.csv, results.json, summary.md")
      ->default_str(default_out_dir);
  app.add_option("--commit", options.commit,
                 "Project commit to record (default: git, else unknown)");
}

}  // namespace

bool is_device_library(const std::string& name) { return name != "openblas"; }

bool Options::wants_library(const std::string& name) const {
  return libraries.empty() || contains(libraries, name);
}

std::vector<std::string> Options::device_libraries_named() const {
  std::vector<std::string> named;
  std::copy_if(libraries.begin(), libraries.end(), std::back_inserter(named), is_device_library);
  return named;
}

std::vector<int64_t> Options::nrhs_values() const {
  return nrhs.empty() ? std::vector<int64_t>{1} : nrhs;
}

bool Options::runs_row(const std::string& row, int64_t vectors) const {
  const bool nrhs_only = row == kXgemvNrhs || row == kCublasGemm;
  if (nrhs_only && !nrhs_sweep()) return false;
  if (!nrhs_only && row != kCublasGemmEx && vectors != 1) return false;
  return wants_library(row == kXgemvNrhs ? "xgemv" : row);
}

bool Options::decode() const { return contains(suites, "decode"); }

bool Options::moe() const { return contains(suites, "moe"); }

bool NcclOptions::wants_part(const std::string& part) const {
  return parts.empty() || contains(parts, part);
}

std::vector<Dtype> NcclOptions::bandwidth_dtypes() const {
  if (dtypes.empty()) return {Dtype::bf16, Dtype::fp32};
  std::vector<Dtype> chosen;
  for (const std::string& name : dtypes)
    if (const auto dtype = parse_dtype(name);
        dtype && std::find(chosen.begin(), chosen.end(), *dtype) == chosen.end())
      chosen.push_back(*dtype);
  return chosen;
}

int64_t NcclOptions::decode_budget(int64_t free_bytes) const {
  if (decode_gib > 0) return static_cast<int64_t>(decode_gib * double(int64_t{1} << 30));
  const int64_t budget = std::max<int64_t>(0, free_bytes - kDecodeMemoryMargin);
  return quick ? std::min(budget, kQuickDecodeBudget) : budget;
}

template <>
CommandLine<Options>::CommandLine(std::function<std::string()> version, std::string default_out_dir)
    : app_(
          "xgemv-bench: xgemv beside cuBLAS and OpenBLAS on the same buffers, with the "
          "stream-read ceiling of every shape, or whole decode steps as CUDA graphs (--suite "
          "decode), or the routed GEMVs of mixture-of-experts layers (--suite moe). Method: "
          "bench/README.md."),
      default_out_dir_(std::move(default_out_dir)) {
  add_run_options(app_, options_, default_out_dir_, std::move(version),
                  "Precisions (default: each suite's own)",
                  "Fewer batches and calls per batch (still >= 15 batches); decode: 15 replays "
                  "instead of 31");
  std::vector<std::string> suite_names;
  for (const Suite& suite : all_suites()) suite_names.push_back(suite.name);
  suite_names.push_back("all");
  suite_names.push_back("decode");
  suite_names.push_back("moe");
  std::vector<std::string> model_names;
  for (const DecodeModel& model : models()) model_names.push_back(model.name);
  for (const MoeModel& model : moe_models()) model_names.push_back(model.name);

  const CLI::Validator shape_validator(
      [](const std::string& text) {
        return parse_shape(text) ? std::string() : "expected MxN with M, N >= 1, got " + text;
      },
      "MxN");
  const CLI::Validator nonzero(
      [](const std::string& text) { return text == "0" ? "must not be 0" : std::string(); }, "!=0");

  list_option(app_, "-s,--suite", options_.suites,
              "Suites to run (default llm; all: every shape suite). decode: whole decode "
              "steps, one CUDA graph per step and library (on its own; see --model, "
              "--step-gib); moe: the routed up and down projections of mixture-of-experts "
              "layers (on its own; see --model, --tokens, --routing, --weights)")
      ->check(CLI::IsMember(suite_names));
  list_option(app_, "--shape", options_.shapes,
              "Ad-hoc shapes m x n, e.g. 4096x14336 (suite adhoc)")
      ->check(shape_validator);
  list_option(app_, "--op,--trans", options_.ops, "BLAS ops N, T (default: each suite's own)")
      ->check(CLI::IsMember({"N", "T"}));
  list_option(app_, "-l,--lib", options_.libraries,
              "Libraries (default: all; without a GPU only openblas can run; decode: xgemv "
              "runs plain and with early start; with --nrhs, xgemv also gives the "
              "xgemv-nrhs rows)")
      ->check(CLI::IsMember(kLibraryNames));
  list_option(app_, "--nrhs", options_.nrhs,
              "Right-hand sides, e.g. 1,2,4,8,16: every case (decode: every step) runs with "
              "each, xgemv through xgemv_?gemv_nrhs and cuBLAS as a GEMM with as many "
              "columns (1 is always added)")
      ->check(CLI::PositiveNumber);
  std::string weight_names;
  for (const std::string& name : weight_format_examples())
    weight_names += (weight_names.empty() ? "" : ", ") + name;
  list_option(app_, "--weights", options_.weights,
              "Quantized weights (" + weight_names +
                  "): every 16-bit op T case and decode step also runs xgemv_qgemv_nrhs on A "
                  "quantized to each, beside the stream read of the bytes it reads; moe: the "
                  "experts' formats, bf16 among them (default bf16,int4-g128)")
      ->check(CLI::Validator(
          [](const std::string& text) {
            return text == "bf16" || parse_weight_format(text) ? std::string()
                                                               : "unknown weight format " + text;
          },
          "FORMAT"));
  app_.add_option("--shape-filter", options_.shape_filter,
                  "Regex searched in '<tag> <m>x<n>', e.g. 'lmhead|down'");
  app_.add_option("--incx", options_.incx, "Increment of x (may be negative)")->check(nonzero);
  app_.add_option("--incy", options_.incy, "Increment of y (may be negative)")->check(nonzero);
  app_.add_option("--alpha", options_.alpha, "alpha");
  app_.add_option("--beta", options_.beta, "beta (0: y is poisoned with NaN before each check)");
  app_.add_flag("--graph", options_.graph, "Time CUDA-graph replays of the back-to-back calls");
  app_.add_option("--device", options_.device, "CUDA device ordinal")
      ->check(CLI::NonNegativeNumber);
  list_option(app_, "--model", options_.models,
              "decode: models to run (default the decode suite's six; any of the bench's); moe: "
              "its models (default all six)")
      ->check(CLI::IsMember(model_names));
  app_.add_option("--step-gib", options_.step_gib,
                  "decode: GiB of weights a step may take; larger models run their first "
                  "layers")
      ->check(kPositive)
      ->capture_default_str();
  list_option(app_, "--tokens", options_.tokens, "moe: tokens per call (default 1,2,4,8,16,32,64)")
      ->check(CLI::PositiveNumber);
  std::vector<std::string> routing_names;
  for (RoutingKind kind : kRoutingKinds) routing_names.emplace_back(routing_name(kind));
  list_option(app_, "--routing", options_.routings,
              "moe: how tokens choose their experts: uniform, skewed (a few hot experts; "
              "default both)")
      ->check(CLI::IsMember(routing_names));
}

template <>
void CommandLine<Options>::validate() {
  if (options_.nrhs_sweep()) {
    std::vector<int64_t>& nrhs = options_.nrhs;
    nrhs.push_back(1);
    std::sort(nrhs.begin(), nrhs.end());
    nrhs.erase(std::unique(nrhs.begin(), nrhs.end()), nrhs.end());
    if (options_.incx != 1 || options_.incy != 1)
      throw CLI::ValidationError("--nrhs",
                                 "the columns of X and Y are contiguous: --incx and "
                                 "--incy must be 1");
  }
  if (options_.moe()) {
    if (options_.suites.size() > 1) throw CLI::ValidationError("--suite", "moe runs on its own");
    for (const char* other_option : {"--shape", "--op", "--shape-filter", "--incx", "--incy",
                                     "--alpha", "--beta", "--nrhs", "--step-gib"})
      if (app_.count(other_option))
        throw CLI::ValidationError(other_option, "not an option of --suite moe");
    for (const std::string& dtype : options_.dtypes)
      if (dtype != "bf16") throw CLI::ValidationError("--dtype", "--suite moe runs bf16");
    for (const std::string& library : options_.libraries)
      if (library != "xgemv" && library != kCublasGemmEx)
        throw CLI::ValidationError("--lib", "--suite moe runs xgemv and cublas-gemmex");
    for (const std::string& model : options_.models)
      if (!find_moe_model(model))
        throw CLI::ValidationError("--model", model + " is not a model of --suite moe");
    return;
  }
  for (const char* moe_option : {"--tokens", "--routing"})
    if (app_.count(moe_option)) throw CLI::ValidationError(moe_option, "an option of --suite moe");
  if (contains(options_.weights, "bf16"))
    throw CLI::ValidationError("--weights", "bf16 is an experts' format of --suite moe");
  if (options_.decode()) {
    if (options_.suites.size() > 1) throw CLI::ValidationError("--suite", "decode runs on its own");
    for (const char* shape_option :
         {"--shape", "--op", "--shape-filter", "--incx", "--incy", "--alpha", "--beta", "--graph"})
      if (app_.count(shape_option))
        throw CLI::ValidationError(shape_option, "not an option of --suite decode");
    for (const std::string& dtype : options_.dtypes)
      if (dtype != "bf16" && dtype != "fp16")
        throw CLI::ValidationError("--dtype", "--suite decode runs bf16 and fp16");
    if (contains(options_.libraries, "openblas"))
      throw CLI::ValidationError("--lib", "--suite decode runs the GPU libraries only");
    for (const std::string& model : options_.models)
      if (!find_decode_model(model))
        throw CLI::ValidationError("--model", model + " is not a model of --suite decode");
  } else {
    if (app_.count("--model"))
      throw CLI::ValidationError("--model", "an option of --suite decode and --suite moe");
    if (app_.count("--step-gib"))
      throw CLI::ValidationError("--step-gib", "an option of --suite decode");
  }
}

template <>
CommandLine<NcclOptions>::CommandLine(std::function<std::string()> version,
                                      std::string default_out_dir)
    : app_(
          "xgemv-nccl-bench: one GEMV split over several GPUs through NCCL (xgemv_nccl.h), one "
          "thread per GPU: bandwidth against P one-GPU stream reads, tensor-parallel decode "
          "steps, and the small exchanges. Method: bench/README.md (Several GPUs)."),
      default_out_dir_(std::move(default_out_dir)) {
  add_run_options(app_, options_, default_out_dir_, std::move(version),
                  "Precisions of the bandwidth part (default bf16,fp32; decode steps are bf16, "
                  "the exchanges fp32 and bf16)",
                  "Fewer cases and repetitions (still >= 15) and a decode budget of at most 8 GiB");
  app_.add_option("--gpus", options_.gpus,
                  "GPUs to use, the first N CUDA devices (default: all visible); runs P = 1, 2, "
                  "4, ... up to N")
      ->check(CLI::PositiveNumber);
  list_option(app_, "--part", options_.parts, "Parts to run (default all)")
      ->check(CLI::IsMember(kNcclParts));
  app_.add_option("--decode-gib", options_.decode_gib,
                  "GiB of decode-step weights on one GPU (default: GPU 0's free memory less 4 "
                  "GiB; --quick: at most 8)")
      ->check(kPositive);
  app_.add_option("--skip-exit-code", options_.skip_exit_code,
                  "Exit status when there is no GPU (default 2; CTest uses 77)")
      ->capture_default_str();
}

}  // namespace xgemv::bench
