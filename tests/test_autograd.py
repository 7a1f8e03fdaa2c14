"""The autograd engine against torch: accumulation, retain_graph, inputs=, autograd.grad,
hooks, grad modes, version counters, in-place ops, graph structure and freeing."""
import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import ember

# every test here runs with autograd's compiled paths and with their Python steps
pytestmark = pytest.mark.usefixtures("autograd_paths")

X = [0.5, -1.25, 2.0]
Y = [1.5, 0.75, -0.5]


def values(x):
    """Tensors (possibly nested in tuples/lists) of either library as NumPy arrays."""
    if isinstance(x, (list, tuple)):
        return [values(v) for v in x]
    if x is None:
        return None
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        return np.array(x.detach().tolist())
    return x


def assert_same(a, b):
    a, b = values(a), values(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for u, v in zip(a, b):
            assert_same(u, v)
    elif a is None or b is None:
        assert a is None and b is None
    elif isinstance(a, (str, bool)):
        assert a == b
    else:
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


def both(fn):
    """Run ``fn(lib)`` on torch and ember and check that the results agree."""
    expected = fn(torch)
    got = fn(ember)
    assert_same(expected, got)
    return expected, got


def raise_info(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value), str(info.value).replace("torch", "ember")


def same_error(fn, ember_adds=False):
    """``fn`` raises the same exception type, with the same message, in both libraries (with
    ``ember_adds``, ember's message is torch's followed by more)."""
    t_type, t_msg = raise_info(fn, torch)
    e_type, e_msg = raise_info(fn, ember)
    assert issubclass(e_type, t_type) or issubclass(t_type, e_type), (t_type, e_type)
    if ember_adds:
        assert e_msg.startswith(t_msg + " ") and len(e_msg) > len(t_msg) + 1, (e_msg, t_msg)
    else:
        assert e_msg == t_msg
    return e_msg


def leaf(lib, data=X, dtype=None):
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=True)


# -- accumulation and retain_graph ------------------------------------------------------------

def test_grad_accumulates_across_backward_calls():
    def f(lib):
        x = leaf(lib)
        (x * x).sum().backward()
        first = x.grad.clone()
        (x * 3).sum().backward()
        return first, x.grad
    both(f)


def test_leaf_used_twice_sums_both_paths():
    def f(lib):
        x = leaf(lib)
        (x * x.exp() + x.sin()).sum().backward()
        return x.grad
    both(f)


def test_retain_graph_allows_second_backward():
    def f(lib):
        x = leaf(lib)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    both(f)


def test_second_backward_without_retain_graph_raises():
    def f(lib):
        x = leaf(lib)
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()
    msg = same_error(f)
    assert msg.startswith("Trying to backward through the graph a second time")


def test_backward_gradient_shape_mismatch():
    def f(lib):
        x = leaf(lib)
        (x * 2).backward(lib.ones(2, dtype=lib.float64))
    same_error(f)


def test_implicit_grad_only_for_scalar_outputs():
    def f(lib):
        (leaf(lib) * 2).backward()
    same_error(f)


def test_backward_on_tensor_without_grad_raises():
    def f(lib):
        lib.tensor([1.0, 2.0]).sum().backward()
    same_error(f)


