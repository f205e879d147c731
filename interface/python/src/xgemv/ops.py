"""The torch.library ops `xgemv::gemv`, `xgemv::linear` and `xgemv::qlinear`, and the functions
that call them.

Every op has a fake implementation (shapes and dtypes only), so torch.compile traces it with
fullgraph=True, and runs on torch's current CUDA stream, so CUDA graphs capture it. In eager
mode the functions below call the ops' implementations directly: the dispatcher's round trip
through a Python custom op costs more host time than the GEMV call itself, and eager decode is
bound by host time. Under torch.compile they go through the registered ops.

Inference only: these ops have no backward. When autograd is recording (an input that requires
grad, outside torch.no_grad / torch.inference_mode), linear and qlinear compute with
torch.nn.functional.linear instead.
"""
import ctypes
from typing import Optional

import torch
import torch.nn.functional as F

from . import _library as L
from .qweight import QWeight

# Rows of x (vectors) one call computes on xgemv's kernels: up to 16 at the cost of about one.
# More rows are a GEMM, left to torch.nn.functional.linear.
MAX_ROWS = 16

# Rows a quantized call computes on xgemv's kernels, in passes of MAX_ROWS that each read the
# packed weight again: up to 64 rows that reads less than dequantizing does (writing and reading
# the weight in 16 bits, 5 to 9 times the packed bytes), in fp32 accumulation. More rows
# (prefill) go to torch.nn.functional.linear on the weight dequantized to the activations' dtype.
MAX_QUANTIZED_ROWS = 64

# Host scalars, passed by address (read by the library during the call, so a captured graph
# keeps their values).
_ONE_F, _ZERO_F = ctypes.c_float(1.0), ctypes.c_float(0.0)
_ONE_D, _ZERO_D = ctypes.c_double(1.0), ctypes.c_double(0.0)
_SCALARS = {torch.float64: (ctypes.addressof(_ONE_D), ctypes.addressof(_ZERO_D))}
_FLOAT_SCALARS = (ctypes.addressof(_ONE_F), ctypes.addressof(_ZERO_F))

_GEMV_FUNCTIONS = {dtype: getattr(L.lib, f"xgemv_{prefix}gemv")
                   for dtype, (_, prefix) in L.ELEMENT_TYPES.items()}


def _fail(kind, message):
    raise kind(f"xgemv: {message}")


def _check_dtype(name, tensor, dtypes):
    if tensor.dtype not in dtypes:
        _fail(TypeError, f"{name} is {tensor.dtype}; xgemv takes "
                         f"{', '.join(str(d).removeprefix('torch.') for d in dtypes)}")


def _check_device(op, *tensors):
    device = tensors[0].device
    for tensor in tensors[1:]:
        if tensor is not None and tensor.device != device:
            _fail(ValueError, f"{op}: tensors on {device} and {tensor.device}")
    if device.type not in ("cuda", "meta"):
        reason = ("this machine has no CUDA device" if not torch.cuda.is_available()
                  else "move the tensors to a CUDA device")
        _fail(ValueError, f"{op} computes on CUDA devices, and its tensors are on {device} "
                          f"({reason})")


def check_linear(x, weight, bias):
    """The checks of linear, on shapes, dtypes, strides and devices (fake tensors too)."""
    _check_dtype("x", x, L.DATATYPE_OF_DTYPE)
    if weight.dtype != x.dtype:
        _fail(TypeError, f"linear: weight is {weight.dtype} and x {x.dtype}; they must match")
    if weight.dim() != 2 or x.dim() < 1 or x.shape[-1] != weight.shape[1]:
        _fail(ValueError, f"linear: x of shape {tuple(x.shape)} and weight of shape "
                          f"{tuple(weight.shape)} (out_features, in_features) do not match")
    if weight.shape[1] > 1 and weight.shape[0] > 0 and weight.stride(1) != 1:
        _fail(ValueError, f"linear: weight needs a unit stride along in_features (its strides "
                          f"are {weight.stride()}); pass weight.contiguous()")
    if bias is not None:
        if bias.dtype != x.dtype:
            _fail(TypeError, f"linear: bias is {bias.dtype} and x {x.dtype}; they must match")
        if bias.dim() != 1 or bias.shape[0] != weight.shape[0]:
            _fail(ValueError, f"linear: bias of shape {tuple(bias.shape)} for "
                              f"{weight.shape[0]} outputs")
    _check_device("linear", x, weight, bias)


def _linear_shape(x, outputs):
    return x.shape[:-1] + (outputs,)


def _needs_autograd(*tensors):
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _no_call():
    return None


