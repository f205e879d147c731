// The shape suites and the expansion of a command line into the list of cases to run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "case.hpp"

namespace xgemv::bench {

struct Options;

struct SuiteShape {
  std::string tag;
  int64_t m = 0, n = 0;  // BLAS column-major m x n
};

struct Suite {
  std::string name;
  std::vector<SuiteShape> shapes;
  std::vector<Dtype> dtypes;  // run unless --dtype says otherwise
  std::vector<char> ops;      // run unless --op says otherwise
};

// llm, square, skinny, small, anchors (in that order).
const std::vector<Suite>& all_suites();
const Suite* find_suite(const std::string& name);

// The suites whose records are one GEMV call: every suite above and adhoc.
std::vector<std::string> shape_suite_names();

// Cases in suite order (suites, then ad-hoc shapes), shape order, dtype order, op order, then
// every --nrhs value (the cases of one problem run back to back); --dtype/--op replace the suites'
// own lists, --shape-filter keeps matching shapes.
// Throws std::invalid_argument for a bad --shape-filter regex.
std::vector<Case> build_cases(const Options& options);

}  // namespace xgemv::bench
