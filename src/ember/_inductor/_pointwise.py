"""Which calls of a captured graph a generated kernel computes, and the C expression of each.

``describe(node)`` turns an fx node into ``(op, operands, params)`` (operands: fx nodes or
Python numbers, in the op's order), or None for a call a kernel does not compute. ``reduction``
does the same for ``sum`` and ``mean``. ``c_expression`` writes one op in C on operand
expressions already converted to the op's C type. The formulas are ember's own (GELU through
``erfc`` in float64 and through ember's float32 kernels' ``tanh(x * Q(x*x))`` in float32,
sigmoid as ``1 / (1 + exp(-x))``, torch's tanh GELU), computed in the result's type as NumPy
computes ember's ops, so fused values agree with eager ones to rounding; float32 ``exp`` and
``tanh`` are ``_codegen.PRELUDE``'s vectorizable versions."""
import math
import numbers
import operator

__all__ = ["describe", "reduction", "c_expression", "COMPOSITE", "C_TYPES"]

# NumPy dtype name -> C type of the kernels
C_TYPES = {"float32": "float", "float64": "double", "bool": "unsigned char"}

_BINARY = {"add", "sub", "mul", "div", "pow", "gt", "lt", "ge", "le", "eq", "ne"}
_UNARY = {"neg", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "abs",
          "logical_not", "silu"}
COMPARISONS = {"gt": ">", "lt": "<", "ge": ">=", "le": "<=", "eq": "==", "ne": "!="}
# ops that eager ember computes in several passes of ember ops: a kernel of one alone is worth
# building (GELU, SiLU, sigmoid and tanh have one array kernel each in eager mode)
COMPOSITE = {"gelu_grad"}
_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
              operator.truediv: "div", operator.neg: "neg", operator.pow: "pow",
              operator.gt: "gt", operator.lt: "lt", operator.ge: "ge", operator.le: "le",
              operator.eq: "eq", operator.ne: "ne"}
_METHOD_ALIASES = {"true_divide": "div", "multiply": "mul", "subtract": "sub",
                   "negative": "neg", "greater": "gt", "less": "lt", "greater_equal": "ge",
                   "less_equal": "le", "not_equal": "ne"}
_functions = {}


def _function_table():
    """ember's functions (by identity) -> op name, built on first use."""
    if not _functions:
        import ember
        from ember.nn import functional as F
        from ember.nn.functional import activation
        from ember.ops import linalg, pointwise
        for name in (*_BINARY, *_UNARY, "where"):
            fn = getattr(ember, name, None)
            if fn is not None:
                _functions[fn] = name
        _functions[ember.true_divide] = "div"
        _functions[ember.multiply] = "mul"
        for name in ("relu", "sigmoid", "tanh", "silu", "gelu"):
            _functions[getattr(F, name)] = name
        _functions[activation._gelu_grad] = "gelu_grad"
        _functions[linalg._scaled] = "scaled"
        _functions[pointwise._scaled] = "scaled"
    return _functions


def _is_operand(a):
    from ember.fx.node import Node
    return isinstance(a, Node) or (isinstance(a, numbers.Real) and not isinstance(a, bool)) \
        or isinstance(a, bool)


