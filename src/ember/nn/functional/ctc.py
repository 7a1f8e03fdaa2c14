"""The Connectionist Temporal Classification loss, by the forward-backward algorithm in log
space (vectorized over the batch, one step per time step)."""
from ..._tensor import Tensor
from ...ops._common import Node, make, namespace_of, record
from ...ops.ternary import where
from ...amp.policy import autocast_policy
from ...autograd._dual import jvp_by_transposition

__all__ = ["ctc_loss"]


@autocast_policy("fp32")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The Connectionist Temporal Classification loss. ``log_probs`` (T, N, C) or (T, C) are
    log-probabilities (e.g. from ``log_softmax``); ``targets`` are padded (N, S) or
    concatenated 1-d; ``reduction='mean'`` divides each loss by its target length, then
    averages over the batch."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    input_lengths = _lengths(input_lengths)
    target_lengths = _lengths(target_lengths)
    if not batched:
        input_lengths, target_lengths = input_lengths.reshape(1), target_lengths.reshape(1)
    nll = _ctc_nll(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        nll = where(nll == float("inf"), 0.0, nll)
    if reduction == "mean":
        divisor = make(namespace_of(nll._data).asarray(target_lengths, dtype=nll._data.dtype))
        return (nll / divisor.clamp(min=1)).mean()
    if reduction == "sum":
        return nll.sum()
    return nll if batched else nll.squeeze(0)


def _lengths(lengths):
    """Input or target lengths (a tensor, a sequence or an int) as an int64 array."""
    import numpy as np  # host-side index bookkeeping, not math
    if isinstance(lengths, Tensor):
        lengths = lengths.tolist()
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _padded_targets(targets, target_lengths):
    """Targets as an (N, S_max) int64 array, from padded (N, S) or concatenated 1-d form."""
    import numpy as np
    data = np.asarray(targets.tolist(), dtype=np.int64)
    max_len = int(target_lengths.max()) if target_lengths.size else 0
    if data.ndim == 2:
        if max_len > data.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {max_len} at dimension 1, "
                               f"but got size {data.shape[1]} for argument #2 'targets' (while "
                               "checking arguments for ctc_loss_allocate_outputs)")
        return data[:, :max_len].astype(np.int64)
    total = int(target_lengths.sum())
    if data.shape[0] != total:
        raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size "
                           f"{data.shape[0]} for argument #2 'targets' (while checking "
                           "arguments for ctc_loss_allocate_outputs)")
    starts = np.cumsum(target_lengths) - target_lengths
    index = starts[:, None] + np.arange(max_len)[None, :]
    inside = np.arange(max_len)[None, :] < target_lengths[:, None]
    return np.where(inside, data[np.minimum(index, max(total - 1, 0))] if total else 0, 0)


def _check_lengths(input_lengths, target_lengths, batch, time):
    if input_lengths.shape[0] != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.shape[0] != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    if batch and input_lengths.max() > time:
        raise RuntimeError(f"Expected input_lengths to have value at most {time}, but got value "
                           f"{int(input_lengths.max())} (while checking arguments for "
                           "ctc_loss_allocate_outputs)")


class _Lattice:
    """The extended label sequences (blank, l1, blank, l2, ..., blank) of a batch, and which
    of their positions exist and may be skipped into."""

    def __init__(self, xp, targets, target_lengths, input_lengths, blank):
        batch, max_len = targets.shape
        self.size = 2 * max_len + 1
        labels = xp.full((batch, self.size), blank, dtype=xp.int64)
        labels[:, 1::2] = xp.asarray(targets)
        self.labels = labels
        self.target_lengths = xp.asarray(target_lengths)
        self.input_lengths = xp.asarray(input_lengths)
        self.valid = xp.arange(self.size)[None, :] < (2 * self.target_lengths[:, None] + 1)
        skip = xp.zeros((batch, self.size), dtype=bool)
        skip[:, 2:] = (labels[:, 2:] != blank) & (labels[:, 2:] != labels[:, :-2])
        self.skip_into = skip  # s-2 -> s allowed


def _logsumexp3(xp, a, b, c):
    top = xp.maximum(xp.maximum(a, b), c)
    safe = xp.where(xp.isneginf(top), 0.0, top)
    with_exp = xp.exp(a - safe) + xp.exp(b - safe) + xp.exp(c - safe)
    with _quiet(xp):
        return safe + xp.log(with_exp)


def _quiet(xp):
    """Silence the backend's floating-point warnings (log(0) is -inf by design here)."""
    if hasattr(xp, "errstate"):
        return xp.errstate(divide="ignore", invalid="ignore")
    import contextlib
    return contextlib.nullcontext()


def _shift(xp, x, by):
    """``x`` moved ``by`` places right along the last axis, filled with -inf."""
    out = xp.full(x.shape, -xp.inf, dtype=x.dtype)
    if by < x.shape[-1]:
        out[..., by:] = x[..., :x.shape[-1] - by]
    return out


def _unshift(xp, x, by):
    """``x`` moved ``by`` places left along the last axis, filled with -inf."""
    out = xp.full(x.shape, -xp.inf, dtype=x.dtype)
    if by < x.shape[-1]:
        out[..., :x.shape[-1] - by] = x[..., by:]
    return out


def _emissions(xp, lp, lattice):
    """lp[t, n, labels[n, s]]: (T, N, 2S+1)."""
    batch = lp.shape[1]
    return lp[:, xp.arange(batch)[:, None], lattice.labels]


