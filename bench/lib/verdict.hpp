// Every target the bench holds xgemv to, declared as data (which records, which metric, the
// bound, the words), and the one place that turns a run's records into verdict lines.
#pragma once

#include <climits>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "record.hpp"

namespace xgemv::bench {

inline constexpr int64_t kAnyNrhs = INT64_MAX;
inline constexpr int kAnyGpus = INT_MAX;

struct Range {
  int64_t low = 1, high = 1;
  bool contains(int64_t value) const { return value >= low && value <= high; }
};

// Which records a target or a table is about; an empty list matches everything.
struct Scope {
  std::vector<std::string> suites, libs;
  std::vector<Dtype> dtypes;
  Range nrhs, gpus;
  int64_t min_matrix_bytes = 0;
  std::string tag;
  std::vector<std::string> formats;  // weight formats (Record::weight_format)

  bool matches(const Record& r, bool any_gpus = false) const;
  // A copy with one member set: scope.with(&Scope::nrhs, {2, 8}).
  template <class Member>
  Scope with(Member Scope::*member, std::common_type_t<Member> value) const {
    Scope copy = *this;
    copy.*member = std::move(value);
    return copy;
  }
};

enum class Metric { speedup, pct_bound, nrhs_ratio, share_pct, reads_ratio };

struct Target {
  enum Kind {
    worst,              // "<text> <worst> (<name>)"
    geomean,            // "<text> <geo-mean> geo-mean, worst <worst> (<name>)"
    geomean_per_dtype,  // "<text> <dtype> <geo-mean> geo-mean, worst ..., <dtype> ..."
    at_least,           // "<text>: yes|NO (<met>/<records>...)": every record at least threshold
    at_most,            // ... at most threshold
    failures,           // "<text with the count for {}>: <name> (<status>), ..." when any failed
  };
  enum Names { label, tag, suite_and_label };  // how the clause names a record

  std::string line;  // the opening of the verdict line this is a clause of ("; " between clauses)
  Kind kind;
  Scope scope;
  Metric metric = Metric::speedup;
  double threshold = 0;
  std::string text;
  Names names = label;
  // at_least, at_most: the worst record inside the parentheses; every record that missed after
  // " below: ".
  bool show_worst = false, list_misses = false;
};
const std::vector<Target>& targets();

// The lines of the targets whose scope has records in the run (on any number of GPUs), in the
// order of the table. A line whose measured clauses are all empty says n/a.
std::vector<std::string> verdict_lines(const std::vector<Record>& records);
// The table, for the JSON report (plot.py draws the targets of t_over_t1 from it).
nlohmann::ordered_json targets_json();

}  // namespace xgemv::bench
