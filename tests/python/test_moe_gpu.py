"""The mixture-of-experts side of the package on a CUDA device: xgemv.moe_up / moe_down against
a PyTorch reference in fp64 (every activation, biases, int32 and int64 ids, sentinels, routing
weights in fp32 and bf16), xgemv.nn.Experts from Hugging Face experts modules (Qwen3-MoE, gpt-oss)
against their own forward, whole tiny Qwen3-MoE, Mixtral and gpt-oss models with the experts
implementation "xgemv" and after quantize_ against transformers' eager output, CUDA graphs,
torch.compile, and a token's bits whatever the batch."""
import pytest
import torch
import torch.nn.functional as F

import xgemv

pytestmark = pytest.mark.gpu
transformers = pytest.importorskip("transformers")


def _random(*shape, dtype=torch.bfloat16, seed=0, scale=1.0):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(*shape, device="cuda", generator=generator) * scale).to(dtype)


def _routing(tokens, experts, k, seed, sentinel=False):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    ids = torch.rand(tokens, experts, device="cuda", generator=generator).topk(k, -1).indices
    if sentinel:
        ids[0, -1] = experts  # the expert-parallel sentinel
        ids[-1, 0] = -1
    weights = torch.softmax(torch.rand(tokens, k, device="cuda", generator=generator), -1)
    return ids, weights


def _reference_up(x, w, ids, activation, bias=None, alpha=1.702, limit=7.0):
    """[T, k, out] in fp64; rows of invalid ids NaN (not written)."""
    tokens, k = ids.shape
    experts, rows, _ = w.shape
    out_rows = rows if activation == "identity" else rows // 2
    out = torch.full((tokens, k, out_rows), float("nan"), dtype=torch.float64, device="cuda")
    for t in range(tokens):
        for j in range(k):
            e = int(ids[t, j])
            if not 0 <= e < experts:
                continue
            s = w[e].double() @ x[t].double()
            if bias is not None:
                s = s + bias[e].double()
            if activation == "identity":
                out[t, j] = s
            elif activation == "swiglu":
                g, u = s.chunk(2)
                out[t, j] = F.silu(g) * u
            else:
                g, u = s[0::2], s[1::2]
                if activation == "swiglu-clamped":
                    g, u = g.clamp(max=limit), u.clamp(-limit, limit)
                    out[t, j] = (u + 1) * g * torch.sigmoid(alpha * g)
                else:
                    out[t, j] = F.silu(g) * u
    return out


def _reference_down(h, w, ids, weights, bias=None):
    tokens, k = ids.shape
    experts, rows, _ = w.shape
    out = torch.zeros(tokens, rows, dtype=torch.float64, device="cuda")
    for t in range(tokens):
        for j in range(k):
            e = int(ids[t, j])
            if 0 <= e < experts:
                s = w[e].double() @ h[t, j].double()
                if bias is not None:
                    s = s + bias[e].double()
                out[t] += weights[t, j].double() * s
    return out


def _close(got, want, scale, tolerance):
    valid = ~torch.isnan(want)
    error = (got.double()[valid] - want[valid]).abs().max().item() if valid.any() else 0.0
    assert error <= tolerance * scale, f"error {error:.3g}, allowed {tolerance * scale:.3g}"


