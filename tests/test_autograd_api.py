"""The autograd API against torch: custom Functions, node hooks on leaves, autograd.functional,
gradcheck's failures, anomaly detection, saved-tensor hooks and gradient conventions at
singular points."""
import inspect
import sys
import threading
import warnings

import pytest
import torch

import ember
from test_autograd import X, Y, assert_same, both, leaf, same_error, values

# every test here runs with autograd's compiled paths and with their Python steps
pytestmark = pytest.mark.usefixtures("autograd_paths")

LIBS = pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])


def type_name(obj):
    return type(obj).__name__


# -- custom Functions ---------------------------------------------------------------------------

def scale_fn(lib):
    class Scale(lib.autograd.Function):
        """x * k with a Python number k, and a second output y + 1."""

        @staticmethod
        def forward(ctx, x, k, y):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * k, "label", y + 1

        @staticmethod
        def backward(ctx, g, g_label, g_y):
            (x,) = ctx.saved_tensors
            ctx.seen = (g_label, values(g_y), ctx.needs_input_grad)
            return g * ctx.k + x * 0, None, g_y
    return Scale


def test_function_with_non_tensor_inputs_and_outputs():
    def f(lib):
        x, y = leaf(lib), leaf(lib, Y)
        a, label, b = scale_fn(lib).apply(x, 3.0, y)
        node = a.grad_fn
        a.sum().backward()
        return (x.grad, y.grad, label, type_name(node), node.name(), len(node.next_functions),
                b.grad_fn is node, getattr(b, "output_nr", getattr(b, "_output_nr", None)),
                node.seen[0], node.seen[1], list(node.seen[2]))
    expected, got = both(f)
    assert got[3] == "ScaleBackward"


def test_function_ctx_attributes_and_saved_tensors_tuple():
    def f(lib):
        x = leaf(lib)
        out = scale_fn(lib).apply(x, 2.0, leaf(lib, Y).detach())
        saved = out[0].grad_fn.saved_tensors
        return type_name(saved), saved[0] is x, out[2].requires_grad, list(out[0].grad_fn.needs_input_grad)
    both(f)


def test_function_multiple_outputs_and_materialized_grads():
    def f(lib):
        seen = []

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append(values([g1, g2]))
                return g1 * 2 + g2 * 3

        x = leaf(lib)
        a, b = Split.apply(x)
        (a.sum() * 4).backward()
        return x.grad, seen
    both(f)


def test_function_without_materialized_grads_gets_none():
    def f(lib):
        seen = []

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append(values([g1, g2]))
                return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

        x = leaf(lib)
        a, b = Split.apply(x)
        a.sum().backward()
        return x.grad, seen
    both(f)


def test_function_backward_returns_none_for_some_inputs():
    def f(lib):
        class First(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, g):
                return g, None

        x, y = leaf(lib), leaf(lib, Y)
        First.apply(x, y).sum().backward()
        return x.grad, y.grad
    both(f)