class _LibraryCall:
    """What every call of one layer shares, checked once: the weight's and the bias's
    addresses and the library's other arguments, as ctypes objects made once. Calling it with
    x (of the layer's dtype and device, checked by the caller) runs the GEMV on torch's current
    stream; more rows than the kernels take (MAX_ROWS, MAX_QUANTIZED_ROWS) go to
    torch.nn.functional.linear."""

    # Where the per-call arguments go in the argument list (the handle is first).
    _X_AT = _Y_AT = _ROWS_AT = None

    def __reduce__(self):
        # A copied or pickled layer makes its call anew (ctypes pointers cannot be copied).
        return (_no_call, ())

    def __init__(self, outputs, inputs, bias, device):
        self.outputs, self.inputs, self.device = outputs, inputs, device
        self.bias = bias
        if bias is not None and bias.stride(0) != 1:
            bias = bias.contiguous()
        self._bias_kept = bias  # alive as long as its address is used
        self._bias_address = ctypes.c_void_p(None if bias is None else bias.data_ptr())

    def _rows(self, x):
        rows = x.numel() // self.inputs if self.inputs else 0
        return rows, (x if x.is_contiguous() else x.contiguous())

    def _run(self, function, arguments, x, rows):
        y = x.new_empty(x.shape[:-1] + (self.outputs,))
        arguments = list(arguments)
        arguments[0] = L.handle_for(self.device).value
        arguments[self._X_AT] = ctypes.c_void_p(x.data_ptr())
        arguments[self._Y_AT] = ctypes.c_void_p(y.data_ptr())
        arguments[self._ROWS_AT] = ctypes.c_int64(rows)
        status = getattr(L.lib, function)(*arguments)
        if status == L.STATUS_WRONG_DEVICE:  # torch's current device is another one
            with torch.cuda.device(self.device):
                arguments[0] = L.handle_for(self.device).value
                status = getattr(L.lib, function)(*arguments)
        L.check(function, status)
        return y


class LinearCall(_LibraryCall):
    """linear's call for one weight and bias (xgemv.nn.Linear keeps one)."""

    # xgemv_gemv_bias(handle, type, trans, m, n, alpha, A, lda, X, ldx, beta, Y, ldy, nrhs, bias)
    _X_AT, _Y_AT, _ROWS_AT = 8, 11, 13

    def __init__(self, weight, bias):
        outputs, inputs = weight.shape
        super().__init__(outputs, inputs, bias, weight.get_device())
        self.weight, self.dtype = weight, weight.dtype
        self.weight_address = weight.data_ptr()
        lda = max(weight.stride(0), inputs, 1) if outputs > 1 else max(inputs, 1)
        one, zero = _SCALARS.get(weight.dtype, _FLOAT_SCALARS)
        i64, address = ctypes.c_int64, ctypes.c_void_p
        self._arguments = (None, ctypes.c_int(L.DATATYPE_OF_DTYPE[weight.dtype]),
                           ctypes.c_char(b"T"), i64(inputs), i64(outputs), address(one),
                           address(self.weight_address), i64(lda), None, i64(inputs),
                           address(zero), None, i64(outputs), None, self._bias_address)

    def serves(self, weight, bias):
        return (weight is self.weight and bias is self.bias and
                weight.data_ptr() == self.weight_address)

    def __call__(self, x):
        rows, x = self._rows(x)
        if rows > MAX_ROWS or rows == 0 or self.outputs == 0:
            return F.linear(x, self.weight, self.bias)
        return self._run("xgemv_gemv_bias", self._arguments, x, rows)


def linear_impl(x, weight, bias=None):
    """y = x @ weight.T + bias on xgemv's kernels (bias added in the kernel's epilogue)."""
    check_linear(x, weight, bias)
    if x.device.type == "meta":
        return x.new_empty(_linear_shape(x, weight.shape[0]))
    if _needs_autograd(x, weight, bias):
        return F.linear(x, weight, bias)
    return LinearCall(weight, bias)(x)


@torch.library.custom_op("xgemv::linear", mutates_args=())
def linear_op(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None
              ) -> torch.Tensor:
    return linear_impl(x, weight, bias)


@linear_op.register_fake
def _linear_fake(x, weight, bias=None):
    check_linear(x, weight, bias)
    return x.new_empty(_linear_shape(x, weight.shape[0]))


def linear(x, weight, bias=None):
    """torch.nn.functional.linear on xgemv: y = x @ weight.T + bias, for x of any shape
    (..., in_features) with up to 16 rows in all; more rows go to torch.nn.functional.linear.
    fp32, fp64, fp16 or bf16, one dtype for all three; weight with a unit stride along
    in_features; results on torch's current stream."""
    if _needs_autograd(x, weight, bias):
        return F.linear(x, weight, bias)
    if torch.compiler.is_compiling():
        return torch.ops.xgemv.linear(x, weight, bias)
    return linear_impl(x, weight, bias)


