#!/usr/bin/env python3
"""Charts of an xgemv-bench run: per suite, for each dtype, the bandwidth of every library per
shape with the stream-read ceiling as a line, and the speed-up over cuBLAS (the fastest cuBLAS
function of each case). Writes chart-<suite>.png into the results folder. For a decode run
(decode.csv), chart-decode.png: per dtype, the ms per step of every library per model with the
one-read time as a line, and each library's share of the one-read time. These are of one vector
(nrhs 1). A run with --nrhs also gets chart-nrhs-<suite>.png (chart-decode-nrhs.png): per dtype,
the time of xgemv-nrhs and of the cuBLAS GEMM with the same columns against nrhs for every
problem, and each library's time(nrhs)/time(1) with its geometric mean and xgemv's targets.

    python3 bench/plot.py llm             # llm/results.csv, plus llm/triton-seed.csv when present
    python3 bench/plot.py decode-results  # decode.csv of xgemv-bench --suite decode

Without matplotlib it prints one line and exits 0.
"""
import argparse
import csv
import math
import sys
from pathlib import Path

RESULT_FILES = ("results.csv", "triton-seed.csv")
LIBRARY_ORDER = ("xgemv", "xgemv-nrhs", "cublas", "cublas-gemmex", "cublas-gemm", "triton-seed",
                 "openblas")
DECODE_FILE = "decode.csv"
# The decode rows drawn as bars; the one-read row is the line.
DECODE_BARS = ("xgemv", "xgemv-early-start", "xgemv-nrhs", "cublas", "cublas-gemmex",
               "per-gemv-reads")
# Few right-hand sides: xgemv's nrhs call beside cuBLAS's GEMM with the same columns
# (cublas-gemmex for fp16/bf16, cublas-gemm for fp32/fp64), and xgemv's targets of
# time(nrhs)/time(1): 1.10 up to nrhs 8, 1.25 up to 16.
XGEMV_NRHS = "xgemv-nrhs"
CUBLAS_GEMMS = ("cublas-gemmex", "cublas-gemm")
NRHS_TARGETS = ((2, 8, 1.10), (9, 16, 1.25))


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


def nrhs_of(row):
    """A row's nrhs (results from before --nrhs have none: one vector)."""
    return int(row.get("nrhs") or 1)


def nrhs_families(rows, family_of, time_column):
    """{family: {"xgemv" or "cublas": {nrhs: time}}} of the problems that ran with --nrhs."""
    swept = {family_of(r) for r in rows if nrhs_of(r) != 1 or r["lib"] == XGEMV_NRHS}
    families = {}
    for row in rows:
        family = family_of(row)
        if family not in swept or not row[time_column]:
            continue
        if row["lib"] == XGEMV_NRHS:
            library = "xgemv"
        elif row["lib"] in CUBLAS_GEMMS:
            library = "cublas"
        else:
            continue
        families.setdefault(family, {}).setdefault(library, {})[nrhs_of(row)] = \
            number(row[time_column])
    return families


