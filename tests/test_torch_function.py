"""The __torch_function__ protocol side by side with torch: Tensor subclasses, tensor-like
objects, modes and ember.overrides."""
import functools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import ember
import ember.overrides


LIBS = [torch, ember]


def _logging_subclass(lib):
    calls = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append((func, types))
            return super().__torch_function__(func, types, args, kwargs)

    return Logged, calls


def _run_program(lib, Logged):
    x = lib.ones(2, 3).as_subclass(Logged)
    plain = lib.ones(2, 3)
    return {
        "x + 1": x + 1, "x.sum()": x.sum(), "relu": lib.relu(x), "x[0]": x[0],
        "F.relu": lib.nn.functional.relu(x), "add(plain, x)": lib.add(plain, x),
        "plain + x": plain + x, "x.T": x.T, "mul": lib.mul(x, 2), "max": lib.max(x, 1),
        "x.shape": x.shape, "chunk": lib.chunk(x, 3, 1),
    }


def _run_fresh(program):
    """Run ``program`` in a new Python with this ember on its path."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(ember.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True, env=env)


def _type_names(value):
    if isinstance(value, (tuple, list)):
        return [_type_names(v) for v in value]
    return type(value).__name__


def test_subclass_preserved_through_ops():
    results = {}
    for lib in LIBS:
        Logged, _ = _logging_subclass(lib)
        results[lib] = {k: _type_names(v) for k, v in _run_program(lib, Logged).items()}
    torch_names = {k: [n.replace("Size", "S") for n in v] if isinstance(v, list) else v
                   for k, v in results[torch].items()}
    ember_names = {k: [n.replace("Size", "S") for n in v] if isinstance(v, list) else v
                   for k, v in results[ember].items()}
    assert ember_names == torch_names


def test_handler_sees_functions_methods_operators_and_types():
    seen = {}
    for lib in LIBS:
        Logged, calls = _logging_subclass(lib)
        x = lib.ones(3).as_subclass(Logged)
        plain = lib.ones(3)
        record = []
        for label, run, expected in [
            ("function", lambda: lib.add(x, 1), lib.add),
            ("method", lambda: x.sum(), lib.Tensor.sum),
            ("operator", lambda: plain + x, (lib.Tensor.__add__, lib.Tensor.add)),
            ("getitem", lambda: x[0], lib.Tensor.__getitem__),
            ("relu", lambda: lib.nn.functional.relu(x), lib.nn.functional.relu),
        ]:
            calls.clear()
            run()
            func, types = calls[0]
            expected = expected if isinstance(expected, tuple) else (expected,)
            record.append((label, any(func is e or func == e for e in expected),
                           [t.__name__ for t in types]))
        calls.clear()
        x.shape
        record.append(("property", calls[0][0] == lib.Tensor.shape.__get__, len(calls)))
        seen[lib] = record
    assert seen[ember] == seen[torch]


def test_parameter_has_torch_function_disabled():
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(2))
        assert type(p * 2) is lib.Tensor
        assert lib.nn.Parameter.__torch_function__ is lib._C._disabled_torch_function_impl


def test_as_subclass_shares_data_and_graph():
    out = {}
    for lib in LIBS:
        class Sub(lib.Tensor):
            pass
        x = lib.ones(2, requires_grad=True)
        y = x.as_subclass(Sub)
        with lib.no_grad():
            x.add_(1)
        (y * 3).sum().backward()
        out[lib] = (type(y).__name__, y.requires_grad, y.is_leaf, type(y.grad_fn).__name__,
                    y.tolist(), x.grad.tolist())
    assert out[ember] == out[torch]


def test_disable_torch_function_subclass():
    for lib in LIBS:
        Logged, calls = _logging_subclass(lib)
        x = lib.ones(2).as_subclass(Logged)
        with lib._C.DisableTorchFunctionSubclass():
            y = x + 1
        assert type(y) is lib.Tensor and not calls


def _scalar_tensor_program(lib):
    """The ScalarTensor example of torch's "Extending torch" notes."""
    handled = {}

    class ScalarTensor:
        def __init__(self, N, value):
            self._N = N
            self._value = value

        def tensor(self):
            return self._value * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def implements(torch_function):
        def decorator(func):
            functools.update_wrapper(func, torch_function)
            handled[torch_function] = func
            return func
        return decorator

    @implements(lib.mean)
    def mean(input):
        return float(input._value) / input._N

    def ensure_tensor(data):
        if isinstance(data, ScalarTensor):
            return data.tensor()
        return lib.as_tensor(data)

    @implements(lib.add)
    def add(input, other):
        try:
            if input._N == other._N:
                return ScalarTensor(input._N, input._value + other._value)
            raise ValueError("Shape mismatch!")
        except AttributeError:
            return lib.add(ensure_tensor(input), ensure_tensor(other))

    d = ScalarTensor(5, 2)
    s = ScalarTensor(2, 2)
    results = [lib.mean(d), lib.add(s, s)._value, lib.add(s, lib.tensor([[1, 1], [1, 1]])).tolist()]
    with pytest.raises(TypeError):
        lib.mul(s, 3)
    return results