# --- quantized -----------------------------------------------------------------------------

def _qweight_of(storage, qformat, outputs, inputs, scale_dtype, permuted):
    """The library's weight behind a storage that reaches the op (torch.compile passes tensors
    and numbers, not Python objects): the live QWeight of that storage and metadata (a module's),
    else a new one that lives as long as the storage tensor does."""
    qweight = QWeight.live(storage, qformat, outputs, inputs, scale_dtype, permuted)
    if qweight is None:
        qweight = QWeight(qformat, outputs, inputs, getattr(torch, scale_dtype), bool(permuted),
                          storage)
        # A cycle (storage -> weight -> storage) that the garbage collector frees with both.
        storage._xgemv_qweight = qweight
    return qweight


def check_qlinear(x, outputs, inputs, bias, device):
    _check_dtype("x", x, (torch.float16, torch.bfloat16))
    if x.dim() < 1 or x.shape[-1] != inputs:
        _fail(ValueError, f"qlinear: x of shape {tuple(x.shape)} for a weight of {inputs} inputs")
    if bias is not None:
        if bias.dtype != x.dtype:
            _fail(TypeError, f"qlinear: bias is {bias.dtype} and x {x.dtype}; they must match")
        if bias.dim() != 1 or bias.shape[0] != outputs:
            _fail(ValueError, f"qlinear: bias of shape {tuple(bias.shape)} for {outputs} outputs")
    if x.device != device:
        _fail(ValueError, f"qlinear: x is on {x.device} and the weight on {device}")
    _check_device("qlinear", x, bias)


class QLinearCall(_LibraryCall):
    """qlinear's call for one quantized weight and bias (xgemv.nn.QuantizedLinear keeps one)."""

    # xgemv_qgemv_bias(handle, alpha, weight, X, ldx, beta, Y, ldy, y_type, nrhs, bias)
    _X_AT, _Y_AT, _ROWS_AT = 3, 6, 9

    def __init__(self, qweight, bias):
        super().__init__(qweight.outputs, qweight.inputs, bias, qweight.device.index)
        self.qweight = qweight
        one, zero = _FLOAT_SCALARS
        i64, address = ctypes.c_int64, ctypes.c_void_p
        # One argument list per activation dtype (the library's weight and y's type).
        self._arguments = {
            dtype: (None, address(one), qweight.view(dtype), None, i64(self.inputs),
                    address(zero), None, i64(self.outputs),
                    ctypes.c_int(L.DATATYPE_OF_DTYPE[dtype]), None, self._bias_address)
            for dtype in (torch.float16, torch.bfloat16)}

    def serves(self, qweight, bias):
        return qweight is self.qweight and bias is self.bias

    def __call__(self, x):
        rows, x = self._rows(x)
        if rows > MAX_QUANTIZED_ROWS or rows == 0:
            return F.linear(x, self.qweight.dequantize(x.dtype), self.bias)
        return self._run("xgemv_qgemv_bias", self._arguments[x.dtype], x, rows)


def qlinear_impl(x, qweight, bias=None):
    """y = x @ W.T + bias for a quantized weight W (xgemv.QWeight)."""
    check_qlinear(x, qweight.outputs, qweight.inputs, bias, qweight.device)
    if _needs_autograd(x, bias):
        return F.linear(x, qweight.dequantize(x.dtype), bias)
    return QLinearCall(qweight, bias)(x)


@torch.library.custom_op("xgemv::qlinear", mutates_args=())
def qlinear_op(x: torch.Tensor, storage: torch.Tensor, qformat: str, outputs: int, inputs: int,
               scale_dtype: str, permuted: bool, bias: Optional[torch.Tensor] = None
               ) -> torch.Tensor:
    qweight = _qweight_of(storage, qformat, outputs, inputs, scale_dtype, permuted)
    return qlinear_impl(x, qweight, bias)


@qlinear_op.register_fake
def _qlinear_fake(x, storage, qformat, outputs, inputs, scale_dtype, permuted, bias=None):
    check_qlinear(x, outputs, inputs, bias, storage.device)
    return x.new_empty(_linear_shape(x, outputs))


def qlinear(x, qweight, bias=None):
    """y = x @ W.T + bias for a quantized weight (xgemv.QWeight) and fp16/bf16 x of shape
    (..., in_features) with up to 16 rows in all (more rows: the weight dequantized, then
    torch.nn.functional.linear)."""
    if torch.compiler.is_compiling():
        m = qweight.metadata()
        return torch.ops.xgemv.qlinear(x, qweight.storage, m["format"], m["outputs"],
                                       m["inputs"], m["scale_dtype"], m["permuted"], bias)
    return qlinear_impl(x, qweight, bias)


