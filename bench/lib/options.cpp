#include "options.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "case.hpp"
#include "decode.hpp"
#include "suites.hpp"

namespace xgemv::bench {

bool is_device_library(const std::string& name) { return name != "openblas"; }

bool Options::wants_library(const std::string& name) const {
  return libraries.empty() ||
         std::find(libraries.begin(), libraries.end(), name) != libraries.end();
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

bool Options::decode() const {
  return std::find(suites.begin(), suites.end(), "decode") != suites.end();
}

CommandLine::CommandLine(std::function<std::string()> version, std::string default_out_dir)
    : app_("xgemv-bench: xgemv beside cuBLAS and OpenBLAS on the same buffers, with the "
           "stream-read ceiling of every shape, or whole decode steps as CUDA graphs (--suite "
           "decode). Method: bench/README.md."),
      default_out_dir_(std::move(default_out_dir)) {
  app_.set_version_flag("--version", std::move(version), "Print the versions and exit");
  std::vector<std::string> suite_names;
  for (const Suite& suite : all_suites()) suite_names.push_back(suite.name);
  suite_names.push_back("all");
  suite_names.push_back("decode");
  std::vector<std::string> model_names;
  for (const DecodeModel& model : decode_models()) model_names.push_back(model.name);
  std::vector<std::string> dtype_names;
  for (Dtype dtype : kAllDtypes) dtype_names.emplace_back(dtype_name(dtype));

  const CLI::Validator shape_validator(
      [](const std::string& text) {
        return parse_shape(text) ? std::string() : "expected MxN with M, N >= 1, got " + text;
      },
      "MxN");
  const CLI::Validator positive(
      [](const std::string& text) {
        double value = 0;
        return CLI::detail::lexical_cast(text, value) && value > 0 ? std::string()
                                                                   : "must be > 0, got " + text;
      },
      ">0");
  const CLI::Validator nonzero(
      [](const std::string& text) { return text == "0" ? "must not be 0" : std::string(); },
      "!=0");

  app_.add_option("-s,--suite", options_.suites,
                  "Suites to run (default llm; all: every shape suite). decode: whole decode "
                  "steps, one CUDA graph per step and library (on its own; see --model, "
                  "--step-gib)")
      ->delimiter(',')
      ->check(CLI::IsMember(suite_names));
  app_.add_option("--shape", options_.shapes, "Ad-hoc shapes m x n, e.g. 4096x14336 (suite adhoc)")
      ->delimiter(',')
      ->check(shape_validator);
  app_.add_option("-d,--dtype", options_.dtypes, "Precisions (default: each suite's own)")
      ->delimiter(',')
      ->check(CLI::IsMember(dtype_names));
  app_.add_option("--op,--trans", options_.ops, "BLAS ops N, T (default: each suite's own)")
      ->delimiter(',')
      ->check(CLI::IsMember({"N", "T"}));
  app_.add_option("-l,--lib", options_.libraries,
                  "Libraries (default: all; without a GPU only openblas can run; decode: xgemv "
                  "runs plain and with early start; with --nrhs, xgemv also gives the "
                  "xgemv-nrhs rows)")
      ->delimiter(',')
      ->check(CLI::IsMember(kLibraryNames));
  app_.add_option("--nrhs", options_.nrhs,
                  "Right-hand sides, e.g. 1,2,4,8,16: every case (decode: every step) runs with "
                  "each, xgemv through xgemv_?gemv_nrhs and cuBLAS as a GEMM with as many "
                  "columns (1 is always added)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app_.add_option("--shape-filter", options_.shape_filter,
                  "Regex searched in '<tag> <m>x<n>', e.g. 'lmhead|down'");
  app_.add_option("--incx", options_.incx, "Increment of x (may be negative)")->check(nonzero);
  app_.add_option("--incy", options_.incy, "Increment of y (may be negative)")->check(nonzero);
  app_.add_option("--alpha", options_.alpha, "alpha");
  app_.add_option("--beta", options_.beta, "beta (0: y is poisoned with NaN before each check)");
  app_.add_flag("--quick", options_.quick,
                "Fewer batches and calls per batch (still >= 15 batches); decode: 15 replays "
                "instead of 31");
  app_.add_flag("--graph", options_.graph, "Time CUDA-graph replays of the back-to-back calls");
  app_.add_flag("--list", options_.list, "Print the cases (decode: the steps) and exit");
  app_.add_option("-o,--out-dir", options_.out_dir,
                  "Folder for results.csv, results.json, summary.md (decode: decode.csv, "
                  "decode.json, decode.md)")
      ->default_str(default_out_dir_);
  app_.add_option("--device", options_.device, "CUDA device ordinal")
      ->check(CLI::NonNegativeNumber);
  app_.add_option("--commit", options_.commit,
                  "Project commit to record (default: git, else unknown)");
  app_.add_option("--model", options_.models, "decode: models to run (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember(model_names));
  app_.add_option("--step-gib", options_.step_gib,
                  "decode: GiB of weights a step may take; larger models run their first "
                  "layers")
      ->check(positive)
      ->capture_default_str();
}

Options CommandLine::parse(int argc, const char* const* argv) {
  options_ = Options{};
  options_.out_dir = default_out_dir_;
  app_.parse(argc, argv);
  if (options_.nrhs_sweep()) {
    std::vector<int64_t>& nrhs = options_.nrhs;
    nrhs.push_back(1);
    std::sort(nrhs.begin(), nrhs.end());
    nrhs.erase(std::unique(nrhs.begin(), nrhs.end()), nrhs.end());
    if (options_.incx != 1 || options_.incy != 1)
      throw CLI::ValidationError("--nrhs", "the columns of X and Y are contiguous: --incx and "
                                           "--incy must be 1");
  }
  if (options_.decode()) {
    if (options_.suites.size() > 1)
      throw CLI::ValidationError("--suite", "decode runs on its own");
    for (const char* shape_option : {"--shape", "--op", "--shape-filter", "--incx", "--incy",
                                     "--alpha", "--beta", "--graph"})
      if (app_.count(shape_option))
        throw CLI::ValidationError(shape_option, "not an option of --suite decode");
    for (const std::string& dtype : options_.dtypes)
      if (dtype != "bf16" && dtype != "fp16")
        throw CLI::ValidationError("--dtype", "--suite decode runs bf16 and fp16");
    if (std::find(options_.libraries.begin(), options_.libraries.end(), "openblas") !=
        options_.libraries.end())
      throw CLI::ValidationError("--lib", "--suite decode runs the GPU libraries only");
  } else {
    for (const char* decode_option : {"--model", "--step-gib"})
      if (app_.count(decode_option))
        throw CLI::ValidationError(decode_option, "an option of --suite decode");
  }
  return options_;
}

}  // namespace xgemv::bench
