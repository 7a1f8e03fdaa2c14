"""Unary math ops, one table line each: name, forward on arrays, gradient in ember ops.

``_unary(name, forward, grad, saves=...)`` builds the function ``ember.name``, the method
``Tensor.name``, the in-place ``Tensor.name_`` and the node class ``NameBackward0``.
``forward(xp, x)`` computes on arrays; ``grad(g, x, result)`` returns the input's gradient,
with ``x`` and ``result`` given only when named in ``saves`` (``("self",)``, the default,
``("result",)``, both, or none: the names torch's derivative formulas give them).
A formula marked ``arithmetic=True`` uses only ``+ - * /`` and Python numbers, so it is also the
node's ``backward_arrays``: when no graph of the backward is built it runs on the arrays
themselves (same values, no per-op dispatch).
Integer and bool inputs of float ops compute in the default float dtype, as torch's do.
"""
import functools
import math

import numpy as np

from .._torch_function import _switch as _dispatch, dispatch_or_raise
from ._common import (
    apply_inplace, bump_version, check_inplace, complex_autograd, finish_inplace, float_array,
    forward_mode, grad_state, make, method, namespace_of, Node, record, Tensor, zeros_like_gradient,
)
from ._common import _RAW_DTYPES
from ._common import _type_word
from . import _compiled_functions
from .._backend import openmp_kernels, vector_math
from .._backend import special as _special_functions
from .._backend.precision import exp_in_place, narrowed, widened
from ..autograd._dual import jvp_by_backward

__all__ = []

_SQRT_PI = math.sqrt(math.pi)


class _UnaryNode(Node):
    __slots__ = ()
    formula = None
    complex_formula = None   # the gradient for complex tensors, where the op has one
    tangent_formula = None   # the tangent, where it is not the formula applied to the tangent
    keeps_self = keeps_result = False

    def _x_and_result(self):
        saved = self.saved_tensors
        return (saved[0] if self.keeps_self else None), (saved[-1] if self.keeps_result else None)

    def backward(self, grad):
        complex_formula = self.complex_formula
        if complex_formula is not None and grad._data.dtype.kind == "c":
            return (complex_formula(grad, *self._x_and_result()),)
        return (self.formula(grad, *self._x_and_result()),)

    def jvp(self, tangent):   # the formula is tangent * f'(x)
        formula = self.tangent_formula or self.formula
        if formula is None:
            return Node.jvp(self, tangent)
        return formula(tangent, *self._x_and_result())


class _ArithmeticUnaryNode(_UnaryNode):
    """A formula that uses only + - * / and numbers: it runs on the arrays as well (or, where
    the op gives one, ``array_formula``: the gradient written for arrays)."""
    __slots__ = ()
    array_formula = None

    def backward_arrays(self, grad):
        gd = grad._data
        dtype = gd.dtype
        if dtype not in _RAW_DTYPES:
            return None
        saved = self.saved_tensors
        x = y = None
        if self.keeps_self and (x := saved[0]._data).dtype != dtype:
            return None
        if self.keeps_result and (y := saved[-1]._data).dtype != dtype:
            return None
        return (make((self.array_formula or self.formula)(gd, x, y)),)


def _not_implemented(kernel):
    """torch's error for a dtype its kernel ``kernel`` has no loop for (a factory of it)."""
    return lambda dt: NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(dt)}'")


def _refused(refuse, dtype):
    """Raise the error ``refuse`` (dtype kinds -> error factory) gives for ``dtype``, if any."""
    for kinds, error in refuse.items():
        if dtype.kind in kinds:
            raise error(dtype)


_INTEGRAL = frozenset(np.dtype(name) for name in (
    "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"))

_SAVERS = {
    ("self",): lambda node, x, out: node.save(x),
    ("result",): lambda node, x, out: node.save(out),
    ("self", "result"): lambda node, x, out: node.save(x, out),
    (): lambda node, x, out: None,
}


def _ufunc(name):
    """The forward ``xp.name(x)``, the ufunc ``name`` of NumPy (or CuPy): its compiled function
    calls NumPy's for small float tensors (``_compiled_functions``)."""
    def forward(xp, x):
        return getattr(xp, name)(x)
    forward.ufunc = name
    return forward


