"""Quantized checkpoints in one call, through transformers' quantizer interface (quant_method
"xgemv"):

    model = xgemv.from_pretrained(path_or_id)           # a GPTQ, AWQ, compressed-tensors or
                                                        # FP8-block checkpoint, as it is
    model = AutoModelForCausalLM.from_pretrained(path_or_id,
        quantization_config=xgemv.XgemvConfig("int4-g128"))   # a dense one, quantized on load

transformers builds the model on the meta device, as for its own quantizers; each linear layer
whose checkpoint tensors are quantized becomes a placeholder holding those tensors as they are
stored (renamed `ckpt_<name>` so that the loader keeps their dtypes), and after loading each
placeholder becomes an xgemv.nn.QuantizedLinear packed from them on the device, without a dense
copy. The layers left dense, and the experts modules, are then served as quantize_(model,
"dense") serves them.
"""
import json
import re

import torch
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.core_model_loading import WeightRenaming
from transformers.quantizers import HfQuantizer, register_quantization_config, register_quantizer
from transformers.utils.quantization_config import QuantizationConfigMixin

from . import checkpoint_formats as cf
from .nn import QuantizedLinear
from .qweight import QFormat, QWeight
from .quantize import quantize_

QUANT_METHOD = "xgemv"
_PREFIX = "ckpt_"

# safetensors' dtype names.
_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
           "BF16": torch.bfloat16, "F8_E4M3": torch.float8_e4m3fn, "I64": torch.int64,
           "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
           "BOOL": torch.bool}


def _headers(files):
    """{key: (shape, dtype)} of the tensors in safetensors files, from their headers alone."""
    tensors = {}
    for path in files:
        with open(path, "rb") as file:
            size = int.from_bytes(file.read(8), "little")
            header = json.loads(file.read(size))
        for key, entry in header.items():
            if key != "__metadata__":
                tensors[key] = (tuple(entry["shape"]), _DTYPES[entry["dtype"]])
    return tensors


_GROUP_SIZES = (128, 64, 32)


def _int4_groups(inputs, groups, what):
    """The xgemv group size for `groups` groups of `inputs` inputs. A group over the whole row
    (GPTQ's group_size -1, a scale per output) becomes groups of 128 (or 64, 32) sharing the row's
    scale and zero point: the same weight."""
    if groups == 1:
        for size in _GROUP_SIZES:
            if inputs % size == 0:
                return size
    elif inputs % groups == 0 and inputs // groups in _GROUP_SIZES:
        return inputs // groups
    raise ValueError(f"xgemv: {what}: {groups} group(s) of 4-bit weights over {inputs} inputs; "
                     "xgemv takes whole groups of 32, 64 or 128 inputs (or one over the row)")


class _Gptq:
    """GPTQ (4 bits): qweight, qzeros, scales, g_idx; zeros stored minus one unless the
    checkpoint_format is "gptq_v2"."""
    markers = ("qweight",)

    def __init__(self, config):
        if config.get("bits", 4) != 4:
            raise ValueError(f"xgemv: GPTQ checkpoints of {config.get('bits')} bits; xgemv reads "
                             "4-bit GPTQ")
        self.zeros_minus_one = config.get("checkpoint_format", "gptq") != "gptq_v2"
        self.symmetric = bool(config.get("sym", True))

    def build(self, name, tensors):
        qweight, qzeros, scales = tensors["qweight"], tensors.get("qzeros"), tensors["scales"]
        g_idx = tensors.get("g_idx")
        inputs = qweight.shape[0] * 8
        group_size = _int4_groups(inputs, scales.shape[0], name)
        if scales.shape[0] == 1:  # one group over the row
            repeats = inputs // group_size
            scales, g_idx = scales.repeat(repeats, 1), None
            qzeros = None if qzeros is None else qzeros.repeat(repeats, 1)
        if qzeros is not None:
            stored = cf.unpack_nibbles(qzeros, 1)
            if self.zeros_minus_one and bool((stored == 15).any()):
                # The public readers take a stored 15 as the zero point 16, which 4-bit zero
                # points cannot hold.
                raise ValueError(f"xgemv: GPTQ layer {name} has a zero point of 16 (stored as 15 "
                                 "minus one), outside xgemv's 4-bit zero points")
            zeros = (stored + 1) & 0xF if self.zeros_minus_one else stored
            if self.symmetric and bool((zeros == 8).all()):
                qzeros = None  # w = (q - 8) s: the symmetric format, without zero points
        return QWeight.from_gptq(qweight, qzeros, scales, g_idx, self.zeros_minus_one)


