"""Generators and samplers. ember's streams are not torch's, so these tests check what torch
promises: determinism under a seed, independent generators, state round trips, torch's shapes,
dtypes, ranges and errors, and the distributions' statistics."""
import math

import numpy as np
import pytest
import torch

import ember

N = 100_000


def _np(t):
    return np.asarray(t._data, dtype=np.float64)


def _same_error(fn):
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(ember)
    assert str(got.value) == str(expected.value)


# -- generators ------------------------------------------------------------------------------

def test_manual_seed_makes_streams_reproducible():
    a = ember.rand(5, generator=ember.Generator().manual_seed(7))
    b = ember.rand(5, generator=ember.Generator().manual_seed(7))
    c = ember.rand(5, generator=ember.Generator().manual_seed(8))
    assert np.array_equal(_np(a), _np(b))
    assert not np.array_equal(_np(a), _np(c))
    ember.manual_seed(3)
    x = ember.randn(4)
    ember.manual_seed(3)
    assert np.array_equal(_np(x), _np(ember.randn(4)))


def test_generators_are_independent():
    g1, g2 = ember.Generator().manual_seed(1), ember.Generator().manual_seed(1)
    first = ember.rand(3, generator=g1)
    ember.rand(100, generator=g2)       # g2 advances; g1 must not
    ember.rand(100)                     # nor does the default generator touch g1
    g3 = ember.Generator().manual_seed(1)
    ember.rand(3, generator=g3)
    assert np.array_equal(_np(ember.rand(3, generator=g1)), _np(ember.rand(3, generator=g3)))
    assert not np.array_equal(_np(first), _np(ember.rand(3, generator=g1)))


def test_state_round_trip_reproduces_the_stream():
    g = ember.Generator().manual_seed(11)
    ember.randn(3, generator=g)
    state = g.get_state()
    assert state.dtype == ember.uint8 and state.ndim == 1
    a = [ember.randn(4, generator=g), ember.randint(0, 10, (4,), generator=g), ember.rand(3, generator=g)]
    g.set_state(state)
    b = [ember.randn(4, generator=g), ember.randint(0, 10, (4,), generator=g), ember.rand(3, generator=g)]
    for x, y in zip(a, b):
        assert np.array_equal(_np(x), _np(y))
    other = ember.Generator().set_state(state)
    assert other.initial_seed() == 11
    saved = ember.get_rng_state()
    x = ember.rand(5)
    ember.set_rng_state(saved)
    assert np.array_equal(_np(x), _np(ember.rand(5)))


def test_seed_api():
    g = ember.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    assert g.manual_seed(-1).initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 64
    assert ember.manual_seed(4).initial_seed() == 4 == ember.initial_seed()
    assert isinstance(ember.seed(), int)
    assert str(g.device) == "cpu"
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        g.manual_seed(1.5)
    with pytest.raises(ValueError):
        g.manual_seed(2 ** 64)
    with pytest.raises(TypeError):
        g.set_state(ember.zeros(56))
    with pytest.raises(RuntimeError, match="size"):
        g.set_state(ember.zeros(10, dtype=ember.uint8))