def _unary(name, forward, grad, saves=("self",), node_name=None, float_op=True, refuse=None,
           exported=True, arithmetic=False, refuse_inplace=None, exact_out=False,
           complex_grad=None, tangent=None, array_grad=None, loop=None, special_loop=None):
    """``loop``: the name of ``vector_math``'s loop that runs large float32 inputs.
    ``special_loop``: the name of ``special_loops``' loop (over float32 and over float64, each in
    its own precision) that ``forward`` runs at every size: small float tensors take it from the
    compiled function.
    ``complex_grad(g, x, result)``: the gradient for complex tensors (torch's convention,
    ``g * conj(f'(x))`` for a holomorphic op), which lets autograd record the op on them.
    ``tangent(t, x, result)``: the forward-mode tangent, for an op whose ``grad`` formula applied
    to a tangent is not it (a real-valued function of a complex input).
    ``array_grad(g, x, result)``: the gradient on arrays of a float dtype, for a formula that
    is not ``arithmetic``."""
    base = _ArithmeticUnaryNode if arithmetic or array_grad else _UnaryNode
    node_cls = type(node_name or f"{name.capitalize()}Backward0", (base,),
                    {"__slots__": (), "formula": staticmethod(grad) if grad else None,
                     "keeps_self": "self" in saves, "keeps_result": "result" in saves,
                     "saved_fields": {field: i for i, field in enumerate(saves)}})
    if tangent is not None:
        node_cls.tangent_formula = staticmethod(tangent)
    if array_grad is not None:
        node_cls.array_formula = staticmethod(array_grad)
    if complex_grad is not None:
        node_cls.complex_formula = staticmethod(complex_grad)
        complex_autograd(node_cls)
    save = _SAVERS[saves]
    ufunc = getattr(forward, "ufunc", None)
    if loop is not None:
        forward = vector_math.when_large(loop, lambda xp, x: vector_math.unary(loop, x), forward, at=1)

    def op(input, *, out=None):
        if input.__class__ is not Tensor and not isinstance(input, Tensor):
            return dispatch_or_raise(op, (input, out), (input,), {"out": out} if out is not None else {},
                                     TypeError(f"{name}(): argument 'input' (position 1) must be "
                                               f"Tensor, not {type(input).__name__}"))
        data = input._data
        if refuse:
            _refused(refuse, data.dtype)
        if float_op and data.dtype in _INTEGRAL:
            data = float_array(data)
        res = make(forward(namespace_of(data), data))
        node = record(node_cls, (input,), res) if input._requires_grad or forward_mode.active else None
        if node is not None:
            if grad is None:
                raise RuntimeError(f"the derivative for '{name}' is not implemented.")
            save(node, input, res)
        if out is not None:
            from .pointwise import _maybe_out
            return _maybe_out(res, out, exact_out)
        return res

    def op_(self):
        if refuse:
            _refused(refuse, self._data.dtype)
        if refuse_inplace:
            _refused(refuse_inplace, self._data.dtype)
        if float_op and self._data.dtype.kind in "biu":
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{_int_word(self)}")
        check_inplace(self)
        if (self._requires_grad and grad_state.grad_enabled) or forward_mode.active:
            return finish_inplace(self, op(self.clone()))
        data = self._data
        namespace_of(data).copyto(data, forward(namespace_of(data), data), casting="unsafe")
        bump_version(self)
        return self

    on_loop = loop is not None and vector_math.MIN_ELEMENTS[loop] == 1
    if (on_loop or special_loop or ufunc is not None) and not (refuse and "f" in "".join(refuse)):
        # small float inputs go to the compiled function: on the loop (float32 inputs run on it at
        # every size), or on NumPy's ufunc below the size the op takes its loop from
        python_op = op
        python_op.__name__ = python_op.__qualname__ = name
        python_op.__code__ = python_op.__code__.replace(co_name=name)
        entry = _compiled_functions.register(
            python_op, node_cls if grad else None, saves,
            addresses=(lambda: (vector_math.loop_address(loop), None)) if on_loop
            else (lambda: _special_loop_addresses(special_loop)) if special_loop else None,
            ufunc=None if on_loop or special_loop else getattr(np, ufunc),
            max_elements=vector_math.MIN_ELEMENTS[loop] - 1 if loop is not None and not on_loop else None,
            # (integers and bools as the default float dtype, where the op does not refuse them)
            specifics=float_op and not (refuse and set("biu") & set("".join(refuse))))

        def op(input, *, out=None):
            return entry[0](input) if out is None else python_op(input, out=out)
    op.__name__ = name
    op.__qualname__ = name
    op.__code__ = op.__code__.replace(co_name=name)  # tracebacks name the op, not "op"
    op_.__code__ = op_.__code__.replace(co_name=name + "_")
    op.__doc__ = f"Returns a new tensor with the {name} of the elements of ``input``."
    op_.__name__ = name + "_"
    method(name)(op)
    method(name + "_")(op_)
    globals()[node_cls.__name__] = node_cls
    if exported:
        __all__.append(name)
    return op


