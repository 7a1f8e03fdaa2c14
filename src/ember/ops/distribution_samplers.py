"""Samplers behind ``ember.distributions``: ``_standard_gamma`` (with its reparameterised
gradient ``_standard_gamma_grad``), ``_sample_dirichlet``, ``_dirichlet_grad``, ``binomial``
and ``_dirichlet_rsample`` (a Dirichlet sample whose gradient flows to its concentration, the
op behind torch's ``_Dirichlet`` function).

The samples are drawn on the host by the generator's stream (not torch's numbers, torch's
distributions), as ``ops/random.py`` draws; the gradients are torch's approximations
(``_backend/gamma_gradients.py``), computed in the tensors' own array namespace.
"""
import numpy as np

from .._backend import gamma_gradients
from ..autograd.graph import Node
from ._common import _type_word, make, namespace_of, record, record_not_differentiable, Tensor
from .creation import _place
from .random import _rng
from ..autograd._dual import jvp_by_transposition
from ..special._common import on_special_loops
from . import _compiled_functions

__all__ = ["binomial", "_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet",
           "_dirichlet_grad"]


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check_dtype(t, kernel):
    """torch's CPU samplers and gradients take float32 and float64 only."""
    if t._data.dtype not in _FLOATS:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_word(t._data.dtype)}\'')


def _check_same_dtype(expected, *others):
    for t in others:
        if t._data.dtype != expected._data.dtype:
            raise RuntimeError(f"Found dtype {_type_word(t._data.dtype)} but expected "
                               f"{_type_word(expected._data.dtype)}")


def _host(t):
    return t.cpu()._data


def _like(arr, ref):
    return make(_place(np.ascontiguousarray(arr.astype(ref._data.dtype, copy=False)), ref.device))


def _gamma_array(rng, alpha):
    """Gamma(alpha, 1) samples in ``alpha``'s dtype, kept at least its smallest normal number
    (which is also what a shape that is not positive, or NaN, draws)."""
    with np.errstate(invalid="ignore"):
        shape = np.where(alpha > 0, alpha, 0).astype(np.float64)
    sample = rng.standard_gamma(shape).astype(alpha.dtype)
    return np.maximum(sample, np.finfo(alpha.dtype).tiny)


class StandardGammaBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        alpha, result = self.saved_tensors
        return (grad * _standard_gamma_grad(alpha, result),)


def _standard_gamma(input, generator=None):
    """Samples of Gamma(``input``, 1); the gradient with respect to ``input`` is the implicit
    reparameterisation (``_standard_gamma_grad``)."""
    _check_dtype(input, "gamma_cpu")
    out = _like(_gamma_array(_rng(generator), _host(input)), input)
    node = record(StandardGammaBackward0, (input,), out)
    if node is not None:
        node.save(input, out)
    return out


@on_special_loops("tensors", ("standard_gamma_grad_two", "standard_gamma_grad_two"))
def _standard_gamma_grad(input, output):
    """d output / d input for samples ``output`` of Gamma(``input``, 1)."""
    _check_same_dtype(input, output)
    _check_dtype(input, "_standard_gamma_grad_cpu")
    grad = gamma_gradients.standard_gamma_grad(namespace_of(input._data), input._data, output._data)
    out = make(grad.astype(input._data.dtype, copy=False))
    return record_not_differentiable((input, output), out,
                                     "the derivative for '_standard_gamma_grad' is not implemented.")


def _dirichlet_array(rng, alpha):
    """Dirichlet samples: gamma draws in float64 (at least its smallest normal number), each
    normalised by its row's sum, rounded to ``alpha``'s dtype and kept within [its smallest
    normal number, the largest number below 1], as torch's sampler does."""
    with np.errstate(invalid="ignore"):
        shape = np.where(alpha > 0, alpha, 0).astype(np.float64)
    gamma = np.maximum(rng.standard_gamma(shape), np.finfo(np.float64).tiny)
    sample = (gamma / gamma.sum(-1, keepdims=True)).astype(alpha.dtype)
    one = alpha.dtype.type(1)
    return np.clip(sample, np.finfo(alpha.dtype).tiny, np.nextafter(one, alpha.dtype.type(0)))


def _sample_dirichlet(input, generator=None):
    """Samples of Dirichlet(``input``) along the last dimension (no gradient: torch's)."""
    _check_dtype(input, "dirichlet")
    out = _like(_dirichlet_array(_rng(generator), _host(input)), input)
    return record_not_differentiable((input,), out,
                                     "derivative for aten::_sample_dirichlet is not implemented")


def _dirichlet_grad(x, alpha, total):
    """The reparameterised gradient of Beta(alpha, total - alpha) samples ``x`` (scaled as
    torch's ``_dirichlet_grad``)."""
    return _dirichlet_grad_entry[0](x, alpha, total)


def _python_dirichlet_grad(x, alpha, total):
    """``_dirichlet_grad`` in every case its compiled function (``_compiled_special``) leaves to Python."""
    _check_same_dtype(x, alpha, total)
    _check_dtype(x, "_dirichlet_grad_cpu")
    grad = gamma_gradients.dirichlet_grad(namespace_of(x._data), x._data, alpha._data, total._data)
    out = make(grad.astype(x._data.dtype, copy=False))
    return record_not_differentiable((x, alpha, total), out,
                                     "derivative for aten::_dirichlet_grad is not implemented")


def _dirichlet_grad_loops():
    from .._backend import special_loops
    return special_loops.address("dirichlet_grad_three"), None   # (one loop for both float dtypes)


_dirichlet_grad_entry = _compiled_functions.register(_python_dirichlet_grad, None, kind="special_three",
                                                     addresses=_dirichlet_grad_loops)


class _DirichletBackward(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, concentration = self.saved_tensors
        total = concentration.sum(-1, True).expand_as(concentration)
        dx = _dirichlet_grad(x, concentration, total)
        return (dx * (grad - (x * grad).sum(-1, True)),)


def _dirichlet_rsample(concentration, generator=None):
    """A Dirichlet sample whose gradient flows to ``concentration`` (implicit
    reparameterisation through Beta marginals)."""
    _check_dtype(concentration, "dirichlet")
    out = _like(_dirichlet_array(_rng(generator), _host(concentration)), concentration)
    node = record(_DirichletBackward, (concentration,), out)
    if node is not None:
        node.save(out, concentration)
    return out


def binomial(count, prob, generator=None):
    """Samples of Binomial(``count``, ``prob``), elementwise (broadcast), in ``count``'s dtype
    (a count below 0 draws 0; a probability is taken within [0, 1])."""
    for t, name in ((count, "count"), (prob, "prob")):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if count._data.dtype.kind in "biu":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_type_word(count._data.dtype)}")
    _check_dtype(count, "binomial_cpu")
    _check_same_dtype(count, prob)
    n, p = _host(count), _host(prob)
    if n.shape != p.shape:
        n, p = np.broadcast_arrays(n, p)
    with np.errstate(invalid="ignore"):
        trials = np.maximum(np.nan_to_num(n), 0).astype(np.int64)
        success = np.clip(np.nan_to_num(p), 0, 1).astype(np.float64)
    draws = _rng(generator).binomial(trials, success)
    out = _like(draws, count)
    return record_not_differentiable((count, prob), out,
                                     "derivative for aten::binomial is not implemented")
