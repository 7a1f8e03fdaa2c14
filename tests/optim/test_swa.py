"""``ember.optim.swa_utils`` against ``torch.optim.swa_utils``: averaged weights after the same
updates (SWA, EMA, custom functions, with and without buffers), SWALR's learning rates and
``update_bn``'s running statistics."""
import numpy as np
import pytest
import torch

import ember


def model(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                             lib.nn.Linear(4, 2))


def to_lib(lib, array):
    return lib.tensor(np.asarray(array))


def state_arrays(module):
    return {k: np.asarray(v.detach().numpy()) for k, v in module.state_dict().items()}


def twin_models():
    """A torch model and an ember model with the same weights."""
    torch.manual_seed(0)
    t = model(torch)
    e = model(ember)
    e.load_state_dict({k: to_lib(ember, v.numpy()) for k, v in t.state_dict().items()})
    return t, e


def assert_states_close(actual, expected):
    actual, expected = state_arrays(actual), state_arrays(expected)
    assert actual.keys() == expected.keys()
    for key in expected:
        assert actual[key].dtype == expected[key].dtype, key
        np.testing.assert_allclose(actual[key], expected[key], rtol=1e-6, atol=1e-7,
                                   err_msg=key)


AVERAGING = {
    "swa": lambda su: {},
    "ema-multi": lambda su: {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
    "swa-multi": lambda su: {"multi_avg_fn": su.get_swa_multi_avg_fn()},
    "ema-fn": lambda su: {"avg_fn": su.get_ema_avg_fn(0.8)},
    "swa-fn": lambda su: {"avg_fn": su.get_swa_avg_fn()},
    "custom-fn": lambda su: {"avg_fn": lambda avg, cur, n: 0.25 * avg + 0.75 * cur},
}


def run_averaging(lib, net, kind, use_buffers, batches, shifts):
    swa_utils = lib.optim.swa_utils
    averaged = swa_utils.AveragedModel(net, use_buffers=use_buffers, **AVERAGING[kind](swa_utils))
    for batch, shift in zip(batches, shifts):
        with lib.no_grad():
            for p in net.parameters():
                p.add_(to_lib(lib, shift[:p.numel()].reshape(tuple(p.shape))))
        net.train()
        net(to_lib(lib, batch))
        averaged.update_parameters(net)
    return averaged


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", sorted(AVERAGING))
def test_averaged_model_matches_torch(kind, use_buffers):
    if kind == "swa-multi" and use_buffers:
        pytest.skip("torch's swa multi_avg_fn rejects the integer num_batches_tracked buffer")
    rng = np.random.default_rng(1)
    batches = [rng.standard_normal((5, 3), dtype=np.float32) for _ in range(4)]
    shifts = [rng.standard_normal(16, dtype=np.float32) for _ in range(4)]
    t, e = twin_models()
    expected = run_averaging(torch, t, kind, use_buffers, batches, shifts)
    actual = run_averaging(ember, e, kind, use_buffers, batches, shifts)
    assert int(actual.n_averaged) == int(expected.n_averaged) == 4
    assert_states_close(actual, expected)
    x = rng.standard_normal((2, 3), dtype=np.float32)
    expected.eval()
    actual.eval()
    np.testing.assert_allclose(actual(to_lib(ember, x)).detach().numpy(),
                               expected(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_averaged_model_is_a_copy_with_the_same_state_dict_keys():
    t, e = twin_models()
    expected = torch.optim.swa_utils.AveragedModel(t)
    actual = ember.optim.swa_utils.AveragedModel(e)
    assert list(actual.state_dict()) == list(expected.state_dict())
    assert actual.n_averaged.dtype == ember.int64 and actual.n_averaged.shape == ()
    assert actual.module is not e
    with ember.no_grad():
        e[0].weight.add_(1.0)
    assert not np.allclose(actual.module[0].weight.detach().numpy(), e[0].weight.detach().numpy())


@pytest.mark.parametrize("dtype", ["float64", "int64"])
@pytest.mark.parametrize("name,args", [("get_ema_multi_avg_fn", (0.9,)),
                                       ("get_swa_multi_avg_fn", ())])
def test_multi_avg_fns_update_in_place_like_torch(name, args, dtype):
    if name == "get_swa_multi_avg_fn" and dtype == "int64":
        pytest.skip("torch raises for integer tensors here")
    values = {}
    for lib in (torch, ember):
        fn = getattr(lib.optim.swa_utils, name)(*args)
        averaged = [lib.tensor([10, 20], dtype=getattr(lib, dtype))]
        fn(averaged, [lib.tensor([1, 7], dtype=getattr(lib, dtype))], lib.tensor(3))
        values[lib] = averaged[0].numpy()
    assert values[ember].dtype == values[torch].dtype
    np.testing.assert_allclose(values[ember], values[torch], rtol=1e-12)


@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_invalid_decay_raises_like_torch(decay):
    for lib in (torch, ember):
        for name in ("get_ema_multi_avg_fn", "get_ema_avg_fn"):
            with pytest.raises(ValueError, match="Invalid decay value"):
                getattr(lib.optim.swa_utils, name)(decay)


def swalr_lrs(lib, steps=25, **kwargs):
    params = [lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)]
    opt = lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.5)
    scheduler = lib.optim.swa_utils.SWALR(opt, **kwargs)
    out = [scheduler.get_last_lr()]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        out.append(scheduler.get_last_lr())
    return np.array(out, dtype=float)


@pytest.mark.parametrize("kwargs", [
    {"swa_lr": 0.05},
    {"swa_lr": [0.05, 0.01], "anneal_epochs": 5, "anneal_strategy": "linear"},
    {"swa_lr": 0.2, "anneal_epochs": 0},
    {"swa_lr": 0.02, "anneal_epochs": 1, "anneal_strategy": "cos"},
])
def test_swalr_matches_torch(kwargs):
    np.testing.assert_allclose(swalr_lrs(ember, **kwargs), swalr_lrs(torch, **kwargs),
                               rtol=1e-12)


def test_swalr_after_another_schedule_matches_torch():
    def run(lib):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.5)
        cosine = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
        swa = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=4)
        out = []
        for epoch in range(20):
            opt.step()
            (swa if epoch >= 8 else cosine).step()
            out.append(opt.param_groups[0]["lr"])
        return np.array(out)
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-12)


