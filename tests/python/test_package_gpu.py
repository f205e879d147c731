"""The package on a CUDA device: every op against a PyTorch reference in fp64, the quantized
conversions against the checkpoint-format helpers, CUDA graph capture (a thread's first call
inside one too), torch.compile, quantize_ on small Hugging Face models, and column invariance
across batch sizes."""
import copy
import gc
import threading
import weakref

import pytest
import torch
import torch.nn.functional as F

import xgemv
from xgemv import checkpoint_formats as cf

pytestmark = pytest.mark.gpu

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# Unit roundoff of the stored result and of the accumulation.
ROUNDOFF = {torch.float32: 2.0 ** -24, torch.float64: 2.0 ** -53, torch.float16: 2.0 ** -11,
            torch.bfloat16: 2.0 ** -8}
ACCUMULATION = {torch.float64: 2.0 ** -53}


def _assert_within_bound(got, reference, magnitude, dtype, inputs):
    """|got - ref| <= u_out |ref| + 2 (inputs + 2) u_acc |x| |W| (+ the smallest normal)."""
    u_acc = ACCUMULATION.get(dtype, 2.0 ** -24)
    bound = ROUNDOFF[dtype] * reference.abs() + 2 * (inputs + 2) * u_acc * magnitude + 1e-30
    error = (got.double() - reference).abs()
    worst = (error / bound).max().item()
    assert worst <= 1.0, f"error {worst:.3g} x the bound"


def _random(*shape, dtype, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=generator).to(dtype)


def _bf16_linear(inputs, outputs):
    """PyTorch's Linear of bf16 weights on the GPU, randomly initialised."""
    return torch.nn.Linear(inputs, outputs, device="cuda", dtype=torch.bfloat16)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows", [1, 2, 5, 16])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("outputs, inputs", [(96, 4096), (4096, 64), (33, 1000)])
def test_linear_against_fp64(dtype, rows, with_bias, outputs, inputs):
    x = _random(rows, inputs, dtype=dtype, seed=1)
    weight = _random(outputs, inputs, dtype=dtype, seed=2)
    bias = _random(outputs, dtype=dtype, seed=3) if with_bias else None
    y = xgemv.linear(x, weight, bias)
    assert y.shape == (rows, outputs) and y.dtype == dtype
    reference = x.double() @ weight.double().t()
    if bias is not None:
        reference += bias.double()
    magnitude = x.double().abs() @ weight.double().abs().t()
    _assert_within_bound(y, reference, magnitude, dtype, inputs)


def test_linear_shapes_and_strides():
    weight = _random(64, 128, dtype=torch.bfloat16, seed=4)
    bias = _random(64, dtype=torch.bfloat16, seed=5)
    x3 = _random(2, 3, 128, dtype=torch.bfloat16, seed=6)
    assert xgemv.linear(x3, weight, bias).shape == (2, 3, 64)
    assert torch.equal(xgemv.linear(x3, weight, bias).reshape(6, 64),
                       xgemv.linear(x3.reshape(6, 128), weight, bias))
    # Rows with a leading dimension past in_features, a weight with one too.
    wide = _random(5, 200, dtype=torch.bfloat16, seed=7)
    big_weight = _random(64, 160, dtype=torch.bfloat16, seed=8)
    assert torch.equal(xgemv.linear(wide[:, :128], big_weight[:, :128]),
                       xgemv.linear(wide[:, :128].contiguous(), big_weight[:, :128].contiguous()))
    # More than 16 rows: torch.nn.functional.linear itself.
    many = _random(17, 128, dtype=torch.bfloat16, seed=9)
    assert torch.equal(xgemv.linear(many, weight, bias), F.linear(many, weight, bias))
    assert xgemv.linear(x3[:, :0], weight).shape == (2, 0, 64)


def test_linear_under_autograd_is_torchs():
    weight = _random(32, 64, dtype=torch.float32, seed=10).requires_grad_()
    x = _random(2, 64, dtype=torch.float32, seed=11)
    y = xgemv.nn.Linear.from_linear(torch.nn.Linear(64, 32, device="cuda"))(x)
    y.sum().backward()  # the layer's parameters require grad: F.linear, with its backward
    xgemv.linear(x, weight).sum().backward()
    assert weight.grad is not None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", ["N", "T"])
@pytest.mark.parametrize("row_major", [False, True])
def test_gemv_blas_form(dtype, trans, row_major):
    base = _random(300, 70, dtype=dtype, seed=12)
    A = base if row_major else base.t().contiguous().t()  # same values, other layout
    A = A[:250, :60]  # a leading dimension past the rows or columns
    rows, cols = (60, 250) if trans == "T" else (250, 60)
    x = _random(2 * cols, dtype=dtype, seed=13)[::2]
    y = _random(3 * rows, dtype=dtype, seed=14)[::3]
    opA = A.t() if trans == "T" else A
    reference = 1.5 * (opA.double() @ x.double()) - 0.5 * y.double()
    magnitude = 1.5 * (opA.double().abs() @ x.double().abs()) + 0.5 * y.double().abs()
    out = xgemv.gemv(A, x, y, trans=trans, alpha=1.5, beta=-0.5)
    assert out is y
    _assert_within_bound(y, reference, magnitude, dtype, cols)


