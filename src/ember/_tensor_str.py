"""Printing tensors in torch's format: ``tensor([1.0000, 2.5000], requires_grad=True)``."""
import math

import numpy as np

from . import _dtype
from ._backend import backend_of
from ._layout import strided as _strided

__all__ = ["set_printoptions", "tensor_repr", "type_name"]


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Set options for printing, as ``torch.set_printoptions``."""
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "uint8": "ByteTensor", "int8": "CharTensor",
    "int16": "ShortTensor", "int32": "IntTensor", "int64": "LongTensor", "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
    "uint16": "UInt16Tensor", "uint32": "UInt32Tensor", "uint64": "UInt64Tensor",
    "float8_e4m3fn": "Float8_e4m3fnTensor", "float8_e5m2": "Float8_e5m2Tensor",
    "float8_e4m3fnuz": "Float8_e4m3fnuzTensor", "float8_e5m2fnuz": "Float8_e5m2fnuzTensor",
    "float8_e8m0fnu": "Float8_e8m0fnuTensor",
}


def type_name(tensor):
    """torch's legacy type string, e.g. ``torch.FloatTensor``, spelled as torch spells it
    (programs compare these strings)."""
    prefix = "torch." if tensor.device.type == "cpu" else "torch.cuda."
    return prefix + _TYPE_NAMES[tensor.dtype.name]


class _Formatter:
    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if finite.size:
                absval = np.abs(finite)
                vmin, vmax = absval.min(), absval.max()
                self.int_mode = bool(np.all(finite == np.ceil(finite)))
                if PRINT_OPTS.sci_mode is None:
                    self.sci_mode = bool(vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4)
                else:
                    self.sci_mode = PRINT_OPTS.sci_mode
                vals = finite.tolist()
                if self.sci_mode:
                    self.max_width = max(len(f"{v:.{p}e}") for v in vals)
                elif self.int_mode:
                    self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
                else:
                    self.max_width = max(len(f"{v:.{p}f}") for v in vals)

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(values):
    e = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        return np.concatenate([values[:e], values[-e:]]) if values.shape[0] > 2 * e else values
    if values.shape[0] > 2 * e:
        rows = list(values[:e]) + list(values[-e:])
    else:
        rows = list(values)
    return np.stack([_summarized(r) for r in rows])


def _vector_str(values, indent, summarize, fmt):
    element_length = fmt.max_width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and values.shape[0] > 2 * e:
        data = [fmt.format(v) for v in values[:e].tolist()] + [" ..."] + \
               [fmt.format(v) for v in values[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values, indent, summarize, fmt):
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and values.shape[0] > 2 * e:
        slices = [_nested_str(values[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."] + \
                 [_nested_str(values[i], indent + 1, summarize, fmt)
                  for i in range(values.shape[0] - e, values.shape[0])]
    else:
        slices = [_nested_str(values[i], indent + 1, summarize, fmt) for i in range(values.shape[0])]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(values, indent, dtype):
    summarize = values.size > PRINT_OPTS.threshold
    floating = dtype.is_floating_point
    if floating and dtype.itemsize < 4:  # float16, bfloat16, the float8 types
        values = values.astype(np.float32)
    fmt = _Formatter(_summarized(values) if summarize else values, floating)
    return _nested_str(values, indent, summarize, fmt)


def _complex_str(values, indent):
    summarize = values.size > PRINT_OPTS.threshold
    src = _summarized(values) if summarize else values
    real_fmt = _Formatter(src.real.astype(np.float64), True)
    imag_fmt = _Formatter(src.imag.astype(np.float64), True)

    class _Both:
        max_width = real_fmt.max_width + imag_fmt.max_width + 2

        @staticmethod
        def format(v):
            r = real_fmt.format(v.real)
            i = imag_fmt.format(v.imag).lstrip()
            sign = "+" if not i.startswith("-") else "-"
            i = i.lstrip("-")
            return f"{r}{sign}{i}j"
    return _nested_str(values, indent, summarize, _Both)


def _add_suffixes(tensor_str, suffixes, indent, force_newline=False):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _sparse_repr(tensor, prefix):
    """torch's layout for a sparse tensor: its index arrays, values, size and nnz."""
    indent = len(prefix)
    data = tensor._data
    coo = tensor.is_sparse
    arrays = ((("indices", data.indices),) if coo else
              (("crow_indices", data.crow_indices), ("col_indices", data.col_indices)))
    parts = []
    for name, array, dtype in [(n, a, _dtype.int64) for n, a in arrays] + [("values", data.values, tensor.dtype)]:
        head = f"{name}=tensor("
        array = backend_of(array).to_host(array)
        body = _tensor_str(array, indent + len(head), dtype) if array.size else "[]"
        if not array.size:
            body += f", size={tuple(array.shape)}"
        parts.append(head + body + ")")
    suffixes = [f"size={tuple(data.shape)}", f"nnz={data.nnz}"]
    default = _dtype.get_default_dtype()
    if tensor.dtype not in (default, default.to_complex(), _dtype.int64, _dtype.bool):
        suffixes.append(f"dtype={tensor.dtype}")
    suffixes.append(f"layout={tensor.layout}")
    if tensor.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(tensor.grad_fn).__name__}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + (",\n" + " " * indent).join(parts), suffixes, indent, force_newline=coo)


def tensor_repr(tensor, prefix="tensor("):
    if tensor.layout is not _strided:
        return _sparse_repr(tensor, prefix)
    indent = len(prefix)
    dtype = tensor.dtype
    suffixes = []
    if tensor.device.type != "cpu":
        suffixes.append(f"device='{tensor.device}'")
    default = (_dtype.get_default_dtype(), _dtype.get_default_dtype().to_complex(), _dtype.int64, _dtype.bool)
    values = tensor._data
    if tensor.is_meta:   # no values to show: the size instead, as torch prints meta tensors
        suffixes.append(f"size={tuple(values.shape)}")
        if dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={dtype}")
        body = "..."
        values = None
    elif tensor.device.type != "cpu":
        values = values.get()
    if values is None:
        pass
    elif values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if dtype not in default:
            suffixes.append(f"dtype={dtype}")
        if dtype.is_complex:
            body = _complex_str(values, indent)
        else:
            body = _tensor_str(values, indent, dtype)
    if tensor.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(tensor.grad_fn).__name__}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
