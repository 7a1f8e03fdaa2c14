"""Every distribution of ember.distributions against torch.distributions on the same float64
parameters: shapes, log_prob (values and parameter gradients), entropy, cdf/icdf, moments,
enumerate_support, expand, support and arg_constraints, and the errors of argument
validation."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from _dist_cases import CASES

RTOL, ATOL = 1e-6, 1e-9


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return t.detach().cpu().numpy()


def _close(e, t, rtol=RTOL, atol=ATOL):
    e, t = np.asarray(_np(e) if not isinstance(e, (int, float)) else e), np.asarray(
        _np(t) if not isinstance(t, (int, float)) else t)
    assert e.shape == t.shape, (e.shape, t.shape)
    if t.dtype == np.float32:  # float32 results: ember's and torch's kernels round differently
        rtol, atol = max(rtol, 2e-5), max(atol, 1e-6)
    np.testing.assert_allclose(e.astype(np.float64), t.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)


def _to_ember(t):
    return ember.tensor(t.detach().numpy())


def _both(fn_t, fn_e):
    """Runs ``fn_t`` on torch and ``fn_e`` on ember: both raise NotImplementedError, or both
    give values, returned."""
    try:
        t = fn_t()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            fn_e()
        return None, None
    return t, fn_e()


def _values(case, td):
    """Points of the support to evaluate at: torch samples (a fixed seed), for the batch."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return td.sample((4,)).detach()


@pytest.fixture(params=CASES, ids=repr)
def case(request):
    return request.param


def test_shapes_and_flags(case):
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    assert tuple(ed.batch_shape) == tuple(td.batch_shape)
    assert tuple(ed.event_shape) == tuple(td.event_shape)
    assert isinstance(ed.batch_shape, ember.Size)
    assert ed.has_rsample == td.has_rsample
    assert ed.has_enumerate_support == td.has_enumerate_support
    assert type(ed).__name__ == type(td).__name__


