"""Mixture-of-experts projections (xgemv_moe.h) on PyTorch tensors: the experts' stacked weights
(dense fp16/bf16 [experts, out, in], or quantized in any xgemv format), and the two routed calls
of a layer, as torch.library ops with fake implementations:

    h = xgemv.moe_up(x, gate_up, top_k_index, "swiglu")      # [T, k, I]: act(W_up[e] x[t])
    y = xgemv.moe_down(h, down, top_k_index, top_k_weights)  # [T, H]: sum_j w W_down[e] h

Each expert that a token chose is read once per call, however many tokens chose it; the ids and
weights stay on the device (no host synchronisation: CUDA graphs capture the calls); a token's
results do not depend on the other tokens of the call. Ids outside [0, experts) choose nothing
(the expert-parallel sentinel). Activations: "identity", "swiglu" (gate rows first, then up:
Qwen3-MoE, Mixtral, DeepSeek-V3, OLMoE), "swiglu-interleaved" and "swiglu-clamped" (gpt-oss:
interleaved rows, g = min(g, limit), u = clamp(u, -limit, limit), h = (u + 1) g sigmoid(alpha g)).
"""
import ctypes
import weakref
from typing import Optional

import torch

from . import _library as L
from .qweight import parse_format, layout

ACTIVATIONS = {"identity": 0, "swiglu": 1, "swiglu-interleaved": 2, "swiglu-clamped": 3}


def _fail(kind, message):
    raise kind(f"xgemv: {message}")


def _activation_code(activation):
    code = ACTIVATIONS.get(activation)
    if code is None:
        _fail(ValueError, f"unknown MoE activation {activation!r}; one of {', '.join(ACTIVATIONS)}")
    return code


