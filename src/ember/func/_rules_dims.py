"""Batching rules of reductions and other ops that take dimensions: the mapped dimension goes
first and every dimension argument moves up by one."""
from ._dispatch import dispatch, register
from ._rules_common import bind, front, is_batched, wrap_dim, wrap_outputs

__all__ = ["dim_rule"]


def _shift(d, ndim):
    if isinstance(d, (tuple, list)):
        return type(d)(wrap_dim(x, ndim) + 1 for x in d)
    return wrap_dim(d, ndim) + 1


def dim_rule(params=("dim",), none="all", extra_rank=0):
    """A rule for ops whose first argument is the tensor and ``params`` name dimensions of it.

    ``none`` says what a dimension of None means: ``"all"`` every dimension (a tuple of them),
    ``"flatten"`` the flattened tensor (the sample is flattened, then dimension 1), ``"keep"``
    nothing to change. ``extra_rank`` is 1 for ops whose dimension indexes their result
    (unsqueeze, stack)."""

    def rule(fn, level, args, kwargs):
        bound = bind(fn, args, kwargs)
        if bound is None or any(p not in bound.signature.parameters for p in params):
            return NotImplemented       # a signature that hides the dimension (*args)
        names = list(bound.arguments)
        x = bound.arguments[names[0]]
        others = [v for k, v in bound.arguments.items() if k != names[0]]
        if not is_batched(x, level) or any(is_batched(o, level) for o in others):
            return NotImplemented
        ndim = x.ndim
        if ndim == 0 and not extra_rank:
            return NotImplemented
        v = front(x, level)
        for p in params:
            if p not in bound.arguments:
                continue
            d = bound.arguments[p]
            if none == "all" and isinstance(d, (tuple, list)) and not d:
                d = None
            if d is None:
                if none == "all":
                    bound.arguments[p] = tuple(range(1, ndim + 1))
                elif none == "flatten":
                    if bound.arguments.get("keepdim"):
                        return NotImplemented
                    v = v.reshape(v.shape[0], -1)
                    bound.arguments[p] = 1
            else:
                bound.arguments[p] = _shift(d, ndim + extra_rank)
        bound.arguments[names[0]] = v
        return wrap_outputs(dispatch(fn, bound.args, bound.kwargs), level)

    return rule


register(dim_rule(none="all"), "sum", "mean", "nansum", "nanmean", "amax", "amin",
         "count_nonzero", "std", "var", "std_mean", "var_mean", "logsumexp",
         "special.logsumexp", "linalg.vector_norm")
register(dim_rule(none="flatten"), "argmax", "argmin", "prod", "all", "any", "aminmax")
register(dim_rule(none="keep"), "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
         "softmax", "log_softmax", "special.softmax", "special.log_softmax", "sort", "argsort",
         "topk", "kthvalue", "mode", "narrow", "select", "chunk", "split", "tensor_split",
         "unbind", "F.normalize", "F.glu", "diff", "unflatten",
         ".split_with_sizes", "trapezoid", "cumulative_trapezoid")
register(dim_rule(params=("dim",), none="keep"), "linalg.matrix_norm")
register(dim_rule(params=("dim0", "dim1"), none="keep"), "transpose", "swapaxes", "swapdims")
register(dim_rule(params=("source", "destination"), none="keep"), "movedim", "moveaxis")
register(dim_rule(params=("dim1", "dim2"), none="keep"), "diagonal")
register(dim_rule(params=("dim1", "dim2"), none="keep", extra_rank=1), "diag_embed")
register(dim_rule(params=("dim",), none="keep", extra_rank=1), "unsqueeze")
register(dim_rule(params=("start_dim", "end_dim"), none="keep"), "flatten")
register(dim_rule(params=("dimension",), none="keep"), ".unfold")


def _dim_and_keepdim(fn, level, args, kwargs):
    """max/min/median(input, dim, keepdim=False): the dimension moves up by one."""
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs["dim"]
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    if not is_batched(x, level) or x.ndim == 0:
        return NotImplemented
    return wrap_outputs(dispatch(fn, (front(x, level), wrap_dim(dim, x.ndim) + 1, keepdim), {}),
                        level)


def _max_min(fn, level, args, kwargs):
    """max/min: with a dim as a dim op; without one the maximum of the flattened sample; with a
    tensor ``other`` elementwise."""
    from ._rules_pointwise import elementwise
    if len(args) > 1 and not isinstance(args[1], int) or "other" in kwargs:
        return elementwise(fn, level, args, kwargs)
    if len(args) > 1 or "dim" in kwargs:
        return _dim_and_keepdim(fn, level, args, kwargs)
    return _flattened(fn, level, args)


def _flattened(fn, level, args):
    x = args[0]
    if not is_batched(x, level):
        return NotImplemented
    v = front(x, level)
    return wrap_outputs(dispatch(fn, (v.reshape(v.shape[0], -1), 1), {}).values, level)


def _median(fn, level, args, kwargs):
    if len(args) > 1 or "dim" in kwargs:
        return _dim_and_keepdim(fn, level, args, kwargs)
    if args[0].ndim == 0:
        return NotImplemented
    return _flattened(fn, level, args)


def _softmax_implicit(fn, level, args, kwargs):
    """F.softmax and friends: torch's implicit dimension follows the sample's rank."""
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    if bound.arguments.get("dim") is None:
        ndim = bound.arguments["input"].ndim
        bound.arguments["dim"] = 0 if ndim in (0, 1, 3) else 1
    return dim_rule(none="keep")(fn, level, bound.args, bound.kwargs)


def _flip(fn, level, args, kwargs):
    x = args[0]
    dims = args[1:] if len(args) > 1 else (kwargs["dims"],)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if not is_batched(x, level) or x.ndim == 0:
        return NotImplemented
    shifted = tuple(wrap_dim(d, x.ndim) + 1 for d in dims)
    return wrap_outputs(dispatch(fn, (front(x, level), shifted), {}), level)


def _norm(fn, level, args, kwargs):
    """ember.norm: a p-norm of the flattened sample when no dim is given."""
    bound = bind(fn, args, kwargs)
    if bound is None or bound.arguments.get("p") == "nuc":
        return NotImplemented
    if bound.arguments.get("dim") is None:
        return dim_rule(none="flatten")(fn, level, args, kwargs)
    return dim_rule(none="keep")(fn, level, args, kwargs)


register(_flip, "flip")
register(_norm, "norm")
register(_max_min, "max", "min")
register(_median, "median", "nanmedian")
register(_softmax_implicit, "F.softmax", "F.log_softmax", "F.softmin")
