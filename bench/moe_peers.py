#!/usr/bin/env python3
"""Mixture-of-experts layers beside Hugging Face transformers' own experts implementations: the
experts of published models (random weights), the same routing for every implementation, timed
as CUDA graphs (eager "eager" as it runs, with its host synchronisation), and whole MoE blocks
(router, experts, combine) as CUDA graphs.

    python3 bench/moe_peers.py                       # every model, T = 1..64, uniform routing
    python3 bench/moe_peers.py --models qwen3-30b-a3b --tokens 1,4 --routing uniform,skewed
    python3 bench/moe_peers.py --quick --json moe-peers.json

Implementations: transformers' "grouped_mm" (its default), "batched_mm" and "eager"; xgemv's
experts implementation ("xgemv", the module's bf16 weights as they are) and xgemv.nn.Experts
with int4-g128 experts. Each is checked against the grouped_mm result before it is timed. A
call's bytes are the touched experts' weights (E (1 - (1 - k/E)^T) experts for uniform routing):
its GB/s is over those, and beside it a stream read of as many bytes (a PyTorch reduction; the
C++ benchmark's `--suite moe` has xgemv's own read kernel). Cold caches: each graph replays calls on R different routings (touching
about 1 GiB of experts, at most 32), and the time is per call. Ends with verdict lines.

Without torch, transformers or a GPU it prints one line and exits 0 (or --skip-exit-code).
"""
import argparse
import json
import math
import statistics
import sys
import time

try:
    import torch
    import transformers  # noqa: F401  (the experts implementations register on import)
except ImportError as error:
    MISSING = error.name
else:
    MISSING = None

# name: (experts E, hidden H, expert intermediate I, top-k k, experts class)
MODELS = {
    "qwen3-30b-a3b": (128, 2048, 768, 8, "qwen3_moe"),
    "qwen3-235b-a22b": (128, 4096, 1536, 8, "qwen3_moe"),
    "deepseek-v3": (256, 7168, 2048, 8, "qwen3_moe"),
    "gpt-oss-120b": (128, 2880, 2880, 4, "gpt_oss"),
    "mixtral-8x7b": (8, 4096, 14336, 2, "qwen3_moe"),
    "olmoe-1b-7b": (64, 2048, 1024, 8, "qwen3_moe"),
}
TOKENS = (1, 2, 4, 8, 16, 32, 64)
ROTATION_BYTES = 1 << 30


