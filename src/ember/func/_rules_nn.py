"""Batching rules of nn.functional: convolution (the batch folded into the groups, or into the
samples' N), pooling and resizing (folded into N), normalization, embeddings and the losses
(written with the ops that have rules)."""
from .._tensor import Tensor
from ._dispatch import _unpatched, dispatch, original, register
from ._rules_common import bind, front, is_batched, wrap_outputs

__all__ = []


def _unfold_outputs(out, size, n):
    """Outputs computed on (B*N, ...) back to (B, N, ...)."""
    if isinstance(out, Tensor):
        return out.reshape((size, n) + tuple(out.shape)[1:])
    return type(out)(_unfold_outputs(o, size, n) for o in out)


def _fold_into_n(spatial):
    """Ops on (N, C, *spatial) or (C, *spatial) samples: the mapped dimension joins N."""
    def rule(fn, level, args, kwargs):
        x = args[0] if args else kwargs["input"]
        others = list(args[1:]) + list(kwargs.values())
        if not is_batched(x, level) or any(is_batched(o, level) for o in others):
            return NotImplemented
        k = spatial if spatial is not None else x.ndim - 2
        v = front(x, level)
        rest = args[1:] if args else ()
        kw = {k_: v_ for k_, v_ in kwargs.items() if k_ != "input"}
        if x.ndim == k + 1:
            return wrap_outputs(dispatch(fn, (v,) + tuple(rest), kw), level)
        if x.ndim != k + 2:
            return NotImplemented
        shape = tuple(v.shape)
        out = dispatch(fn, (v.reshape((shape[0] * shape[1],) + shape[2:]),) + tuple(rest), kw)
        return wrap_outputs(_unfold_outputs(out, shape[0], shape[1]), level)
    return rule


