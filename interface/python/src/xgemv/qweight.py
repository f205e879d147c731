"""Quantized weights (xgemv/xgemv_quant.h) as PyTorch objects: the format names, a weight's
packed storage in a uint8 tensor, and the conversions that write it on the GPU.

A weight's values are w = v * s with v = q - 8 (int4), q - z (int4 with zero points), q (int8)
or the e4m3 value (fp8), and s the scale of its group (int4: a group of `group_size` inputs of
one output), of its output (int8, fp8) or of its 128 x 128 block (fp8-block).
"""
import ctypes
import dataclasses
import re
import weakref

import torch

from . import _library as L

_QFORMAT_CODES = {"int4": 1, "int8": 2, "fp8": 3, "fp8-block": 4}


@dataclasses.dataclass(frozen=True)
class QFormat:
    """A quantized format: kind ("int4", "int8", "fp8" or "fp8-block"), the int4 group size,
    and whether int4 groups have zero points."""
    kind: str
    group_size: int = 0
    zero_points: bool = False

    @property
    def code(self):
        return _QFORMAT_CODES[self.kind]

    @property
    def name(self):
        if self.kind != "int4":
            return self.kind
        return f"int4-g{self.group_size}" + ("-zp" if self.zero_points else "")


_FORMAT_PATTERN = re.compile(r"int4(?:-g(32|64|128))?(-zp)?|int8|fp8|fp8-block")
FORMAT_NAMES = ("int4-g32", "int4-g64", "int4-g128", "int4-g32-zp", "int4-g64-zp",
                "int4-g128-zp", "int8", "fp8", "fp8-block")


def parse_format(name):
    """"int4-g128" (symmetric, q - 8), "int4-g128-zp" (zero points), g32 / g64 likewise, "int4"
    (= int4-g128), "int8", "fp8" (e4m3, a scale per output), "fp8-block" (128 x 128 blocks)."""
    if isinstance(name, QFormat):
        return name
    match = _FORMAT_PATTERN.fullmatch(str(name))
    if match is None:
        raise ValueError(f"xgemv: unknown quantized format {name!r}; one of "
                         f"{', '.join(FORMAT_NAMES)}")
    if not name.startswith("int4"):
        return QFormat(name)
    return QFormat("int4", int(match.group(1) or 128), match.group(2) is not None)


def _scale_type(dtype):
    if dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise TypeError(f"xgemv: scales must be float16, bfloat16 or float32, not {dtype}")
    return L.DATATYPE_OF_DTYPE[dtype]


def _info(qformat, outputs, inputs, scale_dtype, permuted):
    return L.QWeightInfo(qformat.code, L.R_16BF, _scale_type(scale_dtype), outputs, inputs,
                         qformat.group_size, int(qformat.zero_points), int(permuted))


def layout(qformat, outputs, inputs, scale_dtype=torch.bfloat16, permuted=False):
    """The packed storage's size and the offsets of its parts (needs no GPU): a dict with the
    fields of xgemv_qweight_layout."""
    result = L.QWeightLayout()
    L.check("xgemv_qweight_get_layout",
            L.lib.xgemv_qweight_get_layout(
                ctypes.byref(_info(parse_format(qformat), outputs, inputs, scale_dtype, permuted)),
                ctypes.byref(result)))
    return {name: getattr(result, name) for name, _ in L.QWeightLayout._fields_}


def _address(tensor):
    return None if tensor is None else tensor.data_ptr()


