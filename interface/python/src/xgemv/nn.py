"""Modules: xgemv.nn.Linear (a torch.nn.Linear computed by xgemv), xgemv.nn.QuantizedLinear
(a linear layer with quantized weights) and xgemv.nn.Experts (a mixture-of-experts layer's
experts, dense or quantized)."""
import torch

from .moe import ExpertsCall, ExpertWeights, check_down, check_up, moe_down, moe_up
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


class Experts(torch.nn.Module):
    """A mixture-of-experts layer's experts (the experts module of a Hugging Face MoE block):
    forward(hidden_states [T, H], top_k_index [T, k], top_k_weights [T, k]) -> [T, H] =
    sum_j w[t, j] down[e](act(gate_up[e] x[t] + b) ) + b, on xgemv's routed calls
    (xgemv.moe). The projections are xgemv.moe.ExpertWeights, dense (the parameters
    `gate_up_proj` [E, 2I, H] and `down_proj` [E, H, I]) or quantized (the buffers
    `gate_up_storage` and `down_storage`, their format in the extra state); biases
    `gate_up_proj_bias` [E, 2I] and `down_proj_bias` [E, H] where the experts have them."""

    def __init__(self, gate_up, down, activation="swiglu", alpha=1.702, limit=7.0,
                 gate_up_bias=None, down_bias=None):
        super().__init__()
        self.gate_up, self.down = gate_up, down
        self.activation, self.alpha, self.limit = activation, float(alpha), float(limit)
        self.num_experts = gate_up.count
        self._register("gate_up", gate_up)
        self._register("down", down)
        self.gate_up_proj_bias = _frozen(gate_up_bias)
        self.down_proj_bias = _frozen(down_bias)
        self._calls = None

    def _register(self, name, experts):
        if experts.format is None:
            setattr(self, f"{name}_proj", _frozen(experts.weight))
        else:
            self.register_buffer(f"{name}_storage", experts.storage)

    def _experts_calls(self):
        calls = self._calls
        if calls is None or not (calls[0].serves(self.gate_up, self.gate_up_proj_bias) and
                                 calls[1].serves(self.down, self.down_proj_bias)):
            calls = self._calls = (
                ExpertsCall(self.gate_up, self.gate_up_proj_bias, self.activation, self.alpha,
                            self.limit),
                ExpertsCall(self.down, self.down_proj_bias))
        return calls

    def forward(self, hidden_states, top_k_index, top_k_weights):
        if torch.compiler.is_compiling():
            h = moe_up(hidden_states, self.gate_up, top_k_index, self.activation,
                       alpha=self.alpha, limit=self.limit, bias=self.gate_up_proj_bias)
            return moe_down(h, self.down, top_k_index, top_k_weights, bias=self.down_proj_bias)
        check_up(hidden_states, self.gate_up, top_k_index, self.activation,
                 self.gate_up_proj_bias)
        up, down = self._experts_calls()
        h = up.up(hidden_states, top_k_index)
        check_down(h, self.down, top_k_index, top_k_weights, self.down_proj_bias)
        return down.down(h, top_k_index, top_k_weights)

    @classmethod
    def from_module(cls, module, qformat=None, scale_dtype=None):
        """The xgemv experts of a Hugging Face experts module (transformers 5.x, the modules of
        `@use_experts_implementation`): dense ones share its weights where their layout is
        [E, out, in] and take a transposed copy otherwise (gpt-oss); with a quantized format
        they are quantized by round to nearest. Raises ValueError for experts xgemv does not
        compute (no gate, a post-expert norm, another activation), naming why."""
        spec = experts_spec(module)
        # The activations' dtype: the experts', or the one a dense format names.
        dtype = _DENSE_DTYPES.get(qformat) or spec["gate_up"].dtype
        if qformat in _DENSE_DTYPES:
            def make(w):
                return ExpertWeights(w.detach().to(dtype))
        else:
            fmt = parse_format(qformat)

            def make(w):
                return ExpertWeights.quantize(w.detach(), fmt, scale_dtype)

        def bias(b):
            return None if b is None else b.detach().to(dtype)
        return cls(make(spec["gate_up"]), make(spec["down"]), spec["activation"], spec["alpha"],
                   spec["limit"], bias(spec["gate_up_bias"]), bias(spec["down_bias"]))

    def get_extra_state(self):
        return {"activation": self.activation, "alpha": self.alpha, "limit": self.limit,
                "gate_up": self.gate_up.metadata(), "down": self.down.metadata()}

    def set_extra_state(self, state):
        self.activation, self.alpha, self.limit = (state["activation"], state["alpha"],
                                                   state["limit"])
        self._calls = None
        for name in ("gate_up", "down"):
            m = state[name]
            if m["format"]:
                setattr(self, name, ExpertWeights(
                    qformat=m["format"], outputs=m["outputs"], inputs=m["inputs"],
                    scale_dtype=getattr(torch, m["scale_dtype"]),
                    storage=getattr(self, f"{name}_storage")))
            else:
                setattr(self, name, ExpertWeights(getattr(self, f"{name}_proj")))

    def _apply(self, fn, recurse=True):
        # A move (.to, .cuda) gives new tensors: the library's experts must follow them.
        super()._apply(fn, recurse)
        self.set_extra_state(self.get_extra_state())
        return self

    def extra_repr(self):
        fmt = self.gate_up.format.name if self.gate_up.format else str(self.gate_up.dtype)
        return (f"num_experts={self.num_experts}, hidden={self.gate_up.inputs}, "
                f"intermediate={self.down.inputs}, activation={self.activation}, format={fmt}")