class _Awq:
    """AWQ, GEMM packing (4 bits): qweight, qzeros, scales."""
    markers = ("qweight",)

    def __init__(self, config):
        if config.get("bits", config.get("w_bit", 4)) != 4:
            raise ValueError("xgemv: AWQ checkpoints of other than 4 bits")
        version = str(config.get("version", "gemm")).lower()
        if version != "gemm":
            raise ValueError(f"xgemv: AWQ's {version!r} packing; xgemv reads the GEMM packing")

    def build(self, name, tensors):
        _int4_groups(tensors["qweight"].shape[0], tensors["scales"].shape[0], name)
        return QWeight.from_awq(tensors["qweight"], tensors["qzeros"], tensors["scales"])


class _BlockFp8:
    """transformers' fine-grained FP8 (DeepSeek-V3's): weight e4m3 [out, in], weight_scale_inv
    fp32 [ceil(out/128), ceil(in/128)], w = q * scale_inv of the weight's 128 x 128 block."""
    markers = ("weight_scale_inv",)

    def __init__(self, config):
        block = list(config.get("weight_block_size") or [128, 128])
        if block != [128, 128]:
            raise ValueError(f"xgemv: FP8 blocks of {block}; xgemv's fp8-block format has "
                             "128 x 128 blocks")

    def build(self, name, tensors):
        return QWeight.from_codes("fp8-block", tensors["weight"], tensors["weight_scale_inv"])


