#include "nccl_options.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "nccl_plan.hpp"

namespace xgemv::bench {

bool NcclOptions::wants_part(const std::string& part) const {
  return parts.empty() || std::find(parts.begin(), parts.end(), part) != parts.end();
}

std::vector<Dtype> NcclOptions::bandwidth_dtypes() const {
  if (dtypes.empty()) return {std::begin(kBandwidthDtypes), std::end(kBandwidthDtypes)};
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

NcclCommandLine::NcclCommandLine(std::function<std::string()> version, std::string default_out_dir)
    : app_(
          "xgemv-nccl-bench: one GEMV split over several GPUs through NCCL (xgemv_nccl.h), one "
          "thread per GPU: bandwidth against P one-GPU stream reads, tensor-parallel decode "
          "steps, and the small exchanges. Method: bench/README.md (Several GPUs)."),
      default_out_dir_(std::move(default_out_dir)) {
  app_.set_version_flag("--version", std::move(version), "Print the versions and exit");
  std::vector<std::string> dtype_names;
  for (Dtype dtype : kAllDtypes) dtype_names.emplace_back(dtype_name(dtype));
  const CLI::Validator positive(
      [](const std::string& text) {
        double value = 0;
        return CLI::detail::lexical_cast(text, value) && value > 0 ? std::string()
                                                                   : "must be > 0, got " + text;
      },
      ">0");

  app_.add_option("--gpus", options_.gpus,
                  "GPUs to use, the first N CUDA devices (default: all visible); runs P = 1, 2, "
                  "4, ... up to N")
      ->check(CLI::PositiveNumber);
  app_.add_option("-d,--dtype", options_.dtypes,
                  "Precisions of the bandwidth part (default bf16,fp32; decode steps are bf16, "
                  "the exchanges fp32 and bf16)")
      ->delimiter(',')
      ->check(CLI::IsMember(dtype_names));
  app_.add_option("--part", options_.parts, "Parts to run (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember(kNcclParts));
  app_.add_option("--decode-gib", options_.decode_gib,
                  "GiB of decode-step weights on one GPU (default: GPU 0's free memory less 4 "
                  "GiB; --quick: at most 8)")
      ->check(positive);
  app_.add_flag("--quick", options_.quick,
                "Fewer cases and repetitions (still >= 15) and a decode budget of at most 8 GiB");
  app_.add_flag("--list", options_.list, "Print the plan and exit");
  app_.add_option("-o,--out-dir", options_.out_dir, "Folder for nccl.csv, nccl.json, nccl.md")
      ->default_str(default_out_dir_);
  app_.add_option("--commit", options_.commit,
                  "Project commit to record (default: git, else unknown)");
  app_.add_option("--skip-exit-code", options_.skip_exit_code,
                  "Exit status when there is no GPU (default 2; CTest uses 77)")
      ->capture_default_str();
}

NcclOptions NcclCommandLine::parse(int argc, const char* const* argv) {
  options_ = NcclOptions{};
  options_.out_dir = default_out_dir_;
  app_.parse(argc, argv);
  return options_;
}

}  // namespace xgemv::bench