class ExpertWeights:
    """The library's experts (xgemv_experts) on one projection's stacked weights: dense, a
    [experts, outputs, inputs] fp16/bf16 CUDA tensor with unit stride along inputs (its activation
    dtype is its own); or quantized, a uint8 CUDA storage [experts, bytes] holding one packed
    weight of xgemv.layout(qformat, outputs, inputs, scale_dtype) per expert (any fp16/bf16
    activations)."""

    def __init__(self, weight=None, *, qformat=None, outputs=None, inputs=None,
                 scale_dtype=torch.bfloat16, storage=None):
        self._values = {}
        if qformat is None:
            if weight is None or weight.dim() != 3:
                _fail(ValueError, "dense experts are a 3-D [experts, outputs, inputs] tensor")
            if weight.dtype not in (torch.float16, torch.bfloat16):
                _fail(TypeError, f"dense experts are float16 or bfloat16, not {weight.dtype}")
            if weight.device.type != "cuda":
                _fail(ValueError, f"experts live on a CUDA device, not {weight.device}")
            if weight.shape[2] > 1 and weight.stride(2) != 1:
                weight = weight.contiguous()
            self.weight, self.storage, self.format = weight, None, None
            self.count, self.outputs, self.inputs = (int(n) for n in weight.shape)
            self.dtype = weight.dtype
        else:
            self.format = parse_format(qformat)
            self.outputs, self.inputs = int(outputs), int(inputs)
            self.scale_dtype = scale_dtype
            self.bytes = layout(self.format, self.outputs, self.inputs, scale_dtype)["bytes"]
            if (storage is None or storage.dtype != torch.uint8 or storage.dim() != 2 or
                    storage.shape[1] != self.bytes or not storage.is_contiguous()):
                _fail(ValueError, f"{self.format.name} experts of {outputs} x {inputs} need a "
                                  f"contiguous uint8 storage [experts, {self.bytes}]")
            self.weight, self.storage, self.dtype = None, storage, None
            self.count = int(storage.shape[0])

    @property
    def tensor(self):
        """The tensor the experts live in (the weights, or the packed storage)."""
        return self.weight if self.format is None else self.storage

    @property
    def device(self):
        return self.tensor.device

    def metadata(self):
        """What, besides the tensor, defines quantized experts (for state dicts and op schemas)."""
        if self.format is None:
            return {"format": "", "outputs": self.outputs, "inputs": self.inputs,
                    "scale_dtype": ""}
        return {"format": self.format.name, "outputs": self.outputs, "inputs": self.inputs,
                "scale_dtype": str(self.scale_dtype).removeprefix("torch.")}

    def value(self, dtype):
        """The library's experts for activations of `dtype` (made once per dtype)."""
        value = self._values.get(dtype)
        if value is not None:
            return value
        value = L._ptr()
        if self.format is None:
            if dtype is not self.dtype:
                _fail(TypeError, f"experts of {self.dtype} take activations of that dtype, "
                                 f"not {dtype}")
            w = self.weight
            L.check("xgemv_experts_create", L.lib.xgemv_experts_create(
                ctypes.byref(value), L.DATATYPE_OF_DTYPE[dtype], self.count, self.outputs,
                self.inputs, w.data_ptr(), max(w.stride(1), self.inputs),
                max(w.stride(0), self.outputs * max(w.stride(1), self.inputs))))
        else:
            if dtype not in (torch.float16, torch.bfloat16):
                _fail(TypeError, f"quantized experts take float16 or bfloat16 activations, "
                                 f"not {dtype}")
            L.check("xgemv_experts_create_quantized", L.lib.xgemv_experts_create_quantized(
                ctypes.byref(value), ctypes.byref(self._info(dtype)), self.count,
                self.storage.data_ptr()))
        self._values[dtype] = value
        return value

    def _info(self, dtype):
        f = self.format
        return L.QWeightInfo(f.code, L.DATATYPE_OF_DTYPE[dtype],
                             L.DATATYPE_OF_DTYPE[self.scale_dtype], self.outputs, self.inputs,
                             f.group_size, int(f.zero_points), 0)

    def __del__(self):
        for value in getattr(self, "_values", {}).values():
            L.lib.xgemv_experts_destroy(value)

    @classmethod
    def quantize(cls, weights, qformat, scale_dtype=None):
        """Round-to-nearest quantization of dense [experts, out, in] fp16/bf16 CUDA weights, one
        expert at a time on the current stream (scales of the weights' dtype unless given)."""
        if weights.dim() != 3 or weights.dtype not in (torch.float16, torch.bfloat16):
            _fail(TypeError, "quantize takes [experts, out, in] float16 or bfloat16 weights")
        qformat = parse_format(qformat)
        count, outputs, inputs = weights.shape
        scale_dtype = scale_dtype or weights.dtype
        size = layout(qformat, outputs, inputs, scale_dtype)["bytes"]
        storage = torch.empty((count, size), dtype=torch.uint8, device=weights.device)
        result = cls(qformat=qformat, outputs=outputs, inputs=inputs, scale_dtype=scale_dtype,
                     storage=storage)
        info = result._info(weights.dtype)
        handle = L.handle_for(weights.device.index).value
        for e in range(count):
            w = weights[e] if weights[e].stride(1) == 1 else weights[e].contiguous()
            qweight = L._ptr()
            L.check("xgemv_qweight_create", L.lib.xgemv_qweight_create(
                ctypes.byref(qweight), ctypes.byref(info), storage[e].data_ptr()))
            try:
                L.check("xgemv_qweight_quantize", L.lib.xgemv_qweight_quantize(
                    handle, qweight, w.data_ptr(), max(w.stride(0), inputs)))
            finally:
                L.lib.xgemv_qweight_destroy(qweight)
        return result

    def dequantize(self, dtype=torch.float32):
        """The experts' values as a dense [experts, out, in] tensor."""
        if self.format is None:
            return self.weight.to(dtype)
        out = torch.empty((self.count, self.outputs, self.inputs), dtype=dtype,
                          device=self.device)
        info = self._info(torch.bfloat16)
        handle = L.handle_for(self.device.index).value
        for e in range(self.count):
            qweight = L._ptr()
            L.check("xgemv_qweight_create", L.lib.xgemv_qweight_create(
                ctypes.byref(qweight), ctypes.byref(info), self.storage[e].data_ptr()))
            try:
                L.check("xgemv_qweight_dequantize", L.lib.xgemv_qweight_dequantize(
                    handle, qweight, out[e].data_ptr(), self.inputs,
                    L.DATATYPE_OF_DTYPE[dtype]))
            finally:
                L.lib.xgemv_qweight_destroy(qweight)
        return out


