#!/usr/bin/env python3
"""PyTorch under the cuBLAS drop-in.

torch.mv in fp32 / fp16 / bf16, torch.nn.functional.linear on a vector and x @ W.T computed in
two child processes, one plain and one under LD_PRELOAD=libxgemv_cublas.so with
XGEMV_CUBLAS_LOG=1. The results must match (exactly on small-integer data, within the type's
rounding on random data), and the log must show xgemv serving cublasSgemv_v2 (fp32 torch.mv)
and cublasGemmEx (the fp16 / bf16 matrix-vector products).

Then a decode-like step of GEMVs captured the way PyTorch users capture (warm-up on a side
stream, then torch.cuda.graph on PyTorch's own capture stream, which the drop-in first meets
during the capture): every GEMV logged inside the capture must be xgemv's, and the replayed
results must match the eager ones and the plain run's.

Then a decode step for a batch of 4 sequences (bias-free Linear layers on an input of shape
(4, hidden), fp32 / fp16 / bf16): the results must match the plain run's for all three types,
and every GEMM (cublasGemmEx for fp16 / bf16, cublasSgemm_v2 for fp32, ops T,N) must be logged
as one xgemv problem of 4 vectors ("nrhs=4").

Then Linear layers with a bias (PyTorch fuses the bias into a cublasLtMatmul; PyTorch 2.11 does
so for a single row too), fp16 / bf16 on 1 and 4 rows, 2-D and 3-D inputs, and a
small random-weight Hugging Face Qwen2 (biased q/k/v projections) in decode steps at batch 1
and 4:
every call logged there must be xgemv's, the biased 4-row ones as cublasLtMatmul problems of 4
vectors with the bias ("nrhs=4 bias"), and the results must match the plain run's.

usage: torch_dropin_test.py path/to/libxgemv_cublas.so
Exits 77 (skipped) without torch or without a CUDA device.
"""
import os
import subprocess
import sys
import tempfile

SKIPPED = 77


def products(torch):
    """Every matrix-vector product checked, by name."""
    import torch.nn.functional as F

    generator = torch.Generator(device="cuda").manual_seed(7)
    results = {}
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        name = str(dtype).replace("torch.", "")
        for m, n in ((1, 1), (37, 53), (1024, 4096), (4096, 11)):
            # Small integers: exact in every type and summation order.
            w_int = torch.randint(-2, 3, (m, n), device="cuda", generator=generator).to(dtype)
            x_int = torch.randint(-2, 3, (n,), device="cuda", generator=generator).to(dtype)
            w = torch.randn(m, n, device="cuda", generator=generator).to(dtype)
            x = torch.randn(n, device="cuda", generator=generator).to(dtype)
            results[f"mv {name} {m}x{n} integers"] = torch.mv(w_int, x_int)
            results[f"mv {name} {m}x{n}"] = torch.mv(w, x)
            results[f"linear {name} {m}x{n}"] = F.linear(x, w)
            results[f"x @ W.T {name} {m}x{n}"] = x.unsqueeze(0) @ w.T
            results[f"W.T @ y {name} {m}x{n}"] = torch.mv(w.T, torch.ones(m, device="cuda",
                                                                           dtype=dtype))
    torch.cuda.synchronize()
    return {key: value.float().cpu() for key, value in results.items()}


CAPTURE_BEGIN, CAPTURE_END = "torch_dropin_test: capture begins", "torch_dropin_test: capture ends"