def describe(node):
    """``(op, operands, params)`` of a pointwise call a kernel computes, else None."""
    if node.op == "call_function":
        target = getattr(node.target, "__fx_original__", node.target)
        name = _OPERATORS.get(target)
        if name is None:
            try:
                name = _function_table().get(target)
            except TypeError:       # an unhashable target
                return None
    elif node.op == "call_method":
        name = _METHOD_ALIASES.get(node.target, node.target)
        if name not in _BINARY and name not in _UNARY and name != "where":
            return None
    else:
        return None
    if name is None:
        return None
    args, kwargs = list(node.args), dict(node.kwargs)
    params = {}
    if name in ("add", "sub") and "alpha" in kwargs:
        params["alpha"] = kwargs.pop("alpha")
        if not isinstance(params["alpha"], numbers.Real):
            return None
    if name in ("relu", "silu") and kwargs.pop("inplace", False) is not False:
        return None
    if name == "relu" and len(args) == 2 and args.pop() is not False:
        return None
    if name in ("gelu", "gelu_grad"):
        approximate = kwargs.pop("approximate", args.pop(1) if len(args) > 1 else "none")
        if approximate not in ("none", "tanh"):
            return None
        params["approximate"] = approximate
    if name == "div" and kwargs.pop("rounding_mode", None) is not None:
        return None
    if name == "scaled":
        if len(args) != 2 or not isinstance(args[1], numbers.Real):
            return None
        params["factor"] = args.pop()
        name = "mul_const"
    if kwargs or not args or not all(_is_operand(a) for a in args):
        return None
    arity = 3 if name == "where" else 2 if name in _BINARY else 1
    if len(args) != arity:
        return None
    return name, args, params


def reduction(node):
    """``(kind, input, dims or None, keepdim)`` of a ``sum``/``mean`` a kernel can end with,
    else None."""
    from ember.fx.node import Node
    if node.op == "call_method" and node.target in ("sum", "mean"):
        kind = node.target
    elif node.op == "call_function" and getattr(node.target, "__name__", "") in ("sum", "mean") \
            and getattr(node.target, "__module__", "").startswith("ember"):
        kind = node.target.__name__
    else:
        return None
    args, kwargs = list(node.args), dict(node.kwargs)
    if not args or not isinstance(args[0], Node):
        return None
    source = args.pop(0)
    dims = kwargs.pop("dim", args.pop(0) if args else None)
    keepdim = kwargs.pop("keepdim", args.pop(0) if args else False)
    if kwargs or args or not isinstance(keepdim, bool):
        return None
    if isinstance(dims, int) and not isinstance(dims, bool):
        dims = (dims,)
    if dims is not None and not (isinstance(dims, (tuple, list)) and
                                 all(isinstance(d, int) for d in dims)):
        return None
    return kind, source, None if dims is None else tuple(dims), keepdim


def c_literal(value, ctype):
    value = float(value)
    if math.isnan(value):
        text = "NAN"
    elif math.isinf(value):
        text = "INFINITY" if value > 0 else "(-INFINITY)"
    else:
        text = repr(value)
    return f"(({ctype}){text})"


_VECTOR_FLOAT = {"exp": "ek_expf", "tanh": "ek_tanhf"}   # _codegen.PRELUDE's


def _fn(name, ctype):
    if ctype == "float":
        return _VECTOR_FLOAT.get(name, name + "f")
    return name


def _erf_polynomial(x):
    """float32 ``erf(x / sqrt 2)`` as ember's float32 GELU kernels compute it:
    ``tanh(x * Q(x*x))`` (``ember._backend.special.erf_tanh_coefficients``)."""
    from .._backend.special import erf_tanh_coefficients
    coeffs = [c_literal(float(c), "float") for c in erf_tanh_coefficients(_SQRT_HALF)]
    q = coeffs[0]
    for c in coeffs[1:]:
        q = f"({q} * sq_ + {c})"
    return f"ek_tanhf({x} * {q})"


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_CUBIC = 0.044715


