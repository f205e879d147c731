// The command line of xgemv-nccl-bench (CLI11), parsed into a plain NcclOptions value.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "case.hpp"

namespace xgemv::bench {

// The bandwidth part's precisions unless --dtype says.
inline constexpr Dtype kBandwidthDtypes[] = {Dtype::bf16, Dtype::fp32};

struct NcclOptions {
  int gpus = 0;         // the first N CUDA devices; 0: every visible one
  bool quick = false;   // fewer repetitions and cases, a smaller decode budget: a smoke run
  bool list = false;    // print the plan and exit
  std::string out_dir;  // NcclCommandLine's default: under the build tree
  std::string commit;   // overrides the commit found by git
  std::vector<std::string> dtypes;  // the bandwidth part's; empty: kBandwidthDtypes
  std::vector<std::string> parts;   // kNcclParts to run; empty: all
  double decode_gib = 0;            // the decode step's weights on one GPU; 0: what GPU 0 has free
  int skip_exit_code = 2;           // the exit status without a GPU

  bool wants_part(const std::string& part) const;
  std::vector<Dtype> bandwidth_dtypes() const;
  // Bytes of weights a decode step may take on one GPU, given GPU 0's free memory: --decode-gib,
  // else the free memory less kDecodeMemoryMargin (--quick: at most kQuickDecodeBudget).
  int64_t decode_budget(int64_t free_bytes) const;
};

// Declares every option on a CLI11 app; parse() fills NcclOptions or throws CLI::ParseError
// (CLI::CallForHelp and CLI::CallForVersion included), which exit() turns into the usual message
// and exit code.
class NcclCommandLine {
 public:
  NcclCommandLine(std::function<std::string()> version, std::string default_out_dir);
  NcclOptions parse(int argc, const char* const* argv);
  int exit(const CLI::Error& error) { return app_.exit(error); }

 private:
  CLI::App app_;
  std::string default_out_dir_;
  NcclOptions options_;
};

}  // namespace xgemv::bench
