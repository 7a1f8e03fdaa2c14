"""Sampling: the sampler ops against torch (shapes, dtypes, errors, edge values), the gradients
of rsample against torch's formulas on the same samples, and the distribution of samples (a
Kolmogorov-Smirnov statistic against torch's cdf, or moments against torch's, with bounds
from the sample size; fixed seeds keep the tests deterministic)."""
import math

import numpy as np
import pytest
import torch

import ember
from _dist_cases import CASES, BY_NAME

D = ember.distributions


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, ember.Tensor) else t.detach().numpy()


# -- the sampler ops ----------------------------------------------------------------------------

SAMPLERS = {
    "_standard_gamma": lambda lib, a: lib._standard_gamma(a),
    "_sample_dirichlet": lambda lib, a: lib._sample_dirichlet(a),
    "binomial": lambda lib, a: lib.binomial(a * 3, a / 4),
    "poisson": lambda lib, a: lib.poisson(a),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_sampler_ops_shapes_dtypes_and_refusals(name, dtype):
    fn = SAMPLERS[name]
    arrays = {lib: lib.ones(2, 3, dtype=getattr(lib, dtype)) + 1 for lib in (torch, ember)}
    try:
        t = fn(torch, arrays[torch])
    except Exception as err:
        with pytest.raises(type(err), match=str(err).replace("(", r"\(").replace(")", r"\)")):
            fn(ember, arrays[ember])
        return
    e = fn(ember, arrays[ember])
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def test_sampler_ops_mismatched_dtypes_are_refused_as_torch():
    for make in (lambda lib: lib._standard_gamma_grad(lib.ones(3), lib.ones(3, dtype=lib.float64)),
                 lambda lib: lib.binomial(lib.ones(3, dtype=lib.float64), lib.ones(3) / 2),
                 lambda lib: lib._dirichlet_grad(lib.ones(3) / 2, lib.ones(3, dtype=lib.float64), lib.ones(3))):
        with pytest.raises(RuntimeError) as t_err:
            make(torch)
        with pytest.raises(RuntimeError, match=str(t_err.value)):
            make(ember)


def test_sampler_edge_values_are_torchs():
    tiny = np.finfo(np.float32).tiny
    g = ember._standard_gamma(ember.tensor([-1.0, 0.0, math.nan, 2.0]))
    assert _np(g)[:3].tolist() == [tiny] * 3 and _np(g)[3] > 0
    d = ember._sample_dirichlet(ember.tensor([[-1.0, 1.0], [0.0, 0.0]]))
    np.testing.assert_allclose(_np(d), _np(torch._sample_dirichlet(torch.tensor([[-1.0, 1.0], [0.0, 0.0]]))))
    b = ember.binomial(ember.tensor([-1.0, 2.0, 4.0]), ember.tensor([0.5, 1.5, 0.0]))
    expected = torch.binomial(torch.tensor([-1.0, 2.0, 4.0]), torch.tensor([0.5, 1.5, 0.0]))
    assert _np(b).tolist() == expected.tolist()


def test_sampler_graph_nodes_are_torchs():
    for lib in (torch, ember):
        a = lib.ones(3, requires_grad=True) * 2
        assert type(lib._standard_gamma(a).grad_fn).__name__ == "StandardGammaBackward0"
        assert type(lib._sample_dirichlet(a).grad_fn).__name__ == "NotImplemented"
        assert type(lib.binomial(a, a / 4).grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::_sample_dirichlet is not implemented"):
            lib._sample_dirichlet(a).sum().backward()
        x = lib._standard_gamma(a)
        with pytest.raises(RuntimeError, match="the derivative for '_standard_gamma_grad' is not implemented."):
            lib._standard_gamma_grad(a, x).sum().backward()


def test_standard_gamma_gradient_is_the_implicit_one():
    alpha = ember.tensor([0.3, 1.0, 4.0, 12.0], dtype=ember.float64, requires_grad=True)
    x = ember._standard_gamma(alpha)
    (g,) = ember.autograd.grad(x.sum(), alpha)
    expected = torch._standard_gamma_grad(torch.tensor(_np(alpha)), torch.tensor(_np(x)))
    np.testing.assert_allclose(_np(g), expected.numpy(), rtol=1e-12)


def _ks(samples, cdf):
    """The Kolmogorov-Smirnov statistic of the 1-D ``samples`` against ``cdf`` (a function)."""
    s = np.sort(samples)
    n = len(s)
    f = cdf(s)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def _ks_bound(n):
    return 2.0 / math.sqrt(n)  # rejected by chance with probability about 5e-4


def test_sampler_distributions():
    ember.manual_seed(0)
    n = 4000
    alpha = [0.3, 1.0, 5.0]
    g = _np(ember._standard_gamma(ember.tensor(alpha, dtype=ember.float64).expand(n, 3)))
    for j, a in enumerate(alpha):
        def cdf(s, a=a):
            return torch.special.gammainc(torch.tensor(a, dtype=torch.float64), torch.tensor(s)).numpy()
        assert _ks(g[:, j], cdf) < _ks_bound(n)
    c = ember.tensor([0.5, 2.0, 3.0], dtype=ember.float64)
    d = _np(ember._sample_dirichlet(c.expand(n, 3)))
    mean, var = _np(c / c.sum()), _np(c * (c.sum() - c) / (c.sum() ** 2 * (c.sum() + 1)))
    assert np.all(np.abs(d.mean(0) - mean) < 5 * np.sqrt(var / n))
    counts, probs = np.array([3.0, 10.0, 40.0]), np.array([0.2, 0.5, 0.9])
    b = _np(ember.binomial(ember.tensor(np.broadcast_to(counts, (n, 3)).copy()), ember.tensor(
        np.broadcast_to(probs, (n, 3)).copy())))
    assert np.all(np.abs(b.mean(0) - counts * probs) < 5 * np.sqrt(counts * probs * (1 - probs) / n))


# -- rsample gradients against torch on the same samples ---------------------------------------

# Univariate families whose torch cdf is differentiable in these parameters: a sample x drawn by
# any monotone reparameterisation has dx/dtheta = -(dF/dtheta)(x) / f(x).
IMPLICIT = {
    "Normal": None, "Laplace": None, "Cauchy": None, "Uniform": None, "Exponential": None,
    "LogNormal": None, "HalfNormal": None, "HalfCauchy": None, "Gumbel": None, "Weibull": None,
    "Pareto": None, "Kumaraswamy": None, "ContinuousBernoulli": None, "ContinuousBernoulli_logits": None,
    "TransformedDistribution": None, "Gamma": ("b",), "InverseGamma": ("b",), "GeneralizedPareto": None,
}


@pytest.mark.parametrize("name", list(IMPLICIT))
def test_rsample_gradient_is_the_implicit_reparameterisation(name):
    case = BY_NAME[name]
    ember.manual_seed(1)
    ed, ep = case.build(ember)
    names = [k for k, v in ep.items() if isinstance(v, ember.Tensor) and v.requires_grad
             and (IMPLICIT[name] is None or k in IMPLICIT[name])]
    x = ed.rsample()
    e_grads = ember.autograd.grad(x.sum(), [ep[k] for k in names])
    td, tp = case.build(torch)
    xt = torch.tensor(_np(x))
    cdf_grads = torch.autograd.grad(td.cdf(xt).sum(), [tp[k] for k in names])
    density = td.log_prob(xt).exp()
    rtol = 1e-4 if case.dtype == "float32" else 1e-6
    for k, eg, cg in zip(names, e_grads, cdf_grads):
        expected = (-cg / density).detach().numpy()
        np.testing.assert_allclose(_np(eg), expected, rtol=rtol, atol=1e-7, err_msg=k)


def test_gamma_family_rsample_gradient_is_torchs_standard_gamma_grad():
    for name, shape_of in (("Gamma", lambda p: p["a"]), ("Chi2", lambda p: p["df"] / 2)):
        case = BY_NAME[name]
        ember.manual_seed(2)
        ed, ep = case.build(ember)
        x = ed.rsample()
        leaf = "a" if name == "Gamma" else "df"
        (g,) = ember.autograd.grad(x.sum(), ep[leaf])
        rate = _np(ep["b"]) if name == "Gamma" else 0.5
        alpha = _np(shape_of(ep))
        expected = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(_np(x) * rate)).numpy() / rate
        if name == "Chi2":
            expected = expected / 2
        np.testing.assert_allclose(_np(g), expected, rtol=1e-10)


def test_dirichlet_and_beta_rsample_gradients_are_torchs():
    from torch.distributions.dirichlet import _Dirichlet_backward
    w = np.random.default_rng(4).uniform(-1, 1, size=(2, 4))
    case = BY_NAME["Dirichlet"]
    ember.manual_seed(3)
    ed, ep = case.build(ember)
    x = ed.rsample()
    (g,) = ember.autograd.grad((x * ember.tensor(w)).sum(), ep["c"])
    expected = _Dirichlet_backward(torch.tensor(_np(x)), torch.tensor(_np(ep["c"])), torch.tensor(w))
    np.testing.assert_allclose(_np(g), expected.numpy(), rtol=1e-10)
    assert type(x.grad_fn).__name__ == "_DirichletBackward"

    a = ember.tensor([0.7, 2.0, 5.0], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([1.5, 0.5, 9.0], dtype=ember.float64, requires_grad=True)
    y = D.Beta(a, b).rsample()
    ga, gb = ember.autograd.grad(y.sum(), [a, b])
    both = torch.stack([torch.tensor(_np(y)), 1 - torch.tensor(_np(y))], -1)
    conc = torch.stack([torch.tensor(_np(a)), torch.tensor(_np(b))], -1)
    expected = _Dirichlet_backward(both, conc, torch.tensor([[1.0, 0.0]] * 3, dtype=torch.float64))
    np.testing.assert_allclose(np.stack([_np(ga), _np(gb)], -1), expected.numpy(), rtol=1e-10)


@pytest.mark.parametrize("name", ["MultivariateNormal_cov", "MultivariateNormal_tril", "MultivariateNormal_precision"])
def test_multivariate_normal_rsample_gradient_is_loc_plus_l_eps(name):
    case = BY_NAME[name]
    ember.manual_seed(5)
    ed, ep = case.build(ember)
    x = ed.rsample()
    w = np.random.default_rng(6).uniform(-1, 1, size=tuple(x.shape))
    names = [k for k, v in ep.items() if v.requires_grad]
    e_grads = ember.autograd.grad((x * ember.tensor(w)).sum(), [ep[k] for k in names])
    td, tp = case.build(torch)
    L = td._unbroadcasted_scale_tril
    eps = torch.linalg.solve_triangular(L.detach(), (torch.tensor(_np(x)) - td.loc.detach()).unsqueeze(-1),
                                        upper=False)
    xt = td.loc + (L @ eps).squeeze(-1)
    np.testing.assert_allclose(xt.detach().numpy(), _np(x), rtol=1e-10, atol=1e-12)
    t_grads = torch.autograd.grad((xt * torch.tensor(w)).sum(), [tp[k] for k in names])
    for k, eg, tg in zip(names, e_grads, t_grads):
        np.testing.assert_allclose(_np(eg), tg.numpy(), rtol=1e-8, atol=1e-10, err_msg=k)


def test_relaxed_rsample_gradients_are_torchs():
    t_, p_ = np.array(0.7), np.array([0.2, 0.5, 0.9])
    temp, probs = ember.tensor(t_, requires_grad=True), ember.tensor(p_, requires_grad=True)
    ember.manual_seed(7)
    y = D.RelaxedBernoulli(temp, probs=probs).rsample()
    e_grads = ember.autograd.grad(y.sum(), [temp, probs])
    tt, tpr = torch.tensor(t_, requires_grad=True), torch.tensor(p_, requires_grad=True)
    yn = torch.tensor(_np(y))
    noise = (0.7 * torch.logit(yn) - torch.logit(torch.tensor(p_))).detach()  # logit of the uniforms
    yt = torch.sigmoid((noise + tpr.log() - (-tpr).log1p()) / tt)
    np.testing.assert_allclose(yt.detach().numpy(), _np(y), rtol=1e-10)
    for eg, tg in zip(e_grads, torch.autograd.grad(yt.sum(), [tt, tpr])):
        np.testing.assert_allclose(_np(eg), tg.numpy(), rtol=1e-8)

    logits_ = np.array([[0.3, -1.0, 2.0], [0.0, 0.5, -0.5]])
    temp, logits = ember.tensor(np.array(0.6), requires_grad=True), ember.tensor(logits_, requires_grad=True)
    y = D.RelaxedOneHotCategorical(temp, logits=logits).rsample()
    w = np.random.default_rng(8).uniform(-1, 1, size=(2, 3))
    e_grads = ember.autograd.grad((y * ember.tensor(w)).sum(), [temp, logits])
    tt, tl = torch.tensor(np.array(0.6), requires_grad=True), torch.tensor(logits_, requires_grad=True)
    gumbels = (0.6 * torch.tensor(_np(y)).log() - torch.log_softmax(torch.tensor(logits_), -1)).detach()
    yt = torch.softmax((torch.log_softmax(tl, -1) + gumbels) / tt, -1)
    np.testing.assert_allclose(yt.detach().numpy(), _np(y), rtol=1e-8)
    for eg, tg in zip(e_grads, torch.autograd.grad((yt * torch.tensor(w)).sum(), [tt, tl])):
        np.testing.assert_allclose(_np(eg), tg.numpy(), rtol=1e-7, atol=1e-12)


def test_straight_through_gradient_is_torchs():
    logits_ = np.array([[0.3, -1.0, 2.0, 0.1]])
    w = np.array([[0.5, -1.0, 2.0, 0.25]])
    grads = []
    for lib in (torch, ember):
        logits = lib.tensor(logits_, requires_grad=True)
        s = lib.distributions.OneHotCategoricalStraightThrough(logits=logits).rsample()
        assert float(s.sum()) == 1.0
        grads.append(_np(lib.autograd.grad((s * lib.tensor(w)).sum(), logits)[0]))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10)


def test_location_scale_rsample_gradients():
    for name in ("StudentT", "LowRankMultivariateNormal"):
        case = BY_NAME[name]
        ed, ep = case.build(ember)
        x = ed.rsample()
        (g_loc,) = ember.autograd.grad(x.sum(), ep["loc"], retain_graph=True)
        np.testing.assert_allclose(_np(g_loc), np.ones(tuple(x.shape)))
        if name == "StudentT":
            (g_scale,) = ember.autograd.grad(x.sum(), ep["scale"])
            np.testing.assert_allclose(_np(g_scale), _np((x - ep["loc"]) / ep["scale"]), rtol=1e-10)


# -- the distribution of samples -----------------------------------------------------------------

N_KS, N_MOMENTS = 3000, 20000


@pytest.fixture
def torch_without_validation():
    """torch's distributions without argument validation (a cdf taken at points outside one
    batch element's support, for another's)."""
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


@pytest.mark.parametrize("case", [c for c in CASES if c.sample_check == "ks"], ids=repr)
def test_samples_follow_torchs_cdf(case, torch_without_validation):
    ember.manual_seed(11)
    ed, _ = case.build(ember, requires_grad=False)
    td, _ = case.build(torch, requires_grad=False)
    x = _np(ed.sample((N_KS,))).astype(np.float64).reshape(N_KS, -1)
    for j in range(x.shape[1]):
        def cdf(s, j=j):
            values = torch.tensor(np.broadcast_to(s[:, None], (len(s), x.shape[1])).reshape(
                (len(s),) + tuple(td.batch_shape)), dtype=getattr(torch, case.dtype))
            return td.cdf(values).reshape(len(s), -1)[:, j].double().numpy()
        assert _ks(x[:, j], cdf) < _ks_bound(N_KS), j


@pytest.mark.parametrize("case", [c for c in CASES if c.sample_check == "moments"], ids=repr)
def test_sample_moments_match_torchs(case):
    ember.manual_seed(12)
    ed, _ = case.build(ember, requires_grad=False)
    td, _ = case.build(torch, requires_grad=False)
    x = _np(ed.sample((N_MOMENTS,))).astype(np.float64)
    if isinstance(td, torch.distributions.Categorical):  # (its mean and variance are NaN)
        x = np.eye(td.probs.shape[-1])[x.astype(np.int64)]
        mean = td.probs.numpy()
        var = mean * (1 - mean)
    else:
        mean, var = td.mean.double().numpy(), td.variance.double().numpy()
    assert np.all(np.abs(x.mean(0) - mean) <= 5 * np.sqrt(var / N_MOMENTS) + 1e-12)
    np.testing.assert_allclose(x.var(0), var, rtol=0.25, atol=1e-12)


def test_relaxed_and_circular_samples():
    ember.manual_seed(13)
    n = N_KS
    # the logit of a relaxed Bernoulli sample, undone of its temperature and logit, is logistic
    p = np.array([0.2, 0.6])
    y = _np(D.RelaxedBernoulli(ember.tensor(0.5), probs=ember.tensor(p)).sample((n,)))
    noise = 0.5 * np.log(y / (1 - y)) - np.log(p / (1 - p))
    for j in range(2):
        assert _ks(noise[:, j], lambda s: 1 / (1 + np.exp(-s))) < _ks_bound(n)
    # the argmax of a relaxed one-hot sample is categorical (the Gumbel-max property)
    logits = np.array([0.5, -1.0, 1.5])
    y = _np(D.RelaxedOneHotCategorical(ember.tensor(0.3), logits=ember.tensor(logits)).sample((n,)))
    freq = np.bincount(y.argmax(-1), minlength=3) / n
    probs = np.exp(logits) / np.exp(logits).sum()
    assert np.all(np.abs(freq - probs) < 5 * np.sqrt(probs * (1 - probs) / n))
    # von Mises: E[cos(x - loc)] = I1(k) / I0(k) = 1 - circular variance
    vm_case = BY_NAME["VonMises"]
    ed, ep = vm_case.build(ember, requires_grad=False)
    td, _ = vm_case.build(torch, requires_grad=False)
    x = _np(ed.sample((n,)))
    assert np.all((x >= -math.pi) & (x < math.pi))
    c = np.cos(x - _np(ep["loc"]))
    assert np.all(np.abs(c.mean(0) - (1 - td.variance.numpy())) < 5 * c.std(0) / math.sqrt(n))
    # LKJ: off-diagonal correlations have mean 0 and variance 1 / (2 eta + d - 1)
    eta = np.array([0.8, 3.0])
    L = D.LKJCholesky(3, ember.tensor(eta)).sample((n,))
    assert bool(D.constraints.corr_cholesky.check(L).all())
    corr = _np(L @ L.mT)[..., 1, 0]
    assert np.all(np.abs(corr.mean(0)) < 5 * np.sqrt(1 / (2 * eta + 2) / n))
    np.testing.assert_allclose(corr.var(0), 1 / (2 * eta + 2), rtol=0.15)
    # logistic normal: undoing the stick-breaking gives the normal it was built from
    ln_case = BY_NAME["LogisticNormal"]
    ed, ep = ln_case.build(ember, requires_grad=False)
    z = _np(D.transforms.StickBreakingTransform().inv(ed.sample((n,))))
    loc, scale = _np(ep["loc"]), _np(ep["scale"])
    for idx in np.ndindex(loc.shape):
        def cdf(s, idx=idx):
            return 0.5 * (1 + torch.erf(torch.tensor((s - loc[idx]) / scale[idx] / math.sqrt(2)))).numpy()
        assert _ks(z[(slice(None),) + idx], cdf) < _ks_bound(n)


def test_wishart_rsample_gradient_is_the_bartlett_decomposition():
    """x = (L A)(L A)^T with A the Bartlett factor: its diagonal the square roots of chi-squared
    draws of df - i degrees of freedom (their gradient: torch's _standard_gamma_grad), the rest
    normal draws. A is recovered from the sample (the Cholesky factor of x is L A)."""
    case = BY_NAME["Wishart"]
    ember.manual_seed(9)
    ed, ep = case.build(ember)
    x = ed.rsample()
    w = np.random.default_rng(10).uniform(-1, 1, size=tuple(x.shape))
    e_df, e_cov = ember.autograd.grad((x * ember.tensor(w)).sum(), [ep["df"], ep["cov"]])
    td, tp = case.build(torch)
    L = torch.linalg.cholesky(tp["cov"])
    A = torch.linalg.solve_triangular(L.detach(), torch.linalg.cholesky(torch.tensor(_np(x))), upper=False)
    chi2 = A.diagonal(dim1=-2, dim2=-1) ** 2
    dof = tp["df"].detach().unsqueeze(-1) - torch.arange(3, dtype=torch.float64)
    slope = torch._standard_gamma_grad(dof / 2, chi2 / 2)  # d chi2 / d df
    chi2_t = chi2 + slope * (tp["df"].unsqueeze(-1) - tp["df"].detach().unsqueeze(-1))
    A_t = A.tril(-1) + torch.diag_embed(chi2_t.sqrt())
    chol = L @ A_t
    xt = chol @ chol.mT
    np.testing.assert_allclose(xt.detach().numpy(), _np(x), rtol=1e-8, atol=1e-10)
    t_df, t_cov = torch.autograd.grad((xt * torch.tensor(w)).sum(), [tp["df"], tp["cov"]])
    np.testing.assert_allclose(_np(e_df), t_df.numpy(), rtol=1e-7)
    np.testing.assert_allclose(_np(e_cov), t_cov.numpy(), rtol=1e-7, atol=1e-10)
