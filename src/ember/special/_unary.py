"""ember.special's one-argument functions that torch.special adds to ember's own: the Bessel,
Airy and normal-distribution functions, erfcx, entr, sinc. Those torch differentiates record a
node whose backward is written in ember ops; the others return results without history, as
torch's do."""
import math

import numpy as np

from .._backend import special_bessel, special_normal, vector_math
from ..autograd._dual import jvp_by_backward
from ..ops import _compiled_functions
from ..ops._common import Node, make, namespace_of, record
from ._common import check_tensor, finish, float_result, refuse

__all__ = []

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _node(name, formula, saves):
    """A node class ``name`` whose gradient is ``formula(grad, x, result)``."""
    def backward(self, grad):
        saved = self.saved_tensors
        x = saved[0] if "x" in saves else None
        y = saved[-1] if "result" in saves else None
        return (formula(grad, x, y),)
    fields = {"x": "self", "result": "result"}
    saved_fields = {fields[key]: i for i, key in enumerate(k for k in ("x", "result") if k in saves)}
    return type(name, (Node,), {"__slots__": (), "backward": backward, "jvp": jvp_by_backward,
                                "saved_fields": saved_fields})


def _function(name, kernel, doc, refused="", grad=None, node_name=None, saves="x", kernel_name=None,
              argument="input"):
    """``ember.special.name``: ``kernel(xp, array)`` on ``input`` (integers as the default float
    dtype), torch's refusal of ``refused`` dtypes ("c" complex, "h" half precision) named after
    its kernel, and the gradient ``grad(g, x, result)`` when torch has one. ``argument`` is
    torch's keyword for the input ("input", or "x" for some of the newer functions)."""
    kernel_name = kernel_name or f"{name}_cpu"
    node_cls = _node(node_name, grad, saves) if grad else None

    op_name = f"special_{name}"

    def fn(input, *, out=None):
        check_tensor(input, op_name)
        data = input._data
        refuse(data.dtype, kernel_name, refused)
        if data.dtype.kind in "biu":   # (float_result's case: other dtypes compute as they are)
            data = data.astype(float_result(data.dtype))
        res = make(kernel(namespace_of(data), data))
        if node_cls is not None:
            node = record(node_cls, (input,), res)
            if node is not None:
                node.save(*[t for key, t in (("x", input), ("result", res)) if key in saves])
        return finish(res, out)

    loop = getattr(kernel, "compiled_loop", None)
    if loop is not None:   # small float inputs go to the compiled function (``ops._compiled_functions``)
        python_op = fn
        python_op.__name__ = python_op.__qualname__ = name
        saved = tuple(name for key, name in (("x", "self"), ("result", "result")) if key in saves)
        entry = _compiled_functions.register(python_op, node_cls, saved, addresses=lambda: _loop_addresses(*loop),
                                             specifics=True)   # (integers and bools as the default float dtype)

        def fn(input, *, out=None):
            return entry[0](input) if out is None else python_op(input, out=out)
    if argument == "x":
        by_input = fn

        def fn(x, *, out=None):
            return by_input(x, out=out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    if node_cls is not None:
        globals()[node_cls.__name__] = node_cls
    __all__.append(name)
    return fn


def _loop_addresses(library, name):
    """The float32 and float64 addresses of the loop ``name`` of ``special_loops`` ("special")
    or ``vector_math`` ("vector", float32 only)."""
    if library == "vector":
        return vector_math.loop_address(name), None
    from .._backend import special_loops
    return special_loops.loop_addresses(name)


def _where(cond, a, b):
    from ..ops.ternary import where
    return where(cond, a, b)


def _nonzero(x):
    """``x`` with its zeros as ones: a formula's branch masked out at 0 then has finite
    derivatives, so that second-order gradients are not NaN there."""
    return _where(x == 0, 1.0, x)


_NO_LOW_PRECISION = "ch"

bessel_j0 = _function("bessel_j0", special_bessel.bessel_j0, """Bessel function of the first
kind of order 0, ``J0(input)``. Not differentiable, as in torch.""", _NO_LOW_PRECISION)
bessel_j1 = _function("bessel_j1", special_bessel.bessel_j1, """Bessel function of the first
kind of order 1, ``J1(input)``. Not differentiable, as in torch.""", _NO_LOW_PRECISION)
bessel_y0 = _function("bessel_y0", special_bessel.bessel_y0, """Bessel function of the second
kind of order 0, ``Y0(input)`` (NaN for negative inputs). Not differentiable, as in torch.""",
                      _NO_LOW_PRECISION)
bessel_y1 = _function("bessel_y1", special_bessel.bessel_y1, """Bessel function of the second
kind of order 1, ``Y1(input)`` (NaN for negative inputs). Not differentiable, as in torch.""",
                      _NO_LOW_PRECISION)
modified_bessel_i0 = _function("modified_bessel_i0", special_bessel.i0, """Modified Bessel
function of the first kind of order 0, ``I0(input)``. Not differentiable, as in torch (use
``i0``, which is).""", _NO_LOW_PRECISION)
modified_bessel_i1 = _function("modified_bessel_i1", special_bessel.i1, """Modified Bessel
function of the first kind of order 1, ``I1(input)``. Not differentiable, as in torch (use
``i1``, which is).""", _NO_LOW_PRECISION)
modified_bessel_k0 = _function("modified_bessel_k0", special_bessel.modified_bessel_k0,
                               """Modified Bessel function of the second kind of order 0,
``K0(input)`` (NaN for negative inputs). Not differentiable, as in torch.""", _NO_LOW_PRECISION)
modified_bessel_k1 = _function("modified_bessel_k1", special_bessel.modified_bessel_k1,
                               """Modified Bessel function of the second kind of order 1,
``K1(input)`` (NaN for negative inputs). Not differentiable, as in torch.""", _NO_LOW_PRECISION)
scaled_modified_bessel_k0 = _function(
    "scaled_modified_bessel_k0", special_bessel.scaled_modified_bessel_k0,
    """``exp(x) * K0(x)``, the exponentially scaled modified Bessel function of the
second kind of order 0. Not differentiable, as in torch.""", _NO_LOW_PRECISION, argument="x")
scaled_modified_bessel_k1 = _function(
    "scaled_modified_bessel_k1", special_bessel.scaled_modified_bessel_k1,
    """``exp(x) * K1(x)``, the exponentially scaled modified Bessel function of the
second kind of order 1. Not differentiable, as in torch.""", _NO_LOW_PRECISION, argument="x")
spherical_bessel_j0 = _function("spherical_bessel_j0", special_bessel.spherical_bessel_j0,
                                """Spherical Bessel function of the first kind of order 0,
``sin(x) / x``. Not differentiable, as in torch.""", _NO_LOW_PRECISION, argument="x")
airy_ai = _function("airy_ai", special_bessel.airy_ai, """Airy function ``Ai(x)``. Not
differentiable, as in torch.""", _NO_LOW_PRECISION, argument="x")

i0 = _function("i0", special_bessel.i0, """Modified Bessel function of the first kind of order
0, ``I0(input)``; its gradient is ``I1``.""", "c", lambda g, x, y: g * i1(x), "I0Backward0",
               kernel_name="i0_vml_cpu")
i0e = _function("i0e", special_bessel.i0e, """Exponentially scaled modified Bessel function of
the first kind of order 0, ``exp(-|input|) * I0(input)``.""", "c",
                lambda g, x, y: g * (i1e(x) - x.sign() * y), "SpecialI0EBackward0", "x,result")
def _i1_grad(g, x, y):
    refuse(x._data.dtype, "i1_backward", "h")
    return g * _where(x == 0, 0.5, i0(x) - y / _nonzero(x))


def _i1e_grad(g, x, y):
    refuse(x._data.dtype, "i1e_backward", "h")
    return g * _where(x == 0, 0.5, i0e(x) - y * (x.sign() + _nonzero(x).reciprocal()))


i1 = _function("i1", special_bessel.i1, """Modified Bessel function of the first kind of order
1, ``I1(input)``. Its gradient, as torch's, is refused for float16 and bfloat16.""", "c",
               _i1_grad, "SpecialI1Backward0", "x,result")
i1e = _function("i1e", special_bessel.i1e, """Exponentially scaled modified Bessel function of
the first kind of order 1, ``exp(-|input|) * I1(input)``. Its gradient, as torch's, is refused
for float16 and bfloat16.""", "c", _i1e_grad, "SpecialI1EBackward0", "x,result")

erfcx = _function("erfcx", special_normal.erfcx, """Scaled complementary error function,
``exp(input**2) * erfc(input)``, computed without overflow for large inputs.""",
                  _NO_LOW_PRECISION,
                  lambda g, x, y: g * (2 * x * y - _TWO_OVER_SQRT_PI), "SpecialErfcxBackward0",
                  "x,result")
ndtri = _function("ndtri", special_normal.ndtri, """The inverse of the standard normal
distribution's cumulative distribution function: the ``x`` with ``ndtr(x) = input``, for
``input`` in [0, 1].""", _NO_LOW_PRECISION,
                  lambda g, x, y: g * _SQRT_2PI * (y * y / 2).exp(), "SpecialNdtriBackward0",
                  "result")
log_ndtr = _function("log_ndtr", special_normal.log_ndtr, """The logarithm of the standard
normal distribution's cumulative distribution function, accurate far into the lower tail.""",
                     _NO_LOW_PRECISION,
                     lambda g, x, y: g / _SQRT_2PI * (-(y + x * x / 2)).exp(),
                     "SpecialLogNdtrBackward0", "x,result")


def _entr_arrays(xp, x):
    out = -x * xp.log(xp.where(x > 0, x, 1))
    out = xp.where(x == 0, 0, out)
    return xp.where(x < 0, -math.inf, out).astype(x.dtype, copy=False)


_entr_kernel = vector_math.when_large("entr", lambda xp, x: vector_math.unary("entr", x), _entr_arrays, at=1)
_entr_kernel.compiled_loop = ("vector", "entr")   # (float32 arrays, at every size)


entr = _function("entr", _entr_kernel, """Elementwise entropy: ``-input * log(input)`` for
positive inputs, 0 at 0 and ``-inf`` for negative inputs.""", "c",
                 lambda g, x, y: g * -(1 + x.log()), "SpecialEntrBackward0")


def _sinc_arrays(xp, x):
    scaled = x * x.dtype.type(math.pi)
    safe = xp.where(x == 0, 1, scaled)
    with np.errstate(invalid="ignore"):   # sin(inf) is NaN, as torch's
        return xp.where(x == 0, 1, xp.sin(safe) / safe).astype(x.dtype, copy=False)


_sinc_kernel = vector_math.when_large("sinc", lambda xp, x: vector_math.unary("sinc", x), _sinc_arrays, at=1)
_sinc_kernel.compiled_loop = ("vector", "sinc")   # (float32 arrays, at every size)


def _sinc_grad(g, x, y):
    x = _nonzero(x)
    scaled = x * math.pi
    slope = (scaled.cos() * scaled - scaled.sin()) / (scaled * x)
    return g * _where(x == 0, 0.0, slope)


sinc = _function("sinc", _sinc_kernel, """The normalized sinc function, ``sin(pi x) / (pi x)``,
1 at 0.""", "", _sinc_grad, "SincBackward0")


def ndtr(input, *, out=None):
    """The standard normal distribution's cumulative distribution function,
    ``(1 + erf(input / sqrt(2))) / 2``, computed as ``erfc(-input / sqrt(2)) / 2``."""
    check_tensor(input, "special_ndtr")
    from ..ops.unary import erfc
    refuse(input._data.dtype, "erf_vml_cpu", "c")
    return finish(erfc(input * -math.sqrt(0.5)) * 0.5, out)


__all__.append("ndtr")
