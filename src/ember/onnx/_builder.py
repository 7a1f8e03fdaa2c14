"""``Builder``: the ONNX graph under construction while a traced ember graph is converted:
its nodes, initializers and the ONNX value each ember node became."""
import math

import numpy as np

__all__ = ["Builder", "onnx_dtype", "Unsupported"]


class Unsupported(Exception):
    """A node the exporter cannot express in ONNX (turned into UnsupportedOperatorError, with
    the node's name, by the exporter)."""


_DTYPES = None


def _dtype_table():
    global _DTYPES
    if _DTYPES is None:
        import ember
        from onnx import TensorProto as T
        _DTYPES = {ember.float32: T.FLOAT, ember.float64: T.DOUBLE, ember.float16: T.FLOAT16,
                   ember.bfloat16: T.BFLOAT16, ember.int64: T.INT64, ember.int32: T.INT32,
                   ember.int16: T.INT16, ember.int8: T.INT8, ember.uint8: T.UINT8,
                   ember.bool: T.BOOL, ember.complex64: T.COMPLEX64,
                   ember.complex128: T.COMPLEX128}
    return _DTYPES


def onnx_dtype(dtype):
    """The ``onnx.TensorProto`` element type of an ember dtype."""
    try:
        return _dtype_table()[dtype]
    except KeyError:
        raise Unsupported(f"dtype {dtype} has no ONNX type") from None


def numpy_dtype(dtype):
    import ember
    return ember.empty(0, dtype=dtype).numpy().dtype if dtype != ember.bfloat16 else np.float32


class Builder:
    """Collects ONNX nodes and initializers. ``op`` adds a node and returns its output name(s);
    ``const`` adds an initializer; ``meta`` records the (shape, dtype) known for a value."""

    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self.meta = {}              # ONNX value name -> (shape tuple, ember dtype)
        self.value_dependent = False   # a size decided by the values (NonZero, Compress, ...)
        self._names = set()
        self._consts = {}

    def fresh(self, hint):
        hint = "".join(c if c.isalnum() or c in "_./" else "_" for c in str(hint)) or "v"
        name, i = hint, 0
        while name in self._names:
            i += 1
            name = f"{hint}_{i}"
        self._names.add(name)
        return name

    def reserve(self, name):
        if name in self._names:
            raise ValueError(f"the ONNX value name {name!r} is used twice")
        self._names.add(name)
        return name

    def op(self, op_type, inputs, outputs=1, name=None, **attrs):
        """Add an ``op_type`` node; ``outputs`` is a count or a list of names. Returns the output
        name (or the list of them when more than one)."""
        from onnx import helper
        if isinstance(outputs, int):
            outs = [self.fresh(f"{(name or op_type)}_out") for _ in range(outputs)]
        else:
            outs = list(outputs)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op_type, [i if i is not None else "" for i in inputs], outs,
                                name=self.fresh(name or op_type), **attrs)
        self.nodes.append(node)
        return outs[0] if len(outs) == 1 else outs

    def const(self, value, dtype=None, name=None):
        """An initializer holding ``value`` (an array, a number or a list), of the ember
        ``dtype`` when given; equal small constants are shared."""
        from onnx import numpy_helper
        array = np.asarray(value)
        if dtype is not None:
            array = array.astype(numpy_dtype(dtype))
        elif array.dtype == np.float64 and not isinstance(value, np.ndarray):
            array = array.astype(np.float32)
        key = None
        if array.size <= 16 and name is None:
            key = (array.dtype.str, array.shape, array.tobytes())
            hit = self._consts.get(key)
            if hit is not None:
                return hit
        out = name if name is not None else self.fresh("const")   # a name from fresh()
        tensor = numpy_helper.from_array(np.array(array, order="C"), out)   # 0-d stays 0-d
        self.initializers.append(tensor)
        if key is not None:
            self._consts[key] = out
        return out

    def ints(self, values):
        return self.const(np.asarray(list(values), dtype=np.int64))

    # -- common compositions ---------------------------------------------------------------------
    def reduce(self, op_type, x, axes, keepdims):
        """A Reduce* node: axes as an input where the opset wants one (ReduceSum from 13, the
        others from 18), else as an attribute."""
        keep = int(bool(keepdims))
        if axes is None:
            return self.op(op_type, [x], keepdims=keep)
        axes = [int(a) for a in axes]
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, [x, self.ints(axes)], keepdims=keep)
        return self.op(op_type, [x], axes=axes, keepdims=keep)

    def unsqueeze(self, x, axes):
        return self.op("Unsqueeze", [x, self.ints(axes)])

    def squeeze(self, x, axes=None):
        return self.op("Squeeze", [x] if axes is None else [x, self.ints(axes)])

    def cast(self, x, dtype):
        return self.op("Cast", [x], to=onnx_dtype(dtype))

    def scalar(self, value, dtype):
        if isinstance(value, float) and math.isinf(value):
            return self.const(value, dtype)
        return self.const(value, dtype)
