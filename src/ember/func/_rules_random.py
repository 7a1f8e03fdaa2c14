"""Random operations under vmap, by each level's ``randomness``: ``'error'`` raises,
``'different'`` draws for every sample (a factory once per sample, an op on tensors once on the
whole batch), ``'same'`` draws once for one sample and shares it."""
from .._tensor import Tensor
from ._batched import BatchedTensor, active_levels
from ._dispatch import _is_inplace, register
from ._rules_common import bind, front, is_batched, tree_map

__all__ = ["random_rule"]

_FACTORIES = frozenset(["rand", "randn", "randint", "randperm"])
_DROPOUTS = frozenset(["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                       "feature_alpha_dropout", "rrelu", "rrelu_"])


def _error():
    raise RuntimeError("vmap: called random operation while in randomness error mode. Please "
                       "either use the 'same' or 'different' randomness flags on vmap or perform "
                       "the randomness operation out of vmap")


def _has_tensor(args, kwargs):
    return any(isinstance(a, Tensor) for a in list(args) + list(kwargs.values()))


def random_rule(fn, name, level, args, kwargs):
    if name in _DROPOUTS:
        bound = bind(fn, args, kwargs)
        if bound is not None and not bound.arguments.get("training", True):
            if level is None:
                from ._dispatch import call_original
                return call_original(fn, args, kwargs)
            return args[0]
    return _at(fn, name, args, kwargs, len(active_levels) - 1)


def _sample(x, level):
    return x.value.select(x.bdim, 0) if is_batched(x, level) else x


def _at(fn, name, args, kwargs, idx):
    if idx < 0:
        from ._dispatch import call_original
        return call_original(fn, args, kwargs)
    entry = active_levels[idx]
    level = entry.level
    if entry.randomness == "error":
        _error()
    batched = any(is_batched(a, level) for a in list(args) + list(kwargs.values()))
    factory = not _has_tensor(args, kwargs) or name in _FACTORIES
    if entry.randomness == "same":
        if not batched:
            return _at(fn, name, args, kwargs, idx - 1)
        return _same(fn, name, args, kwargs, idx)
    if factory:
        draws = [_at(fn, name, args, kwargs, idx - 1) for _ in range(entry.batch_size)]
        from ._dispatch import dispatch, original
        return BatchedTensor(dispatch(original("stack"), (draws,), {}), 0, level)
    inplace = _is_inplace(name, kwargs)
    if inplace and not is_batched(args[0], level):
        from ._dispatch import _check_inplace
        _check_inplace(name, args, kwargs, level)
    if name in _FOLDED:
        return _folded(fn, name, args, kwargs, idx)
    tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
    rank = max(t.ndim for t in tensors)
    first = next(a for a in args if isinstance(a, Tensor)) if args else tensors[0]

    def align(x):
        if not isinstance(x, Tensor):
            return x
        if not is_batched(x, level):
            return x.unsqueeze(0).expand(entry.batch_size, *x.shape) if x is first else x
        v = front(x, level)
        if x.ndim < rank and not (inplace and x is args[0]):
            s = tuple(v.shape)
            v = v.reshape(s[:1] + (1,) * (rank - x.ndim) + s[1:])
        return v

    out = _at(fn, name, tree_map(align, args), tree_map(align, kwargs), idx - 1)
    if inplace:
        return args[0]
    return BatchedTensor(out, 0, level)


_FOLDED = {"dropout1d": 1, "dropout2d": 2, "dropout3d": 3, "multinomial": 0}


def _folded(fn, name, args, kwargs, idx):
    """Ops whose samples are (N, C, *spatial) or (C, *spatial) (rows for multinomial): the
    mapped dimension joins N."""
    entry = active_levels[idx]
    x = args[0]
    v = front(x, entry.level) if is_batched(x, entry.level) else \
        x.unsqueeze(0).expand(entry.batch_size, *x.shape)
    s = tuple(v.shape)
    fold = x.ndim == _FOLDED[name] + 2
    if fold:
        v = v.reshape((s[0] * s[1],) + s[2:])
    out = _at(fn, name, (v,) + tuple(args[1:]), kwargs, idx - 1)
    if fold:
        out = out.reshape(s[:2] + tuple(out.shape)[1:])
    return BatchedTensor(out, 0, entry.level)


def _same(fn, name, args, kwargs, idx):
    """One draw for the whole batch of level ``active_levels[idx]`` on mapped inputs."""
    from ._dispatch import dispatch, original
    level = active_levels[idx].level
    if name in ("rand_like", "randn_like", "randint_like"):
        return _at(fn, name, tuple(_sample(a, level) for a in args), kwargs, idx - 1)
    if name in _DROPOUTS and name not in ("alpha_dropout", "feature_alpha_dropout", "rrelu", "rrelu_"):
        bound = bind(fn, args, kwargs)
        x = bound.arguments["input"]
        ones = dispatch(original("ones_like"), (_sample(x, level),), {})
        bound.arguments["input"] = ones
        bound.arguments["inplace"] = False
        mask = _at(fn, name, bound.args, bound.kwargs, idx - 1)
        if kwargs.get("inplace") or (len(args) > 3 and args[3]):
            return x.mul_(mask)
        return x * mask
    if name == "bernoulli" and len(args) == 1 and not kwargs:
        p = args[0]
        u = _at(original("rand_like"), "rand_like", (_sample(p, level),), {}, idx - 1)
        return (u < p).to(p.dtype)
    if name == "normal":
        mean = args[0] if args else kwargs.get("mean", 0.0)
        std = args[1] if len(args) > 1 else kwargs.get("std", 1.0)
        like = mean if isinstance(mean, Tensor) else std
        z = _at(original("randn_like"), "randn_like", (_sample(like, level),), {}, idx - 1)
        return mean + std * z
    if _is_inplace(name, kwargs) and is_batched(args[0], level):
        self = args[0]
        sample = dispatch(original("empty_like"), (_sample(self, level),), {})
        sample = _at(fn, name, (sample,) + tuple(args[1:]), kwargs, idx - 1)
        return self.copy_(sample)
    raise NotImplementedError(f"vmap: randomness='same' for {name} on a mapped input is not "
                              f"supported yet")


register(None, "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
         "normal", "bernoulli", "multinomial", "poisson", "F.dropout", "F.dropout1d",
         "F.dropout2d", "F.dropout3d", "F.alpha_dropout", "F.feature_alpha_dropout", "F.rrelu",
         "F.rrelu_", ".uniform_", ".normal_", ".bernoulli_", ".random_", ".exponential_",
         ".cauchy_", ".log_normal_", ".geometric_", random=True)
