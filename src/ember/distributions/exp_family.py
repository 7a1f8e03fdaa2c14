"""``ExponentialFamily``: distributions with density ``exp(<t(x), theta> - F(theta) + k(x))``,
whose entropy follows from the log normalizer ``F`` by a Bregman divergence."""
import ember
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions. Subclasses give ``_natural_params``,
    ``_log_normalizer`` and ``_mean_carrier_measure`` (E[k(x)]); the entropy is then
    ``F(theta) - <theta, grad F(theta)> - E[k(x)]``."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = ember.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
