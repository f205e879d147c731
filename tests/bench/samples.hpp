// What the tests of the one writer share: the facts of a run, a check, a verdict line, a search.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "lib/record.hpp"
#include "lib/report.hpp"
#include "lib/verdict.hpp"

namespace xgemv::bench {

inline RunInfo sample_info(std::string command) {
  RunInfo info;
  info.device = "NVIDIA H200";
  info.sm_clock_max_mhz = 1980;
  info.driver = "580.65, CUDA 13.0";  // a comma: the CSV must quote it
  info.cuda = "13.0";
  info.commit = "abc123";
  info.date = "2026-12-01T12:00:00Z";
  info.command = std::move(command);
  return info;
}

inline CheckResult check(double max_error, double tolerance) {
  return {max_error, tolerance, max_error <= tolerance};
}

inline std::string markdown_of(const RunInfo& info, const std::vector<Record>& records) {
  std::ostringstream out;
  write_markdown(out, info, records);
  return out.str();
}

// The verdict line of the records that starts with `opening`, or "".
inline std::string verdict_starting(const std::vector<Record>& records,
                                    const std::string& opening) {
  for (const std::string& line : verdict_lines(records))
    if (line.rfind(opening, 0) == 0) return line;
  return "";
}

// Whether `text` holds `part`; where not, the text to look at.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no \"" << part << "\" in:\n" << text;
}

}  // namespace xgemv::bench