def _up_outputs(activation, rows):
    return rows if activation == "identity" else rows // 2


def _check_routing(x, top_k_index, top_k_weights, tokens, what):
    if top_k_index.dim() != 2 or top_k_index.shape[0] != tokens:
        _fail(ValueError, f"{what}: top_k_index of shape {tuple(top_k_index.shape)} for "
                          f"{tokens} tokens ([tokens, k])")
    if top_k_index.dtype not in L.INDEX_TYPE_OF_DTYPE:
        _fail(TypeError, f"{what}: top_k_index is {top_k_index.dtype}; int32 or int64")
    if top_k_weights is not None:
        if top_k_weights.shape != top_k_index.shape:
            _fail(ValueError, f"{what}: top_k_weights of shape {tuple(top_k_weights.shape)} "
                              f"and top_k_index of {tuple(top_k_index.shape)}")
        if top_k_weights.dtype not in (torch.float32, x.dtype):
            _fail(TypeError, f"{what}: top_k_weights is {top_k_weights.dtype}; float32 or "
                             f"{x.dtype}")
    for tensor in (top_k_index, top_k_weights):
        if tensor is not None and tensor.device != x.device:
            _fail(ValueError, f"{what}: tensors on {x.device} and {tensor.device}")


def _check_vectors(tensor, experts, name, what, layout):
    """The call's vectors: 16-bit, `layout`'s rank, the experts' inputs last."""
    if tensor.dtype not in (torch.float16, torch.bfloat16):
        _fail(TypeError, f"{what}: {name} is {tensor.dtype}; float16 or bfloat16")
    if tensor.dim() != len(layout) or tensor.shape[-1] != experts.inputs:
        _fail(ValueError, f"{what}: {name} of shape {tuple(tensor.shape)} for experts of "
                          f"{experts.inputs} inputs ([{', '.join(layout)}])")


def check_up(x, experts, top_k_index, activation, bias):
    _check_vectors(x, experts, "x", "moe_up", ("tokens", "inputs"))
    _activation_code(activation)
    _check_routing(x, top_k_index, None, x.shape[0], "moe_up")
    _check_bias(bias, experts, x, "moe_up")


def check_down(h, experts, top_k_index, top_k_weights, bias):
    _check_vectors(h, experts, "h", "moe_down", ("tokens", "k", "inputs"))
    _check_routing(h, top_k_index, top_k_weights, h.shape[0], "moe_down")
    if top_k_weights is None:
        _fail(ValueError, "moe_down: top_k_weights are needed")
    if h.shape[1] != top_k_index.shape[1]:
        _fail(ValueError, f"moe_down: h of {h.shape[1]} experts a token, top_k_index of "
                          f"{top_k_index.shape[1]}")
    _check_bias(bias, experts, h, "moe_down")


def _check_bias(bias, experts, x, what):
    if bias is None:
        return
    if bias.dtype != x.dtype or tuple(bias.shape) != (experts.count, experts.outputs):
        _fail(ValueError, f"{what}: bias must be {x.dtype} [{experts.count}, {experts.outputs}], "
                          f"not {bias.dtype} {tuple(bias.shape)}")


