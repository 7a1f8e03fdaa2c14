"""Transforms, constraints and the biject_to/transform_to registries against torch: forward,
inverse, log_abs_det_jacobian (values and input gradients), domains and codomains, shapes,
caching and equality; each constraint's check on the same values."""
import numpy as np
import pytest
import torch

import ember

_rng = np.random.default_rng(21)
REAL = _rng.normal(size=(2, 3))
POS = _rng.uniform(0.3, 2.0, size=(2, 3))
SQUARE = _rng.normal(size=(2, 3, 3))


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().cpu().numpy()


def _t(lib, a):
    return lib.tensor(np.asarray(a, dtype=np.float64))


# name -> (make(lib) -> transform, input array)
TRANSFORMS = {
    "Exp": (lambda lib: lib.distributions.transforms.ExpTransform(), REAL),
    "Affine_tensors": (lambda lib: lib.distributions.transforms.AffineTransform(_t(lib, REAL[0]), _t(lib, POS[1] - 1)),
                       REAL),
    "Affine_numbers": (lambda lib: lib.distributions.transforms.AffineTransform(2.0, -3.0), REAL),
    "Affine_event": (lambda lib: lib.distributions.transforms.AffineTransform(_t(lib, REAL), _t(lib, POS), event_dim=1),
                     REAL),
    "Sigmoid": (lambda lib: lib.distributions.transforms.SigmoidTransform(), REAL * 3),
    "Tanh": (lambda lib: lib.distributions.transforms.TanhTransform(), REAL),
    "Softplus": (lambda lib: lib.distributions.transforms.SoftplusTransform(), REAL),
    "Power": (lambda lib: lib.distributions.transforms.PowerTransform(_t(lib, [0.5, -1.0, 2.5])), POS),
    "Abs": (lambda lib: lib.distributions.transforms.AbsTransform(), REAL),
    "Softmax": (lambda lib: lib.distributions.transforms.SoftmaxTransform(), REAL),
    "StickBreaking": (lambda lib: lib.distributions.transforms.StickBreakingTransform(), REAL),
    "LowerCholesky": (lambda lib: lib.distributions.transforms.LowerCholeskyTransform(), SQUARE),
    "PositiveDefinite": (lambda lib: lib.distributions.transforms.PositiveDefiniteTransform(), SQUARE),
    "CorrCholesky": (lambda lib: lib.distributions.transforms.CorrCholeskyTransform(), REAL),
    "Compose": (lambda lib: lib.distributions.transforms.ComposeTransform([
        lib.distributions.transforms.ExpTransform(), lib.distributions.transforms.AffineTransform(1.0, 2.0),
        lib.distributions.transforms.StickBreakingTransform()]), REAL),
    "identity": (lambda lib: lib.distributions.transforms.identity_transform, REAL),
    "Independent": (lambda lib: lib.distributions.transforms.IndependentTransform(
        lib.distributions.transforms.SigmoidTransform(), 1), REAL),
    "Reshape": (lambda lib: lib.distributions.transforms.ReshapeTransform((2, 3), (3, 2)), REAL),
    "Cat": (lambda lib: lib.distributions.transforms.CatTransform([
        lib.distributions.transforms.ExpTransform(), lib.distributions.transforms.AffineTransform(0.5, 3.0)],
        dim=-1, lengths=[2, 1]), REAL),
    "Stack": (lambda lib: lib.distributions.transforms.StackTransform([
        lib.distributions.transforms.ExpTransform(), lib.distributions.transforms.TanhTransform()], dim=0), REAL),
    "CumulativeDistribution": (lambda lib: lib.distributions.transforms.CumulativeDistributionTransform(
        lib.distributions.Normal(_t(lib, 0.5), _t(lib, 2.0))), REAL),
    "Exp_inv": (lambda lib: lib.distributions.transforms.ExpTransform().inv, POS),
    "Sigmoid_inv": (lambda lib: lib.distributions.transforms.SigmoidTransform().inv, POS / 2.5),
}


def _both(fn_t, fn_e):
    try:
        t = fn_t()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            fn_e()
        return None, None
    return t, fn_e()


def _close(e, t, rtol=1e-7, atol=1e-10):
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)
    assert tuple(e.shape) == tuple(t.shape)


