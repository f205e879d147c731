#!/usr/bin/env python3
"""xgemv's time per case in two xgemv-bench runs of the same cases (a baseline build and a new
one, same device, same session): the geometric mean of new/base time per suite and dtype, and
every case more than a threshold slower. The xgemv rows count, and with --nrhs the xgemv-nrhs
rows, each case at each nrhs. Run the two back to back in one session: the ratios are
of raw times (normalising by each run's ceiling would also count changes of the bench itself).

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


XGEMV_LIBRARIES = ("xgemv", "xgemv-nrhs")


def load(results_dir):
    """{case key: xgemv us} of a run's results.csv (a run from before --nrhs: one vector)."""
    xgemv = {}
    with open(Path(results_dir) / "results.csv", newline="") as file:
        for row in csv.DictReader(file):
            if row["us"] and row["lib"] in XGEMV_LIBRARIES:
                key = (row["suite"], row["dtype"], row["op"], row["m"], row["n"],
                       row.get("nrhs", "1"), row["lda"], row["incx"], row["incy"], row["tag"],
                       row["lib"])
                xgemv[key] = float(row["us"])
    return xgemv


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
        ratios[key] = new[key] / base[key]
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
        suite, dtype, op, m, n, nrhs, lda, incx, incy, tag, lib = key
        print(f"slower: {ratio:.3f}x {suite} {dtype} {op} {m}x{n} nrhs={nrhs} lda={lda} {tag} "
              f"{lib}")
    print(f"compare: geo-mean new/base {overall:.4f} over {len(ratios)} cases, "
          f"{len(slower)} case(s) more than {args.slower:.2f}x slower")
    return 0 if overall <= 1.01 and not slower else 1


if __name__ == "__main__":
    sys.exit(main())
