"""Tensor's compiled methods (``ops/_compiled_methods.py``): the operators give the same results,
nodes, saved tensors, gradients and errors as the Python ops, and as torch; the view ops the
same views; every case the compiled path does not take reaches the Python op."""
import itertools
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.ops import _common, _compiled_methods, compare, pointwise, view

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

OPERATORS = {
    "add": lambda a, b: a + b, "radd": lambda a, b: b + a, "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b, "rmul": lambda a, b: b * a, "div": lambda a, b: a / b,
}


@pytest.fixture(autouse=True)
def compiled(dispatch_off):
    """The compiled methods in place (dispatch, which puts the Python ops back, switched off)."""
    _compiled_methods.install()
    if not _compiled_methods.installed():
        pytest.skip("the compiled methods cannot be built here (no C compiler or headers)")


def python_ops(monkeypatch):
    for name, python_op in _compiled_methods.python_methods().items():
        monkeypatch.setattr(ember.Tensor, name, python_op)


def operands(kind, dtype, rng, requires_grad=False):
    """``(a, b)`` as arrays or numbers: ``kind`` is "same" (one shape), "row" (b a row of a),
    "scalar" (0-d tensors), "float" and "int" (a Python number b)."""
    def draw(shape):
        values = rng.uniform(0.5, 2.0, shape)
        if np.dtype(dtype).kind == "c":
            values = values + 1j * rng.uniform(0.5, 2.0, shape)
        return np.asarray(values).astype(dtype)
    a = draw(() if kind == "scalar" else (3, 4))
    if kind == "float":
        return a, 1.75
    if kind == "int":
        return a, 3
    return a, draw({"same": (3, 4), "row": (4,), "scalar": ()}[kind])


def both(lib, a, b, requires_grad):
    ta = lib.tensor(a, requires_grad=requires_grad)
    tb = lib.tensor(b, requires_grad=requires_grad) if isinstance(b, np.ndarray) else b
    return ta, tb


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "float16"])
@pytest.mark.parametrize("kind", ["same", "row", "scalar", "float", "int"])
@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_values_and_gradients_match_torch(name, kind, dtype):
    rng = np.random.default_rng(0)
    a, b = operands(kind, dtype, rng)
    grad = dtype in ("float32", "float64")
    results = {}
    for lib in (ember, torch):
        ta, tb = both(lib, a, b, grad)
        out = OPERATORS[name](ta, tb)
        got = [out.detach().numpy(), str(out.dtype).split(".")[-1], tuple(out.shape)]
        if grad:
            (out * out).sum().backward()
            got += [ta.grad.numpy()] + ([tb.grad.numpy()] if isinstance(tb, lib.Tensor) else [])
            got.append(type(out.grad_fn).__name__)
        results[lib] = got
    for mine, theirs in zip(results[ember], results[torch]):
        if isinstance(mine, np.ndarray):
            tolerance = {"float16": 2e-3, "float32": 1e-6, "complex64": 1e-6}.get(dtype, 1e-12)
            np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance)
        else:
            assert mine == theirs
    assert isinstance(results[ember][0], np.ndarray)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_compiled_and_python_methods_agree(monkeypatch, name, dtype):
    rng = np.random.default_rng(1)
    for kind in ("same", "row", "scalar", "float", "int"):
        a, b = operands(kind, "float64", rng)
        a = (2 * a).astype(dtype)   # (no zeros)
        b = (2 * b).astype(dtype) if isinstance(b, np.ndarray) else b
        compiled = _result_or_error(name, a, b)
        with monkeypatch.context() as m:
            python_ops(m)
            python = _result_or_error(name, a, b)
        assert type(compiled) is type(python), (kind, compiled, python)
        if isinstance(python, ember.Tensor):
            assert compiled.dtype == python.dtype and compiled.shape == python.shape
            assert type(compiled._data) is np.ndarray and compiled._version_counter == [0]
            np.testing.assert_array_equal(compiled._data, python._data)
        else:
            assert str(compiled) == str(python)


def _result_or_error(name, a, b):
    try:
        return OPERATORS[name](ember.tensor(a), ember.tensor(b) if isinstance(b, np.ndarray) else b)
    except (RuntimeError, TypeError) as error:
        return error


@pytest.mark.parametrize("kind", ["same", "row", "float"])
@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_the_nodes_fields_and_saved_tensors_are_the_python_ops(monkeypatch, name, kind):
    a, b = operands(kind, "float32", np.random.default_rng(2))
    for grads in ((True, True), (True, False), (False, True)):
        if kind == "float" and not grads[0]:
            continue
        fields = []
        for python in (False, True):
            with monkeypatch.context() as m:
                if python:
                    python_ops(m)
                ta = ember.tensor(a, requires_grad=grads[0])
                tb = ember.tensor(b, requires_grad=grads[1]) if kind != "float" else b
                out = OPERATORS[name](ta, tb)
                node = out.grad_fn
                names = ("self_shape", "self_dtype", "other_shape", "other_dtype", "other_scalar", "alpha")
                saved = tuple(None if t is None else ("a" if t is ta else "b" if t is tb else "out")
                              for t in node._saved)
                versions = getattr(node, "_versions", None)
                fields.append((type(node), [getattr(node, f, "-") for f in names], saved, versions,
                               [fn is None for fn, _ in node.next_functions]))
        assert fields[0] == fields[1], (grads, fields)


def test_negation():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    y = -x
    assert type(y.grad_fn).__name__ == "NegBackward0" and y.tolist() == [-1.0, 2.0]
    y.sum().backward()
    assert x.grad.tolist() == [-1.0, -1.0]
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -ember.tensor([True])
    assert (-ember.tensor([1, 2])).dtype == ember.int64