@pytest.mark.parametrize("kwargs,error", [
    ({"swa_lr": 0.1, "anneal_strategy": "step"}, "anneal_strategy must be one of"),
    ({"swa_lr": 0.1, "anneal_epochs": -1}, "anneal_epochs must be equal or greater than 0"),
    ({"swa_lr": 0.1, "anneal_epochs": 2.0}, "anneal_epochs must be equal or greater than 0"),
    ({"swa_lr": [0.1, 0.2, 0.3]}, "swa_lr must have the same length"),
])
def test_swalr_errors_match_torch(kwargs, error):
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.5)
        with pytest.raises(ValueError, match=error):
            lib.optim.swa_utils.SWALR(opt, **kwargs)


@pytest.mark.parametrize("as_pairs", [False, True])
def test_update_bn_matches_torch(as_pairs):
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((6, 3), dtype=np.float32) * 3 + 1 for _ in range(3)]
    t, e = twin_models()
    for lib, net in ((torch, t), (ember, e)):
        net.eval()
        loader = [to_lib(lib, b) for b in batches]
        if as_pairs:
            loader = [(x, 0) for x in loader]
        lib.optim.swa_utils.update_bn(loader, net)
        assert not net.training
        assert net[1].momentum == 0.1
    assert_states_close(e, t)
    assert int(e[1].num_batches_tracked) == 3


def test_update_bn_without_batchnorm_leaves_the_model_alone():
    net = ember.nn.Linear(3, 2)
    calls = []
    net.register_forward_hook(lambda *args: calls.append(1))
    ember.optim.swa_utils.update_bn([ember.ones(2, 3)], net)
    assert calls == []
