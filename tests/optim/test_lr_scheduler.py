"""Every scheduler's learning rates over 100 steps against torch's, state_dict round trips and
torch's warning for ``scheduler.step()`` before ``optimizer.step()``."""
import functools
import types
import warnings

import numpy as np
import pytest
import torch

import ember

S = "lr_scheduler"


def optimizer(lib, cls="SGD", **kwargs):
    params = [lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)]
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.05}]
    return getattr(lib.optim, cls)(groups, lr=0.1, **kwargs)


def sched(lib, name, *args, **kwargs):
    return getattr(lib.optim.lr_scheduler, name)(*args, **kwargs)


BUILDERS = {
    "LambdaLR": lambda lib, o: sched(lib, "LambdaLR", o, lambda e: 0.95 ** e),
    "LambdaLR-list": lambda lib, o: sched(lib, "LambdaLR", o, [lambda e: 1 / (e + 1),
                                                               lambda e: 0.9 ** e]),
    "MultiplicativeLR": lambda lib, o: sched(lib, "MultiplicativeLR", o, lambda e: 0.97),
    "StepLR": lambda lib, o: sched(lib, "StepLR", o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda lib, o: sched(lib, "MultiStepLR", o, milestones=[10, 30, 30, 60],
                                        gamma=0.3),
    "ConstantLR": lambda lib, o: sched(lib, "ConstantLR", o, factor=0.25, total_iters=12),
    "LinearLR": lambda lib, o: sched(lib, "LinearLR", o, start_factor=0.1, end_factor=0.9,
                                     total_iters=40),
    "ExponentialLR": lambda lib, o: sched(lib, "ExponentialLR", o, gamma=0.96),
    "PolynomialLR": lambda lib, o: sched(lib, "PolynomialLR", o, total_iters=60, power=2.0),
    "CosineAnnealingLR": lambda lib, o: sched(lib, "CosineAnnealingLR", o, T_max=30,
                                              eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda lib, o: sched(lib, "CosineAnnealingWarmRestarts", o,
                                                        T_0=10, T_mult=2, eta_min=1e-4),
    "CyclicLR-triangular": lambda lib, o: sched(lib, "CyclicLR", o, base_lr=0.01, max_lr=0.1,
                                                step_size_up=7),
    "CyclicLR-triangular2": lambda lib, o: sched(lib, "CyclicLR", o, base_lr=[0.01, 0.02],
                                                 max_lr=0.1, step_size_up=5, step_size_down=9,
                                                 mode="triangular2"),
    "CyclicLR-exp_range": lambda lib, o: sched(lib, "CyclicLR", o, base_lr=0.01, max_lr=0.1,
                                               step_size_up=6, mode="exp_range", gamma=0.98),
    "OneCycleLR-cos": lambda lib, o: sched(lib, "OneCycleLR", o, max_lr=0.5, total_steps=101),
    "OneCycleLR-linear-3": lambda lib, o: sched(lib, "OneCycleLR", o, max_lr=[0.5, 0.2],
                                                epochs=5, steps_per_epoch=21,
                                                anneal_strategy="linear", three_phase=True),
    "SequentialLR": lambda lib, o: sched(lib, "SequentialLR", o, [
        sched(lib, "LinearLR", o, start_factor=0.1, total_iters=10),
        sched(lib, "CosineAnnealingLR", o, T_max=50)], milestones=[10]),
    "ChainedScheduler": lambda lib, o: sched(lib, "ChainedScheduler", [
        sched(lib, "ConstantLR", o, factor=0.5, total_iters=8),
        sched(lib, "ExponentialLR", o, gamma=0.97)]),
}


def lrs(lib, name, steps=100, cls="SGD", **opt_kwargs):
    opt = optimizer(lib, cls, **opt_kwargs)
    scheduler = BUILDERS[name](lib, opt)
    out = [scheduler.get_last_lr()]
    momenta = []
    for _ in range(steps):
        opt.step()
        scheduler.step()
        out.append(scheduler.get_last_lr())
        momenta.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
    return np.array(out, dtype=float), momenta


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_learning_rates_match_torch(name):
    expected, _ = lrs(torch, name)
    actual, _ = lrs(ember, name)
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name,cls,kwargs", [
    ("CyclicLR-triangular", "SGD", {"momentum": 0.9}),
    ("OneCycleLR-cos", "SGD", {"momentum": 0.9}),
    ("OneCycleLR-linear-3", "Adam", {}),
])
def test_momentum_cycling_matches_torch(name, cls, kwargs):
    expected_lr, expected_m = lrs(torch, name, cls=cls, **kwargs)
    actual_lr, actual_m = lrs(ember, name, cls=cls, **kwargs)
    np.testing.assert_allclose(actual_lr, expected_lr, rtol=1e-12)
    np.testing.assert_allclose(np.array(actual_m, dtype=float), np.array(expected_m, dtype=float),
                               rtol=1e-12)