def _conv(spatial):
    def rule(fn, level, args, kwargs):
        bound = bind(fn, args, kwargs)
        if bound is None:
            return NotImplemented
        a = bound.arguments
        x, w, b = a["input"], a["weight"], a.get("bias")
        if not is_batched(w, level) and not is_batched(b, level):
            return _fold_into_n(spatial)(fn, level, (x,), {k: v for k, v in a.items() if k != "input"})
        size = (w if is_batched(w, level) else b).value.shape[(w if is_batched(w, level) else b).bdim]
        groups = a.get("groups", 1)
        unbatched_sample = x.ndim == spatial + 1
        # input as (N, B*C, *spatial)
        if is_batched(x, level):
            v = front(x, level)
            if unbatched_sample:
                v = v.unsqueeze(1)
            v = v.movedim(0, 1)
            s = tuple(v.shape)
            v = v.reshape((s[0], s[1] * s[2]) + s[3:])
        else:
            v = x.unsqueeze(0) if unbatched_sample else x
            v = v.repeat((1, size) + (1,) * spatial)
        wv = front(w, level) if is_batched(w, level) else w.unsqueeze(0).expand(size, *w.shape)
        ws = tuple(wv.shape)
        wv = wv.reshape((ws[0] * ws[1],) + ws[2:])
        bv = None
        if b is not None:
            bv = front(b, level).reshape(-1) if is_batched(b, level) else b.repeat(size)
        a["input"], a["weight"], a["bias"], a["groups"] = v, wv, bv, groups * size
        out = dispatch(fn, bound.args, bound.kwargs)
        s = tuple(out.shape)
        out = out.reshape((s[0], size, s[1] // size) + s[2:]).movedim(1, 0)
        if unbatched_sample:
            out = out.squeeze(1)
        return wrap_outputs(out, level)
    return rule


def _embedding(fn, level, args, kwargs):
    bound = bind(fn, args, kwargs)
    if bound is None or is_batched(bound.arguments["weight"], level):
        return NotImplemented
    bound.arguments["input"] = front(bound.arguments["input"], level)
    return wrap_outputs(dispatch(fn, bound.args, bound.kwargs), level)


def _first_only(fn, level, args, kwargs):
    """Ops on the trailing dimensions of their one tensor argument."""
    x = args[0] if args else next(iter(kwargs.values()))
    others = list(args[1:]) + [v for v in kwargs.values() if v is not x]
    if not is_batched(x, level) or any(is_batched(o, level) for o in others):
        return NotImplemented
    rest = tuple(args[1:]) if args else ()
    kw = {k: v for k, v in kwargs.items() if v is not x}
    return wrap_outputs(dispatch(fn, (front(x, level),) + rest, kw), level)


def _layer_norm(fn, level, args, kwargs):
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    x, w, b = a["input"], a.get("weight"), a.get("bias")
    if is_batched(w, level) or is_batched(b, level):
        out = dispatch(fn, (x, a["normalized_shape"], None, None, a.get("eps", 1e-5)), {})
        if w is not None:
            out = out * w
        return out if b is None else out + b
    a["input"] = front(x, level)
    return wrap_outputs(dispatch(fn, bound.args, bound.kwargs), level)


def _batch_norm(fn, level, args, kwargs):
    """Evaluation with unmapped statistics and affine parameters: the batch joins N."""
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    x = a["input"]
    stats = [a.get("running_mean"), a.get("running_var")]
    if a.get("training") and is_batched(x, level) and any(
            s is not None and not is_batched(s, level) for s in stats):
        raise RuntimeError(
            "Batch norm got a batched tensor as input while the running_mean or running_var, "
            "which will be updated in place, were not batched.\nIf you are using a module and do "
            "not need eval mode, please set `track_running_stats` to be False.If you are using a "
            "prebuilt module and do not need eval mode, please see the functorch website for "
            "resources on how to patch your module to work with vmap")
    if a.get("training") or x.ndim < 2 or any(
            is_batched(v, level) for k, v in a.items() if k != "input"):
        return NotImplemented
    v = front(x, level)
    s = tuple(v.shape)
    a["input"] = v.reshape((s[0] * s[1],) + s[2:])
    out = dispatch(fn, bound.args, bound.kwargs)
    return wrap_outputs(out.reshape(s), level)


def _pad(fn, level, args, kwargs):
    bound = bind(fn, args, kwargs)
    if bound is None or bound.arguments.get("mode", "constant") != "constant":
        return _fold_into_n(None)(fn, level, args, kwargs) if bound is not None else NotImplemented
    return _first_only(fn, level, args, kwargs)


# -- losses, written with ops that have rules --------------------------------------------------
def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _loss(formula):
    def rule(fn, level, args, kwargs):
        bound = bind(fn, args, kwargs)
        if bound is None or bound.arguments.get("size_average") is not None or \
                bound.arguments.get("reduce") is not None:
            return NotImplemented
        a = bound.arguments
        if a["input"].shape != a["target"].shape:
            return NotImplemented
        out = formula(a)
        if out is NotImplemented:
            return out
        return _reduce(out, a.get("reduction", "mean"))
    return rule


def _smooth_l1(a):
    d = (a["input"] - a["target"]).abs()
    beta = a.get("beta", 1.0)
    if beta == 0:
        return d
    return dispatch(original("where"), (d < beta, 0.5 * d * d / beta, d - 0.5 * beta), {})


def _huber(a):
    d = (a["input"] - a["target"]).abs()
    delta = a.get("delta", 1.0)
    return dispatch(original("where"), (d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), {})


def _bce(a):
    x, t, w = a["input"], a["target"], a.get("weight")
    log_x = x.log().clamp_min(-100)
    log_1mx = (1 - x).log().clamp_min(-100)
    loss = -(t * log_x + (1 - t) * log_1mx)
    return loss if w is None else loss * w


def _bce_logits(a):
    x, t, w, pw = a["input"], a["target"], a.get("weight"), a.get("pos_weight")
    softplus_neg = (-x.abs()).exp().log1p() + (-x).clamp_min(0)
    if pw is None:
        loss = (1 - t) * x + softplus_neg
    else:
        loss = (1 - t) * x + (1 + (pw - 1) * t) * softplus_neg
    return loss if w is None else loss * w


def _nll_values(logp, target, weight, ignore_index, reduction):
    from ..nn import functional as F
    class_dim = 1 if logp.ndim >= 2 else 0
    mask = target != ignore_index
    safe = dispatch(original("where"), (mask, target, 0), {})
    picked = logp.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim)
    w = mask.to(logp.dtype)
    if weight is not None:
        w = w * dispatch(_unpatched(F.embedding), (safe, weight.unsqueeze(1)), {}).squeeze(-1)
    loss = -picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    if reduction == "sum":
        return loss.sum()
    return loss


def _nll_loss(fn, level, args, kwargs):
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    if a.get("size_average") is not None or a.get("reduce") is not None or a["target"].is_floating_point():
        return NotImplemented
    return _nll_values(a["input"], a["target"], a.get("weight"), a.get("ignore_index", -100),
                       a.get("reduction", "mean"))


def _cross_entropy(fn, level, args, kwargs):
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    if (a.get("size_average") is not None or a.get("reduce") is not None
            or a["target"].is_floating_point() or a.get("label_smoothing", 0.0)):
        return NotImplemented
    x = a["input"]
    logp = x.log_softmax(1 if x.ndim >= 2 else 0)
    return _nll_values(logp, a["target"], a.get("weight"), a.get("ignore_index", -100),
                       a.get("reduction", "mean"))


register(_conv(1), "F.conv1d")
register(_conv(2), "F.conv2d")
register(_conv(3), "F.conv3d")
for _k in (1, 2, 3):
    register(_fold_into_n(_k), f"F.max_pool{_k}d", f"F.avg_pool{_k}d",
             f"F.adaptive_avg_pool{_k}d", f"F.adaptive_max_pool{_k}d",
             f"F.max_pool{_k}d_with_indices", f"F.adaptive_max_pool{_k}d_with_indices")
register(_fold_into_n(1), "F.lp_pool1d")
register(_fold_into_n(2), "F.lp_pool2d", "F.pixel_shuffle", "F.pixel_unshuffle")
register(_fold_into_n(None), "F.interpolate", "F.upsample", "F.upsample_nearest",
         "F.upsample_bilinear")
register(_embedding, "F.embedding")
register(_first_only, "F.one_hot", "tril", "triu", "linalg.inv", "linalg.det", "linalg.slogdet",
         "linalg.cholesky", "linalg.qr", "linalg.eigh", "linalg.eigvalsh", "linalg.svd",
         "linalg.svdvals", "linalg.matrix_exp", "linalg.pinv", "det", "logdet", "slogdet",
         "inverse", "matrix_exp", "pinverse", "cholesky", "qr", "svd", "linalg.inv_ex",
         "linalg.cholesky_ex", "cholesky_inverse", "matrix_power", "linalg.matrix_power",
         "linalg.eigvals", "linalg.eig", "linalg.lu_factor", "linalg.lu", "adjoint")


def _first_only_inplace(fn, level, args, kwargs):
    """tril_/triu_ on the trailing dimensions of a mapped tensor, in its own memory."""
    x = args[0]
    if not is_batched(x, level) or any(is_batched(a, level) for a in args[1:]):
        return NotImplemented
    dispatch(fn, (front(x, level),) + tuple(args[1:]), kwargs)
    return x


register(_first_only_inplace, ".tril_", ".triu_")
register(_layer_norm, "F.layer_norm")
register(_batch_norm, "F.batch_norm")
register(_pad, "F.pad")
register(_loss(lambda a: (a["input"] - a["target"]) ** 2), "F.mse_loss")
register(_loss(lambda a: (a["input"] - a["target"]).abs()), "F.l1_loss")
register(_loss(_smooth_l1), "F.smooth_l1_loss")
register(_loss(_huber), "F.huber_loss")
register(_loss(_bce), "F.binary_cross_entropy")
register(_loss(_bce_logits), "F.binary_cross_entropy_with_logits")
register(_nll_loss, "F.nll_loss")
register(_cross_entropy, "F.cross_entropy")
