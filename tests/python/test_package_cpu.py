"""The package without a GPU: import, version, op registration, fake-tensor shapes, tracing by
torch.compile, argument errors, the packed layout's sizes and the checkpoint-format helpers."""
import importlib
import math
import pathlib
import re
import warnings

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import xgemv
from xgemv import checkpoint_formats as cf

ROOT = pathlib.Path(__file__).resolve().parents[2]
BF16 = torch.bfloat16


def test_version_is_the_projects():
    text = (ROOT / "CMakeLists.txt").read_text()
    assert xgemv.__version__ == re.search(r"project\(xgemv VERSION ([0-9.]+)", text).group(1)


def test_ops_are_registered_with_their_schemas():
    assert "Tensor? bias" in str(torch.ops.xgemv.linear.default._schema)
    schema = torch.ops.xgemv.gemv.default._schema
    assert schema.arguments[0].name == "y" and schema.arguments[0].alias_info.is_write
    names = [a.name for a in torch.ops.xgemv.qlinear.default._schema.arguments]
    assert names == ["x", "storage", "qformat", "outputs", "inputs", "scale_dtype", "permuted",
                     "bias"]


@pytest.mark.parametrize("shape", [(1, 64), (16, 64), (2, 3, 64), (64,)])
def test_fake_shapes(shape):
    with FakeTensorMode():
        x = torch.empty(shape, device="cuda", dtype=BF16)
        weight = torch.empty(48, 64, device="cuda", dtype=BF16)
        bias = torch.empty(48, device="cuda", dtype=BF16)
        y = torch.ops.xgemv.linear(x, weight, bias)
        assert y.shape == shape[:-1] + (48,) and y.dtype == BF16 and y.device.type == "cuda"
        storage = torch.empty(4096, device="cuda", dtype=torch.uint8)
        q = torch.ops.xgemv.qlinear(x, storage, "int4-g32", 48, 64, "bfloat16", False, None)
        assert q.shape == shape[:-1] + (48,)


def test_torch_compile_traces_every_op_in_one_graph():
    graphs = []

    def recording_backend(graph_module, example_inputs):
        graphs.append(graph_module)
        return graph_module.forward

    def step(x, weight, bias, storage, A, v, y):
        h = xgemv.linear(x, weight, bias)
        q = torch.ops.xgemv.qlinear(h, storage, "int8", 32, 48, "bfloat16", False, None)
        xgemv.gemv(A, v, y, trans="T", alpha=2.0, beta=1.0)
        return q.relu(), y

    compiled = torch.compile(step, fullgraph=True, backend=recording_backend)
    meta = dict(device="meta", dtype=BF16)
    q, y = compiled(torch.empty(4, 64, **meta), torch.empty(48, 64, **meta),
                    torch.empty(48, **meta), torch.empty(2048, device="meta", dtype=torch.uint8),
                    torch.empty(20, 10, **meta), torch.empty(20, **meta), torch.empty(10, **meta))
    assert q.shape == (4, 32) and y.shape == (10,)
    assert len(graphs) == 1
    code = graphs[0].code
    for op in ("xgemv.linear", "xgemv.qlinear", "xgemv.gemv"):
        assert op in code


def test_linear_on_meta_tensors_gives_shapes():
    y = xgemv.linear(torch.empty(3, 8, device="meta"), torch.empty(5, 8, device="meta"))
    assert y.shape == (3, 5) and y.device.type == "meta"


def _linear_error(x, weight, bias=None):
    with FakeTensorMode():
        torch.ops.xgemv.linear(x(), weight(), bias() if bias else None)


def _cuda(*shape, dtype=BF16):
    return lambda: torch.empty(*shape, device="cuda", dtype=dtype)


@pytest.mark.parametrize("x, weight, bias, kind, words", [
    (_cuda(1, 64, dtype=torch.int32), _cuda(48, 64), None, TypeError, "x is torch.int32"),
    (_cuda(1, 64), _cuda(48, 64, dtype=torch.float16), None, TypeError, "must match"),
    (_cuda(1, 63), _cuda(48, 64), None, ValueError, "do not match"),
    (_cuda(1, 64), lambda: torch.empty(64, 48, device="cuda", dtype=BF16).t(), None, ValueError,
     "unit stride along in_features"),
    (_cuda(1, 64), _cuda(48, 64), _cuda(47), ValueError, "bias of shape"),
    (_cuda(1, 64), _cuda(48, 64), _cuda(48, dtype=torch.float32), TypeError, "bias is"),
])
def test_linear_argument_errors(x, weight, bias, kind, words):
    with pytest.raises(kind, match=words):
        _linear_error(x, weight, bias)