def _int_word(t):
    return _type_word(t._data.dtype)


def _special_loop_addresses(name):
    from .._backend import special_loops
    return special_loops.loop_addresses(name)


def _special(fn_name):
    def forward(xp, x):
        return getattr(_special_functions, fn_name)(xp, x)
    return forward


def _zero_gradient(g, x, y):
    """The gradient of a piecewise-constant op (sign, floor, ...)."""
    return zeros_like_gradient(g)


# name, forward(xp, x), grad(g, x, result), saved
exp = _unary("exp", _ufunc("exp"), lambda g, x, y: g * y, ("result",), arithmetic=True,
             complex_grad=lambda g, x, y: g * y.conj(), loop="exp")
exp2 = _unary("exp2", _ufunc("exp2"), lambda g, x, y: g * y * math.log(2.0), ("result",),
              arithmetic=True, loop="exp2")
expm1 = _unary("expm1", _ufunc("expm1"), lambda g, x, y: g * (y + 1), ("result",),
               arithmetic=True)
log = _unary("log", _ufunc("log"), lambda g, x, y: g / x, arithmetic=True,
             complex_grad=lambda g, x, y: g / x.conj())
log2 = _unary("log2", _ufunc("log2"), lambda g, x, y: g / (x * math.log(2.0)),
              arithmetic=True)
log10 = _unary("log10", _ufunc("log10"), lambda g, x, y: g / (x * math.log(10.0)),
               arithmetic=True)
log1p = _unary("log1p", _ufunc("log1p"), lambda g, x, y: g / (x + 1), node_name="Log1PBackward0",
               arithmetic=True, loop="log1p")
sqrt = _unary("sqrt", _ufunc("sqrt"), lambda g, x, y: g / (2 * y), ("result",),
              arithmetic=True, complex_grad=lambda g, x, y: g / (2 * y.conj()), loop="sqrt")
rsqrt = _unary("rsqrt", lambda xp, x: 1 / xp.sqrt(x), lambda g, x, y: g * -0.5 * y.pow(3), ("result",),
               loop="rsqrt")
reciprocal = _unary("reciprocal", lambda xp, x: (xp.divide(1, x) if x.dtype.kind == "f" and x.size >= 1024
                                                 else xp.reciprocal(x)),   # (the same bits)
                    lambda g, x, y: -g * y * y, ("result",),
                    arithmetic=True, complex_grad=lambda g, x, y: -g * (y * y).conj())
sin = _unary("sin", _ufunc("sin"), lambda g, x, y: g * x.cos(),
             complex_grad=lambda g, x, y: g * x.cos().conj(), loop="sin")
cos = _unary("cos", _ufunc("cos"), lambda g, x, y: -g * x.sin(),
             complex_grad=lambda g, x, y: -g * x.sin().conj(), loop="cos")
tan = _unary("tan", _ufunc("tan"), lambda g, x, y: g * (1 + y * y), ("result",),
             arithmetic=True)
asin = _unary("asin", _ufunc("arcsin"), lambda g, x, y: g * (1 - x * x).rsqrt())
acos = _unary("acos", _ufunc("arccos"), lambda g, x, y: -g * (1 - x * x).rsqrt())
atan = _unary("atan", _ufunc("arctan"), lambda g, x, y: g / (1 + x * x), arithmetic=True)
sinh = _unary("sinh", _ufunc("sinh"), lambda g, x, y: g * x.cosh())
cosh = _unary("cosh", _ufunc("cosh"), lambda g, x, y: g * x.sinh())
tanh = _unary("tanh", _ufunc("tanh"), lambda g, x, y: g * (1 - y * y), ("result",),
              arithmetic=True)
asinh = _unary("asinh", _ufunc("arcsinh"), lambda g, x, y: g * (x * x + 1).rsqrt())
acosh = _unary("acosh", _ufunc("arccosh"), lambda g, x, y: g * (x * x - 1).rsqrt())
atanh = _unary("atanh", _ufunc("arctanh"), lambda g, x, y: g / (1 - x * x),
               arithmetic=True)
erf = _unary("erf", _special("erf"), lambda g, x, y: g * (2 / _SQRT_PI) * (-(x * x)).exp(),
             refuse={"c": _not_implemented("erf_vml_cpu")}, loop="erf")
