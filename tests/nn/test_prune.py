"""ember.nn.utils.prune against torch.nn.utils.prune: masks of the deterministic methods on the
same weights, mask statistics of the random ones, state_dict keys, forward outputs and gradients
after pruning, iterative pruning and remove."""
import math

import numpy as np
import pytest
import torch
from torch.nn.utils import prune as tprune

import ember
from ember.nn.utils import prune as eprune


def _pair(make, seed=0):
    """The same layer in torch and ember (float64, torch's weights copied through state_dict)."""
    torch.manual_seed(seed)
    t = make(torch).double()
    e = make(ember).double()
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, e


def _linear(lib):
    return lib.nn.Linear(7, 5)


def _conv(lib):
    return lib.nn.Conv2d(4, 6, 3)


def _assert_same(t_tensor, e_tensor):
    np.testing.assert_allclose(e_tensor.detach().numpy(), t_tensor.detach().numpy(),
                               rtol=1e-12, atol=1e-12)


def _assert_same_forward_backward(t, e, in_shape):
    x = np.random.default_rng(1).standard_normal(in_shape)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    tout, eout = t(tx), e(ex)
    _assert_same(tout, eout)
    g = np.random.default_rng(2).standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(g))
    eout.backward(ember.tensor(g))
    _assert_same(tx.grad, ex.grad)
    tparams, eparams = dict(t.named_parameters()), dict(e.named_parameters())
    assert list(eparams) == list(tparams)
    for name in tparams:
        _assert_same(tparams[name].grad, eparams[name].grad)


@pytest.mark.parametrize("amount", [0.3, 4, 0, 0.0, 1.0])
def test_l1_unstructured_mask_state_dict_forward_and_grads(amount):
    t, e = _pair(_linear)
    assert eprune.l1_unstructured(e, "weight", amount=amount) is e
    tprune.l1_unstructured(t, "weight", amount=amount)
    _assert_same(t.weight_mask, e.weight_mask)
    assert e.weight_mask.dtype == ember.float64
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert [n for n, _ in e.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in e.named_buffers()] == ["weight_mask"]
    assert "weight" not in e._parameters and isinstance(e.weight, ember.Tensor)
    _assert_same(t.weight, e.weight)
    _assert_same_forward_backward(t, e, (3, 7))


def test_l1_unstructured_with_importance_scores():
    t, e = _pair(_conv)
    scores = np.random.default_rng(5).standard_normal(tuple(t.weight.shape))
    tprune.l1_unstructured(t, "weight", amount=0.5, importance_scores=torch.tensor(scores))
    eprune.l1_unstructured(e, "weight", amount=0.5, importance_scores=ember.tensor(scores))
    _assert_same(t.weight_mask, e.weight_mask)
    _assert_same_forward_backward(t, e, (2, 4, 6, 6))


@pytest.mark.parametrize("n,dim,amount", [(2, 0, 2), (1, 1, 0.5), (math.inf, -1, 1),
                                          (-math.inf, 0, 0.4), (3, 2, 1), (1, 0, 0)])
def test_ln_structured_matches_torch(n, dim, amount):
    t, e = _pair(_conv)
    tprune.ln_structured(t, "weight", amount=amount, n=n, dim=dim)
    eprune.ln_structured(e, "weight", amount=amount, n=n, dim=dim)
    _assert_same(t.weight_mask, e.weight_mask)
    _assert_same_forward_backward(t, e, (2, 4, 6, 6))


@pytest.mark.parametrize("n,dim", [("fro", 0), ("fro", 1), (0.5, 1)])
def test_ln_structured_of_a_matrix_matches_torch(n, dim):
    t, e = _pair(_linear)
    tprune.ln_structured(t, "weight", amount=2, n=n, dim=dim)
    eprune.ln_structured(e, "weight", amount=2, n=n, dim=dim)
    _assert_same(t.weight_mask, e.weight_mask)
    _assert_same_forward_backward(t, e, (3, 7))


