"""Converters of ``ember.special``'s orthogonal polynomials: the three-term recurrence as an ONNX
``Loop`` up to the largest degree asked for, each element keeping the value at its own degree,
in float64 with the special cases ember's kernels (and torch's) have: the values at x = +-1 and
the trigonometric forms of the Chebyshev polynomials for |x| < 1 and high degrees."""
import numpy as np

from ._functions import CONVERTERS

__all__ = []


class _Ops:
    """Shorthands over a builder for float64 arithmetic."""

    def __init__(self, ctx):
        self.b, self.f64 = ctx.b, ctx.ember.float64

    def c(self, value):
        return self.b.scalar(float(value), self.f64)

    def __getattr__(self, onnx_op):
        return lambda *inputs: self.b.op(onnx_op, list(inputs))


def _loop(ctx, o, x, n, first, second, step):
    """P_n(x) from P_0 = first, P_1 = second(x) and P_k+1 = step(k, x, P_k, P_k-1), run by a
    Loop whose body reads x and n from the enclosing graph."""
    from onnx import TensorProto, helper
    b = ctx.b
    p0 = o.Expand(o.c(first), o.Shape(x))
    p1 = second(x)
    out = o.Where(o.Equal(n, o.c(0)), p0, o.Where(o.Equal(n, o.c(1)), p1, o.Mul(x, o.c(0))))
    flat = b.op("Reshape", [n, b.ints([-1])])
    top = b.reduce("ReduceMax", b.op("Concat", [flat, b.const(np.array([0.0]))], axis=0), None,
                   False)
    count = b.cast(o.Max(o.Sub(top, o.c(1)), o.c(0)), ctx.ember.int64)
    outer_nodes = b.nodes
    b.nodes = []
    names = {k: b.fresh(f"loop_{k}") for k in ("i", "cond", "prev", "cur", "out")}
    k = o.Add(b.cast(names["i"], ctx.ember.float64), o.c(1))
    new = step(k, x, names["cur"], names["prev"])
    kept = o.Where(o.Equal(n, o.Add(k, o.c(1))), new, names["out"])
    outs = [o.Identity(names["cond"]), o.Identity(names["cur"]), o.Identity(new),
            o.Identity(kept)]
    body_nodes, b.nodes = b.nodes, outer_nodes
    double = TensorProto.DOUBLE
    body = helper.make_graph(
        body_nodes, b.fresh("polynomial_step"),
        [helper.make_tensor_value_info(names["i"], TensorProto.INT64, []),
         helper.make_tensor_value_info(names["cond"], TensorProto.BOOL, [])] +
        [helper.make_tensor_value_info(names[v], double, None) for v in ("prev", "cur", "out")],
        [helper.make_tensor_value_info(outs[0], TensorProto.BOOL, [])] +
        [helper.make_tensor_value_info(v, double, None) for v in outs[1:]])
    _, _, result = b.op("Loop", [count, b.const(np.bool_(True)), p0, p1, out], outputs=3,
                        body=body)
    return o.Where(o.Less(n, o.c(0)), o.c(0), result)


def _odd(o, n):
    return o.Not(o.Equal(o.b.op("Mod", [n, o.c(2)], fmod=1), o.c(0)))


def _at_one(o, x, n, positive, negative_even, negative_odd):
    """The value at |x| == 1: ``positive`` for x = 1, the even/odd-degree values for x = -1."""
    at_minus = o.Where(_odd(o, n), negative_odd, negative_even)
    return o.Where(o.Greater(x, o.c(0)), positive, at_minus)


def _chebyshev_step(k, x, cur, prev, o):
    return o.Sub(o.Mul(o.Mul(o.c(2), x), cur), prev)


def _acos(ctx, o, x):
    """arccos in float64: ONNX Runtime's Acos takes float32 only, so its value is refined by
    two Newton steps on cos(t) = x (Cos and Sin run in float64)."""
    b = ctx.b
    t = b.cast(o.Acos(b.cast(x, ctx.ember.float32)), ctx.ember.float64)
    for _ in range(2):
        s = o.Sin(t)
        step = o.Div(o.Sub(o.Cos(t), x), o.Where(o.Equal(s, o.c(0)), o.c(1), s))
        t = o.Where(o.Equal(s, o.c(0)), t, o.Add(t, step))
    return t


