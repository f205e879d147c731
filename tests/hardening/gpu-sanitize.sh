#!/usr/bin/env bash
# Runs every GPU test program of a build (label gpu: core, interface, hardening) under
# compute-sanitizer with the reduced test profile (XGEMV_TEST_PROFILE=sanitizer), once per tool,
# and prints one summary line per tool. Left out: the benchmark's tests (label bench: they time
# host BLAS and the third-party Triton seed) and tests labelled sanitizer-skip (programs that run
# no xgemv GPU code, such as the drop-in test without the drop-in).
#
#   tests/hardening/gpu-sanitize.sh [options] BUILD_DIR
#     --tools LIST    comma-separated (default memcheck,racecheck,initcheck,synccheck)
#     -R REGEX        only the tests whose name matches (ctest -R)
#     -j N            programs under the sanitizer at once (default 4); the tool's host-side
#                     work, not the GPU, is what limits a run
#     --timeout S     seconds per program (per shard) and tool (default 300)
#     --shards N      each GoogleTest program runs as N processes under each tool, each a
#                     shard of its tests (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX; default 1):
#                     the long correctness tables then spread over the -j slots
#
# What counts: initcheck and synccheck check xgemv's kernels (every kernel whose name contains
# "xgemv": the library's and the tests' own), not cuBLAS's or PyTorch's, which the tests call as
# references and the drop-in forwards to. memcheck and racecheck check every kernel (memcheck
# missed a planted out-of-bounds read with the filter; racecheck fails on filtered-out cuBLAS
# kernels); their reports are sorted by kernel name. Host-side reports (CUDA API errors, memory
# left allocated at exit) are sorted by the code they come from (sanitizer_findings.py). A
# finding is a report in xgemv's code; reports from inside cuBLAS, NCCL or PyTorch are counted apart.
# Tests labelled sanitizer-third-party-host (PyTorch's programs: its caching allocator keeps its
# segments, and its cuBLAS handles the drop-in's workspaces, to exit) run memcheck without the
# leak check and are left out of initcheck: with the filter, inputs written by PyTorch's
# unchecked kernels look uninitialised to it, and without it cuBLAS's own kernels give it tens of
# thousands of reports.
# A self-check first plants an out-of-bounds read (memcheck) and an uninitialised read
# (initcheck) in xgemv's kernel (hardening_sanitizer_canary): if the tool does not report it,
# the run fails.
#
# Each finished program (or shard) prints a line as it finishes ("memcheck core.gpu_api.shard-0:
# status 0 after 6 s, 0 findings in xgemv's code"), so that a run stopped before its summary (by
# a time limit on the command) still says what it found. A full run takes more than ten minutes
# on one H200; where commands are limited to that, run one tool per command (--tools memcheck,
# ...) on the same build.
#
# Each program runs as CTest runs it (command, arguments, working directory and environment
# from `ctest --show-only=json-v1`). Logs: $OUT/sanitize/TOOL/TEST.log when OUT is set, else
# BUILD_DIR/sanitize/TOOL/TEST.log (TEST.shard-I.log for shard I), each ending with
# "status N after S s". Exit status 0 only when the self-check passed, no tool found anything in
# xgemv's code and no program failed.
set -uo pipefail
tools=memcheck,racecheck,initcheck,synccheck regex="" timeout=300 parallel=4 shards=1
while (($#)); do
  case $1 in
    --tools) tools=$2; shift 2 ;;
    -R) regex=$2; shift 2 ;;
    -j) parallel=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    -h | --help) sed -n '2,43s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "gpu-sanitize.sh: unknown option $1" >&2; exit 1 ;;
    *) break ;;
  esac