def _forward_variables(xp, emit, lattice):
    """alpha[t, n, s]: log-probability of the prefixes ending at lattice position s at t."""
    time = emit.shape[0]
    neg_inf = -xp.inf
    alpha = xp.full(emit.shape, neg_inf, dtype=emit.dtype)
    if time == 0:
        return alpha
    start = xp.arange(lattice.size)[None, :] < 2
    alpha[0] = xp.where(start & lattice.valid, emit[0], neg_inf)
    for t in range(1, time):
        prev = alpha[t - 1]
        skip = xp.where(lattice.skip_into, _shift(xp, prev, 2), neg_inf)
        alpha[t] = xp.where(lattice.valid, emit[t] + _logsumexp3(xp, prev, _shift(xp, prev, 1),
                                                                 skip), neg_inf)
    return alpha


def _backward_variables(xp, emit, lattice):
    """beta[t, n, s]: log-probability of the suffixes from lattice position s at t (the
    emission at t included)."""
    time = emit.shape[0]
    neg_inf = -xp.inf
    beta = xp.full(emit.shape, neg_inf, dtype=emit.dtype)
    positions = xp.arange(lattice.size)[None, :]
    last = 2 * lattice.target_lengths[:, None]
    end = (positions == last) | (positions == last - 1)
    skip_from = _unshift(xp, lattice.skip_into.astype(emit.dtype), 2) > 0
    for t in range(time - 1, -1, -1):
        final = (lattice.input_lengths == t + 1)[:, None]
        inner = (lattice.input_lengths > t + 1)[:, None]
        if t + 1 < time:
            nxt = beta[t + 1]
            skip = xp.where(skip_from, _unshift(xp, nxt, 2), neg_inf)
            recurse = emit[t] + _logsumexp3(xp, nxt, _unshift(xp, nxt, 1), skip)
        else:
            recurse = xp.full(emit[t].shape, neg_inf, dtype=emit.dtype)
        value = xp.where(final & end, emit[t], xp.where(inner, recurse, neg_inf))
        beta[t] = xp.where(lattice.valid, value, neg_inf)
    return beta


def _negative_log_likelihood(xp, alpha, lattice):
    """-log p(target | input) from the forward variables at each sequence's last step."""
    batch = alpha.shape[1]
    rows = xp.arange(batch)
    last_t = xp.maximum(lattice.input_lengths - 1, 0)
    final = alpha[last_t, rows]  # (N, 2S+1)
    last = 2 * lattice.target_lengths
    end_blank = final[rows, last]
    end_label = xp.where(lattice.target_lengths > 0, final[rows, xp.maximum(last - 1, 0)], -xp.inf)
    top = xp.maximum(end_blank, end_label)
    safe = xp.where(xp.isneginf(top), 0.0, top)
    with _quiet(xp):
        log_p = safe + xp.log(xp.exp(end_blank - safe) + xp.exp(end_label - safe))
    log_p = xp.where(lattice.input_lengths > 0, log_p,
                     xp.where(lattice.target_lengths == 0, 0.0, -xp.inf))
    return -log_p


class CtcLossBackward0(Node):
    """Gradient of the per-sequence CTC loss w.r.t. the log-probabilities, as torch gives it:
    ``exp(log_probs) - occupancy`` (the gradient through a preceding log_softmax)."""

    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        log_probs, nll_t, alpha_t = self.saved_tensors
        lp, alpha = log_probs._data, alpha_t._data
        xp = namespace_of(lp)
        lattice = self.lattice
        emit = _emissions(xp, lp, lattice)
        beta = _backward_variables(xp, emit, lattice)
        nll = nll_t._data
        with _quiet(xp):
            posterior = xp.exp(xp.where(xp.isneginf(alpha) | xp.isneginf(beta), -xp.inf,
                                        alpha + beta - emit) + nll[None, :, None])
            onehot = (lattice.labels[:, :, None] == xp.arange(lp.shape[2])).astype(lp.dtype)
            occupancy = xp.einsum("tns,nsc->tnc", posterior, onehot)
            result = xp.exp(lp) - occupancy
        infinite = xp.isinf(nll)[None, :, None]
        result = xp.where(infinite, 0.0 if self.zero_infinity else xp.nan, result)
        inside = xp.arange(lp.shape[0])[:, None] < lattice.input_lengths[None, :]
        result = xp.where(inside[:, :, None], result, 0.0).astype(lp.dtype)
        return (make(result) * grad.reshape(1, -1, 1),)


def _ctc_nll(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """The per-sequence negative log likelihood (N,), recording CtcLossBackward0."""
    lp = log_probs._data
    xp = namespace_of(lp)
    time, batch, classes = lp.shape
    _check_lengths(input_lengths, target_lengths, batch, time)
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    padded = _padded_targets(targets, target_lengths)
    lattice = _Lattice(xp, padded, target_lengths, input_lengths, blank)
    emit = _emissions(xp, lp, lattice)
    alpha = _forward_variables(xp, emit, lattice)
    nll = make(_negative_log_likelihood(xp, alpha, lattice).astype(lp.dtype))
    node = record(CtcLossBackward0, (log_probs,), nll)
    if node is not None:
        node.save(log_probs, nll.detach(), make(alpha))
        node.lattice, node.zero_infinity = lattice, zero_infinity
    return nll