def test_gemv_beta_zero_does_not_read_y():
    A = _random(40, 30, dtype=torch.float32, seed=15)
    x = _random(30, dtype=torch.float32, seed=16)
    y = torch.full((40,), float("nan"), device="cuda")
    xgemv.gemv(A, x, y, beta=0.0)
    assert torch.isfinite(y).all()


QFORMATS = ["int4-g128", "int4-g32-zp", "int8", "fp8", "fp8-block"]


@pytest.mark.parametrize("qformat", QFORMATS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("rows", [1, 3, 16, 17, 64])
def test_qlinear_against_its_dequantized_weight(qformat, dtype, rows):
    layer = torch.nn.Linear(1024, 300, device="cuda", dtype=dtype)
    module = xgemv.nn.QuantizedLinear.from_linear(layer, qformat)
    x = _random(rows, 1024, dtype=dtype, seed=17)
    y = module(x)
    dense = module.dequantize().double()
    reference = x.double() @ dense.t() + layer.bias.double()
    magnitude = x.double().abs() @ dense.abs().t()
    _assert_within_bound(y, reference, magnitude, dtype, 1024)
    # Rows 17-64 in passes of 16 on the same kernels: a full pass's bits are its rows' alone.
    if rows > xgemv.MAX_ROWS:
        for first in range(0, rows - 15, 16):
            assert torch.equal(y[first:first + 16], module(x[first:first + 16]))
    # More rows (prefill): the dequantized weight and F.linear.
    many = _random(xgemv.MAX_QUANTIZED_ROWS + 1, 1024, dtype=dtype, seed=18)
    assert torch.equal(module(many), F.linear(many, module.dequantize(dtype), module.bias))


def test_quantization_error_is_small():
    layer = torch.nn.Linear(4096, 512, bias=False, device="cuda", dtype=torch.bfloat16)
    for qformat, limit in (("int4-g128", 0.15), ("int8", 0.01), ("fp8", 0.05)):
        dense = xgemv.nn.QuantizedLinear.from_linear(layer, qformat).dequantize()
        error = (dense - layer.weight.float()).norm() / layer.weight.float().norm()
        assert error < limit, (qformat, error.item())


def _int4_codes(outputs, inputs, group, seed):
    """Random 4-bit codes [out, in], zero points [out, groups] and fp16 scales [groups, out]."""
    generator = torch.Generator(device="cuda").manual_seed(seed)
    codes = torch.randint(0, 16, (outputs, inputs), device="cuda", generator=generator,
                          dtype=torch.uint8)
    zeros = torch.randint(0, 16, (outputs, inputs // group), device="cuda", generator=generator,
                          dtype=torch.uint8)
    scales = torch.rand(inputs // group, outputs, device="cuda", generator=generator).half()
    return codes, zeros, scales


@pytest.mark.parametrize("act_order", [False, True])
@pytest.mark.parametrize("zeros_minus_one", [False, True])
def test_gptq_conversion_matches_the_reference(act_order, zeros_minus_one):
    outputs, inputs, group = 256, 512, 128
    codes, zeros, scales = _int4_codes(outputs, inputs, group, seed=19)
    g_idx = None
    if act_order:
        generator = torch.Generator(device="cuda").manual_seed(190)
        g_idx = (torch.randperm(inputs, device="cuda", generator=generator) // group).int()
    qweight, qzeros = cf.gptq_pack(codes, zeros, zeros_minus_one)
    module = xgemv.nn.QuantizedLinear.from_gptq(qweight, qzeros, scales, g_idx,
                                                zeros_minus_one=zeros_minus_one)
    reference = cf.gptq_unpack(qweight, qzeros, scales, g_idx, zeros_minus_one)
    assert torch.equal(module.dequantize(), reference)
    x = _random(4, inputs, dtype=torch.float16, seed=20)
    _assert_within_bound(module(x), x.double() @ reference.double().t(),
                         x.double().abs() @ reference.double().abs().t(), torch.float16, inputs)


def test_awq_conversion_matches_the_reference():
    codes, zeros, scales = _int4_codes(128, 256, 64, seed=21)
    qweight, qzeros = cf.awq_pack(codes, zeros)
    module = xgemv.nn.QuantizedLinear.from_awq(qweight, qzeros, scales)
    assert torch.equal(module.dequantize(), cf.awq_unpack(qweight, qzeros, scales))


@pytest.mark.parametrize("kind", ["gptq", "awq"])
# The model's dtype; the checkpoint's scales and bias are fp16 either way.
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_checkpoint_layers_replace_a_models_linears(kind, dtype):
    model = torch.nn.Sequential(torch.nn.Linear(256, 128, device="cuda", dtype=dtype),
                                torch.nn.SiLU(),
                                torch.nn.Linear(128, 64, device="cuda", dtype=dtype))
    state, references = {}, {}
    for index in (0, 2):
        layer = model[index]
        codes, zeros, scales = _int4_codes(layer.out_features, layer.in_features, 64, seed=index)
        if kind == "gptq":
            qweight, qzeros = cf.gptq_pack(codes, zeros)
            references[index] = cf.gptq_unpack(qweight, qzeros, scales)
        else:
            qweight, qzeros = cf.awq_pack(codes, zeros)
            references[index] = cf.awq_unpack(qweight, qzeros, scales)
        state.update({f"{index}.qweight": qweight.cpu(), f"{index}.qzeros": qzeros.cpu(),
                      f"{index}.scales": scales.cpu(), f"{index}.bias": layer.bias.detach()})
    loader = xgemv.load_gptq_ if kind == "gptq" else xgemv.load_awq_
    assert loader(model, state) == 2
    for index in (0, 2):
        assert isinstance(model[index], xgemv.nn.QuantizedLinear)
        assert torch.equal(model[index].dequantize(), references[index])
    x = _random(3, 256, dtype=dtype, seed=28)
    with torch.inference_mode():
        hidden = F.silu(x.double() @ references[0].double().t() + model[0].bias.double())
        expected = hidden @ references[2].double().t() + model[2].bias.double()
        assert (model(x).double() - expected).abs().max() <= 0.02 * expected.abs().max()


def test_quantized_state_dict_round_trip():
    module = xgemv.nn.QuantizedLinear.from_linear(_bf16_linear(256, 64), "int4-g64-zp")
    other = xgemv.nn.QuantizedLinear.from_linear(_bf16_linear(256, 64), "int4-g64-zp")
    other.load_state_dict(module.state_dict())
    x = _random(2, 256, dtype=torch.bfloat16, seed=22)
    assert torch.equal(other(x), module(x))
    copied = copy.deepcopy(module)
    assert copied.storage.data_ptr() != module.storage.data_ptr()
    assert copied.qweight.storage is copied.storage
    del module
    assert torch.equal(copied(x), other(x))


def _capture_and_replay(step, x):
    expected = step(x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step(x)  # warm-up on a side stream, the standard way
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step(x)
    x.copy_(x * 0.5)
    expected = step(x)
    graph.replay()
    torch.cuda.synchronize()
    return out, expected


@torch.inference_mode()
def test_cuda_graph_capture_replays_every_op():
    dense = xgemv.nn.Linear.from_linear(_bf16_linear(512, 256))
    quant = xgemv.nn.QuantizedLinear.from_linear(_bf16_linear(256, 512), "int4-g128")
    A = _random(512, 64, dtype=torch.bfloat16, seed=23)

    def step(x):
        h = quant(dense(x))
        return xgemv.gemv(A, h[0], trans="T")

    out, expected = _capture_and_replay(step, _random(4, 512, dtype=torch.bfloat16, seed=24))
    assert torch.equal(out, expected)


def test_a_threads_first_call_may_be_captured():
    """Handles are per thread: a thread whose first call is inside torch.cuda.graph makes its
    handle there (xgemv_create allows it), and the replay gives the eager bits (a long
    reduction over few outputs, which xgemv splits across blocks)."""
    dense = xgemv.nn.Linear.from_linear(_bf16_linear(4096, 16))
    x = _random(1, 4096, dtype=torch.bfloat16, seed=26)
    with torch.inference_mode():
        expected = dense(x)
    outcome = {}

    def capture_in_a_new_thread():
        try:
            with torch.inference_mode():
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    outcome["out"] = dense(x)
                graph.replay()
                torch.cuda.synchronize()
        except Exception as error:  # reported by the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=capture_in_a_new_thread)
    thread.start()
    thread.join()
    assert "error" not in outcome, repr(outcome.get("error"))
    assert torch.equal(outcome["out"], expected)


@torch.inference_mode()
def test_torch_compile_fullgraph_runs_the_ops():
    dense = xgemv.nn.Linear.from_linear(_bf16_linear(512, 256))
    quant = xgemv.nn.QuantizedLinear.from_linear(_bf16_linear(256, 128), "int8")

    def step(x):
        return quant(F.silu(dense(x)))

    x = _random(3, 512, dtype=torch.bfloat16, seed=25)
    compiled = torch.compile(step, fullgraph=True)
    torch.testing.assert_close(compiled(x), step(x), rtol=0, atol=0)


@pytest.mark.parametrize("make", ["linear", "qlinear"])
def test_rows_have_the_same_bits_whatever_the_batch(make):
    layer = _bf16_linear(2048, 512)
    module = (xgemv.nn.Linear.from_linear(layer) if make == "linear"
              else xgemv.nn.QuantizedLinear.from_linear(layer, "int4-g128"))
    x = _random(16, 2048, dtype=torch.bfloat16, seed=26)
    xgemv.set_batch_invariant(True)
    try:
        with torch.inference_mode():
            full = module(x)
            for rows in range(1, 17):
                assert torch.equal(module(x[:rows]), full[:rows]), rows
    finally:
        xgemv.set_batch_invariant(False)


def _tiny_hf_model(kind, dtype=torch.bfloat16, tied=False):
    transformers = pytest.importorskip("transformers")
    common = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
                  tie_word_embeddings=tied)
    if kind == "qwen2":
        config = transformers.Qwen2Config(**common)
        model = transformers.Qwen2ForCausalLM(config)
    else:
        config = transformers.LlamaConfig(**common)
        model = transformers.LlamaForCausalLM(config)
    torch.manual_seed(27)
    return model.to("cuda", dtype).eval()


@pytest.mark.parametrize("kind", ["llama", "qwen2"])
@pytest.mark.parametrize("qformat", ["bf16", "int8", "int4-g128"])
@torch.inference_mode()
def test_quantize_serves_every_linear_of_a_hugging_face_model(kind, qformat):
    model = _tiny_hf_model(kind)
    tokens = torch.randint(0, 1000, (1, 12), device="cuda")
    reference = model(tokens).logits.float()
    xgemv.quantize_(model, qformat)
    assert not [name for name, m in model.named_modules() if type(m) is torch.nn.Linear]
    served = xgemv.nn.Linear if qformat == "bf16" else xgemv.nn.QuantizedLinear
    layers = [m for m in model.modules() if isinstance(m, served)]
    assert len(layers) == 2 * 7 + 1
    if kind == "qwen2":
        assert sum(m.bias is not None for m in layers) == 2 * 3  # q, k, v
    # Decode-sized calls (one token at a time through the cache) and the prompt (12 rows).
    logits = model(tokens).logits.float()
    tolerance = {"bf16": 0.05, "int8": 0.1, "int4-g128": 0.5}[qformat]
    assert (logits - reference).abs().max() <= tolerance * reference.abs().max()


def test_quantize_bf16_of_an_fp32_model_runs_in_bf16():
    model = _tiny_hf_model("llama", torch.float32)
    tokens = torch.randint(0, 1000, (1, 4), device="cuda")
    with torch.inference_mode():
        reference = model(tokens).logits
    xgemv.quantize_(model, "bf16")  # outside inference mode: it converts the model's parameters
    with torch.inference_mode():
        logits = model(tokens).logits
    assert logits.dtype == torch.bfloat16
    assert (logits.float() - reference).abs().max() <= 0.05 * reference.abs().max()


def test_the_ops_weights_live_no_longer_than_their_storage():
    # The op (torch.compile's path) finds the module's own weight from its storage, and keeps
    # no storage alive after the model is gone.
    module = xgemv.nn.QuantizedLinear.from_linear(_bf16_linear(256, 64), "int4-g128")
    x = _random(2, 256, dtype=torch.bfloat16, seed=31)
    m = module.qweight.metadata()
    op_result = torch.ops.xgemv.qlinear(x, module.storage, m["format"], m["outputs"], m["inputs"],
                                        m["scale_dtype"], m["permuted"], module.bias)
    assert torch.equal(op_result, module(x))
    assert xgemv.QWeight.live(module.storage, "int4", 64, 256, m["scale_dtype"],
                              False) is module.qweight
    storage = weakref.ref(module.storage)
    del module
    gc.collect()
    assert storage() is None

    bare = xgemv.nn.QuantizedLinear.from_linear(_bf16_linear(256, 64), "int8").storage
    torch.ops.xgemv.qlinear(x, bare, "int8", 64, 256, "bfloat16", False, None)
    storage = weakref.ref(bare)
    del bare
    gc.collect()
    assert storage() is None


def test_quantize_serves_a_tied_lm_head():
    model = _tiny_hf_model("llama", tied=True)
    embedding = model.model.embed_tokens.weight
    assert model.lm_head.weight is embedding
    tokens = torch.randint(0, 1000, (1, 6), device="cuda")
    with torch.inference_mode():
        reference = model(tokens).logits.float()
    xgemv.quantize_(model, "int4-g128")
    assert isinstance(model.lm_head, xgemv.nn.QuantizedLinear)
    assert model.model.embed_tokens.weight is embedding
    with torch.inference_mode():
        logits = model(tokens).logits.float()
    assert (logits - reference).abs().max() <= 0.5 * reference.abs().max()
