"""The per-parameter in-place update path (few large tensors) against the gathered flat path:
bit-identical parameter trajectories and optimizer state."""
import numpy as np
import pytest

import ember
from ember.optim import _flat_buffers as flat_buffers

SGD_SETTINGS = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.1, "momentum": 0.9, "dampening": 0.3},
    {"lr": 0.1, "momentum": 0.9, "nesterov": True},
    {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01},
    {"lr": 0.1, "momentum": 0.5, "maximize": True},
]


def trajectory(settings, min_mean_size, monkeypatch, steps=4):
    monkeypatch.setattr(flat_buffers, "DIRECT_MIN_MEAN_SIZE", min_mean_size)
    rng = np.random.default_rng(0)
    params = [ember.nn.Parameter(ember.tensor(rng.standard_normal(s).astype(np.float32)))
              for s in [(7, 5), (5,), (3, 4, 2)]]
    grads = [[rng.standard_normal(p.shape).astype(np.float32) for p in params]
             for _ in range(steps)]
    opt = ember.optim.SGD(params, **settings)
    history = []
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = ember.tensor(g)
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
        history.append([p.grad.numpy().copy() for p in params])
    flats = opt._flat_cache[id(opt.param_groups[0])][1]
    state = [{k: v.numpy().copy() for k, v in opt.state[p].items() if v is not None}
             for p in params]
    return history, state, flats[0].direct


@pytest.mark.parametrize("settings", SGD_SETTINGS)
def test_sgd_direct_path_matches_flat_path(settings, monkeypatch):
    flat_history, flat_state, flat_direct = trajectory(settings, 10**12, monkeypatch)
    history, state, direct = trajectory(settings, 0, monkeypatch)
    assert not flat_direct
    assert direct == (not (settings.get("weight_decay") or settings.get("nesterov")
                           or settings.get("maximize")))
    for got, want in zip(history, flat_history):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    assert [sorted(s) for s in state] == [sorted(s) for s in flat_state]
    for got, want in zip(state, flat_state):
        for key in want:
            np.testing.assert_array_equal(got[key], want[key])


def test_direct_layout_rebuilt_when_update_starts_writing_the_gradient(monkeypatch):
    monkeypatch.setattr(flat_buffers, "DIRECT_MIN_MEAN_SIZE", 0)
    p = ember.nn.Parameter(ember.ones(4))
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = ember.ones(4)
    opt.step()
    assert opt._flat_cache[id(opt.param_groups[0])][1][0].direct
    opt.param_groups[0]["weight_decay"] = 0.5
    opt.step()
    assert not opt._flat_cache[id(opt.param_groups[0])][1][0].direct
    np.testing.assert_array_equal(p.grad.numpy(), np.ones(4, np.float32))


BLOCKED_CASES = [
    (ember.optim.SGD, {"lr": 0.1}),
    (ember.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    (ember.optim.SGD, {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    (ember.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    (ember.optim.SGD, {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    (ember.optim.Adam, {"lr": 0.01}),
    (ember.optim.Adam, {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    (ember.optim.AdamW, {"lr": 0.01}),
    (ember.optim.Adagrad, {"lr": 0.1, "lr_decay": 0.01}),
    (ember.optim.RMSprop, {"lr": 0.01, "momentum": 0.9, "centered": True}),
    (ember.optim.Rprop, {"lr": 0.01}),
    (ember.optim.NAdam, {"lr": 0.01}),
    (ember.optim.RAdam, {"lr": 0.01}),
    (ember.optim.Adamax, {"lr": 0.01}),
    (ember.optim.ASGD, {"lr": 0.01}),
    (ember.optim.Adadelta, {"lr": 1.0}),
]


def blocked_trajectory(optimizer_cls, settings, blocked_min_size, direct, monkeypatch, steps=3):
    monkeypatch.setattr(flat_buffers, "DIRECT_MIN_MEAN_SIZE", 0 if direct else 10**12)
    monkeypatch.setattr(flat_buffers, "BLOCKED_MIN_SIZE", blocked_min_size)
    monkeypatch.setattr(flat_buffers, "BLOCK_SIZE", 7)
    rng = np.random.default_rng(1)
    params = [ember.nn.Parameter(ember.tensor(rng.standard_normal(s).astype(np.float32)))
              for s in [(9, 5), (5,), (3, 4, 2), (1,)]]
    opt = optimizer_cls(params, **settings)
    history = []
    for _ in range(steps):
        for p in params:
            p.grad = ember.tensor(rng.standard_normal(p.shape).astype(np.float32))
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    state = [{k: v.numpy().copy() for k, v in opt.state[p].items()
              if isinstance(v, ember.Tensor)} for p in params]
    return history, state


@pytest.mark.parametrize("direct", [False, True])
@pytest.mark.parametrize("optimizer_cls, settings", BLOCKED_CASES)
def test_blocked_update_is_bit_identical(optimizer_cls, settings, direct, monkeypatch):
    """Updating in blocks of 7 elements gives the same bits as whole-array updates, on the flat
    and the per-parameter paths."""
    want_history, want_state = blocked_trajectory(optimizer_cls, settings, 10**12, direct,
                                                  monkeypatch)
    calls = []
    monkeypatch.setattr(optimizer_cls, "_blocking_pays", lambda self, group, seg: True)
    real_update = optimizer_cls._update
    monkeypatch.setattr(optimizer_cls, "_update",
                        lambda self, group, seg: calls.append(seg) or real_update(self, group, seg))
    history, state = blocked_trajectory(optimizer_cls, settings, 0, direct, monkeypatch)
    assert any(isinstance(seg, flat_buffers.BlockSegment) for seg in calls)
    for got, want in zip(history, want_history):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    assert [sorted(s) for s in state] == [sorted(s) for s in want_state]
    for got, want in zip(state, want_state):
        for key in want:
            np.testing.assert_array_equal(got[key], want[key])