def test_backward_with_explicit_gradient():
    def f(lib):
        x = leaf(lib)
        (x * x).backward(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        return x.grad
    both(f)


def test_backward_inputs_only_accumulates_into_those_leaves():
    def f(lib):
        x, y = leaf(lib), leaf(lib, Y)
        (x * y).sum().backward(inputs=[x])
        return x.grad, y.grad
    both(f)


def test_backward_inputs_non_leaf_with_retain_grad():
    def f(lib):
        x = leaf(lib)
        h = x * 2
        h.retain_grad()
        (h * h).sum().backward(inputs=[h])
        return h.grad, x.grad
    both(f)


def test_backward_inputs_empty_raises():
    def f(lib):
        x = leaf(lib)
        x.sum().backward(inputs=[])
    same_error(f)


def test_backward_inputs_non_leaf_retains_its_grad():
    def f(lib):
        x = leaf(lib)
        h = x * 2
        (h * h).sum().backward(inputs=[h])
        return h.retains_grad, h.grad, x.grad
    both(f)


def test_backward_inputs_not_requiring_grad_raises():
    def f(lib):
        x = leaf(lib)
        (x * 2).sum().backward(inputs=[lib.ones(1)])
    same_error(f)


def test_backward_inputs_skips_unrelated_branches():
    def f(lib):
        x, y = leaf(lib), leaf(lib, Y)
        calls = []
        h = y.exp()
        h.register_hook(lambda g: calls.append("h"))
        (x * x + h).sum().backward(inputs=[x])
        return x.grad, y.grad, calls
    expected, got = both(f)
    assert got[2] == []


def test_autograd_backward_several_tensors():
    def f(lib):
        x = leaf(lib)
        a, b = (x * x).sum(), x.exp()
        lib.autograd.backward([a, b], [None, lib.tensor([1.0, 0.5, 2.0], dtype=lib.float64)])
        return x.grad
    both(f)


def test_backward_gradient_count_mismatch():
    def f(lib):
        x = leaf(lib)
        lib.autograd.backward([(x * 2).sum(), x.sum()], [lib.tensor(1.0, dtype=lib.float64)])
    same_error(f)


def test_backward_gradient_of_other_dtype_is_cast():
    def f(lib):
        x = leaf(lib)
        (x * 2).sum().backward(lib.tensor(3.0, dtype=lib.float32))
        (x * 2).sum().backward(lib.tensor(1))
        return x.grad, str(x.grad.dtype).replace("torch", "ember")
    both(f)


def test_backward_gradient_not_a_tensor():
    def f(lib):
        (leaf(lib) * 2).sum().backward(1.0)
    with pytest.raises(TypeError):
        f(ember)
    with pytest.raises(TypeError):
        f(torch)


def test_backward_complex_gradient_for_real_output_raises():
    def f(lib):
        x = leaf(lib)
        (x * 2).backward(lib.ones(3, dtype=lib.complex128))
    same_error(f)


def test_multi_output_node_with_one_output_used():
    def f(lib):
        x = leaf(lib)
        a, b, c = x.unbind(0)
        (a * 2 + c * c).backward()
        return x.grad, a.grad_fn.name(), a.grad_fn is c.grad_fn
    both(f)


def test_create_graph_first_grad_is_a_differentiable_copy():
    for lib in (torch, ember):
        x = leaf(lib)
        g = lib.ones(3, dtype=lib.float64, requires_grad=True)
        x.backward(g, create_graph=True)
        assert x.grad is not g and type(x.grad.grad_fn).__name__ == "CopyBackwards"
        assert x.grad.grad_fn.name() == lib.__name__ + "::autograd::CopyBackwards"
        (h,) = lib.autograd.grad(x.grad.sum(), g)
        np.testing.assert_allclose(values(h), np.ones(3))


# -- autograd.grad ------------------------------------------------------------------------------

def test_grad_returns_without_accumulating():
    def f(lib):
        x, y = leaf(lib), leaf(lib, Y)
        gx, gy = lib.autograd.grad((x * y).sum(), (x, y))
        return gx, gy, x.grad, y.grad
    both(f)


def test_grad_unused_input_raises_unless_allowed():
    def f(lib):
        x, y = leaf(lib), leaf(lib, Y)
        lib.autograd.grad((x * 2).sum(), [x, y])
    same_error(f)

    def g(lib):
        x, y = leaf(lib), leaf(lib, Y)
        return lib.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
    expected, got = both(g)
    assert got[1] is None


def test_grad_materialize_grads_gives_zeros():
    def f(lib):
        x, y = leaf(lib), leaf(lib, Y)
        return lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
    both(f)


def test_grad_materialize_grads_with_allow_unused_false_raises():
    def f(lib):
        x = leaf(lib)
        lib.autograd.grad((x * 2).sum(), [x], allow_unused=False, materialize_grads=True)
    same_error(f)


def test_grad_with_grad_outputs():
    def f(lib):
        x = leaf(lib)
        return lib.autograd.grad(x.exp() * x, x, grad_outputs=lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64))
    both(f)


def test_grad_of_several_outputs():
    def f(lib):
        x = leaf(lib)
        return lib.autograd.grad([(x * x).sum(), x.sin().sum()], [x])
    both(f)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_higher_order_derivatives_of_cube(order):
    def f(lib):
        x = leaf(lib)
        y = x * x * x
        out = []
        for _ in range(order):
            (y,) = lib.autograd.grad(y.sum(), x, create_graph=True)
            out.append(y)
        return out
    both(f)