def test_log_prob_and_gradients(case):
    td, tp = case.build(torch)
    ed, ep = case.build(ember)
    value = _values(case, td)
    t = td.log_prob(value)
    e = ed.log_prob(_to_ember(value))
    _close(e, t)
    names = [k for k, v in tp.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    if not names:
        return
    t_grads = torch.autograd.grad(t.sum(), [tp[k] for k in names], allow_unused=True)
    e_grads = ember.autograd.grad(e.sum(), [ep[k] for k in names], allow_unused=True)
    for k, tg, eg in zip(names, t_grads, e_grads):
        if tg is None:
            assert eg is None or not np.any(_np(eg)), k
        else:
            _close(eg, tg, rtol=1e-5, atol=1e-8)


def test_entropy_and_perplexity(case):
    td, tp = case.build(torch)
    ed, ep = case.build(ember)
    t, e = _both(td.entropy, ed.entropy)
    if t is None:
        return
    _close(e, t)
    _close(ed.perplexity(), td.perplexity())
    names = [k for k, v in tp.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    if names:
        t_grads = torch.autograd.grad(t.sum(), [tp[k] for k in names], allow_unused=True)
        e_grads = ember.autograd.grad(e.sum(), [ep[k] for k in names], allow_unused=True)
        for tg, eg in zip(t_grads, e_grads):
            if tg is not None:
                _close(eg, tg, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("prop", ["mean", "mode", "variance", "stddev"])
def test_moments(case, prop):
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    t, e = _both(lambda: getattr(td, prop), lambda: getattr(ed, prop))
    if t is not None:
        _close(e, t)


def test_cdf_and_icdf(case):
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    value = _values(case, td)
    t, e = _both(lambda: td.cdf(value), lambda: ed.cdf(_to_ember(value)))
    if t is not None:
        _close(e, t)
    q = torch.tensor(np.random.default_rng(3).uniform(0.05, 0.95, size=tuple(value.shape)))
    t, e = _both(lambda: td.icdf(q), lambda: ed.icdf(_to_ember(q)))
    if t is not None:
        _close(e, t)


def test_enumerate_support(case):
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    for expand in (True, False):
        t, e = _both(lambda: td.enumerate_support(expand), lambda: ed.enumerate_support(expand))
        if t is not None:
            _close(e, t)
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def test_expand(case):
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    shape = (2,) + tuple(td.batch_shape)
    te, ee = td.expand(shape), ed.expand(shape)
    assert tuple(ee.batch_shape) == tuple(te.batch_shape)
    assert tuple(ee.event_shape) == tuple(te.event_shape)
    assert type(ee) is type(ed)
    value = _values(case, te)
    _close(ee.log_prob(_to_ember(value)), te.log_prob(value))
    assert ee._validate_args == te._validate_args
    assert ee.sample().shape == tuple(te.sample().shape)


def _constraint_signature(c):
    import ember.distributions.constraints as ec
    sig = [type(c).__name__.lstrip("_"), c.event_dim, c.is_discrete]
    if isinstance(c, (torch.distributions.constraints._IndependentConstraint, ec._IndependentConstraint)):
        sig.append(_constraint_signature(c.base_constraint))
    for bound in ("lower_bound", "upper_bound"):
        if hasattr(c, bound):
            b = getattr(c, bound)
            sig.append(np.asarray(_np(b) if hasattr(b, "detach") else b).tolist())
    return sig


def test_support_and_arg_constraints(case):
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    assert _constraint_signature(ed.support) == _constraint_signature(td.support)
    assert list(ed.arg_constraints) == list(td.arg_constraints)
    for k in td.arg_constraints:
        t, e = td.arg_constraints[k], ed.arg_constraints[k]
        if torch.distributions.constraints.is_dependent(t):
            assert ember.distributions.constraints.is_dependent(e)
        else:
            assert _constraint_signature(e) == _constraint_signature(t)


def test_samples_have_torch_shapes_and_dtypes(case):
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    for shape in ((), (5,), (2, 3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t, e = td.sample(shape), ed.sample(shape)
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert not e.requires_grad
        if td.has_rsample:
            r, tr = ed.rsample(shape), td.rsample(shape)
            assert tuple(r.shape) == tuple(t.shape)
            assert r.requires_grad == tr.requires_grad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert bool(ed.support.check(e).all())


def test_sample_n_warns_as_torch():
    d = ember.distributions.Normal(ember.zeros(2), ember.ones(2))
    with pytest.warns(UserWarning, match=r"sample_n will be deprecated. Use .sample\(\(n,\)\) instead"):
        assert d.sample_n(3).shape == (3, 2)


# -- argument validation: torch's ValueError and message -------------------------------------------

BAD_PARAMETERS = [
    ("Normal", lambda D, lib: D.Normal(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0]))),
    ("Bernoulli", lambda D, lib: D.Bernoulli(probs=lib.tensor([0.5, 1.5]))),
    ("Categorical", lambda D, lib: D.Categorical(probs=lib.tensor([[0.5, -0.5]]))),
    ("Gamma", lambda D, lib: D.Gamma(lib.tensor([1.0]), lib.tensor([0.0]))),
    ("Beta", lambda D, lib: D.Beta(lib.tensor([1.0]), lib.tensor([-2.0]))),
    ("Dirichlet", lambda D, lib: D.Dirichlet(lib.tensor([1.0, 0.0]))),
    ("Exponential", lambda D, lib: D.Exponential(lib.tensor([-1.0]))),
    ("Uniform", lambda D, lib: D.Uniform(lib.tensor([1.0]), lib.tensor([0.0]))),
    ("MultivariateNormal", lambda D, lib: D.MultivariateNormal(
        lib.zeros(2), scale_tril=lib.tensor([[1.0, 0.0], [0.5, -1.0]]))),
    ("Poisson", lambda D, lib: D.Poisson(lib.tensor([-1.0]))),
    ("Geometric", lambda D, lib: D.Geometric(probs=lib.tensor([0.0, 0.5]))),
    ("Binomial", lambda D, lib: D.Binomial(lib.tensor([2.5]), probs=lib.tensor([0.5]))),
]


def _same_error(make):
    with pytest.raises(Exception) as t_err:
        make(torch.distributions, torch)
    with pytest.raises(type(t_err.value)) as e_err:
        make(ember.distributions, ember)
    assert str(e_err.value).replace("ember.Size", "torch.Size") == str(t_err.value)


@pytest.mark.parametrize("make", [m for _, m in BAD_PARAMETERS], ids=[n for n, _ in BAD_PARAMETERS])
def test_invalid_parameters_raise_torchs_error(make):
    _same_error(make)


OUT_OF_SUPPORT = [
    ("Normal_nan", lambda D, lib: D.Normal(lib.zeros(2), lib.ones(2)).log_prob(lib.tensor([0.0, math.nan]))),
    ("Bernoulli", lambda D, lib: D.Bernoulli(probs=lib.tensor([0.3])).log_prob(lib.tensor([0.5]))),
    ("Categorical", lambda D, lib: D.Categorical(logits=lib.zeros(3)).log_prob(lib.tensor([3]))),
    ("Gamma", lambda D, lib: D.Gamma(lib.ones(2), lib.ones(2)).log_prob(lib.tensor([1.0, -1.0]))),
    ("Beta", lambda D, lib: D.Beta(lib.ones(1), lib.ones(1)).log_prob(lib.tensor([1.5]))),
    ("Dirichlet", lambda D, lib: D.Dirichlet(lib.ones(2)).log_prob(lib.tensor([0.5, 0.6]))),
    ("Uniform", lambda D, lib: D.Uniform(lib.zeros(1), lib.ones(1)).log_prob(lib.tensor([2.0]))),
    ("event_shape", lambda D, lib: D.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.zeros(3))),
    ("broadcast", lambda D, lib: D.Normal(lib.zeros(3), lib.ones(3)).log_prob(lib.zeros(2))),
    ("not_a_tensor", lambda D, lib: D.Normal(lib.zeros(3), lib.ones(3)).log_prob(0.5)),
    ("both_probs_logits", lambda D, lib: D.Bernoulli(probs=lib.ones(1) / 2, logits=lib.zeros(1))),
    ("mvn_two_params", lambda D, lib: D.MultivariateNormal(lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2))),
]


@pytest.mark.parametrize("make", [m for _, m in OUT_OF_SUPPORT], ids=[n for n, _ in OUT_OF_SUPPORT])
def test_bad_values_raise_torchs_error(make):
    _same_error(make)


def test_validation_switch():
    D = ember.distributions
    assert D.Distribution._validate_args is torch.distributions.Distribution._validate_args
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(ember.zeros(1), -ember.ones(1))  # no error
        assert D.Normal(ember.zeros(1), ember.ones(1)).log_prob(ember.tensor([math.nan])).isnan().all()
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(ember.zeros(1), -ember.ones(1))
    D.Normal(ember.zeros(1), -ember.ones(1), validate_args=False)
    with pytest.raises(ValueError):
        torch.distributions.Distribution.set_default_validate_args("yes")
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_repr_is_torchs():
    for make in (lambda D, lib: D.Normal(lib.tensor([0.0, 1.0]), lib.tensor([1.0, 2.0])),
                 lambda D, lib: D.Normal(lib.tensor(0.5), lib.tensor(2.0)),
                 lambda D, lib: D.Independent(D.Bernoulli(logits=lib.zeros(2, 3)), 1)):
        e, t = repr(make(ember.distributions, ember)), repr(make(torch.distributions, torch))
        assert e.replace("ember.Size", "torch.Size") == t


FLOAT32 = ["Normal", "Bernoulli_logits", "Categorical_probs", "Uniform", "MultivariateNormal_cov", "Beta", "Gamma",
           "Dirichlet", "Independent", "TransformedDistribution", "Poisson", "Binomial"]


@pytest.mark.parametrize("name", FLOAT32)
def test_float32_parameters(name):
    import dataclasses
    from _dist_cases import BY_NAME
    case = dataclasses.replace(BY_NAME[name], dtype="float32")
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    value = _values(case, td)
    t, e = td.log_prob(value), ed.log_prob(_to_ember(value))
    assert e.dtype == ember.float32
    _close(e, t)
    t, e = _both(td.entropy, ed.entropy)
    if t is not None:
        assert e.dtype == ember.float32
        _close(e, t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert str(ed.sample((2,)).dtype).split(".")[-1] == str(td.sample((2,)).dtype).split(".")[-1]


def test_public_names_are_torchs():
    assert sorted(ember.distributions.__all__) == sorted(torch.distributions.__all__)
    for sub in ("constraints", "transforms"):
        assert sorted(getattr(ember.distributions, sub).__all__) == sorted(getattr(torch.distributions, sub).__all__)
    for name in torch.distributions.__all__:
        t, e = getattr(torch.distributions, name), getattr(ember.distributions, name)
        if isinstance(t, type):
            public = lambda cls: {a for a in dir(cls) if not a.startswith("_")}  # noqa: E731
            assert public(e) >= public(t), (name, public(t) - public(e))


@pytest.mark.parametrize("name", ["Normal", "Exponential", "Gamma", "Beta", "Dirichlet", "Bernoulli_logits",
                                  "ContinuousBernoulli", "Wishart"])
def test_exponential_family_entropy_by_bregman_divergence(name):
    from _dist_cases import BY_NAME
    case = BY_NAME[name]
    td, _ = case.build(torch)
    ed, _ = case.build(ember)
    t, e = _both(lambda: torch.distributions.ExponentialFamily.entropy(td),
                 lambda: ember.distributions.ExponentialFamily.entropy(ed))
    if t is None:  # (Beta and Dirichlet give no mean carrier measure)
        return
    _close(e, t)
    _close(e, ed.entropy(), rtol=1e-6, atol=1e-8)  # the closed form


def _spoiled(params, key, how):
    """A copy of ``params`` with the first element of ``params[key]`` made negative or NaN."""
    out = dict(params)
    v = np.array(params[key], dtype=np.float64, copy=True)
    flat = v.reshape(-1)
    flat[0] = -abs(flat[0]) - 0.5 if how == "negative" else math.nan
    out[key] = v
    return out


@pytest.mark.parametrize("how", ["negative", "nan"])
def test_validation_of_every_parameter_is_torchs(case, how):
    import dataclasses
    for key, value in case.params.items():
        if not isinstance(value, np.ndarray):
            continue
        spoiled = dataclasses.replace(case, params=_spoiled(case.params, key, how))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                spoiled.build(torch)
            except (ValueError, RuntimeError) as err:
                # (torch's LinAlgError is torch._C._LinAlgError; both are RuntimeErrors)
                with pytest.raises(ValueError if isinstance(err, ValueError) else RuntimeError) as ours:
                    spoiled.build(ember)
                assert type(ours.value).__name__.lstrip("_") == type(err).__name__.lstrip("_")
                if isinstance(err, ValueError):
                    assert str(ours.value).replace("ember.", "torch.") == str(err), key
                continue
            spoiled.build(ember)