@pytest.mark.parametrize("activation", list(xgemv.moe.ACTIVATIONS))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("tokens, k", [(1, 4), (5, 2), (20, 3)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_moe_up_against_fp64(activation, dtype, tokens, k, with_bias):
    experts, rows, inputs = 8, 48, 96
    w = _random(experts, rows, inputs, dtype=dtype, seed=1, scale=0.2)
    x = _random(tokens, inputs, dtype=dtype, seed=2)
    bias = _random(experts, rows, dtype=dtype, seed=3) if with_bias else None
    ids, _ = _routing(tokens, experts, k, seed=4, sentinel=tokens > 1)
    h = xgemv.moe_up(x, w, ids.to(torch.int32) if tokens == 5 else ids, activation, bias=bias)
    want = _reference_up(x, w, ids, activation, bias)
    assert h.shape == want.shape and h.dtype == dtype
    _close(h, want, want.nan_to_num().abs().max().item() + 1, 2 ** -6)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("weight_dtype", ["float32", "activation"])
@pytest.mark.parametrize("tokens, k", [(1, 8), (6, 2), (33, 4)])
def test_moe_down_against_fp64(dtype, weight_dtype, tokens, k):
    experts, rows, inputs = 16, 40, 64
    w = _random(experts, rows, inputs, dtype=dtype, seed=5, scale=0.2)
    h = _random(tokens, k, inputs, dtype=dtype, seed=6)
    bias = _random(experts, rows, dtype=dtype, seed=7)
    ids, weights = _routing(tokens, experts, k, seed=8, sentinel=tokens > 1)
    if weight_dtype == "activation":
        weights = weights.to(dtype)
    y = xgemv.moe_down(h, w, ids, weights, bias=bias)
    want = _reference_down(h, w, ids, weights, bias)
    assert y.shape == (tokens, rows) and y.dtype == dtype
    _close(y, want, want.abs().max().item() + 1, 2 ** -6)


def _qwen3_moe_experts(experts=16, hidden=128, intermediate=64):
    from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeExperts
    config = transformers.Qwen3MoeConfig(hidden_size=hidden, moe_intermediate_size=intermediate,
                                         num_experts=experts)
    module = Qwen3MoeExperts(config).to(device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0, 0.1)
    return module


def _gpt_oss_experts(experts=8, hidden=128, intermediate=128):
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssExperts
    config = transformers.GptOssConfig(hidden_size=hidden, intermediate_size=intermediate,
                                       num_local_experts=experts, num_experts_per_tok=4)
    module = GptOssExperts(config).to(device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0, 0.1)  # the biases too (transformers initialises them to zero)
    return module


@pytest.mark.parametrize("make", [_qwen3_moe_experts, _gpt_oss_experts])
@pytest.mark.parametrize("qformat", [None, "int4-g64", "int8"])
def test_experts_match_the_modules_own_forward(make, qformat):
    module = make()
    experts = xgemv.nn.Experts.from_module(module, qformat)
    tokens, k = 7, 4
    x = _random(tokens, module.gate_up_proj.shape[2 if not module.is_transposed else 1],
                seed=9)
    ids, weights = _routing(tokens, module.gate_up_proj.shape[0], k, seed=10)
    weights = weights.to(torch.bfloat16)
    with torch.no_grad():
        if qformat is not None:  # the module on the experts' dequantized values
            gate_up, down = experts.gate_up.dequantize(torch.bfloat16), experts.down.dequantize(
                torch.bfloat16)
            if module.is_transposed:
                gate_up, down = gate_up.transpose(1, 2), down.transpose(1, 2)
            module.gate_up_proj.copy_(gate_up)
            module.down_proj.copy_(down)
        want = type(module).forward.__wrapped__(module, x, ids, weights).double()
        got = experts(x, ids, weights)
    assert got.shape == want.shape
    _close(got, want, want.abs().max().item(), 2 ** -5)


def _tiny_model(kind, **extra):
    sizes = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=512, max_position_embeddings=128)
    if kind == "qwen3_moe":
        config = transformers.Qwen3MoeConfig(**sizes, intermediate_size=256,
                                             moe_intermediate_size=64, num_experts=16,
                                             num_experts_per_tok=4, head_dim=32, **extra)
        cls = transformers.Qwen3MoeForCausalLM
    elif kind == "mixtral":
        config = transformers.MixtralConfig(**sizes, intermediate_size=192, num_local_experts=8,
                                            num_experts_per_tok=2, **extra)
        cls = transformers.MixtralForCausalLM
    else:
        config = transformers.GptOssConfig(**sizes, intermediate_size=64, num_local_experts=8,
                                           num_experts_per_tok=2, head_dim=32, **extra)
        cls = transformers.GptOssForCausalLM
    torch.manual_seed(0)
    model = cls(config).to(device="cuda", dtype=torch.bfloat16).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("_bias"):
                p.normal_(0, 0.1)
    return model


@pytest.mark.parametrize("kind", ["qwen3_moe", "mixtral", "gpt_oss"])
def test_experts_implementation_serves_hugging_face_models(kind):
    model = _tiny_model(kind)
    ids = torch.randint(0, 512, (2, 6), device="cuda")
    with torch.no_grad():
        model.set_experts_implementation("eager")
        want = model(ids).logits.float()
        xgemv.register_experts_implementation()
        model.set_experts_implementation("xgemv")
        got = model(ids[:1, :1]).logits.float()  # one token: decode
        got = model(ids).logits.float()
    assert (got - want).abs().max() <= 0.05 * want.abs().max()


@pytest.mark.parametrize("kind", ["qwen3_moe", "mixtral"])
@pytest.mark.parametrize("qformat", ["bf16", "int4-g64"])
def test_quantize_converts_the_experts(kind, qformat):
    model = _tiny_model(kind)
    ids = torch.randint(0, 512, (1, 5), device="cuda")
    with torch.no_grad():
        model.set_experts_implementation("eager")
        want = model(ids).logits.float()
        xgemv.quantize_(model, qformat)
        experts = [m for m in model.modules() if isinstance(m, xgemv.nn.Experts)]
        assert len(experts) == model.config.num_hidden_layers
        got = model(ids).logits.float()
    limit = 0.05 if qformat == "bf16" else 0.5  # int4: the quantization of random weights
    assert (got - want).abs().max() <= limit * want.abs().max()


def test_experts_in_a_cuda_graph_and_compiled():
    module = _qwen3_moe_experts()
    experts = xgemv.nn.Experts.from_module(module, "int8")
    x = _random(3, 128, seed=11)
    ids, weights = _routing(3, 16, 4, seed=12)
    with torch.no_grad():
        eager = experts(x, ids, weights)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            experts(x, ids, weights)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = experts(x, ids, weights)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(captured, eager)
        compiled = torch.compile(lambda a, b, c: experts(a, b, c), fullgraph=True)
        assert torch.equal(compiled(x, ids, weights), eager)


def test_a_tokens_bits_do_not_depend_on_the_batch():
    module = _qwen3_moe_experts(experts=32, hidden=256, intermediate=128)
    experts = xgemv.nn.Experts.from_module(module)
    x = _random(24, 256, seed=13)
    ids, weights = _routing(24, 32, 4, seed=14)
    with torch.no_grad():
        batch = experts(x, ids, weights)
        for t in (0, 11, 23):
            alone = experts(x[t:t + 1], ids[t:t + 1], weights[t:t + 1])
            assert torch.equal(alone[0], batch[t])
        flipped = experts(x.flip(0), ids.flip(0), weights.flip(0))
        assert torch.equal(flipped.flip(0), batch)
