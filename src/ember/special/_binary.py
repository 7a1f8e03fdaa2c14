"""ember.special's functions of two arguments: xlog1py, zeta, gammainc, gammaincc, and the
gamma-family functions with an integer parameter, polygamma and multigammaln."""
import functools
import math

import numpy as np

from .. import _dtype
from .._backend import special as _special_kernels, special_gamma
from ..ops._common import Node, Tensor, _type_word, is_scalar, make, namespace_of, record
from ..ops.pointwise import (
    _binary, _BinaryNode, _on_loop_when_large, _scalar_first, _xlogy_grad_self, compiled_binary, float_arrays,
)
from ._common import check_tensor, finish, float_result, on_special_loops, refuse
from ..autograd._dual import jvp_by_transposition

__all__ = ["xlog1py", "zeta", "gammainc", "gammaincc", "polygamma", "multigammaln"]


def _wants(node, i):
    return node.next_functions[i][0] is not None


def _not_implemented(what):
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


# -- xlog1py ---------------------------------------------------------------------------------

class SpecialXlog1PyBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        return (self.reduce(_xlogy_grad_self(xlog1py, grad, a, b, -1), 0) if _wants(self, 0) else None,
                self.reduce(grad * a / (b + 1), 1) if _wants(self, 1) else None)


class SpecialXlog1PyBackward1(_BinaryNode):
    """xlog1py(number, tensor)"""
    __slots__ = ()

    def backward(self, grad):
        a, b = self.saved_tensors
        return None, self.reduce(grad * a / (b + 1), 1)


class SpecialXlog1PyBackward2(_BinaryNode):
    """xlog1py(tensor, number)"""
    __slots__ = ()

    def backward(self, grad):
        a, _ = self.saved_tensors
        return self.reduce(_xlogy_grad_self(xlog1py, grad, a, self.other_scalar, -1), 0), None


def _xlog1py_kernel(x, y):
    refuse(x.dtype if x.dtype.kind == "c" else getattr(y, "dtype", x.dtype), "xlog1py_cpu", "c")
    return _xlog1py(x, y)


def _xlog1py_arrays(x, y):
    xp = namespace_of(x)
    if not hasattr(y, "dtype"):
        y = xp.asarray(y, dtype=x.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * xp.log1p(y)
    return xp.where((x == 0) & ~xp.isnan(y), 0, out).astype(out.dtype, copy=False)


_xlog1py = _on_loop_when_large("xlog1py", _xlog1py_arrays)


@compiled_binary(SpecialXlog1PyBackward0, ("self", "other"), loop="xlog1py", converts=True)
def xlog1py(input, other, *, out=None):
    """``input * log1p(other)``, taken as zero where ``input`` is zero (and ``other`` is not
    NaN). Either argument may be a number."""
    node = SpecialXlog1PyBackward0 if isinstance(other, Tensor) else SpecialXlog1PyBackward2
    if is_scalar(input):
        input = _scalar_first(input, other, "special_xlog1py", float_op=True)
        node = SpecialXlog1PyBackward1
    check_tensor(input, "special_xlog1py")
    return finish(_binary("special_xlog1py", _xlog1py_kernel, node, input, other, ("self", "other"),
                          float_arrays), out)


# -- zeta ------------------------------------------------------------------------------------

class _ZetaNode(_BinaryNode):
    """d/dq zeta(x, q) = -x zeta(x + 1, q); torch has no gradient in x."""
    __slots__ = ()

    def backward(self, grad):
        x, q = self.saved_tensors
        if _wants(self, 0):
            raise _not_implemented("zeta")
        q = self.other_scalar if q is None else q
        return None, self.reduce(grad * -x * zeta(x + 1.0, q), 1)


class SpecialZetaBackward0(_ZetaNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}


class SpecialZetaBackward1(_ZetaNode):
    """zeta(number, tensor)"""
    __slots__ = ()


class SpecialZetaBackward2(_BinaryNode):
    """zeta(tensor, number): only x needs a gradient, and torch has none."""
    __slots__ = ()

    def backward(self, grad):
        raise _not_implemented("zeta")


def _zeta_kernel(x, q):
    dtype = x.dtype
    refuse(dtype, "zeta_cpu", "ch")
    with np.errstate(over="ignore"):
        return special_gamma.zeta(namespace_of(x), x, q).astype(dtype, copy=False)


@on_special_loops("tensors", ("zeta_two", "zeta_two"), SpecialZetaBackward0,
                  max_elements=special_gamma.ZETA_LOOP_MAX_ELEMENTS - 1)
def zeta(input, other, *, out=None):
    """Hurwitz's zeta function ``sum over k >= 0 of (other + k) ** -input``; either argument
    may be a number. Differentiable in ``other`` only, as in torch."""
    node = SpecialZetaBackward0 if isinstance(other, Tensor) else SpecialZetaBackward2
    if is_scalar(input):
        input = _scalar_first(input, other, "special_zeta", float_op=True)
        node = SpecialZetaBackward1
    check_tensor(input, "special_zeta")
    return finish(_binary("special_zeta", _zeta_kernel, node, input, other, ("self", "other"), float_arrays),
                  out)


# -- gammainc, gammaincc ---------------------------------------------------------------------

class IgammaBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}
    sign = 1.0
    what = "igamma: input"

    def backward(self, grad):
        a, x = self.saved_tensors
        if _wants(self, 0):
            raise _not_implemented(self.what)
        from ..ops.unary import lgamma
        density = ((a - 1) * x.log() - x - lgamma(a)).exp()
        return None, self.reduce(grad * density * self.sign, 1)


