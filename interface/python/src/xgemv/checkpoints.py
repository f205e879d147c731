"""Quantized checkpoints in one call, through transformers' quantizer interface (quant_method
"xgemv"):

    model = xgemv.from_pretrained(path_or_id)           # a GPTQ, AWQ, compressed-tensors,
                                                        # FP8 or MXFP4 checkpoint
    model = AutoModelForCausalLM.from_pretrained(path_or_id,
        quantization_config=xgemv.XgemvConfig("int4-g128"))   # a dense one, quantized on load

transformers builds the model on the meta device, as for its own quantizers; each linear layer
whose checkpoint tensors are quantized, and each experts module whose experts the checkpoint
holds quantized one by one, becomes a placeholder holding those tensors as they are stored
(renamed `ckpt_<name>` so that the loader keeps their dtypes and no converter of the model takes
them). After loading, each placeholder's tensors are read into plain codes (QWeight.from_codes'
inputs) and packed on the device, without a dense copy: an xgemv.nn.QuantizedLinear, or an
xgemv.nn.Experts with gate and up stacked. The layers the checkpoint keeps dense, and dense
experts, are then served as quantize_(model, format) serves them ("dense" by default).
"""
import dataclasses
import json
import re
import warnings

import torch
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.core_model_loading import WeightRenaming
from transformers.quantizers import HfQuantizer, register_quantization_config, register_quantizer
from transformers.utils.quantization_config import QuantizationConfigMixin

from . import checkpoint_formats as cf
from .moe import ExpertWeights
from .nn import Experts, QuantizedLinear, experts_spec
from .qweight import QFormat, QWeight
from .quantize import experts_modules, quantize_

QUANT_METHOD = "xgemv"
_PREFIX = "ckpt_"

# safetensors' dtype names.
_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
           "BF16": torch.bfloat16, "F8_E4M3": torch.float8_e4m3fn, "F8_E5M2": torch.float8_e5m2,
           "F8_E8M0": torch.float8_e8m0fnu, "I64": torch.int64, "I32": torch.int32,
           "I16": torch.int16, "I8": torch.int8, "U64": torch.uint64, "U32": torch.uint32,
           "U16": torch.uint16, "U8": torch.uint8, "BOOL": torch.bool}


def _headers(files):
    """{key: (shape, dtype)} of the tensors in safetensors files, from their headers alone."""
    tensors = {}
    for path in files:
        if not str(path).endswith(".safetensors"):
            raise ValueError(f"xgemv: checkpoint file {path}: xgemv reads quantized checkpoints "
                             "in safetensors files")
        with open(path, "rb") as file:
            size = int.from_bytes(file.read(8), "little")
            header = json.loads(file.read(size))
        for key, entry in header.items():
            if key == "__metadata__":
                continue
            if entry["dtype"] not in _DTYPES:
                raise ValueError(f"xgemv: checkpoint tensor {key} of safetensors dtype "
                                 f"{entry['dtype']}, which xgemv does not read")
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


@dataclasses.dataclass
class _Codes:
    """A weight as xgemv.QWeight.from_codes takes it: codes [out, in] in the packed input order
    (4-bit values 0..15, int8, or e4m3), scales, int4 zero points (None: 8) and the
    permutation of activation-ordered groups."""
    qformat: QFormat
    codes: torch.Tensor
    scales: torch.Tensor
    zeros: torch.Tensor = None
    permutation: torch.Tensor = None

    def pack(self):
        return QWeight.from_codes(self.qformat, self.codes, self.scales, self.zeros,
                                  self.permutation)


