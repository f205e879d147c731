"""libxgemv through ctypes: the C ABI's signatures, statuses as exceptions, and one handle per
device and thread, kept on the caller's current CUDA stream.

The package carries no compiled Python extension: ctypes calls the same C entry points that C
programs call, so one build serves every torch version (only torch's Python API is used).
"""
import ctypes
import os
import pathlib
import threading

import torch

_c_int64 = ctypes.c_int64
_c_int = ctypes.c_int
_c_char = ctypes.c_char
_ptr = ctypes.c_void_p

# The element types, as src/element_types.json lists them: torch dtype -> (its xgemv_datatype,
# the prefix of its typed entry points xgemv_<prefix>gemv...). tests/python checks this table,
# the statuses and the structures below against that table and the headers.
ELEMENT_TYPES = {torch.float32: (0, "s"), torch.float64: (1, "d"), torch.float16: (2, "h"),
                 torch.bfloat16: (14, "bf16")}
DATATYPE_OF_DTYPE = {dtype: datatype for dtype, (datatype, _) in ELEMENT_TYPES.items()}
R_32F, R_64F = DATATYPE_OF_DTYPE[torch.float32], DATATYPE_OF_DTYPE[torch.float64]
R_16F, R_16BF = DATATYPE_OF_DTYPE[torch.float16], DATATYPE_OF_DTYPE[torch.bfloat16]
# The index types of expert ids (xgemv_moe.h).
R_32I, R_64I = 10, 24
INDEX_TYPE_OF_DTYPE = {torch.int32: R_32I, torch.int64: R_64I}

STATUS_SUCCESS = 0
# Statuses behind which a CUDA runtime error is recorded (xgemv_last_cuda_error).
STATUS_CUDA_ERROR, STATUS_NO_DEVICE = 30, 32
STATUS_WRONG_DEVICE = 25  # the current device is not the handle's


class XgemvError(RuntimeError):
    """A call into libxgemv returned an error status (its name and the library's description)."""

    def __init__(self, function, status):
        self.status = status
        super().__init__(f"xgemv: {function} failed: {describe_status(status)}")


class QWeightInfo(ctypes.Structure):
    _fields_ = [("format", _c_int), ("activation_type", _c_int), ("scale_type", _c_int),
                ("outputs", _c_int64), ("inputs", _c_int64), ("group_size", _c_int64),
                ("zero_points", _c_int), ("permuted", _c_int)]


class MoeRouting(ctypes.Structure):
    _fields_ = [("tokens", _c_int64), ("top_k", _c_int64), ("expert_ids", _ptr),
                ("id_type", _c_int), ("weights", _ptr), ("weight_type", _c_int)]


class QWeightLayout(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_size_t),
                ("codes_offset", ctypes.c_size_t), ("codes_bytes", ctypes.c_size_t),
                ("scales_offset", ctypes.c_size_t), ("scales_bytes", ctypes.c_size_t),
                ("zeros_offset", ctypes.c_size_t), ("zeros_bytes", ctypes.c_size_t),
                ("permutation_offset", ctypes.c_size_t),
                ("permutation_bytes", ctypes.c_size_t),
                ("row_tiles", _c_int64), ("k_blocks", _c_int64), ("scale_groups", _c_int64)]


# name: (argument types, result type); int results are xgemv_status. xgemv_gemv_bias,
# xgemv_qgemv_bias and the MoE calls are left without argument types: the per-layer calls
# (ops.LinearCall, moe.ExpertsCall) pass ctypes objects they made once, which ctypes passes as
# they are (converting 15 Python numbers through argtypes costs several microseconds a call,
# and eager decode is bound by host time).
_SIGNATURES = {
    "xgemv_version_string": ([], ctypes.c_char_p),
    "xgemv_status_string": ([_c_int], ctypes.c_char_p),
    "xgemv_cuda_error_string": ([], ctypes.c_char_p),
    "xgemv_create": ([ctypes.POINTER(_ptr)], _c_int),
    "xgemv_destroy": ([_ptr], _c_int),
    "xgemv_set_stream": ([_ptr, _ptr], _c_int),
    "xgemv_set_batch_invariant": ([_ptr, _c_int], _c_int),
    "xgemv_set_early_start": ([_ptr, _c_int], _c_int),
    # (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy), one per element type
    **{name: ([_ptr, _c_char, _c_int64, _c_int64, _ptr, _ptr, _c_int64, _ptr, _c_int64, _ptr,
               _ptr, _c_int64], _c_int)
       for name in (f"xgemv_{prefix}gemv" for _, prefix in ELEMENT_TYPES.values())},
    "xgemv_qweight_get_layout": ([ctypes.POINTER(QWeightInfo), ctypes.POINTER(QWeightLayout)],
                                 _c_int),
    "xgemv_qweight_create": ([ctypes.POINTER(_ptr), ctypes.POINTER(QWeightInfo), _ptr], _c_int),
    "xgemv_qweight_destroy": ([_ptr], _c_int),
    "xgemv_qweight_pack": ([_ptr, _ptr, _ptr, _c_int64, _ptr, _c_int64, _ptr, _c_int64, _ptr],
                           _c_int),
    "xgemv_qweight_pack_gptq": ([_ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _c_int], _c_int),
    "xgemv_qweight_pack_awq": ([_ptr, _ptr, _ptr, _ptr, _ptr], _c_int),
    "xgemv_qweight_quantize": ([_ptr, _ptr, _ptr, _c_int64], _c_int),
    "xgemv_qweight_dequantize": ([_ptr, _ptr, _ptr, _c_int64, _c_int], _c_int),
    "xgemv_experts_create": ([ctypes.POINTER(_ptr), _c_int, _c_int64, _c_int64, _c_int64, _ptr,
                              _c_int64, _c_int64], _c_int),
    "xgemv_experts_create_quantized": ([ctypes.POINTER(_ptr), ctypes.POINTER(QWeightInfo),
                                        _c_int64, _ptr], _c_int),
    "xgemv_experts_destroy": ([_ptr], _c_int),
    "xgemv_moe_down_workspace_bytes": ([_c_int64, _c_int64, _c_int64], ctypes.c_size_t),
}