class IgammacBackward0(IgammaBackward0):
    __slots__ = ()
    sign = -1.0
    what = "igammac: input"


def _incomplete(name, kernel_name, kernel, node_cls, input, other, out):
    check_tensor(input, name)
    check_tensor(other, name, 2, "other")
    common = _dtype.result_type_of(input, other).np
    if common.kind in "biu":
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{_type_word(common)}'")
    refuse(common, kernel_name, "c")

    def compute(a, x):
        return kernel(namespace_of(a), a, x).astype(common, copy=False)

    return finish(_binary(name, compute, node_cls, input, other, ("self", "other")), out)


# The incomplete gamma functions' compiled case (on one thread) takes fewer elements than this: from
# ``special_loops.PARALLEL_MIN_ELEMENTS`` the Python op's loop runs on the threads, whose shares' scalar
# remainders give some prefactors other last bits.
INCOMPLETE_ONE_THREAD_ELEMENTS = 256


def _incomplete_loops(name):
    """The loops of ``special_gamma``'s incomplete gamma function ``name``: to float32's tolerance
    and to float64's."""
    return f"{name}_single_two", f"{name}_two"


@on_special_loops("tensors", _incomplete_loops("gammainc"), IgammaBackward0, taken=True,
                  max_elements=INCOMPLETE_ONE_THREAD_ELEMENTS - 1)
def gammainc(input, other, *, out=None):
    """The regularized lower incomplete gamma function ``P(input, other)``: the integral of
    ``t**(input - 1) * exp(-t)`` from 0 to ``other``, divided by ``Gamma(input)``.
    Differentiable in ``other`` only, as in torch."""
    return _incomplete("special_gammainc", "igamma_cpu", special_gamma.gammainc, IgammaBackward0,
                       input, other, out)


@on_special_loops("tensors", _incomplete_loops("gammaincc"), IgammacBackward0, taken=True,
                  max_elements=INCOMPLETE_ONE_THREAD_ELEMENTS - 1)
