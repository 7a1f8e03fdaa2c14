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


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_gradients_match_with_the_ahead_of_time_backward_and_kernels(name):
    """The default backend with its ahead-of-time backward and generated kernels gives
    eager's losses and gradients at every step. Both copies start each step from the eager
    copy's parameters and buffers: after an optimizer step they drift apart by more than
    float32 tolerance without any error of the compiled graphs, since Adam turns rounding
    differences in gradients that are zero in exact arithmetic (attention's key bias, biases
    before a batch norm) into steps of the learning rate's size."""
    ember.compiler.reset()
    eager = MODELS[name](ember, **SMALL[name])
    compiled = MODELS[name](ember, **SMALL[name])
    for module in compiled.modules.values():
        module.compile(options={"aot_backward": True})
    for step in range(STEPS):
        for key, module in compiled.modules.items():
            module.load_state_dict(eager.modules[key].state_dict())
        ember.manual_seed(step)
        eager_losses = eager.step()
        ember.manual_seed(step)
        compiled_losses = compiled.step()
        for e, c in zip(eager_losses, compiled_losses):
            np.testing.assert_allclose(c.item(), e.item(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} step {step} loss")
        for key, module in eager.modules.items():
            theirs = dict(compiled.modules[key].named_parameters())
            for pname, p in module.named_parameters():
                if p.grad is None:
                    assert theirs[pname].grad is None, pname
                    continue
                # (rtol 2e-4: eager keeps the convolutions' activations in oneDNN's layout
                # and runs batch norm on oneDNN's kernel for it; the compiled graph runs on
                # plain arrays, its batch norm on ember's loop: another summation order)
                np.testing.assert_allclose(theirs[pname].grad.numpy(), p.grad.numpy(),
                                           rtol=2e-4, atol=1e-5,
                                           err_msg=f"{name} step {step} {key}.{pname}")
