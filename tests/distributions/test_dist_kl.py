"""kl_divergence against torch for every pair of types torch registers (values and gradients
of both distributions' parameters), the dispatch rules of register_kl, and the errors."""
import numpy as np
import pytest
import torch

import ember

_rng = np.random.default_rng(7)


def _arr(*values):
    return np.array(values, dtype=np.float64)


# Two parameter sets per type (p and q), batch shape (3,); values inside and outside the
# other's support where that matters (Uniform, Pareto, Beta's unit interval).
PARAMS = {
    "Bernoulli": [dict(probs=_arr(0.2, 0.5, 0.9)), dict(probs=_arr(0.6, 0.3, 0.1))],
    "Beta": [dict(concentration1=_arr(0.7, 2.0, 3.0), concentration0=_arr(1.5, 0.8, 2.5)),
             dict(concentration1=_arr(1.2, 1.0, 4.0), concentration0=_arr(2.0, 3.0, 0.6))],
    "Binomial": [dict(total_count=_arr(5, 8, 8), probs=_arr(0.3, 0.5, 0.7)),
                 dict(total_count=_arr(5, 8, 6), probs=_arr(0.4, 0.2, 0.6))],
    "Categorical": [dict(probs=_arr(*[0.1, 0.2, 0.3, 0.4] * 3).reshape(3, 4)),
                    dict(logits=_arr(*range(12)).reshape(3, 4) / 5)],
    "Cauchy": [dict(loc=_arr(0.0, 1.0, -1.0), scale=_arr(1.0, 0.5, 2.0)),
               dict(loc=_arr(0.5, -1.0, 0.0), scale=_arr(2.0, 1.5, 0.3))],
    "ContinuousBernoulli": [dict(probs=_arr(0.2, 0.4999, 0.8)), dict(probs=_arr(0.7, 0.3, 0.5001))],
    "Dirichlet": [dict(concentration=_arr(*np.linspace(0.5, 3.0, 12)).reshape(3, 4)),
                  dict(concentration=_arr(*np.linspace(2.0, 0.7, 12)).reshape(3, 4))],
    "Exponential": [dict(rate=_arr(0.5, 1.0, 2.0)), dict(rate=_arr(1.5, 0.7, 3.0))],
    "Gamma": [dict(concentration=_arr(0.8, 2.0, 3.5), rate=_arr(1.0, 0.5, 2.0)),
              dict(concentration=_arr(1.5, 1.2, 0.9), rate=_arr(2.0, 1.0, 0.7))],
    "Geometric": [dict(probs=_arr(0.2, 0.5, 0.8)), dict(probs=_arr(0.6, 0.3, 0.4))],
    "Gumbel": [dict(loc=_arr(0.0, 1.0, -1.0), scale=_arr(1.0, 0.5, 2.0)),
               dict(loc=_arr(0.5, -1.0, 0.0), scale=_arr(2.0, 1.5, 0.7))],
    "HalfNormal": [dict(scale=_arr(1.0, 0.5, 2.0)), dict(scale=_arr(2.0, 1.5, 0.7))],
    "Laplace": [dict(loc=_arr(0.0, 1.0, -1.0), scale=_arr(1.0, 0.5, 2.0)),
                dict(loc=_arr(0.5, -1.0, 0.0), scale=_arr(2.0, 1.5, 0.7))],
    "Normal": [dict(loc=_arr(0.0, 1.0, -1.0), scale=_arr(1.0, 0.5, 2.0)),
               dict(loc=_arr(0.5, -1.0, 0.0), scale=_arr(2.0, 1.5, 0.7))],
    "OneHotCategorical": [dict(probs=_arr(*[0.1, 0.2, 0.3, 0.4] * 3).reshape(3, 4)),
                          dict(logits=_arr(*range(12)).reshape(3, 4) / 5)],
    "Pareto": [dict(scale=_arr(1.0, 0.5, 2.0), alpha=_arr(3.0, 2.5, 1.5)),
               dict(scale=_arr(0.8, 1.0, 1.0), alpha=_arr(2.0, 1.5, 3.0))],
    "Poisson": [dict(rate=_arr(0.5, 1.0, 4.0)), dict(rate=_arr(1.5, 0.7, 3.0))],
    "Uniform": [dict(low=_arr(0.1, -1.0, 0.2), high=_arr(0.6, 2.0, 0.9)),
                dict(low=_arr(0.0, 0.5, 0.1), high=_arr(1.0, 1.0, 0.95))],
    "MultivariateNormal": [
        dict(loc=_arr(*range(6)).reshape(3, 2) / 4, scale_tril=_arr(1.0, 0.0, 0.3, 0.8).reshape(2, 2)),
        dict(loc=_arr(*range(6, 0, -1)).reshape(3, 2) / 5, covariance_matrix=_arr(2.0, 0.4, 0.4, 1.0).reshape(2, 2))],
    "LowRankMultivariateNormal": [
        dict(loc=_arr(*range(6)).reshape(3, 2) / 4, cov_factor=_arr(0.5, -0.2, 0.3, 0.8).reshape(2, 2),
             cov_diag=_arr(0.5, 1.5)),
        dict(loc=_arr(*range(6, 0, -1)).reshape(3, 2) / 5, cov_factor=_arr(1.0, 0.2).reshape(2, 1),
             cov_diag=_arr(1.0, 0.7))],
}