def test_higher_order_through_tanh_and_exp():
    def f(lib):
        x = leaf(lib)
        y = (x.tanh() * x.exp()).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        gg.sum().backward()
        return g, gg, x.grad
    both(f)


def test_create_graph_backward_gives_grad_with_history():
    def f(lib):
        x = leaf(lib)
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        assert g.requires_grad and g.grad_fn is not None
        (h,) = lib.autograd.grad(g.sum(), x)
        return g, h
    both(f)


def test_grad_with_respect_to_non_leaf():
    def f(lib):
        x = leaf(lib)
        h = x.exp()
        y = (h * h).sum()
        return lib.autograd.grad(y, [h, x])
    both(f)


def test_grad_second_call_without_retain_graph_raises():
    def f(lib):
        x = leaf(lib)
        y = (x.exp() * x).sum()
        lib.autograd.grad(y, x)
        lib.autograd.grad(y, x)
    same_error(f)


def test_grad_leaf_hook_applies_to_captured_grad():
    def f(lib):
        x = leaf(lib)
        x.register_hook(lambda g: g * 3)
        return lib.autograd.grad((x * x).sum(), x), x.grad
    both(f)


def test_grad_empty_inputs_raises():
    def f(lib):
        lib.autograd.grad((leaf(lib) * 2).sum(), [])
    same_error(f)


def test_grad_on_non_differentiable_input_raises():
    def f(lib):
        x = leaf(lib)
        lib.autograd.grad((x * 2).sum(), lib.tensor([1.0]))
    same_error(f)


# -- leaves, retain_grad, detach --------------------------------------------------------------

def test_is_leaf():
    def f(lib):
        a = lib.tensor([1.0, 2.0])
        b = leaf(lib)
        c = b * 2
        d = c.detach()
        return [a.is_leaf, b.is_leaf, c.is_leaf, d.is_leaf]
    expected, got = both(f)
    assert got == [True, True, False, True]


def test_retain_grad_on_non_leaf_accumulates():
    def f(lib):
        x = leaf(lib)
        h = x.exp()
        h.retain_grad()
        assert h.retains_grad
        (h * h).sum().backward(retain_graph=True)
        first = h.grad.clone()
        (h * 3).sum().backward()
        return first, h.grad, x.grad
    both(f)


def test_retain_grad_on_leaf_is_noop():
    def f(lib):
        x = leaf(lib)
        x.retain_grad()
        (x * 2).sum().backward()
        return x.retains_grad, x.grad
    both(f)


def test_non_leaf_grad_is_none_with_warning():
    for lib in (torch, ember):
        x = leaf(lib)
        h = x * 2
        h.sum().backward()
        with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
            assert h.grad is None


def test_requires_grad_():
    def f(lib):
        x = lib.tensor([1.0, 2.0])
        assert x.requires_grad_() is x
        (x * x).sum().backward()
        return x.requires_grad, x.grad
    both(f)


def test_requires_grad_false_on_non_leaf_raises():
    def f(lib):
        (leaf(lib) * 2).requires_grad_(False)
    same_error(f)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
def test_requires_grad_on_integer_tensor_raises(dtype):
    def method(lib):
        lib.tensor([1, 0], dtype=getattr(lib, dtype)).requires_grad_()
    same_error(method)

    def setter(lib):
        lib.tensor([1, 0], dtype=getattr(lib, dtype)).requires_grad = True
    same_error(setter)

    def factory(lib):
        lib.tensor([1, 0], dtype=getattr(lib, dtype), requires_grad=True)
    with pytest.raises(RuntimeError, match="dtype can require gradients"):
        factory(ember)


def test_requires_grad_must_be_bool():
    def f(lib):
        lib.tensor([1.0]).requires_grad = 1
    same_error(f)


def test_detach_shares_memory_and_drops_history():
    for lib in (torch, ember):
        x = leaf(lib)
        y = x * 2
        d = y.detach()
        assert d.grad_fn is None and not d.requires_grad and d.is_leaf
        d.add_(1)
        np.testing.assert_allclose(values(y), np.array(X) * 2 + 1)
        assert y._version == d._version == 1


def test_detach_in_place():
    def f(lib):
        x = leaf(lib)
        y = x * 2
        z = y.detach_()
        assert z is y
        return [y.requires_grad, y.grad_fn is None, y.is_leaf]
    expected, got = both(f)
    assert got == [False, True, True]