# -- shapes, dtypes, ranges ------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.rand(2, 3), lambda lib: lib.rand((2, 3), dtype=lib.float64),
    lambda lib: lib.rand(4, dtype=lib.float16), lambda lib: lib.rand(4, dtype=lib.bfloat16),
    lambda lib: lib.rand(2, dtype=lib.complex64), lambda lib: lib.randn(3, 2),
    lambda lib: lib.randn(0), lambda lib: lib.randn((), dtype=lib.float64),
    lambda lib: lib.randint(5, (2, 3)), lambda lib: lib.randint(2, 5, (2, 3)),
    lambda lib: lib.randint(5, (2,), dtype=lib.float32), lambda lib: lib.randint(0, 2, (3,), dtype=lib.bool),
    lambda lib: lib.randint(low=1, high=4, size=(3,)), lambda lib: lib.randperm(5),
    lambda lib: lib.randperm(5, dtype=lib.float32), lambda lib: lib.randperm(0),
    lambda lib: lib.normal(lib.zeros(2, 3), lib.ones(3)), lambda lib: lib.normal(lib.zeros(2, 3), 2.0),
    lambda lib: lib.normal(0.0, lib.ones(3, dtype=lib.float64)), lambda lib: lib.normal(0.0, 1.0, (2, 3)),
    lambda lib: lib.normal(lib.zeros(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.bernoulli(lib.full((3,), 0.5)), lambda lib: lib.bernoulli(lib.full((3,), 0.5), 0.3),
    lambda lib: lib.rand_like(lib.ones(2, 3, dtype=lib.float64)), lambda lib: lib.randn_like(lib.ones(3)),
    lambda lib: lib.randint_like(lib.ones(3), 5), lambda lib: lib.randint_like(lib.ones(3, dtype=lib.int32), 2, 5),
    lambda lib: lib.multinomial(lib.tensor([0.2, 0.8]), 3, replacement=True),
    lambda lib: lib.multinomial(lib.ones(2, 4), 3), lambda lib: lib.rand(2, 3, requires_grad=True),
])
def test_shapes_and_dtypes_like_torch(fn):
    e, t = fn(ember), fn(torch)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert e.requires_grad == t.requires_grad


@pytest.mark.parametrize("fn", [
    lambda lib: lib.rand(3, dtype=lib.int64), lambda lib: lib.randn(3, dtype=lib.int64),
    lambda lib: lib.rand(-1), lambda lib: lib.randint(5, 5, (2,)), lambda lib: lib.randint(5, 3),
    lambda lib: lib.randperm(-1), lambda lib: lib.normal(0.0, -1.0, (2,)),
    lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0])), lambda lib: lib.normal(lib.zeros(2), -1.0),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.0), lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
    lambda lib: lib.bernoulli(lib.ones(3, dtype=lib.int64)), lambda lib: lib.bernoulli(lib.full((3,), 1.5)),
    lambda lib: lib.bernoulli(lib.full((3,), 0.5), 1.5), lambda lib: lib.rand_like(lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.multinomial(lib.tensor([0.2, 0.8]), 3), lambda lib: lib.multinomial(lib.tensor([-0.2, 0.8]), 1),
    lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1), lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.multinomial(lib.ones(2, dtype=lib.int64), 1), lambda lib: lib.multinomial(lib.ones(2), 0),
    lambda lib: lib.ones(2, requires_grad=True).uniform_(), lambda lib: lib.ones(2, dtype=lib.int64).uniform_(),
    lambda lib: lib.ones(2).uniform_(2, 1),
])
def test_errors_like_torch(fn):
    _same_error(fn)


def test_value_ranges():
    g = ember.Generator().manual_seed(0)
    for dtype in (ember.float32, ember.float64, ember.float16, ember.bfloat16):
        u = _np(ember.rand(N, generator=g, dtype=dtype))
        assert u.min() >= 0 and u.max() < 1
    r = _np(ember.randint(-3, 4, (N,), generator=g))
    assert r.min() == -3 and r.max() == 3
    assert sorted(_np(ember.randperm(50, generator=g)).tolist()) == list(range(50))
    b = _np(ember.bernoulli(ember.full((N,), 0.3), generator=g))
    assert set(np.unique(b)) <= {0.0, 1.0}
    x = ember.empty(N).uniform_(-2, 5, generator=g)
    assert _np(x).min() >= -2 and _np(x).max() < 5
    assert set(np.unique(_np(ember.empty(100).random_(3, generator=g)))) == {0.0, 1.0, 2.0}
    assert _np(ember.empty(N).exponential_(2.0, generator=g)).min() >= 0


# -- distributions ---------------------------------------------------------------------------

def _moments(t):
    x = _np(t)
    return x.mean(), x.var()