def _constraint_sig(c):
    return (type(c).__name__.lstrip("_"), c.event_dim, c.is_discrete)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_matches_torch(name):
    make, x = TRANSFORMS[name]
    tt, et = make(torch), make(ember)
    xt, xe = _t(torch, x).requires_grad_(), _t(ember, x).requires_grad_()
    yt, ye = tt(xt), et(xe)
    _close(ye, yt)
    inv_t, inv_e = _both(lambda: tt.inv(yt.detach()), lambda: et.inv(_t(ember, _np(yt))))
    if inv_t is not None:
        _close(inv_e, inv_t, rtol=1e-6, atol=1e-9)
    lt, le = _both(lambda: tt.log_abs_det_jacobian(xt, yt), lambda: et.log_abs_det_jacobian(xe, ye))
    loss_t, loss_e = yt.sum(), ye.sum()
    if lt is not None:
        _close(le, lt)
        loss_t, loss_e = loss_t + lt.sum(), loss_e + le.sum()
    (gt,) = torch.autograd.grad(loss_t, xt)
    (ge,) = ember.autograd.grad(loss_e, xe)
    _close(ge, gt, rtol=1e-6, atol=1e-9)
    assert et.bijective == tt.bijective
    assert _constraint_sig(et.domain) == _constraint_sig(tt.domain)
    assert _constraint_sig(et.codomain) == _constraint_sig(tt.codomain)
    st, se = _both(lambda: tt.sign, lambda: et.sign)
    if st is not None:
        assert np.all(np.asarray(_np(se) if hasattr(se, "detach") else se)
                      == np.asarray(_np(st) if hasattr(st, "detach") else st))
    assert tuple(et.forward_shape(ember.Size(x.shape))) == tuple(tt.forward_shape(torch.Size(x.shape)))
    assert tuple(et.inverse_shape(ember.Size(yt.shape))) == tuple(tt.inverse_shape(torch.Size(yt.shape)))
    assert repr(et) == repr(tt)
    assert type(et).__name__ == type(tt).__name__


def test_transform_caching_equality_and_inverse_identity():
    T = ember.distributions.transforms
    t = T.ExpTransform(cache_size=1)
    x = ember.randn(3)
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.ComposeTransform([T.ExpTransform()]).inv.inv == T.ComposeTransform([T.ExpTransform()])
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
            lib.distributions.transforms.ReshapeTransform((2, 3), (5,))
        with pytest.raises(ValueError, match="Too few dimensions on input"):
            lib.distributions.transforms.StickBreakingTransform().forward_shape(())


# -- constraints ----------------------------------------------------------------------------------

def _values():
    v = {
        "real": _rng.normal(size=(2, 3)),
        "with_nan": np.array([[1.0, np.nan, 0.0]]),
        "integers": np.array([[0.0, 1.0, 2.0, 5.0], [-1.0, 3.0, 0.5, 7.0]]),
        "unit": np.array([[0.0, 0.5, 1.0], [1.5, -0.1, 0.3]]),
        "simplex": np.array([[0.2, 0.3, 0.5], [0.5, 0.6, -0.1], [0.4, 0.4, 0.1]]),
        "one_hot": np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),
        "lower": np.array([np.tril(_rng.uniform(0.5, 1, (3, 3))), _rng.normal(size=(3, 3)),
                           np.tril(_rng.normal(size=(3, 3))) - 2 * np.eye(3)]),
        "pd": np.array([np.eye(3) * 2 + 0.1, -np.eye(3), [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]),
        "corr_chol": np.array([np.linalg.cholesky(np.array([[1.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.0]])),
                               np.eye(3) * 2]),
    }
    return v


def _constraints(lib):
    C = lib.distributions.constraints
    return {
        "real": C.real, "positive": C.positive, "nonnegative": C.nonnegative, "boolean": C.boolean,
        "unit_interval": C.unit_interval, "interval": C.interval(-0.5, 0.7),
        "half_open_interval": C.half_open_interval(0.0, 1.0), "greater_than": C.greater_than(0.2),
        "greater_than_eq": C.greater_than_eq(0.0), "less_than": C.less_than(0.5),
        "integer_interval": C.integer_interval(0, 5), "nonnegative_integer": C.nonnegative_integer,
        "positive_integer": C.positive_integer, "simplex": C.simplex, "one_hot": C.one_hot,
        "real_vector": C.real_vector, "independent": C.independent(C.positive, 1),
        "lower_triangular": C.lower_triangular, "lower_cholesky": C.lower_cholesky,
        "corr_cholesky": C.corr_cholesky, "square": C.square, "symmetric": C.symmetric,
        "positive_definite": C.positive_definite, "positive_semidefinite": C.positive_semidefinite,
        "multinomial": C.multinomial(5),
        "cat": C.cat([C.positive, C.real], dim=-1, lengths=[1, 2]),
        "stack": C.stack([C.positive, C.unit_interval, C.real], dim=-1),
    }


