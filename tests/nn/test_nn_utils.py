"""nn.utils: gradient clipping and parameter/vector conversion against torch."""
import numpy as np
import pytest
import torch

import ember
import ember.nn as nn
import ember.nn.utils as U


def _params_with_grads(lib, scale=1.0):
    rng = np.random.default_rng(0)
    params = []
    for shape in ((3, 4), (4,), (2, 2, 2)):
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape)))
        p.grad = lib.tensor(rng.standard_normal(shape) * scale)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    pe, pt = _params_with_grads(ember), _params_with_grads(torch)
    total_e = U.clip_grad_norm_(pe, max_norm, norm_type=norm_type, foreach=True)
    total_t = torch.nn.utils.clip_grad_norm_(pt, max_norm, norm_type=norm_type)
    assert total_e.item() == pytest.approx(total_t.item(), rel=1e-12)
    for a, b in zip(pe, pt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_edge_cases():
    assert U.clip_grad_norm_([nn.Parameter(ember.ones(2))], 1.0).item() == 0.0
    p = nn.Parameter(ember.ones(2))
    p.grad = ember.tensor([3.0, 4.0])
    assert U.clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)  # a single tensor works
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    p.grad = ember.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        U.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert np.isnan(U.clip_grad_norm_([p], 1.0).item())


def test_clip_grad_value_matches_torch():
    pe, pt = _params_with_grads(ember), _params_with_grads(torch)
    U.clip_grad_value_(pe, 0.5)
    torch.nn.utils.clip_grad_value_(pt, 0.5)
    for a, b in zip(pe, pt):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_parameters_vector_round_trip():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = U.parameters_to_vector(m.parameters())
    assert vec.shape == (sum(p.numel() for p in m.parameters()),)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    np.testing.assert_array_equal(vec.detach().numpy(),
                                  torch.nn.utils.parameters_to_vector(tm.parameters()).detach().numpy())
    new = ember.arange(vec.numel(), dtype=ember.float32)
    U.vector_to_parameters(new, m.parameters())
    assert m[0].weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert m[1].bias.tolist() == [10.0]
    assert isinstance(m[0].weight, nn.Parameter)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        U.vector_to_parameters([1.0], m.parameters())
    out = m(ember.ones(1, 3))
    out.sum().backward()
    assert m[0].weight.grad is not None