# --- the BLAS form -------------------------------------------------------------------------

def _blas_matrix(A, trans):
    """A (as PyTorch sees it, any strides with one of them 1) as the column-major matrix the
    library takes: (trans, m, n, lda)."""
    rows, cols = A.shape
    transposed = trans in "TtCc"
    if A.stride(0) == 1 or rows <= 1:  # column-major: A itself
        lda = A.stride(1) if cols > 1 else rows
        return ("T" if transposed else "N"), rows, cols, max(lda, rows, 1)
    if A.stride(1) == 1 or cols <= 1:  # row-major: the column-major A^T, op flipped
        lda = A.stride(0) if rows > 1 else cols
        return ("N" if transposed else "T"), cols, rows, max(lda, cols, 1)
    _fail(ValueError, f"gemv: A needs a unit stride in one dimension (its strides are "
                      f"{A.stride()}); pass A.contiguous()")


def check_gemv(y, A, x, trans, alpha, beta):
    if trans not in ("N", "T", "C", "n", "t", "c"):
        _fail(ValueError, f"gemv: trans must be 'N', 'T' or 'C', not {trans!r}")
    _check_dtype("A", A, L.DATATYPE_OF_DTYPE)
    for name, tensor in (("x", x), ("y", y)):
        if tensor.dtype != A.dtype:
            _fail(TypeError, f"gemv: {name} is {tensor.dtype} and A {A.dtype}; they must match")
        if tensor.dim() != 1:
            _fail(ValueError, f"gemv: {name} must be 1-D, not of shape {tuple(tensor.shape)}")
        if tensor.numel() > 1 and tensor.stride(0) == 0:
            _fail(ValueError, f"gemv: {name} has stride 0 (an expanded tensor)")
    if A.dim() != 2:
        _fail(ValueError, f"gemv: A must be 2-D, not of shape {tuple(A.shape)}")
    rows, cols = (A.shape[1], A.shape[0]) if trans in "TtCc" else tuple(A.shape)
    if x.shape[0] != cols or y.shape[0] != rows:
        _fail(ValueError, f"gemv: op(A) is {rows} x {cols}, x has {x.shape[0]} elements and y "
                          f"{y.shape[0]}")
    _check_device("gemv", A, x, y)


def gemv_impl(y, A, x, trans="N", alpha=1.0, beta=0.0):
    check_gemv(y, A, x, trans, alpha, beta)
    if A.device.type == "meta":
        return
    blas_trans, m, n, lda = _blas_matrix(A, trans)
    scalar = ctypes.c_double if A.dtype == torch.float64 else ctypes.c_float
    alpha_value, beta_value = scalar(alpha), scalar(beta)
    device = A.device.index
    with torch.cuda.device(device):
        L.check("xgemv gemv", _GEMV_FUNCTIONS[A.dtype](
            L.handle_for(device).value, blas_trans.encode(), m, n, ctypes.addressof(alpha_value),
            A.data_ptr(), lda, x.data_ptr(), x.stride(0) if x.numel() > 1 else 1,
            ctypes.addressof(beta_value), y.data_ptr(), y.stride(0) if y.numel() > 1 else 1))


@torch.library.custom_op("xgemv::gemv", mutates_args=("y",))
def gemv_op(y: torch.Tensor, A: torch.Tensor, x: torch.Tensor, trans: str, alpha: float,
            beta: float) -> None:
    gemv_impl(y, A, x, trans, alpha, beta)


@gemv_op.register_fake
def _gemv_fake(y, A, x, trans, alpha, beta):
    check_gemv(y, A, x, trans, alpha, beta)


def gemv(A, x, y=None, *, trans="N", alpha=1.0, beta=0.0):
    """The BLAS GEMV on tensors: y := alpha * op(A) @ x + beta * y, op(A) = A ('N') or A.T
    ('T', 'C'), with the BLAS rules (beta == 0 never reads y, alpha == 0 reads neither A nor x).
    A: 2-D with a unit stride in one dimension, any leading dimension; x, y: 1-D, any stride;
    one dtype (fp32, fp64, fp16, bf16; 16-bit ones accumulate in fp32). y is updated in place
    and returned; without y a new one is made (beta then does not matter)."""
    if y is None:
        rows = A.shape[1] if trans in "TtCc" else A.shape[0]
        y = torch.empty(rows, dtype=A.dtype, device=A.device)
        beta = 0.0
    if torch.compiler.is_compiling():
        torch.ops.xgemv.gemv(y, A, x, trans, float(alpha), float(beta))
    else:
        gemv_impl(y, A, x, trans, float(alpha), float(beta))
    return y