def test_detach_in_place_on_view_raises():
    def f(lib):
        x = leaf(lib)
        (x * 2)[:2].detach_()
    same_error(f)


# -- graph structure ------------------------------------------------------------------------

def structure(node, depth=4):
    """A node's name and its next_functions, recursively (AccumulateGrad included)."""
    if node is None:
        return None
    name = node.name().replace("torch", "ember")
    if depth == 0:
        return name
    return (name, tuple((structure(n, depth - 1), nr) for n, nr in node.next_functions))


@pytest.mark.parametrize("build", [
    lambda lib, x, y: (x * y).sum(),
    lambda lib, x, y: (x * 2 + y).exp(),
    lambda lib, x, y: (x - y) / y,
    lambda lib, x, y: (x * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).tanh(),
    lambda lib, x, y: -(x ** 2),
    lambda lib, x, y: x.sum() * y,
])
def test_grad_fn_names_and_next_functions_match_torch(build):
    def f(lib):
        return structure(build(lib, leaf(lib), leaf(lib, Y)).grad_fn)
    expected, got = f(torch), f(ember)
    assert got == expected


def test_accumulate_grad_variable_is_the_leaf():
    x = leaf(ember)
    node = (x * 2).grad_fn.next_functions[0][0]
    assert type(node).__name__ == "AccumulateGrad"
    assert node.name() == "ember::autograd::AccumulateGrad"
    assert node.variable is x
    # the same leaf used twice shares one AccumulateGrad node, as in torch
    y = x * x
    assert y.grad_fn.next_functions[0][0] is y.grad_fn.next_functions[1][0]


def test_grad_fn_repr_and_name():
    y = leaf(ember) * 2
    assert y.grad_fn.name() == "MulBackward0"
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")


# -- hooks ------------------------------------------------------------------------------------

def test_tensor_hook_on_leaf_modifies_grad_and_removes():
    def f(lib):
        x = leaf(lib)
        seen = []
        handle = x.register_hook(lambda g: (seen.append(g.clone()), g * 10)[1])
        (x * x).sum().backward()
        first = x.grad.clone()
        handle.remove()
        x.grad = None
        (x * x).sum().backward()
        return seen, first, x.grad
    both(f)


def test_tensor_hook_on_non_leaf_changes_upstream_grads():
    def f(lib):
        x = leaf(lib)
        h = x.exp()
        seen = []
        h.register_hook(lambda g: seen.append(g.clone()))
        h.register_hook(lambda g: g * 2)
        (h * h).sum().backward()
        return seen, x.grad
    both(f)


def test_tensor_hook_on_tensor_without_grad_raises():
    def f(lib):
        lib.tensor([1.0]).register_hook(lambda g: g)
    same_error(f)


def test_tensor_hook_sees_grad_before_retain_grad_stores_it():
    def f(lib):
        x = leaf(lib)
        h = x * 3
        h.retain_grad()
        h.register_hook(lambda g: g + 1)
        h.sum().backward()
        return h.grad, x.grad
    both(f)


def test_node_hooks_and_prehooks():
    def f(lib):
        x = leaf(lib)
        y = x.exp()
        z = (y * 2).sum()
        calls = []

        def pre(grad_outputs):
            calls.append(("pre", values(grad_outputs)))
            return (grad_outputs[0] * 3,)

        def post(grad_inputs, grad_outputs):
            calls.append(("post", values(grad_inputs), values(grad_outputs)))
            return (grad_inputs[0] + 1,)

        h1 = y.grad_fn.register_prehook(pre)
        h2 = y.grad_fn.register_hook(post)
        z.backward(retain_graph=True)
        first = x.grad.clone()
        h1.remove()
        h2.remove()
        x.grad = None
        z.backward()
        return first, x.grad, calls
    expected = f(torch)
    got = f(ember)
    assert_same(expected[:2], got[:2])
    assert [c[0] for c in got[2]] == [c[0] for c in expected[2]]
    for c_t, c_e in zip(expected[2], got[2]):
        assert_same(list(c_t[1:]), list(c_e[1:]))