def test_errors_are_the_python_ops():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\)"):
        ember.ones(3) + ember.ones(2)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        ember.tensor([True]) - ember.tensor([False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        ember.tensor([True]) - ember.tensor([1.0])
    with pytest.raises(TypeError):
        ember.ones(2).__add__(1, 2)
    with pytest.raises(TypeError, match="unsupported operand type"):
        ember.ones(2) + "x"


def test_the_results_own_their_counters_and_arrays():
    x = ember.ones(3)
    y, z = x + 1.0, x + 1.0
    assert y._version_counter is not z._version_counter and y._data is not z._data
    y.add_(1)
    assert y._version_counter == [1] and z._version_counter == [0] and z.tolist() == [2.0, 2.0, 2.0]
    zero_d = ember.tensor(2.0) * ember.tensor(3.0)
    assert type(zero_d._data) is np.ndarray and zero_d._data.shape == () and zero_d.item() == 6.0


def test_a_saved_operand_modified_in_place_is_caught():
    a = ember.ones(3, requires_grad=True)
    b = ember.full((3,), 2.0, requires_grad=True)
    out = a * b
    with ember.no_grad():
        b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_no_grad_and_detached_operands_record_nothing():
    a = ember.ones(3, requires_grad=True)
    with ember.no_grad():
        out = a * a + a
    assert out.grad_fn is None and not out.requires_grad
    out = a.detach() * 2.0
    assert out.grad_fn is None and not out.requires_grad


def test_saved_tensor_hooks_see_mul_operands():
    packed = []

    def pack(t):
        packed.append(t)
        return t

    a = ember.ones(3, requires_grad=True)
    b = ember.full((3,), 2.0, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = a * b
    assert len(packed) == 2
    out.sum().backward()
    assert a.grad.tolist() == [2.0] * 3 and b.grad.tolist() == [1.0] * 3


def test_forward_mode_ad_takes_the_python_op():
    import ember.autograd.forward_ad as fwAD
    primal, tangent = ember.ones(3), ember.full((3,), 2.0)
    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = x * 3.0 + x
        assert fwAD.unpack_dual(y).tangent.tolist() == [8.0] * 3


def test_torch_function_modes_and_subclasses_see_the_operator():
    from ember.overrides import TorchFunctionMode
    seen = []

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = ember.ones(2)
    with Recording():
        x * x
        x + 1.0
        x.view(2, 1)
        assert ember.Tensor.__mul__ is pointwise.mul   # (handlers see Tensor's own methods)
    assert seen == ["mul", "add", "view"]
    x * x
    assert seen == ["mul", "add", "view"] and _compiled_methods.installed()

    class Sub(ember.Tensor):
        pass

    s = ember.ones(2).as_subclass(Sub)
    assert type(s + ember.ones(2)) is Sub and type(ember.ones(2) * s) is Sub


def test_large_arrays_take_the_python_op(spy):
    calls = spy(pointwise, "large_binary")
    n = pointwise._ROWS_MIN_BYTES // 4
    x = ember.ones(n)
    assert (x + x).sum().item() == 2 * n
    assert len(calls) == 1


def test_install_leaves_patched_operators_alone(monkeypatch):
    def patched(a, b):
        return "patched"

    monkeypatch.setattr(ember.Tensor, "__add__", patched)
    _compiled_methods.install()
    assert ember.ones(1) + 1 == "patched"
    compiled_mul = ember.Tensor.__dict__["__mul__"]
    assert _compiled_methods.as_python("__add__", compiled_mul) is compiled_mul
    assert _compiled_methods.as_python("__mul__", compiled_mul) is pointwise.mul


def test_the_operators_carry_the_ops_docstrings():
    assert ember.Tensor.__mul__.__doc__ == pointwise.mul.__doc__
    assert ember.Tensor.__add__.__name__ == "__add__"


def test_the_switch_leaves_the_python_ops():
    env = dict(os.environ, EMBER_COMPILED_METHODS="0")
    code = ("import ember, ember.ops.pointwise as p; x = ember.ones(2); y = x * x + 1; "
            "print(ember.Tensor.__dict__['__mul__'] is p.mul, y.tolist())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "[2.0,", "2.0]"]


VIEW_CALLS = [
    ("view", (8, 2)), ("view", ((2, -1),)), ("view", ([-1],)), ("view", (ember.Size([4, 4]),)), ("view", ()),
    ("view", (3, 5)), ("view", (-1, -1)), ("view", (2.0, 8)), ("view", (ember.float32,)),
    ("reshape", (4, 4)), ("reshape", ((16,),)), ("reshape", (2, -1, 2)), ("reshape", (0, -1)),
    ("transpose", (0, 1)), ("transpose", (-1, 0)), ("transpose", (0, 2)), ("swapdims", (1, 0)), ("swapaxes", (0, -2)),
    ("unsqueeze", (0,)), ("unsqueeze", (-1,)), ("unsqueeze", (2,)), ("unsqueeze", (3,)), ("unsqueeze", (-4,)),
    ("__getitem__", (0,)), ("__getitem__", (-1,)), ("__getitem__", (3,)), ("__getitem__", (4,)),
    ("__getitem__", (True,)), ("__getitem__", (slice(1, 3),)), ("__getitem__", (None,)),
    ("__getitem__", ((slice(None), None),)), ("__getitem__", ((Ellipsis, None),)), ("__getitem__", ((None, 1),)),
    ("__getitem__", ((1, slice(None, None, 2)),)), ("__getitem__", ((slice(None), -1),)), ("__getitem__", ((),)),
    ("__getitem__", ((None, Ellipsis, None, 2),)), ("__getitem__", ((0, 0),)), ("__getitem__", ((4, 0),)),
    ("__getitem__", ((0, 1, 2),)), ("__getitem__", (slice(None, None, -1),)), ("__getitem__", ((Ellipsis, Ellipsis),)),
    ("__getitem__", ((slice(None), 1.0),)),
    ("squeeze", ()), ("squeeze", (0,)), ("squeeze", (-1,)), ("squeeze", (2,)), ("squeeze", ((0, 1),)),
    ("squeeze", (1.0,)), ("flatten", ()), ("flatten", (0,)), ("flatten", (1,)), ("flatten", (0, 1)),
    ("flatten", (1, 0)), ("flatten", (-2, -1)), ("flatten", (0, 5)), ("flatten", (1, 1)),
]


def _view_or_error(tensor, name, args):
    try:
        return getattr(tensor, name)(*args)
    except (RuntimeError, TypeError, IndexError, ValueError) as error:
        return error


def _views_on_both_paths(monkeypatch, source, name, args, base):
    """``getattr(source(), name)(*args)`` with the compiled methods, then with the Python ops: each
    result's shape, strides, values, base, identity, version counter, sharing, requires_grad and
    writeability, or its error (type and message)."""
    results = []
    for python in (False, True):
        with monkeypatch.context() as m:
            if python:
                python_ops(m)
            t = source()
            out = _view_or_error(t, name, args)
            if isinstance(out, ember.Tensor):
                shares = out._data.base is not None and np.may_share_memory(out._data, t._data)
                results.append((tuple(out.shape), out._data.strides, out._data.tolist(), out._base is base,
                                out is t, out._data is t._data, out._version_counter is t._version_counter,
                                shares, out.requires_grad, out._data.flags.writeable))
            else:
                results.append((type(out), str(out)))
    return results


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded"])
@pytest.mark.parametrize("name,args", VIEW_CALLS, ids=[f"{n}{a}" for n, a in VIEW_CALLS])
def test_views_are_the_python_ops(monkeypatch, layout, name, args):
    base = ember.tensor(np.arange(32, dtype=np.float32).reshape(2, 16))
    source = {"contiguous": lambda: base[0].view(4, 4), "transposed": lambda: base[1].view(4, 4).t(),
              "sliced": lambda: base[:, 4:12].reshape(4, 4),
              "expanded": lambda: base[0, :4].expand(4, 4)}[layout]
    results = _views_on_both_paths(monkeypatch, source, name, args, base)
    assert results[0] == results[1]


EXPAND_CALLS = [(4, 4), (2, 4, 4), ((1, 4, -1),), ([3, -1, -1],), (-1, -1), (1, 1, -1, -1), (0, 1, 4), (4,), (4, 5),
                (-2, 4, 4), (2, -1, -2), (4.0, 4), ((4, 4), 4), (ember.Size([2, 1, 4]),), (np.int64(4), 4)]


@pytest.mark.parametrize("layout", ["row", "column", "square", "transposed", "single", "readonly", "empty"])
@pytest.mark.parametrize("args", EXPAND_CALLS, ids=[str(a) for a in EXPAND_CALLS])
def test_expand_is_the_python_op(monkeypatch, layout, args):
    base = ember.tensor(np.arange(16, dtype=np.float32).reshape(4, 4))
    source = {"row": lambda: base[:1], "column": lambda: base[:, :1].contiguous(), "square": lambda: base,
              "transposed": lambda: base.t()[:1], "single": lambda: base[0, :1].contiguous(),
              "readonly": lambda: base[:1].expand(1, 4), "empty": lambda: ember.zeros(0, 1)}[layout]
    results = []
    for python in (False, True):
        with monkeypatch.context() as m:
            if python:
                python_ops(m)
            t = source()
            out = _view_or_error(t, "expand", args)
            if isinstance(out, ember.Tensor):
                results.append((out.shape, out.stride(), out._data.tolist(), out._base is base or out._base is t,
                                out._version_counter is t._version_counter, np.may_share_memory(out._data, t._data),
                                out._data.flags.writeable))
            else:
                results.append((type(out), str(out)))
    assert results[0] == results[1]


def test_expand_of_a_tensor_that_requires_grad_records_the_python_ops_node(monkeypatch):
    results = []
    for python in (False, True):
        with monkeypatch.context() as m:
            if python:
                python_ops(m)
            x = ember.ones(1, 3, requires_grad=True)
            y = x.expand(2, 3)
            y.backward(ember.ones(2, 3))
            results.append((type(y.grad_fn).__name__, y.grad_fn.in_shape, x.grad.tolist()))
    assert results[0] == results[1]


_KEY_ITEMS = [None, Ellipsis, 0, -1, 2, slice(None), slice(1, None), slice(None, -1, 2), slice(7, 2), slice(-9, 9, 3)]


@needs_torch
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "stepped", "selected"])
def test_basic_keys_give_torchs_views(layout):
    """``x[key]`` for every key of up to three of these items (one ``...`` at most) has torch's
    shape, strides, storage offset and values, a ``None``'s stride included (the size times
    the stride of the dim it goes before, taken in the key's order); a key torch refuses is
    refused."""
    base = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    make = {"contiguous": lambda lib: lib.tensor(base), "permuted": lambda lib: lib.tensor(base).permute(2, 0, 1),
            "stepped": lambda lib: lib.tensor(base)[:, ::2], "selected": lambda lib: lib.tensor(base)[:, 1]}[layout]
    x, tx = make(ember), make(torch)
    for count in range(4):
        for key in itertools.product(_KEY_ITEMS, repeat=count):
            if key.count(Ellipsis) > 1:
                continue
            try:
                want = tx[key]
            except IndexError:
                with pytest.raises(IndexError):
                    x[key]
                continue
            got = x[key]
            assert (tuple(got.shape), got.stride(), got.storage_offset()) == (
                tuple(want.shape), want.stride(), want.storage_offset()), key
            assert got.tolist() == want.tolist() and got._base is (x if x._base is None else x._base)


@pytest.mark.parametrize("key", [0, -1, slice(None), slice(1, 3), slice(None, None, 2), None, Ellipsis, (),
                                 (slice(None), None), (None, 1), (Ellipsis, None), (1, slice(None), 0),
                                 (slice(None), slice(None)), (None, Ellipsis, 2), (slice(1, None), -1, None)],
                         ids=repr)
def test_indexing_a_tensor_that_requires_grad_records_the_python_ops_node(monkeypatch, key):
    """``x[key]`` for a basic key of a tensor that requires grad records the node the Python op
    records (named after the last step that did something), with its fields, and gives the same
    gradient."""
    values = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    grads = {}
    results = []
    for python in (False, True):
        with monkeypatch.context() as m:
            if python:
                python_ops(m)
            x = ember.tensor(values, requires_grad=True)
            y = (x * 1.0)[key]
            node = y.grad_fn
            results.append((type(node).__name__, node.in_shape, node.key, y.requires_grad, y.shape,
                            y.stride(), y._base is not None))
            y.backward(ember.ones(y.shape))
            grads[python] = x.grad.numpy()
    assert results[0] == results[1]
    np.testing.assert_array_equal(grads[False], grads[True])
    with ember.no_grad():
        assert (ember.ones(2, 3, requires_grad=True)[key if key != (1, slice(None), 0) else 1]).grad_fn is None


@pytest.mark.parametrize("shape", [(3, 1, 5), (1, 1), (2, 3, 4), (1,), (4, 1), (2, 1, 3, 1), (1, 3, 1), (), (4, 4),
                                   (0, 3)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded", "readonly"])
def test_squeeze_flatten_and_diagonal_are_the_python_ops(monkeypatch, shape, layout):
    """squeeze (every dim of size 1, or one), flatten (every pair of dims) and diagonal (offsets in and out of
    range, every pair of dims) of tensors with dims of size 1, laid out every way: the Python op's shape,
    strides, values, base, flags and identity (flatten of one dim is the tensor itself), or its error."""
    base = ember.tensor(np.arange(math.prod(shape), dtype=np.float32).reshape(shape))
    source = {"contiguous": lambda: base, "transposed": lambda: base.mT if base.dim() >= 2 else base,
              "sliced": lambda: base[..., ::2] if base.dim() else base,
              "expanded": lambda: ember.zeros(shape[-1:]).expand(*shape) if shape else base,
              "readonly": lambda: ember.tensor(np.broadcast_to(np.float32(1), shape))}[layout]
    n = len(shape)
    calls = ([("squeeze", ())] + [("squeeze", (d,)) for d in range(-n - 1, n + 1)] + [("flatten", ())]
             + [("flatten", (d,)) for d in range(-n, n + 1)]
             + [("flatten", (a, b)) for a in range(n) for b in range(n)]
             + [("diagonal", (offset, a, b)) for offset in (0, 1, -1, 2, -3, 9) for a in range(-n, n) for b in range(n)]
             + [("diagonal", ()), ("diagonal", (1,)), ("diagonal", (1.0,))])
    for name, args in calls:
        results = _views_on_both_paths(monkeypatch, source, name, args, base)
        assert results[0] == results[1], (name, args)


@pytest.mark.parametrize("name,args", [("squeeze", ()), ("squeeze", (1,)), ("flatten", ()), ("flatten", (0, 1)),
                                       ("diagonal", ()), ("diagonal", (1, 0, 2))])
def test_squeeze_flatten_and_diagonal_take_the_common_case(monkeypatch, name, args):
    """A plain tensor's view is made in C: the Python op's ``make_view`` is not reached (it is with the
    Python ops in place)."""
    x = ember.arange(12.0).reshape(3, 1, 4)
    made = []
    real = view.make_view
    monkeypatch.setattr(view, "make_view", lambda *a: made.append(a) or real(*a))
    getattr(x, name)(*args)
    assert made == []
    with monkeypatch.context() as m:
        python_ops(m)
        getattr(x, name)(*args)
    assert made


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded", "readonly", "offset", "empty"])
def test_as_strided_is_the_python_op(monkeypatch, layout):
    """as_strided with sizes and strides in and out of the storage's bounds (zeros, repeats, lists, the
    storage offset left, given, at the end and past it, negative, floats), on tensors laid out every way:
    the Python op's shape, strides, values, base, flags and storage offset, or its error."""
    base = ember.tensor(np.arange(24, dtype=np.float32).reshape(4, 6))
    source = {"contiguous": lambda: base, "transposed": lambda: base.mT, "sliced": lambda: base[1:, ::2],
              "expanded": lambda: ember.zeros(6).expand(4, 6),
              "readonly": lambda: ember.tensor(np.broadcast_to(np.float32(1), (4, 6))),
              "offset": lambda: base.view(-1)[5:], "empty": lambda: base[:0]}[layout]
    calls = [((2, 2), (1, 2)), ([3, 4], [6, 1]), ((24,), (1,)), ((25,), (1,)), ((4, 6), (1, 4)), ((2, 3), (0, 0)),
             ((0, 5), (100, 1)), ((), ()), ((2,), (1, 1)), ((2, -1), (1, 1)), ((2, 2), (1, -1)), ((2.0, 2), (1, 1)),
             ((3, 3), (2, 5), None), ((2, 2), (1, 2), 0), ((2, 2), (1, 2), 20), ((2, 2), (1, 2), 21),
             ((1,), (1,), 23), ((1,), (1,), 24), ((0,), (1,), 24), ((0,), (1,), 30), ((2,), (1,), -1),
             ((2,), (1,), 2.0), ((5, 5), (4, 5), 0), ((2, 2), (2 ** 61, 1)), ((2 ** 62, 2 ** 62), (0, 0))]
    for args in calls:
        results = _views_on_both_paths(monkeypatch, source, "as_strided", args, base)
        assert results[0] == results[1], args
        offsets = []
        for python in (False, True):
            with monkeypatch.context() as m:
                if python:
                    python_ops(m)
                out = _view_or_error(source(), "as_strided", args)
                offsets.append(out.storage_offset() if isinstance(out, ember.Tensor) else None)
        assert offsets[0] == offsets[1], args


def test_as_strided_of_a_non_tensor_raises_torchs_error():
    import torch
    errors = []
    for lib in (ember, torch):
        with pytest.raises(TypeError) as caught:
            lib.as_strided([1.0, 2.0], (1,), (1,))
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_as_strided_takes_the_common_case(monkeypatch):
    """A plain tensor's strided view (of its own storage or its base's) is made in C: the Python op's
    ``make_view`` is not reached (it is with the Python ops in place)."""
    from ember.ops import shape
    x = ember.arange(12.0)
    made = []
    real = shape.make_view
    monkeypatch.setattr(shape, "make_view", lambda *a: made.append(a) or real(*a))
    x.as_strided((2, 2), (1, 3))
    x[2:].as_strided((2, 2), (1, 3))
    x.as_strided((2, 2), (1, 3), 4)
    assert made == []
    with monkeypatch.context() as m:
        python_ops(m)
        x.as_strided((2, 2), (1, 3))
    assert made


PUBLIC_VIEWS = [("reshape", (3, 5)), ("reshape", ((5, 3),)), ("transpose", (0, 1)), ("swapdims", (1, 0)),
                ("swapaxes", (0, 1)), ("squeeze", ()), ("squeeze", (0,)), ("unsqueeze", (1,)), ("flatten", ()),
                ("flatten", (0, 1)), ("diagonal", ()), ("diagonal", (1, 1, 0)), ("as_strided", ((3, 2), (1, 3))),
                ("as_strided", ((2,), (2,), 1))]


@pytest.mark.parametrize("name,args", PUBLIC_VIEWS, ids=[f"{n}{a}" for n, a in PUBLIC_VIEWS])
def test_public_view_functions_take_the_compiled_methods_and_dispatch_once(monkeypatch, name, args):
    """``ember.reshape(x, ...)`` and the other public functions of the compiled view methods: the Python
    op's result; the compiled method, not the Python op, for a plain tensor; a subclass's and a mode's
    ``__torch_function__`` see the public function once (not the method it calls)."""
    import ember.overrides
    fn = getattr(ember, name)
    x = ember.arange(15.0).reshape(1, 15)
    got = fn(x, *args)
    with monkeypatch.context() as m:
        python_ops(m)
        want = fn(x, *args)
    assert (tuple(got.shape), got._data.strides, got.tolist()) == (tuple(want.shape), want._data.strides, want.tolist())
    calls = []
    python_op = _compiled_methods.python_methods()[name]
    from ember.ops import shape
    monkeypatch.setattr(shape if name == "as_strided" else view,
                        f"_python_{ {'swapdims': 'transpose', 'swapaxes': 'transpose'}.get(name, name)}",
                        lambda *a, **k: calls.append(a) or python_op(*a, **k))
    fn(x, *args)
    assert calls == []

    class Recorder(ember.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.funcs = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.funcs.append(func)
            return func(*args, **(kwargs or {}))
    with Recorder() as recorder:
        fn(x, *args)
    assert recorder.funcs == [fn]


def test_a_view_shares_the_version_counter_and_the_memory():
    x = ember.zeros(3, 4)
    row = x[1]
    column = x.transpose(0, 1)[2]
    row.add_(1)
    assert x._version_counter[0] == 1 and column._version_counter is x._version_counter
    assert x.sum().item() == 4 and column.tolist() == [0.0, 1.0, 0.0]
    flat = x.view(12)
    flat[0] = 5.0
    assert x[0, 0].item() == 5.0 and flat._base is x and row._base is x and row._view_version == 0


def test_views_of_tensors_that_require_grad_take_the_python_op():
    x = ember.ones(2, 3, requires_grad=True)
    y = x * 2
    assert type(y.view(6).grad_fn).__name__ == "ViewBackward0"
    assert type(y.transpose(0, 1).grad_fn).__name__ == "TransposeBackward0"
    assert type(y.unsqueeze(0).grad_fn).__name__ == "UnsqueezeBackward0"
    assert type(y[0].grad_fn).__name__ == "SelectBackward0"
    assert type(y.t().reshape(6).grad_fn).__name__ == "UnsafeViewBackward0"
    assert type(y.unsqueeze(1).squeeze().grad_fn).__name__ == "SqueezeBackward0"
    assert type(y.unsqueeze(1).squeeze(1).grad_fn).__name__ == "SqueezeBackward1"
    assert type(y.flatten().grad_fn).__name__ == "ViewBackward0"
    (y.view(6).sum() + y[1].sum() + y.transpose(0, 1).unsqueeze(0).sum()).backward()
    assert x.grad.tolist() == [[4.0, 4.0, 4.0], [6.0, 6.0, 6.0]]


def test_keywords_reach_the_python_op():
    x = ember.arange(6.0)
    assert x.view(size=(2, 3)).shape == (2, 3) and x.reshape(shape=(3, 2)).shape == (3, 2)
    assert x.view(dtype=ember.int32).dtype == ember.int32
    assert x.__add__(x, alpha=2).tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]


COMPARISONS = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "reflected_lt": lambda a, b: b < a,
}


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
@pytest.mark.parametrize("kind", ["same", "row", "scalar", "float", "int"])
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_match_torch_and_the_python_ops(monkeypatch, name, kind, dtype):
    rng = np.random.default_rng(3)
    a, b = operands(kind, "float64", rng)
    a = np.round(2 * a).astype(dtype)   # (ties, so that == and <= see equal elements)
    b = np.round(2 * b).astype(dtype) if isinstance(b, np.ndarray) else b
    results = []
    for lib, python in ((torch, False), (ember, False), (ember, True)):
        with monkeypatch.context() as m:
            if python:
                python_ops(m)
            ta, tb = both(lib, a, b, False)
            try:
                out = COMPARISONS[name](ta, tb)
                results.append((out.numpy().tolist(), str(out.dtype).split(".")[-1], out.requires_grad))
            except (RuntimeError, NotImplementedError) as error:
                results.append(type(error).__name__)
    assert results[1] == results[2] and results[1] == results[0], results


MIXED_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64", "uint16",
                "complex64"]


@needs_torch
@pytest.mark.parametrize("other", MIXED_DTYPES)
@pytest.mark.parametrize("dtype", MIXED_DTYPES)
def test_comparisons_of_two_dtypes_match_torch_and_the_python_ops(monkeypatch, dtype, other):
    """Tensors (with dims) of two dtypes: the compiled comparison where NumPy's compares as torch's (an int32
    against float32 too: torch compares in float32, where 16777217 equals 16777216), the Python op's result or
    error elsewhere, torch's answer."""
    rng = np.random.default_rng(4)
    a = np.round(2 * rng.standard_normal((3, 4))).astype(dtype)
    b = np.round(2 * rng.standard_normal(4)).astype(other)
    if dtype == "int32" and other == "float32":
        a[0, 0], b[0] = 16777217, 16777216
    for name in ("eq", "lt", "ge", "reflected_lt"):
        results = []
        for lib, python in ((torch, False), (ember, False), (ember, True)):
            with monkeypatch.context() as m:
                if python:
                    python_ops(m)
                ta, tb = both(lib, a, b, False)
                try:
                    out = COMPARISONS[name](ta, tb)
                    results.append((out.numpy().tolist(), str(out.dtype).split(".")[-1]))
                except (RuntimeError, NotImplementedError) as error:
                    results.append(type(error).__name__)
        assert results[1] == results[2] and (results[1] == results[0] or isinstance(results[0], str)), results


def _torch_compiled_and_python(monkeypatch, call, values):
    """``call(lib)``'s result as ``(values(result), dtype name)`` for torch, for ember's compiled methods and for
    its Python ops."""
    results = []
    for lib, python in ((torch, False), (ember, False), (ember, True)):
        with monkeypatch.context() as m:
            if python:
                python_ops(m)
            out = call(lib)
            results.append((values(out), str(out.dtype).split(".")[-1]))
    return results


@needs_torch
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")   # (NumPy's cast of 1e300 to float32)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_tensors_with_numbers_match_torch_and_the_python_ops(monkeypatch, dtype):
    """A float32 or float64 tensor with a Python number (which the compiled case hands the ufunc as a 0-d array
    of the tensor's dtype: ``number_array``), under the operators, the comparisons and the in-place operators:
    the Python op's bits and torch's values, for numbers that round, overflow float32, are NaN or -0.0, and
    ints past 2**53."""
    a = np.array([0.1, -2.5, 3e38, -0.0, 1.0, 7.0], dtype=dtype)
    inplace = {"iadd": lambda x, v: x.add_(v), "isub": lambda x, v: x.sub_(v), "imul": lambda x, v: x.mul_(v),
               "idiv": lambda x, v: x.div_(v)}
    calls = {**OPERATORS, **COMPARISONS, **inplace}
    for value in (0.1, 2, -3, 1e300, math.nan, -0.0, 2 ** 53 + 1, 2 ** 60, 1.5):
        for name, call in calls.items():
            results = _torch_compiled_and_python(monkeypatch, lambda lib: call(lib.tensor(a), value),
                                                 lambda out: out.numpy().tobytes())
            assert results[1] == results[2], (name, value)
            assert results[1][1] == results[0][1]
            np.testing.assert_array_equal(np.frombuffer(results[1][0], dtype=results[1][1].replace("bool", "?")),
                                          np.frombuffer(results[0][0], dtype=results[0][1].replace("bool", "?")))


@needs_torch
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_tensors_with_ints_match_torch_and_the_python_ops(monkeypatch, spy, dtype):
    """An integer tensor with a Python int, in its dtype's range or out of it (torch wraps the int into the dtype
    first), under the arithmetic operators and the comparisons: the compiled case's result, the Python op's and
    torch's; an int past 64 bits goes to the Python op."""
    info = np.iinfo(dtype)
    a = np.array([info.min, -1 if info.min else 7, 0, 1, 5, info.max], dtype=dtype)
    calls = {**{name: OPERATORS[name] for name in ("add", "radd", "sub", "mul", "rmul")}, **COMPARISONS}
    for value in (0, 3, -1, 127, 128, 255, 256, 300, -129, 2 ** 31 + 5, -(2 ** 40) - 3, 2 ** 63 - 1):
        for name, call in calls.items():
            results = _torch_compiled_and_python(monkeypatch, lambda lib: call(lib.tensor(a), value),
                                                 lambda out: out.numpy().tolist())
            assert results[1] == results[2] == results[0], (name, value, results)
    seen = spy(compare, "arrays_for")
    assert (ember.tensor(a) > -1).dtype == ember.bool and (ember.tensor(a) + 300).dtype == ember.tensor(a).dtype
    assert seen == []   # (the compiled case, no Python promotion)
    results = []
    for python in (False, True):
        with monkeypatch.context() as m:
            if python:
                python_ops(m)
            try:
                results.append((ember.tensor(a) == 2 ** 70).numpy().tolist())
            except (RuntimeError, OverflowError) as error:
                results.append((type(error), str(error)))
    assert results[0] == results[1]


def test_comparisons_of_tensors_that_require_grad_record_nothing():
    x = ember.ones(3, requires_grad=True)
    out = x * 2 > 1.5
    assert out.grad_fn is None and not out.requires_grad and out.dtype == ember.bool
    assert (x == x).all().item() and (x != None) is True   # noqa: E711 (the operator itself)


# -- the compiled gradients (``backward_arrays`` of the operators' nodes and tanh's) ------------

def python_gradients(monkeypatch):
    for node_cls, python_gradient in _compiled_methods.python_gradients().items():
        monkeypatch.setattr(node_cls, "backward_arrays", python_gradient)


GRADIENT_CASES = {   # (a, b) -> the output whose sum is differentiated
    "mul": lambda a, b: a * b,
    "mul, b without grad": lambda a, b: a * b.detach(),
    "mul by a float": lambda a, b: a * 0.75,
    "mul by an int": lambda a, b: 3 * a,
    "mul by a large int": lambda a, b: a * 2 ** 40,
    "mul by a large float": lambda a, b: a * 1e300,
    "mul of a row": lambda a, b: a * b[0],
    "add": lambda a, b: a + b,
    "add, a without grad": lambda a, b: a.detach() + b,
    "add with alpha": lambda a, b: a.add(b, alpha=2),
    "add of a row": lambda a, b: a + b[0],
    "sub": lambda a, b: a - b,
    "sub, b without grad": lambda a, b: a - b.detach(),
    "neg": lambda a, b: -a,
    "tanh": lambda a, b: a.tanh(),
    "div": lambda a, b: a / (b * b + 1.0),
    "div, b without grad": lambda a, b: a / (b.detach() * b.detach() + 1.0),
    "div, a without grad": lambda a, b: a.detach() / (b * b + 1.0),
    "div by a float": lambda a, b: a / 0.75,
    "div of a row": lambda a, b: a / (b[0] * b[0] + 1.0),
    "exp": lambda a, b: a.exp(),
    "sigmoid": lambda a, b: a.sigmoid() * b,
    "a chain": lambda a, b: (-(a * b + 0.5).tanh() * 2.0 - b) * a,
    "another chain": lambda a, b: (a.sigmoid() / (b.exp() + 1.0) - a * 0.5).exp(),
    "transposed": lambda a, b: (a.t() * b.t()).tanh() - b.t(),
    "0-d": lambda a, b: (a[0, 0] * b[1, 1]).tanh() - a[0, 1],
}


_TANH_CASES = {"tanh", "a chain", "transposed", "0-d", "sigmoid", "another chain"}   # (no complex tanh or sigmoid
# gradient in ember yet)


@needs_torch
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")   # (a * 1e300 in float32)
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("case,dtype", [(case, dtype) for case in sorted(GRADIENT_CASES)
                                        for dtype in ("float32", "float64", "float16", "complex64")
                                        if not (dtype == "complex64" and case in _TANH_CASES)])
def test_gradients_match_torch_and_the_python_gradients(monkeypatch, case, dtype):
    rng = np.random.default_rng(4)
    values = [rng.uniform(-1.5, 1.5, (3, 3)) for _ in range(2)]
    if dtype == "complex64":
        values = [v + 1j * rng.uniform(-1, 1, (3, 3)) for v in values]
    values = [v.astype(dtype) for v in values]
    results = []
    for lib, python in ((ember, False), (ember, True), (torch, False)):
        with monkeypatch.context() as m:
            if python:
                python_gradients(m)
            a, b = (lib.tensor(v, requires_grad=True) for v in values)
            out = GRADIENT_CASES[case](a, b)
            (out.real if dtype == "complex64" else out).sum().backward()
            results.append([None if t.grad is None else t.grad.numpy() for t in (a, b)])
    compiled, python, theirs = results
    for mine, reference, torch_grad in zip(compiled, python, theirs):
        assert (mine is None) == (reference is None) == (torch_grad is None)
        if mine is not None:
            np.testing.assert_array_equal(mine, reference)
            tolerance = {"float16": 1e-2, "float32": 1e-5, "complex64": 1e-5}.get(dtype, 1e-12)
            np.testing.assert_allclose(mine, torch_grad, rtol=tolerance, atol=tolerance)


def _gradient_call(node, grad, gradient):
    result = gradient(node, grad)
    if result is None:
        return None
    return [None if g is None else ("grad" if g is grad else (type(g), g.dtype, g._data.flags.c_contiguous,
                                                             g._version_counter, g._data.tolist()))
            for g in result]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
@pytest.mark.parametrize("grad_layout", ["contiguous", "transposed", "float64"])
def test_each_compiled_gradient_is_the_python_one(case, grad_layout):
    """Each node's compiled ``backward_arrays``, called directly, returns what its Python one does
    (None where the Python one declines the case) for gradients of several layouts."""
    rng = np.random.default_rng(5)
    a, b = (ember.tensor(rng.uniform(-1.5, 1.5, (3, 3)).astype(np.float32), requires_grad=True) for _ in range(2))
    out = GRADIENT_CASES[case](a, b)
    python = _compiled_methods.python_gradients()
    nodes, stack = [], [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in nodes:
            nodes.append(node)
            stack.extend(fn for fn, _ in node.next_functions)
    checked = 0
    for node in nodes:
        if type(node) not in python:
            continue
        shape = out.shape if node is out.grad_fn else node.self_shape if hasattr(node, "self_shape") else out.shape
        values = rng.uniform(-1, 1, shape)
        grad = ember.tensor({"contiguous": values.astype(np.float32), "float64": values,
                             "transposed": np.asarray(values.T.astype(np.float32)).T}[grad_layout])
        assert _gradient_call(node, grad, type(node).backward_arrays) == _gradient_call(node, grad, python[type(node)])
        checked += 1
    assert checked


def test_a_saved_result_modified_in_place_is_caught():
    x = ember.ones(3, requires_grad=True)
    y = x.tanh()
    with ember.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_a_second_backward_through_freed_gradients_is_refused():
    a = ember.ones(3, requires_grad=True)
    out = (a * a).tanh()
    out.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()
    out = (a * a).tanh()
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    assert a.grad.shape == (3,)


def test_saved_tensor_hooks_reach_the_gradients():
    unpacked = []

    def unpack(t):
        unpacked.append(t)
        return t

    a = ember.full((3,), 0.5, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        out = (a * a).tanh()
    out.sum().backward()
    assert len(unpacked) == 3
    np.testing.assert_allclose(a.grad.numpy(), 2 * 0.5 * (1 - np.tanh(0.25) ** 2), rtol=1e-6)


def test_the_gradients_carry_the_python_ones_signature():
    import inspect
    for node_cls, python_gradient in _compiled_methods.python_gradients().items():
        compiled = node_cls.backward_arrays
        assert list(inspect.signature(compiled).parameters) == list(inspect.signature(python_gradient).parameters)
        assert compiled.__doc__ == python_gradient.__doc__ or python_gradient.__doc__ is None


# -- the in-place operators (``+=``, ``add_`` and the rest) ------------------------------------

INPLACE = {
    "iadd": lambda a, b: a.__iadd__(b), "isub": lambda a, b: a.__isub__(b), "imul": lambda a, b: a.__imul__(b),
    "itruediv": lambda a, b: a.__itruediv__(b), "add_": lambda a, b: a.add_(b), "sub_": lambda a, b: a.sub_(b),
    "mul_": lambda a, b: a.mul_(b), "div_": lambda a, b: a.div_(b), "subtract_": lambda a, b: a.subtract_(b),
    "multiply_": lambda a, b: a.multiply_(b), "divide_": lambda a, b: a.divide_(b),
    "true_divide_": lambda a, b: a.true_divide_(b),
}


def _inplace_result(lib, name, a, b):
    ta = lib.tensor(a)
    tb = lib.tensor(b) if isinstance(b, np.ndarray) else b
    try:
        out = INPLACE[name](ta, tb)
    except (RuntimeError, TypeError) as error:
        return type(error).__name__, ta.numpy().tolist()
    return out is ta, ta.numpy().tolist(), str(ta.dtype).split(".")[-1], ta._version if lib is torch else None


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "float16", "int64", "bool"])
@pytest.mark.parametrize("kind", ["same", "row", "scalar", "float", "int"])
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_operators_match_torch_and_the_python_ops(monkeypatch, name, kind, dtype):
    a, b = operands(kind, "float64", np.random.default_rng(6))
    a = np.asarray(2 * a).astype(dtype)
    b = np.asarray(2 * b).astype(dtype) if isinstance(b, np.ndarray) else b   # (0-d arrays stay arrays)
    compiled = _inplace_result(ember, name, a, b)
    with monkeypatch.context() as m:
        python_ops(m)
        python = _inplace_result(ember, name, a, b)
    theirs = _inplace_result(torch, name, a, b)
    assert compiled == python
    assert compiled[0] == theirs[0]
    if isinstance(compiled[0], bool):
        tolerance = {"float16": 2e-3}.get(dtype, 1e-6)
        np.testing.assert_allclose(np.asarray(compiled[1]), np.asarray(theirs[1]), rtol=tolerance)
        assert compiled[2] == theirs[2]


def test_inplace_operators_count_versions_and_keep_autograd_rules():
    x = ember.ones(3)
    x += 1.0
    x *= ember.full((3,), 2.0)
    assert x._version_counter == [2] and x.tolist() == [4.0] * 3
    view = x[1:]
    view -= 1.0                                       # a view counts its base's version
    assert x._version_counter == [3] and x.tolist() == [4.0, 3.0, 3.0]
    p = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        p += 1.0
    with ember.no_grad():
        p -= 0.5
    assert p.tolist() == [0.5] * 3 and p.requires_grad and p.grad_fn is None
    p.data += -0.25 * ember.ones(3)
    assert p.tolist() == [0.25] * 3 and p.grad_fn is None
    y = ember.zeros(3)
    w = ember.ones(3, requires_grad=True)
    y += w * 2                                        # an operand that requires grad: recorded
    assert y.requires_grad and type(y.grad_fn).__name__ == "AddBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [2.0] * 3


def test_inplace_errors_are_the_python_ops():
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        x = ember.ones(3)
        x += ember.ones(2, 3)
    expanded = ember.ones(1).expand(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        expanded += 1.0
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i = ember.ones(3, dtype=ember.int64)
        i /= 2
    y = ember.ones(3)
    assert y.add_(ember.ones(3), alpha=2).tolist() == [3.0] * 3   # (a keyword: the Python op)


def test_inplace_under_anomaly_detection_records_the_modifier():
    a = ember.ones(3, requires_grad=True)
    b = ember.full((3,), 2.0, requires_grad=True)
    with ember.autograd.set_detect_anomaly(True):
        out = a * b
        with ember.no_grad():
            b.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded", "readonly", "empty", "scalar"])
def test_unfold_is_the_python_op(monkeypatch, layout):
    """unfold along every dim with sizes and steps in and out of range, on tensors laid out every way: the
    Python op's shape, strides, values, base and flags, or its error."""
    base = ember.tensor(np.arange(24, dtype=np.float32).reshape(4, 6))
    source = {"contiguous": lambda: base, "transposed": lambda: base.mT, "sliced": lambda: base[1:, ::2],
              "expanded": lambda: ember.zeros(6).expand(4, 6),
              "readonly": lambda: ember.tensor(np.broadcast_to(np.float32(1), (4, 6))),
              "empty": lambda: base[:0], "scalar": lambda: base[1, 1]}[layout]
    calls = [(d, size, step) for d in (0, 1, -1, -2, 2) for size in (0, 1, 2, 4, 6, 7, -1) for step in (1, 2, 5, 0, -1)]
    calls += [(1, 2.0, 1), (1, 2, 1.0), (1.0, 2, 1)]
    for args in calls:
        results = _views_on_both_paths(monkeypatch, source, "unfold", args, base)
        assert results[0] == results[1], args


def test_unfold_takes_the_common_case(monkeypatch):
    x = ember.arange(12.0).reshape(3, 4)
    made = []
    real = view.make_view
    monkeypatch.setattr(view, "make_view", lambda *a: made.append(a) or real(*a))
    x.unfold(1, 2, 1)
    x.unfold(0, 2, 2)
    assert made == []
    with monkeypatch.context() as m:
        python_ops(m)
        x.unfold(1, 2, 1)
    assert made


# -- in-place ops from their out-of-place ones (``apply_inplace``'s steps in C) -------------------------

INPLACE_CALLS = {
    "igamma_": lambda x, y: x.igamma_(y.abs() + 0.5),
    "lerp_": lambda x, y: x.lerp_(y, 0.25),
    "div_floor": lambda x, y: x.div_(y, rounding_mode="floor"),
    "pow_": lambda x, y: x.abs().pow_(2.5),
    "float_power_": lambda x, y: x.double().float_power_(2),
    "index_add_": lambda x, y: x.index_add_(0, ember.tensor([2, 0]), y[:2]),
    "addr_": lambda x, y: x.addr_(y[0], y[:, 0]),
    "triu_": lambda x, y: x.triu_(1),
    "masked_fill_tensor": lambda x, y: x.masked_fill_(y > 0, ember.tensor(2.0)),
    "view": lambda x, y: x[1].lerp_(y[1], 0.5),
    "int_div": lambda x, y: x.long().div_(y.long() + 10),
    "broadcast_error": lambda x, y: x[:1].lerp_(y, 0.5),
    "read_only": lambda x, y: x.expand(2, 3, 4).lerp_(y.expand(2, 3, 4), 0.5),
    "leaf": lambda x, y: x.requires_grad_().lerp_(y, 0.5),
    "leaf_no_grad": lambda x, y: _in_no_grad(lambda: x.requires_grad_().lerp_(y, 0.5)),
    "tracked": lambda x, y: (x * 1).lerp_(y.requires_grad_(), 0.5),
}


def _in_no_grad(fn):
    with ember.no_grad():
        return fn()


@pytest.mark.parametrize("name", sorted(INPLACE_CALLS))
def test_inplace_ops_written_in_c_are_the_python_steps(monkeypatch, name):
    """The in-place ops made from their out-of-place ones (``apply_inplace``): the values, dtype, version
    count, node and the tensor returned (self) the Python steps give, or their error (type and message)."""
    results = []
    for python in (False, True):
        with monkeypatch.context() as m:
            if python:
                m.setattr(_common, "inplace_writer", [None])
            rng = np.random.default_rng(6)
            x = ember.tensor(rng.standard_normal((3, 4)).astype(np.float32))
            y = ember.tensor(rng.standard_normal((3, 4)).astype(np.float32))
            before = x._version
            try:
                out = INPLACE_CALLS[name](x, y)
            except (RuntimeError, TypeError, ValueError) as error:
                results.append((type(error), str(error), x.detach().numpy().tobytes()))
                continue
            results.append((out.dtype, out.detach().numpy().tobytes(), x._version - before,
                            type(out.grad_fn).__name__, out is x or out._base is x))
    assert results[0] == results[1]


def test_inplace_ops_take_the_c_steps():
    """Where nothing records, an in-place op made from its out-of-place one does not reach the Python steps'
    finish (``finish_inplace``) for a result of self's dtype and shape."""
    assert _common.inplace_writer[0] is not None
    calls = []
    real = _common.finish_inplace
    x, y = ember.ones(3, 4), ember.full((3, 4), 2.0)
    try:
        _common.finish_inplace = lambda *a: calls.append(a) or real(*a)
        x.lerp_(y, 0.5)
    finally:
        _common.finish_inplace = real
    assert calls == [] and x.tolist() == [[1.5] * 4] * 3
