"""Loss functions. Cross entropy over class indices is one node (log_softmax and the negative
log likelihood fused, with a hand-written backward); the others are compositions of ember
ops, so their gradients of any order follow."""
import functools
import math
import types
import warnings

import numpy as np

from ...autograd.engine import releases_after_run
from ...ops._common import Node, forward_mode, grad_state, make, namespace_of, record, widened
from ...ops.ternary import _select, where
from .activation import log_sigmoid_arrays, logsigmoid, relu, softplus
from .softmax_family import log_softmax, row_peak
from .distance import pairwise_distance
from ...amp.policy import autocast_policy
from ..._backend import vector_math
from ..._backend.choice import KernelChoice
from ...autograd._dual import jvp_by_transposition
from ..._torch_function import override_or_raise

__all__ = [
    "l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
    "gaussian_nll_loss", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "soft_margin_loss", "multilabel_margin_loss",
]


# ---------------------------------------------------------------------------------------------
# Reductions and checks


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The ``reduction`` string meant by the deprecated ``size_average`` and ``reduce``."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size_mismatch(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({_torch_size(target)}) that is different to the input "
                      f"size ({_torch_size(input)}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _torch_size(t):
    return f"ember.Size({list(t.shape)})"


# ---------------------------------------------------------------------------------------------
# Regression losses


# torch's numbering of the reductions (a node's saved ``reduction``)
_REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}
_FLOATS_32_64 = (np.dtype(np.float32), np.dtype(np.float64))


class _ElementwiseLossNode(Node):
    """A loss of ``input`` and ``target`` elementwise, reduced, as one node (torch's): the
    incoming gradient divided by the element count for the mean, then ``gradients(x, t,
    grad)``, in ember ops so that create_graph can differentiate them again."""
    __slots__ = ("reduction", "parameter")
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, t = self.saved_tensors
        if self.reduction == "mean":
            grad = grad / x.numel()
        return self.gradients(x, t, grad)

    def _needed(self, gx, gt):
        need_x, need_t = (fn is not None for fn, _ in self.next_functions)
        return (gx() if need_x else None), (gt() if need_t else None)


class _PointwiseLossNode(_ElementwiseLossNode):
    """A loss of ``input - target``: the input's gradient ``derivative(input - target) * grad``,
    the target's its negative, in ember ops or on the arrays (the same operations, so the same
    bits): ``derivative(diff, ops)`` takes either, ``ops`` giving ``select`` and ``sign``."""
    __slots__ = ()

    def gradients(self, x, t, grad):
        g = self.derivative(x - t, _TENSOR_OPS) * grad
        return self._needed(lambda: g, lambda: -g)

    def backward_arrays(self, grad):
        x, t = self.saved_tensors
        xd, gd = x._data, grad._data
        if gd.dtype != xd.dtype:
            return None
        if self.reduction == "mean":
            gd = gd / xd.size
        g = self.derivative(xd - t._data, _ARRAY_OPS) * gd
        return self._needed(lambda: make(g), lambda: make(-g))


# what ``_PointwiseLossNode.derivative`` selects and takes signs with, on tensors and on arrays
_TENSOR_OPS = types.SimpleNamespace(select=where, sign=lambda t: t.sign())
_ARRAY_OPS = types.SimpleNamespace(select=lambda condition, a, b: _select(np, condition, a, b, a.dtype),
                                   sign=np.sign)


class MseLossBackward0(_PointwiseLossNode):
    __slots__ = ()
    saved_fields = {"self": 0, "target": 1, "reduction": lambda node: _REDUCTION_CODES[node.reduction]}

    def derivative(self, diff, ops):
        return diff * 2


class SmoothL1LossBackward0(_PointwiseLossNode):
    __slots__ = ()
    saved_fields = {"self": 0, "target": 1, "beta": "parameter",
                    "reduction": lambda node: _REDUCTION_CODES[node.reduction]}

    def derivative(self, diff, ops):
        beta = self.parameter
        return ops.select(abs(diff) < beta, diff / beta, ops.sign(diff))


class HuberLossBackward0(_PointwiseLossNode):
    __slots__ = ()
    saved_fields = {"self": 0, "target": 1, "delta": "parameter",
                    "reduction": lambda node: _REDUCTION_CODES[node.reduction]}

    def derivative(self, diff, ops):
        delta = self.parameter
        return ops.select(abs(diff) < delta, diff, ops.sign(diff) * delta)


