#!/usr/bin/env python3
"""PyTorch's own int4 weight-only GEMM (tinygemm) beside xgemv's quantized rows, timed like
xgemv-bench.

It runs every int4-g128 xgemv-q case of an xgemv-bench results.json (from --weights int4-g128)
through torch._weight_int4pack_mm with the same shape (inputs K = m, outputs N = n), the same
number of vectors and the same copies of the weights (>= 1 GiB, so L2 never holds them), checks
each output against an fp64 reference of its dequantized weights before timing it, and writes
quant-peers.json beside it: records of library torch-tinygemm. Speed-ups are over the same run's
cuBLAS on the dense matrix; the last lines give xgemv-q's speed-up over tinygemm per nrhs.

    build/bench/xgemv-bench --suite llm --dtype bf16 --weights int4-g128 --nrhs 1,16 --out-dir q
    python3 bench/quant_peers.py q

Without torch or a GPU it prints one line and exits 0.
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

try:
    import torch
except ImportError as error:
    MISSING = error.name
else:
    MISSING = None

GROUP = 128
INNER_K_TILES = 8
WARMUP_BATCHES = 3
ROTATION_BYTES = 1 << 30


def pack(q, n, k):
    """tinygemm's packed weight of q (N x K codes 0..15); its input type changed across PyTorch
    versions (uint8 pairs along K, or int32 codes)."""
    try:
        pairs = (q[:, 0::2] << 4 | q[:, 1::2]).to(torch.uint8)
        return torch._convert_weight_to_int4pack(pairs, INNER_K_TILES)
    except RuntimeError:
        return torch._convert_weight_to_int4pack(q.to(torch.int32), INNER_K_TILES)


def run_case(xgemv_record):
    """The torch-tinygemm record of an xgemv-q int4-g128 record's case."""
    record = dict(xgemv_record, lib="torch-tinygemm", function="torch._weight_int4pack_mm",
                  status="ok", kernels=0)
    for key in ("max_error", "tolerance", "us", "spread_pct", "GBps", "bound_GBps", "pct_bound",
                "speedup", "t_over_t1"):
        record[key] = None
    k, n, rows = xgemv_record["m"], xgemv_record["n"], xgemv_record["nrhs"]
    if k % (GROUP * 2) or n % 8 or xgemv_record["dtype"] != "bf16":
        record["status"] = "skipped: tinygemm takes bf16, K a multiple of 256, N of 8"
        return record
    device = torch.device("cuda")
    q = torch.randint(0, 16, (n, k), dtype=torch.int32, device=device)
    scales = torch.rand(k // GROUP, n, device=device, dtype=torch.float32) * 0.01 + 0.001
    # tinygemm's w = (q - 8) * scale + zero; zero 0 here.
    scales_and_zeros = torch.stack([scales, torch.zeros_like(scales)], dim=2).to(torch.bfloat16)
    packed = pack(q, n, k)
    copy_bytes = packed.numel() * packed.element_size()
    copies = [packed] + [packed.clone() for _ in range(max(1, ROTATION_BYTES // copy_bytes))]
    x = torch.empty(rows, k, dtype=torch.bfloat16, device=device).uniform_(-1, 1)

    def call(weights):
        return torch._weight_int4pack_mm(x, weights, GROUP, scales_and_zeros)

    y = call(copies[0]).double()
    w = ((q - 8).double() * scales_and_zeros[..., 0].double().repeat_interleave(GROUP, 0).t())
    y_ref = x.double() @ w.t()
    scale = y_ref.abs().max().item() or 1.0
    record["max_error"] = (y - y_ref).abs().max().item() / scale
    record["tolerance"] = 2e-2
    record.update(checked=1, failed_checks=0 if record["max_error"] <= 2e-2 else 1)
    if not record["max_error"] <= 2e-2:
        record["status"] = "check failed"
        return record

    calls, batches = max(1, min(100, (256 << 20) // copy_bytes)), xgemv_record["batches"] or 15
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    per_call_us, copy = [], 0
    for batch in range(WARMUP_BATCHES + batches):
        start.record()
        for _ in range(calls):
            call(copies[copy])
            copy = (copy + 1) % len(copies)
        stop.record()
        stop.synchronize()
        if batch >= WARMUP_BATCHES:
            per_call_us.append(start.elapsed_time(stop) * 1e3 / calls)
    us = statistics.median(per_call_us)
    bytes_read = copy_bytes + scales_and_zeros.numel() * 2 + rows * (k + n) * 2
    record.update(copies=len(copies), calls_per_batch=calls, batches=batches, us=us,
                  bytes=bytes_read, GBps=bytes_read / us / 1e3)
    if xgemv_record["us"] and xgemv_record["speedup"]:
        record["speedup"] = xgemv_record["us"] * xgemv_record["speedup"] / us  # cuBLAS us / us
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", type=Path, help="an xgemv-bench --out-dir")
    args = parser.parse_args(argv)
    if MISSING:
        print(f"quant_peers.py: skipped ({MISSING} is not installed)")
        return 0
    if not torch.cuda.is_available():
        print("quant_peers.py: skipped (no CUDA device)")
        return 0
    results = json.loads((args.results_dir / "results.json").read_text())
    selected = [r for r in results["records"]
                if r["lib"] == "xgemv-q" and r["format"] == "int4-g128" and r["us"]]
    records, over_tinygemm = [], {}
    for number, xgemv_record in enumerate(selected, 1):
        record = run_case(xgemv_record)
        records.append(record)
        if record["us"]:
            over_tinygemm.setdefault(record["nrhs"], []).append(record["us"] / xgemv_record["us"])
        print(f"[{number}/{len(selected)}] {record['case']:48} {record['us'] or '-':>10} us "
              f"{record['GBps'] or '-':>8} GB/s {record['speedup'] or '-':>6}x vs cuBLAS  "
              f"{record['status']}", flush=True)
        torch.cuda.empty_cache()
    out = args.results_dir / "quant-peers.json"
    out.write_text(json.dumps({"run": results["run"], "records": records}, indent=1) + "\n")
    print(f"wrote {out}")
    clauses = [f"nrhs {nrhs} {statistics.geometric_mean(v):.2f}x geo-mean, worst {min(v):.2f}x"
               for nrhs, v in sorted(over_tinygemm.items())]
    print("quant peers: xgemv-q int4-g128 over torch tinygemm int4-g128: " +
          ("; ".join(clauses) if clauses else "n/a"))
    return 1 if any(r["status"] == "check failed" for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
