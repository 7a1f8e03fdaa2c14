"""The distributions and parameters the ember.distributions tests build on both libraries:
``Case.build(lib)`` makes the distribution with ``lib`` (ember or torch) from the same float64
parameter arrays, those marked ``grad`` requiring gradients."""
import dataclasses
from collections.abc import Callable

import numpy as np

_rng = np.random.default_rng(1234)


def real(*shape):
    return _rng.normal(size=shape)


def pos(*shape, low=0.5, high=3.0):
    return _rng.uniform(low, high, size=shape)


def unit(*shape, low=0.1, high=0.9):
    return _rng.uniform(low, high, size=shape)


def simplex(*shape):
    p = _rng.uniform(0.2, 1.0, size=shape)
    return p / p.sum(-1, keepdims=True)


def spd(*batch, n=3):
    a = _rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def lower_cholesky(*batch, n=3):
    return np.linalg.cholesky(spd(*batch, n=n))


@dataclasses.dataclass
class Case:
    name: str
    make: Callable            # make(D, P) with D the distributions module, P the parameter tensors
    params: dict              # name -> numpy array (or a Python number, passed as is)
    sample_check: str = "moments"   # "ks" (against torch's cdf), "moments", or "none"
    grad: tuple = None        # parameters that require grad (default: every float array)
    ints: tuple = ()          # parameters passed as integer tensors
    dtype: str = "float64"
    extra: object = None

    def build(self, lib, requires_grad=True):
        import ember
        P = {}
        for k, v in self.params.items():
            if not isinstance(v, np.ndarray):
                P[k] = v
                continue
            if k in self.ints:
                P[k] = lib.tensor(v.astype(np.int64))
                continue
            t = lib.tensor(v, dtype=getattr(lib, self.dtype))
            if requires_grad and (self.grad is None or k in self.grad):
                t.requires_grad_(True)
            P[k] = t
        D = ember.distributions if lib is ember else lib.distributions
        return self.make(D, P, lib), P

    def __repr__(self):
        return self.name


def _mixture(D, P, lib):
    return D.MixtureSameFamily(D.Categorical(probs=P["mix"]), D.Normal(P["loc"], P["scale"]))


def _transformed(D, P, lib):
    T = D.transforms
    return D.TransformedDistribution(D.Normal(P["loc"], P["scale"]),
                                     [T.ExpTransform(), T.AffineTransform(1.0, P["a"])])