erfc = _unary("erfc", _special("erfc"), lambda g, x, y: g * (-2 / _SQRT_PI) * (-(x * x)).exp(),
              refuse={"c": _not_implemented("erfc_vml_cpu")}, loop="erfc")
erfinv = _unary("erfinv", _special("erfinv"), lambda g, x, y: g * (_SQRT_PI / 2) * (y * y).exp(), ("result",),
                refuse={"c": _not_implemented("erfinv_vml_cpu")}, loop="erfinv")
lgamma = _unary("lgamma", _special("lgamma"), lambda g, x, y: g * x.digamma(),
                refuse={"c": _not_implemented("lgamma_vml_cpu")}, special_loop="lgamma")
digamma = _unary("digamma", _special("digamma"), lambda g, x, y: g * _trigamma(x),
                 refuse={"c": _not_implemented("digamma")}, special_loop="digamma")
abs = _unary("abs", _ufunc("abs"),
             lambda g, x, y: g * (x.sgn() if x._data.dtype.kind == "c" else x.sign()),
             array_grad=vector_math.when_large("abs backward", lambda g, x, y: vector_math.gradient("abs", g, x),
                                               lambda g, x, y: g * _sign(namespace_of(x), x)),
             float_op=False, exact_out=True,
             tangent=lambda t, x, y: ((t * x.sgn().conj()).real if x._data.dtype.kind == "c"
                                      else t * x.sign()),
             refuse={"b": _not_implemented("abs_cpu")},
             refuse_inplace={"c": lambda dt: RuntimeError("In-place abs is not supported for complex tensors.")})
def _sign(xp, x):
    if x.dtype.kind == "b":
        return x.copy()
    if x.dtype.kind in "iu":
        return xp.sign(x)
    if x.dtype.kind == "f" and type(x) is np.ndarray:   # NumPy's sign, but NaN's is +0.0 as torch's
        out = np.sign(x) if x.ndim else np.sign(x, out=np.empty_like(x))
        np.copyto(out, 0, where=np.isnan(out))
        return out
    # (x > 0) - (x < 0), as torch computes it: NaN and -0.0 give +0.0 (bfloat16 in float32)
    out = xp.subtract(x > 0, x < 0, dtype=x.dtype if x.dtype.kind == "f" else xp.float32)
    return narrowed(out, x.dtype)