def _pointwise_loss(node_cls, input, target, reduction, loss_of, parameter=None):
    """``loss_of(x, t)`` (an ``_ElementwiseLossNode``'s loss) on the arrays of float32/float64
    ``input`` and ``target`` of one shape and dtype, reduced by ember's reduction, with one
    ``node_cls`` node; None for other operands or under forward-mode AD (the composite of
    ember ops then)."""
    x, t = input._data, target._data
    if (type(x) is not np.ndarray or type(t) is not np.ndarray or x.dtype != t.dtype
            or x.dtype not in _FLOATS_32_64 or x.shape != t.shape or forward_mode.active):
        return None
    out = _reduce(make(loss_of(x, t)), reduction)
    node = record(node_cls, (input, target), out)
    if node is not None:
        node.reduction, node.parameter = reduction, parameter
        node.save(input, target)
    return out


class BinaryCrossEntropyBackward0(_ElementwiseLossNode):
    """Backward of ``binary_cross_entropy`` of probabilities: the input's gradient
    ``(x - t) / max((1 - x) x, 1e-12) * grad``, the target's ``-logit(x) * grad``, as torch's."""
    __slots__ = ()
    saved_fields = {"self": 0, "target": 1, "weight": lambda node: None,
                    "reduction": lambda node: _REDUCTION_CODES[node.reduction]}

    def gradients(self, x, t, grad):
        return self._needed(lambda: (x - t) / ((1 - x) * x).clamp(min=_BCE_EPSILON) * grad,
                            lambda: -x.logit() * grad)


_BCE_EPSILON = 1e-12


def _binary_cross_entropy(x, t):
    """The composite's arithmetic on arrays: the logs clamped at -100, as torch's."""
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(x), -100)
        log_rest = np.maximum(np.log(1 - x), -100)
    return -(t * log_x + (1 - t) * log_rest)


def _squared_error(x, t):
    diff = x - t
    return np.multiply(diff, diff, out=diff)


@autocast_policy("fp32")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The mean (or sum, or each) absolute error ``|input - target|``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    return _reduce((input - target).abs(), reduction)


@autocast_policy("fp32")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """The mean (or sum, or each) squared error ``(input - target)^2``."""
    try:
        reduction = _reduction(size_average, reduce, reduction)
        _check_reduction(reduction)
        _warn_size_mismatch(input, target)
        if weight is None:
            fused = _pointwise_loss(MseLossBackward0, input, target, reduction, _squared_error)
            if fused is not None:
                return fused
        diff = input - target
        loss = diff * diff
        if weight is not None:
            loss = loss * weight
        return _reduce(loss, reduction)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(mse_loss, error, input, target, size_average, reduce, reduction, weight)


@autocast_policy("fp32")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 x^2 / beta`` where ``|x| < beta``, else ``|x| - 0.5 beta`` (x = input - target)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta > 0:
        fused = _pointwise_loss(SmoothL1LossBackward0, input, target, reduction, functools.partial(
            _smooth_l1, beta=beta), beta)
        if fused is not None:
            return fused
    diff = (input - target).abs()
    if beta == 0:
        return _reduce(diff, reduction)
    return _reduce(where(diff < beta, diff * diff * (0.5 / beta), diff - 0.5 * beta), reduction)


def _smooth_l1(x, t, beta):
    diff = np.abs(x - t)
    return _select(np, diff < beta, diff * diff * (0.5 / beta), diff - 0.5 * beta, diff.dtype)


def _huber(x, t, delta):
    diff = np.abs(x - t)
    return _select(np, diff < delta, diff * diff * 0.5, (diff - 0.5 * delta) * delta, diff.dtype)


@autocast_policy("fp32")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 x^2`` where ``|x| < delta``, else ``delta (|x| - 0.5 delta)``."""
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        fused = _pointwise_loss(HuberLossBackward0, input, target, reduction,
                                functools.partial(_huber, delta=delta), delta)
        if fused is not None:
            return fused
    diff = (input - target).abs()
    loss = where(diff < delta, diff * diff * 0.5, (diff - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------------------------
# Classification over class indices: nll_loss and the fused cross entropy


def _class_layout(input, target, weight):
    """Check shapes for a loss over classes in dim 1 (dim 0 for an unbatched input); return
    the input's logits as an array (M, C), the targets as (M,), and C."""
    data, targets = input._data, target._data
    shape, target_shape = data.shape, targets.shape
    if not shape:
        raise ValueError(f"Expected 1 or more dimensions (got {len(shape)})")
    if targets.dtype.kind not in "iu":
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype_word(target)}")
    if len(shape) == 1:
        if target_shape:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        data, classes = data.reshape(1, -1), shape[0]
    else:
        if shape[0] != (target_shape[0] if target_shape else None):
            if not target_shape or len(shape) == 2 and len(target_shape) != 1:
                raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
            raise ValueError(f"Expected input batch_size ({shape[0]}) to match target "
                             f"batch_size ({target_shape[0]}).")
        expected = (shape[0],) + shape[2:]
        if target_shape != expected:
            if len(shape) == 2:
                raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
            raise RuntimeError(f"Expected target size {list(expected)}, got {list(target_shape)}")
        classes = shape[1]
        data = _rows_array(data)
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    return data, targets.reshape(-1) if len(target_shape) != 1 else targets, classes


