"""Optimizers against torch: whole 50-step trajectories from the same start, state_dict round
trips (ember->ember and torch->ember), hooks and torch's errors."""
import copy
import math
import warnings

import numpy as np
import pytest
import torch

import ember

SHAPES = [(3, 4), (5,), ()]


def initial_values(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES]


def loss_of(ps):
    """A smooth non-quadratic loss coupling all three parameters (same code for both libs)."""
    a, b, c = ps
    return ((a ** 2).sum() * 0.5 + ((b - 1) ** 4).sum() + (a.sum() * c - 2) ** 2
            + (b * b).sum() * c * c)


def make(lib, cls, kwargs, values, device="cpu"):
    """Parameters (ember's on ``device``) and the optimizer ``cls`` over them."""
    on_device = {} if lib is torch else {"device": device}
    params = [lib.tensor(v.copy(), requires_grad=True, **on_device) for v in values]
    return params, getattr(lib.optim, cls)(params, **kwargs)


def train(params, opt, steps):
    """Steps on the loss (its negative for ``maximize=True``); the trajectory, one row a step."""
    sign = -1 if opt.defaults.get("maximize") else 1
    out = []
    for _ in range(steps):
        opt.zero_grad()
        (loss_of(params) * sign).backward()
        opt.step()
        out.append(np.concatenate([p.detach().cpu().numpy().ravel() for p in params]).copy())
    return np.array(out)


CASES = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.8, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "maximize": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.3}),
    ("Adamax", {"lr": 0.01}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1, "betas": (0.7, 0.99)}),
    ("NAdam", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "alpha": 0.9, "eps": 1e-6}),
    ("RMSprop", {"lr": 0.01, "centered": True, "weight_decay": 0.1, "momentum": 0.5}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1,
                 "weight_decay": 0.1}),
    ("Adadelta", {"lr": 1.0}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.01, "etas": (0.3, 1.5), "step_sizes": (1e-3, 1)}),
    ("ASGD", {"lr": 0.01}),
    ("ASGD", {"lr": 0.01, "t0": 10, "lambd": 1e-3, "alpha": 0.5, "weight_decay": 0.1}),
]


@pytest.mark.parametrize("cls,kwargs", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_trajectory_matches_torch(cls, kwargs, device):
    values = initial_values()
    expected = train(*make(torch, cls, kwargs, values), 50)
    params, opt = make(ember, cls, kwargs, values, device)
    actual = train(params, opt, 50)
    assert all(p.device.type == device for p in params)
    assert np.isfinite(expected).all()
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{"lr": 0.5}, {"lr": 1, "line_search_fn": "strong_wolfe"},
                                    {"lr": 0.5, "history_size": 3, "max_iter": 5}])
def test_lbfgs_matches_torch(kwargs):
    def run(lib, kwargs=kwargs):
        params, opt = make(lib, "LBFGS", kwargs, initial_values())

        def closure():
            opt.zero_grad()
            loss = loss_of(params)
            loss.backward()
            return loss
        out = []
        for _ in range(5):
            opt.step(closure)
            out.append(np.concatenate([p.detach().numpy().ravel() for p in params]).copy())
        return np.array(out), opt
    (expected, _), (actual, eopt) = run(torch), run(ember)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
    # The loss converges within the first step, after which the tolerance tests (loss changes
    # under 1e-9, float32 rounding) decide how many iterations and evaluations run: the counts
    # are compared where a step stops at max_iter, well before that.
    early = dict(kwargs, max_iter=3)
    (_, topt), (_, eopt) = run(torch, early), run(ember, early)
    tstate, estate = topt.state_dict()["state"][0], eopt.state_dict()["state"][0]
    assert estate["n_iter"] == tstate["n_iter"]
    assert estate["func_evals"] == tstate["func_evals"]
    assert isinstance(estate["d"], ember.Tensor) and estate["d"].shape == tstate["d"].shape