sign = _unary("sign", _sign, _zero_gradient, (), float_op=False, arithmetic=True,
              exact_out=True, loop="sign",
              refuse={"c": lambda dt: NotImplementedError(
                  "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                  "torch.sgn instead.")})



def _sgn(xp, x):
    """sign for real numbers; ``x / |x|`` (0 at 0) for complex ones."""
    if x.dtype.kind != "c":
        return _sign(xp, x)
    magnitude = xp.abs(x)
    return xp.where(magnitude == 0, 0, x / xp.where(magnitude == 0, 1, magnitude)).astype(x.dtype)


sgn = _unary("sgn", _sgn, _zero_gradient, (), float_op=False, arithmetic=True,
             exact_out=True, loop="sign")
_DEGREE = math.pi / 180
deg2rad = _unary("deg2rad", lambda xp, x: narrowed(widened(x) * _DEGREE, x.dtype),
                 lambda g, x, y: g * _DEGREE, (),
                 node_name="Deg2RadBackward0", arithmetic=True,
                 refuse={"c": lambda dt: RuntimeError("deg2rad is not supported for complex tensors.")},
                 loop="deg2rad")
rad2deg = _unary("rad2deg", lambda xp, x: narrowed(widened(x) * (1 / _DEGREE), x.dtype),
                 lambda g, x, y: g * (1 / _DEGREE), (),
                 node_name="Rad2DegBackward0", arithmetic=True,
                 refuse={"c": lambda dt: RuntimeError("rad2deg is not supported for complex tensors.")})

def _rounded(name):
    """The forward of floor, ceil and trunc: the ufunc ``name`` of NumPy (or CuPy) on floats (its
    compiled function calls NumPy's for small float tensors), integers and bools copied."""
    def forward(xp, x):
        return getattr(xp, name)(x) if x.dtype.kind not in "biu" else x.copy()
    forward.ufunc = name
    return forward


def _rounding(name):
    """What torch's floor, ceil and trunc refuse: bool (their vectorized kernel has no loop for
    it) and complex."""
    return {"b": _not_implemented(f"{name}_vml_cpu"),
            "c": lambda dt: NotImplementedError(f"{name} is not supported for complex inputs")}


floor = _unary("floor", _rounded("floor"),
               _zero_gradient, (), float_op=False, arithmetic=True, refuse=_rounding("floor"),
               exact_out=True)
ceil = _unary("ceil", _rounded("ceil"),
              _zero_gradient, (), float_op=False, arithmetic=True, refuse=_rounding("ceil"),
              exact_out=True)
trunc = _unary("trunc", _rounded("trunc"),
               _zero_gradient, (), float_op=False, arithmetic=True, refuse=_rounding("trunc"),
               exact_out=True)
frac = _unary("frac", lambda xp, x: x - xp.trunc(x), lambda g, x, y: g, (),
              refuse={"biuc": _not_implemented("frac_cpu")}, exact_out=True, loop="frac")


def _numpy_sigmoid(xp, x):
    """``1 / (1 + exp(-x))`` as torch computes it, in four passes over one buffer: below about
    -88 (float32) ``exp(-x)`` overflows to inf and the result is 0. Half precision computes in
    float32, rounded once."""
    if x.dtype.kind == "c":
        return 1 / (1 + xp.exp(-x))
    data = widened(x)
    out = xp.negative(data, out=xp.empty_like(data))  # an array also when 0-d
    exp_in_place(xp, out)
    out += 1
    xp.reciprocal(out, out=out)
    return narrowed(out, x.dtype)


_sigmoid_gradient = vector_math.when_large(
    "sigmoid backward", lambda g, x, y: vector_math.gradient("sigmoid", g, y),
    lambda g, x, y: g * y * (1 - y))


sigmoid = _unary("sigmoid", _numpy_sigmoid, lambda g, x, y: g * y * (1 - y), ("result",),
                 array_grad=_sigmoid_gradient, loop="sigmoid")


def _trigamma(x):
    """polygamma(1, x) as an ember op (for the gradient of digamma), itself differentiable."""
    from ..special import polygamma
    return polygamma(1, x)


def fix(input, *, out=None):
    """Alias for trunc."""
    return trunc(input, out=out)


@method("negative_")
def _negative_(self):
    return self.neg_()


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
absolute = abs
for _alias, _target in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                        ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"),
                        ("absolute", "abs"), ("fix", "trunc")):
    method(_alias)(getattr(Tensor, _target))
    method(_alias + "_")(getattr(Tensor, _target + "_"))
__all__ += ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "absolute", "fix"]
method("__abs__")(Tensor.abs)   # Python's abs(tensor), as torch's


# -- rounding, logit and nan_to_num: ops with arguments ----------------------------------------

def _unary_arg(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _finish(res, out, exact=False):
    """``res``, or written into ``out=``: ``exact``ly its dtype for the ops torch requires it of."""
    if out is None:
        return res
    from .pointwise import _maybe_out
    return _maybe_out(res, out, exact)


def _inplace_unary(self, op, forward, float_op, **kwargs):
    """``self.op_(**kwargs)``: straight into self's memory without autograd, else through
    the out-of-place ``op`` (see apply_inplace)."""
    if float_op and self._data.dtype.kind in "biu":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_int_word(self)}")
    if (self._requires_grad and grad_state.grad_enabled) or forward_mode.active:
        return apply_inplace(self, op, **kwargs)
    check_inplace(self)
    data = self._data
    namespace_of(data).copyto(data, forward(data, **kwargs), casting="unsafe")
    bump_version(self)
    return self


class _ZeroGradUnary(Node):
    """Piecewise constant ops (round): the gradient is zero."""
    __slots__ = ()
    jvp = jvp_by_backward

    def backward(self, grad):
        return (zeros_like_gradient(grad),)


class RoundBackward0(_ZeroGradUnary):
    __slots__ = ()


class RoundBackward1(_ZeroGradUnary):
    __slots__ = ()


def _round_forward(x, decimals=0):
    xp = namespace_of(x)
    if x.dtype.kind == "c":
        raise NotImplementedError(f"\"{'round_vml_cpu' if decimals == 0 else 'round_cpu'}\" not "
                                  f"implemented for '{_type_word(x.dtype)}'")
    if x.dtype.kind in "biu":
        if x.dtype.kind == "b":
            kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"
            raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
        if decimals != 0:
            raise NotImplementedError(f"\"round_cpu\" not implemented for '{_int_word_of(x)}'")
        return x.copy()
    if decimals == 0:
        return xp.rint(x)
    compute = x if x.itemsize >= 4 else x.astype("float32")
    scale = compute.dtype.type(10.0 ** (-decimals if decimals < 0 else decimals))
    return _rounded_to_decimals(compute, scale, decimals).astype(x.dtype, copy=False)


def _round_in_passes(x, scale, decimals):
    """``x`` scaled by ``scale`` (10^|decimals|, of its dtype), rounded, scaled back: three passes, the last
    two in place."""
    xp = namespace_of(x)
    out = x / scale if decimals < 0 else x * scale
    if not x.ndim:   # (a 0-d array's product is a scalar)
        return xp.rint(out) * scale if decimals < 0 else xp.rint(out) / scale
    xp.rint(out, out=out)
    if decimals < 0:
        out *= scale
    else:
        out /= scale
    return out


# (large float32 arrays: the passes in one vector-math loop)
_rounded_to_decimals = vector_math.when_large(
    "round_decimals", lambda x, scale, decimals: vector_math.with_parameters(
        "round_tens" if decimals < 0 else "round_decimals", x, (scale,)), _round_in_passes)


@method()
def round(input, *, decimals=0, out=None):
    """Rounds elements of ``input`` to the nearest integer (halves to even), or to
    ``decimals`` decimal places."""
    if out is None:
        return _round_entry[0](input, decimals)
    return _python_round(input, decimals, out)


def _python_round(input, decimals, out=None):
    """``round`` in every case its compiled function (``_compiled_rounding``) leaves to Python."""
    _unary_arg(input, "round")
    res = make(_round_forward(input._data, decimals))
    record(RoundBackward0 if decimals == 0 else RoundBackward1, (input,), res)
    return _finish(res, out, exact=True)


_round_entry = _compiled_functions.register(_python_round, None, kind="round")


@method()
def round_(self, *, decimals=0):
    return _inplace_unary(self, round, _round_forward, False, decimals=decimals)


class LogitBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "eps": "eps"}
    jvp = jvp_by_backward

    def backward(self, grad):
        from .ternary import where
        (x,) = self.saved_tensors
        eps = self.eps
        out = grad / (x * (1 - x))
        if eps is None:
            return (where((x < 0) | (x > 1), math.nan, out),)
        return (where((x < eps) | (x > 1 - eps), 0.0, out),)

    def backward_arrays(self, grad):
        """The same formula on the arrays (a float32 loop for large ones)."""
        (x,) = self.saved_tensors
        return _logit_gradient(grad._data, x._data, self.eps)