def _rows_array(data):
    """A (C,) or (N, C, *) array of class scores as (M, C) rows."""
    if data.ndim <= 2:
        return data if data.ndim == 2 else data.reshape(1, -1)
    return namespace_of(data).moveaxis(data, 1, -1).reshape(-1, data.shape[1])


def _dtype_word(t):
    from ...ops._common import _type_word
    return _type_word(t._data.dtype)


class _ClassTargets:
    """Class-index targets, flattened to (M,): which are kept (not ``ignore_index``), the
    index to read (0 where ignored), the class weights (C,) and each target's weight (0 where
    ignored). The loss of row i is ``-sum_c Q_ic log p_ic`` with
    ``Q = (1 - eps) picked_weight onehot(target) + eps / C * weight * kept``."""

    def __init__(self, xp, targets, classes, weight, ignore_index, label_smoothing, dtype, all_kept=None):
        """``all_kept``: True where the targets are known to be class indices none of which is
        ``ignore_index`` (else they are checked here)."""
        self.xp, self.classes, self.eps, self.dtype = xp, classes, label_smoothing, dtype
        self.rows = xp.arange(targets.shape[0])
        # no class weights, no smoothing, every target kept: Q is the one-hot of the targets
        self.one_hot = False
        if weight is None and (all_kept or _all_kept(xp, targets, classes, ignore_index)):
            self.index = targets   # (kept, picked_weight and weight: ones, made when read)
            self.one_hot = not label_smoothing
            return
        kept = targets != ignore_index
        bad = kept & ((targets < 0) | (targets >= classes))
        if bad.any():
            raise IndexError(f"Target {int(targets[bad][0])} is out of bounds.")
        self.kept = kept.astype(dtype)
        self.index = xp.where(kept, targets, 0)
        self.weight = xp.ones(classes, dtype) if weight is None else weight._data.astype(dtype)
        self.picked_weight = self.weight[self.index] * kept

    @functools.cached_property
    def kept(self):   # (read here only when every target is kept: the others set it)
        return self.xp.ones(self.rows.shape[0], self.dtype)

    @functools.cached_property
    def picked_weight(self):
        return self.kept

    @functools.cached_property
    def weight(self):
        return self.xp.ones(self.classes, self.dtype)

    def divisor(self):
        """What 'mean' divides by: the summed weights of the kept targets."""
        if self.one_hot:
            return float(self.rows.shape[0])
        return float(self.picked_weight.sum())

    def logit_terms(self, shifted):
        """What the loss reads from the logits (less any per-row shift) before they are
        exponentiated: each row's target entry and, with label smoothing, its class-weighted
        sum (else None)."""
        picked = shifted[self.rows, self.index]
        smoothed = shifted @ self.weight if self.eps else None
        return picked, smoothed

    def row_losses(self, picked, smoothed, log_total):
        """``-sum_c Q_ic logp_ic`` for each row, from ``logit_terms`` of the shifted logits and
        each row's log sum of their exponentials (``logp = shifted - log_total``)."""
        if self.one_hot:
            return log_total - picked
        out = -(1.0 - self.eps) * self.picked_weight * (picked - log_total)
        if self.eps:
            smoothed = smoothed - log_total * self.weight.sum()
            out = out - (self.eps / self.classes) * self.kept * smoothed
        return out

    def row_weights(self):
        """``sum_c Q_ic`` for each row (M,): what the softmax is multiplied by in the
        gradient (a number where it is 1 for all)."""
        if self.one_hot:
            return 1.0
        if not self.eps:
            return self.picked_weight
        return ((1.0 - self.eps) * self.picked_weight
                + (self.eps / self.classes) * self.weight.sum() * self.kept)

    def gradient_rows(self, weighted, grad, scale, out):
        """``scale * (softmax(logits) * sum_c Q_c - Q)`` written into ``out`` (M, C), which may
        be ``weighted`` itself: ``weighted`` holds ``softmax(logits) * sum_c Q_c`` already
        divided as the reduction divides, so only the incoming gradient ``grad`` (0-d, or per
        row (M,) for reduction 'none') multiplies it; ``scale`` is what multiplies ``Q``."""
        xp, dtype = self.xp, weighted.dtype
        if grad.ndim:
            xp.multiply(weighted, grad.astype(dtype)[:, None], out=out)
        elif grad != 1 or out is not weighted:  # a loss seeded with 1 needs no pass here
            xp.multiply(weighted, grad.astype(dtype), out=out)
        if self.eps:
            smooth_scale = (self.eps / self.classes) * self.kept * scale
            out -= smooth_scale.astype(dtype)[:, None] * self.weight[None, :]
        if self.one_hot:
            out[self.rows, self.index] -= xp.asarray(scale, dtype)
        else:
            out[self.rows, self.index] -= ((1.0 - self.eps) * self.picked_weight * scale).astype(dtype)
        return out

    def coefficients(self, dtype):
        """Q as an array (M, C), built only when needed (in backward)."""
        xp = self.xp
        q = xp.zeros((self.rows.shape[0], self.classes), dtype)
        q[self.rows, self.index] = (1.0 - self.eps) * self.picked_weight
        if self.eps:
            q += (self.eps / self.classes) * self.weight[None, :] * self.kept[:, None]
        return q


