"""python -m xgemv.demo: a Hugging Face decoder of a published model's shape, with random weights
(no download), decoding in a CUDA graph with plain PyTorch, with quantize_(model, "bf16") and
with each quantized format; prints ms per token, the speed-up over plain PyTorch and how close
the logits are to an fp32 run of the same weights.

    python -m xgemv.demo                              # Llama-3-8B shape, batch 1
    python -m xgemv.demo --model qwen2.5-7b --batch 4 --formats bf16,int4-g128
    python -m xgemv.demo --layers 4 --json demo.json  # fewer layers, results as JSON

Each variant decodes `--replays` tokens from one captured decode step (the standard way: warm-up
on a side stream, torch.cuda.graph, a static cache); the time per token is the median replay,
timed with CUDA events. Eager decode (no graph) is timed too. Agreement: the same prompt and the
same next tokens fed to every variant and to fp32 runs; the largest logit difference over the
largest fp32 logit, and the share of steps whose top token is the fp32 run's. Two fp32 runs:
one of the values the variant computes with (a quantized model's dequantized weights: the
error of the kernels), one of the original bf16 weights (with the error of quantization, which
random weights through many layers magnify far beyond a trained model's).
"""
import argparse
import copy
import json
import statistics
import sys
import time

import torch

import xgemv

MODELS = {
    "llama3-8b": ("LlamaConfig", dict(hidden_size=4096, intermediate_size=14336,
                                      num_hidden_layers=32, num_attention_heads=32,
                                      num_key_value_heads=8, vocab_size=128256,
                                      rope_theta=500000.0, max_position_embeddings=8192)),
    "qwen2.5-7b": ("Qwen2Config", dict(hidden_size=3584, intermediate_size=18944,
                                       num_hidden_layers=28, num_attention_heads=28,
                                       num_key_value_heads=4, vocab_size=152064,
                                       rope_theta=1000000.0, max_position_embeddings=32768)),
    "tiny": ("LlamaConfig", dict(hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
                                 num_attention_heads=8, num_key_value_heads=4, vocab_size=4096)),
    # Mixtures of experts: every layer's experts a Hugging Face experts module.
    "qwen3-30b-a3b": ("Qwen3MoeConfig", dict(hidden_size=2048, intermediate_size=6144,
                                             moe_intermediate_size=768, num_experts=128,
                                             num_experts_per_tok=8, norm_topk_prob=True,
                                             num_hidden_layers=48, num_attention_heads=32,
                                             num_key_value_heads=4, head_dim=128,
                                             vocab_size=151936, rope_theta=1000000.0,
                                             max_position_embeddings=40960)),
    "mixtral-8x7b": ("MixtralConfig", dict(hidden_size=4096, intermediate_size=14336,
                                           num_local_experts=8, num_experts_per_tok=2,
                                           num_hidden_layers=32, num_attention_heads=32,
                                           num_key_value_heads=8, vocab_size=32000,
                                           rope_theta=1000000.0, max_position_embeddings=32768)),
    "tiny-moe": ("Qwen3MoeConfig", dict(hidden_size=256, intermediate_size=512,
                                        moe_intermediate_size=128, num_experts=16,
                                        num_experts_per_tok=4, norm_topk_prob=True,
                                        num_hidden_layers=2, num_attention_heads=4,
                                        num_key_value_heads=2, head_dim=64, vocab_size=4096)),
}
MODEL_CLASSES = {"LlamaConfig": "LlamaForCausalLM", "Qwen2Config": "Qwen2ForCausalLM",
                 "Qwen3MoeConfig": "Qwen3MoeForCausalLM", "MixtralConfig": "MixtralForCausalLM"}
PROMPT = 16


