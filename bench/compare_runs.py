#!/usr/bin/env python3
"""xgemv's time per case in two xgemv-bench runs of the same cases (a baseline build and a new
one, same device, same session): the geometric mean of new/base time per suite and dtype, and
every case more than a threshold slower. Times are normalised by each run's own ceiling for the
case (a stream read of the same bytes measured in the same run), so that drift of the device
between the two runs does not read as a change of xgemv.

    python3 bench/compare_runs.py BASE_DIR NEW_DIR [--slower 1.05]

Exits 1 when the geometric mean is more than 1% slower or a case is more than the threshold
slower.
"""
import argparse
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path


def load(results_dir):
    """{case key: (xgemv us, ceiling us)} of a run's results.csv."""
    xgemv, ceiling = {}, {}
    with open(Path(results_dir) / "results.csv", newline="") as file:
        for row in csv.DictReader(file):
            if not row["us"]:
                continue
            key = (row["suite"], row["dtype"], row["op"], row["m"], row["n"], row["lda"],
                   row["incx"], row["incy"], row["tag"])
            if row["lib"] == "xgemv":
                xgemv[key] = float(row["us"])
            elif row["lib"] == "ceiling":
                ceiling[key] = float(row["us"])
    return {key: (us, ceiling.get(key)) for key, us in xgemv.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--slower", type=float, default=1.05,
                        help="a case whose new/base time ratio exceeds this is listed")
    args = parser.parse_args()
    base, new = load(args.base), load(args.new)
    ratios = {}
    for key in base.keys() & new.keys():
        (base_us, base_ceiling), (new_us, new_ceiling) = base[key], new[key]
        drift = new_ceiling / base_ceiling if base_ceiling and new_ceiling else 1.0
        ratios[key] = new_us / base_us / drift
    if not ratios:
        print("compare_runs: no case in common")
        return 1
    groups = defaultdict(list)
    for key, ratio in ratios.items():
        groups[(key[0], key[1])].append(ratio)
        groups[("all", "all")].append(ratio)
    print("| suite | dtype | cases | new/base time (geo-mean) | worst |")
    print("|---|---|---:|---:|---:|")
    for (suite, dtype), values in sorted(groups.items()):
        geomean = math.exp(sum(map(math.log, values)) / len(values))
        print(f"| {suite} | {dtype} | {len(values)} | {geomean:.4f} | {max(values):.3f} |")
    overall = math.exp(sum(map(math.log, ratios.values())) / len(ratios))
    slower = sorted(((r, k) for k, r in ratios.items() if r > args.slower), reverse=True)
    for ratio, key in slower:
        suite, dtype, op, m, n, lda, incx, incy, tag = key
        print(f"slower: {ratio:.3f}x {suite} {dtype} {op} {m}x{n} lda={lda} {tag}")
    print(f"compare: geo-mean new/base {overall:.4f} over {len(ratios)} cases, "
          f"{len(slower)} case(s) more than {args.slower:.2f}x slower")
    return 0 if overall <= 1.01 and not slower else 1


if __name__ == "__main__":
    sys.exit(main())