def _all_kept(xp, targets, classes, ignore_index):
    """Whether every target is a class index (none out of range, none ``ignore_index``): the
    common case, which needs no masks."""
    if not targets.size:
        return True
    if 0 <= ignore_index < classes:
        return False
    if xp is np:   # the ufuncs' own reductions, without NumPy's Python-level wrappers
        return np.minimum.reduce(targets, axis=None) >= 0 and np.maximum.reduce(targets, axis=None) < classes
    return targets.min() >= 0 and targets.max() < classes


class CrossEntropyLossBackward0(Node):
    """log_softmax over classes and the weighted negative log likelihood, as one node.
    Saves the logits and ``softmax * sum_c Q_c`` (divided as the reduction divides), which the
    forward writes while each block of rows is in cache: the gradient is that array times the
    incoming gradient, less ``Q``, written over it when the graph is not retained. With
    ``create_graph`` the gradient is written in ember ops instead, so it can be differentiated
    again."""

    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        (input,) = self.saved_tensors
        return (self._composite(input, grad),)

    def backward_arrays(self, grad):
        (input,) = self.saved_tensors
        grad = grad._data.reshape(-1) if self.reduction == "none" else grad._data
        scale = grad / _reduction_divisor(self.reduction, self.divisor)
        weighted = self.weighted
        out = weighted if releases_after_run(self) else namespace_of(weighted).empty_like(weighted)
        rows = self.targets.gradient_rows(weighted, grad, scale, out)
        return (make(_unrows_array(rows, input).astype(input._data.dtype, copy=False)),)

    def release(self):
        self.weighted = None
        super().release()

    def _composite(self, input, grad):
        logits = _rows_of(input)
        probs = logits.softmax(-1)
        q = self.targets.coefficients(logits._data.dtype)
        if self.reduction == "none":
            scale = grad.reshape(-1, 1)
        else:
            scale = grad / (self.divisor or 1.0) if self.reduction == "mean" else grad
        rows = (probs * make(q.sum(-1, keepdims=True)) - make(q)) * scale
        return _unrows(rows, input)


def _rows_of(input):
    """``input`` (N, C, *) as (M, C) rows of class scores (a (C,) input as one row)."""
    if input.ndim <= 2:
        return input if input.ndim == 2 else input.reshape(1, -1)
    return input.movedim(1, -1).reshape(-1, input.shape[1])


def _unrows(rows, input):
    if input.ndim <= 2:
        return rows if input.ndim == 2 else rows.reshape(input.shape)
    moved = tuple(input.shape[:1]) + tuple(input.shape[2:]) + (input.shape[1],)
    return rows.reshape(moved).movedim(-1, 1)


def _unrows_array(rows, input):
    """The array counterpart of ``_unrows``: (M, C) rows back to ``input``'s layout."""
    if input.ndim <= 2:
        return rows if input.ndim == 2 else rows.reshape(input.shape)
    moved = tuple(input.shape[:1]) + tuple(input.shape[2:]) + (input.shape[1],)
    return namespace_of(rows).moveaxis(rows.reshape(moved), -1, 1)


def _reduce_rows(per_row, reduction, divisor, target_shape, xp, dtype):
    if reduction == "none":
        return per_row.reshape(target_shape).astype(dtype, copy=False)
    total = per_row.sum()
    if reduction == "mean":
        total = total / divisor if divisor else xp.nan
    return xp.asarray(total, dtype)


