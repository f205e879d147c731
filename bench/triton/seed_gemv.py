#!/usr/bin/env python3
"""The row-block GEMV xgemv's design started from (the "seed"), in Triton, timed like xgemv-bench.

It runs the one-vector cases (nrhs 1) of an xgemv-bench results.csv (same shapes, dtypes, ops,
increments, alpha, beta, copies of A and calls per batch), checks each output against an fp64
reference with the bench's tolerance before timing it, and writes triton-seed.csv beside it with
the bench's CSV columns. Ceiling and cuBLAS figures come from the bench's rows of the same case
(same GPU, same run), so the speed-up over cuBLAS and the share of the ceiling compare like with
like.

    build/bench/xgemv-bench --suite llm --out-dir llm
    python3 bench/triton/seed_gemv.py llm

Without torch, triton or a GPU it prints one line and exits 0.
"""
import argparse
import csv
import math
import re
import statistics
import sys
from pathlib import Path

try:
    import torch
    import triton
    import triton.language as tl
except ImportError as error:
    MISSING = error.name
else:
    MISSING = None

    @triton.jit
    def row_block_gemv(a_ptr, a_offset, x_ptr, y_ptr, rows, cols, stride_row, stride_col,
                       stride_x, stride_y, alpha, beta, BETA_IS_ZERO: tl.constexpr,
                       ACC: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        """y[i] = alpha * sum_j A[i, j] x[j] (+ beta y[i]); A[i, j] at i*stride_row + j*stride_col.

        The seed: one program per BLOCK_M rows, walking the columns BLOCK_N at a time with a
        BLOCK_M-wide accumulator (fp32, fp64 for fp64), masked loads with other=0.
        """
        row = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        row_mask = row < rows
        row = row.to(tl.int64)  # offsets pass 2^31 on the large matrices
        a_ptr += a_offset
        acc = tl.zeros((BLOCK_M,), dtype=ACC)
        for start in range(0, cols, BLOCK_N):
            col = start + tl.arange(0, BLOCK_N)
            col_mask = col < cols
            col = col.to(tl.int64)
            a = tl.load(a_ptr + row[:, None] * stride_row + col[None, :] * stride_col,
                        mask=row_mask[:, None] & col_mask[None, :], other=0.0)
            x = tl.load(x_ptr + col * stride_x, mask=col_mask, other=0.0)
            acc += tl.sum(a.to(ACC) * x.to(ACC)[None, :], axis=1)
        out = alpha * acc
        if not BETA_IS_ZERO:
            out += beta * tl.load(y_ptr + row * stride_y, mask=row_mask, other=0.0).to(ACC)
        tl.store(y_ptr + row * stride_y, out.to(y_ptr.dtype.element_ty), mask=row_mask)

# The bench's CSV columns (tests/bench checks that this line matches the C++ writer).
COLUMNS = "suite,tag,dtype,op,m,n,nrhs,lda,incx,incy,alpha,beta,bytes,lib,function,mode,status,max_error,tolerance,copies,calls_per_batch,batches,us,GBps,ceiling_GBps,pct_ceiling,speedup_vs_cublas,device,sm_clock_mhz,sm_clock_max_mhz,mem_clock_max_mhz,driver,cuda,commit,date".split(",")
CASE_COLUMNS = COLUMNS[:COLUMNS.index("lib")]
RUN_COLUMNS = COLUMNS[COLUMNS.index("device"):]

BLOCK_M, BLOCK_N = 32, 64  # the seed's standard tile
WARMUP_BATCHES = 3
ROTATION_BYTES = 1 << 30  # as the bench: copies of A totalling >= 1 GiB
COPY_ALIGNMENT = 256


def read_cases(results_csv):
    """{case key: {lib: row}} of a bench run, in the run's order."""
    cases = {}
    with open(results_csv, newline="") as file:
        for row in csv.DictReader(file):
            # Results from before --nrhs have no nrhs column: one vector.
            row.setdefault("nrhs", "1")
            cases.setdefault(tuple(row[c] for c in CASE_COLUMNS), {})[row["lib"]] = row
    return cases


def logical(vector, length, inc):
    """The logical elements of a BLAS vector (first element in memory first)."""
    elements = vector[: 1 + (length - 1) * abs(inc) : abs(inc)]
    return elements.flip(0) if inc < 0 else elements


def run_case(bench_rows):
    """One triton-seed row for the case whose bench rows (by lib) are given."""
    any_row = next(iter(bench_rows.values()))
    ceiling = bench_rows.get("ceiling", {})
    result = {c: any_row[c] for c in CASE_COLUMNS + RUN_COLUMNS}
    result.update(lib="triton-seed", function=f"row_block_gemv[{BLOCK_M}x{BLOCK_N}]",
                  mode="stream", status="ok")
    if ceiling.get("sm_clock_mhz"):
        result["sm_clock_mhz"] = ceiling["sm_clock_mhz"]
    tolerance = next((r["tolerance"] for r in bench_rows.values() if r["tolerance"]), "")
    if not ceiling.get("calls_per_batch") or not tolerance:
        result["status"] = "skipped: no GPU rows for this case in results.csv"
        return result

    dtype = {"fp32": torch.float32, "fp64": torch.float64, "fp16": torch.float16,
             "bf16": torch.bfloat16}[any_row["dtype"]]
    op, m, n, lda = any_row["op"], int(any_row["m"]), int(any_row["n"]), int(any_row["lda"])
    incx, incy = int(any_row["incx"]), int(any_row["incy"])
    alpha, beta = float(any_row["alpha"]), float(any_row["beta"])
    x_length, y_length = (m, n) if op == "T" else (n, m)
    element = torch.empty((), dtype=dtype).element_size()
    copy_stride = max(1, math.ceil(m * n * element / COPY_ALIGNMENT)) * COPY_ALIGNMENT // element
    copies = max(1, math.ceil(ROTATION_BYTES / (copy_stride * element)))

    device = torch.device("cuda")
    pool = torch.empty(copies * copy_stride, dtype=dtype, device=device).uniform_(-1, 1)
    x = torch.empty(1 + (x_length - 1) * abs(incx), dtype=dtype, device=device).uniform_(-1, 1)
    y_initial = torch.empty(1 + (y_length - 1) * abs(incy), dtype=dtype,
                            device=device).uniform_(-1, 1)
    y = torch.empty_like(y_initial)
    # Pointers at logical element 0 (the far end for a negative increment) with signed strides.
    x_base = x[(x_length - 1) * -incx:] if incx < 0 else x
    y_base = y[(y_length - 1) * -incy:] if incy < 0 else y
    # op(A)[i, j] for column-major A with leading dimension lda.
    stride_row, stride_col = (lda, 1) if op == "T" else (1, lda)
    grid = (triton.cdiv(y_length, BLOCK_M),)
    accumulator = tl.float64 if dtype == torch.float64 else tl.float32
    constants = dict(BETA_IS_ZERO=beta == 0, ACC=accumulator, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)

    def launch(copy):
        row_block_gemv[grid](pool, copy * copy_stride, x_base, y_base, y_length, x_length,
                             stride_row, stride_col, incx, incy, alpha, beta, **constants)

    # Check first: y poisoned with NaN when beta == 0 (must be written without being read).
    if beta != 0:
        y.copy_(y_initial)
    else:
        y.fill_(float("nan"))
    launch(0)
    a = pool[: m * n].view(n, m)  # column-major m x n == row-major n x m
    op_a = (a if op == "T" else a.t()).double()
    y_ref = alpha * (op_a @ logical(x, x_length, incx).double())
    if beta != 0:
        y_ref += beta * logical(y_initial, y_length, incy).double()
    del op_a
    scale = y_ref.abs().max().item() or 1.0
    difference = (logical(y, y_length, incy).double() - y_ref).abs()
    max_error = difference.max().item() / scale if torch.isfinite(difference).all() else math.inf
    result.update(max_error=f"{max_error:.4g}", tolerance=tolerance)
    if not max_error <= float(tolerance):
        result["status"] = "check failed"
        return result

    calls, batches = int(ceiling["calls_per_batch"]), int(ceiling["batches"])
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    per_call_us, copy = [], 0
    for batch in range(WARMUP_BATCHES + batches):
        start.record()
        for _ in range(calls):
            launch(copy)
            copy = (copy + 1) % copies
        stop.record()
        stop.synchronize()
        if batch >= WARMUP_BATCHES:
            per_call_us.append(start.elapsed_time(stop) * 1e3 / calls)
    us = statistics.median(per_call_us)
    gbps = int(any_row["bytes"]) / us / 1e3
    result.update(copies=copies, calls_per_batch=calls, batches=batches, us=f"{us:.3f}",
                  GBps=f"{gbps:.1f}")
    if ceiling.get("GBps"):
        result.update(ceiling_GBps=ceiling["GBps"],
                      pct_ceiling=f"{100 * gbps / float(ceiling['GBps']):.1f}")
    cublas_us = [float(r["us"]) for lib, r in bench_rows.items()
                 if lib.startswith("cublas") and r["us"]]
    if cublas_us:
        result["speedup_vs_cublas"] = f"{min(cublas_us) / us:.3f}"
    return result


def print_summary(rows):
    """Geometric-mean speed-up over cuBLAS and share of the ceiling per suite and dtype."""
    groups = {}
    for row in rows:
        if row.get("speedup_vs_cublas") and row.get("pct_ceiling"):
            groups.setdefault((row["suite"], row["dtype"]), []).append(row)
    print("\ntriton-seed: suite dtype cases speed-up-vs-cuBLAS(geo-mean) %-of-ceiling(geo-mean)")
    for (suite, dtype), group in groups.items():
        speedup = statistics.geometric_mean(float(r["speedup_vs_cublas"]) for r in group)
        share = statistics.geometric_mean(float(r["pct_ceiling"]) for r in group)
        print(f"  {suite:8} {dtype:5} {len(group):4} {speedup:8.2f}x {share:8.1f}%")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", type=Path, help="an xgemv-bench --out-dir")
    parser.add_argument("--shape-filter", default="", help="regex searched in '<tag> <m>x<n>'")
    args = parser.parse_args(argv)
    if MISSING:
        print(f"seed_gemv.py: skipped ({MISSING} is not installed)")
        return 0
    if not torch.cuda.is_available():
        print("seed_gemv.py: skipped (no CUDA device)")
        return 0

    cases = read_cases(args.results_dir / "results.csv")
    pattern = re.compile(args.shape_filter)
    nrhs = CASE_COLUMNS.index("nrhs")
    selected = [rows for key, rows in cases.items()
                if key[nrhs] == "1" and pattern.search(f"{key[1]} {key[4]}x{key[5]}")]
    out_rows = []
    for number, bench_rows in enumerate(selected, 1):
        row = run_case(bench_rows)
        out_rows.append(row)
        print(f"[{number}/{len(selected)}] {row['dtype']:5} {row['op']} {row['m']}x{row['n']:<8} "
              f"{row['tag']:20} {row.get('us') or '-':>10} us {row.get('GBps') or '-':>8} GB/s "
              f"{row.get('pct_ceiling') or '-':>6}% {row.get('speedup_vs_cublas') or '-':>6}x  "
              f"{row['status']}", flush=True)
        torch.cuda.empty_cache()
    out = args.results_dir / "triton-seed.csv"
    with open(out, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(out_rows)
    print_summary(out_rows)
    print(f"wrote {out}")
    failed = [r for r in out_rows if r["status"] == "check failed"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
