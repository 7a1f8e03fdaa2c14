"""torch's top-level in-place functions (``torch.sin_(x)``, ...) against torch: they write into
their input and return it, move its version on, give it the history torch gives, and refuse a
leaf that requires grad."""
import numpy as np
import pytest
import torch

import ember
from ember._inplace_functions import NAMES

SHAPE = (2, 3)


def _values(low, high):
    return np.linspace(low, high, 6).reshape(SHAPE)


UNIT = _values(0.1, 0.9)
# name -> (input values, extra arguments made from the library, keyword arguments)
CALLS = {name: (UNIT, lambda lib: (), {}) for name in NAMES}
CALLS.update({
    "acosh_": (_values(1.5, 3.0), lambda lib: (), {}),
    "arccosh_": (_values(1.5, 3.0), lambda lib: (), {}),
    "addmv_": (np.arange(2.0), lambda lib: (lib.tensor(np.arange(6.0).reshape(2, 3)),
                                              lib.tensor(np.array([0.5, -1.0, 2.0]))),
                {"beta": 0.5}),
    "as_strided_": (UNIT, lambda lib: ((2, 2), (1, 2), 1), {}),
    "clamp_": (UNIT, lambda lib: (0.3, 0.6), {}),
    "clip_": (UNIT, lambda lib: (), {"min": 0.3}),
    "clamp_max_": (UNIT, lambda lib: (0.5,), {}),
    "clamp_min_": (UNIT, lambda lib: (lib.tensor([0.2, 0.5, 0.8]),), {}),
    "fill_": (UNIT, lambda lib: (2.5,), {}),
    "logit_": (UNIT, lambda lib: (), {"eps": 0.2}),
    "nan_to_num_": (np.array([[np.nan, np.inf, -np.inf], [0.5, 1.0, 2.0]]), lambda lib: (),
                    {"posinf": 9.0}),
    "round_": (_values(-2.26, 3.17), lambda lib: (), {"decimals": 1}),
    "xlogy_": (UNIT, lambda lib: (lib.tensor([0.5, 2.0, 3.0]),), {}),
    "frac_": (_values(-2.26, 3.17), lambda lib: (), {}),
    "fix_": (_values(-2.26, 3.17), lambda lib: (), {}),
    "gcd_": (np.array([[12, -18, 0], [7, 0, 5]]), lambda lib: (lib.tensor([8, 12, 0]),), {}),
    "lcm_": (np.array([[12, -18, 0], [7, 0, 5]]), lambda lib: (lib.tensor([8, 12, 3]),), {}),
    "ldexp_": (UNIT, lambda lib: (lib.tensor([0, 1, 3]),), {}),
    "deg2rad_": (_values(-180.0, 360.0), lambda lib: (), {}),
})
INTEGER = {"gcd_", "lcm_"}   # no gradients for integers
NO_GRAD = {"detach_"}   # no history left to follow
# torch has no derivative for these in-place versions ("the derivative for 'inplace version of
# acosh' is not implemented"); ember's is the out-of-place function's, which the test compares.
NO_TORCH_DERIVATIVE = {"acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}
# ember names the node of an in-place as_strided_ as the out-of-place one's.
NODE_NAMES = {"AsStridedBackward1": "AsStridedBackward0"}


def _call(lib, name, y):
    _, args, kwargs = CALLS[name]
    return getattr(lib, name)(y, *args(lib), **kwargs)


def _in_place(lib, name):
    y = lib.tensor(CALLS[name][0])
    version = y._version
    result = _call(lib, name, y)
    return result is y, y._version - version, tuple(y.shape), y.numpy()


@pytest.mark.parametrize("name", NAMES)
def test_writes_into_its_input_and_returns_it(name):
    ours, theirs = _in_place(ember, name), _in_place(torch, name)
    assert ours[0] and theirs[0]
    assert ours[1:3] == theirs[1:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6, atol=1e-12, equal_nan=True)


def _history(lib, name, out_of_place=False):
    x = lib.tensor(CALLS[name][0], requires_grad=True)
    y = x.clone()
    if out_of_place:
        result = getattr(lib, name[:-1])(y)
    else:
        result = _call(lib, name, y)
    weights = lib.arange(1.0, y.numel() + 1, dtype=lib.float64).reshape(tuple(y.shape))
    (result * weights).sum().backward()
    return type(result.grad_fn).__name__, x.grad.numpy()


@pytest.mark.parametrize("name", sorted(set(NAMES) - NO_GRAD - INTEGER))
def test_gradients_flow_through_the_change_as_in_torch(name):
    their_node, their_grad = _history(torch, name, out_of_place=name in NO_TORCH_DERIVATIVE)
    our_node, our_grad = _history(ember, name)
    assert our_node == NODE_NAMES.get(their_node, their_node)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", sorted(set(NAMES) - NO_GRAD - INTEGER))
def test_a_leaf_that_requires_grad_is_refused(name):
    messages = []
    for lib in (ember, torch):
        leaf = lib.tensor(CALLS[name][0], requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            _call(lib, name, leaf)
        assert leaf._version == 0
        messages.append(str(info.value).split("\n")[0])
    assert messages[0] == messages[1]


def test_detach_makes_a_leaf_in_place():
    for lib in (ember, torch):
        y = lib.ones(2, requires_grad=True) * 2
        assert lib.detach_(y) is y
        assert y.grad_fn is None and not y.requires_grad


def test_a_non_tensor_input_is_refused_as_torch_refuses_it():
    messages = []
    for lib in (ember, torch):
        with pytest.raises(TypeError) as info:
            lib.sin_(3.0)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_changing_a_tensor_saved_for_backward_fails_backward_as_in_torch():
    messages = []
    for lib in (ember, torch):
        y = lib.tensor(UNIT, requires_grad=True).clone()
        z = y * y
        lib.sin_(y)
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        messages.append(str(info.value).split(";")[0].replace("ember.", "torch."))
    assert messages[0] == messages[1]