class _CompressedTensors:
    """compressed-tensors (llm-compressor's checkpoints), read from each layer's tensors:
    "pack-quantized" 4-bit weights (weight_packed int32 [out, in/8], input 8w + j in nibble j of
    word w, stored as q + 8; weight_scale [out, groups]; weight_zero_point int32 [out/8, groups]
    packed along the outputs, z + 8, when asymmetric (int8 [out, groups], z, in older files);
    weight_g_idx for activation-ordered groups), and 8-bit weights ("int-quantized",
    "naive-quantized", "float-quantized": weight int8 or e4m3 [out, in], weight_scale per output
    [out, 1], per tensor [1] or, e4m3, per 128 x 128 block). w = (q - z) s. Activation scales
    are not used: xgemv computes the activations in 16 bits."""
    markers = ("weight_packed", "weight_scale")

    def __init__(self, config):
        pass

    def build(self, name, tensors):
        if "weight_packed" in tensors:
            return self._int4(name, tensors)
        weight, scale = tensors["weight"], tensors["weight_scale"]
        kinds = {torch.int8: "int8", torch.float8_e4m3fn: "fp8"}
        if weight.dtype not in kinds or "weight_zero_point" in tensors:
            raise ValueError(f"xgemv: compressed-tensors layer {name}: {weight.dtype} weights"
                             f"{' with zero points' if 'weight_zero_point' in tensors else ''}; "
                             "xgemv reads symmetric int8 and e4m3 weights")
        outputs, inputs = weight.shape
        if scale.numel() == 1:  # one scale for the tensor: the same for every output
            scale = scale.reshape(1, 1).expand(outputs, 1)
        if scale.numel() == outputs:
            return QWeight.from_codes(kinds[weight.dtype], weight, scale.reshape(outputs, 1))
        if kinds[weight.dtype] == "fp8" and tuple(scale.shape) == (-(-outputs // 128),
                                                                  -(-inputs // 128)):
            return QWeight.from_codes("fp8-block", weight, scale)
        raise ValueError(f"xgemv: compressed-tensors layer {name}: scales of shape "
                         f"{tuple(scale.shape)}; xgemv's 8-bit formats have a scale per output "
                         "or (e4m3) per 128 x 128 block")

    def _int4(self, name, tensors):
        packed, scale = tensors["weight_packed"], tensors["weight_scale"]
        shape = tensors.get("weight_shape")
        outputs, inputs = ((int(shape[0]), int(shape[1])) if shape is not None else
                           (packed.shape[0], packed.shape[1] * 8))
        codes = cf.unpack_nibbles(packed, 1)[:, :inputs].contiguous()
        groups = scale.shape[1]
        group_size = _int4_groups(inputs, groups, name)
        zeros = tensors.get("weight_zero_point")
        if zeros is not None:
            zeros = (cf.unpack_nibbles(zeros, 0)[:outputs] if zeros.dtype == torch.int32 else
                     (zeros.to(torch.int16) + 8).to(torch.uint8))
            if bool((zeros == 8).all()):
                zeros = None  # z = 0: the symmetric format
        if groups == 1:  # a scale per output: groups sharing it
            scale = scale.repeat(1, inputs // group_size)
            zeros = None if zeros is None else zeros.repeat(1, inputs // group_size)
        permutation = None
        g_idx = tensors.get("weight_g_idx")
        if groups > 1 and g_idx is not None:
            g_idx = g_idx.long()
            if not torch.equal(g_idx, torch.arange(inputs, device=g_idx.device) // group_size):
                # Activation order: the inputs sorted by group, each group whole and in order.
                if not bool((torch.bincount(g_idx, minlength=groups) == group_size).all()):
                    raise ValueError(f"xgemv: compressed-tensors layer {name}: groups of "
                                     "unequal sizes in weight_g_idx")
                order = torch.argsort(g_idx, stable=True)
                codes, permutation = codes[:, order].contiguous(), order.to(torch.int32)
        return QWeight.from_codes(QFormat("int4", group_size, zeros is not None), codes,
                                  scale.contiguous(), zeros, permutation)


def _reader(config):
    """The reader of a checkpoint's quantization_config (a dict)."""
    method = str(config.get("quant_method", "")).lower()
    readers = {"gptq": _Gptq, "awq": _Awq, "fp8": _BlockFp8,
               "compressed-tensors": _CompressedTensors}
    if method not in readers:
        raise ValueError(f"xgemv: checkpoints quantized by {method!r} are not read; xgemv reads "
                         f"{', '.join(sorted(readers))}")
    return readers[method](config)


class _Placeholder(torch.nn.Module):
    """A quantized linear layer's checkpoint tensors, until they are packed."""

    def __init__(self, in_features, out_features, tensors):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        for name, (shape, dtype) in tensors.items():
            self.register_parameter(_PREFIX + name, torch.nn.Parameter(
                torch.empty(shape, dtype=dtype), requires_grad=False))

    def checkpoint_tensors(self, device):
        return {name.removeprefix(_PREFIX): parameter.data.to(device)
                for name, parameter in self.named_parameters()}


def _quantized_layers(model, headers, reader):
    """(parent, attribute, name, layer, {tensor: (shape, dtype)}) of every torch.nn.Linear whose
    checkpoint tensors are quantized (one of the reader's marker tensors is among them)."""
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            qualified = f"{name}.{child_name}" if name else child_name
            if (type(child) is torch.nn.Linear and
                    any(f"{qualified}.{marker}" in headers for marker in reader.markers)):
                prefix = qualified + "."
                tensors = {key[len(prefix):]: value for key, value in headers.items()
                           if key.startswith(prefix) and "." not in key[len(prefix):]}
                yield module, child_name, qualified, child, tensors


@register_quantization_config(QUANT_METHOD)
class XgemvConfig(QuantizationConfigMixin):
    """quant_method "xgemv": `format` quantizes a dense checkpoint on load (an xgemv format
    name, e.g. "int4-g128"); `checkpoint`, set by xgemv.from_pretrained, is a quantized
    checkpoint's own quantization_config, whose tensors are packed as they are. `device`: where
    the quantized layers are made (default: the current CUDA device)."""

    def __init__(self, format=None, checkpoint=None, device=None, **kwargs):
        self.quant_method = QUANT_METHOD
        self.format = format
        self.checkpoint = checkpoint
        self.device = device


@register_quantizer(QUANT_METHOD)
class XgemvQuantizer(HfQuantizer):
    """The quantizer behind XgemvConfig (module docstring)."""
    requires_calibration = False

    def __init__(self, quantization_config, **kwargs):
        super().__init__(quantization_config, **kwargs)
        self.layers = []

    def _device(self):
        device = self.quantization_config.device
        if device is None:
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device(device)

    def _process_model_before_weight_loading(self, model, checkpoint_files=None, **kwargs):
        config = self.quantization_config
        if not self.pre_quantized or config.checkpoint is None:
            return model
        reader = _reader(config.checkpoint)
        headers = _headers(checkpoint_files or [])
        for parent, attribute, name, layer, tensors in _quantized_layers(model, headers, reader):
            with torch.device("meta"):
                setattr(parent, attribute,
                        _Placeholder(layer.in_features, layer.out_features, tensors))
            self.layers.append(name)
        # Quantized tensors of no linear layer (a mixture's experts stored per expert, say)
        # would leave their module's weights uninitialised: refused, by name.
        served = set(self.layers)
        left = sorted(key for key in headers if key.rpartition(".")[2] in reader.markers and
                      key.rpartition(".")[0] not in served)
        if left:
            raise ValueError(f"xgemv: {len(left)} quantized tensors of the checkpoint belong to no "
                             f"linear layer of the model, e.g. {left[0]}; xgemv reads quantized "
                             "linear layers, not quantized experts")
        self.reader = reader
        return model

    def update_weight_conversions(self, weight_conversions):
        if not self.layers:
            return weight_conversions
        # A renamed tensor keeps its checkpoint dtype (fp16 scales stay fp16 in a bf16 model).
        layers = "|".join(re.escape(name) for name in self.layers)
        renaming = WeightRenaming(source_patterns=rf"^((?:{layers})\.)(?=[A-Za-z_0-9]+$)",
                                  target_patterns=rf"\1{_PREFIX}")
        return [renaming] + list(weight_conversions)

    def _process_model_after_weight_loading(self, model, **kwargs):
        device = self._device()
        dtype = model.dtype
        for name in self.layers:
            parent_name, _, attribute = name.rpartition(".")
            parent = model.get_submodule(parent_name)
            tensors = getattr(parent, attribute).checkpoint_tensors(device)
            bias = tensors.pop("bias", None)
            qweight = self.reader.build(name, tensors)
            if (qweight.outputs, qweight.inputs) != (getattr(parent, attribute).out_features,
                                                     getattr(parent, attribute).in_features):
                raise ValueError(f"xgemv: checkpoint layer {name} is {qweight.outputs} x "
                                 f"{qweight.inputs}, the model's "
                                 f"{getattr(parent, attribute).out_features} x "
                                 f"{getattr(parent, attribute).in_features}")
            setattr(parent, attribute,
                    QuantizedLinear(qweight, None if bias is None else bias.to(dtype)))
        model.to(device)
        quantize_(model, self.quantization_config.format or "dense")
        return model

    def is_serializable(self, safe_serialization=None):
        return False

    @property
    def is_trainable(self):
        return False


def from_pretrained(path, *, dtype=None, device=None, **kwargs):
    """A quantized checkpoint (a directory or a Hub id) as an xgemv model: its config's
    quantization_config (GPTQ, AWQ, compressed-tensors, FP8 blocks) read, its quantized layers
    packed from the checkpoint's tensors as they are, the rest served as quantize_(model,
    "dense") serves it; the model on `device` (default: the current CUDA device). A dense
    checkpoint loads as it is and is served the same way. Other keyword arguments go to
    AutoModelForCausalLM.from_pretrained (dtype defaults to the checkpoint's)."""
    config = AutoConfig.from_pretrained(path, **{k: v for k, v in kwargs.items()
                                                 if k in ("revision", "token", "cache_dir")})
    checkpoint = getattr(config, "quantization_config", None)
    if checkpoint is not None and not isinstance(checkpoint, dict):
        checkpoint = checkpoint.to_dict()
    config.quantization_config = XgemvConfig(
        checkpoint=checkpoint, device=None if device is None else str(device)).to_dict()
    return AutoModelForCausalLM.from_pretrained(path, config=config, dtype=dtype or "auto",
                                                **kwargs)
