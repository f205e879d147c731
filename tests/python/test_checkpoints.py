"""Checkpoints in one call (xgemv.from_pretrained): tiny Hugging Face models saved here in each
checkpoint format (safetensors + config.json, written from the formats' public definitions) and
loaded through transformers' quantizer interface. On the host (no GPU) the one step that needs a
GPU, packing on the device, is replaced by the dense weight the packing's inputs define, and the
loaded model's logits must be those of the model built from the same weights, bit for bit; on a
CUDA device (marker gpu) the layers are packed and computed by xgemv, their dequantized weights
must be those weights exactly, and the logits within a bf16 model's rounding of them."""
import json
import warnings

import pytest
import torch
import torch.nn.functional as F

transformers = pytest.importorskip("transformers")
safetensors_torch = pytest.importorskip("safetensors.torch")

import xgemv  # noqa: E402
from xgemv import checkpoint_formats as cf  # noqa: E402
from xgemv import checkpoints  # noqa: E402

BF16 = torch.bfloat16


class _DenseQWeight:
    """xgemv.QWeight.from_codes as the dense fp32 weight [out, in] its inputs define (the
    definitions of xgemv/qweight.py)."""

    def __init__(self, weight):
        self.weight = weight
        self.outputs, self.inputs = weight.shape

    @classmethod
    def from_codes(cls, qformat, codes, scales, zeros=None, permutation=None):
        qformat = xgemv.parse_format(qformat)
        outputs, inputs = codes.shape
        scales = scales.reshape(scales.shape[0], -1).float()
        if qformat.kind == "int4":
            group = torch.arange(inputs) // qformat.group_size
            z = 8.0 if zeros is None else zeros.float()[:, group]
            weight = (codes.float() - z) * scales[:, group]
        elif qformat.kind == "int8":
            weight = codes.view(torch.int8).float() * scales
        elif qformat.kind == "fp8":
            weight = codes.view(torch.float8_e4m3fn).float() * scales
        else:  # fp8-block
            rows, columns = torch.arange(outputs) // 128, torch.arange(inputs) // 128
            weight = codes.view(torch.float8_e4m3fn).float() * scales[rows][:, columns]
        if permutation is not None:
            dense = torch.empty_like(weight)
            dense[:, permutation.long()] = weight
            weight = dense
        return cls(weight)


class _DenseLayer(torch.nn.Module):
    """xgemv.nn.QuantizedLinear on the dense weight."""

    def __init__(self, qweight, bias=None):
        super().__init__()
        self.weight, self.bias = qweight.weight, bias

    def forward(self, x):
        return F.linear(x, self.weight.to(x.dtype), self.bias)


@pytest.fixture
def on_the_host(monkeypatch):
    monkeypatch.setattr(checkpoints, "QWeight", _DenseQWeight)
    monkeypatch.setattr(checkpoints, "QuantizedLinear", _DenseLayer)
    served = []
    monkeypatch.setattr(checkpoints, "quantize_", lambda model, name: served.append(name))
    return served


@pytest.fixture(params=["host", pytest.param("device", marks=pytest.mark.gpu)])
def where(request):
    """"host": packing replaced (on_the_host); "device": the whole path on the CUDA device."""
    if request.param == "host":
        return request.getfixturevalue("on_the_host")
    return None


def _tiny_model(kind, seed=5):
    common = dict(hidden_size=256, intermediate_size=384, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=500,
                  tie_word_embeddings=False)
    torch.manual_seed(seed)
    config = (transformers.Qwen2Config(**common) if kind == "qwen2" else  # q, k, v with biases
              transformers.LlamaConfig(**common))
    # bf16 as from_pretrained makes it (the rotary frequencies stay fp32).
    return transformers.AutoModelForCausalLM.from_config(config, dtype=BF16).eval()


def _layers(model):
    return {name: module for name, module in model.named_modules()
            if isinstance(module, torch.nn.Linear) and ".layers." in f".{name}"}


def _save(directory, model, tensors, quantization_config):
    layers = _layers(model)
    state = {key: value.contiguous() for key, value in model.state_dict().items()
             if key.rpartition(".")[0] not in layers}
    state.update({key: value.contiguous() for key, value in tensors.items()})
    safetensors_torch.save_file(state, str(directory / "model.safetensors"),
                                metadata={"format": "pt"})
    config = model.config.to_dict()
    config["quantization_config"] = quantization_config
    config["torch_dtype"] = "bfloat16"
    (directory / "config.json").write_text(json.dumps(config))