def captured_step(torch):
    """GEMVs of a decode step in a CUDA graph captured the standard way, replayed, beside the
    same step run eagerly afterwards."""
    import torch.nn.functional as F

    generator = torch.Generator(device="cuda").manual_seed(11)
    layers = []
    for dtype in (torch.bfloat16, torch.float16):
        for out_features, in_features in ((3072, 1024), (1024, 1024), (5632, 1024), (1024, 2816)):
            weight = torch.randn(out_features, in_features, device="cuda", generator=generator)
            layers.append(weight.to(dtype))
    fp32_weight = torch.randn(2048, 1024, device="cuda", generator=generator)
    inputs = {w.shape[1]: {d: torch.randn(w.shape[1], device="cuda", generator=generator).to(d)
                           for d in (torch.bfloat16, torch.float16)} for w in layers}
    fp32_input = torch.randn(1024, device="cuda", generator=generator)

    def step():
        outputs = [F.linear(inputs[w.shape[1]][w.dtype], w) for w in layers]
        outputs.append(torch.mv(fp32_weight, fp32_input))
        return outputs

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    os.write(2, (CAPTURE_BEGIN + "\n").encode())
    with torch.cuda.graph(graph):
        graph_outputs = step()
    os.write(2, (CAPTURE_END + "\n").encode())
    graph.replay()
    graph.replay()
    eager_outputs = step()
    torch.cuda.synchronize()
    results = {}
    for i, (replayed, eager) in enumerate(zip(graph_outputs, eager_outputs)):
        results[f"graph step {i} {str(eager.dtype).replace('torch.', '')} replayed"] = replayed
        results[f"graph step {i} {str(eager.dtype).replace('torch.', '')} eager"] = eager
    return {key: value.float().cpu() for key, value in results.items()}


BATCH = 4
BATCH_BEGIN = "torch_dropin_test: batch decode begins"
BATCH_END = "torch_dropin_test: batch decode ends"


def batch_decode(torch):
    """A decode step for BATCH sequences at once: a small stack of bias-free Linear layers (an
    MLP block, twice) on an input of shape (BATCH, hidden), in fp32 / fp16 / bf16, and one layer
    on small integers (exact). Each layer is one GEMM whose C has BATCH columns."""
    generator = torch.Generator(device="cuda").manual_seed(13)
    hidden, inner = 1024, 2816
    results = {}
    os.write(2, (BATCH_BEGIN + "\n").encode())
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        name = str(dtype).replace("torch.", "")
        layers = []
        for _ in range(2):
            layers += [torch.nn.Linear(hidden, inner, bias=False), torch.nn.SiLU(),
                       torch.nn.Linear(inner, hidden, bias=False)]
        decoder = torch.nn.Sequential(*layers).to(device="cuda", dtype=dtype)
        with torch.no_grad():
            for layer in decoder:
                if isinstance(layer, torch.nn.Linear):
                    fan_in = layer.weight.shape[1]
                    layer.weight.copy_(torch.randn(layer.weight.shape, device="cuda",
                                                   generator=generator) / fan_in ** 0.5)
            hidden_states = torch.randn(BATCH, hidden, device="cuda", generator=generator).to(dtype)
            for i, layer in enumerate(decoder):
                hidden_states = layer(hidden_states)
                results[f"batch decode layer {i} {name} out"] = hidden_states
            weight = torch.randint(-2, 3, (inner, hidden), device="cuda", generator=generator)
            tokens = torch.randint(-2, 3, (BATCH, hidden), device="cuda", generator=generator)
            results[f"batch decode {name} integers"] = torch.nn.functional.linear(
                tokens.to(dtype), weight.to(dtype))
    torch.cuda.synchronize()
    os.write(2, (BATCH_END + "\n").encode())
    return {key: value.float().cpu() for key, value in results.items()}


BIAS_BEGIN = "torch_dropin_test: linear with bias begins"
BIAS_END = "torch_dropin_test: linear with bias ends"


def biased_linears(torch):
    """Linear layers with a bias on 1 and BATCH rows, and a small Qwen2 decoding."""
    import torch.nn.functional as F

    generator = torch.Generator(device="cuda").manual_seed(17)
    results = {}
    os.write(2, (BIAS_BEGIN + "\n").encode())
    for dtype in (torch.float16, torch.bfloat16):
        name = str(dtype).replace("torch.", "")
        for out_features, in_features in ((1536, 1024), (256, 1024), (1000, 333)):
            weight = torch.randint(-2, 3, (out_features, in_features), device="cuda",
                                   generator=generator).to(dtype)
            bias = torch.randint(-2, 3, (out_features,), device="cuda",
                                 generator=generator).to(dtype)
            for shape in ((1, in_features), (BATCH, in_features), (1, BATCH, in_features)):
                tokens = torch.randint(-2, 3, shape, device="cuda", generator=generator)
                key = f"linear with bias {name} {out_features}x{in_features} {shape} integers"
                results[key] = F.linear(tokens.to(dtype), weight, bias)
    results.update(qwen2_decode(torch))
    torch.cuda.synchronize()
    os.write(2, (BIAS_END + "\n").encode())
    return {key: value.float().cpu() for key, value in results.items()}


