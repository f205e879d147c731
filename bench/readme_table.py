#!/usr/bin/env python3
"""The README's results table, made from the curated GPU-suite runs in bench/results/<gpu>/.

  python3 bench/readme_table.py                    print the table
  python3 bench/readme_table.py --check README.md  exit 1 if README.md's table differs from it
  python3 bench/readme_table.py --write README.md  put it in README.md

The table sits between the lines BEGIN and END below. Each column is one folder of
bench/results (--results, --gpus): its summary.txt (the suite's SUMMARY block) and the
benchmark's logs beside it (bench/results/README.md says what they are). A figure the files do
not hold is an error, not an empty cell, except in the rows of steps a folder's run predates,
which say "not in this run". Python 3 standard library only.
"""
import argparse
import math
import re
import sys
from pathlib import Path

BEGIN = "<!-- results-table:begin -->"
END = "<!-- results-table:end -->"
RESULTS = Path(__file__).resolve().parent / "results"
GPUS = ("h100", "h200")
CUBLAS = ("cublas", "cublas-gemmex", "cublas-gemm")

# One timed row of the benchmark's log: "[3/375] bf16 T 4096x12288 llama2-7b.qkv nrhs 2 xgemv-nrhs
# 38.38 2624.2 95.6 1.06x ok (...)"; the rows of quantized weights name their format after the type.
ROW = re.compile(r"^\[\d+/\d+\] (?P<dtype>\w+) (?:(?P<weights>[\w-]+) )?(?P<op>[NT]) "
                 r"(?P<shape>\d+x\d+) (?P<name>\S+)(?: nrhs (?P<nrhs>\d+))?\s+(?P<lib>\S+)\s+"
                 r"(?P<us>[\d.]+)\s+[\d.]+\s+(?P<bound>[\d.]+|-)\s")


class MissingFigure(Exception):
    pass


def read(path):
    if not path.is_file():
        raise MissingFigure(f"{path}: no such file")
    return path.read_text()


def find(pattern, text, where):
    """The groups of the first match of pattern in text, or MissingFigure naming where."""
    match = re.search(pattern, text, re.MULTILINE)
    if not match:
        raise MissingFigure(f"{where}: nothing matches {pattern!r}")
    return match.groups()


def find_if_run(pattern, text, where, step):
    """find(), or None where the run has no line of `step` at all (it predates the step)."""
    if not re.search(step, text, re.MULTILINE):
        return None
    return find(pattern, text, where)


def one_vector_geomean(log_path, dtype):
    """Over the log's one-vector cases of dtype: the geo-mean of xgemv's speed-up over the faster
    cuBLAS call, and the mean share of the stream read (%bound) of xgemv, from the timed rows."""
    xgemv, cublas, bound = {}, {}, {}
    for line in read(log_path).splitlines():
        row = ROW.match(line)
        if not row or row["dtype"] != dtype or row["nrhs"] or row["weights"]:
            continue
        case = (row["op"], row["shape"], row["name"])
        if row["lib"] == "xgemv":
            xgemv[case] = float(row["us"])
            bound[case] = float(row["bound"])
        elif row["lib"] in CUBLAS:
            cublas[case] = min(cublas.get(case, math.inf), float(row["us"]))
    cases = [case for case in xgemv if case in cublas]
    if not cases:
        raise MissingFigure(f"{log_path}: no one-vector {dtype} case timed beside cuBLAS")
    speedup = math.exp(sum(math.log(cublas[c] / xgemv[c]) for c in cases) / len(cases))
    return speedup, sum(bound[c] for c in cases) / len(cases), len(cases)