class ExpertsCall:
    """The library calls of one projection's experts and bias, their constant arguments made once
    as ctypes objects (eager decode is bound by host time): up(x, ids) and down(h, ids, weights),
    on torch's current stream. Inputs are checked by the caller."""

    def __init__(self, experts, bias=None, activation="identity", alpha=1.702, limit=7.0):
        self.experts, self.bias = experts, bias
        self.activation = activation
        self._bias = None if bias is None else bias.contiguous()  # alive while its address is used
        self._bias_address = ctypes.c_void_p(None if bias is None else self._bias.data_ptr())
        self._activation = ctypes.c_int(_activation_code(activation))
        self._alpha, self._limit = ctypes.c_float(alpha), ctypes.c_float(limit)
        self._device = experts.device.index

    def serves(self, experts, bias):
        return experts is self.experts and bias is self.bias

    def _routing(self, top_k_index, top_k_weights):
        tokens, k = top_k_index.shape
        top_k_index = top_k_index if top_k_index.is_contiguous() else top_k_index.contiguous()
        weights = None
        if top_k_weights is not None:
            weights = top_k_weights if top_k_weights.is_contiguous() else top_k_weights.contiguous()
        routing = L.MoeRouting(tokens, k, top_k_index.data_ptr(),
                               L.INDEX_TYPE_OF_DTYPE[top_k_index.dtype],
                               None if weights is None else weights.data_ptr(),
                               L.DATATYPE_OF_DTYPE[weights.dtype] if weights is not None
                               else L.R_32F)
        return routing, (top_k_index, weights)

    def _call(self, function, arguments):
        status = getattr(L.lib, function)(*arguments)
        if status == L.STATUS_WRONG_DEVICE:  # torch's current device is another one
            with torch.cuda.device(self._device):
                arguments = (L.handle_for(self._device).value,) + tuple(arguments[1:])
                status = getattr(L.lib, function)(*arguments)
        L.check(function, status)

    def up(self, x, top_k_index):
        x = x if x.is_contiguous() else x.contiguous()
        tokens, k = top_k_index.shape
        outputs = _up_outputs(self.activation, self.experts.outputs)
        h = x.new_empty((tokens, k, outputs))
        routing, kept = self._routing(top_k_index, None)
        self._call("xgemv_moe_up", (
            L.handle_for(self._device).value, self.experts.value(x.dtype), ctypes.byref(routing),
            self._activation, self._alpha, self._limit, self._bias_address,
            ctypes.c_void_p(x.data_ptr()), ctypes.c_int64(self.experts.inputs),
            ctypes.c_void_p(h.data_ptr()), ctypes.c_int64(outputs)))
        return h

    def down(self, h, top_k_index, top_k_weights):
        h = h if h.is_contiguous() else h.contiguous()
        tokens, k = top_k_index.shape
        y = h.new_empty((tokens, self.experts.outputs))
        routing, kept = self._routing(top_k_index, top_k_weights)
        workspace_bytes = L.lib.xgemv_moe_down_workspace_bytes(tokens, k, self.experts.outputs)
        workspace = torch.empty(max(workspace_bytes, 1), dtype=torch.uint8, device=h.device)
        self._call("xgemv_moe_down", (
            L.handle_for(self._device).value, self.experts.value(h.dtype), ctypes.byref(routing),
            self._bias_address, ctypes.c_void_p(h.data_ptr()),
            ctypes.c_int64(self.experts.inputs), ctypes.c_int(0), ctypes.c_void_p(y.data_ptr()),
            ctypes.c_int64(self.experts.outputs), ctypes.c_void_p(workspace.data_ptr()),
            ctypes.c_size_t(workspace_bytes)))
        return y


# The library's experts behind the tensors that reach the ops (torch.compile passes tensors and
# numbers, not Python objects), by address and metadata; an entry whose tensor is gone is dropped.
_EXPERTS = {}


def _experts_of(tensor, qformat, outputs, inputs, scale_dtype):
    key = (tensor.data_ptr(), tuple(tensor.shape), qformat, outputs, inputs, scale_dtype)
    entry = _EXPERTS.get(key)
    if entry is not None and entry[0]() is tensor:
        return entry[1]
    for stale in [k for k, (ref, _) in _EXPERTS.items() if ref() is None]:
        del _EXPERTS[stale]
    if qformat:
        experts = ExpertWeights(qformat=qformat, outputs=outputs, inputs=inputs,
                                scale_dtype=getattr(torch, scale_dtype), storage=tensor)
    else:
        experts = ExpertWeights(tensor)
    _EXPERTS[key] = (weakref.ref(tensor), experts)
    return experts