def _make(lib, name, which):
    D = lib.distributions
    if name in ("Independent", "TransformedDistribution", "ExponentialFamily"):
        params = {k: lib.tensor(v).requires_grad_() for k, v in PARAMS["Normal"][which].items()}
        if name == "Independent":
            return D.Independent(D.Normal(params["loc"], params["scale"]), 1), params
        if name == "TransformedDistribution":
            return D.TransformedDistribution(D.Normal(params["loc"], params["scale"]),
                                             [D.transforms.ExpTransform()]), params
        # a family with no closed form of its own: the Bregman divergence
        rate = lib.tensor(PARAMS["Poisson"][which]["rate"]).requires_grad_()
        return D.Wishart(rate + 2.5, covariance_matrix=lib.eye(2) * (which + 1)), {"rate": rate}
    params = {}
    for k, v in PARAMS[name][which].items():
        t = lib.tensor(v)
        if k != "total_count":
            t.requires_grad_()
        params[k] = t
    return getattr(D, name)(**params), params


PAIRS = sorted({(p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY})


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_kl_matches_torch(pair):
    p_name, q_name = pair
    tp, tpp = _make(torch, p_name, 0)
    tq, tqp = _make(torch, q_name, 1)
    ep, epp = _make(ember, p_name, 0)
    eq, eqp = _make(ember, q_name, 1)
    try:
        t = torch.distributions.kl_divergence(tp, tq)
    except NotImplementedError as err:
        with pytest.raises(NotImplementedError, match=str(err) or None):
            ember.distributions.kl_divergence(ep, eq)
        return
    e = ember.distributions.kl_divergence(ep, eq)
    tn, en = t.detach().numpy(), e.detach().numpy()
    assert en.shape == tn.shape
    np.testing.assert_allclose(en, tn, rtol=1e-6, atol=1e-9)
    finite_t = torch.isfinite(t).detach()
    finite_e = ember.tensor(finite_t.numpy())
    t_loss = torch.where(finite_t, t, 0.0).sum()
    e_loss = ember.where(finite_e, e, 0.0).sum()
    names = list(tpp) + list(tqp)
    t_params = [v for v in list(tpp.values()) + list(tqp.values())]
    e_params = [v for v in list(epp.values()) + list(eqp.values())]
    keep = [i for i, v in enumerate(t_params) if v.requires_grad]
    if not t_loss.requires_grad:
        return
    t_grads = torch.autograd.grad(t_loss, [t_params[i] for i in keep], allow_unused=True)
    e_grads = ember.autograd.grad(e_loss, [e_params[i] for i in keep], allow_unused=True)
    for i, tg, eg in zip(keep, t_grads, e_grads):
        if tg is None or not torch.any(tg != 0):
            assert eg is None or not np.any(eg.numpy()), names[i]
        else:
            np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-5, atol=1e-9, err_msg=names[i])


def test_every_torch_pair_is_registered():
    mine = {(p.__name__, q.__name__) for p, q in ember.distributions.kl._KL_REGISTRY}
    assert mine == set(PAIRS)


def test_missing_pair_and_cross_family_errors_are_torchs():
    for lib in (torch, ember):
        D = lib.distributions
        with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type "
                                                      "VonMises and q type Normal"):
            D.kl_divergence(D.VonMises(lib.zeros(1), lib.ones(1)), D.Normal(lib.zeros(1), lib.ones(1)))
        with pytest.raises(NotImplementedError, match="cross KL-divergence between different exponential"):
            D.kl_divergence(D.Poisson(lib.ones(1)), D.Wishart(lib.tensor(3.0), covariance_matrix=lib.eye(2)))


def test_register_kl_dispatches_to_the_most_specific_pair():
    D = ember.distributions

    class MyNormal(D.Normal):
        pass

    class MyOtherNormal(D.Normal):
        pass

    p, q = MyNormal(ember.zeros(1), ember.ones(1)), MyOtherNormal(ember.ones(1), ember.ones(1))
    before = D.kl_divergence(p, q)
    assert float(before) == pytest.approx(0.5)
    try:
        @D.register_kl(MyNormal, D.Normal)
        def _mine(p, q):
            return ember.full(p.batch_shape, 42.0)

        assert float(D.kl_divergence(p, q)) == 42.0
        assert float(D.kl_divergence(q, p)) == pytest.approx(0.5)

        @D.register_kl(D.Normal, MyOtherNormal)
        def _other(p, q):
            return ember.full(p.batch_shape, 7.0)

        with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence"):
            D.kl_divergence(p, q)
    finally:
        D.kl._KL_REGISTRY.pop((MyNormal, D.Normal), None)
        D.kl._KL_REGISTRY.pop((D.Normal, MyOtherNormal), None)
        D.kl._KL_MEMOIZE.clear()
