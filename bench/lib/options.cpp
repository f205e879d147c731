#include "options.hpp"

#include <algorithm>

#include "case.hpp"
#include "suites.hpp"

namespace xgemv::bench {

bool Options::wants_library(const std::string& name) const {
  return libraries.empty() ||
         std::find(libraries.begin(), libraries.end(), name) != libraries.end();
}

CommandLine::CommandLine()
    : app_("xgemv-bench: xgemv beside cuBLAS and OpenBLAS on the same buffers, with the "
           "stream-read ceiling of every shape (method: bench/README.md).") {
  std::vector<std::string> suite_names;
  for (const Suite& suite : all_suites()) suite_names.push_back(suite.name);
  suite_names.push_back("all");
  std::vector<std::string> dtype_names;
  for (Dtype dtype : kAllDtypes) dtype_names.emplace_back(dtype_name(dtype));

  const CLI::Validator shape_validator(
      [](const std::string& text) {
        return parse_shape(text) ? std::string() : "expected MxN with M, N >= 1, got " + text;
      },
      "MxN");
  const CLI::Validator nonzero(
      [](const std::string& text) { return text == "0" ? "must not be 0" : std::string(); },
      "!=0");

  app_.add_option("-s,--suite", options_.suites, "Suites to run (default llm)")
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
  app_.add_option("-l,--lib", options_.libraries, "Libraries (default: all available)")
      ->delimiter(',')
      ->check(CLI::IsMember(kLibraryNames));
  app_.add_option("--shape-filter", options_.shape_filter,
                  "Regex searched in '<tag> <m>x<n>', e.g. 'lmhead|down'");
  app_.add_option("--incx", options_.incx, "Increment of x (may be negative)")->check(nonzero);
  app_.add_option("--incy", options_.incy, "Increment of y (may be negative)")->check(nonzero);
  app_.add_option("--alpha", options_.alpha, "alpha");
  app_.add_option("--beta", options_.beta, "beta (0: y is poisoned with NaN before each check)");
  app_.add_flag("--quick", options_.quick,
                "Fewer batches and calls per batch (still >= 15 batches)");
  app_.add_flag("--graph", options_.graph, "Time CUDA-graph replays of the back-to-back calls");
  app_.add_flag("--list", options_.list, "Print the cases and exit");
  app_.add_option("-o,--out-dir", options_.out_dir,
                  "Folder for results.csv, results.json, summary.md")
      ->capture_default_str();
  app_.add_option("--device", options_.device, "CUDA device ordinal")
      ->check(CLI::NonNegativeNumber);
  app_.add_option("--commit", options_.commit,
                  "Project commit to record (default: git, else unknown)");
}

Options CommandLine::parse(int argc, const char* const* argv) {
  options_ = Options{};
  app_.parse(argc, argv);
  return options_;
}

}  // namespace xgemv::bench