def _scale_shape(qformat, outputs, inputs):
    """The scales' [rows, columns] that xgemv_qweight_pack reads for the format."""
    if qformat.kind == "int4":
        return (outputs, inputs // qformat.group_size)
    if qformat.kind == "fp8-block":
        return (-(-outputs // 128), -(-inputs // 128))
    return (outputs, 1)


def _require(tensor, what, dtype, shape, device):
    if tensor.dtype != dtype:
        raise TypeError(f"xgemv: {what} must be {dtype}, not {tensor.dtype}")
    if tuple(tensor.shape) != tuple(shape):
        raise ValueError(f"xgemv: {what} must have shape {tuple(shape)}, not {tuple(tensor.shape)}")
    if tensor.device != device:
        raise ValueError(f"xgemv: {what} is on {tensor.device}, the weight on {device}")
    return tensor.contiguous()


def _metadata_arguments(metadata):
    """QWeight's constructor arguments before the storage, from QWeight.metadata()."""
    return (metadata["format"], metadata["outputs"], metadata["inputs"],
            getattr(torch, metadata["scale_dtype"]), metadata["permuted"])


# Every QWeight by its storage's address and its metadata, without keeping any alive: the ops
# find a module's weight from its storage (QWeight.live).
_LIVE = weakref.WeakValueDictionary()


def _live_key(storage, qformat, outputs, inputs, scale_dtype, permuted):
    return (storage.data_ptr(), storage.numel(), qformat, int(outputs), int(inputs),
            scale_dtype, bool(permuted))


class QWeight:
    """A quantized weight of `outputs` x `inputs` (PyTorch's [out_features, in_features]): its
    format, the dtype of its scales, and its packed storage (a uint8 CUDA tensor), with the
    library's handle on it. Made by the constructors below; used by xgemv.qlinear."""

    def __init__(self, qformat, outputs, inputs, scale_dtype, permuted=False, storage=None,
                 device=None):
        self.format = parse_format(qformat)
        self.outputs, self.inputs = int(outputs), int(inputs)
        self.scale_dtype, self.permuted = scale_dtype, bool(permuted)
        size = layout(self.format, outputs, inputs, scale_dtype, permuted)["bytes"]
        if storage is None:
            storage = torch.empty(size, dtype=torch.uint8, device=device)
        elif storage.dtype != torch.uint8 or storage.numel() != size or not storage.is_contiguous():
            raise ValueError(f"xgemv: a {self.format.name} weight of {outputs} x {inputs} needs a "
                             f"contiguous uint8 storage of {size} bytes")
        if storage.device.type != "cuda":
            raise ValueError("xgemv: a quantized weight lives on a CUDA device, not "
                             f"{storage.device}")
        self.storage = storage
        # The library's weight objects on this storage, one per activation dtype (the storage
        # does not depend on it); made when first used.
        self._views = {}
        self.value = self.view(torch.bfloat16)
        m = self.metadata()
        _LIVE[_live_key(storage, m["format"], m["outputs"], m["inputs"], m["scale_dtype"],
                        m["permuted"])] = self

    @staticmethod
    def live(storage, qformat, outputs, inputs, scale_dtype, permuted):
        """The live QWeight on `storage` with this metadata (the format's and the scale dtype's
        names, as metadata() gives them), or None."""
        return _LIVE.get(_live_key(storage, parse_format(qformat).name, outputs, inputs,
                                   scale_dtype, permuted))

    def view(self, activation_dtype):
        """The library's weight (xgemv_qweight) on this storage for activations of the dtype."""
        value = self._views.get(activation_dtype)
        if value is None:
            if activation_dtype not in (torch.float16, torch.bfloat16):
                raise TypeError("xgemv: quantized weights take float16 or bfloat16 "
                                f"activations, not {activation_dtype}")
            info = _info(self.format, self.outputs, self.inputs, self.scale_dtype, self.permuted)
            info.activation_type = L.DATATYPE_OF_DTYPE[activation_dtype]
            value = L._ptr()
            L.check("xgemv_qweight_create",
                    L.lib.xgemv_qweight_create(ctypes.byref(value), ctypes.byref(info),
                                               self.storage.data_ptr()))
            self._views[activation_dtype] = value
        return value

    def __del__(self):
        for value in getattr(self, "_views", {}).values():
            L.lib.xgemv_qweight_destroy(value)

    # Copies and pickles carry the storage and the metadata; the library's objects are made
    # anew for the copy's storage (copying their addresses would free them twice).
    def __getstate__(self):
        return {"metadata": self.metadata(), "storage": self.storage}

    def __setstate__(self, state):
        self.__init__(*_metadata_arguments(state["metadata"]), state["storage"])

    @property
    def device(self):
        return self.storage.device

    def metadata(self):
        """What, besides the storage, defines the weight (for state dicts and the op schema)."""
        return {"format": self.format.name, "outputs": self.outputs, "inputs": self.inputs,
                "scale_dtype": str(self.scale_dtype).removeprefix("torch."),
                "permuted": self.permuted}

    @classmethod
    def from_metadata(cls, metadata, storage):
        return cls(*_metadata_arguments(metadata), storage)

    def _handle(self):
        return L.handle_for(self.device.index).value

    # --- conversions (on the current stream) -----------------------------------------------

    @classmethod
    def quantize(cls, weight, qformat, scale_dtype=None):
        """Round-to-nearest quantization of a dense fp16/bf16 [out, in] CUDA tensor (scales of
        the weight's dtype unless given)."""
        if weight.dim() != 2 or weight.dtype not in (torch.float16, torch.bfloat16):
            raise TypeError("xgemv: quantize takes a 2-D float16 or bfloat16 weight, not "
                            f"{weight.dtype} of {weight.dim()} dimensions")
        qweight = cls(qformat, weight.shape[0], weight.shape[1], scale_dtype or weight.dtype,
                      device=weight.device)
        weight = weight if weight.stride(1) == 1 else weight.contiguous()
        # The dense weights are read as the activation type of the library's weight.
        L.check("xgemv_qweight_quantize",
                L.lib.xgemv_qweight_quantize(qweight._handle(), qweight.view(weight.dtype),
                                             weight.data_ptr(),
                                             max(weight.stride(0), weight.shape[1])))
        return qweight

    @classmethod
    def from_codes(cls, qformat, codes, scales, zeros=None, permutation=None):
        """From plain codes: codes uint8/int8 [out, in] (int4: q in 0..15; int8; fp8: the e4m3
        bits, e.g. a torch.float8_e4m3fn tensor), scales [out, groups] (int4), [out] or [out, 1]
        (int8, fp8) or [ceil(out/128), ceil(in/128)] (fp8-block), zeros uint8 [out, groups]
        (int4 with zero points), permutation int32 [in] (packed input k is x[permutation[k]])."""
        qformat = parse_format(qformat)
        outputs, inputs = codes.shape
        device = codes.device
        # Every tensor is checked before anything is allocated: the library reads the scales,
        # zeros and permutation at the shapes the format gives, on the codes' device.
        codes = codes.view(torch.uint8) if codes.element_size() == 1 else codes
        codes = _require(codes, "codes", torch.uint8, (outputs, inputs), device)
        _scale_type(scales.dtype)
        scales = _require(scales.unsqueeze(1) if scales.dim() == 1 else scales, "scales",
                          scales.dtype, _scale_shape(qformat, outputs, inputs), device)
        if zeros is not None:
            zeros = _require(zeros, "zeros", torch.uint8, scales.shape, device)
        if permutation is not None:
            permutation = _require(permutation, "permutation", torch.int32, (inputs,), device)
        qweight = cls(qformat, outputs, inputs, scales.dtype, permutation is not None,
                      device=device)
        L.check("xgemv_qweight_pack",
                L.lib.xgemv_qweight_pack(qweight._handle(), qweight.value, codes.data_ptr(),
                                         inputs, scales.data_ptr(), scales.shape[1],
                                         _address(zeros), scales.shape[1] if zeros is not None
                                         else 0, _address(permutation)))
        return qweight

    @classmethod
    def from_gptq(cls, qweight, qzeros, scales, g_idx=None, zeros_minus_one=True):
        """From a GPTQ layer's tensors (4 bits): qweight int32 [in/8, out], qzeros int32
        [groups, out/8] (or None for a symmetric weight without them), scales [groups, out],
        g_idx int32 [in] (act-order; a trivial g_idx is dropped). zeros_minus_one: the zero
        points are stored minus one, as GPTQ files of the original format do."""
        inputs, outputs = qweight.shape[0] * 8, qweight.shape[1]
        groups = scales.shape[0]
        if inputs % groups:
            raise ValueError(f"xgemv: GPTQ scales of {groups} groups for {inputs} inputs")
        group_size = inputs // groups
        device = qweight.device
        if g_idx is not None:
            g_idx = _require(g_idx.to(torch.int32), "g_idx", torch.int32, (inputs,), device)
            trivial = torch.arange(inputs, device=device, dtype=torch.int32) // group_size
            if torch.equal(g_idx, trivial):
                g_idx = None
        qformat = QFormat("int4", group_size, qzeros is not None)
        result = cls(qformat, outputs, inputs, scales.dtype, g_idx is not None, device=device)
        qweight = _require(qweight, "qweight", torch.int32, (inputs // 8, outputs), device)
        scales = _require(scales, "scales", scales.dtype, (groups, outputs), device)
        if qzeros is not None:
            qzeros = _require(qzeros, "qzeros", torch.int32, (groups, outputs // 8), device)
        L.check("xgemv_qweight_pack_gptq",
                L.lib.xgemv_qweight_pack_gptq(result._handle(), result.value, qweight.data_ptr(),
                                              _address(qzeros), scales.data_ptr(),
                                              _address(g_idx), int(bool(zeros_minus_one))))
        return result

    @classmethod
    def from_awq(cls, qweight, qzeros, scales):
        """From an AWQ layer's tensors (GEMM packing, 4 bits): qweight int32 [in, out/8], qzeros
        int32 [groups, out/8], scales [groups, out]."""
        inputs, outputs = qweight.shape[0], qweight.shape[1] * 8
        groups = scales.shape[0]
        if inputs % groups:
            raise ValueError(f"xgemv: AWQ scales of {groups} groups for {inputs} inputs")
        device = qweight.device
        result = cls(QFormat("int4", inputs // groups, True), outputs, inputs, scales.dtype,
                     device=device)
        qweight = _require(qweight, "qweight", torch.int32, (inputs, outputs // 8), device)
        qzeros = _require(qzeros, "qzeros", torch.int32, (groups, outputs // 8), device)
        scales = _require(scales, "scales", scales.dtype, (groups, outputs), device)
        L.check("xgemv_qweight_pack_awq",
                L.lib.xgemv_qweight_pack_awq(result._handle(), result.value, qweight.data_ptr(),
                                             qzeros.data_ptr(), scales.data_ptr()))
        return result

    def dequantize(self, dtype=torch.float32):
        """The weight's values as a dense [out, in] tensor (in the original input order)."""
        if dtype not in (torch.float32, torch.float16, torch.bfloat16):
            raise TypeError(f"xgemv: dequantize writes float32, float16 or bfloat16, not {dtype}")
        out = torch.empty((self.outputs, self.inputs), dtype=dtype, device=self.device)
        L.check("xgemv_qweight_dequantize",
                L.lib.xgemv_qweight_dequantize(self._handle(), self.value, out.data_ptr(),
                                               self.inputs, L.DATATYPE_OF_DTYPE[dtype]))
        return out