done
(($# == 1)) || { echo "usage: gpu-sanitize.sh [options] BUILD_DIR" >&2; exit 1; }
build=$(cd "$1" && pwd) || exit 1
here=$(cd "$(dirname "$0")" && pwd)
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found" >&2; exit 1; }
log_root=${OUT:+$OUT/sanitize}
log_root=${log_root:-$build/sanitize}

# One line per test: name, working directory, skip return code, labels (comma-separated), its
# shard count (1 unless it is a GoogleTest program: its executable knows --gtest_list_tests), the
# command as shell words (with `env VAR=value ...` in front for the test's ENVIRONMENT).
list_tests() {
  ctest --test-dir "$build" --show-only=json-v1 -L gpu -LE "bench|sanitizer-skip" ${regex:+-R "$regex"} | python3 -c '
import json, shlex, sys
shards = int(sys.argv[1])
def is_gtest(executable):
    try:
        with open(executable, "rb") as f:
            return b"gtest_list_tests" in f.read()
    except OSError:
        return False
for test in json.load(sys.stdin)["tests"]:
    properties = {p["name"]: p["value"] for p in test.get("properties", [])}
    environment = properties.get("ENVIRONMENT", [])
    command = (["env", *environment] if environment else []) + test["command"]
    print(test["name"], properties.get("WORKING_DIRECTORY", "."),
          properties.get("SKIP_RETURN_CODE", 77), ",".join(properties.get("LABELS", [])),
          shards if is_gtest(test["command"][0]) else 1, shlex.join(command), sep="\t")
' "$shards"
}
mapfile -t tests < <(list_tests)
((${#tests[@]})) || { echo "no GPU tests found in $build" >&2; exit 1; }
canary=$build/tests/hardening/hardening_sanitizer_canary
[[ -x $canary ]] || { echo "$canary not built" >&2; exit 1; }

export XGEMV_TEST_PROFILE=sanitizer
# One program (or shard: "I/N", else "") under one tool; the log ends with "status N after S s"
# (exit status, seconds).
sanitize_one() {
  local tool=$1 labels=$2 workdir=$3 command=$4 log=$5 shard=${6:-}
  local options="--print-limit 10000"
  [[ $tool == initcheck || $tool == synccheck ]] && options+=" --kernel-name kns=xgemv"
  if [[ ,$labels, == *,sanitizer-third-party-host,* ]]; then
    if [[ $tool == initcheck ]]; then
      echo "left out: PyTorch's kernels write its inputs (see gpu-sanitize.sh)" >"$log"
      echo "status left-out" >>"$log"
      return
    fi
  elif [[ $tool == memcheck ]]; then
    options+=" --leak-check full"  # device memory still allocated at exit is a finding too
  fi
  local start=$SECONDS sharding=""
  [[ -n $shard ]] && sharding="env GTEST_SHARD_INDEX=${shard%/*} GTEST_TOTAL_SHARDS=${shard#*/}"
  (cd "$workdir" &&
    eval "$sharding timeout $timeout compute-sanitizer --tool $tool $options $command") >"$log" 2>&1
  echo "status $? after $((SECONDS - start)) s" >>"$log"
  # A line as each program (or shard) finishes: a run stopped before its summary still says
  # what it found.
  local mine theirs
  read -r mine theirs < <(python3 "$here/sanitizer_findings.py" "$log")
  local shown=${log#"$log_root/$tool/"}
  echo "$tool ${shown%.log}: $(tail -n 1 "$log"), $mine findings in xgemv's code"
}

IFS=, read -r -a tool_list <<<"$tools"
declare -A planted=([memcheck]=out-of-bounds [initcheck]=uninitialized)
launch() {
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n; done
  sanitize_one "$@" &
}
for tool in "${tool_list[@]}"; do
  mkdir -p "$log_root/$tool"
  [[ -n ${planted[$tool]:-} ]] &&
    launch "$tool" "" . "$(printf %q "$canary") ${planted[$tool]}" "$log_root/$tool/self-check.log"
done
# The logs of one test under one tool: one, or one per shard.
logs_of() {
  local tool=$1 name=$2 count=$3 i
  if ((count == 1)); then echo "$log_root/$tool/$name.log"; return; fi
  for ((i = 0; i < count; ++i)); do echo "$log_root/$tool/$name.shard-$i.log"; done
}
# Program by program, every tool at once: the longest program (core.gpu_correctness, listed
# first) then starts under all four tools at the beginning instead of one tool at a time.
for line in "${tests[@]}"; do
  IFS=$'\t' read -r name workdir skip_code labels count command <<<"$line"
  for tool in "${tool_list[@]}"; do
    i=0
    while read -r log; do
      launch "$tool" "$labels" "$workdir" "$command" "$log" "$( ((count > 1)) && echo "$i/$count")"
      ((i += 1))
    done < <(logs_of "$tool" "$name" "$count")
  done
done
wait

overall=0
summary=()
for tool in "${tool_list[@]}"; do
  findings=0 third_party=0 ran=0 skipped=0 failed=() flagged=() left_out=()
  for line in "${tests[@]}"; do
    IFS=$'\t' read -r name workdir skip_code labels count command <<<"$line"
    # A sharded program: skipped when every shard skipped, failed when one did.
    ours=0 statuses=()
    while read -r log; do
      status=$(sed -nE 's/^status ([0-9]+|left-out)( after .*)?$/\1/p' "$log" | tail -n 1)
      statuses+=("${status:-?}")
      read -r mine theirs < <(python3 "$here/sanitizer_findings.py" "$log")
      ((ours += mine, third_party += theirs))
    done < <(logs_of "$tool" "$name" "$count")
    status=""
    for shard_status in "${statuses[@]}"; do
      case $shard_status in
        left-out) status=left-out; break ;;
        "$skip_code") ;;
        0) status=0 ;;
        *) status=$shard_status; break ;;
      esac
    done
    status=${status:-$skip_code}
    if [[ $status == left-out ]]; then
      left_out+=("$name")
      continue
    fi
    if [[ $status == "$skip_code" ]]; then
      ((skipped += 1))
    else
      ((ran += 1))
      [[ $status == 0 ]] || failed+=("$name($([[ $status == 124 ]] && echo timeout || echo "exit $status"))")
    fi
    if ((ours > 0)); then
      flagged+=("$name:$ours")
      ((findings += ours))
    fi
  done
  line="$tool: $findings findings in xgemv's code, $ran programs ($skipped skipped)"
  ((third_party > 0)) && line+=", $third_party reports inside cuBLAS/NCCL/PyTorch"
  ((${#left_out[@]})) && line+=", left out ${left_out[*]}"
  if [[ -n ${planted[$tool]:-} ]]; then
    read -r caught _ < <(python3 "$here/sanitizer_findings.py" "$log_root/$tool/self-check.log")
    if ((caught > 0)); then
      line+=", self-check caught the planted ${planted[$tool]} read"
    else
      line+=", SELF-CHECK FAILED: the planted ${planted[$tool]} read was not reported"
      overall=1
    fi
  fi
  ((${#flagged[@]})) && line+="; findings in ${flagged[*]}"
  ((${#failed[@]})) && line+="; failed: ${failed[*]}"
  ((findings == 0 && ${#failed[@]} == 0)) || overall=1
  summary+=("$line")
done

echo
echo "==================== compute-sanitizer (XGEMV_TEST_PROFILE=sanitizer) ===================="
printf '%s\n' "${summary[@]}"
echo "logs: $log_root"
exit "$overall"
