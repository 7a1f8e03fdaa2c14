"""Every benchmark model trains the same compiled (each module compiled in place with
``Module.compile``) as eager: losses, gradients and parameters after three optimizer steps, at
float32 tolerances. The first step captures, the later ones replay the graphs."""
import numpy as np
import pytest

import ember
import ember.compiler
from benchmarks.models import MODELS

SMALL = {"mlp": {"batch": 8}, "lenet": {"batch": 4}, "resnet20": {"batch": 2},
         "resnet20_channels_last": {"batch": 2}, "mobilenetv2": {"batch": 2},
         "mobilenetv2_channels_last": {"batch": 2}, "lstm_lm": {"batch": 2, "seq": 5,
                                                                 "vocab": 50},
         "transformer_lm": {"batch": 2, "seq": 8, "vocab": 50}, "dcgan": {"batch": 2}}
STEPS = 3


def _state(workload):
    out = {}
    for name, module in workload.modules.items():
        for key, p in module.named_parameters():
            out[f"{name}.{key}"] = p.detach().numpy().copy()
            out[f"{name}.{key}.grad"] = None if p.grad is None else p.grad.numpy().copy()
        for key, b in module.named_buffers():
            out[f"{name}.{key}"] = b.numpy().copy()
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_trains_the_same_compiled(name):
    ember.compiler.reset()
    eager = MODELS[name](ember, **SMALL[name])
    compiled = MODELS[name](ember, **SMALL[name])
    for module in compiled.modules.values():
        module.compile(backend="eager")
    for step in range(STEPS):
        ember.manual_seed(step)
        eager_losses = eager.step()
        ember.manual_seed(step)
        compiled_losses = compiled.step()
        for e, c in zip(eager_losses, compiled_losses):
            np.testing.assert_allclose(c.item(), e.item(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} step {step} loss")
    expected, actual = _state(eager), _state(compiled)
    assert expected.keys() == actual.keys()
    for key, value in expected.items():
        if value is None:
            assert actual[key] is None, key
            continue
        np.testing.assert_allclose(actual[key], value, rtol=1e-4, atol=1e-5, err_msg=key)
    for module in compiled.modules.values():
        cache = module.forward._ember_compiled
        assert cache.graph_break is None, cache.graph_break
        assert len(cache.entries) >= 1


def _float64_workloads(name):
    """Two copies of a benchmark model built in float64 (parameters and inputs)."""
    previous = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        return MODELS[name](ember, **SMALL[name]), MODELS[name](ember, **SMALL[name])
    finally:
        ember.set_default_dtype(previous)


def _steps_from_eager(eager, compiled):
    """Compile ``compiled``'s modules with the ahead-of-time backward, then for each step load
    eager's parameters and buffers into it, run both from one seed and yield (step, eager's
    losses, compiled's losses)."""
    for module in compiled.modules.values():
        module.compile(options={"aot_backward": True})
    for step in range(STEPS):
        for key, module in compiled.modules.items():
            module.load_state_dict(eager.modules[key].state_dict())
        ember.manual_seed(step)
        eager_losses = eager.step()
        ember.manual_seed(step)
        yield step, eager_losses, compiled.step()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_gradients_match_with_the_ahead_of_time_backward_and_kernels(name):
    """The default backend with its ahead-of-time backward and generated kernels gives
    eager's losses and gradients at every step. Both copies start each step from the eager
    copy's parameters and buffers: after an optimizer step they drift apart by more than
    rounding without any error of the compiled graphs, since Adam turns rounding differences in
    gradients that are zero in exact arithmetic (attention's key bias, biases before a batch
    norm) into steps of the learning rate's size.

    In float64: in float32 two correct implementations' gradients differ by far more than
    rounding wherever a pre-activation lies within rounding of a ReLU or ReLU6 kink (the
    element's gradient is on in one, off in the other). MobileNetV2 at batch 2, third step:
    eager's first-layer weight gradient and torch's float32 one are both 1.6% (of its largest
    element) from torch's float64 one, the compiled copy's 0.16%. The next test runs the
    float32 kernels."""
    ember.compiler.reset()
    eager, compiled = _float64_workloads(name)
    for step, eager_losses, compiled_losses in _steps_from_eager(eager, compiled):
        for e, c in zip(eager_losses, compiled_losses):
            assert c.dtype == ember.float64
            np.testing.assert_allclose(c.item(), e.item(), rtol=1e-12, atol=1e-12,
                                       err_msg=f"{name} step {step} loss")
        for key, module in eager.modules.items():
            theirs = dict(compiled.modules[key].named_parameters())
            for pname, p in module.named_parameters():
                if p.grad is None:
                    assert theirs[pname].grad is None, pname
                    continue
                np.testing.assert_allclose(theirs[pname].grad.numpy(), p.grad.numpy(),
                                           rtol=1e-10, atol=1e-12,
                                           err_msg=f"{name} step {step} {key}.{pname}")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_losses_match_in_float32_with_the_ahead_of_time_backward_and_kernels(name):
    """The same in float32, where the generated kernels and oneDNN's layouts differ from eager
    in summation order: the losses of each step, from eager's parameters and buffers."""
    ember.compiler.reset()
    eager = MODELS[name](ember, **SMALL[name])
    compiled = MODELS[name](ember, **SMALL[name])
    for step, eager_losses, compiled_losses in _steps_from_eager(eager, compiled):
        for e, c in zip(eager_losses, compiled_losses):
            np.testing.assert_allclose(c.item(), e.item(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} step {step} loss")
    for module in compiled.modules.values():
        assert module.forward._ember_compiled.graph_break is None