def test_function_mark_non_differentiable():
    def f(lib):
        seen = []

        class Sort(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                v, i = x.sort()
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(i)
                return v, i

            @staticmethod
            def backward(ctx, gv, gi):
                seen.append((values(gi), str(gi.dtype).split(".")[1]))
                (i,) = ctx.saved_tensors
                return lib.zeros_like(gv).scatter(0, i, gv)

        x = leaf(lib)
        v, i = Sort.apply(x)
        (v * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return x.grad, i.requires_grad, v.requires_grad, seen
    both(f)


def dirty_fn(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Double


def test_function_mark_dirty_modifies_input_in_place():
    def f(lib):
        x = leaf(lib)
        a = x * 1
        b = dirty_fn(lib).apply(a)
        b.sum().backward()
        return b is a, a._version, type_name(a.grad_fn), a, x.grad
    both(f)


def test_function_mark_dirty_on_leaf_requiring_grad_raises():
    same_error(lambda lib: dirty_fn(lib).apply(leaf(lib)))


def test_function_returning_its_input_gives_a_view():
    def f(lib):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5

        x = leaf(lib)
        z = Identity.apply(x)
        z.sum().backward()
        return z is x, z._base is x, type_name(z.grad_fn), x.grad
    both(f)


def test_function_setup_context_form_with_keyword_arguments():
    def f(lib):
        class Power(lib.autograd.Function):
            @staticmethod
            def forward(x, p=2.0):
                return x ** p

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, p = inputs
                ctx.save_for_backward(x, output)
                ctx.p = p

            @staticmethod
            def backward(ctx, g):
                x, out = ctx.saved_tensors
                return g * ctx.p * out / x, None

        x = leaf(lib)
        y = Power.apply(x, p=3.0)
        y.sum().backward()
        return y, x.grad
    both(f)


def cube_fn(lib, hide_x=False):
    """x ** 3; with ``hide_x`` its backward is right but detaches x (wrong second derivative)."""
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * (x.detach() if hide_x else x) ** 2
    return Cube


def test_function_backward_with_differentiable_ops_gives_higher_order_grads():
    def f(lib):
        x = leaf(lib)
        y = cube_fn(lib).apply(x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg
    both(f)


def test_once_differentiable_runs_without_grad_and_refuses_double_backward():
    def f(lib):
        modes = []

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                modes.append(lib.is_grad_enabled())
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = leaf(lib)
        y = Square.apply(x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        seed = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (g2,) = lib.autograd.grad(Square.apply(x), x, seed, create_graph=True)
        return g, g.requires_grad, g2.requires_grad, type_name(g2.grad_fn), modes
    both(f)

    def g(lib):
        x = leaf(lib)

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x ** 2

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                return g * 2

        seed = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (g2,) = lib.autograd.grad(Square.apply(x), x, seed, create_graph=True)
        g2.sum().backward()
    same_error(g)


def test_function_saved_tensor_modified_in_place_raises():
    def f(lib):
        x = leaf(lib)
        a = x * 1
        y = cube_fn(lib).apply(a)
        a.add_(1)
        y.sum().backward()
    same_error(f, ember_adds=True)


def test_function_saved_tensors_freed_after_backward():
    def f(lib):
        y = cube_fn(lib).apply(leaf(lib))
        y.sum().backward()
        y.grad_fn.saved_tensors
    same_error(f)


def test_function_under_no_grad_records_nothing():
    def f(lib):
        with lib.no_grad():
            y = cube_fn(lib).apply(leaf(lib))
        return y.requires_grad, y.grad_fn is None
    both(f)


@pytest.mark.parametrize("case", ["too_few", "too_many", "extra_none", "bad_shape", "broadcast",
                                  "dtype", "no_backward", "instance_call", "save_non_tensor"])
def test_function_errors_and_gradient_checks(case):
    def f(lib):
        x = leaf(lib)

        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                if case == "save_non_tensor":
                    ctx.save_for_backward(x, 3)
                return x * k

            @staticmethod
            def backward(ctx, g):
                return {"too_few": lambda: g,
                        "too_many": lambda: (g, None, g),
                        "extra_none": lambda: (g, None, None),
                        "bad_shape": lambda: (g[:1], None),
                        "broadcast": lambda: (g.expand(2, 3), None),
                        "dtype": lambda: (g.float(), None)}[case]()

        if case == "no_backward":
            del Fn.backward
        if case == "instance_call":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return Fn()(x, 2.0)
        Fn.apply(x, 2.0).sum().backward()
        return x.grad, str(x.grad.dtype).split(".")[1]
    if case in ("extra_none", "broadcast", "dtype"):
        both(f)
    else:
        same_error(f)


# -- gradcheck ------------------------------------------------------------------------------------

def wrong_fn(lib):
    class WrongSquare(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * g  # the true derivative is 2 * x
    return WrongSquare


@LIBS
def test_gradcheck_fails_on_a_wrong_function_backward(lib):
    GradcheckError = sys.modules[lib.autograd.gradcheck.__module__].GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    x = leaf(lib)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        lib.autograd.gradcheck(wrong_fn(lib).apply, (x,))
    assert lib.autograd.gradcheck(wrong_fn(lib).apply, (x,), raise_exception=False) is False
    assert lib.autograd.gradcheck(cube_fn(lib).apply, (x,)) is True
    assert lib.autograd.gradgradcheck(cube_fn(lib).apply, (x,)) is True
    assert lib.autograd.gradgradcheck(cube_fn(lib, hide_x=True).apply, (x,), raise_exception=False) is False


@pytest.mark.parametrize("name", ["gradcheck", "gradgradcheck"])
def test_gradcheck_signature_matches_torch(name):
    def params(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]
    assert params(getattr(ember.autograd, name)) == params(getattr(torch.autograd, name))


# -- hooks ----------------------------------------------------------------------------------------

def test_hook_order_on_leaves_and_intermediates():
    def f(lib):
        calls = []
        x = leaf(lib)
        y = x * 2
        z = y * 3
        acc = y.grad_fn.next_functions[0][0]
        x.register_hook(lambda g: calls.append(("x tensor hook", values(g))) or g * 10)
        acc.register_prehook(lambda go: calls.append(("acc prehook", values(go))) or (go[0] + 1,))
        acc.register_hook(lambda gi, go: calls.append(("acc posthook", values(gi), values(go))))
        x.register_post_accumulate_grad_hook(lambda t: calls.append(("post accumulate", values(t.grad))))
        y.register_hook(lambda g: calls.append(("y tensor hook", values(g))))
        y.retain_grad()
        y.grad_fn.register_prehook(lambda go: calls.append(("y node prehook", values(go))))
        y.grad_fn.register_hook(lambda gi, go: calls.append(("y node posthook", values(gi))))
        z.sum().backward()
        return x.grad, y.grad, calls
    both(f)


def test_accumulate_grad_hooks_can_be_removed_and_skip_autograd_grad():
    def f(lib):
        calls = []
        x = leaf(lib)
        acc = (x * 1).grad_fn.next_functions[0][0]
        h1 = acc.register_prehook(lambda go: calls.append("pre") or (go[0] * 2,))
        h2 = acc.register_hook(lambda gi, go: calls.append("post"))
        (x * 3).sum().backward()
        first = x.grad.clone()
        grads = lib.autograd.grad((x * 3).sum(), x)
        h1.remove()
        h2.remove()
        (x * 3).sum().backward()
        return first, grads, x.grad, calls
    both(f)


def test_accumulate_grad_prehook_with_backward_inputs():
    def f(lib):
        x, w = leaf(lib), leaf(lib, Y)
        acc = (x * 1).grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: (go[0] * 2,))
        (x * w).sum().backward(inputs=[x])
        return x.grad, w.grad
    both(f)


# -- autograd.functional --------------------------------------------------------------------------

MAT = [[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]


def functional_cases(lib):
    F = lib.autograd.functional
    x = lib.tensor(MAT, dtype=lib.float64)
    y = lib.tensor(Y, dtype=lib.float64)
    ones = lib.ones(2, 3, dtype=lib.float64)

    def row_sums(a):
        return (a.exp() * a).sum(1)

    def pair(a, b):
        return (a * b).tanh(), (a ** 2).sum() * b

    def scalar(a, b):
        return (a.sin() * b).sum() + (b ** 3).sum()

    def cubes(a):
        return (a ** 3).sum()

    xr = lib.tensor(MAT, dtype=lib.float64, requires_grad=True)
    return {
        "jacobian": lambda: F.jacobian(row_sums, x),
        "jacobian_tuples": lambda: F.jacobian(pair, (x, y)),
        "jacobian_tuple_out": lambda: F.jacobian(lambda a: (a.sum(), a * 2), x),
        "jacobian_tuple_in": lambda: F.jacobian(lambda a, b: a * b, (x, y), vectorize=True),
        "jacobian_unused": lambda: F.jacobian(lambda a, b: a * 2, (x, y)),
        "hessian": lambda: F.hessian(cubes, x),
        "hessian_tuples": lambda: F.hessian(scalar, (x, y)),
        "vjp": lambda: F.vjp(row_sums, x, lib.ones(2, dtype=lib.float64)),
        "vjp_scalar": lambda: F.vjp(cubes, x),
        "vjp_tuples": lambda: F.vjp(pair, (x, y), (ones, y)),
        "jvp": lambda: F.jvp(row_sums, x, ones),
        "jvp_tuples": lambda: F.jvp(pair, (x, y), (ones, y)),
        "hvp": lambda: F.hvp(cubes, x, ones),
        "hvp_tuples": lambda: F.hvp(scalar, (x, y), (x, y)),
        "vhp": lambda: F.vhp(cubes, x, ones),
        "vhp_tuples": lambda: F.vhp(scalar, (x, y), (x, y)),
        "jacobian_create_graph": lambda: F.jacobian(row_sums, xr, create_graph=True),
        "vjp_create_graph": lambda: F.vjp(cubes, xr, create_graph=True),
        "hessian_create_graph": lambda: F.hessian(cubes, xr, create_graph=True),
        "jacobian_strict_unused": lambda: F.jacobian(lambda a, b: a * 2, (x, y), strict=True),
        "vjp_bad_v": lambda: F.vjp(row_sums, x, lib.ones(3, dtype=lib.float64)),
        "vjp_v_needed": lambda: F.vjp(row_sums, x),
        "hessian_of_vector": lambda: F.hessian(row_sums, x),
        "jvp_not_tensor": lambda: F.jvp(row_sums, [x]),
    }


def structure(result):
    """Nesting of tuples, and for each tensor its shape and requires_grad."""
    if isinstance(result, tuple):
        return tuple(structure(r) for r in result)
    return (tuple(result.shape), result.requires_grad)


@pytest.mark.parametrize("case", list(functional_cases(ember)))
def test_functional_against_torch(case):
    try:
        expected = functional_cases(torch)[case]()
    except Exception:
        same_error(lambda lib: functional_cases(lib)[case]())
        return
    got = functional_cases(ember)[case]()
    assert structure(got) == structure(expected)
    assert_same(expected, got)


# -- anomaly detection ----------------------------------------------------------------------------

@LIBS
def test_anomaly_mode_switches(lib):
    # torch has these at top level; ember keeps them in ember.autograd
    enabled = torch.is_anomaly_enabled if lib is torch else ember.autograd.is_anomaly_enabled
    check_nan = (torch.is_anomaly_check_nan_enabled if lib is torch
                 else ember.autograd.is_anomaly_check_nan_enabled)
    assert not enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = lib.autograd.detect_anomaly(check_nan=False)
    with mode:
        assert enabled() and not check_nan()
    assert not enabled() and check_nan()
    with lib.autograd.set_detect_anomaly(True):
        assert enabled()
    assert not enabled()
    lib.autograd.set_detect_anomaly(True)
    assert enabled()
    lib.autograd.set_detect_anomaly(False)
    assert not enabled()


def nan_backward(lib):
    a = lib.tensor([0.0, 1.0], dtype=lib.float64, requires_grad=True)
    y = a.log() * 0  # log's backward at 0 gives 0 / 0
    y.sum().backward()
    return a.grad


def test_anomaly_detection_reports_nan_with_forward_traceback():
    with pytest.warns(UserWarning) as record:
        with torch.autograd.detect_anomaly(), ember.autograd.detect_anomaly():
            message = same_error(nan_backward)
    assert message == "Function 'LogBackward0' returned nan values in its 0th output."
    texts = [str(w.message) for w in record]
    error = [t for t in texts if t.startswith("Error detected in LogBackward0") and "ember" in t]
    assert error and "Traceback of forward call that caused the error" in error[0]
    assert "y = a.log() * 0" in error[0] and __file__ in error[0]
    assert "ember" + "/ops" not in error[0]  # ember's own frames are left out


def test_anomaly_detection_without_nan_check_and_when_off():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(check_nan=False):
            expected = nan_backward(torch)
        with ember.autograd.detect_anomaly(check_nan=False):
            got = nan_backward(ember)
    assert_same(expected, got)
    assert_same(nan_backward(torch), nan_backward(ember))


def test_anomaly_mode_records_forward_traceback_in_metadata():
    def f(lib):
        x = leaf(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = x.exp()
        z = x.exp()
        stack = y.grad_fn.metadata["traceback_"]
        return type_name(stack), "y = x.exp()" in stack[-1], "traceback_" in z.grad_fn.metadata
    both(f)


def test_anomaly_detection_shows_forward_traceback_of_a_failing_function():
    class Broken(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    x = leaf(ember)
    with pytest.warns(UserWarning) as record:
        with ember.autograd.detect_anomaly():
            out = Broken.apply(x)
            with pytest.raises(ValueError, match="broken backward"):
                out.sum().backward()
    error = [str(w.message) for w in record if "Error detected in BrokenBackward" in str(w.message)]
    assert error and "out = Broken.apply(x)" in error[0]


# -- saved tensor hooks ---------------------------------------------------------------------------

def test_saved_tensors_hooks_pack_and_unpack_like_torch_docs():
    def f(lib):
        counts = {"pack": 0, "unpack": 0}

        def pack(t):
            counts["pack"] += 1
            return ("packed", t.detach().numpy().copy(), t.dtype)

        def unpack(packed):
            counts["unpack"] += 1
            _, data, dtype = packed
            return lib.tensor(data, dtype=dtype)

        x = leaf(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.pow(2)
            e = y.exp()  # saves its result
        packed = dict(counts)
        e.sum().backward(retain_graph=True)
        after_backward = dict(counts)
        z = (x * x).sum()  # outside: no hooks
        z.backward()
        return sorted(packed.items()), sorted(after_backward.items()), sorted(counts.items()), x.grad
    both(f)


def test_saved_tensors_hooks_skip_version_checks_and_check_unpacked_type():
    def f(lib):
        a = leaf(lib) * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            b = a * a
        a.add_(1)
        b.sum().backward()
        return b, a
    both(f)

    def g(lib):
        x = leaf(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: 3):
            y = x * x
        y.sum().backward()
    same_error(g)


def test_saved_tensors_hooks_nest_and_apply_to_functions():
    def f(lib):
        calls = []

        def hooks(name):
            return lib.autograd.graph.saved_tensors_hooks(
                lambda t: calls.append(f"pack {name}") or t, lambda t: calls.append(f"unpack {name}") or t)

        x = leaf(lib)
        with hooks("outer"):
            a = x.sin()
            with hooks("inner"):
                b = cube_fn(lib).apply(a)
            c = b.cos()
        c.sum().backward()
        return x.grad, calls
    both(f)


def test_save_on_cpu_gives_the_same_gradients():
    def f(lib):
        x = leaf(lib)
        with lib.autograd.graph.save_on_cpu():
            y = (x.exp() * x).sum()
        y.backward()
        return x.grad
    both(f)


@pytest.mark.parametrize("order", ["disable_first", "hooks_first"])
def test_disable_saved_tensors_hooks(order):
    def f(lib):
        graph = lib.autograd.graph
        outer, inner = (graph.disable_saved_tensors_hooks("no hooks here"),
                        graph.saved_tensors_hooks(lambda t: t, lambda t: t))
        if order == "hooks_first":
            outer, inner = inner, outer
        with outer:
            with inner:
                pass
    same_error(f)


def test_modes_leave_node_creation_and_saving_free_of_cost_when_off():
    from ember.autograd import graph
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with ember.autograd.detect_anomaly():
                assert graph.Node.save is not graph._save_plain
                assert graph.Node.__init__ is not graph.plain_init
    assert graph.Node.save is graph._save_plain
    assert graph.Node.__init__ is graph.plain_init


def test_saved_tensors_hooks_are_thread_local():
    packed = []
    x = leaf(ember)
    entered, done = threading.Event(), threading.Event()

    def other_thread():
        entered.wait()
        (x * x).sum().backward()
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with ember.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        entered.set()
        done.wait()
    thread.join()
    assert packed == []
    assert_same(values(x.grad), [2 * v for v in X])


# -- gradient conventions at singular points ------------------------------------------------------

SINGULAR = {
    "where_sqrt": lambda lib, x: lib.where(x > 0, x.sqrt(), lib.zeros_like(x)),
    "where_finite_branch": lambda lib, x: lib.where(x != 0, x * 2, 1 / x),
    "where_log_branch": lambda lib, x: lib.where(x > 0, x, x.log()),
    "sqrt": lambda lib, x: x.abs().sqrt(),
    "pow_half": lambda lib, x: x.abs() ** 0.5,
    "pow_zero": lambda lib, x: x ** 0,
    "pow_zero_float": lambda lib, x: x ** 0.0,
    "pow_two": lambda lib, x: x ** 2,
    "pow_minus_one": lambda lib, x: x ** -1,
    "pow_tensor_zero_exponent": lambda lib, x: x ** lib.zeros_like(x),
    "pow_tensor_exponent": lambda lib, x: x.abs() ** (x + 1),
    "pow_zero_base": lambda lib, x: 0.0 ** x,
    "norm_at_zero": lambda lib, x: (x * 0).norm(),
    "sqrt_of_square": lambda lib, x: (x ** 2).sqrt(),
}


@pytest.mark.parametrize("name", list(SINGULAR))
def test_gradients_at_singular_points_match_torch(name):
    def f(lib):
        x = lib.tensor([-1.0, 0.0, 4.0], dtype=lib.float64, requires_grad=True)
        SINGULAR[name](lib, x).sum().backward()
        return x.grad
    both(f)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1, 2]).requires_grad_(),
    lambda lib: lib.tensor([True]).requires_grad_(),
    lambda lib: setattr(lib.tensor([1]), "requires_grad", True),
    lambda lib: lib.autograd.grad(leaf(lib).sum(), lib.ones(2, dtype=lib.int64)),
], ids=["requires_grad_", "bool", "attribute", "grad_wrt_int"])
def test_integer_tensors_cannot_require_grad(make):
    same_error(make)


def test_integer_results_of_differentiable_inputs_do_not_require_grad():
    def f(lib):
        x = leaf(lib)
        return [t.requires_grad for t in (x > 0, x.long(), x.argmax(), x.to(lib.int32),
                                          x.round(), x.floor())]
    both(f)
