// The command lines of xgemv-bench and xgemv-nccl-bench (CLI11), parsed into plain values.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "case.hpp"
#include "decode.hpp"

namespace xgemv::bench {

// Libraries the C++ bench times (the Triton seed runs from bench/triton/seed_gemv.py). The
// stream-read ceiling is not a library: it runs on every GPU case.
inline const std::vector<std::string> kLibraryNames = {"xgemv", "cublas", "cublas-gemmex",
                                                       "cublas-gemm", "openblas"};

// The libraries of kLibraryNames that run on the GPU (all but openblas).
bool is_device_library(const std::string& name);

// The rows a library gives. xgemv (xgemv_?gemv), cublas (cuBLAS gemv) and openblas call with one
// vector; cublas-gemmex is cublasGemmEx with the case's nrhs columns (fp16, bf16). With --nrhs,
// two more: xgemv-nrhs (xgemv_?gemv_nrhs, chosen by --lib xgemv) and cublas-gemm (cublasSgemm,
// cublasDgemm with nrhs columns; fp32, fp64).
inline constexpr const char* kXgemvNrhs = "xgemv-nrhs";
inline constexpr const char* kCublasGemmEx = "cublas-gemmex";
inline constexpr const char* kCublasGemm = "cublas-gemm";

// What both benches take: --quick, --list, --out-dir, --commit, --dtype.
struct RunOptions {
  bool quick = false;  // fewer batches and calls (cases): a smoke run that still follows the method
  bool list = false;   // print the cases (the plan) and exit
  std::string out_dir;              // the command line's default: under the build tree
  std::string commit;               // overrides the commit found by git
  std::vector<std::string> dtypes;  // empty: the bench's, or each suite's, own
};

struct Options : RunOptions {
  std::vector<std::string> suites;     // empty and no shapes: llm
  std::vector<std::string> shapes;     // ad-hoc "MxN"
  std::vector<std::string> ops;        // empty: each suite's own
  std::vector<std::string> libraries;  // empty: all of kLibraryNames
  std::string shape_filter;            // ECMAScript regex searched in "<tag> <m>x<n>"
  int64_t incx = 1, incy = 1;
  double alpha = 1.0, beta = 0.0;
  bool graph = false;  // time CUDA-graph replays instead of stream launches
  int device = 0;
  // --suite decode and moe.
  std::vector<std::string> models;  // empty: every model of the suite
  // --suite decode only.
  double step_gib = kDefaultStepGib;  // budget for a step's weights
  // --nrhs: the numbers of right-hand sides every case (decode: every step) runs with, ascending,
  // 1 always among them (time(1) divides every ratio). Empty without --nrhs: one vector, the
  // rows of a run without the option.
  std::vector<int64_t> nrhs;
  // --weights: quantized formats (weights.hpp) every 16-bit op T case and decode step also runs
  // in, through xgemv_qgemv_nrhs (the xgemv-q rows, and xgemv-q-early-start for decode steps);
  // --suite moe: the experts' formats, bf16 (dense) among them.
  std::vector<std::string> weights;
  // --suite moe only (--model names its models too).
  std::vector<int64_t> tokens;        // empty: every kMoeTokens
  std::vector<std::string> routings;  // empty: uniform and skewed

  bool wants_library(const std::string& name) const;
  bool nrhs_sweep() const { return !nrhs.empty(); }
  // The nrhs of the cases: --nrhs, or {1}.
  std::vector<int64_t> nrhs_values() const;
  // Whether a case (or decode step) of `vectors` right-hand sides gets the row `row` (one of the
  // names above): the one-vector rows at nrhs 1 only, cublas-gemmex at every nrhs, xgemv-nrhs
  // and cublas-gemm at every nrhs of an --nrhs run; each only when --lib asks for its library.
  bool runs_row(const std::string& row, int64_t vectors) const;
  // The GPU libraries --lib names explicitly (none when --lib is not given).
  std::vector<std::string> device_libraries_named() const;
  bool decode() const;  // --suite decode: whole decode steps instead of shape cases
  bool moe() const;     // --suite moe: the routed calls of mixture-of-experts layers
};

struct NcclOptions : RunOptions {
  int gpus = 0;                    // the first N CUDA devices; 0: every visible one
  std::vector<std::string> parts;  // kNcclParts to run; empty: all
  double decode_gib = 0;           // the decode step's weights on one GPU; 0: what GPU 0 has free
  int skip_exit_code = 2;          // the exit status without a GPU

  bool wants_part(const std::string& part) const;
  // The bandwidth part's precisions: --dtype, else bf16 and fp32.
  std::vector<Dtype> bandwidth_dtypes() const;
  // Bytes of weights a decode step may take on one GPU, given GPU 0's free memory: --decode-gib,
  // else the free memory less kDecodeMemoryMargin (--quick: at most kQuickDecodeBudget).
  int64_t decode_budget(int64_t free_bytes) const;
};

// Declares every option on a CLI11 app; parse() fills the options or throws CLI::ParseError
// (including CLI::CallForHelp and CLI::CallForVersion), which exit() turns into the usual
// message and exit code. `version` gives the text of --version (called only for it);
// `default_out_dir` is --out-dir's default.
template <class Parsed>
class CommandLine {
 public:
  CommandLine(std::function<std::string()> version, std::string default_out_dir);
  Parsed parse(int argc, const char* const* argv) {
    options_ = Parsed{};
    options_.out_dir = default_out_dir_;
    app_.parse(argc, argv);
    validate();
    return options_;
  }
  // parse() for main(): the options, or the exit code after the message.
  std::variant<Parsed, int> parse_or_exit(int argc, const char* const* argv) {
    try {
      return parse(argc, argv);
    } catch (const CLI::ParseError& error) {
      return exit(error);
    }
  }
  int exit(const CLI::Error& error) { return app_.exit(error); }

 private:
  void validate();  // what the options ask of each other; throws CLI::ValidationError

  CLI::App app_;
  std::string default_out_dir_;
  Parsed options_;
};
template <>
CommandLine<Options>::CommandLine(std::function<std::string()> version,
                                  std::string default_out_dir);
template <>
void CommandLine<Options>::validate();
template <>
CommandLine<NcclOptions>::CommandLine(std::function<std::string()> version,
                                      std::string default_out_dir);
template <>
inline void CommandLine<NcclOptions>::validate() {}

}  // namespace xgemv::bench