def test_distribution_statistics():
    g = ember.Generator().manual_seed(1234)
    tol = 0.02
    m, v = _moments(ember.rand(N, generator=g))
    assert abs(m - 0.5) < tol and abs(v - 1 / 12) < tol
    m, v = _moments(ember.randn(N, generator=g))
    assert abs(m) < tol and abs(v - 1) < 2 * tol
    m, v = _moments(ember.normal(3.0, 2.0, (N,), generator=g))
    assert abs(m - 3) < 2 * tol and abs(v - 4) < 0.1
    m, v = _moments(ember.normal(ember.full((N,), -1.0), ember.full((N,), 0.5), generator=g))
    assert abs(m + 1) < tol and abs(v - 0.25) < tol
    m, _ = _moments(ember.bernoulli(ember.full((N,), 0.3), generator=g))
    assert abs(m - 0.3) < tol
    m, _ = _moments(ember.empty(N).bernoulli_(0.7, generator=g))
    assert abs(m - 0.7) < tol
    m, v = _moments(ember.randint(0, 10, (N,), generator=g))
    assert abs(m - 4.5) < 0.05 and abs(v - 8.25) < 0.15
    m, v = _moments(ember.empty(N).normal_(2.0, 3.0, generator=g))
    assert abs(m - 2) < 0.05 and abs(v - 9) < 0.2
    m, _ = _moments(ember.empty(N).exponential_(4.0, generator=g))
    assert abs(m - 0.25) < tol
    c = ember.randn(N, generator=g, dtype=ember.complex64)
    assert abs(np.var(c._data.real) - 0.5) < tol


def test_multinomial_frequencies():
    g = ember.Generator().manual_seed(5)
    probs = ember.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 2.0, 0.0]])
    draws = _np(ember.multinomial(probs, 20_000, replacement=True, generator=g))
    freq = np.stack([np.bincount(row.astype(int), minlength=4) / row.size for row in draws])
    np.testing.assert_allclose(freq, [[0.1, 0, 0.6, 0.3], [0.25, 0.25, 0.5, 0]], atol=0.02)
    rows = _np(ember.multinomial(ember.tensor([0.1, 0.0, 0.6, 0.3]).expand(5000, 4), 2, generator=g))
    assert all(a != b for a, b in rows)  # without replacement: distinct indices
    first = np.bincount(rows[:, 0].astype(int), minlength=4) / len(rows)
    np.testing.assert_allclose(first, [0.1, 0, 0.6, 0.3], atol=0.03)
    assert set(rows.ravel().tolist()) <= {0, 2, 3}


def test_randperm_is_uniform():
    g = ember.Generator().manual_seed(9)
    firsts = [ember.randperm(4, generator=g)[0].item() for _ in range(4000)]
    np.testing.assert_allclose(np.bincount(firsts) / 4000, [0.25] * 4, atol=0.03)


# -- gradients -------------------------------------------------------------------------------

def test_sampler_gradients_are_zero_like_torch():
    for lib in (torch, ember):
        mean = lib.zeros(3, requires_grad=True)
        std = lib.ones(3, requires_grad=True)
        probs = lib.full((3,), 0.5, requires_grad=True)
        out = lib.normal(mean, std).sum() + lib.normal(mean, 2.0).sum() + lib.normal(0.0, std).sum()
        out = out + lib.bernoulli(probs).sum()
        out.backward()
        assert mean.grad.tolist() == [0.0] * 3 and std.grad.tolist() == [0.0] * 3
        assert probs.grad.tolist() == [0.0] * 3
    assert type(ember.normal(ember.zeros(2, requires_grad=True), 1.0).grad_fn).__name__ == "NormalBackward1"
    assert type(ember.normal(1.0, ember.ones(2, requires_grad=True)).grad_fn).__name__ == "NormalBackward2"
    assert type(ember.bernoulli(ember.full((2,), 0.5, requires_grad=True)).grad_fn).__name__ == "BernoulliBackward0"


def test_inplace_samplers_on_non_leaves():
    x = ember.ones(3, requires_grad=True)
    y = (x * 2).uniform_()
    assert type(y.grad_fn).__name__ == "UniformBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0] * 3
    with ember.no_grad():
        w = ember.ones(3, requires_grad=True)
        w.normal_(generator=ember.Generator().manual_seed(0))
    assert w.requires_grad and w._version == 1


