#!/usr/bin/env bash
# Same-session A/B of libxgemv builds, from the repository root:
#
#   bash bench/ab.sh [--bench PATH] [--reps N] [--over fastest|median] [--out DIR] [--libs LIST] \
#       BASE_LIBDIR NEW_LIBDIR [NEW_LIBDIR...] -- XGEMV_BENCH_ARGUMENTS...
#
# One xgemv-bench (--bench, default build/bench/xgemv-bench) runs the same cases with each
# build's libxgemv in turn: LIBDIR is the directory of its libxgemv.so.0 (a build tree's src/),
# put ahead of the bench's own on LD_LIBRARY_PATH. Each of --reps repetitions (default 2) runs
# every build once, in reverse order every other time, so that a drift of the machine falls on
# all of them. Then bench/compare_runs.py compares each new build with the base on each case's
# fastest repetition (--over fastest, the default: another load on the GPU only ever slows a
# run, and the median of two repetitions is their mean) or on their median (--over median;
# --libs: the records compared, default xgemv,xgemv-nrhs). Runs go to
# OUT/<build>-<rep>/ (build 0 is the base), comparisons to OUT/compare-<build>.txt, and for each
# run the bench's --version and the libxgemv it loads (ldd) to OUT/versions.txt; OUT is --out,
# default build/ab-results. Pass the bench `--lib xgemv` (and --quick) unless the other
# libraries' rows are wanted too: the ceiling runs in any case.
#
# Exit status: 0; 1 when a new build is slower by compare_runs.py's rule; 2 on a usage error or
# when a run fails.
set -uo pipefail

usage() {
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" >&2
  exit 2
}

bench=build/bench/xgemv-bench reps=2 over=fastest out=build/ab-results libs=xgemv,xgemv-nrhs
libdirs=()
while (($#)); do
  case $1 in
    --bench | --reps | --over | --out | --libs)
      (($# >= 2)) || usage
      case $1 in
        --bench) bench=$2 ;;
        --reps) reps=$2 ;;
        --over) over=$2 ;;
        --out) out=$2 ;;
        --libs) libs=$2 ;;
      esac
      shift 2
      ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) libdirs+=("$1"); shift ;;
  esac
done
bench_arguments=("$@")
refuse() {
  echo "ab.sh: $*" >&2
  exit 2
}
[[ $reps =~ ^[1-9][0-9]*$ ]] || refuse "--reps takes a positive count, not '$reps'"
[[ $over == fastest || $over == median ]] || refuse "--over takes fastest or median, not '$over'"
((${#libdirs[@]} >= 2)) || refuse "give a base and at least one new LIBDIR"
[[ -x $bench ]] || refuse "no xgemv-bench at $bench (build it, or pass --bench)"
for dir in "${libdirs[@]}"; do
  [[ -e $dir/libxgemv.so.0 ]] || refuse "no libxgemv.so.0 in $dir"
done
mkdir -p "$out" && : > "$out/versions.txt"

# Build k of the repetition r: in order on odd repetitions, reversed on even ones.
run() {
  local k=$1 r=$2 path
  path="$(cd "${libdirs[k]}" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "ab.sh: repetition $r, build $k (${libdirs[k]})"
  {
    echo "build $k, repetition $r: $(LD_LIBRARY_PATH=$path "$bench" --version)"
    LD_LIBRARY_PATH=$path ldd "$bench" | grep libxgemv
  } >> "$out/versions.txt"
  LD_LIBRARY_PATH=$path "$bench" "${bench_arguments[@]}" --out-dir "$out/$k-$r" \
    > "$out/$k-$r.log" 2>&1
  local status=$?
  # The bench's 1 is a library failing its check: the comparison lists those cases and fails.
  if ((status > 1)); then
    echo "ab.sh: build $k, repetition $r: xgemv-bench exited $status (see $out/$k-$r.log)" >&2
    exit 2
  fi
}
for ((r = 1; r <= reps; ++r)); do
  if ((r % 2)); then
    for ((k = 0; k < ${#libdirs[@]}; ++k)); do run "$k" "$r"; done
  else
    for ((k = ${#libdirs[@]} - 1; k >= 0; --k)); do run "$k" "$r"; done
  fi
done

runs_of() {
  local k=$1 r dirs=()
  for ((r = 1; r <= reps; ++r)); do dirs+=("$out/$k-$r"); done
  (IFS=,; echo "${dirs[*]}")
}
status=0
for ((k = 1; k < ${#libdirs[@]}; ++k)); do
  echo "== build $k (${libdirs[k]}) against build 0 (${libdirs[0]})" | tee "$out/compare-$k.txt"
  python3 "$(dirname "$0")/compare_runs.py" "$(runs_of 0)" "$(runs_of "$k")" --libs "$libs" \
    --over "$over" --cases >> "$out/compare-$k.txt"
  result=$?
  sed -n '/^| suite /,$p' "$out/compare-$k.txt"
  ((result > status)) && status=$result
done
exit "$status"