# -- grad modes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_no_grad_and_enable_grad_nesting(lib):
    x = leaf(lib)
    with lib.no_grad():
        assert not lib.is_grad_enabled()
        y = x * 2
        with lib.enable_grad():
            assert lib.is_grad_enabled()
            z = x * 2
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_set_grad_enabled_as_function_context_and_decorator(lib):
    x = leaf(lib)
    lib.set_grad_enabled(False)
    try:
        assert not lib.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        lib.set_grad_enabled(True)
    assert lib.is_grad_enabled()
    with lib.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert lib.is_grad_enabled()

    @lib.set_grad_enabled(False)
    def f():
        return x * 2
    assert lib.is_grad_enabled()
    assert not f().requires_grad
    assert lib.is_grad_enabled()


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_grad_mode_decorators_on_functions_and_generators(lib):
    x = leaf(lib)

    @lib.no_grad()
    def plain():
        return x * 2

    @lib.no_grad()
    def gen():
        for _ in range(2):
            yield lib.is_grad_enabled(), (x * 2).requires_grad

    @lib.enable_grad()
    def enabled():
        return (x * 2).requires_grad

    assert plain.__name__ == "plain"
    assert not plain().requires_grad
    modes = []
    for item in gen():
        modes.append(item)
        assert lib.is_grad_enabled()  # the generator's mode does not leak out between yields
    assert modes == [(False, False), (False, False)]
    with lib.no_grad():
        assert enabled()


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_no_grad_bare_decorator(lib):
    @lib.no_grad
    def f():
        return lib.is_grad_enabled()
    assert f() is False
    assert lib.is_grad_enabled()


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_inference_mode(lib):
    x = leaf(lib)
    with lib.inference_mode():
        assert not lib.is_grad_enabled()
        assert lib.is_inference_mode_enabled()
        assert not (x * 2).requires_grad
        with lib.inference_mode(False):
            assert not lib.is_inference_mode_enabled()
    assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()

    @lib.inference_mode()
    def f():
        return (x * 2).requires_grad
    assert f() is False

    @lib.inference_mode
    def g():
        return lib.is_inference_mode_enabled()
    assert g() is True


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_grad_mode_is_thread_local(lib):
    seen = {}

    def other():
        seen["enabled"] = lib.is_grad_enabled()
        x = leaf(lib)
        seen["records"] = (x * 2).requires_grad

    with lib.no_grad():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == {"enabled": True, "records": True}


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_grad_mode_restored_after_exception(lib):
    with pytest.raises(ValueError):
        with lib.no_grad():
            raise ValueError
    assert lib.is_grad_enabled()


# -- version counters and in-place ops --------------------------------------------------------

def test_modified_saved_tensor_raises():
    def f(lib):
        x = leaf(lib)
        y = x * 2
        z = y * y
        y.add_(1)
        z.sum().backward()
    msg = same_error(f, ember_adds=True)
    assert "has been modified by an inplace operation" in msg
    assert "is at version 1; expected version 0 instead" in msg


def test_modified_saved_output_raises():
    def f(lib):
        x = leaf(lib)
        y = x.exp()
        y.mul_(2)
        y.sum().backward()
    same_error(f, ember_adds=True)


def test_modified_saved_leaf_raises():
    def f(lib):
        x = leaf(lib)
        w = lib.tensor(Y, dtype=lib.float64)
        y = (x * w).sum()
        w.mul_(2)
        y.backward()
    msg = same_error(f, ember_adds=True)
    assert "is at version 1; expected version 0 instead" in msg


def test_version_counter_shared_with_views():
    for lib in (torch, ember):
        x = lib.zeros(4)
        v = x[1:3]
        v.add_(1)
        assert x._version == v._version == 1
        x.mul_(2)
        assert v._version == 2


def test_inplace_on_leaf_requiring_grad_raises():
    def f(lib):
        leaf(lib).add_(1)
    msg = same_error(f)
    assert msg == "a leaf Variable that requires grad is being used in an in-place operation."


def test_inplace_on_leaf_under_no_grad_is_allowed():
    def f(lib):
        x = leaf(lib)
        with lib.no_grad():
            x.mul_(2)
        (x * x).sum().backward()
        return x, x.grad
    both(f)


def test_inplace_on_non_leaf_keeps_gradients_right():
    def f(lib):
        x = leaf(lib)
        y = x * 2
        y.add_(1)
        y.exp_()
        y.sum().backward()
        return y, x.grad, y.grad_fn.name()
    expected, got = both(f)
    assert got[2] == expected[2] == "ExpBackward0"