def _cross_entropy_indices(input, target, weight, ignore_index, reduction, label_smoothing):
    logits, targets, classes = _class_layout(input, target, weight)
    xp = namespace_of(logits)
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f'"log_softmax_lastdim_kernel_impl" not implemented for '
                           f"'{_dtype_word(input)}'")
    wants_grad = grad_state.grad_enabled and input._requires_grad
    if weight is None and not label_smoothing and reduction != "none" and logits.size < FUSED_MAX_ELEMENTS:
        rows = logits.shape[0]
        factor = (1.0 / rows if reduction == "mean" else 1.0) if wants_grad else 0.0
        fused = _fused_cross_entropy(logits, targets, ignore_index, factor)
        if fused is not None:
            loss_sum, weighted = fused
            picked = _ClassTargets(xp, targets, classes, None, ignore_index, 0.0, logits.dtype, all_kept=True)
            return _cross_entropy_result(input, xp.asarray(loss_sum / rows if reduction == "mean" else loss_sum,
                                                           input._data.dtype),
                                         picked, reduction, float(rows), weighted)
    logits = widened(logits)  # computed in float32, the loss rounded once
    picked = _ClassTargets(xp, targets, classes, weight, ignore_index, label_smoothing,
                           logits.dtype)
    divisor = picked.divisor()
    row_factors = None  # only a gradient needs the exponentials weighted
    if wants_grad:
        row_factors = picked.row_weights() / _reduction_divisor(reduction, divisor)
    weighted, totals, terms = _exponentials(xp, logits, picked, row_factors)
    log_total = xp.log(totals.astype(xp.float64))  # (M,): float64 costs nothing here
    per_row = picked.row_losses(*terms, log_total)
    return _cross_entropy_result(input, _reduce_rows(per_row, reduction, divisor, target.shape, xp, input._data.dtype),
                                 picked, reduction, divisor, weighted)


def _cross_entropy_result(input, loss, picked, reduction, divisor, weighted):
    """The loss array as a tensor, recorded with what its backward reads."""
    out = make(loss)
    node = record(CrossEntropyLossBackward0, (input,), out)
    if node is not None:
        node.save(input)
        node.targets, node.reduction, node.divisor = picked, reduction, divisor
        node.weighted = weighted
    return out


def _no_fused_cross_entropy(logits, targets, ignore_index, factor):
    return None   # NumPy's path is ``_cross_entropy_indices``'s own


# Cross entropy of float32 logits over class indices, without class weights or smoothing, in
# one C loop over the rows (``vector_math.cross_entropy_rows``: the peak, the exponentials'
# sum, the loss and the weighted softmax a row at a time), for logits of fewer than
# ``FUSED_MAX_ELEMENTS``: from there the unshifted exponentials' blocked passes took as long or
# less (``python -m benchmarks.cross_entropy``). Where it declines, and on NumPy's kernels, the
# passes of ``_cross_entropy_indices``.
FUSED_MAX_ELEMENTS = 1 << 17
_fused_cross_entropy = KernelChoice("cross entropy", onednn=vector_math.cross_entropy_rows,
                                    numpy=_no_fused_cross_entropy)


def _reduction_divisor(reduction, divisor):
    """What the reduction divides each row's loss by (1 when no target is kept: then Q and the
    gradient are 0)."""
    return (divisor or 1.0) if reduction == "mean" else 1.0


# Elements of a block of rows exponentiated and summed while in cache (512 KiB of float32).
_EXP_BLOCK_ELEMENTS = 1 << 17
# Logits of fewer elements are shifted by their row peaks: the pass that ``_unshifted_exps``
# saves costs less than its checks there.
_UNSHIFTED_MIN_ELEMENTS = 1 << 14


def _exponentials(xp, logits, targets, row_factors):
    """``softmax(logits) * row_factors[:, None]`` (M, C) (``exp(logits - shift)`` when
    ``row_factors`` is None), the row sums of ``exp(logits - shift)`` (M,) and
    ``targets.logit_terms`` of ``logits - shift``. The shift is 0 where that is safe
    (``_unshifted_exps``: one pass fewer), else each row's peak."""
    unshifted = (_unshifted_exps(xp, logits, row_factors)
                 if logits.size >= _UNSHIFTED_MIN_ELEMENTS else None)
    if unshifted is not None:
        return (*unshifted, targets.logit_terms(logits))
    shifted = xp.subtract(logits, row_peak(logits, 1))
    terms = targets.logit_terms(shifted)
    xp.exp(shifted, out=shifted)
    totals = shifted.sum(axis=1)
    if row_factors is not None:
        shifted *= (row_factors / totals)[:, None]
    return shifted, totals, terms


def _unshifted_exps(xp, logits, row_factors):
    """``exp(logits) / totals * row_factors`` by rows (M, C) (``exp(logits)`` when
    ``row_factors`` is None) and the row sums ``totals`` of ``exp(logits)``, or None unless
    every row sum is finite and far enough above the smallest normal number that terms lost to
    underflow do not count (then the shift by the row max changes nothing but rounding)."""
    rows, classes = logits.shape
    if not (rows and classes):
        return None
    weighted, totals = _exp_rows_scaled(logits, row_factors)
    lowest, highest = _safe_sums(logits.dtype)
    if not (totals.min() >= lowest and totals.max() <= highest):
        return None
    return weighted, totals