def _logit_bounds(eps):
    """The inputs outside which logit's gradient is a constant, and that constant."""
    return (0.0, 1.0, math.nan) if eps is None else (eps, 1 - eps, 0.0)


def _logit_gradient_on_loop(g, x, eps):
    out = vector_math.gradient("logit", g, x, _logit_bounds(eps)) if g.dtype == x.dtype else None
    return None if out is None else (make(out),)


def _logit_gradient_on_arrays(g, x, eps):
    if g.dtype not in _RAW_DTYPES or x.dtype != g.dtype:
        return None
    lo, hi, outside = _logit_bounds(eps)
    with np.errstate(all="ignore"):
        out = g / (x * (1 - x))
    return (make(namespace_of(x).where((x < lo) | (x > hi), outside, out)),)


_logit_gradient = vector_math.when_large("logit backward", _logit_gradient_on_loop,
                                         _logit_gradient_on_arrays)


def _logit_forward(x, eps=None):
    if x.dtype.kind == "c":
        raise _not_implemented("logit_cpu")(x.dtype)
    return _logit_of(float_array(x), eps)


def _logit_on_arrays(x, eps):
    xp = namespace_of(x)
    if eps is not None:
        # bounds in x's dtype, and no clip: NumPy clips bfloat16 into float32; compared as torch
        # does, so that a NaN eps clamps nothing (NumPy's maximum would propagate it)
        lo, hi = x.dtype.type(eps), x.dtype.type(1 - eps)
        if lo <= hi and x.dtype.kind == "f":   # (clip's result then: the same, in one pass)
            x = xp.clip(x, lo, hi)
        else:
            x = xp.where(x < lo, lo, xp.where(x > hi, hi, x))
    with np.errstate(divide="ignore", invalid="ignore"):   # (torch's logit is silent outside (0, 1), as its loop)
        return xp.log(x / (1 - x))


_logit_of = vector_math.when_large(
    "logit", lambda x, eps: vector_math.with_parameters(
        "logit", x, (-math.inf, math.inf) if eps is None else (eps, 1 - eps)),
    _logit_on_arrays)