def test_inplace_with_grad_requiring_operand():
    def f(lib):
        x, w = leaf(lib), leaf(lib, Y)
        y = x * 1
        y.mul_(w)
        y.sub_(w)
        y.sum().backward()
        return x.grad, w.grad
    both(f)


def test_inplace_makes_non_requiring_tensor_require_grad():
    def f(lib):
        w = leaf(lib, Y)
        y = lib.tensor(X, dtype=lib.float64)
        y.mul_(w)
        assert y.requires_grad and y.grad_fn is not None
        y.sum().backward()
        return w.grad
    both(f)


# -- gradient ownership -------------------------------------------------------------------------

def test_first_grad_of_two_leaves_does_not_alias():
    for lib in (torch, ember):
        a, b = leaf(lib), leaf(lib, Y)
        (a + b).sum().backward()
        a.grad.mul_(5)
        np.testing.assert_allclose(values(b.grad), np.ones(3))
        np.testing.assert_allclose(values(a.grad), np.full(3, 5.0))


def test_first_grad_does_not_alias_the_seed_gradient():
    for lib in (torch, ember):
        x = leaf(lib)
        g = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        x.backward(g)
        x.grad.add_(1)
        np.testing.assert_allclose(values(g), [1.0, 2.0, 3.0])


def test_first_grad_does_not_alias_a_hook_captured_grad():
    for lib in (torch, ember):
        x = leaf(lib)
        kept = []
        x.register_hook(lambda g: kept.append(g))
        (x * 2).sum().backward()
        x.grad.add_(1)
        np.testing.assert_allclose(values(kept[0]), np.full(3, 2.0))


def test_first_grad_does_not_alias_a_retained_grad():
    for lib in (torch, ember):
        x = leaf(lib)
        h = x * 1
        h.retain_grad()
        (h + 0).sum().backward()
        x.grad.add_(1)
        np.testing.assert_allclose(values(h.grad), np.ones(3))


def test_grad_is_accumulated_in_place_after_the_first():
    for lib in (torch, ember):
        x = leaf(lib)
        (x * 2).sum().backward()
        g = x.grad
        (x * 2).sum().backward()
        assert x.grad is g
        np.testing.assert_allclose(values(g), np.full(3, 4.0))


def test_grad_of_broadcast_leaf_has_leaf_dtype_and_shape():
    def f(lib):
        x = lib.tensor([2.0], requires_grad=True)
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        (x * w).sum().backward()
        return x.grad, str(x.grad.dtype).replace("torch", "ember")
    expected, got = both(f)


def test_grad_setter_checks():
    def not_a_tensor(lib):
        leaf(lib).grad = [1.0]
    same_error(not_a_tensor)

    def wrong_shape(lib):
        leaf(lib).grad = lib.zeros(2, dtype=lib.float64)
    same_error(wrong_shape)

    def wrong_dtype(lib):
        leaf(lib).grad = lib.zeros(3, dtype=lib.float32)
    same_error(wrong_dtype)


# -- freeing ----------------------------------------------------------------------------------

def test_saved_tensors_are_freed_after_backward():
    x = leaf(ember, np.ones(1000).tolist())
    big = x * 2
    ref = weakref.ref(big)
    y = (big * big).sum()
    del big
    gc.collect()
    assert ref() is not None  # kept alive by the graph
    y.backward()
    gc.collect()
    assert ref() is None


def test_saved_tensors_kept_with_retain_graph():
    x = leaf(ember, np.ones(10).tolist())
    big = x * 2
    ref = weakref.ref(big)
    y = (big * big).sum()
    del big
    y.backward(retain_graph=True)
    gc.collect()
    assert ref() is not None
    del y
    gc.collect()
    assert ref() is None


def test_graph_is_freed_when_output_dies():
    x = leaf(ember)
    y = x.exp() * 2
    node_ref = weakref.ref(y.grad_fn)
    del y
    assert node_ref() is None  # reference counting alone, no cycle to collect


# -- dtypes of gradients ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mixed_dtype_gradients(dtype):
    def f(lib):
        x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
        w = lib.tensor(Y, dtype=lib.float64, requires_grad=True)
        (x * w).sum().backward()
        return x.grad, w.grad, str(x.grad.dtype).replace("torch", "ember"), str(w.grad.dtype).replace("torch", "ember")
    both(f)


# -- gradcheck --------------------------------------------------------------------------------