def test_mixed_gradients_and_different_steps_match_torch():
    """Parameters that get gradients only on some steps have different step counts: the
    per-parameter path must still follow torch."""
    def run(lib):
        params, opt = make(lib, "Adam", {"lr": 0.05}, initial_values())
        out = []
        for i in range(20):
            opt.zero_grad()
            loss_of(params).backward()
            if i % 3 == 0:
                params[1].grad = None
            opt.step()
            out.append(np.concatenate([p.detach().numpy().ravel() for p in params]).copy())
        return np.array(out)
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-5, atol=1e-5)


def test_param_groups_with_own_options_match_torch():
    def run(lib):
        a, b, c = [lib.tensor(v, requires_grad=True) for v in initial_values()]
        opt = lib.optim.SGD([{"params": [a, b]}, {"params": (p for p in [c]), "lr": 0.001,
                                                   "momentum": 0.5}], lr=0.02, momentum=0.9)
        return train([a, b, c], opt, 20), opt
    (expected, _), (actual, eopt) = run(torch), run(ember)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)
    assert [g["lr"] for g in eopt.param_groups] == [0.02, 0.001]
    assert eopt.param_groups[1]["momentum"] == 0.5


def test_add_param_group():
    values = initial_values()
    a, b, c = [ember.tensor(v, requires_grad=True) for v in values]
    opt = ember.optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": [b, c], "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})


@pytest.mark.parametrize("cls,kwargs", [("SGD", {"lr": 0.01, "momentum": 0.9}),
                                        ("Adam", {"lr": 0.01, "amsgrad": True}),
                                        ("NAdam", {"lr": 0.01}), ("ASGD", {"lr": 0.01, "t0": 5}),
                                        ("Rprop", {"lr": 0.01}), ("Adagrad", {"lr": 0.1})])
def test_state_dict_round_trip_continues_identically(cls, kwargs):
    values = initial_values()
    tparams, topt = make(torch, cls, kwargs, values)
    train(tparams, topt, 10)
    eparams, eopt = make(ember, cls, kwargs, values)
    train(eparams, eopt, 10)
    # torch -> ember: a fresh ember optimizer loads torch's state and torch's parameters
    tsd = topt.state_dict()
    converted = {"state": {k: {n: ember.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v
                               for n, v in s.items()} for k, s in tsd["state"].items()},
                 "param_groups": copy.deepcopy(tsd["param_groups"])}
    fparams, fopt = make(ember, cls, kwargs, [p.detach().numpy() for p in tparams])
    fopt.load_state_dict(converted)
    # ember -> ember: a copy of the ember state continues the ember run
    gparams, gopt = make(ember, cls, kwargs, [p.detach().numpy() for p in eparams])
    gopt.load_state_dict(copy.deepcopy(eopt.state_dict()))
    expected = train(tparams, topt, 10)
    np.testing.assert_allclose(train(fparams, fopt, 10), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(train(gparams, gopt, 10), train(eparams, eopt, 10), rtol=0, atol=0)


def test_ember_state_dict_loads_into_torch():
    values = initial_values()
    eparams, eopt = make(ember, "Adam", {"lr": 0.01}, values)
    train(eparams, eopt, 7)
    sd = eopt.state_dict()
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    assert sd["state"][0]["step"].dtype == ember.float32 and sd["state"][0]["step"].item() == 7
    assert sd["param_groups"][0]["params"] == [0, 1, 2]
    tsd = {"state": {k: {n: torch.tensor(v.numpy().copy()) for n, v in s.items()}
                     for k, s in sd["state"].items()},
           "param_groups": copy.deepcopy(sd["param_groups"])}
    tparams, topt = make(torch, "Adam", {"lr": 0.01}, [p.detach().numpy() for p in eparams])
    topt.load_state_dict(tsd)
    np.testing.assert_allclose(train(tparams, topt, 10), train(eparams, eopt, 10),
                               rtol=1e-5, atol=1e-5)


def test_state_dict_mismatch_raises_and_leaves_optimizer_unchanged():
    params, opt = make(ember, "Adam", {"lr": 0.01}, initial_values())
    train(params, opt, 3)
    before = copy.deepcopy(opt.state_dict())
    bad = copy.deepcopy(before)
    bad["param_groups"][0]["params"] = [0, 1]
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        opt.load_state_dict(bad)
    bad = copy.deepcopy(before)
    bad["param_groups"].append(dict(bad["param_groups"][0]))
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter "
                                         "groups"):
        opt.load_state_dict(bad)
    after = opt.state_dict()
    assert after["param_groups"] == before["param_groups"]
    for k in before["state"]:
        for n in before["state"][k]:
            np.testing.assert_array_equal(after["state"][k][n].numpy(), before["state"][k][n].numpy())