@method()
def logit(input, eps=None, *, out=None):
    """Returns the logit ``log(p / (1 - p))`` of the elements of ``input``; with ``eps``,
    ``input`` is first clamped to ``[eps, 1 - eps]``."""
    if out is None:
        return _logit_entry[0](input, eps)
    return _python_logit(input, eps, out=out)


def _python_logit(input, eps=None, *, out=None):
    """``logit`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _unary_arg(input, "logit")
    res = make(_logit_forward(input._data, eps))
    node = record(LogitBackward0, (input,), res)
    if node is not None:
        node.eps = eps
        node.save(input)
    return _finish(res, out)


def _log_of_negative_bits():
    """The bits of the NaN NumPy's log gives a negative number, in float32 and in float64: what logit's
    compiled function writes where the Python path's log meets odds below 0."""
    with np.errstate(invalid="ignore"):
        return tuple(int(np.log(np.array([-1.0], dtype)).view(bits)[0])
                     for dtype, bits in ((np.float32, np.uint32), (np.float64, np.uint64)))


# (float32 below the size from which the Python op takes its loop)
_logit_entry = _compiled_functions.register(_python_logit, LogitBackward0, kind="logit",
                                            max_elements=vector_math.MIN_ELEMENTS["logit"] - 1,
                                            specifics=_log_of_negative_bits)


@method()
def logit_(self, eps=None):
    return _inplace_unary(self, logit, _logit_forward, True, eps=eps)


class NanToNumBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0}
    jvp = jvp_by_backward

    def backward(self, grad):
        (x,) = self.saved_tensors
        return (grad * x.isfinite(),)


def _nan_to_num_forward(x, nan=0.0, posinf=None, neginf=None):
    if x.dtype.kind in "biu":
        return x.copy()
    if x.dtype.kind == "c":   # the real and imaginary parts each, as torch
        real = _nan_to_num_forward(x.real, nan, posinf, neginf)
        imag = _nan_to_num_forward(x.imag, nan, posinf, neginf)
        return (real + 1j * imag).astype(x.dtype)
    least, greatest = _finite_range(x.dtype)
    return _non_finite_replaced(x, nan, greatest if posinf is None else posinf,
                                least if neginf is None else neginf)


def _replace_non_finite(x, nan, posinf, neginf):
    xp = namespace_of(x)
    out = x.copy()
    out[xp.isnan(x)] = nan
    out[x == math.inf] = posinf
    out[x == -math.inf] = neginf
    return out


def _replace_non_finite_on_loop(x, *values):
    if type(x) is np.ndarray and not openmp_kernels.fills_its_memory(x):
        x = np.ascontiguousarray(x)   # (one copy, then the loop: NumPy's path makes six passes)
    return vector_math.with_parameters("nan_to_num", x, values)


_non_finite_replaced = vector_math.when_large("nan_to_num", _replace_non_finite_on_loop,
                                              _replace_non_finite)


@functools.cache
def _finite_range(np_dtype):
    """The least and greatest finite values of a float dtype."""
    from .._dtype import finfo, from_numpy_dtype
    info = finfo(from_numpy_dtype(np_dtype))
    return info.min, info.max