def test_custom_from_mask_matches_torch_and_keeps_float_mask():
    t, e = _pair(_linear)
    mask = [0, 1, 0, 1, 1]
    tprune.custom_from_mask(t, "bias", mask=torch.tensor(mask))
    eprune.custom_from_mask(e, "bias", mask=ember.tensor(mask))
    _assert_same(t.bias_mask, e.bias_mask)
    assert e.bias_mask.dtype == ember.float64
    assert list(e.state_dict()) == list(t.state_dict())
    _assert_same_forward_backward(t, e, (3, 7))


def test_global_unstructured_matches_torch():
    pairs = [_pair(_linear, 0), _pair(_conv, 1)]
    tprune.global_unstructured([(pairs[0][0], "weight"), (pairs[1][0], "weight"),
                                (pairs[0][0], "bias")],
                               pruning_method=tprune.L1Unstructured, amount=60)
    eprune.global_unstructured([(pairs[0][1], "weight"), (pairs[1][1], "weight"),
                                (pairs[0][1], "bias")],
                               pruning_method=eprune.L1Unstructured, amount=60)
    zeros = 0
    for t, e in pairs:
        assert list(e.state_dict()) == list(t.state_dict())
        for name, mask in t.named_buffers():
            _assert_same(mask, getattr(e, name))
            zeros += int((mask == 0).sum())
    assert zeros == 60
    _assert_same_forward_backward(*pairs[0], (3, 7))
    _assert_same_forward_backward(*pairs[1], (2, 4, 6, 6))


def test_global_unstructured_with_importance_scores_and_earlier_masks():
    t, e = _pair(_linear)
    tprune.l1_unstructured(t, "weight", amount=5)
    eprune.l1_unstructured(e, "weight", amount=5)
    scores = np.abs(np.random.default_rng(3).standard_normal(5)) + 1
    tprune.global_unstructured([(t, "weight"), (t, "bias")], tprune.L1Unstructured,
                               importance_scores={(t, "bias"): torch.tensor(scores)}, amount=0.25)
    eprune.global_unstructured([(e, "weight"), (e, "bias")], eprune.L1Unstructured,
                               importance_scores={(e, "bias"): ember.tensor(scores)}, amount=0.25)
    _assert_same(t.weight_mask, e.weight_mask)
    _assert_same(t.bias_mask, e.bias_mask)
    assert isinstance(e._forward_pre_hooks[next(iter(e._forward_pre_hooks))],
                      eprune.PruningContainer)


def test_iterative_pruning_combines_masks_in_a_container():
    t, e = _pair(_conv)
    for lib, lib_prune, m in ((torch, tprune, t), (ember, eprune, e)):
        lib_prune.l1_unstructured(m, "weight", amount=0.2)
        lib_prune.ln_structured(m, "weight", amount=2, n=2, dim=0)
        lib_prune.l1_unstructured(m, "weight", amount=10)
        lib_prune.custom_from_mask(m, "bias", mask=lib.tensor([1, 0, 1, 1, 0, 1]))
    _assert_same(t.weight_mask, e.weight_mask)
    _assert_same(t.bias_mask, e.bias_mask)
    hooks = list(e._forward_pre_hooks.values())
    assert [type(h).__name__ for h in hooks] == ["PruningContainer", "CustomFromMask"]
    container = hooks[0]
    assert len(container) == 3 and container._tensor_name == "weight"
    assert [type(m).__name__ for m in container] == ["L1Unstructured", "LnStructured",
                                                     "L1Unstructured"]
    assert isinstance(container[1], eprune.LnStructured)
    assert list(e.state_dict()) == list(t.state_dict())
    _assert_same_forward_backward(t, e, (2, 4, 6, 6))


def test_pre_hook_recomputes_weight_after_orig_changes():
    t, e = _pair(_linear)
    tprune.l1_unstructured(t, "weight", amount=0.5)
    eprune.l1_unstructured(e, "weight", amount=0.5)
    with torch.no_grad():
        t.weight_orig.mul_(3)
    with ember.no_grad():
        e.weight_orig.mul_(3)
    x = np.ones((1, 7))
    _assert_same(t(torch.tensor(x)), e(ember.tensor(x)))
    _assert_same(t.weight, e.weight)


