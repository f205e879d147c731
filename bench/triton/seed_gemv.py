#!/usr/bin/env python3
"""The row-block GEMV xgemv's design started from (the "seed"), in Triton, timed like xgemv-bench.

It runs the one-vector cases (nrhs 1) of an xgemv-bench results.json (same shapes, dtypes, ops,
increments, alpha, beta, copies of A and calls per batch), checks each output against an fp64
reference with the bench's tolerance before timing it, and writes triton-seed.json beside it: the
bench's records, one per case, of library triton-seed. The bound and the speed-up come from the
bench's records of the same case (same GPU, same run), so they compare like with like.

    build/bench/xgemv-bench --suite llm --out-dir llm
    python3 bench/triton/seed_gemv.py llm

Without torch, triton or a GPU it prints one line and exits 0.
"""
import argparse
import json
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

BLOCK_M, BLOCK_N = 32, 64  # the seed's standard tile
WARMUP_BATCHES = 3
ROTATION_BYTES = 1 << 30  # as the bench: copies of A totalling >= 1 GiB
COPY_ALIGNMENT = 256


def read_cases(results):
    """{(suite, case): {lib: record}} of the one-vector cases of a bench run, in the run's order."""
    cases = {}
    for record in results["records"]:
        if record["nrhs"] == 1:
            cases.setdefault((record["suite"], record["case"]), {})[record["lib"]] = record
    return cases


def logical(vector, length, inc):
    """The logical elements of a BLAS vector (first element in memory first)."""
    elements = vector[: 1 + (length - 1) * abs(inc) : abs(inc)]
    return elements.flip(0) if inc < 0 else elements


def run_case(bench_records):
    """The triton-seed record of the case whose bench records (by lib) are given."""
    ceiling = bench_records.get("ceiling")
    result = dict(ceiling or next(iter(bench_records.values())), lib="triton-seed", function=f"row_block_gemv[{BLOCK_M}x{BLOCK_N}]",
                  mode="stream", status="ok", kernels=0)
    for key in ("max_error", "tolerance", "us", "spread_pct", "GBps", "bound_GBps", "pct_bound",
                "speedup", "t_over_t1"):
        result[key] = None
    tolerance = next((r["tolerance"] for r in bench_records.values() if r["tolerance"]), None)
    if not ceiling or not ceiling["calls_per_batch"] or not tolerance:
        result["status"] = "skipped: no GPU records for this case in results.json"
        return result

    dtype = {"fp32": torch.float32, "fp64": torch.float64, "fp16": torch.float16,
             "bf16": torch.bfloat16}[ceiling["dtype"]]
    op, m, n, lda = ceiling["op"], ceiling["m"], ceiling["n"], ceiling["lda"]
    incx, incy, alpha, beta = ceiling["incx"], ceiling["incy"], ceiling["alpha"], ceiling["beta"]
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
    result.update(max_error=max_error if math.isfinite(max_error) else None, tolerance=tolerance,
                  checked=1, failed_checks=0 if max_error <= tolerance else 1)
    if not max_error <= tolerance:
        result["status"] = "check failed"
        return result

    calls, batches = ceiling["calls_per_batch"], ceiling["batches"]
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
    ordered = sorted(per_call_us)  # the spread as the bench has it: quartiles over the median
    spread = ordered[3 * len(ordered) // 4] - ordered[len(ordered) // 4]
    gbps = ceiling["bytes"] / us / 1e3
    result.update(copies=copies, calls_per_batch=calls, batches=batches, us=us,
                  spread_pct=100 * spread / us, GBps=gbps)
    if ceiling["GBps"]:
        result.update(bound_GBps=ceiling["GBps"], pct_bound=100 * gbps / ceiling["GBps"])
    cublas_us = [r["us"] for lib, r in bench_records.items() if lib.startswith("cublas") and r["us"]]
    if cublas_us:
        result["speedup"] = min(cublas_us) / us
    return result


def print_summary(records):
    """Geometric-mean speed-up over cuBLAS and share of the bound per suite and dtype."""
    groups = {}
    for record in records:
        if record["speedup"] and record["pct_bound"]:
            groups.setdefault((record["suite"], record["dtype"]), []).append(record)
    print("\ntriton-seed: suite dtype cases speed-up-vs-cuBLAS(geo-mean) %-of-bound(geo-mean)")
    for (suite, dtype), group in groups.items():
        speedup = statistics.geometric_mean(r["speedup"] for r in group)
        share = statistics.geometric_mean(r["pct_bound"] for r in group)
        print(f"  {suite:8} {dtype:5} {len(group):4} {speedup:8.2f}x {share:8.1f}%")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", type=Path, help="an xgemv-bench --out-dir")
    parser.add_argument("--shape-filter", default="", help="regex searched in the case's name")
    args = parser.parse_args(argv)
    if MISSING:
        print(f"seed_gemv.py: skipped ({MISSING} is not installed)")
        return 0
    if not torch.cuda.is_available():
        print("seed_gemv.py: skipped (no CUDA device)")
        return 0

    results = json.loads((args.results_dir / "results.json").read_text())
    pattern = re.compile(args.shape_filter)
    selected = [records for records in read_cases(results).values()
                if pattern.search(next(iter(records.values()))["case"])]
    out_records = []
    for number, bench_records in enumerate(selected, 1):
        record = run_case(bench_records)
        out_records.append(record)
        print(f"[{number}/{len(selected)}] {record['case']:44} {record['us'] or '-':>10} us "
              f"{record['GBps'] or '-':>8} GB/s {record['pct_bound'] or '-':>6}% "
              f"{record['speedup'] or '-':>6}x  {record['status']}", flush=True)
        torch.cuda.empty_cache()
    out = args.results_dir / "triton-seed.json"
    out.write_text(json.dumps({"run": results["run"], "records": out_records}, indent=1) + "\n")
    print_summary(out_records)
    print(f"wrote {out}")
    return 1 if any(r["status"] == "check failed" for r in out_records) else 0


if __name__ == "__main__":
    sys.exit(main())
