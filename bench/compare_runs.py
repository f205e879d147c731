#!/usr/bin/env python3
"""xgemv's time per case in xgemv-bench runs of the same cases (a baseline build and a new one,
same device, same session): the geometric mean of new/base time per suite and dtype, and every
case more than a threshold slower. The xgemv and xgemv-nrhs records of results.json count (or
those of --libs), each case at each nrhs. Run the builds back to back in one session
(bench/ab.sh does, alternating their order): the ratios are of raw times (normalising by each
run's ceiling would also count changes of the bench itself). Either side may be several runs
of its build (comma-separated directories): a case's time is then its median over them, or with
`--over fastest` its fastest run. The fastest suits few runs on a shared machine: something else
on the GPU slows a whole run of a case (its ceiling too), never speeds it up, and with two runs a
side the median is their mean, so one disturbed run moves it by half the disturbance.

    python3 bench/compare_runs.py BASE_DIR[,DIR...] NEW_DIR[,DIR...] [--over median|fastest]
        [--slower 1.05] [--cases]

--cases adds a table of every case: the two times, their ratio and the % of the stream read
(of each side's runs, the median, or with --over fastest the highest). A case the base timed in
all its runs and the new build did not in all of its (a failed check, a case left out) is
listed. Exits 1 when the geometric mean is more than 1% slower, a case is more than the
threshold slower or such a case is listed; 2 when a run cannot be read.
"""
import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

KEY_FIELDS = ("suite", "dtype", "case", "nrhs", "lda", "incx", "incy", "lib")


def load(results_dir, libs):
    """{key: (us, pct_bound)} of the timed records of `libs` in one run."""
    records = json.loads((Path(results_dir) / "results.json").read_text())["records"]
    return {tuple(r.get(f) for f in KEY_FIELDS): (r["us"], r.get("pct_bound"))
            for r in records if r["us"] and r["lib"] in libs}


def load_side(dirs, libs, over):
    """{key: (us, % of the bound or None)} over the runs of one build, the cases every run timed:
    the medians, or (over == "fastest") the least time and the highest % of the bound."""
    runs = [load(d, libs) for d in dirs]
    common = set.intersection(*(set(run) for run in runs))
    least, most = (statistics.median, statistics.median) if over == "median" else (min, max)
    side = {}
    for key in common:
        times = [run[key][0] for run in runs]
        bounds = [run[key][1] for run in runs if run[key][1] is not None]
        side[key] = (least(times), most(bounds) if bounds else None)
    return side


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def label(key):
    """A case as the listings name it."""
    fields = dict(zip(KEY_FIELDS, key))
    return (f"{fields['suite']} {fields['case']} nrhs={fields['nrhs']} lda={fields['lda']} "
            f"incx={fields['incx']} incy={fields['incy']} {fields['lib']}")


def percent(value):
    return "-" if value is None else f"{value:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the baseline's results directories, comma-separated")
    parser.add_argument("new", help="the new build's results directories, comma-separated")
    parser.add_argument("--slower", type=float, default=1.05,
                        help="a case whose new/base time ratio exceeds this is listed")
    parser.add_argument("--libs", default="xgemv,xgemv-nrhs",
                        help="the libraries whose records are compared (comma-separated)")
    parser.add_argument("--over", choices=("median", "fastest"), default="median",
                        help="a case's time over a side's runs: their median or the fastest")
    parser.add_argument("--cases", action="store_true", help="list every case")
    args = parser.parse_args()
    libs = set(args.libs.split(","))
    try:
        base = load_side(args.base.split(","), libs, args.over)
        new = load_side(args.new.split(","), libs, args.over)
    except (OSError, ValueError, KeyError) as error:
        print(f"compare_runs: cannot read a run: {error}")
        return 2
    common = sorted(base.keys() & new.keys(), key=lambda k: tuple(map(str, k)))
    if not common:
        print("compare_runs: no case in common")
        return 1
    # A case the base timed and the new build did not failed its check there (or did not run).
    untimed = sorted(base.keys() - new.keys(), key=lambda k: tuple(map(str, k)))
    ratios = {key: new[key][0] / base[key][0] for key in common}
    over = "medians" if args.over == "median" else "fastest"
    runs = f"{len(args.base.split(','))} and {len(args.new.split(','))} run(s), {over}"
    if args.cases:
        print("| case | lib | base us | new us | new/base | % bound base -> new |")
        print("|---|---|---:|---:|---:|---:|")
        for key in common:
            fields = dict(zip(KEY_FIELDS, key))
            nrhs = f" nrhs {fields['nrhs']}" if fields["nrhs"] not in (None, 1) else ""
            print(f"| {fields['suite']} {fields['case']}{nrhs} | {fields['lib']} | "
                  f"{base[key][0]:.2f} | {new[key][0]:.2f} | {ratios[key]:.3f} | "
                  f"{percent(base[key][1])} -> {percent(new[key][1])} |")
        print()
    groups = defaultdict(list)
    for key, ratio in ratios.items():
        groups[key[:2]].append(ratio)
        groups[("all", "all")].append(ratio)
    print("| suite | dtype | cases | new/base time (geo-mean) | best | worst |")
    print("|---|---|---:|---:|---:|---:|")
    for (suite, dtype), values in sorted(groups.items()):
        print(f"| {suite} | {dtype} | {len(values)} | {geomean(values):.4f} | {min(values):.3f} | "
              f"{max(values):.3f} |")
    overall = geomean(list(ratios.values()))
    slower = sorted(((r, k) for k, r in ratios.items() if r > args.slower), reverse=True)
    for ratio, key in slower:
        print(f"slower: {ratio:.3f}x {label(key)}")
    for key in untimed:
        print(f"not timed in the new runs (failed its check or did not run): {label(key)}")
    print(f"compare: geo-mean new/base {overall:.4f} over {len(ratios)} cases ({runs}), "
          f"{len(slower)} case(s) more than {args.slower:.2f}x slower"
          + (f", {len(untimed)} not timed in the new runs" if untimed else ""))
    return 0 if overall <= 1.01 and not slower and not untimed else 1


if __name__ == "__main__":
    sys.exit(main())
