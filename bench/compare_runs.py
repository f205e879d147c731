#!/usr/bin/env python3
"""xgemv's time per case in two xgemv-bench runs of the same cases (a baseline build and a new
one, same device, same session): the geometric mean of new/base time per suite and dtype, and
every case more than a threshold slower. The xgemv and xgemv-nrhs records of results.json count,
each case at each nrhs. Run the two back to back in one session: the ratios are of raw times
(normalising by each run's ceiling would also count changes of the bench itself).

    python3 bench/compare_runs.py BASE_DIR NEW_DIR [--slower 1.05]

Exits 1 when the geometric mean is more than 1% slower or a case is more than the threshold
slower.
"""
import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path


def load(results_dir):
    """{(suite, dtype, case, lda, incx, incy, lib): us} of the xgemv records of a run."""
    records = json.loads((Path(results_dir) / "results.json").read_text())["records"]
    return {(r["suite"], r["dtype"], r["case"], r["lda"], r["incx"], r["incy"], r["lib"]): r["us"]
            for r in records if r["us"] and r["lib"] in ("xgemv", "xgemv-nrhs")}


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--slower", type=float, default=1.05,
                        help="a case whose new/base time ratio exceeds this is listed")
    args = parser.parse_args()
    base, new = load(args.base), load(args.new)
    ratios = {key: new[key] / base[key] for key in base.keys() & new.keys()}
    if not ratios:
        print("compare_runs: no case in common")
        return 1
    groups = defaultdict(list)
    for key, ratio in ratios.items():
        groups[key[:2]].append(ratio)
        groups[("all", "all")].append(ratio)
    print("| suite | dtype | cases | new/base time (geo-mean) | worst |")
    print("|---|---|---:|---:|---:|")
    for (suite, dtype), values in sorted(groups.items()):
        print(f"| {suite} | {dtype} | {len(values)} | {geomean(values):.4f} | {max(values):.3f} |")
    overall = geomean(list(ratios.values()))
    slower = sorted(((r, k) for k, r in ratios.items() if r > args.slower), reverse=True)
    for ratio, (suite, _, case, lda, incx, incy, lib) in slower:
        print(f"slower: {ratio:.3f}x {suite} {case} lda={lda} incx={incx} incy={incy} {lib}")
    print(f"compare: geo-mean new/base {overall:.4f} over {len(ratios)} cases, "
          f"{len(slower)} case(s) more than {args.slower:.2f}x slower")
    return 0 if overall <= 1.01 and not slower else 1


if __name__ == "__main__":
    sys.exit(main())