@pytest.mark.parametrize("mode,kwargs", [("min", {}), ("max", {"threshold_mode": "abs"}),
                                         ("min", {"cooldown": 2, "patience": 1, "min_lr": 0.01})])
def test_reduce_lr_on_plateau_matches_torch(mode, kwargs):
    metrics = [1.0, 0.9, 0.9, 0.95, 0.9, 0.89, 0.9, 0.91, 0.92, 0.8] * 6

    def run(lib):
        opt = optimizer(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode=mode, factor=0.5, **kwargs)
        out = []
        for m in metrics:
            opt.step()
            scheduler.step(m)
            out.append(scheduler.get_last_lr())
        return np.array(out)
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "OneCycleLR-cos", "SequentialLR",
                                  "CyclicLR-triangular2", "CosineAnnealingWarmRestarts"])
def test_state_dict_round_trip(name):
    opt = optimizer(ember)
    scheduler = BUILDERS[name](ember, opt)
    for _ in range(17):
        opt.step()
        scheduler.step()
    saved_sched, saved_opt = scheduler.state_dict(), opt.state_dict()
    assert "optimizer" not in saved_sched
    opt2 = optimizer(ember)
    scheduler2 = BUILDERS[name](ember, opt2)
    scheduler2.load_state_dict(saved_sched)
    opt2.load_state_dict(saved_opt)
    for _ in range(30):
        for o, s in ((opt, scheduler), (opt2, scheduler2)):
            o.step()
            s.step()
        assert scheduler2.get_last_lr() == scheduler.get_last_lr()


def test_warns_when_scheduler_steps_before_optimizer():
    opt = optimizer(ember)
    scheduler = ember.optim.lr_scheduler.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                         r"`optimizer.step\(\)`"):
        scheduler.step()


