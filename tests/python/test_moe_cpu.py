"""The mixture-of-experts side of the package without a GPU: the ops' schemas and fake shapes,
argument errors, what xgemv takes of Hugging Face experts modules (and why it refuses the others),
quantize_'s refusals, and the experts implementation's registration."""
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import xgemv
from xgemv import moe
from xgemv.nn import experts_spec
from xgemv.quantize import _experts_refusal

BF16 = torch.bfloat16


def test_moe_ops_are_registered_with_their_schemas():
    names = [a.name for a in torch.ops.xgemv.moe_up.default._schema.arguments]
    assert names == ["x", "experts", "top_k_index", "activation", "alpha", "limit", "bias",
                     "qformat", "outputs", "inputs", "scale_dtype"]
    names = [a.name for a in torch.ops.xgemv.moe_down.default._schema.arguments]
    assert names == ["h", "experts", "top_k_index", "top_k_weights", "bias", "qformat", "outputs",
                     "inputs", "scale_dtype"]


@pytest.mark.parametrize("activation, outputs", [("identity", 96), ("swiglu", 48),
                                                 ("swiglu-clamped", 48)])
def test_moe_fake_shapes(activation, outputs):
    with FakeTensorMode():
        x = torch.empty(5, 64, device="cuda", dtype=BF16)
        w = torch.empty(8, 96, 64, device="cuda", dtype=BF16)
        ids = torch.empty(5, 3, device="cuda", dtype=torch.int64)
        h = torch.ops.xgemv.moe_up(x, w, ids, activation, 1.702, 7.0, None, "", 96, 64, "")
        assert h.shape == (5, 3, outputs) and h.dtype == BF16
        down = torch.empty(8, 64, outputs, device="cuda", dtype=BF16)
        weights = torch.empty(5, 3, device="cuda", dtype=torch.float32)
        y = torch.ops.xgemv.moe_down(h, down, ids, weights, None, "", 64, outputs, "")
        assert y.shape == (5, 64) and y.dtype == BF16


def test_moe_argument_errors():
    with FakeTensorMode():
        x = torch.empty(5, 64, device="cuda", dtype=BF16)
        ids = torch.empty(5, 3, device="cuda", dtype=torch.int64)
        experts = moe.ExpertWeights(torch.empty(8, 96, 64, device="cuda", dtype=BF16))
        with pytest.raises(ValueError, match="activation"):
            moe.check_up(x, experts, ids, "gelu", None)
        with pytest.raises(TypeError, match="int32 or int64"):
            moe.check_up(x, experts, ids.float(), "swiglu", None)
        with pytest.raises(ValueError, match="top_k_index"):
            moe.check_up(x, experts, ids[:4], "swiglu", None)
        with pytest.raises(ValueError, match="inputs"):
            moe.check_up(x[:, :32], experts, ids, "swiglu", None)
        with pytest.raises(ValueError, match="bias"):
            moe.check_up(x, experts, ids, "swiglu", torch.empty(8, 95, device="cuda", dtype=BF16))
        h = torch.empty(5, 3, 96, device="cuda", dtype=BF16)
        down = moe.ExpertWeights(torch.empty(8, 64, 96, device="cuda", dtype=BF16))
        with pytest.raises(ValueError, match="top_k_weights are needed"):
            moe.check_down(h, down, ids, None, None)
        with pytest.raises(TypeError, match="top_k_weights"):
            moe.check_down(h, down, ids, torch.empty(5, 3, device="cuda", dtype=torch.float16),
                           None)


def test_experts_live_on_cuda_devices():
    with pytest.raises(ValueError, match="CUDA"):
        moe.ExpertWeights(torch.zeros(2, 4, 8, dtype=BF16))


def _module(kind):
    transformers = pytest.importorskip("transformers")
    if kind == "qwen3_moe":
        from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeExperts
        return Qwen3MoeExperts(transformers.Qwen3MoeConfig(
            hidden_size=64, moe_intermediate_size=40, num_experts=4)).to(BF16)
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssExperts
    return GptOssExperts(transformers.GptOssConfig(
        hidden_size=64, intermediate_size=48, num_local_experts=4)).to(BF16)


def test_what_xgemv_takes_of_hugging_face_experts():
    spec = experts_spec(_module("qwen3_moe"))
    assert spec["activation"] == "swiglu" and spec["gate_up"].shape == (4, 80, 64)
    assert spec["gate_up_bias"] is None
    spec = experts_spec(_module("gpt_oss"))
    assert spec["activation"] == "swiglu-clamped"
    assert (spec["alpha"], spec["limit"]) == (pytest.approx(1.702), 7.0)
    # Transposed in the module, [E, out, in] for xgemv.
    assert spec["gate_up"].shape == (4, 96, 64) and spec["down"].shape == (4, 64, 48)
    assert spec["gate_up_bias"].shape == (4, 96)


def test_experts_xgemv_does_not_compute_are_named():
    module = _module("qwen3_moe")
    module.act_fn = torch.nn.GELU()
    with pytest.raises(ValueError, match="not SiLU"):
        experts_spec(module)
    module = _module("qwen3_moe")
    module.has_gate = False
    with pytest.raises(ValueError, match="no gate"):
        experts_spec(module)
    module = _module("qwen3_moe").float()
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        experts_spec(module)


def test_quantize_refuses_experts_a_format_cannot_take():
    module = _module("qwen3_moe")  # hidden 64, intermediate 40
    assert _experts_refusal(module, xgemv.parse_format("int4-g32")) == \
        "intermediate size 40 not a multiple of 32"
    assert "multiple of 16" in _experts_refusal(module, xgemv.parse_format("int8"))
    assert _experts_refusal(module, None) is None


def test_the_experts_implementation_registers():
    pytest.importorskip("transformers")
    from transformers.integrations.moe import ExpertsInterface
    xgemv.register_experts_implementation()
    assert "xgemv" in ExpertsInterface._global_mapping