@method()
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replaces NaN, positive infinity and negative infinity in ``input`` with ``nan``,
    ``posinf`` and ``neginf`` (by default zero and the dtype's greatest and least values)."""
    if out is None:
        return _nan_to_num_entry[0](input, nan, posinf, neginf)
    return _python_nan_to_num(input, nan, posinf, neginf, out=out)


def _python_nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """``nan_to_num`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _unary_arg(input, "nan_to_num")
    res = make(_nan_to_num_forward(input._data, nan, posinf, neginf))
    node = record(NanToNumBackward0, (input,), res)
    if node is not None:
        node.save(input)
    return _finish(res, out, exact=True)


_nan_to_num_entry = _compiled_functions.register(_python_nan_to_num, NanToNumBackward0, kind="nan_to_num")


@method()
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return _inplace_unary(self, nan_to_num, _nan_to_num_forward, False, nan=nan, posinf=posinf,
                          neginf=neginf)


def _int_word_of(data):
    from ._common import _type_word
    return _type_word(data.dtype)


# -- predicates: bool results, no gradient -------------------------------------------------------

def _predicate(name, on_float, on_int, doc, on_complex=None, takes_out=False, ufunc=None):
    """``on_float(xp, x)`` for floating inputs; ``on_int(xp, x)`` for integer and bool ones;
    ``on_complex``, the (class, message) of the error torch raises for complex ones (they are
    computed as floats without it); ``takes_out``: torch's op has out= (a bool tensor).
    ``ufunc``: NumPy's ufunc that ``on_float`` is, which its compiled function calls for small
    float tensors that do not require grad (``_compiled_functions``), and for small integer and
    bool tensors as the default float dtype (where ``on_int``'s answer is the ufunc's there)."""
    def op(input, *, out=None):
        if out is not None and not takes_out:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        _unary_arg(input, name)
        data = input._data
        if on_complex is not None and data.dtype.kind == "c":
            raise on_complex[0](on_complex[1])
        xp = namespace_of(data)
        res = make(on_int(xp, data) if data.dtype.kind in "biu" else on_float(xp, data))
        return _finish(res, out, exact=True)

    if ufunc is not None:
        python_op = op
        python_op.__name__ = python_op.__qualname__ = name
        # (integers and bools as the default float dtype: each keeps its answer there, as it keeps its sign and
        # stays finite)
        entry = _compiled_functions.register(python_op, None, ufunc=ufunc, specifics=True)

        def op(input, *, out=None):
            return entry[0](input) if out is None else python_op(input, out=out)
        op.__code__ = op.__code__.replace(co_name=name)   # (tracebacks name the op)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    method(name)(op)
    __all__.append(name)
    return op


def _all(value):
    fill = "ones" if value else "zeros"   # (NumPy's full is a Python function: its zeros and ones are not)
    return lambda xp, x: getattr(xp, fill)(x.shape, dtype=bool)


isfinite = _predicate("isfinite", lambda xp, x: xp.isfinite(x), _all(True),
                      "Returns a bool tensor telling whether each element is finite.", ufunc=np.isfinite)
isnan = _predicate("isnan", lambda xp, x: xp.isnan(x), _all(False),
                   "Returns a bool tensor telling whether each element is NaN.", ufunc=np.isnan)
isinf = _predicate("isinf", lambda xp, x: xp.isinf(x), _all(False),
                   "Returns a bool tensor telling whether each element is infinite.", ufunc=np.isinf)
# NumPy compares a strided float array element by element and a dense one in vector steps: from
# this many elements a copy first costs less (BENCHMARKS.md, the op table's strided predicates)
_STRIDED_COPY_MIN_ELEMENTS = 1 << 10


def _equals(value):
    """``x == value`` elementwise, a strided array of many elements copied (in its own order)
    first."""
    def compare(xp, x):
        if x.size >= _STRIDED_COPY_MIN_ELEMENTS and not (x.flags.c_contiguous or x.flags.f_contiguous):
            x = x.copy(order="K")
        return x == value
    return compare


isposinf = _predicate("isposinf", _equals(math.inf), _all(False),
                      "Returns a bool tensor telling whether each element is positive infinity.",
                      (RuntimeError, "isposinf does not support complex inputs."), takes_out=True)
isneginf = _predicate("isneginf", _equals(-math.inf), _all(False),
                      "Returns a bool tensor telling whether each element is negative infinity.",
                      (RuntimeError, "isneginf does not support complex inputs."), takes_out=True)


def _equal_to(value, python_op):
    """``python_op`` (``isposinf`` or ``isneginf``) as ``input == value`` for a plain float tensor of a NumPy
    dtype, while ``__torch_function__`` dispatch is off (Tensor's comparison, which ``_compiled_methods``
    compiles: the same bools); the Python op otherwise (integers and bools: its constant answer; a large
    strided tensor: it copies first), and with ``out``."""
    name = python_op.__name__

    def op(input, *, out=None):
        if out is None and input.__class__ is Tensor and not _dispatch.on:
            data = input._data
            if data.dtype.kind == "f" and (data.size < _STRIDED_COPY_MIN_ELEMENTS or data.flags.c_contiguous):
                return Tensor.__eq__(input, value)
        return python_op(input, out=out)
    op.__name__ = op.__qualname__ = name
    op.__code__ = op.__code__.replace(co_name=name)   # (tracebacks name the op)
    op.__doc__ = python_op.__doc__
    method(name)(op)
    return op


isposinf, isneginf = _equal_to(math.inf, isposinf), _equal_to(-math.inf, isneginf)
signbit = _predicate("signbit", lambda xp, x: xp.signbit(x), lambda xp, x: x < 0,
                     "Returns a bool tensor telling whether each element has its sign bit set.",
                     (NotImplementedError, "signbit is not implemented for complex tensors."),
                     takes_out=True, ufunc=np.signbit)

__all__ += ["round", "logit", "nan_to_num"]