def test_cpu_tensors_get_a_clear_error():
    with pytest.raises(ValueError, match="computes on CUDA devices.*cpu"):
        xgemv.linear(torch.ones(1, 8), torch.ones(4, 8))
    with pytest.raises(ValueError, match="computes on CUDA devices"):
        xgemv.gemv(torch.ones(4, 8), torch.ones(8))


@pytest.mark.parametrize("call, kind, words", [
    (lambda A, x, y: xgemv.gemv(A, x, y, trans="X"), ValueError, "trans must be"),
    (lambda A, x, y: xgemv.gemv(A, x[:4], y), ValueError, "op\\(A\\) is 6 x 5"),
    (lambda A, x, y: xgemv.gemv(A, x[:1].expand(5), y), ValueError, "stride 0"),
    (lambda A, x, y: xgemv.gemv(A, x, y.double()), TypeError, "y is torch.float64"),
    (lambda A, x, y: xgemv.gemv(A.as_strided((6, 3), (10, 2)), x[:3], y), ValueError,
     "unit stride in one dimension"),
])
def test_gemv_argument_errors(call, kind, words):
    with FakeTensorMode():
        A = torch.empty(6, 5, device="cuda")
        x = torch.empty(5, device="cuda")
        y = torch.empty(6, device="cuda")
        with pytest.raises(kind, match=words):
            call(A, x, y)


# QWeight.from_codes checks every tensor against the format before the library reads it: a
# per-tensor scale where the format has one per output would be read past its end, and scales
# on another device would hand the GPU a host pointer.
@pytest.mark.parametrize("qformat, scales, kind, words", [
    ("int8", lambda: torch.ones(1, device="cuda"), ValueError, r"scales must have shape \(8, 1\)"),
    ("fp8", lambda: torch.ones(8, 2, device="cuda"), ValueError,
     r"scales must have shape \(8, 1\)"),
    ("int4-g32", lambda: torch.ones(8, 1, device="cuda"), ValueError,
     r"scales must have shape \(8, 2\)"),
    ("fp8-block", lambda: torch.ones(8, 1, device="cuda"), ValueError,
     r"scales must have shape \(1, 1\)"),
    ("int8", lambda: torch.ones(8), ValueError, "scales is on cpu, the weight on cuda"),
    ("int8", lambda: torch.ones(8, dtype=torch.int32, device="cuda"), TypeError,
     "scales must be float16, bfloat16 or float32"),
])
def test_from_codes_checks_the_scales_first(qformat, scales, kind, words):
    with FakeTensorMode():
        codes = torch.empty(8, 64, dtype=torch.uint8, device="cuda")
        with pytest.raises(kind, match=words):
            xgemv.QWeight.from_codes(qformat, codes, scales())


def test_format_names():
    assert xgemv.parse_format("int4") == xgemv.QFormat("int4", 128, False)
    assert xgemv.parse_format("int4-g32-zp") == xgemv.QFormat("int4", 32, True)
    assert [xgemv.parse_format(n).name for n in xgemv.FORMAT_NAMES] == list(xgemv.FORMAT_NAMES)
    with pytest.raises(ValueError, match="unknown quantized format 'int3'"):
        xgemv.parse_format("int3")


def _align(value):
    return (value + 255) // 256 * 256


@pytest.mark.parametrize("name, outputs, inputs, scale_dtype, permuted", [
    ("int4-g128", 4096, 4096, torch.bfloat16, False),
    ("int4-g32-zp", 100, 96, torch.float16, True),
    ("int8", 17, 33, torch.float32, False),
    ("fp8", 1, 1, torch.bfloat16, False),
    ("fp8-block", 300, 200, torch.float32, False),
])
def test_layout_follows_the_headers_formulas(name, outputs, inputs, scale_dtype, permuted):
    fmt = xgemv.parse_format(name)
    kb = 64 if fmt.kind == "int4" else 32
    tiles, k_blocks = math.ceil(outputs / 16), math.ceil(inputs / kb)
    group = {"int4": fmt.group_size, "fp8-block": 128}.get(fmt.kind, k_blocks * kb)
    groups = math.ceil(k_blocks * kb / group)
    scale_bytes = torch.empty(0, dtype=scale_dtype).element_size()
    got = xgemv.layout(name, outputs, inputs, scale_dtype, permuted)
    assert (got["row_tiles"], got["k_blocks"], got["scale_groups"]) == (tiles, k_blocks, groups)
    assert got["codes_bytes"] == tiles * k_blocks * 512
    assert got["scales_bytes"] == tiles * groups * 16 * scale_bytes
    assert got["zeros_bytes"] == (tiles * groups * 8 if fmt.zero_points else 0)
    assert got["permutation_bytes"] == (inputs * 4 if permuted else 0)
    assert got["bytes"] >= sum(got[p] for p in ("codes_bytes", "scales_bytes", "zeros_bytes",
                                                "permutation_bytes"))
    for part in ("codes", "scales", "zeros", "permutation"):
        if got[f"{part}_bytes"]:
            assert got[f"{part}_offset"] % 256 == 0
            assert got[f"{part}_offset"] + got[f"{part}_bytes"] <= got["bytes"]