# Formats that keep experts dense: as they are (None, "dense"), or in a 16-bit dtype.
_DENSE_DTYPES = {None: None, "dense": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def _frozen(tensor):
    if tensor is None or isinstance(tensor, torch.nn.Parameter):
        return tensor
    return torch.nn.Parameter(tensor, requires_grad=False)


def experts_spec(module):
    """What xgemv needs of a Hugging Face experts module: its gate/up and down weights in the
    [E, out, in] layout (a transposed module's transposed), its activation ("swiglu": gate rows
    first and SiLU; "swiglu-clamped": gpt-oss's interleaved, clamped gate), alpha, limit and
    biases. ValueError where xgemv does not compute such experts."""
    gate_up = getattr(module, "gate_up_proj", None)
    down = getattr(module, "down_proj", None)
    if not (isinstance(gate_up, torch.Tensor) and isinstance(down, torch.Tensor) and
            gate_up.dim() == 3 and down.dim() == 3):
        raise ValueError(f"{type(module).__name__} has no 3-D gate_up_proj and down_proj")
    if not getattr(module, "has_gate", True):
        raise ValueError(f"{type(module).__name__} has no gate (has_gate=False)")
    if getattr(module, "has_post_expert_norm", False):
        raise ValueError(f"{type(module).__name__} has a norm after each expert")
    if gate_up.dtype not in (torch.float16, torch.bfloat16) or gate_up.dtype != down.dtype:
        raise ValueError(f"{type(module).__name__} weights are {gate_up.dtype}; float16 or "
                         f"bfloat16")
    if getattr(module, "is_transposed", False):
        gate_up, down = gate_up.transpose(1, 2).contiguous(), down.transpose(1, 2).contiguous()
    apply_gate = getattr(type(module), "_apply_gate", None)
    default_gate = apply_gate is None or apply_gate.__name__ == "_default_apply_gate"
    alpha, limit = getattr(module, "alpha", None), getattr(module, "limit", None)
    if default_gate and getattr(module, "is_concatenated", True):
        act = getattr(module, "act_fn", None)
        if type(act).__name__ not in ("SiLU", "SiLUActivation"):
            raise ValueError(f"{type(module).__name__}'s activation {type(act).__name__} is not "
                             f"SiLU")
        activation, alpha, limit = "swiglu", 1.0, 0.0
    elif (not default_gate and alpha is not None and limit is not None and
          not getattr(module, "is_concatenated", True)):
        activation = "swiglu-clamped"
    else:
        raise ValueError(f"{type(module).__name__}'s gate is not one xgemv computes")
    if gate_up.shape[0] != down.shape[0] or gate_up.shape[1] != 2 * down.shape[2]:
        raise ValueError(f"{type(module).__name__}: gate_up_proj {tuple(gate_up.shape)} and "
                         f"down_proj {tuple(down.shape)} do not pair up")
    has_bias = getattr(module, "has_bias", False)
    return {"gate_up": gate_up, "down": down, "activation": activation,
            "alpha": float(alpha), "limit": float(limit),
            "gate_up_bias": getattr(module, "gate_up_proj_bias", None) if has_bias else None,
            "down_bias": getattr(module, "down_proj_bias", None) if has_bias else None}