def progress(message):
    print(f"[moe_peers {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def experts_module(kind, experts, hidden, intermediate):
    """A transformers experts module of `kind` with random bf16 weights (and biases) on the GPU."""
    if kind == "gpt_oss":
        from transformers.models.gpt_oss.modeling_gpt_oss import GptOssExperts
        config = transformers.GptOssConfig(hidden_size=hidden, intermediate_size=intermediate,
                                           num_local_experts=experts, num_experts_per_tok=4)
        module = GptOssExperts(config)
    else:
        from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeExperts
        config = transformers.Qwen3MoeConfig(hidden_size=hidden, moe_intermediate_size=intermediate,
                                             num_experts=experts)
        module = Qwen3MoeExperts(config)
    module = module.to(device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.normal_(0.0, 0.02)
    return module.eval()


def routing(kind, tokens, experts, top_k, generator):
    """ids [T, k] int64 (k distinct experts a token) and weights [T, k] bf16 summing to 1:
    uniform, or skewed (probability ~ 1 / (rank + 1)^1.2 over a fixed order of the experts)."""
    if kind == "uniform":
        ids = torch.rand(tokens, experts, generator=generator).topk(top_k, -1).indices
    else:
        order = torch.randperm(experts, generator=torch.Generator().manual_seed(7))
        probability = torch.empty(experts, dtype=torch.float64)
        probability[order] = 1.0 / (torch.arange(experts, dtype=torch.float64) + 1) ** 1.2
        ids = torch.stack([torch.multinomial(probability, top_k, False, generator=generator)
                           for _ in range(tokens)])
    weights = torch.softmax(torch.rand(tokens, top_k, generator=generator), -1)
    return ids.cuda(), weights.to(torch.bfloat16).cuda()


def expert_bytes(module):
    return (module.gate_up_proj[0].numel() + module.down_proj[0].numel()) * 2


def implementations(module, quick):
    """name -> (function(x, ids, weights), capturable)."""
    from transformers.integrations.moe import ExpertsInterface
    import xgemv
    xgemv.register_experts_implementation()
    mapping = ExpertsInterface._global_mapping
    result = {}
    for name in ("grouped_mm", "batched_mm"):
        if name in mapping:
            result[name] = (lambda x, i, w, f=mapping[name]: f(module, x, i, w), True)
    result["eager"] = (lambda x, i, w: type(module).forward.__wrapped__(module, x, i, w)
                       if hasattr(type(module).forward, "__wrapped__") else None, False)
    result["xgemv"] = (lambda x, i, w, f=mapping["xgemv"]: f(module, x, i, w), True)
    # int4 in groups of 128, or of 64 where the sizes are not multiples of 128 (gpt-oss's 2880).
    group = 128 if all(n % 128 == 0 for n in module.gate_up_proj.shape[1:]) else 64
    quantized = xgemv.nn.Experts.from_module(module, f"int4-g{group}")
    result["xgemv int4-g128"] = (lambda x, i, w: quantized(x, i, w), True)
    return result, quantized


def time_calls(function, calls, capturable, replays):
    """Median time per call (ms) of `calls` (x, ids, weights) run in turn: one CUDA graph of them
    all, replayed; eager calls timed on the host with a synchronisation each."""
    if capturable:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for args in calls[:2]:
                function(*args)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for args in calls:
                function(*args)
        graph.replay()
        times = []
        for _ in range(replays):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            times.append((start, end))
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in times) / len(calls)
    times = []
    for _ in range(max(2, replays // 10)):
        for args in calls:
            torch.cuda.synchronize()
            start = time.perf_counter()
            function(*args)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def stream_read_ms(nbytes, count, replays):
    """The stream read of `nbytes` (a reduction of them in fp32 words), per call, over `count`
    different regions in turn: what one read of a call's bytes costs, ramp-up included."""
    words = max(1, int(nbytes) // 4)
    region = torch.empty(count, words, dtype=torch.float32, device="cuda").normal_()
    out = torch.empty(count, dtype=torch.float32, device="cuda")
    calls = [(i,) for i in range(count)]
    ms = time_calls(lambda i: torch.sum(region[i], 0, out=out[i]), calls, True, replays)
    del region
    return ms


def run_model(name, args, results):
    experts, hidden, intermediate, top_k, kind = MODELS[name]
    progress(f"{name}: {experts} experts of {hidden} x {intermediate}, top-{top_k}")
    module = experts_module(kind, experts, hidden, intermediate)
    impls, quantized = implementations(module, args.quick)
    per_expert = expert_bytes(module)
    generator = torch.Generator().manual_seed(1)
    for tokens in args.tokens:
        for route in args.routing:
            touched = experts * (1 - (1 - top_k / experts) ** tokens)
            count = max(1, min(32, int(ROTATION_BYTES // max(1, touched * per_expert))))
            calls = []
            for _ in range(count):
                ids, weights = routing(route, tokens, experts, top_k, generator)
                x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
                calls.append((x, ids, weights))
            distinct = statistics.mean(int(ids.unique().numel()) for _, ids, _ in calls)
            reference = impls["grouped_mm"][0](*calls[0]).float()
            row = {"model": name, "tokens": tokens, "routing": route, "top_k": top_k,
                   "touched_experts": distinct, "bytes": distinct * per_expert}
            row["stream_read_ms"] = stream_read_ms(row["bytes"], count, 5 if args.quick else 20)
            for impl, (function, capturable) in impls.items():
                if impl == "eager" and (tokens > 16 or args.quick):
                    continue
                with torch.no_grad():
                    try:
                        got = function(*calls[0])
                        if got is None:
                            continue
                        error = float((got.float() - reference).abs().max() /
                                      reference.abs().max().clamp_min(1e-30))
                        limit = 0.25 if "int4" in impl else 0.05
                        if not math.isfinite(error) or error > limit:
                            row[impl] = {"status": f"wrong: relative error {error:.3g}"}
                            progress(f"{name} T={tokens} {route} {impl}: WRONG ({error:.3g})")
                            continue
                        ms = time_calls(function, calls, capturable, 5 if args.quick else 20)
                    except torch.cuda.OutOfMemoryError:
                        # batched_mm copies every pair's expert: too much for the largest.
                        got = None
                        torch.cuda.empty_cache()
                        row[impl] = {"status": "out of memory"}
                        progress(f"{name} T={tokens} {route} {impl}: out of memory")
                        continue
                bytes_read = row["bytes"] * (0.25 if "int4" in impl else 1.0)
                row[impl] = {"ms": ms, "GBps": bytes_read / ms / 1e6, "error": error}
                if "int4" not in impl:
                    row[impl]["pct_stream_read"] = 100 * row["stream_read_ms"] / ms
            base = row.get("grouped_mm", {}).get("ms")
            for impl in impls:
                if base and "ms" in row.get(impl, {}):
                    row[impl]["speedup_vs_grouped_mm"] = base / row[impl]["ms"]
            progress(f"{name} T={tokens} {route}: read {row['stream_read_ms'] * 1e3:.1f} us; " +
                     ", ".join(f"{impl} {row[impl]['ms'] * 1e3:.1f} us" for impl in impls
                               if "ms" in row.get(impl, {})))
            results.append(row)
    del module, quantized
    torch.cuda.empty_cache()


def moe_block(name, implementation, layers_quick):
    """One Qwen3-MoE sparse block (router, experts, combine) of the model's shape."""
    experts, hidden, intermediate, top_k, kind = MODELS[name]
    from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeSparseMoeBlock
    config = transformers.Qwen3MoeConfig(hidden_size=hidden, moe_intermediate_size=intermediate,
                                         num_experts=experts, num_experts_per_tok=top_k,
                                         norm_topk_prob=True)
    config._experts_implementation = implementation
    block = Qwen3MoeSparseMoeBlock(config).to(device="cuda", dtype=torch.bfloat16).eval()
    with torch.no_grad():
        for parameter in block.parameters():
            parameter.normal_(0.0, 0.02)
    return block


def run_blocks(args, results):
    """Whole MoE blocks in CUDA graphs: transformers' default against xgemv, and the parts of
    xgemv's (router alone, experts alone)."""
    import xgemv
    for name in args.models:
        if MODELS[name][4] != "qwen3_moe":
            continue
        block = moe_block(name, "grouped_mm", args.quick)
        for tokens in (1, 4, 16):
            x = torch.randn(1, tokens, MODELS[name][1], device="cuda", dtype=torch.bfloat16)
            row = {"model": name, "tokens": tokens, "block": True}
            with torch.no_grad():
                for implementation in ("grouped_mm", "xgemv"):
                    block.config._experts_implementation = implementation
                    block.experts.config._experts_implementation = implementation
                    out = block(x)
                    row[implementation] = time_calls(lambda: block(x), [()], True,
                                                     5 if args.quick else 20)
                router = block.gate
                row["router"] = time_calls(lambda: router(x.view(-1, x.shape[-1])), [()], True,
                                           5 if args.quick else 20)
            row["speedup"] = row["grouped_mm"] / row["xgemv"]
            progress(f"block {name} T={tokens}: grouped_mm {row['grouped_mm'] * 1e3:.1f} us, "
                     f"xgemv {row['xgemv'] * 1e3:.1f} us, router {row['router'] * 1e3:.1f} us")
            results.append(row)
            del out
        del block
        torch.cuda.empty_cache()


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def verdicts(rows):
    lines = []
    layer_rows = [r for r in rows if not r.get("block")]
    qwen = [r["xgemv"]["speedup_vs_grouped_mm"] for r in layer_rows
            if r["model"] == "qwen3-30b-a3b" and r["tokens"] == 1 and r["routing"] == "uniform"
            and "speedup_vs_grouped_mm" in r.get("xgemv", {})]
    bf16 = [(r["xgemv"]["speedup_vs_grouped_mm"], r) for r in layer_rows
            if "speedup_vs_grouped_mm" in r.get("xgemv", {})]
    int4 = [(r["xgemv int4-g128"]["speedup_vs_grouped_mm"], r) for r in layer_rows
            if r["tokens"] <= 4 and "speedup_vs_grouped_mm" in r.get("xgemv int4-g128", {})]
    wrong = [r for r in layer_rows for impl in ("xgemv", "xgemv int4-g128")
             if "status" in r.get(impl, {})]

    def worst(pairs):
        value, row = min(pairs, key=lambda p: p[0])
        return f"{value:.2f}x: {row['model']} T={row['tokens']} {row['routing']}"
    if qwen:
        lines.append(f"moe peers verdict: xgemv bf16 over transformers grouped_mm on "
                     f"qwen3-30b-a3b experts at T=1: {qwen[0]:.2f}x (target 2.5x)")
    def against(pairs, what, target, target_text):
        if pairs:
            met = [p for p in pairs if p[0] >= target]
            lines.append(f"moe peers verdict: {what}: {geometric_mean([p[0] for p in pairs]):.2f}x "
                         f"geo-mean, worst {worst(pairs)}; {target_text}: "
                         f"{'yes' if len(met) == len(pairs) else 'NO'} ({len(met)}/{len(pairs)})")
    against(bf16, "xgemv bf16 over grouped_mm, every case", 1.0, "never slower")
    against(int4, "xgemv int4-g128 over bf16 grouped_mm at T=1..4", 3.0, ">= 3x")
    blocks = [r for r in rows if r.get("block")]
    if blocks:
        lines.append("moe peers verdict: whole MoE blocks in a graph, xgemv over grouped_mm: "
                     + ", ".join(f"{r['model']} T={r['tokens']} {r['speedup']:.2f}x "
                                 f"(router {100 * r['router'] / r['xgemv']:.0f}% of the block)"
                                 for r in blocks))
    if wrong:
        lines.append(f"moe peers verdict: {len(wrong)} xgemv results off the reference")
    return lines


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--tokens", default=",".join(map(str, TOKENS)))
    parser.add_argument("--routing", default="uniform", help="uniform, skewed or both")
    parser.add_argument("--quick", action="store_true", help="fewer replays, no eager timing")
    parser.add_argument("--no-blocks", action="store_true", help="skip the whole-block graphs")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--skip-exit-code", type=int, default=0)
    args = parser.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    for name in args.models:
        if name not in MODELS:
            parser.error(f"unknown model {name!r}; one of {', '.join(MODELS)}")
    args.tokens = [int(t) for t in args.tokens.split(",") if t]
    args.routing = [r for r in args.routing.split(",") if r]
    return args


def main(argv=None):
    args = parse_arguments(argv)
    if MISSING:
        print(f"moe_peers: {MISSING} is not installed; nothing measured")
        return args.skip_exit_code
    if not torch.cuda.is_available():
        print("moe_peers: no CUDA device; nothing measured")
        return args.skip_exit_code
    results = []
    with torch.inference_mode():
        for name in args.models:
            run_model(name, args, results)
        if not args.no_blocks:
            run_blocks(args, results)
    for line in verdicts(results):
        print(line)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "transformers": transformers.__version__, "results": results}, out,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