def test_gradcheck_accepts_correct_gradients():
    x = ember.tensor([0.3, -0.7, 1.1], dtype=ember.float64, requires_grad=True)
    y = ember.tensor([1.5, 0.2, -0.4], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: (a * b).tanh() + a.exp(), (x, y))
    assert ember.autograd.gradgradcheck(lambda a, b: (a * b).tanh() * a, (x, y))


def test_gradcheck_rejects_wrong_gradients():
    from ember.autograd.graph import Node

    class WrongBackward0(Node):
        def backward(self, grad):
            return (grad * 3,)  # the true derivative of 2 * x is 2

    def doubled(x):
        out = ember.Tensor._alias(x * 2)
        out._requires_grad = True
        out.grad_fn = WrongBackward0((x,))
        return out

    x = ember.tensor([0.3, -0.7], dtype=ember.float64, requires_grad=True)
    from ember.autograd.gradcheck import GradcheckError
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        ember.autograd.gradcheck(doubled, (x,))
    assert ember.autograd.gradcheck(doubled, (x,), raise_exception=False) is False


def test_post_accumulate_grad_hook():
    def f(lib):
        x = leaf(lib)
        seen = []
        handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (x * 2).sum().backward()
        lib.autograd.grad((x * 2).sum(), x)  # nothing is accumulated: no call
        handle.remove()
        (x * 2).sum().backward()
        return seen, x.grad
    expected, got = both(f)
    assert len(got[0]) == 1


def test_post_accumulate_grad_hook_on_non_leaf_raises():
    def f(lib):
        (leaf(lib) * 2).register_post_accumulate_grad_hook(lambda t: None)
    same_error(f)


def test_grad_of_roots_and_repeated_outputs():
    def f(lib):
        x = leaf(lib)
        y = x * 3
        first = lib.autograd.grad(y.sum(), [y, x])
        second = lib.autograd.grad(x, x, lib.ones(3, dtype=lib.float64))
        y = x * 3
        third = lib.autograd.grad([y, y], [x], [lib.ones(3, dtype=lib.float64)] * 2)
        return first, second, third
    both(f)


def test_linear_layer_gradients_are_stored_without_a_copy(monkeypatch):
    # the fast path of AccumulateGrad: the weight's gradient (a transposed-back GEMM result)
    # and the bias's (a reshaped sum) are owned by nobody else, so .grad takes them as they are
    from ember.autograd import engine, graph
    seen = []
    real = graph.accumulate_into

    def spy(variable, grad, owned):
        seen.append(owned)
        return real(variable, grad, owned)

    monkeypatch.setattr(engine, "accumulate_into", spy)
    layer = ember.nn.Linear(50, 70)   # (more elements than the engine's small gradients)
    targets = ember.tensor([0, 1, 2, 0])
    ember.nn.functional.cross_entropy(layer(ember.randn(4, 50)), targets).backward()
    assert seen == [True, True]
    assert layer.weight.grad.is_contiguous() and tuple(layer.weight.grad.stride()) == (50, 1)


@pytest.mark.parametrize("op", [
    lambda m, x: m.sign(x), lambda m, x: m.sgn(x), lambda m, x: m.floor(x),
    lambda m, x: m.ceil(x), lambda m, x: m.trunc(x), lambda m, x: m.round(x),
    lambda m, x: m.round(x, decimals=1), lambda m, x: x.pow(0), lambda m, x: m.angle(x),
    lambda m, x: m.div(x, m.tensor([2.0, 3.0, 4.0, 5.0]), rounding_mode="floor"),
], ids=["sign", "sgn", "floor", "ceil", "trunc", "round", "round_decimals", "pow0", "angle",
        "div_floor"])
def test_piecewise_constant_ops_give_zero_gradients_for_nan_and_inf_as_torch(op):
    """torch's gradient of these ops is zeros_like(grad): NaN and infinities in the incoming
    gradient give 0, not NaN (``grad * 0``)."""
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([1.5, -2.0, 0.0, 3.0], requires_grad=True)
        op(lib, x).backward(lib.tensor([float("nan"), float("inf"), -float("inf"), 1.0]))
        grads.append((x.grad + 0).numpy())   # (torch's sgn gives a ZeroTensor)
    np.testing.assert_array_equal(grads[0], grads[1])
    assert not np.isnan(grads[0]).any()