def progress(message):
    print(f"[xgemv.demo {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m xgemv.demo",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="llama3-8b")
    parser.add_argument("--layers", type=int, help="decoder layers (default: the model's)")
    parser.add_argument("--batch", type=int, default=1, help="sequences decoded together")
    parser.add_argument("--formats", default="bf16,int4-g128,int8,fp8",
                        help="comma-separated: bf16 (xgemv.nn.Linear) and quantized formats "
                             f"({', '.join(xgemv.FORMAT_NAMES)})")
    parser.add_argument("--replays", type=int, default=100, help="timed graph replays")
    parser.add_argument("--eager-tokens", type=int, default=30, help="timed eager steps")
    parser.add_argument("--early-start", action="store_true",
                        help="xgemv's kernels load weights before the kernel ahead of them has "
                             "finished (xgemv.set_early_start; measured slower in these "
                             "graphs, where the kernels between the GEMVs are PyTorch's)")
    parser.add_argument("--check-tokens", type=int, default=8, help="steps compared with fp32")
    parser.add_argument("--no-reference", action="store_true",
                        help="no fp32 runs (a large model and its fp32 copy need not fit)")
    parser.add_argument("--profile", action="store_true",
                        help="also print where an eager step's GPU time goes, by kernel kind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    args = parser.parse_args(argv)
    args.formats = [f for f in args.formats.split(",") if f]
    for name in args.formats:
        if name != "bf16":
            xgemv.parse_format(name)
    return args


def build_model(args):
    import transformers
    config_name, sizes = MODELS[args.model]
    sizes = dict(sizes, tie_word_embeddings=False, attn_implementation="sdpa")
    if args.layers:
        sizes["num_hidden_layers"] = args.layers
    config = getattr(transformers, config_name)(**sizes)
    torch.manual_seed(args.seed)
    with torch.device("cuda"):
        model = getattr(transformers, MODEL_CLASSES[config_name])(config)
    return model.to(torch.bfloat16).eval()


def new_cache(model, batch, length):
    from transformers import StaticCache
    try:
        return StaticCache(config=model.config, max_cache_len=length)
    except TypeError:  # transformers releases that want the batch size and device up front
        return StaticCache(config=model.config, max_batch_size=batch, max_cache_len=length,
                           device="cuda", dtype=next(model.parameters()).dtype)


class Decoder:
    """One model's decode: a prompt through a static cache, then one-token steps, eager or as
    one captured CUDA graph that advances the position itself."""

    def __init__(self, model, prompt, length):
        self.model, self.batch = model, prompt.shape[0]
        self.cache = new_cache(model, self.batch, length)
        self.model(input_ids=prompt, past_key_values=self.cache, use_cache=True,
                   cache_position=torch.arange(PROMPT, device="cuda"))
        self.token = torch.zeros((self.batch, 1), dtype=torch.long, device="cuda")
        self.position = torch.full((1,), PROMPT, dtype=torch.long, device="cuda")
        self.logits = None
        self.graph = None

    def _step(self):
        out = self.model(input_ids=self.token, past_key_values=self.cache, use_cache=True,
                         cache_position=self.position,
                         position_ids=self.position.view(1, 1).expand(self.batch, 1))
        self.logits = out.logits[:, -1]
        self.position.add_(1)

    def capture(self):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                self._step()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self._step()

    def step(self):
        self.graph.replay() if self.graph else self._step()

    def logits_for(self, tokens):
        """Logits of each step fed tokens[:, t] (from the prompt's end), as fp32 on the host."""
        result = []
        for t in range(tokens.shape[1]):
            self.token.copy_(tokens[:, t:t + 1])
            self.step()
            result.append(self.logits.float().cpu())
        return torch.stack(result, 1)

    def time_graph(self, replays):
        times = []
        for _ in range(replays):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            self.graph.replay()
            end.record()
            times.append((start, end))
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in times)

    def time_eager(self, steps):
        times = []
        for _ in range(steps):
            torch.cuda.synchronize()
            start = time.perf_counter()
            self._step()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)


# Kernel kinds of a decode step, by the first pattern a kernel's name contains.
KERNEL_KINDS = (("experts (xgemv)", ("moe_mma", "moe_qmma")),
                ("experts (grouped GEMM)", ("grouped",)),
                ("attention", ("flash", "fmha", "attention", "sdpa", "efficient")),
                ("GEMV and GEMM", ("gemv", "gemm", "cutlass", "xmma", "nvjet", "mma")),
                ("softmax and top-k", ("softmax", "topk", "sort", "radix")))


