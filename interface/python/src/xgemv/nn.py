"""Modules: xgemv.nn.Linear (a torch.nn.Linear computed by xgemv) and xgemv.nn.QuantizedLinear
(a linear layer with quantized weights)."""
import torch

from .ops import LinearCall, QLinearCall, check_linear, check_qlinear, linear, qlinear
from .qweight import QWeight, parse_format


class Linear(torch.nn.Linear):
    """torch.nn.Linear whose forward is xgemv.linear: the same parameters and state dict, and
    isinstance(module, torch.nn.Linear) still holds. Up to 16 rows on xgemv's kernels (bias in
    the epilogue), more on torch.nn.functional.linear."""

    # The layer's call, made at its first forward and again when its parameters change: eager
    # decode is bound by host time, so a forward only checks x against it.
    _xgemv_call = None

    def forward(self, x):
        weight, bias = self.weight, self.bias
        if torch.compiler.is_compiling() or (torch.is_grad_enabled() and (
                x.requires_grad or weight.requires_grad or
                (bias is not None and bias.requires_grad))):
            return linear(x, weight, bias)
        call = self._xgemv_call
        if call is None or not call.serves(weight, bias):
            check_linear(x, weight, bias)
            call = self._xgemv_call = LinearCall(weight, bias)
        shape = x.shape
        if (x.dtype is not call.dtype or x.get_device() != call.device or not shape or
                shape[-1] != call.inputs):
            return linear(x, weight, bias)  # the general path: its checks say what is wrong
        return call(x)

    @classmethod
    def from_linear(cls, module):
        """An xgemv.nn.Linear sharing module's parameters (so tied weights stay tied)."""
        result = cls.__new__(cls)
        torch.nn.Module.__init__(result)
        result.in_features, result.out_features = module.in_features, module.out_features
        result.weight = module.weight
        result.bias = module.bias
        return result


class QuantizedLinear(torch.nn.Module):
    """A linear layer y = x @ W.T + bias with W quantized (see xgemv.QWeight for the formats),
    for fp16/bf16 x. Its state dict holds the packed storage (`storage`), `bias` and the
    format in the extra state."""

    def __init__(self, qweight, bias=None):
        super().__init__()
        self.qweight = qweight
        self.in_features, self.out_features = qweight.inputs, qweight.outputs
        self.register_buffer("storage", qweight.storage)
        if bias is not None and not isinstance(bias, torch.nn.Parameter):
            bias = torch.nn.Parameter(bias, requires_grad=False)
        self.bias = bias

    _xgemv_call = None  # as xgemv.nn.Linear's

    def forward(self, x):
        qweight, bias = self.qweight, self.bias
        if torch.compiler.is_compiling() or (torch.is_grad_enabled() and (
                x.requires_grad or (bias is not None and bias.requires_grad))):
            return qlinear(x, qweight, bias)
        call = self._xgemv_call
        if call is None or not call.serves(qweight, bias):
            check_qlinear(x, qweight.outputs, qweight.inputs, bias, qweight.device)
            call = self._xgemv_call = QLinearCall(qweight, bias)
        shape = x.shape
        if (x.dtype not in (torch.float16, torch.bfloat16) or x.get_device() != call.device or
                not shape or shape[-1] != call.inputs or
                (bias is not None and x.dtype is not bias.dtype)):
            return qlinear(x, qweight, bias)
        return call(x)

    @property
    def format(self):
        return self.qweight.format.name

    @classmethod
    def from_linear(cls, module, qformat, scale_dtype=None):
        """Quantizes a torch.nn.Linear on its CUDA device (round to nearest; scales of its
        dtype unless given). fp32 weights are quantized from their bf16 rounding."""
        weight = module.weight.detach()
        if weight.dtype == torch.float32:
            weight = weight.to(torch.bfloat16)
        qweight = QWeight.quantize(weight, parse_format(qformat), scale_dtype)
        bias = None if module.bias is None else module.bias.detach().to(weight.dtype)
        return cls(qweight, bias)

    @classmethod
    def from_gptq(cls, qweight, qzeros, scales, g_idx=None, bias=None, zeros_minus_one=True):
        """From a GPTQ layer's tensors (see xgemv.QWeight.from_gptq)."""
        return cls(QWeight.from_gptq(qweight, qzeros, scales, g_idx, zeros_minus_one), bias)

    @classmethod
    def from_awq(cls, qweight, qzeros, scales, bias=None):
        """From an AWQ layer's tensors (see xgemv.QWeight.from_awq)."""
        return cls(QWeight.from_awq(qweight, qzeros, scales), bias)

    def dequantize(self, dtype=torch.float32):
        return self.qweight.dequantize(dtype)

    def get_extra_state(self):
        return self.qweight.metadata()

    def set_extra_state(self, state):
        self.qweight = QWeight.from_metadata(state, self.storage)

    def _apply(self, fn, recurse=True):
        # A move (.to, .cuda) gives a new storage: the library's weight must follow it.
        super()._apply(fn, recurse)
        if self.storage is not self.qweight.storage:
            self.qweight = QWeight.from_metadata(self.qweight.metadata(), self.storage)
        return self

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, format={self.format}")