_CALLED_WITH_CTYPES_OBJECTS = ("xgemv_gemv_bias", "xgemv_qgemv_bias", "xgemv_moe_up",
                               "xgemv_moe_down")


def _library_path():
    """XGEMV_LIBRARY if set (a build tree's libxgemv.so, for the project's own tests), else the
    copy installed inside this package."""
    override = os.environ.get("XGEMV_LIBRARY")
    if override:
        return pathlib.Path(override)
    return pathlib.Path(__file__).resolve().parent / "lib" / "libxgemv.so"


def _load():
    path = _library_path()
    try:
        library = ctypes.CDLL(str(path))
    except OSError as error:
        raise ImportError(f"xgemv: cannot load its library {path}: {error} (reinstall the "
                          "package with `pip install ./interface/python`, or point XGEMV_LIBRARY "
                          "at a built libxgemv.so)") from error
    for name, (argtypes, restype) in _SIGNATURES.items():
        function = getattr(library, name)
        function.argtypes = argtypes
        function.restype = restype
    for name in _CALLED_WITH_CTYPES_OBJECTS:
        getattr(library, name)  # an older library without them fails here, not at a call
    return library


lib = _load()
LIBRARY_PATH = _library_path()


def describe_status(status):
    return lib.xgemv_status_string(status).decode()


def check(function, status):
    """Raises XgemvError unless status is success; a CUDA error adds the runtime's words."""
    if status != STATUS_SUCCESS:
        error = XgemvError(function, status)
        if status in (STATUS_CUDA_ERROR, STATUS_NO_DEVICE):
            error.args = (f"{error.args[0]} ({lib.xgemv_cuda_error_string().decode()})",)
        raise error


def version():
    return lib.xgemv_version_string().decode()


class _Handle:
    """An xgemv handle of one device, used by one thread, and the stream it was last set to."""

    def __init__(self, device_index):
        self.value = _ptr()
        with torch.cuda.device(device_index):
            check("xgemv_create", lib.xgemv_create(ctypes.byref(self.value)))
        self.stream = 0
        self.batch_invariant = self.early_start = False

    def __del__(self):
        if self.value:
            lib.xgemv_destroy(self.value)


_per_thread = threading.local()
_batch_invariant = _early_start = False


def handle_for(device_index):
    """This thread's handle for the device, set to the current stream of torch's (made at the
    thread's first call on the device, inside a graph capture too: xgemv_create allows it)."""
    handles = getattr(_per_thread, "handles", None)
    if handles is None:
        handles = _per_thread.handles = {}
    handle = handles.get(device_index)
    if handle is None:
        handle = handles[device_index] = _Handle(device_index)
    stream = torch._C._cuda_getCurrentRawStream(device_index)
    if stream != handle.stream:
        check("xgemv_set_stream", lib.xgemv_set_stream(handle.value, stream))
        handle.stream = stream
    if handle.batch_invariant != _batch_invariant:
        check("xgemv_set_batch_invariant",
              lib.xgemv_set_batch_invariant(handle.value, int(_batch_invariant)))
        handle.batch_invariant = _batch_invariant
    if handle.early_start != _early_start:
        check("xgemv_set_early_start", lib.xgemv_set_early_start(handle.value, int(_early_start)))
        handle.early_start = _early_start
    return handle


def set_batch_invariant(enabled):
    """Single-vector calls on the several-vector kernels, so that a row's result has the same
    bits whatever the batch size (xgemv_set_batch_invariant), for every handle of the process."""
    global _batch_invariant
    _batch_invariant = bool(enabled)


def set_early_start(enabled):
    """Every handle's kernels start streaming their weights before the kernel ahead of them on
    the stream has finished (xgemv_set_early_start; Hopper's programmatic dependent launch):
    the caller promises that the work just before a call does not write its weight, true of
    inference, where weights are written long before. Off by default."""
    global _early_start
    _early_start = bool(enabled)
