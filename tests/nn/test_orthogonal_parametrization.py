"""nn.utils.parametrizations.orthogonal against torch: the weight on registration, and, with
torch's parametrization state copied (its random completion of rectangular bases included),
the weight and its gradients for each map."""
import numpy as np
import pytest
import torch

import ember
from ember.nn.utils.parametrizations import orthogonal


def _close(e, t, tol=1e-10):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape,orthogonal_map", [
    ((4, 4), None), ((4, 4), "cayley"), ((4, 4), "householder"),
    ((6, 3), None), ((3, 6), "matrix_exp"), ((5, 2), "cayley"), ((2, 5), "householder"),
])
def test_orthogonal_matches_torch(shape, orthogonal_map):
    rng = np.random.default_rng(sum(shape))
    w = rng.standard_normal(shape)
    tm = torch.nn.Linear(shape[1], shape[0], bias=False).double()
    em = ember.nn.Linear(shape[1], shape[0], bias=False).double()
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(w))
    em.load_state_dict({"weight": ember.tensor(w)})
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=orthogonal_map)
    assert orthogonal(em, orthogonal_map=orthogonal_map) is em
    assert list(em.state_dict()) == list(tm.state_dict())
    if shape[0] == shape[1]:  # no random completion: the registered weights agree
        _close(em.weight, tm.weight)
    small = min(shape)
    gram = (em.weight.mT @ em.weight) if shape[0] >= shape[1] else (em.weight @ em.weight.mT)
    np.testing.assert_allclose(gram.detach().numpy(), np.eye(small), atol=1e-12)
    # move the unconstrained parameter and compare the maps and their gradients
    state = {k: v.detach().clone() for k, v in tm.state_dict().items()}
    key = "parametrizations.weight.original"
    original = state[key].numpy()
    tril = np.tril(rng.standard_normal(original.shape) * 0.3, -1 if shape[0] >= shape[1] else 1)
    state[key] = torch.tensor(original + tril)
    tm.load_state_dict(state)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in state.items()})
    x = rng.standard_normal((3, shape[1]))
    tout, eout = tm(torch.tensor(x)), em(ember.tensor(x))
    _close(eout, tout)
    g = rng.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(g))
    eout.backward(ember.tensor(g))
    _close(em.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad,
           1e-8)


def test_orthogonal_errors_match_torch():
    cases = [(lambda lib: lib.nn.Linear(3, 3), dict(name="nope"), ValueError),
             (lambda lib: lib.nn.LayerNorm(3), {}, ValueError),
             (lambda lib: lib.nn.Linear(3, 3), dict(orthogonal_map="qr"), ValueError)]
    for make, kwargs, error in cases:
        with pytest.raises(error) as t_err:
            torch.nn.utils.parametrizations.orthogonal(make(torch), **kwargs)
        with pytest.raises(error) as e_err:
            orthogonal(make(ember), **kwargs)
        assert str(e_err.value).split("'")[0] == str(t_err.value).split("'")[0]


def test_householder_without_trivialization_needs_geqrf():
    with pytest.raises(NotImplementedError, match="geqrf"):
        orthogonal(ember.nn.Linear(3, 5), orthogonal_map="householder", use_trivialization=False)


@pytest.mark.parametrize("shape,orthogonal_map", [((4, 4), "matrix_exp"), ((5, 3), "cayley")])
def test_without_trivialization_matches_torch(shape, orthogonal_map):
    # torch's right inverse refuses (and registration keeps the raw weight as the parameter)
    w = np.random.default_rng(1).standard_normal(shape)
    tm = torch.nn.Linear(shape[1], shape[0], bias=False).double()
    em = ember.nn.Linear(shape[1], shape[0], bias=False).double()
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(w))
    em.load_state_dict({"weight": ember.tensor(w)})
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=orthogonal_map,
                                               use_trivialization=False)
    orthogonal(em, orthogonal_map=orthogonal_map, use_trivialization=False)
    assert list(em.state_dict()) == list(tm.state_dict())
    _close(em.weight, tm.weight)
    with pytest.raises(NotImplementedError) as t_err:
        tm.weight = torch.eye(*shape, dtype=torch.float64)
    with pytest.raises(NotImplementedError) as e_err:
        em.weight = ember.eye(*shape, dtype=ember.float64)
    assert str(e_err.value) == str(t_err.value)