def qwen2_decode(torch):
    """Decode steps of a small random-weight Qwen2 (biased q/k/v) at batch 1 and BATCH, fed the
    same random tokens in both runs (argmax could part on a near tie); its logits. Nothing
    without transformers."""
    try:
        from transformers import Qwen2Config, Qwen2ForCausalLM
    except ImportError:
        print("qwen2 decode: transformers is not installed, left out")
        return {}
    torch.manual_seed(19)
    config = Qwen2Config(vocab_size=1000, hidden_size=256, intermediate_size=704,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=256)
    model = Qwen2ForCausalLM(config).to(device="cuda", dtype=torch.bfloat16).eval()
    results = {}
    with torch.no_grad():
        for batch in (1, BATCH):
            fed = torch.randint(0, config.vocab_size, (batch, 4), device="cuda")
            past = None
            for step in range(fed.shape[1]):
                output = model(input_ids=fed[:, step:step + 1], past_key_values=past,
                               use_cache=True)
                past = output.past_key_values
                results[f"qwen2 batch {batch} step {step} bfloat16 logits"] = output.logits[:, -1]
    return results


def child(output):
    import torch

    # fp32 accumulation all the way in cuBLAS too (no fp16 / bf16 partial sums in split-K):
    # products of small integers are then exact in both runs.
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    results = products(torch)
    results.update(captured_step(torch))
    results.update(batch_decode(torch))
    results.update(biased_linears(torch))
    torch.save(results, output)
    return 0


