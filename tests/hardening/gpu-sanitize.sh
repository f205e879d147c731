#!/usr/bin/env bash
# Runs every GPU test program of a build (label gpu: core, interface, hardening) under
# compute-sanitizer with the reduced test profile (XGEMV_TEST_PROFILE=sanitizer), once per tool,
# and prints one summary line per tool. The benchmark's tests (label bench) are left out: they
# time host BLAS and the third-party Triton seed, not xgemv's code paths.
#
#   tests/hardening/gpu-sanitize.sh [options] BUILD_DIR
#     --tools LIST    comma-separated (default memcheck,racecheck,initcheck,synccheck)
#     -R REGEX        only the tests whose name matches (ctest -R)
#     -j N            programs under the sanitizer at once (default 4); the tool's host-side
#                     work, not the GPU, is what limits a run
#     --timeout S     seconds per program and tool (default 300)
#
# Each program runs as CTest runs it (command, arguments, working directory and environment
# from `ctest --show-only=json-v1`). Logs: $OUT/sanitize/TOOL/TEST.log when OUT is set, else
# BUILD_DIR/sanitize/TOOL/TEST.log. Exit status 0 only when no tool found anything and no
# program failed.
set -uo pipefail
tools=memcheck,racecheck,initcheck,synccheck regex="" timeout=300 parallel=4
while (($#)); do
  case $1 in
    --tools) tools=$2; shift 2 ;;
    -R) regex=$2; shift 2 ;;
    -j) parallel=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    -h | --help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "gpu-sanitize.sh: unknown option $1" >&2; exit 1 ;;
    *) break ;;
  esac
done
(($# == 1)) || { echo "usage: gpu-sanitize.sh [options] BUILD_DIR" >&2; exit 1; }
build=$(cd "$1" && pwd) || exit 1
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found" >&2; exit 1; }
log_root=${OUT:+$OUT/sanitize}
log_root=${log_root:-$build/sanitize}

# One line per test: name, working directory, skip return code, the command as shell words
# (with `env VAR=value ...` in front for the test's ENVIRONMENT).
list_tests() {
  ctest --test-dir "$build" --show-only=json-v1 -L gpu -LE bench ${regex:+-R "$regex"} | python3 -c '
import json, shlex, sys
for test in json.load(sys.stdin)["tests"]:
    properties = {p["name"]: p["value"] for p in test.get("properties", [])}
    environment = properties.get("ENVIRONMENT", [])
    command = (["env", *environment] if environment else []) + test["command"]
    print(test["name"], properties.get("WORKING_DIRECTORY", "."),
          properties.get("SKIP_RETURN_CODE", 77), shlex.join(command), sep="\t")
'
}
mapfile -t tests < <(list_tests)
((${#tests[@]})) || { echo "no GPU tests found in $build" >&2; exit 1; }

export XGEMV_TEST_PROFILE=sanitizer
# Device memory still allocated at exit counts as an error too.
declare -A tool_options=([memcheck]="--leak-check full")
# One program under one tool; the log ends with a line "status N" (its exit status).
sanitize_one() {
  local tool=$1 workdir=$2 command=$3 log=$4
  (cd "$workdir" && eval "timeout $timeout compute-sanitizer --tool $tool ${tool_options[$tool]:-} \
    --print-limit 20 $command") >"$log" 2>&1
  echo "status $?" >>"$log"
}

IFS=, read -r -a tool_list <<<"$tools"
for tool in "${tool_list[@]}"; do
  mkdir -p "$log_root/$tool"
  for line in "${tests[@]}"; do
    IFS=$'\t' read -r name workdir skip_code command <<<"$line"
    while (($(jobs -rp | wc -l) >= parallel)); do wait -n; done
    sanitize_one "$tool" "$workdir" "$command" "$log_root/$tool/$name.log" &
  done
done
wait

overall=0
summary=()
for tool in "${tool_list[@]}"; do
  findings=0 ran=0 skipped=0 failed=() flagged=()
  for line in "${tests[@]}"; do
    IFS=$'\t' read -r name workdir skip_code command <<<"$line"
    log=$log_root/$tool/$name.log
    status=$(sed -nE 's/^status ([0-9]+)$/\1/p' "$log" | tail -n 1)
    errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
    hazards=$(sed -nE 's/.*RACECHECK SUMMARY: .*\(([0-9]+) errors?, ([0-9]+) warnings?\).*/\1 \2/p' "$log" |
      awk '{s += $1 + $2} END {print s + 0}')
    ((errors += hazards))
    if [[ $status == "$skip_code" ]]; then
      ((skipped += 1))
    else
      ((ran += 1))
      [[ $status == 0 ]] || failed+=("$name($([[ $status == 124 ]] && echo timeout || echo "exit ${status:-?}"))")
    fi
    if ((errors > 0)); then
      flagged+=("$name:$errors")
      ((findings += errors))
    fi
  done
  line="$tool: $findings errors in $ran programs ($skipped skipped)"
  ((${#flagged[@]})) && line+="; errors in ${flagged[*]}"
  ((${#failed[@]})) && line+="; failed: ${failed[*]}"
  ((findings == 0 && ${#failed[@]} == 0)) || overall=1
  summary+=("$line")
done

echo
echo "==================== compute-sanitizer (XGEMV_TEST_PROFILE=sanitizer) ===================="
printf '%s\n' "${summary[@]}"
echo "logs: $log_root"
exit "$overall"