# -- the remaining in-place samplers, poisson, fork_rng ----------------------------------------

def test_more_distribution_statistics():
    g = ember.Generator().manual_seed(77)
    m, v = _moments(ember.empty(N, dtype=ember.float64).geometric_(0.25, generator=g))
    assert abs(m - 4) < 0.05 and abs(v - 12) < 0.5          # mean 1/p, variance (1-p)/p^2
    assert _np(ember.empty(N).geometric_(0.5, generator=g)).min() == 1
    c = _np(ember.empty(N).cauchy_(1.0, 2.0, generator=g))
    assert abs(np.median(c) - 1) < 0.05                        # median, and quartiles at +-sigma
    assert abs(np.quantile(c, 0.75) - np.quantile(c, 0.25) - 4) < 0.1
    ln = _np(ember.empty(N, dtype=ember.float64).log_normal_(0.5, 0.25, generator=g))
    assert ln.min() > 0
    assert abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).var() - 0.0625) < 0.003
    assert abs(ln.mean() - math.exp(0.5 + 0.0625 / 2)) < 0.01
    m, v = _moments(ember.poisson(ember.full((N,), 3.5), generator=g))
    assert abs(m - 3.5) < 0.05 and abs(v - 3.5) < 0.1
    p = _np(ember.poisson(ember.tensor([0.0, 1e-3, 50.0]).expand(N, 3), generator=g))
    assert (p[:, 0] == 0).all() and abs(p[:, 2].mean() - 50) < 0.2
    m, v = _moments(ember.empty(N, dtype=ember.int64).random_(-5, 5, generator=g))
    assert abs(m + 0.5) < 0.05 and abs(v - 8.25) < 0.15
    m, v = _moments(ember.empty(N).uniform_(-1, 3, generator=g))
    assert abs(m - 1) < 0.02 and abs(v - 16 / 12) < 0.03
    probs = ember.tensor([0.2, 0.9]).expand(N // 2, 2).contiguous()
    draws = _np(ember.empty(N // 2, 2).bernoulli_(probs, generator=g))
    np.testing.assert_allclose(draws.mean(0), [0.2, 0.9], atol=0.01)


_SAMPLERS = [
    lambda t, g: t.normal_(generator=g), lambda t, g: t.uniform_(generator=g),
    lambda t, g: t.exponential_(generator=g), lambda t, g: t.geometric_(0.3, generator=g),
    lambda t, g: t.cauchy_(generator=g), lambda t, g: t.log_normal_(generator=g),
    lambda t, g: t.random_(0, 10, generator=g), lambda t, g: t.bernoulli_(0.5, generator=g),
    lambda t, g: t.copy_(ember.poisson(ember.full((5,), 2.0), generator=g)),
    lambda t, g: t.copy_(ember.multinomial(ember.ones(5), 5, generator=g).float()),
    lambda t, g: t.copy_(ember.multinomial(ember.ones(3), 5, True, generator=g).float()),
]


@pytest.mark.parametrize("sample", _SAMPLERS)
def test_every_sampler_follows_its_generator(sample):
    a = sample(ember.empty(5), ember.Generator().manual_seed(3))
    b = sample(ember.empty(5), ember.Generator().manual_seed(3))
    c = sample(ember.empty(5), ember.Generator().manual_seed(4))
    assert np.array_equal(_np(a), _np(b))
    ember.manual_seed(3)
    d = sample(ember.empty(5), None)
    ember.manual_seed(3)
    assert np.array_equal(_np(d), _np(sample(ember.empty(5), None)))
    assert not np.array_equal(_np(a), _np(c)) or sample is _SAMPLERS[7]  # 5 coin flips may agree


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(3).geometric_(0.5), lambda lib: lib.zeros(3, dtype=lib.int64).geometric_(0.5),
    lambda lib: lib.zeros(3).cauchy_(), lambda lib: lib.zeros(3, dtype=lib.float64).log_normal_(),
    lambda lib: lib.zeros(3, dtype=lib.int32).random_(0, 7), lambda lib: lib.zeros(3, dtype=lib.bool).random_(),
    lambda lib: lib.zeros(3, dtype=lib.int64).bernoulli_(0.5),
    lambda lib: lib.poisson(lib.ones(2, 3, dtype=lib.float64)), lambda lib: lib.poisson(lib.ones(0)),
    lambda lib: lib.multinomial(lib.tensor([1.0, 0.0, 0.0]), 2),
])
def test_more_shapes_and_dtypes_like_torch(fn):
    e, t = fn(ember), fn(torch)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]


