"""autograd's compiled paths (``ember.autograd._compiled``): the node recording and the engine
loop built where a C compiler and the headers are, handing what is rare to Python, and Python's
own steps where they are switched off. test_autograd.py, test_autograd_api.py and
test_grad_ownership.py run every test both ways (the ``autograd_paths`` fixture)."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from ember.autograd import _compiled, engine
from ember.ops import _common

pytestmark = pytest.mark.skipif(_compiled._built() is None,
                                reason="autograd's compiled paths cannot be built here")


def test_the_compiled_paths_are_the_ones_used():
    x = ember.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    assert [type(f).__name__ for f in engine._compiled[0]] == ["builtin_function_or_method"] * 2
    assert type(_common._compiled_record).__name__ == "builtin_function_or_method"
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_switched_off_by_the_environment():
    code = ("import ember\nfrom ember.autograd import engine\nfrom ember.ops import _common\n"
            "x = ember.ones(3, requires_grad=True)\n(x * 3).sum().backward()\n"
            "print(engine._compiled[0], _common._compiled_record.__name__, x.grad.tolist())")
    env = dict(os.environ, EMBER_COMPILED_AUTOGRAD="0")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["None", "_record_in_python", "[3.0,", "3.0,", "3.0]"]


def test_a_node_with_its_own_init_is_recorded_by_python():
    class Recorded(_common.Node):   # a node class that sets more up in __init__
        def __init__(self, inputs):
            super().__init__(inputs)
            self.extra = len(inputs)

        def backward(self, grad):
            return (grad * 5,)

    x = ember.ones(2, requires_grad=True)
    out = _common.make(np.ones(2))
    node = _common.record(Recorded, (x,), out)
    assert node.extra == 1 and out.grad_fn is node   # (its __init__ ran)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])


@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_an_integer_or_bool_result_is_refused_as_torch_does(dtype):
    x = ember.ones(2, requires_grad=True)
    out = _common.make(np.ones(2, dtype=dtype))
    with pytest.raises(RuntimeError, match="Autograd not support dtype"):
        _common.record(_common.NotImplementedBackward, (x,), out)
    assert out.grad_fn is None and not out.requires_grad


def test_an_error_in_a_backward_leaves_the_engine_ready():
    class Fails(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("no gradient here")

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="no gradient here"):
        (Fails.apply(x) * 2).sum().backward()
    assert engine._depth == [0] and engine._running.released is None
    (x * 4).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])


def test_a_view_modified_in_place_gets_its_history_again():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        base = x * 1
        view = base[1:]
        base.mul_(3)          # the view's history is stale: recorded again from the base's
        (view * view).sum().backward()
        return x.grad.numpy()
    np.testing.assert_array_equal(run(ember), run(torch))


def test_gradients_summed_into_a_leaf_match_torch():
    def run(lib):
        x = lib.tensor(np.linspace(-1.0, 1.0, 100), requires_grad=True)
        m = lib.tensor(np.linspace(0.5, 1.5, 100), requires_grad=True)
        y = x
        for _ in range(5):   # m gets five gradients: the engine sums them in place
            y = (y * m).tanh() + m
        y.sum().backward()
        return x.grad.numpy(), m.grad.numpy()
    for got, expected in zip(run(ember), run(torch)):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def _leaf_accumulations(python):
    """What accumulating into leaves leaves behind, with the compiled loop or Python's steps."""
    saved = engine._compiled[0]
    if python:
        engine._compiled[0] = None
    try:
        out = []
        for n in (6, 100):   # small gradients (always copied) and large ones (kept where owned)
            x = ember.tensor(np.linspace(-1.0, 1.0, n), requires_grad=True)
            g = ember.tensor(np.linspace(1.0, 2.0, n))
            (x * 2).tanh().sum().backward()           # a first gradient the engine alone holds
            first = x.grad
            (x + 0).backward(g)                       # a second, added in place
            x.grad.add_(1.0)                          # the user's own change, counted too
            out.append((x.grad is first, x.grad._version_counter[0], x.grad.numpy().tolist(),
                        np.shares_memory(x.grad._data, g._data), x.grad.requires_grad))
            y = ember.tensor(np.linspace(0.5, 1.5, n), requires_grad=True)
            y.backward(g)                             # the user's gradient: copied
            out.append((np.shares_memory(y.grad._data, g._data), y.grad._version_counter[0],
                        y.grad.numpy().tolist(), y.grad.grad_fn is None))
        return out
    finally:
        engine._compiled[0] = saved


def test_a_leaf_accumulates_as_in_python():
    assert _leaf_accumulations(python=False) == _leaf_accumulations(python=True)


def test_watched_leaves_take_the_python_steps():
    x = ember.ones(3, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[2.0] * 3, [2.0] * 3, [3.0] * 3, [5.0] * 3]
    z = ember.ones(2, dtype=ember.float64, requires_grad=True)
    (z.float() * 2).sum().backward()                  # a float32 gradient for a float64 leaf
    assert z.grad.dtype == ember.float64 and z.grad.tolist() == [2.0, 2.0]
    w = ember.ones(2, 3, requires_grad=True)
    w.grad = ember.zeros(3, 2).t()                    # a strided .grad is added into where it is
    (w * 2).sum().backward()
    assert w.grad.tolist() == [[2.0] * 3] * 2 and w.grad.stride() == (1, 2)