def test_scalar_tensor_example():
    assert _scalar_tensor_program(ember) == _scalar_tensor_program(torch)


@pytest.mark.parametrize("call", [
    lambda lib, d: lib.tanh(d), lambda lib, d: lib.add(d, 1), lambda lib, d: lib.add(lib.ones(2), d),
    lambda lib, d: lib.mul(d, 2), lambda lib, d: lib.ones(2) * d, lambda lib, d: lib.sub(d, 1),
    lambda lib, d: lib.div(lib.ones(2), d), lambda lib, d: lib.sum(d), lambda lib, d: lib.mean(d),
    lambda lib, d: lib.matmul(lib.ones(2), d), lambda lib, d: lib.mm(d, lib.ones(2, 2)),
], ids=["tanh", "add", "add_other", "mul", "mul_operator", "sub", "div", "sum", "mean", "matmul", "mm"])
def test_tensor_like_reaches_its_handler(call):
    """A tensor-like argument reaches its __torch_function__ (in a fresh process these are the
    ops that switch dispatch on themselves)."""
    seen = {}
    for lib in LIBS:
        class Duck:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("handled", [t.__name__ for t in types], len(args))
        seen[lib] = call(lib, Duck())
    assert seen[ember] == seen[torch]
    assert seen[ember][0] == "handled"


def test_tensor_like_in_a_fresh_process():
    """Before anything has switched dispatch on, a tensor-like object reaching ember.mean
    dispatches (the ScalarTensor example in a program of its own)."""
    program = textwrap.dedent("""
        import ember
        from ember import _torch_function as tf
        assert not tf.is_switched_on()
        class Duck:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return func.__name__
        print(ember.mean(Duck()), tf.is_switched_on(), ember.exp(Duck()))
    """)
    out = _run_fresh(program)
    assert out.stdout.split() == ["mean", "True", "exp"]


def _diagonal_tensor_program(lib):
    """A DiagonalTensor in the style of torch's tests of the protocol: a duck type implementing
    mean and mm, refusing the rest."""
    handled = {}

    class DiagonalTensor:
        def __init__(self, N, value):
            self._N, self._i = N, value

        def tensor(self):
            return self._i * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func not in handled:
                return NotImplemented
            return handled[func](*args, **(kwargs or {}))

    handled[lib.mean] = lambda mat: float(mat._i) / mat._N
    handled[lib.mm] = lambda a, b: a.tensor() @ (b.tensor() if isinstance(b, DiagonalTensor) else b)
    d = DiagonalTensor(5, 2)
    results = [lib.mean(d), lib.mm(d, d).tolist(), lib.mm(d, lib.ones(5, 1)).tolist()]
    with pytest.raises(TypeError):
        lib.tanh(d)
    return results


def test_diagonal_tensor_example():
    assert _diagonal_tensor_program(ember) == _diagonal_tensor_program(torch)