def geomean(values):
    values = [v for v in values if v > 0 and not math.isnan(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def plot_nrhs_panels(axis_time, axis_ratio, families, unit, title):
    """Time vs nrhs per family (xgemv solid, cuBLAS dashed, one colour per family), and each
    library's time(nrhs)/time(1) with its geometric mean (bold) and xgemv's targets."""
    import matplotlib.pyplot as plt

    colours = plt.get_cmap("tab20")
    styles = {"xgemv": ("-", "xgemv-nrhs"), "cublas": ("--", "cuBLAS GEMM, same columns")}
    ratios = {library: {} for library in styles}
    for index, (family, libraries) in enumerate(families.items()):
        colour = colours(index % 20)
        for library, (style, _) in styles.items():
            times = libraries.get(library, {})
            if not times:
                continue
            xs = sorted(times)
            axis_time.plot(xs, [times[x] for x in xs], style, color=colour, marker=".",
                           linewidth=1, label=family if library == "xgemv" else None)
            if 1 in times:
                axis_ratio.plot(xs, [times[x] / times[1] for x in xs], style, color=colour,
                                linewidth=0.6, alpha=0.5)
                for x in xs:
                    ratios[library].setdefault(x, []).append(times[x] / times[1])
    for library, (style, label) in styles.items():
        xs = sorted(ratios[library])
        if xs:
            axis_ratio.plot(xs, [geomean(ratios[library][x]) for x in xs], style, color="k",
                            linewidth=2.5, marker="o", label=f"{label}: geo-mean")
    for low, high, bound in NRHS_TARGETS:
        axis_ratio.hlines(bound, low, high, colors="tab:red", linewidth=1.5)
    axis_ratio.plot([], [], color="tab:red", label="xgemv target (1.10x to nrhs 8, 1.25x to 16)")
    from matplotlib.ticker import NullLocator

    counts = sorted({x for libraries in families.values() for times in libraries.values()
                     for x in times})
    for axis in (axis_time, axis_ratio):
        axis.set_xscale("log", base=2)
        axis.set_xticks(counts)
        axis.set_xticklabels([str(x) for x in counts])
        axis.xaxis.set_minor_locator(NullLocator())
        axis.set_xlabel("nrhs (vectors)")
        axis.grid(alpha=0.3)
    axis_time.set_yscale("log")
    axis_time.set_ylabel(f"{unit} (log scale)")
    axis_time.set_title(f"{title}: time vs nrhs (solid: xgemv-nrhs, dashed: cuBLAS GEMM)")
    axis_time.legend(fontsize=6, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axis_ratio.set_ylabel("time(nrhs) / time(1)")
    axis_ratio.set_title(f"{title}: time(nrhs) / time(1) of each library")
    axis_ratio.legend(fontsize=7, loc="upper left")


def plot_nrhs(plt, out, title, panels, unit):
    """One chart of (title, families) panels, each a time and a ratio axis."""
    figure, axes = plt.subplots(2 * len(panels), 1, squeeze=False,
                                figsize=(12.0, 8.0 * len(panels)))
    for index, (panel_title, families) in enumerate(panels):
        plot_nrhs_panels(axes[2 * index][0], axes[2 * index + 1][0], families, unit, panel_title)
    figure.suptitle(title)
    figure.tight_layout(rect=(0, 0, 1, 0.985))
    figure.savefig(out, dpi=100)
    plt.close(figure)
    print(f"wrote {out}")


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


def load_decode_rows(results_dir):
    """Timed rows of the folder's decode.csv."""
    path = results_dir / DECODE_FILE
    if not path.exists():
        return []
    with open(path, newline="") as file:
        return [row for row in csv.DictReader(file) if row["ms"]]


def plot_decode_dtype(axis_ms, axis_share, rows, title):
    from matplotlib.ticker import ScalarFormatter

    models = unique(r["model"] for r in rows)
    position = {model: i for i, model in enumerate(models)}
    libraries = [lib for lib in DECODE_BARS if any(r["lib"] == lib for r in rows)]
    width = 0.8 / max(1, len(libraries))
    for index, library in enumerate(libraries):
        mine = [r for r in rows if r["lib"] == library]
        offset = (index - (len(libraries) - 1) / 2) * width
        xs = [position[r["model"]] + offset for r in mine]
        axis_ms.bar(xs, [number(r["ms"]) for r in mine], width, label=library)
        axis_share.bar(xs, [number(r["pct_one_read"]) for r in mine], width, label=library)
    # The one-read time of each model across its group of bars (models are not a series).
    one_read = [(position[r["model"]], number(r["ms"])) for r in rows if r["lib"] == "one-read"]
    if one_read:
        axis_ms.hlines([ms for _, ms in one_read], [x - 0.45 for x, _ in one_read],
                       [x + 0.45 for x, _ in one_read], colors="k", linewidth=2,
                       label="one read of all the step's weights")
    layers = {r["model"]: f'{r["layers"]}/{r["model_layers"]} layers' for r in rows}
    labels = [f"{model}\n{layers[model]}" for model in models]
    for axis in (axis_ms, axis_share):
        axis.set_xticks(range(len(models)))
        axis.set_xticklabels(labels, fontsize=8)
        axis.grid(axis="y", alpha=0.3)
        axis.legend(fontsize=7, ncol=6, loc="upper left")
    # Room above the bars for the legend's row.
    axis_ms.set_yscale("log")
    axis_ms.set_ylim(top=2.5 * max(number(r["ms"]) for r in rows))
    axis_ms.yaxis.set_major_formatter(ScalarFormatter())
    axis_ms.yaxis.set_minor_formatter(ScalarFormatter())
    axis_ms.tick_params(axis="y", which="minor", labelsize=7)
    axis_share.set_ylim(0, 125)
    axis_ms.set_ylabel("ms per decode step (log scale)")
    axis_ms.set_title(f"{title}: one decode step as one CUDA graph (median of replays)")
    axis_share.axhline(100.0, color="k", linewidth=0.8)
    axis_share.set_ylabel("% of the one-read time")
    axis_share.set_title(f"{title}: one-read ms / ms x 100")


def plot_decode(plt, results_dir, rows):
    dtypes = unique(r["dtype"] for r in rows)
    models = unique(r["model"] for r in rows)
    figure, axes = plt.subplots(2 * len(dtypes), 1, squeeze=False,
                                figsize=(max(8.0, 1.6 * len(models) + 3), 8.0 * len(dtypes)))
    for index, dtype in enumerate(dtypes):
        plot_decode_dtype(axes[2 * index][0], axes[2 * index + 1][0],
                          [r for r in rows if r["dtype"] == dtype], f"decode {dtype}")
    figure.suptitle(f"xgemv-bench decode on {rows[0]['device']}, commit {rows[0]['commit']}")
    figure.tight_layout(rect=(0, 0, 1, 0.985))
    out = results_dir / "chart-decode.png"
    figure.savefig(out, dpi=100)
    plt.close(figure)
    print(f"wrote {out}")


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
    all_rows = load_rows(args.results_dir)
    all_decode_rows = load_decode_rows(args.results_dir)
    if not all_rows and not all_decode_rows:
        print(f"plot.py: no timed rows in {args.results_dir}")
        return 0
    rows = [r for r in all_rows if nrhs_of(r) == 1]
    decode_rows = [r for r in all_decode_rows if nrhs_of(r) == 1]
    if decode_rows:
        plot_decode(plt, args.results_dir, decode_rows)
    decode_panels = []
    for dtype in unique(r["dtype"] for r in all_decode_rows):
        families = nrhs_families([r for r in all_decode_rows if r["dtype"] == dtype],
                                 lambda r: r["model"], "ms")
        if families:
            decode_panels.append((f"decode {dtype}", families))
    if decode_panels:
        first = all_decode_rows[0]
        plot_nrhs(plt, args.results_dir / "chart-decode-nrhs.png",
                  f"xgemv-bench decode, nrhs vectors, on {first['device']}, commit "
                  f"{first['commit']}", decode_panels, "ms per step")
    for suite in unique(r["suite"] for r in all_rows):
        in_suite = [r for r in all_rows if r["suite"] == suite]
        panels = []
        for dtype in unique(r["dtype"] for r in in_suite):
            families = nrhs_families([r for r in in_suite if r["dtype"] == dtype],
                                     lambda r: f'{r["tag"]} {r["op"]} {r["m"]}x{r["n"]}', "us")
            if families:
                panels.append((f"{suite} {dtype}", families))
        if panels:
            plot_nrhs(plt, args.results_dir / f"chart-nrhs-{suite}.png",
                      f"xgemv-bench {suite}, nrhs vectors, on {in_suite[0]['device']}, commit "
                      f"{in_suite[0]['commit']}", panels, "us per call")
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