def step_profile(decoder, steps=5):
    """GPU time per eager step by kernel kind, in microseconds (kernels only, not gaps)."""
    from torch.profiler import ProfilerActivity, profile
    decoder._step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            decoder._step()
        torch.cuda.synchronize()
    kinds = dict.fromkeys([kind for kind, _ in KERNEL_KINDS] + ["other"], 0.0)
    for event in prof.key_averages():
        time_us = getattr(event, "self_device_time_total", 0.0)
        if time_us <= 0:
            continue
        name = event.key.lower()
        kind = next((k for k, patterns in KERNEL_KINDS if any(p in name for p in patterns)),
                    "other")
        kinds[kind] += time_us / steps
    return kinds


def agreement(logits, reference):
    error = (logits - reference).abs().max() / reference.abs().max()
    top = (logits.argmax(-1) == reference.argmax(-1)).float().mean()
    return error.item(), top.item()


def cache_length(args):
    """One cache length for every variant and the fp32 run, so that all see the same cache."""
    return PROMPT + args.check_tokens + args.eager_tokens + args.replays + 8


class ReferenceExperts(torch.nn.Module):
    """An xgemv.nn.Experts in plain PyTorch, its weights dense (quantized ones dequantized):
    each token's experts one after the other."""

    def __init__(self, experts):
        super().__init__()
        self.gate_up = torch.nn.Parameter(experts.gate_up.dequantize(torch.float32), False)
        self.down = torch.nn.Parameter(experts.down.dequantize(torch.float32), False)
        self.gate_up_bias, self.down_bias = experts.gate_up_proj_bias, experts.down_proj_bias
        self.activation, self.alpha, self.limit = experts.activation, experts.alpha, experts.limit

    def forward(self, x, top_k_index, top_k_weights):
        out = torch.zeros(x.shape[0], self.down.shape[1], dtype=x.dtype, device=x.device)
        for t in range(x.shape[0]):
            for j in range(top_k_index.shape[1]):
                e = int(top_k_index[t, j])
                if not 0 <= e < self.gate_up.shape[0]:
                    continue
                gate_up = self.gate_up[e].to(x.dtype) @ x[t]
                if self.gate_up_bias is not None:
                    gate_up = gate_up + self.gate_up_bias[e].to(x.dtype)
                if self.activation == "swiglu":
                    gate, up = gate_up.chunk(2)
                    h = torch.nn.functional.silu(gate) * up
                else:
                    gate = gate_up[0::2].clamp(max=self.limit)
                    up = gate_up[1::2].clamp(-self.limit, self.limit)
                    h = (up + 1) * gate * torch.sigmoid(self.alpha * gate)
                y = self.down[e].to(x.dtype) @ h
                if self.down_bias is not None:
                    y = y + self.down_bias[e].to(x.dtype)
                out[t] += top_k_weights[t, j].to(x.dtype) * y
        return out


def fp32_logits(model, prompt, tokens, args):
    """Logits of an fp32 copy of model, its quantized layers replaced by their dequantized
    values and xgemv's experts by plain PyTorch ones."""
    dense = copy.deepcopy(model)
    for name, module in list(dense.named_modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, xgemv.nn.Experts):
                setattr(module, child_name, ReferenceExperts(child))
            elif isinstance(child, xgemv.nn.QuantizedLinear):
                layer = torch.nn.Linear(child.in_features, child.out_features,
                                        bias=child.bias is not None, device="cuda")
                layer.weight.copy_(child.dequantize(torch.float32))
                if child.bias is not None:
                    layer.bias.copy_(child.bias)
                setattr(module, child_name, layer)
    dense = dense.float()
    logits = Decoder(dense, prompt, cache_length(args)).logits_for(tokens)
    del dense
    torch.cuda.empty_cache()
    return logits


