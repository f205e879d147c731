#!/usr/bin/env python3
"""Charts of an xgemv-bench run: per suite, for each dtype, the bandwidth of every library per
shape with the stream-read ceiling as a line, and the speed-up over cuBLAS (the fastest cuBLAS
function of each case). Writes chart-<suite>.png into the results folder.

    python3 bench/plot.py llm    # llm/results.csv, plus llm/triton-seed.csv when present

Without matplotlib it prints one line and exits 0.
"""
import argparse
import csv
import math
import sys
from pathlib import Path

RESULT_FILES = ("results.csv", "triton-seed.csv")
LIBRARY_ORDER = ("xgemv", "cublas", "cublas-gemmex", "triton-seed", "openblas")


def load_rows(results_dir):
    """Timed rows of every result file of the folder."""
    rows = []
    for name in RESULT_FILES:
        path = results_dir / name
        if path.exists():
            with open(path, newline="") as file:
                rows.extend(row for row in csv.DictReader(file) if row["GBps"])
    return rows


def unique(values):
    return list(dict.fromkeys(values))


def number(text):
    return float(text) if text else math.nan


def plot_dtype(axis_bandwidth, axis_speedup, rows, title):
    cases = unique((r["op"], r["m"], r["n"], r["tag"]) for r in rows)
    position = {case: i for i, case in enumerate(cases)}
    libraries = sorted(unique(r["lib"] for r in rows if r["lib"] != "ceiling"),
                       key=lambda lib: (LIBRARY_ORDER + (lib,)).index(lib))
    width = 0.8 / max(1, len(libraries))
    compared = False  # any speed-up over cuBLAS (none in a run without a GPU)
    for index, library in enumerate(libraries):
        mine = [r for r in rows if r["lib"] == library]
        offset = (index - (len(libraries) - 1) / 2) * width
        xs = [position[(r["op"], r["m"], r["n"], r["tag"])] + offset for r in mine]
        axis_bandwidth.bar(xs, [number(r["GBps"]) for r in mine], width, label=library)
        speedups = [(x, number(r["speedup_vs_cublas"])) for x, r in zip(xs, mine)]
        speedups = [(x, s) for x, s in speedups if not math.isnan(s)]
        if speedups:
            compared = True
            axis_speedup.bar([x for x, _ in speedups], [s for _, s in speedups], width,
                             label=library)
    ceiling = sorted((position[(r["op"], r["m"], r["n"], r["tag"])], number(r["GBps"]))
                     for r in rows if r["lib"] == "ceiling")
    if ceiling:
        axis_bandwidth.plot([x for x, _ in ceiling], [g for _, g in ceiling], "k-", marker="_",
                            markersize=14, label="ceiling (stream read, same bytes)")
    labels = [f"{tag}\n{op} {m}x{n}" for op, m, n, tag in cases]
    for axis in (axis_bandwidth, axis_speedup):
        axis.set_xticks(range(len(cases)))
        axis.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        axis.grid(axis="y", alpha=0.3)
    axis_bandwidth.set_ylabel("GB/s")
    axis_bandwidth.set_title(f"{title}: bandwidth (A + x + y once)")
    axis_bandwidth.legend(fontsize=7, ncol=3)
    axis_speedup.axhline(1.0, color="k", linewidth=0.8)
    axis_speedup.set_yscale("log")
    axis_speedup.set_ylabel("speed-up over cuBLAS")
    axis_speedup.set_title(f"{title}: speed-up over the fastest cuBLAS function (log scale)")
    if compared:
        axis_speedup.legend(fontsize=7, ncol=3)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", type=Path, help="an xgemv-bench --out-dir")
    args = parser.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: skipped (matplotlib is not installed)")
        return 0
    rows = load_rows(args.results_dir)
    if not rows:
        print(f"plot.py: no timed rows in {args.results_dir}")
        return 0
    for suite in unique(r["suite"] for r in rows):
        in_suite = [r for r in rows if r["suite"] == suite]
        dtypes = unique(r["dtype"] for r in in_suite)
        shapes = max(len(unique((r["op"], r["m"], r["n"], r["tag"]) for r in in_suite
                                if r["dtype"] == d)) for d in dtypes)
        figure, axes = plt.subplots(2 * len(dtypes), 1, squeeze=False,
                                    figsize=(max(8.0, 0.5 * shapes + 3), 9.0 * len(dtypes)))
        for index, dtype in enumerate(dtypes):
            plot_dtype(axes[2 * index][0], axes[2 * index + 1][0],
                       [r for r in in_suite if r["dtype"] == dtype], f"{suite} {dtype}")
        device, commit = in_suite[0]["device"], in_suite[0]["commit"]
        figure.suptitle(f"xgemv-bench {suite} on {device}, commit {commit}")
        figure.tight_layout(rect=(0, 0, 1, 0.985))
        out = args.results_dir / f"chart-{suite}.png"
        figure.savefig(out, dpi=100)
        plt.close(figure)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
