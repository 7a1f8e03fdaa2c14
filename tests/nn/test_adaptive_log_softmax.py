"""AdaptiveLogSoftmaxWithLoss against torch (weights copied through state_dict)."""
import numpy as np
import pytest
import torch
import torch.nn as tnn

import ember
import ember.nn as nn


def _pair(*args, **kwargs):
    torch.manual_seed(0)
    tm = tnn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    em = nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    assert repr(em) == repr(tm)
    return em, tm


def _close(e, t):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cutoffs,kwargs,targets", [
    ([4, 8], {}, [0, 5, 9, 3, 11, 7]),
    ([2], {"head_bias": True, "div_value": 2.0}, [1, 1, 0, 0]),       # shortlist only
    ([3, 6, 9], {"div_value": 1.5}, [4, 10, 7, 11]),                   # tails only
])
def test_forward_backward_log_prob_predict_match_torch(cutoffs, kwargs, targets):
    em, tm = _pair(8, 12, cutoffs, **kwargs)
    x = np.random.default_rng(0).standard_normal((len(targets), 8))
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tout = tm(tx, torch.tensor(targets))
    eout = em(ex, ember.tensor(targets))
    _close(eout.output, tout.output)
    _close(eout.loss, tout.loss)
    assert eout._fields == tout._fields
    tout.loss.backward()
    eout.loss.backward()
    _close(ex.grad, tx.grad)
    for (name, ep), (_, tp) in zip(em.named_parameters(), tm.named_parameters()):
        assert (ep.grad is None) == (tp.grad is None), name
        if tp.grad is not None:
            _close(ep.grad, tp.grad)
    with torch.no_grad(), ember.no_grad():
        _close(em.log_prob(ex), tm.log_prob(tx))
        for scale in (1.0, 30.0):  # large inputs push predictions into the tails
            np.testing.assert_array_equal(em.predict(ex * scale).numpy(),
                                          tm.predict(tx * scale).numpy())


def test_unbatched_matches_torch():
    em, tm = _pair(6, 10, [3, 7])
    x = np.random.default_rng(1).standard_normal(6)
    tout = tm(torch.tensor(x), torch.tensor(8))
    eout = em(ember.tensor(x), ember.tensor(8))
    assert tuple(eout.output.shape) == tuple(tout.output.shape) == ()
    _close(eout.output, tout.output)
    _close(eout.loss, tout.loss)


def test_errors_match_torch():
    for args in [(8, 12, []), (8, 12, [4, 4]), (8, 12, [8, 4]), (8, 12, [0, 4]), (8, 12, [12])]:
        with pytest.raises(ValueError) as t_err:
            tnn.AdaptiveLogSoftmaxWithLoss(*args)
        with pytest.raises(ValueError) as e_err:
            nn.AdaptiveLogSoftmaxWithLoss(*args)
        assert str(e_err.value) == str(t_err.value)
    em, tm = _pair(4, 6, [2])
    cases = [((3, 4), [0, 1]), ((3, 4), [[0]]), ((2, 4), [0, 9]), ((2, 2, 4), [0, 1])]
    for shape, target in cases:
        with pytest.raises(RuntimeError) as t_err:
            tm(torch.zeros(shape, dtype=torch.float64), torch.tensor(target))
        with pytest.raises(RuntimeError) as e_err:
            em(ember.zeros(shape, dtype=ember.float64), ember.tensor(target))
        assert str(e_err.value).split(",")[0] == str(t_err.value).split(",")[0].strip("('")
