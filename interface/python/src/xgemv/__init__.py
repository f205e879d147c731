"""xgemv on PyTorch tensors: GEMVs for decode (1-16 rows at the cost of one), dense and with
quantized weights, as torch.library ops, nn modules and a quantize_() for whole models.

    import xgemv
    y = xgemv.linear(x, W, bias)               # = F.linear(x, W, bias), x with <= 16 rows
    xgemv.quantize_(model, "int4-g128")        # every nn.Linear -> xgemv.nn.QuantizedLinear
    xgemv.quantize_(model, "bf16")             # every nn.Linear -> xgemv.nn.Linear
    h = xgemv.moe_up(x, gate_up, top_k_index)  # a MoE layer's experts: xgemv.moe
    model.set_experts_implementation("xgemv")  # Hugging Face MoE models, their weights as they are
    model = xgemv.from_pretrained(path)        # a GPTQ, AWQ, compressed-tensors or FP8 checkpoint

The ops (torch.ops.xgemv.gemv / linear / qlinear / moe_up / moe_down) have fake implementations
for torch.compile and run on torch's current CUDA stream, so CUDA graphs capture them.
"""
import sys

from . import _library
from ._library import XgemvError, set_batch_invariant, set_early_start
from .ops import MAX_QUANTIZED_ROWS, MAX_ROWS, gemv, linear, qlinear
from .moe import ExpertWeights, moe_down, moe_up
from .hf_experts import register_experts_implementation
from .qweight import FORMAT_NAMES, QFormat, QWeight, layout, parse_format
from .quantize import load_awq_, load_gptq_, quantize_
from . import nn

__version__ = _library.version()


def from_pretrained(path, **kwargs):
    """A quantized Hugging Face checkpoint in one call: xgemv.checkpoints.from_pretrained."""
    from . import checkpoints
    return checkpoints.from_pretrained(path, **kwargs)


def __getattr__(name):
    # XgemvConfig is a transformers quantization config: transformers is imported when it is
    # first asked for, not with xgemv.
    if name == "XgemvConfig":
        from .checkpoints import XgemvConfig
        return XgemvConfig
    raise AttributeError(f"module 'xgemv' has no attribute {name!r}")

# Where transformers is already imported, the experts implementation "xgemv" is there at once
# (importing transformers here would cost every user of xgemv its import time).
if "transformers" in sys.modules:
    register_experts_implementation()

__all__ = ["ExpertWeights", "FORMAT_NAMES", "MAX_QUANTIZED_ROWS", "MAX_ROWS", "QFormat",
           "QWeight", "XgemvConfig", "XgemvError", "from_pretrained", "gemv", "layout", "linear",
           "load_awq_", "load_gptq_", "moe_down", "moe_up", "nn", "parse_format", "qlinear",
           "quantize_", "register_experts_implementation", "set_batch_invariant",
           "set_early_start"]
