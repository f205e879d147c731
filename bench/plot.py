#!/usr/bin/env python3
"""Charts of a bench run from its records: results.json of xgemv-bench or xgemv-nccl-bench, with
the records of triton-seed.json and torch-decode.json where they lie beside it. chart-<suite>.png:
per dtype, the GB/s of every library per case (one vector) with the same run's bound as a line,
and the speed-up over the reference. chart-nrhs-<suite>.png where cases ran on several vectors:
per dtype, every library's time(nrhs)/time(1) against nrhs, its geo-mean, and the targets.

    python3 bench/plot.py llm

Without matplotlib it prints one line and exits 0.
"""
import argparse
import json
import math
import sys
from pathlib import Path

BOUNDS = ("ceiling", "one-read")


def load(folder):
    """The records of every record file in the folder, and the targets results.json declares."""
    records, targets = [], []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict):
            records += data.get("records", [])
            targets += data.get("targets", [])
    return records, targets


def unique(values):
    return list(dict.fromkeys(values))


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def plot_bandwidth(top, bottom, records, title):
    """GB/s bars per library and case, the bound as a line; the speed-up bars below."""
    cases = unique(r["case"] for r in records)
    libraries = unique(r["lib"] for r in records if r["lib"] not in BOUNDS)
    width = 0.8 / max(1, len(libraries))
    for index, library in enumerate(libraries):
        mine = [r for r in records if r["lib"] == library and r["GBps"]]
        xs = [cases.index(r["case"]) + (index - (len(libraries) - 1) / 2) * width for r in mine]
        top.bar(xs, [r["GBps"] for r in mine], width, label=library)
        speedups = [(x, r["speedup"]) for x, r in zip(xs, mine) if r["speedup"]]
        if speedups:
            bottom.bar([x for x, _ in speedups], [s for _, s in speedups], width, label=library)
    bound = {}
    for r in records:
        if r["bound_GBps"]:
            bound[r["case"]] = max(bound.get(r["case"], 0), r["bound_GBps"])
    if bound:
        top.plot([cases.index(case) for case in bound], list(bound.values()), "k_",
                 markersize=14, label="bound (same run)")
    for axis in (top, bottom):
        axis.set_xticks(range(len(cases)))
        axis.set_xticklabels(cases, rotation=60, ha="right", fontsize=7)
        axis.grid(axis="y", alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=7, ncol=3)
    top.set_ylabel("GB/s")
    top.set_title(f"{title}: bandwidth (the bytes a call moves once)")
    bottom.axhline(1.0, color="k", linewidth=0.8)
    bottom.set_yscale("log")
    bottom.set_ylabel("speed-up")
    bottom.set_title(f"{title}: speed-up over the reference (log scale)")


def plot_nrhs(axis, records, targets, title):
    """time(nrhs)/time(1) of every library and case (thin), its geo-mean (bold), the targets."""
    import matplotlib.pyplot as plt

    colours = plt.get_cmap("tab10")
    for index, library in enumerate(unique(r["lib"] for r in records)):
        mine = [r for r in records if r["lib"] == library]
        family = lambda r: (r["tag"], r["op"], r["m"], r["n"], r["layout"])
        for key in unique(map(family, mine)):
            points = sorted((r["nrhs"], r["t_over_t1"]) for r in mine if family(r) == key)
            axis.plot(*zip(*points), color=colours(index), linewidth=0.5, alpha=0.4)
        counts = sorted({r["nrhs"] for r in mine})
        axis.plot(counts, [geomean([r["t_over_t1"] for r in mine if r["nrhs"] == n])
                           for n in counts], color=colours(index), linewidth=2.5, marker="o",
                  label=f"{library}: geo-mean")
    for target in targets:
        low, high = target["nrhs"]
        axis.hlines(target["threshold"], low, high, colors="tab:red", linewidth=1.5)
    axis.set_xscale("log", base=2)
    axis.set_xlabel("nrhs (vectors)")
    axis.set_ylabel("time(nrhs) / time(1)")
    axis.set_title(f"{title}: time(nrhs) / time(1) (red: the targets)")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)


def save(plt, figure, path):
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", type=Path, help="a bench's --out-dir")
    args = parser.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: skipped (matplotlib is not installed)")
        return 0
    records, targets = load(args.results_dir)
    timed = [r for r in records if r.get("us")]
    if not timed:
        print(f"plot.py: no timed records in {args.results_dir}")
        return 0
    for suite in unique(r["suite"] for r in timed):
        mine = [r for r in timed if r["suite"] == suite]
        one = [r for r in mine if r["nrhs"] == 1]
        dtypes = unique(r["dtype"] for r in one)
        if dtypes:
            width = max(8.0, 0.5 * len(unique(r["case"] for r in one)) / len(dtypes) + 3)
            figure, axes = plt.subplots(2 * len(dtypes), 1, squeeze=False,
                                        figsize=(width, 9.0 * len(dtypes)))
            for index, dtype in enumerate(dtypes):
                plot_bandwidth(axes[2 * index][0], axes[2 * index + 1][0],
                               [r for r in one if r["dtype"] == dtype], f"{suite} {dtype}")
            save(plt, figure, args.results_dir / f"chart-{suite}.png")
        swept = [r for r in mine if r.get("t_over_t1") and r["lib"] not in BOUNDS]
        dtypes = unique(r["dtype"] for r in swept)
        if dtypes:
            bounds = [t for t in targets if t["metric"] == "t_over_t1" and suite in t["suites"]]
            figure, axes = plt.subplots(len(dtypes), 1, squeeze=False,
                                        figsize=(10.0, 6.0 * len(dtypes)))
            for index, dtype in enumerate(dtypes):
                plot_nrhs(axes[index][0], [r for r in swept if r["dtype"] == dtype], bounds,
                          f"{suite} {dtype}")
            save(plt, figure, args.results_dir / f"chart-nrhs-{suite}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
