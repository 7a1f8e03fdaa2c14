"""Samplers behind ``ember.distributions``: ``_standard_gamma`` (with its reparameterised
gradient ``_standard_gamma_grad``), ``_sample_dirichlet``, ``_dirichlet_grad``, ``binomial``
and ``_dirichlet_rsample`` (a Dirichlet sample whose gradient flows to its concentration, the
op behind torch's ``_Dirichlet`` function).

The samples are drawn on the host by the generator's stream (not torch's numbers, torch's
distributions); the gradients are torch's approximations (``_backend/gamma_gradients.py``).
"""
import numpy as np

from .._backend import gamma_gradients
from ..autograd.graph import Node
from ._common import make, record, record_not_differentiable, Tensor
from .creation import _place
from .random import _check_float_input, _rng

__all__ = ["binomial", "_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet",
           "_dirichlet_grad"]


def _host(t):
    return t.cpu()._data


def _like(arr, ref):
    return make(_place(np.ascontiguousarray(arr.astype(ref._data.dtype, copy=False)), ref.device))


def _gamma_array(rng, alpha):
    """Gamma(alpha, 1) samples, kept at least the dtype's smallest normal number."""
    with np.errstate(all="ignore"):
        sample = rng.standard_gamma(alpha.astype(np.float64))
    return np.maximum(sample, np.finfo(alpha.dtype if alpha.dtype.kind == "f" else np.float32).tiny)


class StandardGammaBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        alpha, result = self.saved_tensors
        return (grad * _standard_gamma_grad(alpha, result),)


def _standard_gamma(input, generator=None):
    """Samples of Gamma(``input``, 1); the gradient with respect to ``input`` is the implicit
    reparameterisation (``_standard_gamma_grad``)."""
    _check_float_input(input, "gamma_cpu")
    out = _like(_gamma_array(_rng(generator), _host(input)), input)
    node = record(StandardGammaBackward0, (input,), out)
    if node is not None:
        node.save(input, out)
    return out


def _standard_gamma_grad(input, output):
    """d output / d input for samples ``output`` of Gamma(``input``, 1)."""
    grad = gamma_gradients.standard_gamma_grad(_host(input), _host(output))
    out = _like(grad, input)
    return record_not_differentiable((input, output), out,
                                     "the derivative for '_standard_gamma_grad' is not implemented.")


def _dirichlet_array(rng, alpha):
    gamma = _gamma_array(rng, alpha)
    sample = gamma / gamma.sum(-1, keepdims=True)
    tiny = np.finfo(alpha.dtype).tiny
    return np.clip(sample, tiny, 1 - np.finfo(alpha.dtype).eps)


def _sample_dirichlet(input, generator=None):
    """Samples of Dirichlet(``input``) along the last dimension (no gradient: torch's)."""
    _check_float_input(input, "dirichlet")
    out = _like(_dirichlet_array(_rng(generator), _host(input)), input)
    return record_not_differentiable((input,), out,
                                     "the derivative for '_sample_dirichlet' is not implemented.")


def _dirichlet_grad(x, alpha, total):
    """The reparameterised gradient of Beta(alpha, total - alpha) samples ``x`` (scaled as
    torch's ``_dirichlet_grad``)."""
    grad = gamma_gradients.dirichlet_grad(_host(x), _host(alpha), _host(total))
    out = _like(grad, x)
    return record_not_differentiable((x, alpha, total), out,
                                     "the derivative for '_dirichlet_grad' is not implemented.")


class _DirichletBackward(Node):
    __slots__ = ()

    def backward(self, grad):
        x, concentration = self.saved_tensors
        total = concentration.sum(-1, True).expand_as(concentration)
        dx = _dirichlet_grad(x, concentration, total)
        return (dx * (grad - (x * grad).sum(-1, True)),)


def _dirichlet_rsample(concentration, generator=None):
    """A Dirichlet sample whose gradient flows to ``concentration`` (implicit
    reparameterisation through Beta marginals)."""
    _check_float_input(concentration, "dirichlet")
    out = _like(_dirichlet_array(_rng(generator), _host(concentration)), concentration)
    node = record(_DirichletBackward, (concentration,), out)
    if node is not None:
        node.save(out, concentration)
    return out


def binomial(count, prob, generator=None):
    """Samples of Binomial(``count``, ``prob``), elementwise (broadcast), in ``prob``'s dtype."""
    if not isinstance(count, Tensor) or not isinstance(prob, Tensor):
        raise TypeError("binomial(): argument 'count' and 'prob' must be Tensor")
    _check_float_input(prob, "binomial_cpu")
    n, p = _host(count), _host(prob)
    if n.shape != p.shape:
        n, p = np.broadcast_arrays(n, p)
    draws = _rng(generator).binomial(n.astype(np.int64), np.clip(p, 0, 1).astype(np.float64))
    out = _like(draws, prob)
    return record_not_differentiable((count, prob), out,
                                     "the derivative for 'binomial' is not implemented.")