def test_no_warning_in_the_right_order():
    opt = optimizer(ember)
    scheduler = ember.optim.lr_scheduler.StepLR(opt, step_size=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        scheduler.step()
    assert scheduler.get_last_lr() == [0.1, 0.05]


def test_errors_match_torch():
    for lib in (torch, ember):
        opt = optimizer(lib)
        with pytest.raises(ValueError, match="Constant multiplicative factor expected to be "
                                             "between 0 and 1."):
            lib.optim.lr_scheduler.ConstantLR(opt, factor=2.0)
        with pytest.raises(TypeError, match="int is not an Optimizer"):
            lib.optim.lr_scheduler.StepLR(3, step_size=1)


# -- schedules in other settings: after a milestone, chained, explicit epochs, resumed ---------
PLAIN = sorted(n for n in BUILDERS if n not in ("SequentialLR", "ChainedScheduler"))


def trajectory(lib, build, steps=40, epochs=None, cls="SGD"):
    """Learning rates over ``steps`` steps (``scheduler.step(epochs[i])`` when given), or the
    exception's type and message when a step fails."""
    opt = optimizer(lib, cls)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = build(lib, opt)
            out = [scheduler.get_last_lr()]
            for i in range(steps):
                opt.step()
                scheduler.step() if epochs is None else scheduler.step(epochs[i])
                out.append(scheduler.get_last_lr())
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return np.array(out, dtype=float)


def assert_same_trajectory(build, **kwargs):
    expected = trajectory(torch, build, **kwargs)
    actual = trajectory(ember, build, **kwargs)
    if isinstance(expected, tuple) or isinstance(actual, tuple):
        assert isinstance(actual, tuple) and actual == expected
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", [n for n in PLAIN if not n.startswith("OneCycleLR")])
def test_scheduler_after_a_sequential_milestone_matches_torch(name):
    assert_same_trajectory(lambda lib, o: sched(lib, "SequentialLR", o, [
        sched(lib, "ExponentialLR", o, gamma=0.9), BUILDERS[name](lib, o)], milestones=[13]))


@pytest.mark.parametrize("name", PLAIN)
def test_scheduler_chained_with_step_lr_matches_torch(name):
    assert_same_trajectory(lambda lib, o: sched(lib, "ChainedScheduler", [
        sched(lib, "StepLR", o, 4, 0.7), BUILDERS[name](lib, o)]))


@pytest.mark.parametrize("name", [n for n in PLAIN if not n.startswith("OneCycleLR")])
def test_explicit_epochs_match_torch(name):
    epochs = [0, 3, 3, 7, 1, 12, 40, 2, 0, 5, 33] * 2
    assert_same_trajectory(BUILDERS[name], steps=len(epochs), epochs=epochs)


@pytest.mark.parametrize("name", PLAIN)
@pytest.mark.parametrize("last_epoch", [0, 3, 11])
def test_resuming_with_last_epoch_matches_torch(name, last_epoch):
    class Resuming:
        """A stand-in for a library whose schedulers all get ``last_epoch``."""
        def __init__(self, lib):
            real = lib.optim.lr_scheduler
            self.optim = types.SimpleNamespace(lr_scheduler=types.SimpleNamespace(**{
                n: functools.partial(getattr(real, n), last_epoch=last_epoch)
                for n in ("LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
                          "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
                          "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR")}))

    def build(lib, opt):
        for group in opt.param_groups:
            group.update(initial_lr=0.5, max_lr=0.1, min_lr=0.001, max_momentum=0.9,
                         base_momentum=0.8)
        return BUILDERS[name](Resuming(lib), opt)
    assert_same_trajectory(build, steps=30)


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_with_fractional_epochs_match_torch(T_mult):
    epochs = [i * 0.37 for i in range(60)] + [3.5, 100.2, 0.1, 7]
    assert_same_trajectory(lambda lib, o: sched(lib, "CosineAnnealingWarmRestarts", o, T_0=3,
                                                T_mult=T_mult, eta_min=0.001),
                           steps=len(epochs), epochs=epochs)


@pytest.mark.parametrize("build", [
    lambda lib, o: sched(lib, "CyclicLR", o, 0.01, 0.1, 4, scale_fn=lambda x: 0.5 ** x,
                         scale_mode="iterations"),
    lambda lib, o: sched(lib, "CyclicLR", o, 0.01, 0.1, 4, 3, scale_fn=lambda x: 1 / x),
    lambda lib, o: sched(lib, "OneCycleLR", o, 0.3, total_steps=40, anneal_strategy="linear",
                         pct_start=0.25, div_factor=10.0, final_div_factor=100.0),
    lambda lib, o: sched(lib, "OneCycleLR", o, 0.3, total_steps=30),  # steps past the end
    lambda lib, o: sched(lib, "PolynomialLR", o, total_iters=10, power=0.5),
    lambda lib, o: sched(lib, "CosineAnnealingLR", o, T_max=1),
    lambda lib, o: sched(lib, "CosineAnnealingLR", o, T_max=3, eta_min=0.02),
    lambda lib, o: sched(lib, "SequentialLR", o, [
        sched(lib, "ConstantLR", o, 0.5, 3), sched(lib, "MultiplicativeLR", o, lambda e: 0.9),
        sched(lib, "LambdaLR", o, lambda e: 1 / (e + 1))], milestones=[5, 9]),
    lambda lib, o: sched(lib, "SequentialLR", o, [
        sched(lib, "LinearLR", o, 0.5, total_iters=3), sched(lib, "ExponentialLR", o, 0.9)],
        milestones=[5], last_epoch=2),
    lambda lib, o: sched(lib, "SequentialLR", o, [
        sched(lib, "ChainedScheduler", [sched(lib, "ConstantLR", o, 0.5, 3),
                                        sched(lib, "ExponentialLR", o, 0.9)]),
        sched(lib, "StepLR", o, 2)], milestones=[6]),
    lambda lib, o: sched(lib, "SequentialLR", o, [
        sched(lib, "LinearLR", o, 0.5, total_iters=3),
        sched(lib, "CosineAnnealingWarmRestarts", o, 4, 2)], milestones=[5]),
])
def test_more_schedules_match_torch(build):
    assert_same_trajectory(build)


@pytest.mark.parametrize("name", ["CyclicLR-exp_range", "OneCycleLR-cos"])
def test_beta1_cycling_with_adam_matches_torch(name):
    expected_lr, expected_m = lrs(torch, name, steps=40, cls="Adam")
    actual_lr, actual_m = lrs(ember, name, steps=40, cls="Adam")
    np.testing.assert_allclose(actual_lr, expected_lr, rtol=1e-12)
    np.testing.assert_allclose(np.array(actual_m, dtype=float), np.array(expected_m, dtype=float),
                               rtol=1e-12)


@pytest.mark.parametrize("name", ["MultiplicativeLR", "StepLR", "ConstantLR", "LinearLR",
                                  "ExponentialLR", "PolynomialLR", "CosineAnnealingLR"])
def test_chained_step_at_epoch_zero_after_the_first_matches_torch(name):
    def run(lib):
        opt = optimizer(lib)
        scheduler = BUILDERS[name](lib, opt)
        opt.param_groups[0]["lr"] = 0.3
        scheduler.last_epoch = -1
        out = []
        for _ in range(3):
            opt.step()
            scheduler.step()
            out.append(scheduler.get_last_lr())
        return np.array(out)
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-12)