def gammaincc(input, other, *, out=None):
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P(input,
    other)``. Differentiable in ``other`` only, as in torch."""
    return _incomplete("special_gammaincc", "igammac_cpu", special_gamma.gammaincc,
                       IgammacBackward0, input, other, out)


# torch's top-level names for them (ember/_special_aliases.py exports these)
@on_special_loops("tensors", _incomplete_loops("gammainc"), IgammaBackward0, taken=True,
                  max_elements=INCOMPLETE_ONE_THREAD_ELEMENTS - 1)
def igamma(input, other, *, out=None):
    """The regularized lower incomplete gamma function, as :func:`ember.special.gammainc`."""
    return _incomplete("igamma", "igamma_cpu", special_gamma.gammainc, IgammaBackward0,
                       input, other, out)


@on_special_loops("tensors", _incomplete_loops("gammaincc"), IgammacBackward0, taken=True,
                  max_elements=INCOMPLETE_ONE_THREAD_ELEMENTS - 1)
def igammac(input, other, *, out=None):
    """The regularized upper incomplete gamma function, as :func:`ember.special.gammaincc`."""
    return _incomplete("igammac", "igammac_cpu", special_gamma.gammaincc, IgammacBackward0,
                       input, other, out)



# -- polygamma, multigammaln -----------------------------------------------------------------

class PolygammaBackward0(Node):
    __slots__ = ("n",)
    saved_fields = {"n": "n", "self": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (x,) = self.saved_tensors
        return (grad * polygamma(self.n + 1, x),)


def _polygamma_array(n, data):
    xp = namespace_of(data)
    if n == 0:
        return _special_kernels.digamma(xp, data)
    if n == 1:
        return _special_kernels.trigamma(xp, data)
    with np.errstate(over="ignore"):
        return special_gamma.polygamma(xp, n, data).astype(data.dtype, copy=False)


# polygamma's factors (-1)**(n + 1) n! by n, up to the last that is finite (0 and 1 take their
# own loops)
_POLYGAMMA_LAST_FACTOR = 170


def _polygamma_taken():
    """What polygamma's compiled function takes: its factors, digamma's and trigamma's loops."""
    from .._backend import special_loops
    factors = tuple(special_gamma.polygamma_factor(n) for n in range(_POLYGAMMA_LAST_FACTOR + 1))
    return factors, (*special_loops.loop_addresses("digamma"), *special_loops.loop_addresses("trigamma"))


@on_special_loops("polygamma", ("zeta_two", "zeta_two"), PolygammaBackward0, taken=_polygamma_taken,
                  max_elements=special_gamma.ZETA_LOOP_MAX_ELEMENTS - 1)
def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of the digamma function, ``psi^(n)(input)``, for ``n >= 0``."""
    check_tensor(input, "special_polygamma", 2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    data = input._data
    refuse(data.dtype, "polygamma", "c")
    data = data.astype(float_result(data.dtype), copy=False)
    res = make(_polygamma_array(int(n), data))
    node = record(PolygammaBackward0, (input,), res)
    if node is not None:
        node.n = int(n)
        node.save(input)
    return finish(res, out)


class MvlgammaBackward0(Node):
    __slots__ = ("p",)
    saved_fields = {"p": "p", "self": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (x,) = self.saved_tensors
        return (grad * (x.unsqueeze(-1) + make(_minus_halves(x._data, self.p))).digamma().sum(-1),)


def _minus_halves(data, p):
    """``0, -1/2, -1, ..., -(p - 1)/2`` in ``data``'s dtype (exact) and namespace (for NumPy, one read-only array
    for each p and dtype, made once)."""
    if data.__class__ is np.ndarray:
        return _numpy_minus_halves(int(p), data.dtype)
    return (namespace_of(data).arange(p) * -0.5).astype(data.dtype)


@functools.lru_cache(maxsize=64)
def _numpy_minus_halves(p, dtype):
    halves = (np.arange(p) * -0.5).astype(dtype)
    halves.flags.writeable = False
    return halves


def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``:
    ``p (p - 1) / 4 * log(pi) + sum over j < p of lgamma(input - j / 2)``."""
    check_tensor(input, "special_multigammaln")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    data = input._data
    if data.dtype.kind == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    refuse(data.dtype, "arange_cpu", "c")
    if data.dtype.kind in "iu":
        data = data.astype(_dtype.get_default_dtype().np)
    xp = namespace_of(data)
    # (the p terms of an element a plane apart, summed plane by plane: NumPy's sum over a last axis of p elements
    # calls its loop once for each element)
    lgammas = _special_kernels.lgamma(xp, _minus_halves(data, p).reshape((-1,) + (1,) * data.ndim) + data)
    total = np.add.reduce(lgammas, 0) if lgammas.__class__ is np.ndarray else lgammas.sum(0)   # (ndarray.sum's)
    res = make((total + p * (p - 1) / 4 * math.log(math.pi)).astype(data.dtype, copy=False))
    node = record(MvlgammaBackward0, (input,), res)
    if node is not None:
        node.p = int(p)
        node.save(input)
    return finish(res, out)
