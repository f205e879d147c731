#!/usr/bin/env python3
"""ms per token of a Llama-style decoder in PyTorch, batch 1, one decode step as one CUDA graph.

The model is written here, with random weights: token embedding, then per layer RMSNorm, a
bias-free qkv Linear, attention over a short preallocated KV cache, o, RMSNorm, gate_up, SiLU-mul,
down, with residuals; a final RMSNorm, the LM head and the greedy next token, all inside the
graph. The step is warmed up on a side stream and captured with torch.cuda.graph, the standard
way; each replay decodes one token and is timed with CUDA events (median of the replays).

    python3 bench/torch_decode.py                         # Llama-3-8B sizes, 32 layers, bf16
    python3 bench/torch_decode.py --layers 8 --json torch-decode.json
    python3 bench/torch_decode.py --compare build-gpu/interface/libxgemv_cublas.so

--compare LIB runs this script twice in child processes with the same seed and weights: plain,
then with LD_PRELOAD=LIB (the xgemv cuBLAS drop-in; XGEMV_CUBLAS_LOG unset, so no logging cost),
and reports both ms per token, the speed-up, and whether the logits of one step from the same
state agree within the dtype's rounding. It exits 1 when they do not, or when the drop-in was
not loaded in the second run (or was in the first).

--json PATH writes the bench's record format: {"run": ..., "records": [...]}, one record per run
(suite torch-decode; with --compare the plain one and the drop-in's, whose speed-up is over the
plain run and whose check is the logits'), beside xgemv-bench's results.json for plot.py.

Without torch or without a CUDA device it prints one line and exits 0 (--skip-exit-code sets
the status, 77 for CTest).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

DROPIN_NAME = "libxgemv_cublas"
# Values for a full run and for --quick (a smoke run: two layers, few replays).
FULL = {"layers": 32, "replays": 200, "warmup": 10}
QUICK = {"layers": 2, "replays": 20, "warmup": 3}
UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11}


def parse_arguments(argv):
    # No abbreviations: --compare rebuilds the children's command lines from these names.
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    model = parser.add_argument_group("model (default: Llama-3-8B)")
    model.add_argument("--hidden", type=int, default=4096)
    model.add_argument("--intermediate", type=int, default=14336)
    model.add_argument("--heads", type=int, default=32, help="query heads")
    model.add_argument("--kv-heads", type=int, default=8)
    model.add_argument("--head-dim", type=int, default=128)
    model.add_argument("--vocab", type=int, default=128256)
    model.add_argument("--layers", type=int,
                       help=f"decoder layers (default {FULL['layers']}, --quick {QUICK['layers']})")
    parser.add_argument("--context", type=int, default=128,
                        help="KV cache length; the position advances by one per token, wrapping")
    parser.add_argument("--dtype", choices=sorted(UNIT_ROUNDOFF), default="bf16")
    parser.add_argument("--replays", type=int,
                        help=f"timed replays (default {FULL['replays']}, --quick {QUICK['replays']})")
    parser.add_argument("--warmup", type=int,
                        help=f"untimed replays first (default {FULL['warmup']}, --quick "
                             f"{QUICK['warmup']})")
    parser.add_argument("--seed", type=int, default=0, help="weights, KV cache and first token")
    parser.add_argument("--quick", action="store_true", help="a smoke run: few layers and replays")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--compare", metavar="LIB",
                        help="plain run vs a run with LD_PRELOAD=LIB (the cuBLAS drop-in)")
    parser.add_argument("--logits-out", metavar="PATH",
                        help="save the logits of one step from the initial state (for --compare)")
    parser.add_argument("--skip-exit-code", type=int, default=0,
                        help="exit status without torch or a CUDA device (default 0)")
    args = parser.parse_args(argv)
    defaults = QUICK if args.quick else FULL
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.heads % args.kv_heads:
        parser.error("--heads must be a multiple of --kv-heads")
    if min(args.layers, args.context, args.replays) < 1 or args.warmup < 0:
        parser.error("--layers, --context and --replays must be >= 1, --warmup >= 0")
    return args


def build_model(torch, args):
    """The decoder on the GPU with weights drawn from the seed; returns it in eval mode."""
    nn = torch.nn
    functional = torch.nn.functional
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    device = torch.device("cuda")

    class RMSNorm(nn.Module):
        def __init__(self, size, eps=1e-5):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(size, device=device, dtype=dtype))
            self.eps = eps

        def forward(self, x):
            scale = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
            return (x.float() * scale).to(x.dtype) * self.weight

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_width = args.heads * args.head_dim
            self.kv_width = args.kv_heads * args.head_dim
            linear = lambda i, o: nn.Linear(i, o, bias=False, device=device, dtype=dtype)
            self.attention_norm = RMSNorm(args.hidden)
            self.qkv = linear(args.hidden, self.q_width + 2 * self.kv_width)
            self.o = linear(self.q_width, args.hidden)
            self.mlp_norm = RMSNorm(args.hidden)
            self.gate_up = linear(args.hidden, 2 * args.intermediate)
            self.down = linear(args.intermediate, args.hidden)
            # A cache of earlier tokens' keys and values, random so that attention is not
            # trivial; the step writes its own at `position` and attends to every slot up to it.
            shape = (1, args.kv_heads, args.context, args.head_dim)
            self.register_buffer("k_cache", torch.randn(shape, device=device, dtype=dtype))
            self.register_buffer("v_cache", torch.randn(shape, device=device, dtype=dtype))

        def attend(self, q, visible):
            group = args.heads // args.kv_heads
            expand = (1, args.kv_heads, group, args.context, args.head_dim)
            keys = self.k_cache.unsqueeze(2).expand(expand).reshape(1, args.heads, args.context,
                                                                    args.head_dim)
            values = self.v_cache.unsqueeze(2).expand(expand).reshape(1, args.heads,
                                                                      args.context, args.head_dim)
            scores = (q @ keys.transpose(-1, -2)).float() / math.sqrt(args.head_dim)
            weights = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
            return (weights.to(q.dtype) @ values).reshape(1, self.q_width)

        def forward(self, x, position, visible):
            q, k, v = self.qkv(self.attention_norm(x)).split(
                [self.q_width, self.kv_width, self.kv_width], dim=-1)
            slot = position.view(1)
            self.k_cache.index_copy_(2, slot, k.reshape(1, args.kv_heads, 1, args.head_dim))
            self.v_cache.index_copy_(2, slot, v.reshape(1, args.kv_heads, 1, args.head_dim))
            x = x + self.o(self.attend(q.reshape(1, args.heads, 1, args.head_dim), visible))
            gate, up = self.gate_up(self.mlp_norm(x)).chunk(2, dim=-1)
            return x + self.down(functional.silu(gate) * up)

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(args.vocab, args.hidden, device=device, dtype=dtype)
            self.blocks = nn.ModuleList(Block() for _ in range(args.layers))
            self.norm = RMSNorm(args.hidden)
            self.lm_head = nn.Linear(args.hidden, args.vocab, bias=False, device=device,
                                     dtype=dtype)
            # The decode state, on the device so that the graph advances it.
            first_token = torch.randint(args.vocab, (1,), device=device)
            self.register_buffer("token", first_token)
            self.register_buffer("position", torch.tensor(args.context // 2, device=device))
            self.register_buffer("slots", torch.arange(args.context, device=device))
            self.initial_state = {name: buffer.clone() for name, buffer in self.named_buffers()
                                  if name != "slots"}

        def reset(self):
            """Back to the state after construction (tokens, position, caches)."""
            buffers = dict(self.named_buffers())
            for name, value in self.initial_state.items():
                buffers[name].copy_(value)

        def step(self):
            """Decodes one token: its logits; the next token and position become the state."""
            visible = self.slots <= self.position
            x = self.embedding(self.token)
            for block in self.blocks:
                x = block(x, self.position, visible)
            logits = self.lm_head(self.norm(x))
            self.token.copy_(logits.argmax(dim=-1))
            self.position.copy_((self.position + 1) % args.context)
            return logits

    torch.manual_seed(args.seed)
    return Decoder().eval()


def kernel_census(torch, graph, replays=3):
    """Kernels per replay and how many of them are xgemv's (by namespace), from the profiler:
    evidence of who served the graph's products, since the drop-in runs without its log. An
    error text instead where the profiler cannot record kernels (it is optional here).
    """
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as profiler:
            for _ in range(replays):
                graph.replay()
            torch.cuda.synchronize()
        names = [event.name for event in profiler.events()
                 if event.device_type == torch.autograd.DeviceType.CUDA
                 and not event.name.startswith(("Memcpy", "Memset"))]
    except Exception as error:  # the census is optional: any failure leaves the timing
        return {"error": f"{type(error).__name__}: {error}"}
    if not names:
        return {"error": "the profiler recorded no kernels"}
    # xgemv's kernels live in namespace xgemv: "xgemv::" demangled, "_ZN5xgemv" mangled.
    xgemv = sum("xgemv::" in name or "_ZN5xgemv" in name for name in names)
    return {"per_token": len(names) / replays, "xgemv_per_token": xgemv / replays}


def census_text(census):
    if "error" in census:
        return f"kernels unknown ({census['error']})"
    return (f"{census['per_token']:.0f} kernels per token, {census['xgemv_per_token']:.0f} of "
            f"them xgemv's")


def measure(torch, args):
    """Builds, captures and times the decoder; the results as a dict."""
    model = build_model(torch, args)
    with torch.no_grad():
        # The standard way: warm-up steps on a side stream, then the capture.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = model.step()

        # One step from the initial state: the logits that a second run must reproduce.
        model.reset()
        graph.replay()
        torch.cuda.synchronize()
        first_logits = logits.float().cpu()
        if not torch.isfinite(first_logits).all():
            raise RuntimeError("the logits of the first step are not finite")

        for _ in range(args.warmup):
            graph.replay()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(args.replays)]
        for start, stop in events:
            start.record()
            graph.replay()
            stop.record()
        torch.cuda.synchronize()
        census = kernel_census(torch, graph)
    ms = sorted(start.elapsed_time(stop) for start, stop in events)
    # Every weight but the embedding table (one row of it per token) is read once per token.
    weight_bytes = sum(p.numel() * p.element_size() for name, p in model.named_parameters()
                       if not name.startswith("embedding."))
    median_ms = statistics.median(ms)
    with open("/proc/self/maps") as maps:
        dropin_loaded = DROPIN_NAME in maps.read()
    preload = os.environ.get("LD_PRELOAD", "")
    tag = f"{args.layers} layers of hidden {args.hidden}"
    record = {
        "suite": "torch-decode", "case": f"{tag} {args.dtype}", "tag": tag, "dtype": args.dtype,
        "format": args.dtype, "op": "T", "m": 0, "n": 0, "nrhs": 1, "layout": "",
        "layers": args.layers, "model_layers": args.layers, "gemvs": 4 * args.layers + 1,
        "P": 1, "matrix_bytes": weight_bytes, "bytes": weight_bytes,
        "lib": f"torch+{os.path.basename(preload)}" if preload else "torch",
        "function": f"torch.cuda.graph, {census_text(census)}", "mode": "graph", "status": "ok",
        "checked": 0, "failed_checks": 0, "max_error": None, "tolerance": None, "worst": "",
        "calls_per_batch": 1, "batches": args.replays, "kernels": int(census.get("per_token", 0)),
        "us": 1e3 * median_ms,
        "spread_pct": 100 * (ms[3 * len(ms) // 4] - ms[len(ms) // 4]) / median_ms,
        "GBps": weight_bytes / median_ms / 1e6, "bound_GBps": None, "pct_bound": None,
        "speedup": None, "t_over_t1": None,
    }
    run = {
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "command": " ".join(sys.argv), "seed": args.seed,
        "model": {"hidden": args.hidden, "intermediate": args.intermediate, "heads": args.heads,
                  "kv_heads": args.kv_heads, "head_dim": args.head_dim, "vocab": args.vocab,
                  "layers": args.layers, "context": args.context},
        "warmup_replays": args.warmup, "ld_preload": preload, "dropin_loaded": dropin_loaded,
        "xgemv_kernels_per_token": census.get("xgemv_per_token"),
    }
    return {"run": run, "records": [record]}, first_logits


def describe(result):
    record, run = result["records"][0], result["run"]
    return (f"{record['us'] / 1e3:.3f} ms per token (median of {record['batches']} replays, "
            f"spread {record['spread_pct']:.1f}%), {1e6 / record['us']:.1f} tokens/s, "
            f"{record['bytes'] / 1e9:.2f} GB of weights per token ({record['GBps']:.0f} GB/s), "
            f"{record['function']}; {record['case']}, {run['device']}")


def logits_difference(expected, got, args):
    """Relative L2 difference of two logit vectors and the bound a correct run stays under: the
    dtype's rounding of each GEMV's output, a random walk over the layers, a safety factor of 4.
    """
    relative = ((got - expected).norm() / expected.norm()).item()
    tolerance = 4 * UNIT_ROUNDOFF[args.dtype] * math.sqrt(args.layers + 1)
    largest = ((got - expected).abs().max() / expected.abs().max()).item()
    return {"relative_l2": relative, "max_abs_over_max_logit": largest, "tolerance": tolerance,
            "agree": math.isfinite(relative) and relative <= tolerance}


def run_child(argv, environment, label):
    completed = subprocess.run([sys.executable, os.path.abspath(__file__)] + argv,
                               env=environment, capture_output=True, text=True)
    if completed.returncode != 0:
        sys.stdout.write(completed.stdout + completed.stderr)
        raise RuntimeError(f"the {label} run exited with {completed.returncode}")


def compare(torch, args):
    """The plain and drop-in runs in child processes, side by side."""
    library = os.path.abspath(args.compare)
    if not os.path.isfile(library):
        raise RuntimeError(f"no drop-in library at {library}")
    # The children get the model and the timing, resolved; not the driver's options.
    child_argv = []
    for name in ("hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab", "layers",
                 "context", "dtype", "replays", "warmup", "seed"):
        child_argv += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    plain_environment = {k: v for k, v in os.environ.items()
                         if k not in ("LD_PRELOAD", "XGEMV_CUBLAS_LOG", "XGEMV_CUBLAS_DISABLE")}
    runs = {"plain": plain_environment,
            "dropin": dict(plain_environment, LD_PRELOAD=library)}
    results, logits = {}, {}
    with tempfile.TemporaryDirectory() as directory:
        for label, environment in runs.items():
            json_path = os.path.join(directory, f"{label}.json")
            logits_path = os.path.join(directory, f"{label}.pt")
            run_child(child_argv + ["--json", json_path, "--logits-out", logits_path],
                      environment, label)
            with open(json_path) as file:
                results[label] = json.load(file)
            logits[label] = torch.load(logits_path)
            print(f"{label:7s}: {describe(results[label])}", flush=True)

    difference = logits_difference(logits["plain"], logits["dropin"], args)
    plain, dropin = results["plain"]["records"][0], results["dropin"]["records"][0]
    speedup = plain["us"] / dropin["us"]
    dropin.update(speedup=speedup, checked=1, failed_checks=0 if difference["agree"] else 1,
                  max_error=difference["relative_l2"], tolerance=difference["tolerance"],
                  worst="logits (relative L2)",
                  status="ok" if difference["agree"] else "check failed")
    failures = []
    if results["plain"]["run"]["dropin_loaded"]:
        failures.append(f"{DROPIN_NAME} was loaded in the plain run")
    if not results["dropin"]["run"]["dropin_loaded"]:
        failures.append(f"LD_PRELOAD={library} did not load it")
    if not difference["agree"]:
        failures.append(f"the logits differ: relative L2 {difference['relative_l2']:.3e} > "
                        f"{difference['tolerance']:.3e}")
    print(f"speed-up of the drop-in: {speedup:.3f}x ({plain['us'] / 1e3:.3f} -> "
          f"{dropin['us'] / 1e3:.3f} ms per token); logits "
          f"{'agree' if difference['agree'] else 'DIFFER'}: relative L2 difference "
          f"{difference['relative_l2']:.2e} (tolerance {difference['tolerance']:.2e}), largest "
          f"{difference['max_abs_over_max_logit']:.2e} of the largest logit")
    if results["dropin"]["run"]["xgemv_kernels_per_token"] == 0:
        print("note: no xgemv kernel ran in the drop-in's replays: the graph is cuBLAS's "
              "(XGEMV_CUBLAS_LOG=1 gives the reason each call was forwarded).")
    for failure in failures:
        print(f"torch_decode.py: FAILED: {failure}")
    run = dict(results["dropin"]["run"], dropin_library=library, logits=difference,
               passed=not failures, command=" ".join(sys.argv))
    return {"run": run, "records": [plain, dropin]}, 1 if failures else 0


def main(argv=None):
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        import torch
    except ImportError:
        print("torch_decode.py: skipped (torch is not installed)")
        return args.skip_exit_code
    if not torch.cuda.is_available():
        print("torch_decode.py: skipped (no CUDA device)")
        return args.skip_exit_code

    if args.compare:
        summary, status = compare(torch, args)
    else:
        summary, first_logits = measure(torch, args)
        status = 0
        print(f"torch_decode: {describe(summary)}")
        if args.logits_out:
            torch.save(first_logits, args.logits_out)
    if args.json:
        with open(args.json, "w") as file:
            json.dump(summary, file, indent=1)
            file.write("\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