def run_child(script, output, environment):
    completed = subprocess.run([sys.executable, script, "--child", output], env=environment,
                               capture_output=True, text=True)
    sys.stdout.write(completed.stdout)
    if completed.returncode != 0:
        sys.stdout.write(completed.stderr)
        raise RuntimeError(f"child exited with {completed.returncode}")
    return completed.stderr


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    try:
        import torch
    except ImportError:
        print("SKIPPED: torch is not installed")
        return SKIPPED
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        return SKIPPED

    dropin = os.path.abspath(sys.argv[1])
    script = os.path.abspath(__file__)
    plain_environment = {k: v for k, v in os.environ.items()
                         if k not in ("LD_PRELOAD", "XGEMV_CUBLAS_LOG", "XGEMV_CUBLAS_DISABLE")}
    preload_environment = dict(plain_environment, LD_PRELOAD=dropin, XGEMV_CUBLAS_LOG="1")
    with tempfile.TemporaryDirectory() as directory:
        plain_file = os.path.join(directory, "plain.pt")
        preload_file = os.path.join(directory, "preload.pt")
        plain_log = run_child(script, plain_file, plain_environment)
        log = run_child(script, preload_file, preload_environment)
        plain, preloaded = torch.load(plain_file), torch.load(preload_file)

    failures = []
    if "xgemv_cublas:" in plain_log:
        failures.append("the plain run shows the drop-in's log")
    tolerance = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
    for key, expected in plain.items():
        got = preloaded[key]
        if "integers" in key:
            ok = torch.equal(got, expected)
        else:
            dtype = key.split()[-2]
            scale = expected.abs().max().item() + 1e-30
            ok = (got - expected).abs().max().item() <= tolerance[dtype] * scale * 4
        if not ok:
            failures.append(f"{key}: max difference {(got - expected).abs().max().item()}")

    served = {line.split(" -> ")[0].split(": ", 1)[1] for line in log.splitlines()
              if line.startswith("xgemv_cublas:") and " -> xgemv (" in line}
    print("served by xgemv:", ", ".join(sorted(served)) or "nothing")
    for entry in ("cublasSgemv_v2", "cublasGemmEx"):
        if entry not in served:
            failures.append(f"the log shows no {entry} served by xgemv")

    # Inside the capture every GEMV is xgemv's, and the replays match the eager step.
    lines = log.splitlines()
    if CAPTURE_BEGIN in lines and CAPTURE_END in lines:
        inside = [line for line in lines[lines.index(CAPTURE_BEGIN) + 1:lines.index(CAPTURE_END)]
                  if line.startswith("xgemv_cublas:") and " -> " in line]
        forwarded = [line for line in inside if " -> xgemv (" not in line]
        print(f"captured the standard way: {len(inside) - len(forwarded)} of {len(inside)} "
              "GEMVs served by xgemv")
        if not inside:
            failures.append("no GEMV was logged inside the capture")
        failures.extend(f"forwarded inside the capture: {line}" for line in forwarded)
    else:
        failures.append("the capture markers are missing from the drop-in run's log")
    # The batch decode: every GEMM is xgemv's, one problem of BATCH vectors each: the fp16 /
    # bf16 ones (cublasGemmEx) and the fp32 ones (cublasSgemm_v2, at most 8 vectors).
    if BATCH_BEGIN in lines and BATCH_END in lines:
        inside = [line for line in lines[lines.index(BATCH_BEGIN) + 1:lines.index(BATCH_END)]
                  if line.startswith("xgemv_cublas:") and " -> " in line]

        def entry_of(line):
            return line.split(" -> ")[0].split(": ", 1)[1]

        batched = [line for line in inside if " -> xgemv (" in line and f" nrhs={BATCH} " in line]
        fp32 = [line for line in batched if entry_of(line) == "cublasSgemm_v2"]
        print(f"batch of {BATCH}: {len(batched)} of {len(inside)} GEMMs served by xgemv with "
              f"{BATCH} vectors, {len(fp32)} of them fp32")
        # 4 Linear layers and 1 integer layer for each of the 3 types: 15 GEMMs, 5 in fp32.
        if len(inside) != 15:
            failures.append(f"batch decode: {len(inside)} GEMMs logged, expected 15")
        if len(fp32) != 5:
            failures.append(f"batch decode: {len(fp32)} cublasSgemm_v2 served with {BATCH} "
                            "vectors, expected 5")
        failures.extend(f"batch decode, not an xgemv problem of {BATCH} vectors: {line}"
                        for line in inside if line not in batched)
    else:
        failures.append("the batch decode markers are missing from the drop-in run's log")
    # Linear with bias: every call is xgemv's; on BATCH rows a cublasLtMatmul problem of BATCH
    # vectors with the bias.
    if BIAS_BEGIN in lines and BIAS_END in lines:
        inside = [line for line in lines[lines.index(BIAS_BEGIN) + 1:lines.index(BIAS_END)]
                  if line.startswith("xgemv_cublas:") and " -> " in line]
        served_lt = [line for line in inside if line.startswith("xgemv_cublas: cublasLtMatmul -> "
                                                                "xgemv (") and " bias " in line]
        print(f"linear with bias: {len(inside) - len([l for l in inside if ' -> xgemv (' not in l])}"
              f" of {len(inside)} calls served by xgemv, {len(served_lt)} of them cublasLtMatmul "
              "with the bias")
        failures.extend(f"linear with bias, not served by xgemv: {line}"
                        for line in inside if " -> xgemv (" not in line)
        # The calls of BATCH rows: 3 layers x 2 types x 2 inputs, and the Qwen2's 3 biased
        # projections per layer in each of its 4 steps at batch BATCH (where transformers is
        # there). (PyTorch 2.11 sends the single rows through cublasLtMatmul as well.)
        expected = 12 + (2 * 3 * 4 if any(k.startswith("qwen2") for k in plain) else 0)
        batched = [line for line in served_lt if f" nrhs={BATCH} bias " in line]
        if len(batched) != expected:
            failures.append(f"linear with bias: {len(batched)} cublasLtMatmul calls served with "
                            f"{BATCH} vectors and the bias, expected {expected}")
    else:
        failures.append("the linear-with-bias markers are missing from the drop-in run's log")
    for key in (k for k in preloaded if k.endswith(" replayed")):
        eager = preloaded[key.replace(" replayed", " eager")]
        dtype = key.split()[-2]
        scale = eager.abs().max().item() + 1e-30
        if (preloaded[key] - eager).abs().max().item() > tolerance[dtype] * scale * 4:
            failures.append(f"{key}: the replay differs from the eager step")

    for failure in failures:
        print("FAIL", failure)
    print(f"{'FAILED' if failures else 'PASSED'}: {len(plain)} products compared, "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
