"""Helpers shared by the distributions: broadcasting parameters, converting between
probabilities and logits, cached properties and triangular-matrix packing."""
import numbers
from functools import update_wrapper

import ember

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values):
    """Broadcasts tensors and numbers to one shape: numbers become tensors of the first
    tensor's dtype and device (the default dtype when all are numbers)."""
    if not all(isinstance(v, (ember.Tensor, numbers.Number)) or hasattr(v, "__torch_function__")
               for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, ember.Tensor) for v in values):
        options = {"dtype": ember.get_default_dtype()}
        for value in values:
            if isinstance(value, ember.Tensor):
                options = {"dtype": value.dtype, "device": value.device}
                break
        values = [v if isinstance(v, ember.Tensor) else ember.tensor(v, **options) for v in values]
    return ember.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return ember.normal(ember.zeros(shape, dtype=dtype, device=device),
                        ember.ones(shape, dtype=dtype, device=device))


def _sum_rightmost(value, dim):
    """Sums the rightmost ``dim`` dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for binary (Bernoulli) logits, softmax over the last
    dimension for categorical ones."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities into the open interval (0, 1) by the dtype's epsilon."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities: log-odds for binary ones, log-probabilities otherwise."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(ps_clamped) - ember.log1p(-ps_clamped)
    return ember.log(ps_clamped)


class lazy_property:
    """A property computed on first access and then stored on the instance (a cached value
    that ``expand`` can copy). Accessed on the class, it returns a placeholder that gives the
    wrapped function's docstring."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal ``diag``) of a batch of square matrices, row by row."""
    n = mat.shape[-1]
    if mat.shape[-2] != n:
        raise ValueError("Input must be a square matrix")
    rows, cols = ember.tril_indices(n, n, offset=diag, device=mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """The batch of lower-triangular matrices whose lower triangle (from diagonal ``diag``) is
    ``vec``, filled row by row."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))
         ** 0.5) / 2
    eps = ember.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed "
                         "as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    rows, cols = ember.tril_indices(n, n, offset=diag, device=vec.device)
    mat[..., rows, cols] = vec
    return mat