def _int4_codes(name, codes, scales, zeros, g_idx):
    """codes uint8 [out, in] and g_idx [in] (or None) in the checkpoint's input order, scales
    [out, groups], zeros uint8 [out, groups] (z; None: 8) -> _Codes."""
    inputs, groups = codes.shape[1], scales.shape[1]
    group_size = _int4_groups(inputs, groups, name)
    if groups == 1:  # one group over the row: groups sharing its scale and zero point
        scales = scales.repeat(1, inputs // group_size)
        zeros = None if zeros is None else zeros.repeat(1, inputs // group_size)
        g_idx = None
    permutation = None
    if g_idx is not None:
        g_idx = g_idx.long()
        if not torch.equal(g_idx, torch.arange(inputs, device=g_idx.device) // group_size):
            # Activation order: the inputs sorted by group, each group whole.
            if not bool((torch.bincount(g_idx, minlength=groups) == group_size).all()):
                raise ValueError(f"xgemv: {name}: activation-ordered groups of unequal sizes")
            order = torch.argsort(g_idx, stable=True)
            codes, permutation = codes[:, order], order.to(torch.int32)
    return _Codes(QFormat("int4", group_size, zeros is not None), codes.contiguous(),
                  scales.contiguous(), None if zeros is None else zeros.contiguous(),
                  permutation)


def _common_zero_points(weights):
    """The int4 weights of one packing (a layer, the halves and experts of one projection) with
    one format: zero points for all where any has them, none where all are 8."""
    if weights[0].qformat.kind != "int4":
        return weights
    zeros = [w.zeros for w in weights]
    keep = any(z is not None and not bool((z == 8).all()) for z in zeros)
    result = []
    for w, z in zip(weights, zeros):
        if keep and z is None:
            z = torch.full_like(w.scales, 8, dtype=torch.uint8)
        result.append(dataclasses.replace(
            w, qformat=QFormat("int4", w.qformat.group_size, keep), zeros=z if keep else None))
    return result


class _Gptq:
    """GPTQ (4 bits): qweight int32 [in/8, out], qzeros int32 [groups, out/8] (z - 1 unless the
    checkpoint_format is "gptq_v2"), scales [groups, out], g_idx [in]."""
    markers = ("qweight",)

    def __init__(self, config):
        if config.get("bits", 4) != 4:
            raise ValueError(f"xgemv: GPTQ checkpoints of {config.get('bits')} bits; xgemv reads "
                             "4-bit GPTQ")
        # GPTQModel names it `format`, older writers `checkpoint_format`.
        packing = config.get("checkpoint_format") or config.get("format") or "gptq"
        self.zeros_minus_one = packing != "gptq_v2"

    def codes(self, name, tensors):
        zeros = tensors.get("qzeros")
        if zeros is not None:
            zeros = cf.unpack_nibbles(zeros, 1).t()
            if self.zeros_minus_one:
                if bool((zeros == 15).any()):
                    # A stored 15 is the zero point 16 to the public readers: not a 4-bit value.
                    raise ValueError(f"xgemv: GPTQ layer {name} has a zero point of 16 (stored "
                                     "as 15 minus one), outside xgemv's 4-bit zero points")
                zeros = zeros + 1
        return _int4_codes(name, cf.unpack_nibbles(tensors["qweight"], 0).t(),
                           tensors["scales"].t(), zeros, tensors.get("g_idx"))


class _Awq:
    """AWQ, GEMM packing (4 bits): qweight int32 [in, out/8] and qzeros [groups, out/8] in AWQ's
    nibble order, scales [groups, out]."""
    markers = ("qweight",)

    def __init__(self, config):
        if config.get("bits", config.get("w_bit", 4)) != 4:
            raise ValueError("xgemv: AWQ checkpoints of other than 4 bits")
        version = str(config.get("version", "gemm")).lower()
        if version != "gemm":
            raise ValueError(f"xgemv: AWQ's {version!r} packing; xgemv reads the GEMM packing")
        if not config.get("zero_point", True):
            raise ValueError("xgemv: AWQ without zero points; xgemv reads AWQ's GEMM packing, "
                             "which has them")

    def codes(self, name, tensors):
        return _int4_codes(name, cf.awq_codes(tensors["qweight"]).t(), tensors["scales"].t(),
                           cf.awq_codes(tensors["qzeros"]).t(), None)


def _per_output(scale, outputs):
    """A scale per output [out, 1] from one per output or one for the tensor."""
    return scale.reshape(1, 1).expand(outputs, 1) if scale.numel() == 1 else \
        scale.reshape(outputs, 1)


class _BlockFp8:
    """transformers' fine-grained FP8 (DeepSeek-V3's): weight e4m3 [out, in], weight_scale_inv
    [ceil(out/128), ceil(in/128)] (fp32, or e8m0 powers of two), w = q * scale_inv of the
    weight's 128 x 128 block; without weight_block_size one scale for the tensor."""
    markers = ("weight_scale_inv",)

    def __init__(self, config):
        block = config.get("weight_block_size")
        if block is not None and list(block) != [128, 128]:
            raise ValueError(f"xgemv: FP8 blocks of {list(block)}; xgemv's fp8-block format has "
                             "128 x 128 blocks")

    def codes(self, name, tensors):
        weight, scale = tensors["weight"], tensors["weight_scale_inv"]
        if weight.dtype != torch.float8_e4m3fn:
            raise ValueError(f"xgemv: FP8 layer {name} of {weight.dtype} weights; xgemv reads "
                             "e4m3")
        if scale.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            scale = scale.float()  # e8m0: powers of two, exact in fp32
        if scale.numel() == 1:
            return _Codes(QFormat("fp8"), weight, _per_output(scale, weight.shape[0]))
        return _Codes(QFormat("fp8-block"), weight, scale)


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
        formats = [config.get("format")] + [group.get("format") for group in
                                            (config.get("config_groups") or {}).values()]
        fp4 = [f for f in formats if f and "fp4" in str(f)]
        if fp4:
            raise ValueError(f"xgemv: compressed-tensors {fp4[0]!r} weights; xgemv has no FP4 "
                             "kernels yet")

    def codes(self, name, tensors):
        if "weight_packed" in tensors:
            return self._int4(name, tensors)
        weight, scale = tensors["weight"], tensors["weight_scale"]
        kinds = {torch.int8: "int8", torch.float8_e4m3fn: "fp8"}
        if weight.dtype not in kinds or "weight_zero_point" in tensors:
            raise ValueError(f"xgemv: compressed-tensors layer {name}: {weight.dtype} weights"
                             f"{' with zero points' if 'weight_zero_point' in tensors else ''}; "
                             "xgemv reads symmetric int8 and e4m3 weights")
        outputs, inputs = weight.shape
        if scale.numel() in (1, outputs):
            return _Codes(QFormat(kinds[weight.dtype]), weight, _per_output(scale, outputs))
        if kinds[weight.dtype] == "fp8" and tuple(scale.shape) == (-(-outputs // 128),
                                                                  -(-inputs // 128)):
            return _Codes(QFormat("fp8-block"), weight, scale)
        raise ValueError(f"xgemv: compressed-tensors layer {name}: scales of shape "
                         f"{tuple(scale.shape)}; xgemv's 8-bit formats have a scale per output "
                         "or (e4m3) per 128 x 128 block")

    def _int4(self, name, tensors):
        packed, scale = tensors["weight_packed"], tensors["weight_scale"]
        shape = tensors.get("weight_shape")
        outputs, inputs = ((int(shape[0]), int(shape[1])) if shape is not None else
                           (packed.shape[0], packed.shape[1] * 8))
        if tuple(packed.shape) != (outputs, -(-inputs // 8)):
            raise ValueError(f"xgemv: compressed-tensors layer {name}: weight_packed of shape "
                             f"{tuple(packed.shape)} for {outputs} x {inputs} weights; xgemv "
                             "reads 4-bit packing (8 values an int32)")
        zeros = tensors.get("weight_zero_point")
        if zeros is not None:
            zeros = (cf.unpack_nibbles(zeros, 0)[:outputs] if zeros.dtype == torch.int32 else
                     (zeros.to(torch.int16) + 8).to(torch.uint8))
        return _int4_codes(name, cf.unpack_nibbles(packed, 1)[:, :inputs], scale, zeros,
                           tensors.get("weight_g_idx"))


class _ModelOpt:
    """NVIDIA ModelOpt's FP8 checkpoints (quant_algo "FP8"): weight e4m3 [out, in] and a
    weight_scale for the tensor (input_scale, for FP8 activations, is not used)."""
    markers = ("weight_scale",)

    def __init__(self, config):
        algorithm = str(config.get("quant_algo", "")).upper()
        if algorithm != "FP8":
            raise ValueError(f"xgemv: ModelOpt {algorithm or 'unnamed'} checkpoints; xgemv reads "
                             "ModelOpt's FP8 (it has no FP4 kernels yet)")

    def codes(self, name, tensors):
        weight, scale = tensors["weight"], tensors["weight_scale"]
        if weight.dtype != torch.float8_e4m3fn or scale.numel() not in (1, weight.shape[0]):
            raise ValueError(f"xgemv: ModelOpt layer {name}: {weight.dtype} weights with scales "
                             f"of shape {tuple(scale.shape)}; xgemv reads e4m3 weights with a "
                             "scale per tensor or output")
        return _Codes(QFormat("fp8"), weight, _per_output(scale, weight.shape[0]))


def _reader(config):
    """The reader of a checkpoint's quantization_config (a dict)."""
    method = str(config.get("quant_method", "")).lower()
    readers = {"gptq": _Gptq, "awq": _Awq, "fp8": _BlockFp8,
               "compressed-tensors": _CompressedTensors, "mxfp4": _Mxfp4,
               "modelopt": _ModelOpt}
    if method not in readers:
        raise ValueError(f"xgemv: checkpoints quantized by {method!r} are not read; xgemv reads "
                         f"{', '.join(sorted(readers))}")
    return readers[method](config)


class _Placeholder(torch.nn.Module):
    """A quantized linear layer's checkpoint tensors, until they are packed."""

    def __init__(self, tensors, in_features=None, out_features=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        for name, (shape, dtype) in tensors.items():
            self.register_parameter(_PREFIX + name, torch.nn.Parameter(
                torch.empty(shape, dtype=dtype), requires_grad=False))

    def checkpoint_tensors(self, device):
        return {name.removeprefix(_PREFIX): parameter.data.to(device)
                for name, parameter in self.named_parameters()}


# The names checkpoints give an expert's projections (Mixtral's w1, w3, w2 too).
_EXPERT_PROJECTIONS = {"gate": ("gate_proj", "w1"), "up": ("up_proj", "w3"),
                       "down": ("down_proj", "w2")}


class _ExpertsPlaceholder(torch.nn.Module):
    """A mixture's experts quantized one by one in the checkpoint: their tensors under
    `<e>.<projection>`, until they are packed into xgemv experts. `template` is the model's own
    experts module (its activation and shapes; not a submodule)."""

    def __init__(self, template, tensors, names):
        super().__init__()
        self.__dict__["template"] = template
        self.names = names  # role ("gate", "up", "down") -> the checkpoint's projection name
        for expert, projections in enumerate(tensors):
            holder = torch.nn.Module()
            for projection, specs in projections.items():
                holder.add_module(projection, _Placeholder(specs))
            self.add_module(str(expert), holder)

    def projection_codes(self, reader, name, device):
        """Per role, the experts' _Codes (gate and up stacked as the template's gate_up is)."""
        def codes(expert, role):
            projection = self.names[role]
            tensors = getattr(getattr(self, str(expert)), projection).checkpoint_tensors(device)
            return reader.codes(f"{name}.{expert}.{projection}", tensors)
        count = len(self._modules)
        gate_up, down = [], []
        for expert in range(count):
            halves = _common_zero_points([codes(expert, "gate"), codes(expert, "up")])
            gate_up.append(_stacked_halves(f"{name}.{expert}", *halves))
            down.append(codes(expert, "down"))
        for role, weights in (("gate/up", gate_up), ("down", down)):
            if any(w.permutation is not None for w in weights):
                raise ValueError(f"xgemv: {name}: activation-ordered experts ({role}); xgemv's "
                                 "experts take the inputs in order")
        return _common_zero_points(gate_up), _common_zero_points(down)


def _stacked_halves(name, gate, up):
    """One weight of the gate rows, then the up rows (an experts module's gate_up_proj)."""
    if gate.qformat != up.qformat or gate.permutation is not None or up.permutation is not None:
        raise ValueError(f"xgemv: {name}: gate and up in different formats or orders")
    if gate.qformat.kind == "fp8-block" and gate.codes.shape[0] % 128:
        raise ValueError(f"xgemv: {name}: fp8 blocks across the gate and up halves "
                         f"({gate.codes.shape[0]} rows a half, not a multiple of 128)")
    def cat(a, b):
        return None if a is None else torch.cat([a, b])
    return _Codes(gate.qformat, cat(gate.codes, up.codes), cat(gate.scales, up.scales),
                  cat(gate.zeros, up.zeros))


def _served_experts(template, gate_up, down, gate_up_bias=None, down_bias=None):
    """xgemv.nn.Experts with the template's activation of gate_up and down, each a list of packed
    experts (QWeight, one per expert) or a dense [E, out, in] tensor."""
    spec = experts_spec(template)
    if spec["gate_up_bias"] is not None and gate_up_bias is None:
        raise ValueError(f"xgemv: quantized {type(template).__name__} without their biases")

    def stacked(weights):
        if isinstance(weights, torch.Tensor):
            return ExpertWeights(weights)
        first = weights[0]
        result = ExpertWeights(qformat=first.format, outputs=first.outputs, inputs=first.inputs,
                               scale_dtype=first.scale_dtype, storage=torch.empty(
                                   (len(weights), first.storage.numel()), dtype=torch.uint8,
                                   device=first.device))
        for expert, weight in enumerate(weights):
            result.storage[expert].copy_(weight.storage)
        return result
    return Experts(stacked(gate_up), stacked(down), spec["activation"], spec["alpha"],
                   spec["limit"], gate_up_bias, down_bias)


# e2m1 values of the 16 codes (MXFP4, NVFP4).
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


class _Mxfp4:
    """MXFP4 experts (gpt-oss's, the OCP MX definition): `<experts>.<projection>_blocks` uint8
    [E, out, in/32, 16], element 2j of a 32-input block in the low nibble of byte j and 2j + 1
    in the high one, an e2m1 code each; `<projection>_scales` uint8 [E, out, in/32], the block's
    e8m0 scale 2^(s - 127). Served exactly as fp8 (e4m3 codes, a power-of-two scale per output)
    where an output's blocks lie within the e4m3 range of one another (14 octaves), else dense in
    the activations' 16-bit dtype: xgemv has no MXFP4 kernels yet."""
    markers = ("gate_up_proj_blocks", "down_proj_blocks")
    stacked = True

    def __init__(self, config):
        pass

    def projection(self, name, blocks, scales, dtype):
        """A list of per-expert fp8 _Codes, or (not exact in fp8) the dense [E, out, in] tensor
        in dtype."""
        count, outputs, groups, width = blocks.shape
        if width != 16 or tuple(scales.shape) != (count, outputs, groups):
            raise ValueError(f"xgemv: MXFP4 {name}: blocks {tuple(blocks.shape)} and scales "
                             f"{tuple(scales.shape)}, not [E, out, in/32, 16] and [E, out, in/32]")
        table = torch.tensor(_E2M1, device=blocks.device)

        def dense(expert):
            """The expert's values [out, in] (fp32, exact) and its codes' nibbles."""
            nibbles = torch.stack([blocks[expert] & 0xF, blocks[expert] >> 4], dim=-1)
            values = table[nibbles.long()].reshape(outputs, groups, 32)
            exponents = scales[expert].to(torch.int32) - 127  # [out, groups]
            weights = torch.ldexp(values, exponents.unsqueeze(-1)).reshape(outputs, -1)
            return weights, nibbles.reshape(outputs, groups, 32), exponents

        codes = []
        for expert in range(count):
            weights, nibbles, exponents = dense(expert)
            # The output's scale: its nonzero blocks' largest exponent, less 6 (the codes then
            # reach at most 6 * 2^6 = 384 <= 448).
            nonzero = (nibbles & 7).amax(dim=-1) > 0
            top = torch.where(nonzero, exponents, torch.full_like(exponents, -127)).amax(dim=1)
            scale = torch.ldexp(torch.ones(outputs, 1, device=blocks.device),
                                (top - 6).unsqueeze(1))
            q = (weights / scale).to(torch.float8_e4m3fn)
            if not torch.equal(q.float() * scale, weights):
                warnings.warn(f"xgemv: MXFP4 {name} spans more than e4m3's range within an "
                              f"output; its experts are served dense in {dtype}", stacklevel=2)
                return torch.stack([dense(e)[0].to(dtype) for e in range(count)])
            codes.append(_Codes(QFormat("fp8"), q, scale))
        return codes


def _module_space(model, headers):
    """The checkpoint's keys as the model's modules name them (the model's own renamings, e.g.
    Mixtral's block_sparse_moe -> mlp)."""
    try:
        from transformers.conversion_mapping import get_model_conversion_mapping
        from transformers.core_model_loading import rename_source_key
        renamings = [t for t in get_model_conversion_mapping(model)
                     if isinstance(t, WeightRenaming)]
    except ImportError:
        return headers
    if not renamings:
        return headers
    return {rename_source_key(key, renamings, [])[0]: value for key, value in headers.items()}


def _by_module(headers):
    """{module name: {tensor name: (shape, dtype)}} of the checkpoint's keys."""
    modules = {}
    for key, value in headers.items():
        module, _, tensor = key.rpartition(".")
        modules.setdefault(module, {})[tensor] = value
    return modules


def _quantized(tensors, reader):
    return tensors is not None and any(marker in tensors for marker in reader.markers)


def _quantized_layers(model, modules, reader):
    """(parent, attribute, name, layer) of every torch.nn.Linear whose checkpoint tensors
    (modules: _by_module's) are quantized (one of the reader's marker tensors is among them)."""
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            qualified = f"{name}.{child_name}" if name else child_name
            if type(child) is torch.nn.Linear and _quantized(modules.get(qualified), reader):
                yield module, child_name, qualified, child


def _quantized_experts(model, modules, reader):
    """(parent, attribute, name, module, per-expert tensors, projection names) of every experts
    module whose experts the checkpoint holds quantized one by one."""
    for parent, attribute, name, module in experts_modules(model, None):
        count = module.gate_up_proj.shape[0]
        names = {}
        for role, candidates in _EXPERT_PROJECTIONS.items():
            for candidate in candidates:
                if _quantized(modules.get(f"{name}.0.{candidate}"), reader):
                    names[role] = candidate
        if not names:
            continue
        if len(names) != 3:
            raise ValueError(f"xgemv: {name}: quantized experts without gate, up and down "
                             "projections")
        tensors = [{p: modules.get(f"{name}.{e}.{p}", {}) for p in names.values()}
                   for e in range(count)]
        yield parent, attribute, name, module, tensors, names


@register_quantization_config(QUANT_METHOD)
class XgemvConfig(QuantizationConfigMixin):
    """quant_method "xgemv": `format` (an xgemv format name, e.g. "int4-g128") quantizes the
    layers the checkpoint holds dense on load, quantize_'s way (all of a dense checkpoint's);
    `checkpoint`, set by xgemv.from_pretrained, is a quantized checkpoint's own
    quantization_config, whose tensors are packed as they are. `device`: where the quantized
    layers are made (default: the current CUDA device)."""

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
        self.layers, self.experts, self.stacked, self.reader = [], [], [], None

    def _device(self):
        device = self.quantization_config.device
        if device is None:
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device(device)

    def _process_model_before_weight_loading(self, model, checkpoint_files=None, **kwargs):
        config = self.quantization_config
        if not self.pre_quantized or config.checkpoint is None:
            return model
        self.reader = reader = _reader(config.checkpoint)
        modules = _by_module(_module_space(model, _headers(checkpoint_files or [])))
        for parent, attribute, name, module in list(experts_modules(model, None)):
            if getattr(reader, "stacked", False) and _quantized(modules.get(name), reader):
                # Experts stacked in the checkpoint as in the model (MXFP4's).
                with torch.device("meta"):
                    holder = _Placeholder(modules[name])
                holder.__dict__["template"] = module  # not a submodule
                setattr(parent, attribute, holder)
                self.stacked.append(name)
        for parent, attribute, name, module, tensors, names in list(
                _quantized_experts(model, modules, reader)):
            with torch.device("meta"):
                setattr(parent, attribute, _ExpertsPlaceholder(module, tensors, names))
            self.experts.append(name)
        for parent, attribute, name, layer in list(_quantized_layers(model, modules, reader)):
            with torch.device("meta"):
                setattr(parent, attribute, _Placeholder(modules[name], layer.in_features,
                                                        layer.out_features))
            self.layers.append(name)
        # Quantized tensors no placeholder takes would leave their module's weights
        # uninitialised: refused, by name.
        holders = set(self.layers + self.stacked)
        holders |= {f"{name}.{e}.{p}" for name in self.experts
                    for e, expert in model.get_submodule(name)._modules.items()
                    for p in expert._modules}
        left = sorted(f"{module}.{next(m for m in reader.markers if m in tensors)}"
                      for module, tensors in modules.items()
                      if _quantized(tensors, reader) and module not in holders)
        if left:
            raise ValueError(f"xgemv: {len(left)} quantized tensors of the checkpoint belong to no "
                             f"linear layer or experts module of the model, e.g. {left[0]}")
        return model

    def update_weight_conversions(self, weight_conversions):
        if not self.layers and not self.experts and not self.stacked:
            return weight_conversions
        # The placeholders' tensors renamed (after the model's own renamings): a renamed tensor
        # keeps its checkpoint dtype (fp16 scales stay fp16 in a bf16 model), and no converter
        # of the model takes them.
        names = [re.escape(name) for name in self.layers + self.stacked]
        names += [rf"{re.escape(name)}\.\d+\.\w+" for name in self.experts]
        renaming = WeightRenaming(source_patterns=rf"^((?:{'|'.join(names)})\.)(?=\w+$)",
                                  target_patterns=rf"\1{_PREFIX}")
        conversions = list(weight_conversions)
        last = max((i for i, t in enumerate(conversions) if isinstance(t, WeightRenaming)),
                   default=-1)
        return conversions[:last + 1] + [renaming] + conversions[last + 1:]

    def _process_model_after_weight_loading(self, model, **kwargs):
        device = self._device()
        dtype = model.dtype
        for name in self.layers:
            parent_name, _, attribute = name.rpartition(".")
            parent = model.get_submodule(parent_name)
            holder = getattr(parent, attribute)
            tensors = holder.checkpoint_tensors(device)
            bias = tensors.pop("bias", None)
            qweight = _common_zero_points([self.reader.codes(name, tensors)])[0].pack()
            if (qweight.outputs, qweight.inputs) != (holder.out_features, holder.in_features):
                raise ValueError(f"xgemv: checkpoint layer {name} is {qweight.outputs} x "
                                 f"{qweight.inputs}, the model's {holder.out_features} x "
                                 f"{holder.in_features}")
            setattr(parent, attribute,
                    QuantizedLinear(qweight, None if bias is None else bias.to(dtype)))
        for name in self.experts:
            parent_name, _, attribute = name.rpartition(".")
            parent = model.get_submodule(parent_name)
            holder = getattr(parent, attribute)
            gate_up, down = holder.projection_codes(self.reader, name, device)
            setattr(parent, attribute, _served_experts(
                holder.template, [w.pack() for w in gate_up], [w.pack() for w in down]))
        for name in self.stacked:
            parent_name, _, attribute = name.rpartition(".")
            parent = model.get_submodule(parent_name)
            holder = getattr(parent, attribute)
            tensors = holder.checkpoint_tensors(device)
            weights, biases = [], []
            for projection in ("gate_up_proj", "down_proj"):
                experts = self.reader.projection(f"{name}.{projection}",
                                                 tensors[f"{projection}_blocks"],
                                                 tensors[f"{projection}_scales"], dtype)
                weights.append(experts if isinstance(experts, torch.Tensor) else
                               [w.pack() for w in experts])
                bias = tensors.get(f"{projection}_bias")
                biases.append(None if bias is None else bias.to(dtype))
            setattr(parent, attribute, _served_experts(holder.template, *weights, *biases))
        model.to(device)
        quantize_(model, self.quantization_config.format or "dense")
        return model

    def is_serializable(self, safe_serialization=None):
        return False

    @property
    def is_trainable(self):
        return False


def from_pretrained(path, *, format=None, dtype=None, device=None, **kwargs):
    """A quantized checkpoint (a directory or a Hub id) as an xgemv model: its config's
    quantization_config (GPTQ, AWQ, compressed-tensors, FP8 blocks, MXFP4 experts) read, its
    quantized layers packed from the checkpoint's tensors as they are, the rest served as
    quantize_(model, format) serves it (default "dense": as they are; e.g. "int4-g128" for an LM
    head the checkpoint keeps in 16 bits); the model on `device` (default: the current CUDA
    device). A dense checkpoint loads the same way. Other keyword arguments go to
    AutoModelForCausalLM.from_pretrained (dtype defaults to the checkpoint's)."""
    config = AutoConfig.from_pretrained(path, **{
        k: v for k, v in kwargs.items()
        if k in ("revision", "token", "cache_dir", "subfolder", "trust_remote_code")})
    checkpoint = getattr(config, "quantization_config", None)
    if checkpoint is not None and not isinstance(checkpoint, dict):
        checkpoint = checkpoint.to_dict()
    config.quantization_config = XgemvConfig(
        format, checkpoint=checkpoint, device=None if device is None else str(device)).to_dict()
    return AutoModelForCausalLM.from_pretrained(path, config=config, dtype=dtype or "auto",
                                                **kwargs)
