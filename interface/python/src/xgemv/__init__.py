"""xgemv on PyTorch tensors: GEMVs for decode (1-16 rows at the cost of one), dense and with
quantized weights, as torch.library ops, nn modules and a quantize_() for whole models.

    import xgemv
    y = xgemv.linear(x, W, bias)               # = F.linear(x, W, bias), x with <= 16 rows
    xgemv.quantize_(model, "int4-g128")        # every nn.Linear -> xgemv.nn.QuantizedLinear
    xgemv.quantize_(model, "bf16")             # every nn.Linear -> xgemv.nn.Linear

The ops (torch.ops.xgemv.gemv / linear / qlinear) have fake implementations for torch.compile
and run on torch's current CUDA stream, so CUDA graphs capture them.
"""
from . import _library
from ._library import XgemvError, set_batch_invariant, set_early_start
from .ops import MAX_ROWS, gemv, linear, qlinear
from .qweight import FORMAT_NAMES, QFormat, QWeight, layout, parse_format
from .quantize import load_awq_, load_gptq_, quantize_
from . import nn

__version__ = _library.version()

__all__ = ["FORMAT_NAMES", "MAX_ROWS", "QFormat", "QWeight", "XgemvError", "gemv", "layout",
           "linear", "load_awq_", "load_gptq_", "nn", "parse_format", "qlinear", "quantize_",
           "set_batch_invariant", "set_early_start"]