def test_reduce_lr_on_plateau_extends_a_scalar_min_lr_to_new_groups_like_torch():
    def run(lib, min_lr):
        opt = optimizer(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=min_lr)
        opt.add_param_group({"params": [lib.zeros(1)], "lr": 1.0})
        try:
            for metric in (1.0, 2.0, 3.0):
                scheduler.step(metric)
        except RuntimeError as exc:
            return str(exc)
        return scheduler.min_lrs, scheduler.get_last_lr()
    assert run(ember, 0.002) == run(torch, 0.002)
    assert run(ember, [0.0, 0.0]) == run(torch, [0.0, 0.0])
    assert "differs from when `ReduceLROnPlateau` was initialized" in run(ember, [0.0, 0.0])


def warning_texts(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return [str(w.message).split(".")[0] for w in caught]


def warning_scenarios(lib):
    """Which warnings each way of stepping gives, as the first sentence of each."""
    L = lib.optim.lr_scheduler
    out = {}
    opt = optimizer(lib)
    opt.step()
    scheduler = L.StepLR(opt, 2)
    out["optimizer stepped before the scheduler existed"] = warning_texts(scheduler.step)
    opt = optimizer(lib)
    L.StepLR(opt, 2)
    opt.step()
    out["second scheduler"] = warning_texts(L.StepLR(opt, 2).step)
    opt = optimizer(lib)
    scheduler = L.StepLR(opt, 2)
    opt.step = lambda *args: None
    out["step overridden"] = warning_texts(scheduler.step)
    opt = optimizer(lib)
    scheduler = L.StepLR(opt, 2)
    opt.step()
    out["explicit epoch"] = warning_texts(lambda: scheduler.step(3))
    out["get_lr"] = warning_texts(scheduler.get_lr)
    opt = optimizer(lib)
    out["warm restarts"] = warning_texts(L.CosineAnnealingWarmRestarts(opt, 2).step)
    opt = optimizer(lib)
    out["plateau"] = warning_texts(lambda: L.ReduceLROnPlateau(opt).step(1.0))
    opt = optimizer(lib)
    out["sequential"] = warning_texts(L.SequentialLR(opt, [L.ConstantLR(opt), L.StepLR(opt, 2)],
                                                     [2]).step)
    opt = optimizer(lib)
    out["chained"] = warning_texts(L.ChainedScheduler([L.ConstantLR(opt), L.StepLR(opt, 2)]).step)
    return out


def test_warnings_match_torch():
    expected = warning_scenarios(torch)
    assert warning_scenarios(ember) == expected
    assert expected["chained"] == ["Detected call of `lr_scheduler"] * 2


def test_tensor_learning_rates_are_updated_in_place():
    results = {}
    for lib in (torch, ember):
        lr = lib.tensor(0.1, dtype=lib.float64)
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=lr)
        scheduler = lib.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
        for _ in range(3):
            opt.step()
            scheduler.step()
        assert opt.param_groups[0]["lr"] is lr
        results[lib] = (float(lr), float(opt.param_groups[0]["initial_lr"]),
                        float(scheduler.get_last_lr()[0]))
    assert results[ember] == results[torch] == (0.0125, 0.1, 0.0125)


