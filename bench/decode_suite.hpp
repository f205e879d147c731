// xgemv-bench --suite decode: plans the steps, runs them on the GPU (decode_bench.cu), prints
// progress per model and row, writes decode.csv, decode.json and decode.md under --out-dir, and
// ends with the compact table. See bench/README.md.
#pragma once

#include "lib/options.hpp"
#include "lib/report.hpp"

namespace xgemv::bench {

// The exit code: 0, 1 when a row failed its check or errored, 2 when the run had to stop (no
// GPU, a bad option value, a device fault; the rows so far are written).
int run_decode_suite(const Options& options, RunInfo info);

}  // namespace xgemv::bench
