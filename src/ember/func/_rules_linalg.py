"""Batching rules of matrix products: the mapped dimension becomes a batch dimension of
``matmul`` (vectors are made matrices first, then squeezed back)."""
from ._dispatch import dispatch, original, register
from ._rules_common import bind, front, is_batched, wrap_outputs

__all__ = []


def _matmul_values(a, b, level):
    """``a @ b`` for samples of ``a`` and ``b`` (either mapped at ``level``), mapped first."""
    ra, rb = a.ndim, b.ndim
    if ra == 0 or rb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{ra}D and {rb}D")
    va, vb = front(a, level), front(b, level)
    ba, bb = is_batched(a, level), is_batched(b, level)
    # vectors as matrices: a (k) -> (1, k); b (k) -> (k, 1)
    if ra == 1:
        va = va.unsqueeze(1 if ba else 0)
    if rb == 1:
        vb = vb.unsqueeze(-1)
    ra2, rb2 = max(ra, 2), max(rb, 2)
    rank = max(ra2, rb2)
    if ba and ra2 < rank:
        s = tuple(va.shape)
        va = va.reshape(s[:1] + (1,) * (rank - ra2) + s[1:])
    if bb and rb2 < rank:
        s = tuple(vb.shape)
        vb = vb.reshape(s[:1] + (1,) * (rank - rb2) + s[1:])
    out = dispatch(original("matmul"), (va, vb), {})
    if ra == 1:
        out = out.squeeze(-2)
    if rb == 1:
        out = out.squeeze(-1)
    return out


def _matmul(fn, level, args, kwargs):
    a, b = args[0], args[1] if len(args) > 1 else kwargs["other"]
    return wrap_outputs(_matmul_values(a, b, level), level)


def _checked_matmul(ranks):
    def rule(fn, level, args, kwargs):
        a, b = args[0], args[1] if len(args) > 1 else next(iter(kwargs.values()))
        if (a.ndim, b.ndim) not in ranks:
            return NotImplemented       # the per-sample loop raises the op's own error
        return wrap_outputs(_matmul_values(a, b, level), level)
    return rule


def _outer(fn, level, args, kwargs):
    a, b = args[0], args[1] if len(args) > 1 else next(iter(kwargs.values()))
    if a.ndim != 1 or b.ndim != 1:
        return NotImplemented
    return a.unsqueeze(-1) * b


def _add_product(product):
    """addmm/addmv/baddbmm/addbmm/addr: beta * input + alpha * product(m1, m2), on samples."""
    def rule(fn, level, args, kwargs):
        bound = bind(fn, args, kwargs)
        if bound is None:
            return NotImplemented
        values = list(bound.arguments.values())
        inp, m1, m2 = values[:3]
        beta = bound.arguments.get("beta", 1)
        alpha = bound.arguments.get("alpha", 1)
        prod = product(m1, m2)
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:
            return prod + inp * 0
        return (inp * beta if beta != 1 else inp) + prod
    return rule


def _linear(fn, level, args, kwargs):
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    x, w = bound.arguments["input"], bound.arguments["weight"]
    b = bound.arguments.get("bias")
    if not is_batched(w, level) and not is_batched(b, level):
        return wrap_outputs(dispatch(fn, (front(x, level), w, b), {}), level)
    out = x @ w.transpose(-1, -2) if w.ndim == 2 else x @ w
    return out if b is None else out + b


def _einsum(fn, level, args, kwargs):
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str) or "..." in equation:
        return NotImplemented
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if not arrow:
        counts = {}
        for term in inputs:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, n in counts.items() if n == 1))
    used = set(equation)
    letter = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in used)
    terms, values = [], []
    for term, op in zip(inputs, operands):
        if is_batched(op, level):
            terms.append(letter + term)
            values.append(front(op, level))
        else:
            terms.append(term)
            values.append(op)
    eq = ",".join(terms) + "->" + letter + rhs
    return wrap_outputs(dispatch(fn, (eq, *values), {}), level)


def _rmatmul(fn, level, args, kwargs):
    return wrap_outputs(_matmul_values(args[1], args[0], level), level)


register(_matmul, "matmul", ".__matmul__")
register(_rmatmul, ".__rmatmul__")
register(_checked_matmul({(2, 2)}), "mm")
register(_checked_matmul({(3, 3)}), "bmm")
register(_checked_matmul({(2, 1)}), "mv")
register(_checked_matmul({(1, 1)}), "dot", "inner")
register(_outer, "outer", "ger")
register(_add_product(lambda a, b: a @ b), "addmm", "addmv", "baddbmm")
register(_add_product(lambda a, b: (a @ b).sum(-3)), "addbmm")
register(_add_product(lambda a, b: a.unsqueeze(-1) * b), "addr")
register(_linear, "F.linear")
register(_einsum, "einsum")