def test_multinomial_without_replacement_takes_zero_weights_last_like_torch():
    for lib in (torch, ember):
        assert lib.multinomial(lib.tensor([1.0, 0.0, 0.0]), 2).tolist() == [0, 1]
        assert sorted(lib.multinomial(lib.tensor([1.0, 1.0, 0.0]), 3).tolist()) == [0, 1, 2]
        assert lib.multinomial(lib.tensor([1.0, 1.0, 0.0]), 3).tolist()[2] == 2


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(3).geometric_(0), lambda lib: lib.zeros(3).geometric_(1.5),
    lambda lib: lib.zeros(3, dtype=lib.bool).geometric_(0.5), lambda lib: lib.zeros(3).cauchy_(0, 0),
    lambda lib: lib.zeros(3, dtype=lib.int64).cauchy_(), lambda lib: lib.zeros(3).log_normal_(0, -1),
    lambda lib: lib.zeros(3, dtype=lib.int64).log_normal_(), lambda lib: lib.poisson(lib.tensor([-1.0])),
    lambda lib: lib.poisson(lib.tensor([1, 2])), lambda lib: lib.zeros(3, dtype=lib.int64).exponential_(),
    lambda lib: lib.zeros(3).exponential_(0), lambda lib: lib.zeros(3, dtype=lib.int64).normal_(),
    lambda lib: lib.zeros(3).random_(5, 2), lambda lib: lib.zeros(3, dtype=lib.uint8).random_(0, 300),
    lambda lib: lib.zeros(3, dtype=lib.int8).random_(-200, 3), lambda lib: lib.zeros(3).bernoulli_(1.5),
    lambda lib: lib.zeros(3).normal_(0, -1),
])
def test_more_errors_like_torch(fn):
    _same_error(fn)


def test_new_samplers_give_zero_gradients_with_torch_node_names():
    for name, fill in (("GeometricBackward0", lambda t: t.geometric_(0.5)),
                       ("CauchyBackward0", lambda t: t.cauchy_()),
                       ("LogNormalBackward0", lambda t: t.log_normal_())):
        x = ember.ones(3, requires_grad=True)
        y = fill(x * 2)
        assert type(y.grad_fn).__name__ == name
        y.sum().backward()
        assert x.grad.tolist() == [0.0] * 3
    rates = ember.ones(3, requires_grad=True)
    out = ember.poisson(rates)
    assert type(out.grad_fn).__name__ == "PoissonBackward0"
    out.sum().backward()
    assert rates.grad.tolist() == [0.0] * 3


def test_fork_rng_restores_the_default_generator():
    import ember.random as er
    assert er.manual_seed is ember.manual_seed and er.get_rng_state is ember.get_rng_state
    er.manual_seed(21)
    assert er.initial_seed() == 21
    with er.fork_rng():
        inside = ember.rand(4)
        ember.randn(100)
    after = ember.rand(4)
    assert np.array_equal(_np(inside), _np(after))      # the stream resumed where it was
    with er.fork_rng(enabled=False):
        ember.rand(4)
    assert not np.array_equal(_np(after), _np(ember.rand(4)))
    state = er.get_rng_state()
    with pytest.raises(KeyError):
        with er.fork_rng():
            ember.rand(3)
            raise KeyError("restored even on error")
    assert np.array_equal(_np(state), _np(er.get_rng_state()))
    er.set_rng_state(state)
    assert isinstance(er.seed(), int)