@torch.library.custom_op("xgemv::moe_up", mutates_args=())
def moe_up_op(x: torch.Tensor, experts: torch.Tensor, top_k_index: torch.Tensor,
              activation: str, alpha: float, limit: float, bias: Optional[torch.Tensor],
              qformat: str, outputs: int, inputs: int, scale_dtype: str) -> torch.Tensor:
    weights = _experts_of(experts, qformat, outputs, inputs, scale_dtype)
    check_up(x, weights, top_k_index, activation, bias)
    return ExpertsCall(weights, bias, activation, alpha, limit).up(x, top_k_index)


@moe_up_op.register_fake
def _moe_up_fake(x, experts, top_k_index, activation, alpha, limit, bias, qformat, outputs,
                 inputs, scale_dtype):
    return x.new_empty((x.shape[0], top_k_index.shape[1], _up_outputs(activation, outputs)))


@torch.library.custom_op("xgemv::moe_down", mutates_args=())
def moe_down_op(h: torch.Tensor, experts: torch.Tensor, top_k_index: torch.Tensor,
                top_k_weights: torch.Tensor, bias: Optional[torch.Tensor], qformat: str,
                outputs: int, inputs: int, scale_dtype: str) -> torch.Tensor:
    weights = _experts_of(experts, qformat, outputs, inputs, scale_dtype)
    check_down(h, weights, top_k_index, top_k_weights, bias)
    return ExpertsCall(weights, bias).down(h, top_k_index, top_k_weights)


@moe_down_op.register_fake
def _moe_down_fake(h, experts, top_k_index, top_k_weights, bias, qformat, outputs, inputs,
                   scale_dtype):
    return h.new_empty((h.shape[0], outputs))


def _op_arguments(experts):
    m = experts.metadata()
    return (experts.tensor, m["format"], m["outputs"], m["inputs"], m["scale_dtype"])


def moe_up(x, experts, top_k_index, activation="swiglu", *, alpha=1.702, limit=7.0, bias=None):
    """h[t, j] = act(W[top_k_index[t, j]] x[t] + bias[e]) for x [tokens, inputs] (fp16/bf16),
    experts an xgemv.moe.ExpertWeights (or a dense [experts, out, in] tensor), top_k_index
    [tokens, k] int32/int64: h is [tokens, k, out] (out / 2 after a SwiGLU). Rows of h whose id
    is outside [0, experts) are left unwritten."""
    if not isinstance(experts, ExpertWeights):
        experts = _experts_of(experts, "", 0, 0, "")
    if torch.compiler.is_compiling():
        tensor, qformat, outputs, inputs, scale_dtype = _op_arguments(experts)
        return torch.ops.xgemv.moe_up(x, tensor, top_k_index, activation, float(alpha),
                                      float(limit), bias, qformat, outputs, inputs, scale_dtype)
    check_up(x, experts, top_k_index, activation, bias)
    return ExpertsCall(experts, bias, activation, alpha, limit).up(x, top_k_index)


def moe_down(h, experts, top_k_index, top_k_weights, *, bias=None):
    """y[t] = sum_j top_k_weights[t, j] (W[top_k_index[t, j]] h[t, j] + bias[e]) for h [tokens, k,
    inputs], summed over j in order: y is [tokens, out], of h's dtype."""
    if not isinstance(experts, ExpertWeights):
        experts = _experts_of(experts, "", 0, 0, "")
    if torch.compiler.is_compiling():
        tensor, qformat, outputs, inputs, scale_dtype = _op_arguments(experts)
        return torch.ops.xgemv.moe_down(h, tensor, top_k_index, top_k_weights, bias, qformat,
                                        outputs, inputs, scale_dtype)
    check_down(h, experts, top_k_index, top_k_weights, bias)
    return ExpertsCall(experts, bias).down(h, top_k_index, top_k_weights)