def c_expression(op, x, params, t):
    """C for ``op`` on the operand expressions ``x`` (already of C type ``t``, the op's
    computing type)."""
    def k(v):
        return c_literal(v, t)
    if op in COMPARISONS:
        return f"({x[0]} {COMPARISONS[op]} {x[1]})"
    if op == "logical_not":
        return f"(!{x[0]})"
    if op == "add":
        y = x[1] if params.get("alpha", 1) == 1 else f"({k(params['alpha'])} * {x[1]})"
        return f"({x[0]} + {y})"
    if op == "sub":
        y = x[1] if params.get("alpha", 1) == 1 else f"({k(params['alpha'])} * {x[1]})"
        return f"({x[0]} - {y})"
    if op == "mul":
        return f"({x[0]} * {x[1]})"
    if op == "mul_const":
        return x[0] if params["factor"] == 1 else f"({x[0]} * {k(params['factor'])})"
    if op == "div":
        return f"({x[0]} / {x[1]})"
    if op == "neg":
        return f"(-{x[0]})"
    if op in ("exp", "log", "tanh", "sqrt"):
        return f"{_fn(op, t)}({x[0]})"
    if op == "abs":
        return f"{_fn('fabs', t)}({x[0]})"
    if op == "rsqrt":
        return f"({k(1)} / {_fn('sqrt', t)}({x[0]}))"
    if op == "sigmoid":
        return f"({k(1)} / ({k(1)} + {_fn('exp', t)}(-{x[0]})))"
    if op == "silu":
        return f"({x[0]} * ({k(1)} / ({k(1)} + {_fn('exp', t)}(-{x[0]}))))"
    if op == "relu":
        return f"({x[0]} < {k(0)} ? {k(0)} : {x[0]})"
    if op == "where":
        return f"({x[0]} ? {x[1]} : {x[2]})"
    if op == "pow":
        return _pow(x, params, t)
    if op == "gelu" and params["approximate"] == "none" and t == "float":
        return (f"__extension__ ({{ const float sq_ = {x[0]} * {x[0]}; "
                f"({_erf_polynomial(x[0])} + 1.0f) * {x[0]} * 0.5f; }})")
    if op == "gelu_grad" and params["approximate"] == "none" and t == "float":
        return (f"__extension__ ({{ const float sq_ = {x[0]} * {x[0]}; "
                f"({_erf_polynomial(x[0])} + 1.0f) * 0.5f + "
                f"ek_expf(sq_ * -0.5f) * {x[0]} * {k(_INV_SQRT_2PI)}; }})")
    if op == "gelu":
        if params["approximate"] == "none":
            return f"({k(0.5)} * {_fn('erfc', t)}({x[0]} * {k(-_SQRT_HALF)}) * {x[0]})"
        inner = f"({x[0]} * {x[0]} * {k(_GELU_CUBIC)} + {k(1)}) * {x[0]} * {k(_SQRT_2_OVER_PI)}"
        return f"(({_fn('tanh', t)}({inner}) + {k(1)}) * {k(0.5)} * {x[0]})"
    if op == "gelu_grad":
        v = x[0]
        if params["approximate"] == "none":
            return (f"({_fn('erfc', t)}({v} * {k(-_SQRT_HALF)}) * {k(0.5)} + "
                    f"{v} * {_fn('exp', t)}({v} * {v} * {k(-0.5)}) * {k(_INV_SQRT_2PI)})")
        tanh = f"{_fn('tanh', t)}(({v} * {v} * {k(_GELU_CUBIC)} + {k(1)}) * {v} * {k(_SQRT_2_OVER_PI)})"
        slope = f"(({v} * {v} * {k(3 * _GELU_CUBIC)} + {k(1)}) * {k(_SQRT_2_OVER_PI)})"
        return (f"__extension__ ({{ {t} th_ = {tanh}; (th_ + {k(1)}) * {k(0.5)} + "
                f"{v} * ({k(1)} - th_ * th_) * {slope} * {k(0.5)}; }})")
    raise NotImplementedError(f"no C expression for {op}")


def _pow(x, params, t):
    exponent = params.get("exponent")
    if exponent is None:
        return f"{_fn('pow', t)}({x[0]}, {x[1]})"
    special = {2: f"({x[0]} * {x[0]})", 3: f"({x[0]} * {x[0]} * {x[0]})", 1: x[0],
               0.5: f"{_fn('sqrt', t)}({x[0]})", -1: f"(({t})1 / {x[0]})",
               0: f"(({t})1)"}
    if exponent in special:
        return special[exponent]
    return f"{_fn('pow', t)}({x[0]}, {c_literal(exponent, t)})"