def test_remove_restores_a_plain_parameter():
    t, e = _pair(_conv)
    tprune.random_structured(t, "weight", amount=2, dim=0)
    eprune.custom_from_mask(e, "weight", mask=ember.tensor(t.weight_mask.numpy()))
    tprune.remove(t, "weight")
    assert eprune.remove(e, "weight") is e
    assert isinstance(e.weight, ember.nn.Parameter) and e.weight.requires_grad
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert not e._forward_pre_hooks
    assert not eprune.is_pruned(e)
    _assert_same(t.weight, e.weight)
    _assert_same_forward_backward(t, e, (2, 4, 6, 6))


def test_is_pruned_looks_into_submodules():
    model = ember.nn.Sequential(ember.nn.Linear(3, 3), ember.nn.ReLU(), ember.nn.Linear(3, 2))
    assert not eprune.is_pruned(model)
    eprune.identity(model[2], "bias")
    assert eprune.is_pruned(model)
    np.testing.assert_array_equal(model[2].bias_mask.numpy(), np.ones(2))


def test_identity_keeps_the_values():
    t, e = _pair(_linear)
    tprune.identity(t, "weight")
    eprune.identity(e, "weight")
    _assert_same(t.weight, e.weight)
    assert list(e.state_dict()) == list(t.state_dict())


def test_random_unstructured_prunes_the_amount_of_unpruned_units():
    ember.manual_seed(0)
    m = ember.nn.Linear(20, 10)
    eprune.random_unstructured(m, "weight", amount=0.3)
    mask = m.weight_mask.numpy()
    assert set(np.unique(mask)) == {0.0, 1.0}
    assert (mask == 0).sum() == 60
    assert np.array_equal(m.weight.detach().numpy() == 0, mask == 0)
    eprune.random_unstructured(m, "weight", amount=50)
    new_mask = m.weight_mask.numpy()
    assert (new_mask == 0).sum() == 110
    assert np.all(new_mask[mask == 0] == 0)  # pruned units stay pruned


def test_random_unstructured_is_uniform_over_units():
    counts = np.zeros(40)
    ember.manual_seed(1)
    for _ in range(300):
        m = ember.nn.Linear(40, 1)
        eprune.random_unstructured(m, "weight", amount=10)
        counts += (m.weight_mask.numpy()[0] == 0)
    # each unit is pruned with probability 1/4: 75 of 300 times, sd 7.5
    assert abs(counts.mean() - 75) < 1e-9
    assert counts.min() > 40 and counts.max() < 110


def test_random_structured_prunes_whole_channels():
    ember.manual_seed(2)
    m = ember.nn.Conv2d(4, 8, 3)
    eprune.random_structured(m, "weight", amount=0.25, dim=0)
    mask = m.weight_mask.numpy()
    channel_kept = mask.reshape(8, -1)
    assert np.all((channel_kept == 0).all(1) | (channel_kept == 1).all(1))
    assert (channel_kept == 0).all(1).sum() == 2
    eprune.random_structured(m, "weight", amount=3, dim=0)
    new_mask = m.weight_mask.numpy().reshape(8, -1)
    assert (new_mask == 0).all(1).sum() == 5
    assert np.all(new_mask[(channel_kept == 0).all(1)] == 0)


def test_random_structured_channels_are_uniform():
    counts = np.zeros(6)
    ember.manual_seed(3)
    for _ in range(300):
        m = ember.nn.Linear(3, 6)
        eprune.random_structured(m, "weight", amount=2, dim=0)
        counts += (m.weight_mask.numpy() == 0).all(1)
    assert counts.sum() == 600
    assert counts.min() > 60 and counts.max() < 140  # 100 each, sd 8.2


