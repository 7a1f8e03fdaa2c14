"""ReLU's array backward (``result != 0`` as the mask) against the composite it replaces under
``create_graph`` (``not result <= 0``), at the special values where they could differ."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-300, 3.0, -3.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("inplace", [False, True])
def test_relu_array_backward_matches_composite(dtype, inplace):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(17), SPECIAL]).astype(dtype)
    grad = ember.tensor(rng.standard_normal(x.shape).astype(dtype))
    grads = []
    for create_graph in (False, True):
        xe = ember.tensor(x, requires_grad=True)
        y = F.relu(xe * 1.0, inplace=inplace)
        (g,) = ember.autograd.grad(y, xe, grad, create_graph=create_graph)
        grads.append(g.detach().numpy())
    assert grads[0].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(grads[0], grads[1])
    nan_at = np.isnan(x)
    np.testing.assert_array_equal(grads[0][nan_at], grad.numpy()[nan_at])  # NaN passes