def column(folder):
    """The table's column for one curated folder: its head and one cell per row."""
    summary_path = folder / "summary.txt"
    summary = read(summary_path)
    where = str(summary_path)
    (commit,) = find(r"^commit\s*: (\S+)", summary, where)
    (gpu,) = find(r"^gpu\s*: ([^,\n]+)", summary, where)
    passed, failed, skipped = find(r"^ctest\s*: (\d+) passed, (\d+) failed, (\d+) skipped", summary,
                                   where)
    (decode,) = find(r"^decode verdict:.*xgemv-early-start bf16 ([\d.]+)x geo-mean", summary, where)
    (anchors_worst,) = find(r"^verdict: worst speed-up vs cuBLAS ([\d.]+)x", summary, where)
    nrhs, nrhs_worst = find(r"^nrhs verdict \(xgemv, bf16/fp16.*speed-up vs cuBLAS GemmEx over "
                            r"nrhs 2\.\.16: ([\d.]+)x geo-mean, worst ([\d.]+)x", summary, where)
    (int4_decode,) = find(r"^quant decode verdict:.*int4-g128 ([\d.]+)x geo-mean", summary, where)
    peers1, peers16 = find(r"^quant peers:.*nrhs 1 ([\d.]+)x geo-mean.*nrhs 16 ([\d.]+)x geo-mean",
                           summary, where)
    demo_bf16, demo_int4 = find(r"^demo verdict: llama3-8b batch 1, .*graph bf16 ([\d.]+)x, "
                                r"int4-g128 ([\d.]+)x", summary, where)
    moe = find_if_run(r"^moe peers verdict:.*at T=1: ([\d.]+)x.*\n(?:.*\n)*?moe peers verdict: "
                      r"xgemv bf16 over grouped_mm, every case: ([\d.]+)x geo-mean, worst "
                      r"([\d.]+)x", summary, where, r"^moe peers verdict:")
    moe_demo = find_if_run(r"^demo verdict: qwen3-30b-a3b batch 1, .*graph bf16 ([\d.]+)x, "
                           r"int4-g128 ([\d.]+)x", summary, where,
                           r"^demo verdict: qwen3-30b-a3b")
    op_t, op_t_bound, _ = one_vector_geomean(folder / "nrhs.log", "bf16")
    op_n, op_n_bound, _ = one_vector_geomean(folder / "nrhs-op-n.log", "bf16")
    head = f"{gpu.removeprefix('NVIDIA ')}, [{commit}](bench/results/{folder.name}/summary.txt)"
    return head, [
        f"{decode}x",
        f"{op_t:.2f}x, {op_t_bound:.0f}%",
        f"{op_n:.2f}x, {op_n_bound:.0f}%",
        f"{anchors_worst}x",
        f"{nrhs}x (worst {nrhs_worst}x)",
        f"{int4_decode}x",
        f"{peers1}x / {peers16}x",
        f"{demo_bf16}x / {demo_int4}x",
        f"{moe[0]}x; {moe[1]}x (worst {moe[2]}x)" if moe else "not in this run",
        f"{moe_demo[0]}x / {moe_demo[1]}x" if moe_demo else "not in this run",
        f"{passed} passed, {failed} failed, {skipped} skipped",
    ]


ROWS = [
    "Whole decode steps, bf16, 6 models, over cuBLAS (early start)",
    "One GEMV, bf16 op T, 25 LLM shapes, over cuBLAS; % of the stream read",
    "The same, op N",
    "Worst of the 90 anchor cases (fp32, fp16, bf16; ops N and T), over cuBLAS",
    "2-16 vectors, bf16 op T, 25 LLM shapes, over cuBLAS's GEMM of as many columns",
    "int4-g128 weights: decode steps of 2 models over cuBLAS on the bf16 weights",
    "int4-g128 GEMV over PyTorch's int4 kernel, 1 / 16 vectors",
    "PyTorch, Llama-3-8B shape, a token over plain bf16: `quantize_` bf16 / int4-g128",
    "MoE experts, bf16, over transformers' grouped_mm: Qwen3-30B-A3B at 1 token; 6 models, "
    "1-64 tokens",
    "PyTorch, Qwen3-30B-A3B shape (16 layers), a token in a graph over transformers' default: "
    "bf16 / int4-g128",
    "Tests (`ctest` in the suite)",
]


def table(results, gpus):
    columns = [column(results / gpu) for gpu in gpus]
    lines = ["| geometric means unless said | " + " | ".join(head for head, _ in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for i, label in enumerate(ROWS):
        lines.append(f"| {label} | " + " | ".join(cells[i] for _, cells in columns) + " |")
    return "\n".join(lines) + "\n"


def split_readme(text, path):
    """README text before the table (through BEGIN's line), the table, and the rest (from END)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise MissingFigure(f"{path}: no {BEGIN} ... {END} lines")
    head_end = text.index("\n", start) + 1
    return text[:head_end], text[head_end:end], text[end:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", metavar="README", type=Path,
                      help="exit 1 if README's table differs from the generated one")
    mode.add_argument("--write", metavar="README", type=Path, help="put the table in README")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="the folder of the curated runs (default: this script's results/)")
    parser.add_argument("--gpus", default=",".join(GPUS),
                        help="its subfolders, one column each (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        generated = table(args.results, [g for g in args.gpus.split(",") if g])
        if not (args.check or args.write):
            sys.stdout.write(generated)
            return 0
        readme = args.check or args.write
        head, current, rest = split_readme(read(readme), readme)
    except MissingFigure as error:
        print(f"readme_table.py: {error}", file=sys.stderr)
        return 2
    if args.write:
        readme.write_text(head + generated + rest)
        return 0
    if current != generated:
        print(f"readme_table.py: {readme}'s results table differs from {args.results}'s runs; "
              f"python3 bench/readme_table.py --write {readme} updates it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