def _chebyshev(kind):
    def compute(ctx, o, x, n):
        above = 6 if kind == "t" else 8
        trig = o.And(o.Greater(n, o.c(above)), o.Less(o.Abs(x), o.c(1)))
        second = {"t": lambda v: v, "u": lambda v: o.Mul(o.c(2), v),
                  "v": lambda v: o.Sub(o.Mul(o.c(2), v), o.c(1)),
                  "w": lambda v: o.Add(o.Mul(o.c(2), v), o.c(1))}[kind]
        degrees = o.Where(trig, o.c(0), n)
        out = _loop(ctx, o, x, degrees, 1.0, second,
                    lambda k, v, cur, prev: _chebyshev_step(k, v, cur, prev, o))
        t = _acos(ctx, o, o.Max(o.Min(x, o.c(1)), o.c(-1)))
        one = o.c(1)
        n1 = o.Add(n, one)
        two_n1 = o.Add(o.Mul(o.c(2), n), one)
        if kind == "t":
            trig_value = o.Cos(o.Mul(n, t))
            at_one = _at_one(o, x, n, one, one, o.c(-1))
        elif kind == "u":
            s = o.Sin(t)
            trig_value = o.Where(o.Equal(s, o.c(0)), o.Div(o.Mul(n1, o.Cos(o.Mul(n1, t))), x),
                                 o.Div(o.Sin(o.Mul(n1, t)), s))
            at_one = _at_one(o, x, n, n1, n1, o.Neg(n1))
        elif kind == "v":
            half = o.Sin(o.Div(t, o.c(2)))
            trig_value = o.Where(o.Equal(half, one), o.Where(_odd(o, n), o.Neg(two_n1), two_n1),
                                 o.Div(o.Cos(o.Mul(o.Add(n, o.c(0.5)), t)),
                                       o.Cos(o.Div(t, o.c(2)))))
            at_one = _at_one(o, x, n, one, two_n1, o.Neg(two_n1))
        else:
            half = o.Cos(o.Div(t, o.c(2)))
            sign = o.Where(_odd(o, n), o.c(-1), one)
            trig_value = o.Where(o.Equal(half, one), o.Where(o.Greater(x, o.c(0)), two_n1, sign),
                                 o.Div(o.Sin(o.Mul(o.Add(n, o.c(0.5)), t)),
                                       o.Sin(o.Div(t, o.c(2)))))
            at_one = _at_one(o, x, n, two_n1, one, o.c(-1))
        out = o.Where(trig, trig_value, out)
        out = o.Where(o.Equal(o.Abs(x), one), at_one, out)
        return o.Where(o.Less(n, o.c(0)), o.c(0), out)
    return compute


def _hermite_h(ctx, o, x, n):
    return _loop(ctx, o, x, n, 1.0, lambda v: o.Mul(o.c(2), v), lambda k, v, cur, prev: o.Sub(
        o.Mul(o.Mul(o.c(2), v), cur), o.Mul(o.Mul(o.c(2), k), prev)))


def _hermite_he(ctx, o, x, n):
    return _loop(ctx, o, x, n, 1.0, lambda v: v,
                 lambda k, v, cur, prev: o.Sub(o.Mul(v, cur), o.Mul(k, prev)))


def _laguerre_l(ctx, o, x, n):
    out = _loop(ctx, o, x, n, 1.0, lambda v: o.Sub(o.c(1), v), lambda k, v, cur, prev: o.Div(
        o.Sub(o.Mul(o.Sub(o.Add(o.Mul(o.c(2), k), o.c(1)), v), cur), o.Mul(k, prev)),
        o.Add(k, o.c(1))))
    return o.Where(o.And(o.Equal(x, o.c(0)), o.GreaterOrEqual(n, o.c(0))), o.c(1), out)


def _legendre_p(ctx, o, x, n):
    out = _loop(ctx, o, x, n, 1.0, lambda v: v, lambda k, v, cur, prev: o.Div(
        o.Sub(o.Mul(o.Mul(o.Add(o.Mul(o.c(2), k), o.c(1)), v), cur), o.Mul(k, prev)),
        o.Add(k, o.c(1))))
    one = o.c(1)
    out = o.Where(o.Equal(o.Abs(x), one), _at_one(o, x, n, one, one, o.c(-1)), out)
    return o.Where(o.Less(n, o.c(0)), o.c(0), out)


def _polynomial(compute, shifted=False):
    def convert(ctx, node, a):
        o = _Ops(ctx)
        f64 = ctx.ember.float64
        x, n = ctx.t_as(a["input"], f64), ctx.t_as(a["n"], f64)
        shape = o.Shape(o.Add(x, n))
        x, n = o.Expand(x, shape), o.Expand(n, shape)
        finite = o.And(o.Not(o.IsInf(n)), o.Not(o.IsNaN(n)))
        whole = o.Where(o.Less(o.Abs(n), o.c(2.0 ** 63)), o.Where(
            o.Less(n, o.c(0)), o.Ceil(n), o.Floor(n)), o.c(-1))
        n = o.Where(finite, whole, o.c(-1))
        if shifted:
            x = o.Sub(o.Add(x, x), o.c(1))
        out = compute(ctx, o, x, n)
        dtype = ctx.node_dtype(node)
        return out if dtype == f64 else ctx.b.cast(out, dtype)
    return convert


for _kind in "tuvw":
    CONVERTERS[f"chebyshev_polynomial_{_kind}"] = _polynomial(_chebyshev(_kind))
    CONVERTERS[f"shifted_chebyshev_polynomial_{_kind}"] = _polynomial(_chebyshev(_kind), True)
CONVERTERS["hermite_polynomial_h"] = _polynomial(_hermite_h)
CONVERTERS["hermite_polynomial_he"] = _polynomial(_hermite_he)
CONVERTERS["laguerre_polynomial_l"] = _polynomial(_laguerre_l)
CONVERTERS["legendre_polynomial_p"] = _polynomial(_legendre_p)
