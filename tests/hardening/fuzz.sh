#!/usr/bin/env bash
# Runs xgemv's libFuzzer targets (built by tests/hardening/CMakeLists.txt into
# <build>/tests/hardening/fuzz) from the committed seed corpus, and prints one line per target.
#
#   tests/hardening/fuzz.sh [options] FUZZER_DIR [TARGET...]
#
# TARGET: c_abi, fortran, cblas, cublas_routing (default: all four).
# Options:
#   --seconds N   run each target N seconds (default 20, what CTest runs)
#   --runs N      stop a target after N inputs, whichever comes first (default: no limit)
#   --fork N      N parallel fuzzing processes per target (libFuzzer -fork), for long runs
#   --merge       afterwards, fold what the run found into the committed seed corpus (minimised)
# New inputs go to FUZZER_DIR/corpus/TARGET (kept between runs), findings to
# FUZZER_DIR/findings/TARGET-*; replay one with `FUZZER_DIR/xgemv_fuzz_TARGET <file>`.
# Exit status: 0 no findings, 1 a finding or an error, 77 no target built (no clang++ with
# libFuzzer).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=20 runs=-1 fork=0 merge=0
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --fork) fork=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    -h | --help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 1 ;;
    *) break ;;
  esac
done
(($# >= 1)) || { echo "usage: fuzz.sh [options] FUZZER_DIR [TARGET...]" >&2; exit 1; }
fuzzer_dir=$(cd "$1" 2>/dev/null && pwd) || fuzzer_dir=$1
shift
targets=("$@")
((${#targets[@]})) || targets=(c_abi fortran cblas cublas_routing)

status=0 ran=0
for target in "${targets[@]}"; do
  binary=$fuzzer_dir/xgemv_fuzz_$target
  if [[ ! -x $binary ]]; then
    echo "SKIPPED: fuzz $target: $binary not built (CMake found no clang++ with libFuzzer)"
    continue
  fi
  seeds=$here/fuzz/corpus/$target
  corpus=$fuzzer_dir/corpus/$target
  findings=$fuzzer_dir/findings
  log=$fuzzer_dir/$target.log
  mkdir -p "$seeds" "$corpus" "$findings"
  options=(-max_total_time="$seconds" -runs="$runs" -print_final_stats=1
    -artifact_prefix="$findings/$target-")
  ((fork > 0)) && options+=(-fork="$fork")
  ran=1
  # The first corpus directory receives what the run finds; the seeds are only read.
  if "$binary" "${options[@]}" "$corpus" "$seeds" >"$log" 2>&1; then
    # -fork runs print no final stats: their last "#N ... DONE" line counts then.
    executions=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -n 1)
    [[ -n $executions ]] ||
      executions=$(sed -nE 's/^#([0-9]+)[[:space:]]+DONE.*/\1/p' "$log" | tail -n 1)
    inputs=$(find "$corpus" "$seeds" -type f | wc -l)
    echo "fuzz $target: ${executions:-?} executions in ${seconds} s, corpus $inputs inputs" \
      "($(find "$seeds" -type f | wc -l) committed seeds), no findings"
  else
    status=1
    echo "FAILED: fuzz $target: a finding or an error; log $log:"
    grep -E 'expectation failed|ERROR|runtime error|SUMMARY|Test unit written' "$log" | head -n 8
  fi
  if ((merge)); then
    "$binary" -merge=1 "$seeds" "$corpus" >"$fuzzer_dir/$target.merge.log" 2>&1
    echo "fuzz $target: seed corpus now $(find "$seeds" -type f | wc -l) inputs"
  fi
done
((ran)) || exit 77
exit "$status"