def _random_int4(outputs, inputs, group, seed, symmetric=False):
    generator = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 16, (outputs, inputs), generator=generator, dtype=torch.uint8)
    # Zero points 1..15: GPTQ's original format stores z - 1 and cannot store 0.
    zeros = (torch.full((outputs, inputs // group), 8, dtype=torch.uint8) if symmetric else
             torch.randint(1, 16, (outputs, inputs // group), generator=generator,
                           dtype=torch.uint8))
    scales = (torch.rand(outputs, inputs // group, generator=generator) * 0.02 + 0.001).half()
    return codes, zeros, scales


def _dense_int4(codes, zeros, scales, group):
    index = torch.arange(codes.shape[1]) // group
    return (codes.float() - zeros.float()[:, index]) * scales.float()[:, index]


def _int4_layers(model, group, seed, pack=cf.gptq_pack, symmetric=False):
    """(checkpoint tensors, dense weights) of every linear layer of the model in random 4-bit
    codes packed by `pack` (cf.gptq_pack or cf.awq_pack): qweight, qzeros and scales
    [groups, out]; group None: one group over the row."""
    tensors, weights = {}, {}
    for index, (name, layer) in enumerate(_layers(model).items()):
        outputs, inputs = layer.weight.shape
        size = group or inputs
        codes, zeros, scales = _random_int4(outputs, inputs, size, seed + index, symmetric)
        qweight, qzeros = pack(codes, zeros)
        tensors.update({f"{name}.qweight": qweight, f"{name}.qzeros": qzeros,
                        f"{name}.scales": scales.t().contiguous()})
        weights[name] = _dense_int4(codes, zeros, scales, size)
    return tensors, weights


def _reference_and_check(model, weights, directory, where, biases=None):
    """Sets the model's linear layers to the dense weights, loads the checkpoint and compares
    (where: the `where` fixture's value)."""
    with torch.no_grad():
        for name, layer in _layers(model).items():
            layer.weight.copy_(weights[name].to(BF16))
            if biases is not None and layer.bias is not None:
                layer.bias.copy_(biases[name].to(BF16))
    tokens = torch.randint(0, 500, (1, 7), generator=torch.Generator().manual_seed(1))
    if where is not None:  # on the host
        loaded = xgemv.from_pretrained(str(directory), device="cpu")
        assert where == ["dense"]
        for name in _layers(model):
            assert isinstance(loaded.get_submodule(name), _DenseLayer), name
            assert torch.equal(loaded.get_submodule(name).weight, weights[name]), name
        with torch.inference_mode():
            expected, got = model(tokens).logits, loaded(tokens).logits
        assert got.dtype == BF16
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
        return loaded
    loaded = xgemv.from_pretrained(str(directory), device="cuda")
    for name in _layers(model):
        layer = loaded.get_submodule(name)
        assert isinstance(layer, xgemv.nn.QuantizedLinear), name
        assert torch.equal(layer.dequantize().cpu(), weights[name]), name
    assert isinstance(loaded.lm_head, xgemv.nn.Linear)  # the dense layers served too
    model, tokens = model.to("cuda"), tokens.to("cuda")
    with torch.inference_mode():
        expected, got = model(tokens).logits.float(), loaded(tokens).logits.float()
    assert (got - expected).abs().max() <= 0.05 * expected.abs().max()
    return loaded


@pytest.mark.parametrize("checkpoint_format", ["gptq", "gptq_v2", "format=gptq_v2"])
@pytest.mark.parametrize("act_order", [False, True])
@pytest.mark.parametrize("kind", ["llama", "qwen2"])
def test_gptq_checkpoint(tmp_path, where, checkpoint_format, act_order, kind):
    model, group = _tiny_model(kind), 64
    tensors, weights, biases = {}, {}, {}
    for index, (name, layer) in enumerate(_layers(model).items()):
        outputs, inputs = layer.weight.shape
        codes, zeros, scales = _random_int4(outputs, inputs, group, seed=index)
        g_idx = torch.arange(inputs, dtype=torch.int32) // group
        if act_order:
            g_idx = g_idx[torch.randperm(inputs, generator=torch.Generator().manual_seed(index))]
        qweight, qzeros = cf.gptq_pack(codes, zeros, checkpoint_format == "gptq")
        tensors.update({f"{name}.qweight": qweight, f"{name}.qzeros": qzeros,
                        f"{name}.scales": scales.t().contiguous(), f"{name}.g_idx": g_idx})
        weights[name] = (codes.float() - zeros.float()[:, g_idx.long()]) * \
            scales.float()[:, g_idx.long()]
        if layer.bias is not None:  # stored in fp16, as GPTQ files keep it
            biases[name] = torch.randn(outputs).half()
            tensors[f"{name}.bias"] = biases[name]
    # GPTQModel writes `format`, older writers `checkpoint_format`.
    key, _, value = checkpoint_format.rpartition("=")
    _save(tmp_path, model, tensors, {"quant_method": "gptq", "bits": 4, "group_size": group,
                                     "desc_act": act_order, "sym": False,
                                     key or "checkpoint_format": value})
    _reference_and_check(model, weights, tmp_path, where, biases)


def test_symmetric_gptq_needs_no_zero_points(tmp_path, where, monkeypatch):
    model, group = _tiny_model("llama"), 128
    given = []
    if where is not None:
        from_codes = _DenseQWeight.from_codes
        monkeypatch.setattr(_DenseQWeight, "from_codes", classmethod(
            lambda cls, qformat, *rest: given.append(xgemv.parse_format(qformat).name) or
            from_codes(qformat, *rest)))
    tensors, weights = _int4_layers(model, group, seed=0, symmetric=True)
    _save(tmp_path, model, tensors, {"quant_method": "gptq", "bits": 4, "group_size": group,
                                     "desc_act": False, "sym": True})
    loaded = _reference_and_check(model, weights, tmp_path, where)
    # The format without zero points.
    if where is not None:
        assert given and set(given) == {"int4-g128"}
    else:
        assert {loaded.get_submodule(name).format for name in _layers(model)} == {"int4-g128"}


def test_awq_checkpoint(tmp_path, where):
    model, group = _tiny_model("llama"), 128
    tensors, weights = _int4_layers(model, group, seed=10, pack=cf.awq_pack)
    _save(tmp_path, model, tensors, {"quant_method": "awq", "bits": 4, "group_size": group,
                                     "zero_point": True, "version": "gemm"})
    _reference_and_check(model, weights, tmp_path, where)


@pytest.mark.parametrize("scales", ["block", "block-e8m0", "tensor"])
def test_fp8_checkpoint(tmp_path, where, scales):
    # transformers' fine-grained FP8 (DeepSeek-V3's layout): e4m3 weights and a weight_scale_inv
    # per 128 x 128 block (fp32, or e8m0 powers of two), or one per tensor without blocks.
    model = _tiny_model("llama")
    tensors, weights = {}, {}
    for index, (name, layer) in enumerate(_layers(model).items()):
        outputs, inputs = layer.weight.shape
        generator = torch.Generator().manual_seed(20 + index)
        q = (torch.randn(outputs, inputs, generator=generator) * 100).clamp(-448, 448).to(
            torch.float8_e4m3fn)
        shape = (1,) if scales == "tensor" else (-(-outputs // 128), -(-inputs // 128))
        scale_inv = torch.rand(shape, generator=generator) / 100
        if scales == "block-e8m0":
            scale_inv = scale_inv.to(torch.float8_e8m0fnu)
        tensors.update({f"{name}.weight": q, f"{name}.weight_scale_inv": scale_inv})
        rows, columns = torch.arange(outputs) // 128, torch.arange(inputs) // 128
        dense_scales = (scale_inv.float().reshape(1, 1) if scales == "tensor" else
                        scale_inv.float()[rows][:, columns])
        weights[name] = q.float() * dense_scales
    _save(tmp_path, model, tensors, {
        "quant_method": "fp8", "activation_scheme": "dynamic",
        "weight_block_size": None if scales == "tensor" else [128, 128]})
    _reference_and_check(model, weights, tmp_path, where)


def test_the_layers_a_checkpoint_keeps_dense_may_be_quantized(tmp_path, on_the_host):
    # e.g. the LM head GPTQ checkpoints keep in 16 bits (tied to the embedding in small models).
    model = _tiny_model("llama")
    tensors, _ = _int4_layers(model, 128, seed=1)
    _save(tmp_path, model, tensors, {"quant_method": "gptq", "bits": 4, "group_size": 128})
    xgemv.from_pretrained(str(tmp_path), format="int4-g128", device="cpu")
    assert on_the_host == ["int4-g128"]


def test_a_dense_checkpoint_is_served_as_it_is(tmp_path, on_the_host):
    model = _tiny_model("llama")
    model.save_pretrained(tmp_path)
    loaded = xgemv.from_pretrained(str(tmp_path), device="cpu")
    assert on_the_host == ["dense"]
    assert all(type(m) is torch.nn.Linear for m in _layers(loaded).values())


def test_a_gptq_group_over_the_whole_row(tmp_path, where):
    # group_size -1: one scale and zero point per output, served as groups of 128 sharing them.
    model = _tiny_model("llama")
    tensors, weights = _int4_layers(model, None, seed=30)
    for name, layer in _layers(model).items():
        tensors[f"{name}.g_idx"] = torch.zeros(layer.in_features, dtype=torch.int32)
    _save(tmp_path, model, tensors, {"quant_method": "gptq", "bits": 4, "group_size": -1,
                                     "desc_act": False, "sym": False})
    _reference_and_check(model, weights, tmp_path, where)


@pytest.mark.parametrize("quantization_config, group, words", [
    ({"quant_method": "gptq", "bits": 8, "group_size": 128}, 128, "of 8 bits"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 16}, 16, "whole groups of 32, 64 or 128"),
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemv"}, 128,
     "'gemv' packing"),
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": False}, 128,
     "without zero points"),
    ({"quant_method": "fp8", "weight_block_size": [64, 64]}, 128, "blocks of \\[64, 64\\]"),
    ({"quant_method": "bitsandbytes"}, 128, "quantized by 'bitsandbytes' are not read"),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, 128, "ModelOpt NVFP4 checkpoints"),
    ({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized"}, 128,
     "'nvfp4-pack-quantized' weights; xgemv has no FP4 kernels yet"),
])
def test_checkpoints_xgemv_cannot_read_are_refused_by_name(tmp_path, on_the_host,
                                                           quantization_config, group, words):
    model = _tiny_model("llama")
    tensors, _ = _int4_layers(model, group, seed=0)
    _save(tmp_path, model, tensors, quantization_config)
    with pytest.raises(ValueError, match=words):
        xgemv.from_pretrained(str(tmp_path), device="cpu")


def test_a_gptq_zero_point_of_16_is_refused(tmp_path, on_the_host):
    # GPTQ's original format stores z - 1: a stored 15 is the zero point 16 to its public readers.
    model = _tiny_model("llama")
    tensors, _ = _int4_layers(model, 128, seed=0,
                              pack=lambda codes, zeros: cf.gptq_pack(codes, zeros, False))
    for name in _layers(model):
        tensors[f"{name}.qzeros"][0, 0] = 0xF  # one stored 15
    _save(tmp_path, model, tensors, {"quant_method": "gptq", "bits": 4, "group_size": 128,
                                     "checkpoint_format": "gptq"})
    with pytest.raises(ValueError, match="zero point of 16"):
        xgemv.from_pretrained(str(tmp_path), device="cpu")


def _words_of_nibbles(values, dim):
    """compressed-tensors' 4-bit packing: 8 values (0..15) an int32 along dim, element 8w + i in
    bits 4i .. 4i + 3 of word w (written here from that definition)."""
    moved = values.to(torch.int64).movedim(dim, -1)
    runs = moved.reshape(*moved.shape[:-1], -1, 8)
    words = sum(runs[..., i] << (4 * i) for i in range(8))
    words = torch.where(words >= 2 ** 31, words - 2 ** 32, words)  # as int32 bits
    return words.to(torch.int32).movedim(-1, dim).contiguous()


def _compressed_config(weights, fmt):
    return {"quant_method": "compressed-tensors", "format": fmt,
            "quantization_status": "compressed", "ignore": ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights,
                                          "input_activations": None}}}


@pytest.mark.parametrize("strategy, actorder", [("group", None), ("group", "group"),
                                               ("channel", None)])
@pytest.mark.parametrize("symmetric", [True, False])
def test_compressed_tensors_pack_quantized(tmp_path, where, strategy, symmetric, actorder):
    model, group = _tiny_model("llama"), 64
    tensors, weights = {}, {}
    for index, (name, layer) in enumerate(_layers(model).items()):
        outputs, inputs = layer.weight.shape
        groups = inputs // group if strategy == "group" else 1
        generator = torch.Generator().manual_seed(40 + index)
        q = torch.randint(-8, 8, (outputs, inputs), generator=generator)  # signed 4-bit values
        z = (torch.zeros(outputs, groups, dtype=torch.int64) if symmetric else
             torch.randint(-8, 8, (outputs, groups), generator=generator))
        s = (torch.rand(outputs, groups, generator=generator) * 0.02 + 0.001).to(BF16)
        g_idx = torch.arange(inputs) * groups // inputs
        if actorder:
            g_idx = g_idx[torch.randperm(inputs, generator=generator)]
            tensors[f"{name}.weight_g_idx"] = g_idx.to(torch.int32)
        tensors.update({f"{name}.weight_packed": _words_of_nibbles(q + 8, 1),
                        f"{name}.weight_scale": s,
                        f"{name}.weight_shape": torch.tensor([outputs, inputs])})
        if not symmetric:
            tensors[f"{name}.weight_zero_point"] = _words_of_nibbles(z + 8, 0)
        weights[name] = (q - z[:, g_idx]).float() * s.float()[:, g_idx]
    _save(tmp_path, model, tensors, _compressed_config(
        {"num_bits": 4, "type": "int", "symmetric": symmetric, "strategy": strategy,
         "group_size": group if strategy == "group" else None, "actorder": actorder},
        "pack-quantized"))
    _reference_and_check(model, weights, tmp_path, where)


def test_modelopt_fp8_checkpoint(tmp_path, where):
    # NVIDIA ModelOpt's FP8: e4m3 weights, an fp32 weight_scale (and input_scale) a tensor.
    model = _tiny_model("llama")
    tensors, weights = {}, {}
    for index, (name, layer) in enumerate(_layers(model).items()):
        generator = torch.Generator().manual_seed(60 + index)
        q = (torch.randn(*layer.weight.shape, generator=generator) * 100).clamp(-448, 448).to(
            torch.float8_e4m3fn)
        scale = torch.rand((), generator=generator) / 100
        tensors.update({f"{name}.weight": q, f"{name}.weight_scale": scale,
                        f"{name}.input_scale": torch.tensor(1.0)})
        weights[name] = q.float() * scale
    _save(tmp_path, model, tensors, {"quant_method": "modelopt", "quant_algo": "FP8",
                                     "kv_cache_quant_algo": None})
    _reference_and_check(model, weights, tmp_path, where)


@pytest.mark.parametrize("kind, scale_shape", [
    ("int8", "channel"), ("int8", "tensor"), ("fp8", "channel"), ("fp8", "tensor"),
    ("fp8", "block")])
def test_compressed_tensors_8_bits(tmp_path, where, kind, scale_shape):
    model = _tiny_model("llama")
    tensors, weights = {}, {}
    for index, (name, layer) in enumerate(_layers(model).items()):
        outputs, inputs = layer.weight.shape
        generator = torch.Generator().manual_seed(50 + index)
        if kind == "int8":
            q = torch.randint(-128, 128, (outputs, inputs), generator=generator).to(torch.int8)
        else:
            q = (torch.randn(outputs, inputs, generator=generator) * 100).clamp(-448, 448).to(
                torch.float8_e4m3fn)
        shape = {"channel": (outputs, 1), "tensor": (1,),
                 "block": (-(-outputs // 128), -(-inputs // 128))}[scale_shape]
        s = (torch.rand(shape, generator=generator) * 0.01 + 0.001).to(BF16)
        tensors.update({f"{name}.weight": q, f"{name}.weight_scale": s})
        if scale_shape == "block":
            rows, columns = torch.arange(outputs) // 128, torch.arange(inputs) // 128
            weights[name] = q.float() * s.float()[rows][:, columns]
        else:
            weights[name] = q.float() * s.float().reshape(-1, 1)
    _save(tmp_path, model, tensors, _compressed_config(
        {"num_bits": 8, "type": "int" if kind == "int8" else "float", "symmetric": True,
         "strategy": scale_shape,
         "block_structure": [128, 128] if scale_shape == "block" else None},
        "int-quantized" if kind == "int8" else "float-quantized"))
    _reference_and_check(model, weights, tmp_path, where)


def test_quantized_tensors_of_no_linear_layer_are_refused(tmp_path, on_the_host):
    # e.g. a mixture's experts quantized one by one, which the model holds as 3-D parameters:
    # loading around them would leave those weights uninitialised.
    model = _tiny_model("llama")
    tensors, _ = _int4_layers(model, 128, seed=0)
    tensors["model.layers.0.mlp.experts.0.up_proj.qweight"] = \
        tensors["model.layers.0.mlp.up_proj.qweight"]
    _save(tmp_path, model, tensors, {"quant_method": "gptq", "bits": 4, "group_size": 128})
    with pytest.raises(ValueError, match="experts.0.up_proj.qweight"):
        xgemv.from_pretrained(str(tmp_path), device="cpu")


def test_a_dense_checkpoint_quantized_on_load(tmp_path, where):
    model = _tiny_model("llama")
    model.save_pretrained(tmp_path)
    config = xgemv.XgemvConfig("int4-g128", device="cpu" if where is not None else None)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(tmp_path,
                                                               quantization_config=config)
    if where is not None:
        assert where == ["int4-g128"]
        return
    layers = [m for m in loaded.modules() if isinstance(m, xgemv.nn.QuantizedLinear)]
    assert len(layers) == 2 * 7 + 1 and {m.format for m in layers} == {"int4-g128"}
    tokens = torch.randint(0, 500, (1, 5), device="cuda")
    with torch.inference_mode():
        expected, got = model.to("cuda")(tokens).logits.float(), loaded(tokens).logits.float()
    assert (got - expected).abs().max() <= 0.5 * expected.abs().max()


def _tiny_moe(kind, seed=7):
    common = dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=500, num_experts_per_tok=2,
                  tie_word_embeddings=False)
    torch.manual_seed(seed)
    if kind == "mixtral":
        config = transformers.MixtralConfig(intermediate_size=128, num_local_experts=4, **common)
    else:
        config = transformers.Qwen3MoeConfig(intermediate_size=384, moe_intermediate_size=128,
                                             num_experts=4, **common)
    return transformers.AutoModelForCausalLM.from_config(config, dtype=BF16).eval()


def _experts_of(model):
    return {name: module for name, module in model.named_modules()
            if name.endswith("mlp.experts")}


@pytest.fixture
def experts_on_the_host(on_the_host, monkeypatch):
    """on_the_host, and xgemv's experts as the model's own module on the dense weights."""
    def served(template, gate_up, down, gate_up_bias=None, down_bias=None):
        for attribute, weights, bias in (("gate_up_proj", gate_up, gate_up_bias),
                                         ("down_proj", down, down_bias)):
            if not isinstance(weights, torch.Tensor):
                weights = torch.stack([w.weight for w in weights])
            if getattr(template, "is_transposed", False):  # gpt-oss: [E, in, out]
                weights = weights.transpose(1, 2)
            setattr(template, attribute, torch.nn.Parameter(weights.to(BF16).contiguous()))
            if bias is not None:
                setattr(template, f"{attribute}_bias", torch.nn.Parameter(bias))
        return template
    monkeypatch.setattr(checkpoints, "_served_experts", served)
    return on_the_host


@pytest.fixture(params=["host", pytest.param("device", marks=pytest.mark.gpu)])
def moe_where(request):
    if request.param == "host":
        return request.getfixturevalue("experts_on_the_host")
    return None


def _quantized_expert(fmt, outputs, inputs, seed):
    """(checkpoint tensors, dense weight) of one expert projection."""
    generator = torch.Generator().manual_seed(seed)
    if fmt == "fp8":
        q = (torch.randn(outputs, inputs, generator=generator) * 100).clamp(-448, 448).to(
            torch.float8_e4m3fn)
        scale_inv = torch.rand(-(-outputs // 128), -(-inputs // 128), generator=generator) / 100
        rows, columns = torch.arange(outputs) // 128, torch.arange(inputs) // 128
        return ({"weight": q, "weight_scale_inv": scale_inv},
                q.float() * scale_inv[rows][:, columns])
    codes, zeros, scales = _random_int4(outputs, inputs, 64, seed)
    pack = cf.gptq_pack if fmt == "gptq" else cf.awq_pack
    qweight, qzeros = pack(codes, zeros)
    return ({"qweight": qweight, "qzeros": qzeros, "scales": scales.t().contiguous()},
            _dense_int4(codes, zeros, scales, 64))


@pytest.mark.parametrize("kind, fmt", [("qwen3_moe", "gptq"), ("mixtral", "awq"),
                                       ("qwen3_moe", "fp8")])
def test_quantized_experts_checkpoint(tmp_path, moe_where, kind, fmt):
    # Experts quantized one by one, as published MoE checkpoints keep them (Mixtral's under
    # block_sparse_moe and w1 / w3 / w2): packed as the model's stacked experts.
    model = _tiny_moe(kind)
    names = ({"gate": "w1", "up": "w3", "down": "w2"} if kind == "mixtral" else
             {"gate": "gate_proj", "up": "up_proj", "down": "down_proj"})
    tensors, weights, seed = {}, {}, 100
    for name, experts in _experts_of(model).items():
        stored = name.replace(".mlp.", ".block_sparse_moe.") if kind == "mixtral" else name
        count, rows, hidden = experts.gate_up_proj.shape
        dense = {"gate": [], "up": [], "down": []}
        for e in range(count):
            for role, (outputs, inputs) in (("gate", (rows // 2, hidden)),
                                            ("up", (rows // 2, hidden)),
                                            ("down", (hidden, rows // 2))):
                seed += 1
                stored_tensors, weight = _quantized_expert(fmt, outputs, inputs, seed)
                tensors.update({f"{stored}.{e}.{names[role]}.{key}": value
                                for key, value in stored_tensors.items()})
                dense[role].append(weight)
        weights[name] = (torch.stack([torch.cat([g, u]) for g, u in zip(dense["gate"],
                                                                         dense["up"])]),
                         torch.stack(dense["down"]))
    for name, layer in _layers(model).items():  # the attention's layers quantized too
        seed += 1
        stored_tensors, weights[name] = _quantized_expert(fmt, *layer.weight.shape, seed)
        tensors.update({f"{name}.{key}": value for key, value in stored_tensors.items()})
    config = ({"quant_method": "fp8", "weight_block_size": [128, 128]} if fmt == "fp8" else
              {"quant_method": fmt, "bits": 4, "group_size": 64, "version": "gemm"})
    state = {key: value for key, value in model.state_dict().items()
             if not key.endswith(("experts.gate_up_proj", "experts.down_proj"))}
    state = {key: value for key, value in state.items()
             if key.rpartition(".")[0] not in _layers(model)}
    state.update(tensors)
    safetensors_torch.save_file({k: v.contiguous() for k, v in state.items()},
                                str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    saved = model.config.to_dict()
    saved["quantization_config"], saved["torch_dtype"] = config, "bfloat16"
    (tmp_path / "config.json").write_text(json.dumps(saved))

    with torch.no_grad():
        for name, experts in _experts_of(model).items():
            experts.gate_up_proj.copy_(weights[name][0].to(BF16))
            experts.down_proj.copy_(weights[name][1].to(BF16))
        for name, layer in _layers(model).items():
            layer.weight.copy_(weights[name].to(BF16))
    tokens = torch.randint(0, 500, (1, 6), generator=torch.Generator().manual_seed(2))
    if moe_where is not None:
        loaded = xgemv.from_pretrained(str(tmp_path), device="cpu")
        assert moe_where == ["dense"]
        for name, experts in _experts_of(loaded).items():
            assert torch.equal(experts.gate_up_proj.float(), weights[name][0].to(BF16).float())
        with torch.inference_mode():
            torch.testing.assert_close(loaded(tokens).logits, model(tokens).logits, rtol=0,
                                       atol=0)
        return
    loaded = xgemv.from_pretrained(str(tmp_path), device="cuda")
    for name, experts in _experts_of(loaded).items():
        assert isinstance(experts, xgemv.nn.Experts), name
        assert torch.equal(experts.gate_up.dequantize().cpu(), weights[name][0]), name
        assert torch.equal(experts.down.dequantize().cpu(), weights[name][1]), name
    model, tokens = model.to("cuda"), tokens.to("cuda")
    with torch.inference_mode():
        expected, got = model(tokens).logits.float(), loaded(tokens).logits.float()
    assert (got - expected).abs().max() <= 0.05 * expected.abs().max()



def _mxfp4(outputs, inputs, seed, octaves):
    """(blocks, scales, dense fp32 weight) of one projection of random MXFP4 weights, written
    from the OCP MX definition: a 32-input block's codes in 16 bytes (element 2j in the low
    nibble of byte j), e2m1 values, an e8m0 scale 2^(s - 127) a block, s in 127 - octaves .. 127."""
    generator = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 16, (outputs, inputs), generator=generator)
    s = torch.randint(127 - octaves, 128, (outputs, inputs // 32), generator=generator)
    blocks = (codes[:, 0::2] | (codes[:, 1::2] << 4)).to(torch.uint8).reshape(
        outputs, inputs // 32, 16)
    values = torch.tensor(checkpoints._E2M1)[codes]
    dense = values * torch.pow(2.0, (s - 127).float()).repeat_interleave(32, dim=1)
    return blocks, s.to(torch.uint8), dense


@pytest.mark.parametrize("octaves", [10, 20])
def test_mxfp4_experts_checkpoint(tmp_path, moe_where, octaves):
    # gpt-oss's experts: exact as fp8 where an output's blocks lie within 14 octaves of one
    # another, else dense (with a warning).
    torch.manual_seed(9)
    config = transformers.GptOssConfig(hidden_size=256, intermediate_size=128, head_dim=64,
                                       num_hidden_layers=2, num_attention_heads=4,
                                       num_key_value_heads=2, vocab_size=500,
                                       num_local_experts=4, num_experts_per_tok=2)
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=BF16).eval()
    tensors, weights, seed = {}, {}, 200
    for name, experts in _experts_of(model).items():
        count, hidden, rows = experts.gate_up_proj.shape  # gpt-oss: [E, in, out]
        dense = {}
        for projection, (outputs, inputs) in (("gate_up_proj", (rows, hidden)),
                                              ("down_proj", (hidden, rows // 2))):
            parts = []
            for e in range(count):
                seed += 1
                parts.append(_mxfp4(outputs, inputs, seed, octaves))
            tensors[f"{name}.{projection}_blocks"] = torch.stack([p[0] for p in parts])
            tensors[f"{name}.{projection}_scales"] = torch.stack([p[1] for p in parts])
            dense[projection] = torch.stack([p[2] for p in parts])
        weights[name] = dense
    state = {key: value for key, value in model.state_dict().items()
             if not key.endswith(("experts.gate_up_proj", "experts.down_proj"))}
    state.update(tensors)
    safetensors_torch.save_file({k: v.contiguous() for k, v in state.items()},
                                str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    saved = model.config.to_dict()
    saved["quantization_config"] = {"quant_method": "mxfp4",
                                    "modules_to_not_convert": ["model.layers.*.self_attn",
                                                               "model.layers.*.mlp.router",
                                                               "model.embed_tokens", "lm_head"]}
    saved["torch_dtype"] = "bfloat16"
    (tmp_path / "config.json").write_text(json.dumps(saved))
    with torch.no_grad():
        for name, experts in _experts_of(model).items():
            experts.gate_up_proj.copy_(weights[name]["gate_up_proj"].transpose(1, 2).to(BF16))
            experts.down_proj.copy_(weights[name]["down_proj"].transpose(1, 2).to(BF16))
    tokens = torch.randint(0, 500, (1, 6), generator=torch.Generator().manual_seed(3))
    device = "cpu" if moe_where is not None else "cuda"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = xgemv.from_pretrained(str(tmp_path), device=device)
    assert any("served dense" in str(w.message) for w in caught) == (octaves > 14)
    if moe_where is not None:
        for name, experts in _experts_of(loaded).items():
            assert torch.equal(experts.gate_up_proj.float(),
                               weights[name]["gate_up_proj"].transpose(1, 2).to(BF16).float())
        with torch.inference_mode():
            torch.testing.assert_close(loaded(tokens).logits, model(tokens).logits, rtol=0,
                                       atol=0)
        return
    for name, experts in _experts_of(loaded).items():
        assert isinstance(experts, xgemv.nn.Experts), name
        assert (experts.gate_up.format is None) == (octaves > 14)
        assert torch.equal(experts.gate_up.dequantize().cpu(),
                           weights[name]["gate_up_proj"].to(
                               torch.float32 if octaves <= 14 else BF16).float())
    model, tokens = model.to("cuda"), tokens.to("cuda")
    with torch.inference_mode():
        expected, got = model(tokens).logits.float(), loaded(tokens).logits.float()
    assert (got - expected).abs().max() <= 0.05 * expected.abs().max()


def test_a_sharded_checkpoint(tmp_path, where):
    # Two safetensors shards and their index, as large checkpoints come.
    model, group = _tiny_model("llama"), 128
    tensors, weights = _int4_layers(model, group, seed=70)
    _save(tmp_path, model, tensors, {"quant_method": "gptq", "bits": 4, "group_size": group})
    state = safetensors_torch.load_file(str(tmp_path / "model.safetensors"))
    (tmp_path / "model.safetensors").unlink()
    keys = sorted(state)
    shards = {"model-00001-of-00002.safetensors": keys[::2],
              "model-00002-of-00002.safetensors": keys[1::2]}
    for file, names in shards.items():
        safetensors_torch.save_file({k: state[k] for k in names}, str(tmp_path / file),
                                    metadata={"format": "pt"})
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {k: f for f, names in shards.items() for k in names}}))
    _reference_and_check(model, weights, tmp_path, where)