def test_prune_method_on_a_tensor():
    x = np.array([[0.5, -3.0, 1.0], [2.0, -0.1, 4.0]])
    tout = tprune.L1Unstructured(amount=2).prune(torch.tensor(x))
    eout = eprune.L1Unstructured(amount=2).prune(ember.tensor(x))
    _assert_same(tout, eout)
    scores = np.arange(6.0).reshape(2, 3)
    tout = tprune.LnStructured(amount=1, n=1, dim=1).prune(
        torch.tensor(x), importance_scores=torch.tensor(scores))
    eout = eprune.LnStructured(amount=1, n=1, dim=1).prune(
        ember.tensor(x), importance_scores=ember.tensor(scores))
    _assert_same(tout, eout)


def test_custom_pruning_method_through_apply():
    class EveryOther(eprune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    m = ember.nn.Linear(2, 2)
    EveryOther.apply(m, "bias")
    np.testing.assert_array_equal(m.bias_mask.numpy(), [0.0, 1.0])
    EveryOther.apply(m, "bias")  # second time over the unpruned units only: [1.0] -> [0.0]
    np.testing.assert_array_equal(m.bias_mask.numpy(), [0.0, 0.0])


def test_pruning_survives_state_dict_round_trip():
    _, src = _pair(_linear)
    eprune.l1_unstructured(src, "weight", amount=0.5)
    dst = ember.nn.Linear(7, 5).double()
    eprune.identity(dst, "weight")
    dst.load_state_dict(src.state_dict())
    x = ember.ones(2, 7, dtype=ember.float64)
    _assert_same(src(x), dst(x))


@pytest.mark.parametrize("make_call,exc", [
    (lambda p, lib: p.l1_unstructured(lib.nn.Linear(2, 3), "weight", amount=1.5), ValueError),
    (lambda p, lib: p.l1_unstructured(lib.nn.Linear(2, 3), "weight", amount=-1), ValueError),
    (lambda p, lib: p.l1_unstructured(lib.nn.Linear(2, 3), "weight", amount="1"), TypeError),
    (lambda p, lib: p.l1_unstructured(lib.nn.Linear(2, 3), "weight", amount=7), ValueError),
    (lambda p, lib: p.ln_structured(lib.nn.Linear(2, 3), "bias", 1, n=2, dim=0), ValueError),
    (lambda p, lib: p.ln_structured(lib.nn.Linear(2, 3), "weight", 1, n=2, dim=2), IndexError),
    (lambda p, lib: p.remove(lib.nn.Linear(2, 3), "weight"), ValueError),
    (lambda p, lib: p.global_unstructured([(lib.nn.Linear(2, 3), "weight")], p.RandomStructured,
                                          amount=1), TypeError),
    (lambda p, lib: p.global_unstructured(3, p.L1Unstructured, amount=1), TypeError),
    (lambda p, lib: p.global_unstructured([], p.L1Unstructured, importance_scores=[1],
                                          amount=1), TypeError),
    (lambda p, lib: p.PruningContainer().add_pruning_method(3), TypeError),
])
def test_bad_input_raises_torch_exceptions(make_call, exc):
    with pytest.raises(exc) as t_err:
        make_call(tprune, torch)
    with pytest.raises(exc) as e_err:
        make_call(eprune, ember)
    assert str(e_err.value).replace("ember", "torch") == str(t_err.value)


def test_failed_pruning_leaves_the_parameter_in_place():
    m = ember.nn.Linear(2, 3)
    weight = m.weight
    with pytest.raises(ValueError, match="amount=9 should be smaller"):
        eprune.l1_unstructured(m, "weight", amount=9)
    assert m.weight is weight and list(m.state_dict()) == ["bias", "weight"]  # as torch's
    assert not eprune.is_pruned(m)


def test_prune_reachable_from_import_ember():
    assert ember.nn.utils.prune is eprune
    for name in ("BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
                 "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask",
                 "identity", "random_unstructured", "l1_unstructured", "random_structured",
                 "ln_structured", "global_unstructured", "custom_from_mask", "remove",
                 "is_pruned"):
        assert hasattr(eprune, name), name