@pytest.mark.parametrize("build,message", [
    (lambda lib, p: lib.optim.SGD(p, lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda lib, p: lib.optim.Adam(p, lr=-1.0), "Invalid learning rate: -1.0"),
    (lambda lib, p: lib.optim.Adam(p, lr=math.nan), "Invalid learning rate: nan"),
    (lambda lib, p: lib.optim.RMSprop(p, lr=math.nan), "Invalid learning rate: nan"),
    (lambda lib, p: lib.optim.Adam(p, betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    (lambda lib, p: lib.optim.AdamW(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda lib, p: lib.optim.NAdam(p, betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    (lambda lib, p: lib.optim.SGD(p, lr=0.1, nesterov=True),
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda lib, p: lib.optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda lib, p: lib.optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda lib, p: lib.optim.SGD([], lr=0.1), "optimizer got an empty parameter list"),
    (lambda lib, p: lib.optim.SGD([p[0], p[0] * 2], lr=0.1), "can't optimize a non-leaf Tensor"),
    (lambda lib, p: lib.optim.SGD([{"params": p}, {"params": p[:1]}], lr=0.1),
     "some parameters appear in more than one parameter group"),
])
def test_errors_match_torch(build, message):
    for lib in (torch, ember):
        params = [lib.tensor(v, requires_grad=True) for v in initial_values()]
        with pytest.raises(ValueError) as info:
            build(lib, params)
        assert str(info.value) == message


def test_nan_lr_sgd_is_accepted_as_in_torch():
    for lib in (torch, ember):
        lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=math.nan)


def test_params_as_tensor_or_set_raise_type_error():
    p = ember.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an "
                                        "iterable of Tensors or dicts, but got ember.Tensor"):
        ember.optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        ember.optim.SGD([{"params": {p}}], lr=0.1)


def test_zero_grad():
    p = ember.ones(3, requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_step_hooks_and_version_bump():
    p = ember.ones(3, requires_grad=True)
    opt = ember.optim.Adam([p], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt)))
    (p * p).sum().backward()
    version = p._version
    opt.step()
    assert calls == [("pre", True), ("post", True)]
    assert p._version == version + 1
    pre.remove()
    opt.step()
    assert calls == [("pre", True), ("post", True), ("post", True)]


def test_state_keyed_by_parameter_and_step_is_a_tensor():
    p = ember.ones(3, requires_grad=True)
    opt = ember.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    opt.step()
    state = opt.state[p]
    assert isinstance(state["step"], ember.Tensor) and state["step"].item() == 2
    assert state["exp_avg"].shape == p.shape


def test_closure_returns_loss():
    p = ember.ones(3, requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    assert opt.step(closure).item() == 3.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8] * 3)


def test_float64_and_float32_parameters_in_one_group():
    def run(lib):
        a = lib.tensor(np.arange(4.0), requires_grad=True)
        b = lib.tensor(np.arange(3, dtype=np.float32), requires_grad=True)
        opt = lib.optim.Adam([a, b], lr=0.1)
        for _ in range(5):
            opt.zero_grad()
            ((a ** 2).sum() + (b ** 3).sum()).backward()
            opt.step()
        return a.detach().numpy(), b.detach().numpy()
    for x, y in zip(run(ember), run(torch)):
        assert x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_repr_lists_groups():
    opt = ember.optim.SGD([ember.ones(1, requires_grad=True)], lr=0.1)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.1\n" in text


def test_no_warning_on_plain_step():
    p = ember.ones(3, requires_grad=True)
    opt = ember.optim.AdamW([p])
    (p * p).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
