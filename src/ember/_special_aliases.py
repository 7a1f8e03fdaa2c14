"""torch's top-level names and Tensor methods for functions of :mod:`ember.special`
(``torch.sinc``, ``torch.i0``, ``torch.polygamma``, ``torch.mvlgamma``), with their in-place
forms."""
from . import special
from .ops._common import apply_inplace, method
from .special._binary import igamma, igammac

method("igamma")(igamma)
method("igammac")(igammac)


@method()
def igamma_(self, other):
    """In-place :func:`igamma`."""
    return apply_inplace(self, igamma, other)


@method()
def igammac_(self, other):
    """In-place :func:`igammac`."""
    return apply_inplace(self, igammac, other)

__all__ = ["i0", "i0_", "igamma", "igammac", "mvlgamma", "polygamma", "sinc", "sinc_"]

sinc = special.sinc
i0 = special.i0


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of the digamma function (:func:`ember.special.polygamma`)."""
    return special.polygamma(n, input) if out is None else special.polygamma(n, input, out=out)


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``
    (:func:`ember.special.multigammaln`)."""
    return special.multigammaln(input, p, out=out)


@method()
def sinc_(input):
    """In-place :func:`sinc`."""
    return apply_inplace(input, sinc)


@method()
def i0_(input):
    """In-place :func:`i0`."""
    return apply_inplace(input, i0)


@method("polygamma")
def _polygamma_method(self, n):
    return polygamma(n, self)


@method()
def polygamma_(self, n):
    """In-place :func:`polygamma`."""
    return apply_inplace(self, _polygamma_method, n)


@method("mvlgamma")
def _mvlgamma_method(self, p):
    return mvlgamma(self, p)


@method()
def mvlgamma_(self, p):
    """In-place :func:`mvlgamma`."""
    return apply_inplace(self, mvlgamma, p)


method("sinc")(sinc)
method("i0")(i0)