CASES = [
    Case("Normal", lambda D, P, lib: D.Normal(P["loc"], P["scale"]), {"loc": real(3), "scale": pos(3)}, "ks"),
    Case("Normal_numbers", lambda D, P, lib: D.Normal(P["loc"], P["scale"]), {"loc": 0.5, "scale": 2.0}, "ks"),
    Case("Bernoulli_probs", lambda D, P, lib: D.Bernoulli(probs=P["p"]), {"p": unit(2, 3)}),
    Case("Bernoulli_logits", lambda D, P, lib: D.Bernoulli(logits=P["l"]), {"l": real(3)}),
    Case("Categorical_probs", lambda D, P, lib: D.Categorical(probs=P["p"]), {"p": simplex(2, 4)}),
    Case("Categorical_logits", lambda D, P, lib: D.Categorical(logits=P["l"]), {"l": real(4)}),
    Case("OneHotCategorical", lambda D, P, lib: D.OneHotCategorical(probs=P["p"]), {"p": simplex(2, 4)}),
    Case("OneHotCategoricalStraightThrough", lambda D, P, lib: D.OneHotCategoricalStraightThrough(logits=P["l"]),
         {"l": real(3, 4)}),
    Case("Uniform", lambda D, P, lib: D.Uniform(P["low"], P["low"] + P["width"]),
         {"low": real(3), "width": pos(3)}, "ks"),
    Case("MultivariateNormal_cov", lambda D, P, lib: D.MultivariateNormal(P["loc"], covariance_matrix=P["cov"]),
         {"loc": real(2, 3), "cov": spd(2)}),
    Case("MultivariateNormal_tril", lambda D, P, lib: D.MultivariateNormal(P["loc"], scale_tril=P["L"]),
         {"loc": real(3), "L": lower_cholesky(2)}),
    Case("MultivariateNormal_precision",
         lambda D, P, lib: D.MultivariateNormal(P["loc"], precision_matrix=P["prec"]),
         {"loc": real(2, 3), "prec": spd()}),
    Case("LowRankMultivariateNormal", lambda D, P, lib: D.LowRankMultivariateNormal(P["loc"], P["W"], P["d"]),
         {"loc": real(2, 3), "W": real(2, 3, 2), "d": pos(2, 3)}),
    Case("Beta", lambda D, P, lib: D.Beta(P["a"], P["b"]), {"a": pos(3), "b": pos(3)}),
    Case("Gamma", lambda D, P, lib: D.Gamma(P["a"], P["b"]), {"a": pos(3), "b": pos(3)}, "ks"),
    Case("Chi2", lambda D, P, lib: D.Chi2(P["df"]), {"df": pos(3, low=1.0, high=5.0)}, "ks"),
    Case("Dirichlet", lambda D, P, lib: D.Dirichlet(P["c"]), {"c": pos(2, 4)}),
    Case("Exponential", lambda D, P, lib: D.Exponential(P["rate"]), {"rate": pos(3)}, "ks"),
    Case("Laplace", lambda D, P, lib: D.Laplace(P["loc"], P["scale"]), {"loc": real(3), "scale": pos(3)}, "ks"),
    Case("Cauchy", lambda D, P, lib: D.Cauchy(P["loc"], P["scale"]), {"loc": real(3), "scale": pos(3)}, "ks"),
    Case("HalfNormal", lambda D, P, lib: D.HalfNormal(P["scale"]), {"scale": pos(3)}, "ks"),
    Case("HalfCauchy", lambda D, P, lib: D.HalfCauchy(P["scale"]), {"scale": pos(3)}, "ks"),
    Case("LogNormal", lambda D, P, lib: D.LogNormal(P["loc"], P["scale"]),
         {"loc": real(3), "scale": pos(3, high=1.0)}, "ks"),
    Case("Gumbel", lambda D, P, lib: D.Gumbel(P["loc"], P["scale"]), {"loc": real(3), "scale": pos(3)}, "ks"),
    Case("Weibull", lambda D, P, lib: D.Weibull(P["scale"], P["k"]), {"scale": pos(3), "k": pos(3)}, "ks"),
    Case("Pareto", lambda D, P, lib: D.Pareto(P["scale"], P["alpha"]), {"scale": pos(3), "alpha": pos(3)}, "ks"),
    Case("Kumaraswamy", lambda D, P, lib: D.Kumaraswamy(P["a"], P["b"]), {"a": pos(3), "b": pos(3)}, "ks"),
    Case("InverseGamma", lambda D, P, lib: D.InverseGamma(P["a"], P["b"]), {"a": pos(3), "b": pos(3)}, "ks"),
    Case("StudentT", lambda D, P, lib: D.StudentT(P["df"], P["loc"], P["scale"]),
         {"df": pos(3, low=5.0, high=9.0), "loc": real(3), "scale": pos(3)}),
    Case("FisherSnedecor", lambda D, P, lib: D.FisherSnedecor(P["d1"], P["d2"]),
         {"d1": pos(3, low=3.0, high=8.0), "d2": pos(3, low=9.0, high=14.0)}),
    Case("Binomial", lambda D, P, lib: D.Binomial(P["n"], probs=P["p"]),
         {"n": np.array([5.0, 10.0, 3.0]), "p": unit(3)}, grad=("p",)),
    Case("Binomial_logits", lambda D, P, lib: D.Binomial(6, logits=P["l"]), {"l": real(2, 3)}),
    Case("Multinomial", lambda D, P, lib: D.Multinomial(7, probs=P["p"]), {"p": simplex(2, 4)}),
    Case("NegativeBinomial", lambda D, P, lib: D.NegativeBinomial(P["n"], probs=P["p"]),
         {"n": pos(3, low=1.0, high=5.0), "p": unit(3, high=0.7)}),
    Case("Geometric", lambda D, P, lib: D.Geometric(probs=P["p"]), {"p": unit(3, low=0.2)}),
    Case("Poisson", lambda D, P, lib: D.Poisson(P["rate"]), {"rate": pos(3, high=6.0)}),
    Case("ContinuousBernoulli", lambda D, P, lib: D.ContinuousBernoulli(probs=P["p"]),
         {"p": np.array([0.2, 0.4995, 0.8])}, "ks"),
    Case("ContinuousBernoulli_logits", lambda D, P, lib: D.ContinuousBernoulli(logits=P["l"]), {"l": real(3)}, "ks"),
    Case("RelaxedBernoulli", lambda D, P, lib: D.RelaxedBernoulli(P["t"], probs=P["p"]),
         {"t": np.array(0.7), "p": unit(3)}, "none"),
    Case("RelaxedOneHotCategorical", lambda D, P, lib: D.RelaxedOneHotCategorical(P["t"], logits=P["l"]),
         {"t": np.array(0.6), "l": real(2, 3)}, "none"),
    Case("VonMises", lambda D, P, lib: D.VonMises(P["loc"], P["k"]), {"loc": real(3), "k": pos(3, high=6.0)},
         "none"),
    Case("LKJCholesky", lambda D, P, lib: D.LKJCholesky(3, P["c"]), {"c": pos(2)}, "none"),
    Case("Wishart", lambda D, P, lib: D.Wishart(P["df"], covariance_matrix=P["cov"]),
         {"df": pos(2, low=4.0, high=6.0), "cov": spd()}),
    Case("Wishart_tril", lambda D, P, lib: D.Wishart(P["df"], scale_tril=P["L"]),
         {"df": np.array(5.0), "L": lower_cholesky(2)}),
    Case("Independent", lambda D, P, lib: D.Independent(D.Normal(P["loc"], P["scale"]), 1),
         {"loc": real(2, 3), "scale": pos(2, 3)}),
    Case("TransformedDistribution", _transformed, {"loc": real(3), "scale": pos(3, high=1.0), "a": pos(3)}, "ks"),
    Case("MixtureSameFamily", _mixture, {"mix": simplex(2, 3), "loc": real(2, 3), "scale": pos(2, 3)}, "ks"),
    Case("GeneralizedPareto", lambda D, P, lib: D.GeneralizedPareto(P["loc"], P["scale"], P["c"]),
         {"loc": real(3), "scale": pos(3), "c": np.array([-0.2, 0.0, 0.25])}, "ks",
         dtype="float32"),  # torch's GeneralizedPareto refuses float64 parameters
    Case("LogisticNormal", lambda D, P, lib: D.LogisticNormal(P["loc"], P["scale"]),
         {"loc": real(2, 3), "scale": pos(2, 3, high=1.0)}, "none"),
]

BY_NAME = {c.name: c for c in CASES}