@pytest.mark.parametrize("cname", list(_constraints(torch)))
def test_constraint_checks_match_torch(cname):
    tc, ec = _constraints(torch)[cname], _constraints(ember)[cname]
    assert _constraint_sig(ec) == _constraint_sig(tc)
    assert repr(ec) == repr(tc)
    checked = 0
    for vname, v in _values().items():
        try:
            t = tc.check(torch.tensor(v))
        except Exception as err:  # wrong shape for this constraint: ember must refuse too
            with pytest.raises(type(err)):
                ec.check(ember.tensor(v))
            continue
        e = ec.check(ember.tensor(v))
        assert _np(e).tolist() == _np(t).tolist(), vname
        checked += 1
    assert checked


def test_dependent_constraints():
    for lib in (torch, ember):
        C = lib.distributions.constraints
        assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
        with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
            C.dependent.check(lib.zeros(1))
        with pytest.raises(NotImplementedError, match=".event_dim cannot be determined statically"):
            C.dependent.event_dim
        assert C.dependent(is_discrete=True, event_dim=1).event_dim == 1


# -- biject_to / transform_to ---------------------------------------------------------------------

@pytest.mark.parametrize("cname", list(_constraints(torch)))
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registries_match_torch(cname, registry):
    tc, ec = _constraints(torch)[cname], _constraints(ember)[cname]
    treg, ereg = getattr(torch.distributions, registry), getattr(ember.distributions, registry)
    try:
        tt = treg(tc)
    except NotImplementedError as err:
        with pytest.raises(NotImplementedError, match=str(err)):
            ereg(ec)
        return
    et = ereg(ec)
    assert type(et).__name__ == type(tt).__name__
    n = {"corr_cholesky": 3, "lower_cholesky": 9, "positive_definite": 9, "positive_semidefinite": 9}.get(cname, 3)
    x = _rng.normal(size=(2, n))
    xt, xe = torch.tensor(x), ember.tensor(x)
    if cname in ("lower_cholesky", "positive_definite", "positive_semidefinite"):
        xt, xe = xt.reshape(2, 3, 3), xe.reshape(2, 3, 3)
    yt, ye = tt(xt), et(xe)
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=1e-7, atol=1e-10)
    assert bool(ec.check(ye).all())


def test_registering_a_new_constraint():
    C, T = ember.distributions.constraints, ember.distributions.transforms

    class _Odd(C.Constraint):
        def check(self, value):
            return value % 2 == 1

    ember.distributions.biject_to.register(_Odd, lambda c: T.AffineTransform(1.0, 2.0))
    assert isinstance(ember.distributions.biject_to(_Odd()), T.AffineTransform)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        ember.distributions.biject_to.register(int, lambda c: None)


def test_utils_match_torch():
    import torch.distributions.utils as tu

    import ember.distributions.utils as eu
    p = np.array([[0.1, 0.6, 0.3], [0.0, 0.5, 0.5]])
    for is_binary in (False, True):
        np.testing.assert_allclose(_np(eu.probs_to_logits(ember.tensor(p), is_binary)),
                                   _np(tu.probs_to_logits(torch.tensor(p), is_binary)))
        np.testing.assert_allclose(_np(eu.logits_to_probs(ember.tensor(REAL), is_binary)),
                                   _np(tu.logits_to_probs(torch.tensor(REAL), is_binary)))
    np.testing.assert_allclose(_np(eu.clamp_probs(ember.tensor(p))), _np(tu.clamp_probs(torch.tensor(p))))
    m = _rng.normal(size=(2, 4, 4))
    for diag in (0, -1, -2):
        v = _np(tu.tril_matrix_to_vec(torch.tensor(m), diag))
        np.testing.assert_allclose(_np(eu.tril_matrix_to_vec(ember.tensor(m), diag)), v)
        np.testing.assert_allclose(_np(eu.vec_to_tril_matrix(ember.tensor(v), diag)),
                                   _np(tu.vec_to_tril_matrix(torch.tensor(v), diag)))
    a, b = eu.broadcast_all(ember.zeros(2, 1, dtype=ember.float64), 3.0)
    assert a.shape == b.shape == (2, 1) and b.dtype == ember.float64
    for lib, u in ((torch, tu), (ember, eu)):
        with pytest.raises(ValueError, match="must all be instances of Number, torch.Tensor or objects"):
            u.broadcast_all(lib.zeros(1), "x")
    assert eu.euler_constant == tu.euler_constant