def _numpy_exp_rows_scaled(logits, row_factors):
    """``_unshifted_exps``'s exponentials and row sums on the backend, a block of rows at a
    time, so that the sums and the scaling read the block from cache; each sum is a product
    with a ones vector (BLAS)."""
    xp = namespace_of(logits)
    rows, classes = logits.shape
    weighted = xp.empty(logits.shape, logits.dtype)
    totals = xp.empty(rows, logits.dtype)
    ones = xp.ones(classes, logits.dtype)
    step = max(1, _EXP_BLOCK_ELEMENTS // classes)
    # an overflow or a zero sum only sends the logits to the shifted path
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for start in range(0, rows, step):
            part = slice(start, min(start + step, rows))
            block = xp.exp(logits[part], out=weighted[part])
            xp.matmul(block, ones, out=totals[part])
            if row_factors is not None:
                factors = row_factors if row_factors.__class__ is float else row_factors[part]
                block *= (factors / totals[part])[:, None]
    return weighted, totals


# Large float32 logits on a loop over rows (libmvec's exp) on oneDNN's threads.
_exp_rows_scaled = KernelChoice("cross entropy's exponentials", onednn=vector_math.exp_rows_scaled,
                                numpy=_numpy_exp_rows_scaled)


@functools.cache
def _safe_sums(dtype):
    """The range of row sums of exponentials that need no shift: finite, and far enough above
    the smallest normal number that the terms underflow loses do not count."""
    info = np.finfo(dtype)
    return info.tiny / info.eps, info.max


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    if target.shape != input.shape:
        raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
    dim = 0 if input.ndim == 1 else 1
    classes = input.shape[dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = log_softmax(input, dim) * target
    if weight is not None:
        terms = terms * weight.reshape((-1,) + (1,) * (input.ndim - dim - 1))
    loss = -terms.sum(dim)
    if reduction == "mean":
        return loss.sum() / (input.numel() // classes if input.numel() else 0)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """The cross entropy between the logits ``input`` (N, C, *) and ``target``: class
    indices (N, *) or class probabilities (N, C, *). Supports class ``weight``,
    ``ignore_index`` (indices only) and ``label_smoothing``."""
    try:
        reduction = _reduction(size_average, reduce, reduction)
        _check_reduction(reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        if target.is_floating_point():
            return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
        return _cross_entropy_indices(input, target, weight, ignore_index, reduction,
                                      label_smoothing)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(cross_entropy, error, input, target, weight, size_average, ignore_index,
                                 reduce, reduction, label_smoothing)


@autocast_policy("fp32")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """The negative log likelihood loss: ``-weight[t] * input[n, t]`` for log-probabilities
    ``input`` (N, C, *) and class indices ``target`` (N, *)."""
    try:
        reduction = _reduction(size_average, reduce, reduction)
        _check_reduction(reduction)
        logits, targets, classes = _class_layout(input, target, weight)
        xp = namespace_of(input._data)
        picked = _ClassTargets(xp, targets, classes, weight, ignore_index, 0.0, input._data.dtype)
        if input.ndim <= 2 and xp is np and not forward_mode.active:
            return _nll_loss_node(input, target, weight, ignore_index, reduction, logits, picked)
        rows = _rows_of(input)
        per_row = -rows[make(picked.rows), make(picked.index)] * make(picked.picked_weight)
        if reduction == "none":
            return per_row.reshape(target.shape)
        if reduction == "sum":
            return per_row.sum()
        divisor = picked.divisor()
        return per_row.sum() / divisor if divisor else per_row.sum() * math.nan
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(nll_loss, error, input, target, weight, size_average, ignore_index, reduce, reduction)


class NllLossBackward0(Node):
    """Backward of ``nll_loss`` of (N, C) or (C,) log-probabilities: ``-weight[t] * grad``
    (divided by the total weight for the mean) at each kept target's entry, 0 elsewhere; in
    ember ops for create_graph (linear in ``grad``), else on the arrays."""
    __slots__ = ("targets", "divisor", "reduction", "ignore_index")
    saved_fields = {"self": 0, "target": 1, "weight": 2, "reduction": lambda node: _REDUCTION_CODES[node.reduction],
                    # (torch gives the index as an unsigned 64-bit number)
                    "ignore_index": lambda node: node.ignore_index % (1 << 64),
                    "total_weight": lambda node: make(np.asarray(node.divisor, node.saved_tensors[0]._data.dtype))}
    jvp = jvp_by_transposition

    def _scale(self, grad):
        """The incoming gradient per row (M,) or as one number."""
        if self.reduction == "none":
            return grad.reshape(-1)
        return grad / _reduction_divisor(self.reduction, self.divisor) if self.reduction == "mean" else grad

    def backward(self, grad):
        from ...ops.creation import zeros
        input = self.saved_tensors[0]
        picked = self.targets
        coefficients = -(self._scale(grad) * make(picked.picked_weight))
        rows = zeros((picked.rows.shape[0], picked.classes), dtype=input.dtype)
        rows = rows.index_put((make(picked.rows), make(picked.index)), coefficients)
        return (_unrows(rows, input), None, None)

    def backward_arrays(self, grad):
        input = self.saved_tensors[0]
        picked = self.targets
        dtype = input._data.dtype
        coefficients = -(self._scale(grad._data.astype(dtype, copy=False)) * picked.picked_weight)
        rows = np.zeros((picked.rows.shape[0], picked.classes), dtype)
        rows[picked.rows, picked.index] = coefficients
        return (make(_unrows_array(rows, input)), None, None)

    def release(self):
        self.targets = None
        super().release()


def _nll_loss_node(input, target, weight, ignore_index, reduction, logits, picked):
    """nll_loss of (N, C) or (C,) NumPy log-probabilities ``logits`` (the rows) with one node,
    the composite's arithmetic on the arrays."""
    per_row = logits[picked.rows, picked.index]
    per_row = -per_row if picked.one_hot else -per_row * picked.picked_weight
    divisor = picked.divisor() if reduction == "mean" else None
    if reduction == "none":
        out = make(per_row.reshape(target._data.shape))
    elif reduction == "sum":
        out = make(per_row).sum()
    else:
        out = make(per_row).sum() / divisor if divisor else make(per_row).sum() * math.nan
    node = record(NllLossBackward0, (input, target, weight), out)
    if node is not None:
        node.targets, node.reduction, node.ignore_index = picked, reduction, ignore_index
        # (torch's total weight: the kept targets' weights, 0 for reduction 'none' of a batch)
        unreported = reduction == "none" and input.ndim == 2
        node.divisor = 0.0 if unreported else picked.divisor() if divisor is None else divisor
        node.save(input, target, weight)
    return out


# ---------------------------------------------------------------------------------------------
# Binary classification


@autocast_policy("fp32")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``input``; the logs are clamped
    at -100 as torch does."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({_torch_size(target)}) that is different to the "
                         f"input size ({_torch_size(input)}) is deprecated. Please ensure they "
                         "have the same size.")
    xd = input._data
    if ((xd < 0) | (xd > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is None:
        fused = _pointwise_loss(BinaryCrossEntropyBackward0, input, target, reduction, _binary_cross_entropy)
        if fused is not None:
            return fused
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid and binary cross entropy in one stable expression:
    ``(1 - t) x - (1 + (pos_weight - 1) t) logsigmoid(x)``."""
    try:
        reduction = _reduction(size_average, reduce, reduction)
        _check_reduction(reduction)
        if target.shape != input.shape:
            raise ValueError(f"Target size ({_torch_size(target)}) must be the same as input size "
                             f"({_torch_size(input)})")
        if weight is None and pos_weight is None:
            fused = _pointwise_loss(BinaryCrossEntropyWithLogitsBackward0, input, target, reduction,
                                    _bce_with_logits)
            if fused is not None:
                return fused
        log_sig = logsigmoid(input)
        if pos_weight is not None:
            loss = (1 - target) * input - ((pos_weight - 1) * target + 1) * log_sig
        else:
            loss = (1 - target) * input - log_sig
        if weight is not None:
            loss = loss * weight
        return _reduce(loss, reduction)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(binary_cross_entropy_with_logits, error, input, target, weight,
                                 size_average, reduce, reduction, pos_weight)


class BinaryCrossEntropyWithLogitsBackward0(_ElementwiseLossNode):
    """``binary_cross_entropy_with_logits`` without weights: the input's gradient
    ``(sigmoid(x) - t) * grad``, the target's ``-x * grad``."""
    __slots__ = ()
    saved_fields = {"self": 0, "target": 1, "weight": lambda node: None, "pos_weight": lambda node: None,
                    "reduction": lambda node: _REDUCTION_CODES[node.reduction]}

    def gradients(self, x, t, grad):
        return self._needed(lambda: (x.sigmoid() - t) * grad, lambda: -x * grad)


def _bce_with_logits(x, t):
    """The composite's arithmetic on arrays (``logsigmoid``'s formula)."""
    loss = (1 - t) * x
    loss -= log_sigmoid_arrays(x)
    return loss


@autocast_policy("fp32")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-y x))`` averaged over elements."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce(softplus(-target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Multi-label one-versus-all loss: per sample, the mean over classes of the binary cross
    entropy of ``sigmoid(x)`` against ``target`` in {0, 1}."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------------------------
# Distributions


@autocast_policy("fp32")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """The pointwise KL divergence ``target * (log target - input)`` for log-probabilities
    ``input`` (``target`` too with ``log_target``)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log likelihood of ``target`` under a Poisson distribution of rate ``input``
    (``exp(input)`` with ``log_input``); ``full`` adds Stirling's term."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log likelihood of ``target`` under N(input, var):
    ``0.5 (log var + (input - target)^2 / var)`` with var clamped at ``eps``."""
    from ...ops.creation import ones_like
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ones_like(input) * var
    elif (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = _clamped_in_value_only(var, eps)
    diff = input - target
    loss = (var.log() + diff * diff / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _clamped_in_value_only(t, low):
    """``t`` clamped below at ``low`` with the gradient passing unchanged (torch clamps a clone
    in place under no_grad)."""
    from ...autograd.grad_mode import no_grad
    out = t.clone()
    with no_grad():
        out._data[...] = namespace_of(out._data).maximum(out._data, low)
    return out


# ---------------------------------------------------------------------------------------------
# Margin and embedding losses


@autocast_policy("fp32")
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -y (x1 - x2) + margin)``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {_torch_size(input1)}, input2: "
                           f"{_torch_size(input2)}, target: {_torch_size(target)} ")
    return _reduce(relu(-target * (input1 - input2) + margin), reduction)


@autocast_policy("fp32")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``x`` where ``y == 1`` and ``max(0, margin - x)`` where ``y == -1``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    margin_part = where(target != 1, relu(margin - input), 0.0)
    self_part = where(target != -1, input, 0.0)
    return _reduce(margin_part + self_part, reduction)


@autocast_policy("fp32")
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where ``y == 1`` and ``max(0, cos(x1, x2) - margin)`` where
    ``y == -1``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.ndim != input2.ndim or input1.shape != input2.shape:
        raise RuntimeError(f"cosine_embedding_loss: Input1 and Input2 must have the same shape, "
                           f"but got {_torch_size(input1)} and {_torch_size(input2)}")
    if input1.ndim not in (1, 2):
        raise RuntimeError(f"cosine_embedding_loss: Expected 1-D or 2-D input, but got "
                           f"{input1.ndim}-D")
    dim = input1.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, relu(cos - margin), 0.0)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: per sample, ``sum_{j != y} max(0, margin - x[y] + x[j])^p / C``,
    scaled by ``weight[y]``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    rows = input.reshape(1, -1) if input.ndim <= 1 else input
    targets = target._data.reshape(-1)
    classes = rows.shape[1]
    if targets.shape[0] != rows.shape[0] or input.ndim > 2:
        raise RuntimeError(f"inconsistent target size, expected {rows.shape[0]} but got "
                           f"{list(target.shape)}")
    if ((targets < 0) | (targets >= classes)).any():
        raise RuntimeError("target out of range")
    xp = namespace_of(targets)
    index = make(xp.arange(rows.shape[0]))
    picked = rows[index, target.reshape(-1)].unsqueeze(1)
    hinge = relu(margin - picked + rows)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[target.reshape(-1)].unsqueeze(1)
    others = make(xp.arange(classes)[None, :] != targets[:, None])
    loss = (hinge * others).sum(1) / classes
    if input.ndim <= 1:
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: per sample, ``sum_{j in y, k not in y} max(0, 1 - (x[j] -
    x[k])) / C`` with the targets ``y`` listed until the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    rows = input.reshape(1, -1) if input.ndim <= 1 else input
    t = target._data.reshape(rows.shape)
    xp = namespace_of(t)
    classes = rows.shape[1]
    listed = xp.cumprod(t != -1, axis=1).astype(bool)
    counts = xp.zeros(rows.shape, rows._data.dtype)
    r, c = xp.nonzero(listed)
    xp.add.at(counts, (r, t[r, c]), 1)
    not_target = (counts == 0).astype(rows._data.dtype)
    pair_weight = make(counts[:, :, None] * not_target[:, None, :])
    hinge = relu(1 - rows.unsqueeze(2) + rows.unsqueeze(1))
    loss = (hinge * pair_weight).sum((1, 2)) / classes
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with the p-norm pairwise distance ``d``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")
    return triplet_margin_with_distance_loss(
        anchor, positive, negative, margin=margin, swap=swap, reduction=reduction,
        distance_function=lambda a, b: pairwise_distance(a, b, p, eps))


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """:func:`triplet_margin_loss` with any ``distance_function`` (default: pairwise
    distance)."""
    _check_reduction(reduction)
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    return _reduce(relu(margin + d_pos - d_neg), reduction)

