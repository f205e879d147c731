"""Model conversion: quantize_ replaces a model's torch.nn.Linear layers and mixture-of-experts
experts modules in place (as torchao's quantize_ does), load_gptq_ and load_awq_ put the layers
of a GPTQ or AWQ checkpoint in."""
import warnings

import torch

from .nn import Experts, Linear, QuantizedLinear, experts_spec
from .qweight import parse_format

DENSE_FORMATS = {"dense": None, "bf16": torch.bfloat16, "fp16": torch.float16,
                 "fp32": torch.float32}


def _linear_layers(model, filter_fn):
    """(parent, attribute name, qualified name, layer) of every plain torch.nn.Linear."""
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            qualified = f"{name}.{child_name}" if name else child_name
            if type(child) is torch.nn.Linear and (filter_fn is None or
                                                   filter_fn(child, qualified)):
                yield module, child_name, qualified, child


def experts_modules(model, filter_fn):
    """(parent, attribute name, qualified name, module) of every experts module of a Hugging
    Face MoE block (3-D gate_up_proj and down_proj) not converted yet."""
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            qualified = f"{name}.{child_name}" if name else child_name
            weights = (getattr(child, "gate_up_proj", None), getattr(child, "down_proj", None))
            if (not isinstance(child, Experts) and
                    all(isinstance(w, torch.Tensor) and w.dim() == 3 for w in weights) and
                    (filter_fn is None or filter_fn(child, qualified))):
                yield module, child_name, qualified, child


def _experts_refusal(module, fmt):
    """Why the quantized format cannot take the experts, or None."""
    try:
        spec = experts_spec(module)
    except ValueError as error:
        return str(error)
    hidden, intermediate = spec["gate_up"].shape[2], spec["down"].shape[2]
    if fmt is not None and fmt.kind == "int4":
        for what, inputs in (("hidden", hidden), ("intermediate", intermediate)):
            if inputs % fmt.group_size:
                return f"{what} size {inputs} not a multiple of {fmt.group_size}"
    if fmt is not None and spec["activation"] == "swiglu" and intermediate % 16:
        return f"intermediate size {intermediate} not a multiple of 16 (whole tiles of each half)"
    return None


def quantize_(model, qformat, *, filter_fn=None):
    """Replaces every torch.nn.Linear of model (those filter_fn(module, name) accepts) in place:
    "bf16", "fp16", "fp32" or "dense" give xgemv.nn.Linear, the first three with the whole model
    in that dtype first (model.to(dtype): its activations, norms and embeddings too, which the
    layers' inputs must match; tied weights stay tied), "dense" with the weights as they are;
    "int4-g128", "int4-g128-zp", "int4-g64", "int4-g32" (and -zp), "int8", "fp8" and
    "fp8-block" give xgemv.nn.QuantizedLinear, quantized by round to nearest on the layer's CUDA
    device. The experts modules of Hugging Face MoE blocks become xgemv.nn.Experts, dense (their
    weights as they are for "dense" and "fp32", else in the 16-bit dtype named) or quantized in
    the format; the routers, shared experts and attention are linear layers as any. The replaced
    weights stop requiring grad (these are inference layers). A layer whose weight is tied to
    another module's (an LM head tied to the embedding) is quantized as a weight of its own, the
    other module keeping the dense one (the embedding's lookup). A layer a quantized format
    cannot take (in_features not a multiple of the int4 group size), and experts xgemv does not
    compute, are left as they are, with a warning naming them. Returns model."""
    dense = qformat in DENSE_FORMATS
    fmt = None if dense else parse_format(qformat)
    if dense and DENSE_FORMATS[qformat] is not None:
        model.to(DENSE_FORMATS[qformat])
    skipped = []
    for parent, attribute, name, module in experts_modules(model, filter_fn):
        refusal = _experts_refusal(module, fmt)
        if refusal is not None:
            skipped.append(f"{name} ({refusal})")
            continue
        experts = Experts.from_module(module, None if qformat == "fp32" else qformat)
        setattr(parent, attribute, experts)
    for parent, attribute, name, layer in _linear_layers(model, filter_fn):
        if dense:
            layer.requires_grad_(False)
            setattr(parent, attribute, Linear.from_linear(layer))
            continue
        if fmt.kind == "int4" and layer.in_features % fmt.group_size:
            skipped.append(f"{name} (in_features {layer.in_features} not a multiple of "
                           f"{fmt.group_size})")
            continue
        setattr(parent, attribute, QuantizedLinear.from_linear(layer, fmt))
    if skipped:
        warnings.warn(f"xgemv.quantize_({qformat!r}) left {len(skipped)} layer(s) as they are: "
                      + "; ".join(skipped), stacklevel=2)
    return model


def _load_checkpoint_layers_(model, state_dict, make, kind, device):
    replaced = 0
    for parent, attribute, name, layer in _linear_layers(model, None):
        if f"{name}.qweight" not in state_dict:
            continue
        layer_device = device or (layer.weight.device if layer.weight.is_cuda else
                                  torch.device("cuda", torch.cuda.current_device()))
        tensors = {key.removeprefix(f"{name}."): value.to(layer_device) for key, value in
                   state_dict.items() if key.startswith(f"{name}.")}
        # The bias in the dtype the model computes in (its layer's), which the checkpoint's
        # fp16 scales need not be.
        bias = tensors.get("bias", layer.bias)
        if bias is not None:
            dtype = layer.weight.dtype
            bias = bias.detach().to(dtype if dtype in (torch.float16, torch.bfloat16)
                                    else tensors["scales"].dtype)
        module = make(tensors, bias)
        if (module.in_features, module.out_features) != (layer.in_features, layer.out_features):
            raise ValueError(f"xgemv: {kind} layer {name} is {module.out_features} x "
                             f"{module.in_features}, the model's {layer.out_features} x "
                             f"{layer.in_features}")
        setattr(parent, attribute, module)
        replaced += 1
    return replaced


def load_gptq_(model, state_dict, *, zeros_minus_one=True, device=None):
    """Replaces every torch.nn.Linear `name` of model for which state_dict has `name.qweight`
    by an xgemv.nn.QuantizedLinear made from the GPTQ tensors `name.qweight`, `.qzeros`,
    `.scales`, `.g_idx` (act-order) and `.bias` (4 bits; the group size follows from the
    shapes). zeros_minus_one: the zero points are stored minus one (GPTQ's original format;
    False for the "gptq_v2" format). The quantized layers go to `device` (default: the layer's
    if it is on a CUDA device, e.g. not on "meta", else the current CUDA device). Returns the
    number of layers replaced."""
    def make(tensors, bias):
        return QuantizedLinear.from_gptq(tensors["qweight"], tensors.get("qzeros"),
                                         tensors["scales"], tensors.get("g_idx"), bias,
                                         zeros_minus_one)
    return _load_checkpoint_layers_(model, state_dict, make, "GPTQ", device)


def load_awq_(model, state_dict, *, device=None):
    """As load_gptq_ for an AWQ checkpoint (GEMM packing): `name.qweight`, `.qzeros`,
    `.scales`, `.bias`. Returns the number replaced."""
    def make(tensors, bias):
        return QuantizedLinear.from_awq(tensors["qweight"], tensors["qzeros"], tensors["scales"],
                                        bias)
    return _load_checkpoint_layers_(model, state_dict, make, "AWQ", device)