@pytest.mark.parametrize("build", [
    lambda L, o: L.LinearLR(o, start_factor=0),
    lambda L, o: L.LinearLR(o, end_factor=2),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, 0),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, 2.0),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=0),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, eta_min="a"),
    lambda L, o: L.CyclicLR(o, 0.1, 1, mode="foo"),
    lambda L, o: L.CyclicLR(o, [0.1, 0.2, 0.3], 1),
    lambda L, o: L.OneCycleLR(o, 0.1),
    lambda L, o: L.OneCycleLR(o, 0.1, total_steps=0),
    lambda L, o: L.OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=3),
    lambda L, o: L.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=-3),
    lambda L, o: L.OneCycleLR(o, 0.1, total_steps=10, pct_start=1.5),
    lambda L, o: L.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="x"),
    lambda L, o: L.ReduceLROnPlateau(o, factor=1.0),
    lambda L, o: L.ReduceLROnPlateau(o, min_lr=[1]),
    lambda L, o: L.ReduceLROnPlateau(o, mode="x"),
    lambda L, o: L.ReduceLROnPlateau(o, threshold_mode="x"),
    lambda L, o: L.LambdaLR(o, [lambda e: 1]),
    lambda L, o: L.MultiplicativeLR(o, [lambda e: 1] * 3),
    lambda L, o: L.SequentialLR(o, [], []),
    lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2)], [3]),
    lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2), 5], [3]),
    lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], [3]),
    lambda L, o: L.ChainedScheduler([]),
    lambda L, o: L.ChainedScheduler([L.StepLR(o, 2), L.ReduceLROnPlateau(o)]),
])
def test_more_errors_match_torch(build):
    raised = {}
    for lib in (torch, ember):
        with pytest.raises((ValueError, TypeError, KeyError)) as info:
            build(lib.optim.lr_scheduler, optimizer(lib))
        raised[lib] = (type(info.value), str(info.value))
    assert raised[ember] == raised[torch]


def test_errors_that_name_other_objects_match_torch_in_type():
    for lib in (torch, ember):
        L = lib.optim.lr_scheduler
        opt = optimizer(lib)
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same "
                                             "optimizer, but got scheduler StepLR at index 1"):
            L.SequentialLR(opt, [L.StepLR(opt, 2), L.StepLR(optimizer(lib), 2)], [3])
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same"):
            L.ChainedScheduler([L.StepLR(opt, 2)], optimizer=optimizer(lib))
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in "
                                           r"param_groups\[0\] when resuming"):
            L.StepLR(optimizer(lib), 2, last_epoch=3)
        with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
            L.CosineAnnealingWarmRestarts(opt, 2).step(-1)


def test_lambda_state_keeps_callable_objects_only():
    class Halving:
        def __init__(self):
            self.base = 0.5

        def __call__(self, epoch):
            return self.base ** epoch

    opt = optimizer(ember)
    scheduler = ember.optim.lr_scheduler.LambdaLR(opt, [Halving(), lambda e: 1.0])
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"base": 0.5}, None]
    state["lr_lambdas"] = [{"base": 0.25}, None]
    scheduler.load_state_dict(state)
    assert scheduler.lr_lambdas[0].base == 0.25