@pytest.mark.parametrize("name, outputs, inputs, words", [
    ("int4-g128", 16, 100, "group size"),
    ("int8", 0, 16, "out of range|shape"),
])
def test_layout_errors_name_the_status(name, outputs, inputs, words):
    with pytest.raises(xgemv.XgemvError, match=words):
        xgemv.layout(name, outputs, inputs)


def _random_int4(outputs, inputs, group, seed):
    generator = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 16, (outputs, inputs), generator=generator, dtype=torch.uint8)
    zeros = torch.randint(0, 16, (outputs, inputs // group), generator=generator,
                          dtype=torch.uint8)
    scales = torch.rand(inputs // group, outputs, generator=generator).to(torch.float16)
    return codes, zeros, scales


def _naive_dense(codes, zeros, scales, group_of):
    outputs, inputs = codes.shape
    dense = torch.empty(outputs, inputs)
    for o in range(outputs):
        for k in range(inputs):
            g = group_of(k)
            dense[o, k] = (float(codes[o, k]) - float(zeros[o, g])) * float(scales[g, o])
    return dense


def test_gptq_layout_bit_by_bit():
    codes, zeros, scales = _random_int4(16, 64, 32, seed=1)
    qweight, qzeros = cf.gptq_pack(codes, zeros, zeros_minus_one=True)
    assert qweight.shape == (8, 16) and qweight.dtype == torch.int32
    # Nibble i of qweight[r][o] is input 8r + i of output o; qzeros stores z - 1.
    word = int(qweight[3, 5]) & 0xFFFFFFFF
    assert [(word >> (4 * i)) & 0xF for i in range(8)] == codes[5, 24:32].tolist()
    zword = int(qzeros[1, 1]) & 0xFFFFFFFF
    assert [(zword >> (4 * i)) & 0xF for i in range(8)] == [((int(z) - 1) & 0xF)
                                                            for z in zeros[8:16, 1]]
    dense = cf.gptq_unpack(qweight, qzeros, scales, zeros_minus_one=True)
    assert torch.equal(dense, _naive_dense(codes, zeros, scales, lambda k: k // 32))


def test_gptq_act_order_groups():
    codes, zeros, scales = _random_int4(8, 64, 32, seed=2)
    g_idx = torch.randperm(64, generator=torch.Generator().manual_seed(3)) % 2
    qweight, qzeros = cf.gptq_pack(codes, zeros, zeros_minus_one=False)
    dense = cf.gptq_unpack(qweight, qzeros, scales, g_idx.to(torch.int32), zeros_minus_one=False)
    assert torch.equal(dense, _naive_dense(codes, zeros, scales, lambda k: int(g_idx[k])))


def test_awq_layout_bit_by_bit():
    codes, zeros, scales = _random_int4(16, 64, 32, seed=4)
    qweight, qzeros = cf.awq_pack(codes, zeros)
    assert qweight.shape == (64, 2)
    # Nibble i of qweight[k][m] is output 8m + (0, 2, 4, 6, 1, 3, 5, 7)[i] of input k.
    word = int(qweight[10, 1]) & 0xFFFFFFFF
    assert [(word >> (4 * i)) & 0xF for i in range(8)] == [int(codes[8 + o, 10])
                                                           for o in cf.AWQ_ORDER]
    dense = cf.awq_unpack(qweight, qzeros, scales)
    assert torch.equal(dense, _naive_dense(codes, zeros, scales, lambda k: k // 32))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, BF16])
def test_a_layers_prepared_arguments_pass_the_librarys_checks(dtype):
    # The arguments a layer's call makes once reach xgemv_gemv_bias in its order and types:
    # with no handle, every argument check passes and the handle's is the first to fail.
    import ctypes
    from xgemv import _library, ops
    call = ops.LinearCall(torch.ones(48, 64, dtype=dtype), torch.ones(48, dtype=dtype))
    arguments = list(call._arguments)
    for at in (call._X_AT, call._Y_AT):
        arguments[at] = ctypes.c_void_p(4096)
    arguments[call._ROWS_AT] = ctypes.c_int64(3)
    status = _library.lib.xgemv_gemv_bias(*arguments)
    assert status == 20, _library.describe_status(status)  # XGEMV_STATUS_INVALID_HANDLE


class _RecordedLayer(torch.nn.Module):
    """What load_gptq_ / load_awq_ hand the quantized layer, recorded (no GPU needed)."""

    def __init__(self, inputs, outputs, scales, bias):
        super().__init__()
        self.in_features, self.out_features = inputs, outputs
        self.scales, self.bias = scales, bias

    @classmethod
    def from_gptq(cls, qweight, qzeros, scales, g_idx, bias, zeros_minus_one):
        return cls(qweight.shape[0] * 8, qweight.shape[1], scales, bias)

    @classmethod
    def from_awq(cls, qweight, qzeros, scales, bias):
        return cls(qweight.shape[0], qweight.shape[1] * 8, scales, bias)

    @classmethod
    def from_linear(cls, module, qformat):
        return cls(module.in_features, module.out_features, module.weight, module.bias)


@pytest.mark.parametrize("kind", ["gptq", "awq"])
@pytest.mark.parametrize("model_dtype", [torch.bfloat16, torch.float16])
def test_checkpoint_loaders_give_the_bias_the_models_dtype(monkeypatch, kind, model_dtype):
    # GPTQ and AWQ checkpoints keep fp16 scales and biases; a bf16 model computes in bf16, and
    # its layers' bias must be bf16 for the first forward to run.
    monkeypatch.setattr(importlib.import_module("xgemv.quantize"), "QuantizedLinear",
                        _RecordedLayer)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32, dtype=model_dtype))
    qweight = (torch.zeros(8, 32, dtype=torch.int32) if kind == "gptq" else
               torch.zeros(64, 4, dtype=torch.int32))
    state = {"0.qweight": qweight, "0.qzeros": torch.zeros(1, 4, dtype=torch.int32),
             "0.scales": torch.ones(1, 32, dtype=torch.float16),
             "0.bias": torch.ones(32, dtype=torch.float16)}
    loader = xgemv.load_gptq_ if kind == "gptq" else xgemv.load_awq_
    assert loader(model, state, device=torch.device("cpu")) == 1
    assert isinstance(model[0], _RecordedLayer)
    assert model[0].bias.dtype == model_dtype
    assert model[0].scales.dtype == torch.float16


class _TiedModel(torch.nn.Module):
    """An embedding, a norm and an LM head tied to the embedding, in fp32."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(16, 64)
        self.norm = torch.nn.LayerNorm(64)
        self.head = torch.nn.Linear(64, 16, bias=False)
        self.head.weight = self.embed.weight


@pytest.mark.parametrize("qformat, dtype", [("bf16", BF16), ("fp16", torch.float16)])
def test_a_dense_format_puts_the_whole_model_in_its_dtype(qformat, dtype):
    # The layers' inputs come from the embedding and the norms: they must compute in the dtype
    # of the layers' weights, and a tied head must stay the embedding's weight.
    model = xgemv.quantize_(_TiedModel(), qformat)
    assert isinstance(model.head, xgemv.nn.Linear)
    assert model.head.weight is model.embed.weight
    assert {p.dtype for p in model.parameters()} == {dtype}


def test_a_tied_head_is_quantized_as_its_own_weight(monkeypatch):
    # Tied heads are a large share of a small model's bytes: quantize_ serves them, and the
    # embedding keeps its dense weight for the lookup.
    monkeypatch.setattr(importlib.import_module("xgemv.quantize"), "QuantizedLinear",
                        _RecordedLayer)
    model = _TiedModel().to(BF16)
    embedding = model.embed.weight
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no layer left
        xgemv.quantize_(model, "int4-g32")
    assert isinstance(model.head, _RecordedLayer)
    assert model.head.scales is embedding  # quantized from the tied weight
    assert model.embed.weight is embedding and isinstance(model.embed, torch.nn.Embedding)