def run_variant(name, model, prompt, tokens, reference, args):
    # The logits first, on a fresh cache (as the fp32 run's), then eager and graph timing.
    decoder = Decoder(model, prompt, cache_length(args))
    logits = decoder.logits_for(tokens)
    eager_ms = decoder.time_eager(args.eager_tokens)
    kinds = step_profile(decoder) if args.profile else None
    decoder.capture()
    graph_ms = decoder.time_graph(args.replays)
    if reference is None:
        error = top = quantized_error = quantized_top = float("nan")
    else:
        own = reference if name.endswith("bf16") else fp32_logits(model, prompt, tokens, args)
        error, top = agreement(logits, own)
        quantized_error, quantized_top = agreement(logits, reference)
    progress(f"{name}: {graph_ms:.3f} ms per token in a graph, {eager_ms:.2f} ms eager")
    if kinds is not None:
        total = sum(kinds.values())
        print(f"profile: {name}: an eager step's kernels {total:.0f} us: " + ", ".join(
            f"{kind} {us:.0f} us ({100 * us / total:.0f}%)" for kind, us in kinds.items() if us),
            flush=True)
    return {"variant": name, "graph_ms": graph_ms, "eager_ms": eager_ms, "kernel_us": kinds,
            "logits_error": error, "top1_agreement": top,
            "logits_error_vs_bf16_weights": quantized_error,
            "top1_agreement_vs_bf16_weights": quantized_top}


def main(argv=None):
    args = parse_arguments(argv)
    if not torch.cuda.is_available():
        print("xgemv.demo: needs a CUDA device, and this machine has none", file=sys.stderr)
        return 1
    xgemv.set_early_start(args.early_start)
    generator = torch.Generator(device="cuda").manual_seed(args.seed + 1)
    progress(f"building a {args.model}-shaped model with random weights (bf16)")
    with torch.inference_mode():
        model = build_model(args)
        vocab = model.config.vocab_size
        prompt = torch.randint(0, vocab, (args.batch, PROMPT), device="cuda", generator=generator)
        tokens = torch.randint(0, vocab, (args.batch, args.check_tokens), device="cuda",
                               generator=generator)
        reference = None
        if not args.no_reference:
            progress("fp32 reference logits")
            reference = fp32_logits(model, prompt, tokens, args)
        results = [run_variant("torch bf16", model, prompt, tokens, reference, args)]
        for name in args.formats:
            progress(f"quantize_(model, {name!r})")
            variant = xgemv.quantize_(copy.deepcopy(model), name)
            results.append(run_variant(f"xgemv {name}", variant, prompt, tokens, reference, args))
            del variant
            torch.cuda.empty_cache()
    plain = results[0]
    for row in results:
        row["graph_speedup"] = plain["graph_ms"] / row["graph_ms"]
        row["eager_speedup"] = plain["eager_ms"] / row["eager_ms"]
    layers = model.config.num_hidden_layers
    print(f"{args.model}-shaped, {layers} layers, batch {args.batch}, "
          f"{torch.cuda.get_device_name()}, xgemv {xgemv.__version__}, torch {torch.__version__}, "
          f"early start {'on' if args.early_start else 'off'}")
    print("logits: largest difference / largest logit, and top-1 agreement, against fp32 runs "
          "of the variant's own weight values and of the bf16 weights")
    print(f"{'variant':<22}{'graph ms/token':>15}{'speed-up':>10}{'eager ms/token':>16}"
          f"{'speed-up':>10}{'vs own fp32':>13}{'top-1':>7}{'vs bf16 fp32':>14}{'top-1':>7}")
    for row in results:
        print(f"{row['variant']:<22}{row['graph_ms']:>15.3f}{row['graph_speedup']:>9.2f}x"
              f"{row['eager_ms']:>16.2f}{row['eager_speedup']:>9.2f}x"
              f"{row['logits_error']:>13.4f}{100 * row['top1_agreement']:>6.0f}%"
              f"{row['logits_error_vs_bf16_weights']:>14.4f}"
              f"{100 * row['top1_agreement_vs_bf16_weights']:>6.0f}%")
    others = results[1:]
    print(f"demo verdict: {args.model} batch {args.batch}, per token over torch bf16: graph "
          + ", ".join(f"{r['variant'][6:]} {r['graph_speedup']:.2f}x" for r in others)
          + "; eager " + ", ".join(f"{r['variant'][6:]} {r['eager_speedup']:.2f}x" for r in others)
          + "; logits vs fp32 of the same weight values (largest difference / largest logit, "
          "top-1) " + ", ".join(f"{r['variant']} {r['logits_error']:.3f} "
                                f"{100 * r['top1_agreement']:.0f}%" for r in results))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"model": args.model, "layers": layers, "batch": args.batch,
                       "gpu": torch.cuda.get_device_name(), "xgemv": xgemv.__version__,
                       "torch": torch.__version__, "results": results}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