def test_types_lists_each_overriding_type_subclass_first():
    seen = {}
    for lib in LIBS:
        record = []

        class Base(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                record.append((cls.__name__, sorted(t.__name__ for t in types)))
                return super().__torch_function__(func, types, args, kwargs)

        class Derived(Base):
            pass

        class Other(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                record.append((cls.__name__, sorted(t.__name__ for t in types)))
                return NotImplemented

        b = lib.ones(2).as_subclass(Base)
        d = lib.ones(2).as_subclass(Derived)
        o = lib.ones(2).as_subclass(Other)
        r1 = lib.add(b, d)
        with pytest.raises(TypeError):   # Other refuses; Base's default refuses an unrelated type
            lib.add(o, b)
        seen[lib] = (record, type(r1).__name__)
    assert seen[ember] == seen[torch]


def test_mode_records_calls():
    seen = {}
    for lib in LIBS:
        class Recorder(lib.overrides.TorchFunctionMode):
            def __init__(self):
                super().__init__()
                self.names = []

            def __torch_function__(self, func, types, args=(), kwargs=None):
                self.names.append(func)
                return func(*args, **(kwargs or {}))

        a = lib.ones(2)
        with Recorder() as rec:
            b = a + 1
            b.sum()
            lib.nn.functional.relu(a)
        seen[lib] = [rec.names[0] is lib.Tensor.__add__ or rec.names[0] is lib.Tensor.add,
                     rec.names[1] is lib.Tensor.sum, rec.names[2] is lib.nn.functional.relu,
                     len(rec.names)]
    assert seen[ember] == seen[torch]


def test_overrides_helpers():
    for lib in LIBS:
        o = lib.overrides
        Logged, _ = _logging_subclass(lib)
        x = lib.ones(2).as_subclass(Logged)
        plain = lib.ones(2)
        assert o.has_torch_function((x,)) and not o.has_torch_function((plain, 1))
        assert o.has_torch_function_unary(x) and o.has_torch_function_variadic(plain, x)
        assert o.is_tensor_like(plain) and o.is_tensor_like(x) and not o.is_tensor_like(1)
        assert o.is_tensor_method_or_property(lib.Tensor.add)
        assert o.is_tensor_method_or_property(lib.Tensor.shape.__get__)
        overridable = o.get_overridable_functions()
        assert lib.add in overridable[lib] and lib.nn.functional.relu in overridable[lib.nn.functional]
        assert lib.Tensor.add in overridable[lib.Tensor]
        assert lib.is_tensor in o.get_ignored_functions()
        dummy = o.get_testing_overrides()[lib.add]
        assert dummy(plain, plain) == -1


def test_handle_torch_function_and_wrap():
    out = {}
    for lib in LIBS:
        o = lib.overrides

        class Duck:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return (func.__name__, len(args), sorted(kwargs or {}))

        @o.wrap_torch_function(lambda a, b=None: (a,))
        def double(a, b=None):
            return a * 2

        out[lib] = (double(Duck(), b=1), double(lib.ones(1)).tolist(),
                    o.handle_torch_function(double, (Duck(),), Duck(), 3))
        with pytest.raises(TypeError, match="no implementation found"):
            class Refuses:
                @classmethod
                def __torch_function__(cls, func, types, args=(), kwargs=None):
                    return NotImplemented
            o.handle_torch_function(double, (Refuses(),), Refuses())
    assert out[ember] == out[torch]


def test_plain_tensors_after_mode_run_their_own_code():
    """A mode switches dispatch on only while it is active (when nothing else has), so that plain
    Tensors run their own code again after it."""
    program = textwrap.dedent("""
        import ember
        from ember import _torch_function as tf
        code = ember.add.__code__
        with ember.overrides.BaseTorchFunctionMode():
            during = tf.is_switched_on() and ember.add.__code__ is not code
        print(during, tf.is_switched_on(), ember.add.__code__ is code)
    """)
    out = _run_fresh(program)
    assert out.stdout.split() == ["True", "False", "True"]


def test_disable_torch_function_turns_modes_off_too():
    seen = {}
    for lib in LIBS:
        class Recorder(lib.overrides.TorchFunctionMode):
            def __init__(self):
                super().__init__()
                self.count = 0

            def __torch_function__(self, func, types, args=(), kwargs=None):
                self.count += 1
                return func(*args, **(kwargs or {}))

        a = lib.ones(2)
        with Recorder() as rec:
            with lib._C.DisableTorchFunctionSubclass():
                a + 1
            subclass_disabled = rec.count
            with lib._C.DisableTorchFunction():
                a + 1
            seen[lib] = (subclass_disabled, rec.count)
    assert seen[ember] == seen[torch] == (1, 1)


def test_nested_modes_innermost_first():
    seen = {}
    for lib in LIBS:
        order = []

        class Named(lib.overrides.TorchFunctionMode):
            def __init__(self, name):
                super().__init__()
                self.name = name

            def __torch_function__(self, func, types, args=(), kwargs=None):
                order.append(self.name)
                return func(*args, **(kwargs or {}))

        with Named("outer"), Named("inner"):
            lib.ones(2).sum()
        seen[lib] = order[-2:]
    assert seen[ember] == seen[torch] == ["inner", "outer"]


def test_mode_and_subclass_together():
    seen = {}
    for lib in LIBS:
        order = []
        Logged, calls = _logging_subclass(lib)

        class Recorder(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                order.append(("mode", [t.__name__ for t in types]))
                return func(*args, **(kwargs or {}))

        x = lib.ones(2).as_subclass(Logged)
        with Recorder():
            y = lib.neg(x)
        seen[lib] = (order, len(calls), type(y).__name__)
    assert seen[ember] == seen[torch]


# calls whose first reach of a tensor-like ``d`` dispatches (source text: run in a fresh process)
FIRST_CALLS = [
    "lib.cat([lib.ones(2), d])", "lib.stack([d, d])", "lib.where(lib.ones(2) > 0, d, 0.0)",
    "lib.reshape(d, (2,))", "lib.flatten(d)", "lib.transpose(d, 0, 1)", "lib.permute(d, (1, 0))",
    "lib.unsqueeze(d, 0)", "lib.squeeze(d)", "lib.chunk(d, 2)", "lib.split(d, 1)",
    "lib.clamp(d, 0, 1)", "lib.zeros_like(d)", "lib.ones_like(d, dtype=lib.float64)",
    "lib.bmm(d, lib.ones(1, 2, 2))", "lib.pow(d, 2)", "lib.softmax(d, 0)",
    "lib.nn.functional.relu(d)", "lib.nn.functional.gelu(d)", "lib.nn.functional.silu(d)",
    "lib.nn.functional.softmax(d, -1)", "lib.nn.functional.log_softmax(d, -1)",
    "lib.nn.functional.linear(d, lib.ones(2, 2))", "lib.nn.functional.dropout(d, 0.5)",
    "lib.nn.functional.layer_norm(d, (2,))", "lib.nn.functional.batch_norm(d, None, None)",
    "lib.nn.functional.mse_loss(d, lib.ones(2))", "lib.nn.functional.cross_entropy(d, lib.ones(2))",
    "lib.nn.functional.nll_loss(d, lib.ones(2).long())",
    "lib.nn.functional.binary_cross_entropy_with_logits(d, lib.ones(2))",
    "lib.nn.functional.conv1d(d, lib.ones(1, 1, 1))", "lib.nn.functional.conv2d(d, lib.ones(1, 1, 1, 1))",
    "lib.nn.functional.embedding(lib.tensor([0]), d)",
]

_FIRST_CALL_PROGRAM = """
import json
import {lib} as lib
from ember import _torch_function as tf
class Duck:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ["handled", [t.__name__ for t in types], len(args) + len(kwargs or {{}})]
out = []
for call in {calls!r}:
    if "{lib}" == "ember":
        assert not tf.is_switched_on(), call
    out.append(eval(call, {{"lib": lib, "d": Duck()}}))
    if "{lib}" == "ember":
        tf.switch_off("tensor-like")   # the next call is a first call again
print(json.dumps(out))
"""


def test_tensor_like_dispatches_on_its_first_call():
    """Before dispatch is switched on, a tensor-like reaching any of these ops dispatches (as
    torch does from the first call)."""
    import json
    ours = json.loads(_run_fresh(_FIRST_CALL_PROGRAM.format(lib="ember", calls=FIRST_CALLS)).stdout)
    theirs = json.loads(_run_fresh(_FIRST_CALL_PROGRAM.format(lib="torch", calls=FIRST_CALLS)).stdout)
    for call, e, t in zip(FIRST_CALLS, ours, theirs):
        # (torch's Python-level functions also list the plain Tensor arguments' type)
        assert e[0] == t[0] == "handled" and e[1] == [n for n in t[1] if n != "Tensor"], (call, e, t)


def test_an_error_with_no_tensor_like_stays_the_same_error():
    with pytest.raises(TypeError, match="must be tuple of Tensors"):
        ember.cat(ember.ones(2))
    with pytest.raises(AttributeError):
        ember.nn.functional.relu([1.0, 2.0])


def _setter_program(lib):
    seen = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name == "__set__":
                seen.append(("set", [type(a).__name__ for a in args]))
            return super().__torch_function__(func, types, args, kwargs)

    t = lib.ones(2).as_subclass(Logged)
    t.requires_grad = True
    t.grad = lib.ones(2)
    t.data = lib.zeros(2)
    return seen, t.requires_grad, type(t.grad).__name__, t.data.tolist()


def test_property_setters_reach_torch_function():
    ours, theirs = _setter_program(ember), _setter_program(torch)
    assert ours == (theirs[0], *theirs[1:3], theirs[3])
    assert [s[0] for s in ours[0]] == ["set"] * 3
