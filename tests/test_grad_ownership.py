"""A leaf's ``.grad`` never shares memory with a tensor the user can still reach, while the
gradients the engine alone holds are stored without a copy. Needs no torch: it runs on every
supported Python."""
import numpy as np
import pytest

import ember

# every test here runs with autograd's compiled paths and with their Python steps
pytestmark = pytest.mark.usefixtures("autograd_paths")

X = [0.5, -1.25, 2.0, 4.0, -3.0, 1.0]


def leaf(values=X):
    return ember.tensor(values, dtype=ember.float64, requires_grad=True)


def seed(n=len(X)):
    return ember.tensor(np.linspace(1.0, 2.0, n), dtype=ember.float64)


def passed_to_backward():
    x, g = leaf(), seed()
    (x + 0).backward(g)
    return [x], [g]


def passed_to_backward_of_the_leaf():
    x, g = leaf(), seed()
    x.backward(g)
    return [x], [g]


def passed_to_backward_through_a_view():
    x, g = leaf(), seed()
    x.reshape(2, 3).t().backward(g.reshape(3, 2))
    return [x], [g]


def passed_to_backward_and_reshaped():
    x, g = leaf(), seed().reshape(2, 3)
    x.view(2, 3).backward(g)
    return [x], [g]


def captured_by_a_leaf_hook():
    x, kept = leaf(), []
    x.register_hook(kept.append)
    (x * 2).sum().backward()
    return [x], kept


def captured_by_a_hook_on_an_intermediate():
    x, kept = leaf(), []
    h = x + 1
    h.register_hook(kept.append)
    (h * 3).sum().backward()
    return [x], kept


def returned_by_a_hook():
    x, mine = leaf(), seed()
    x.register_hook(lambda g: mine)
    (x * 2).sum().backward()
    return [x], [mine]


def returned_by_a_hook_on_an_intermediate():
    x, mine = leaf(), seed()
    h = x + 1
    h.register_hook(lambda g: mine)
    (h * 3).sum().backward()
    return [x], [mine]


def captured_by_a_node_post_hook():
    x, kept = leaf(), []
    y = x * 2
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.extend(grad_inputs))
    y.sum().backward()
    return [x], kept


def captured_by_a_node_pre_hook():
    x, kept = leaf(), []
    y = x.view(2, 3)
    y.grad_fn.register_prehook(lambda grad_outputs: kept.extend(grad_outputs))
    (y * 3).sum().backward()
    return [x], kept


def retained_by_an_intermediate():
    x = leaf()
    h = x.view(2, 3)
    h.retain_grad()
    (h * 3).sum().backward()
    return [x], [h.grad]


def retained_by_a_pass_through_intermediate():
    x = leaf()
    h = x * 1
    h.retain_grad()
    (h + 0).sum().backward()
    return [x], [h.grad]


class _ReturnsKept(ember.autograd.Function):
    kept = None

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return _ReturnsKept.kept


class _ReturnsItsGradient(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad


class _ReturnsSaved(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        return x * w

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        return w, None


def returned_by_a_custom_function():
    x = leaf()
    _ReturnsKept.kept = mine = seed()
    _ReturnsKept.apply(x).sum().backward()
    return [x], [mine]


def passed_through_a_custom_function():
    x, g = leaf(), seed()
    _ReturnsItsGradient.apply(x).backward(g)
    return [x], [g]


def saved_by_a_custom_function():
    x, w = leaf(), seed()
    _ReturnsSaved.apply(x, w).sum().backward()
    return [x], [w]


def seen_by_a_module_backward_hook():
    layer = ember.nn.Identity()
    kept = []
    layer.register_full_backward_hook(lambda m, gin, gout: kept.extend(gin + gout))
    x, g = leaf(), seed()
    layer(x * 1).backward(g)
    return [x], kept


def shared_by_two_leaves():
    a, b = leaf(), leaf(X[::-1])
    (a + b).sum().backward()
    return [a, b], []


def shared_by_two_leaves_through_views():
    a, b = leaf(), leaf(X[::-1])
    (a.view(2, 3) + b.view(2, 3)).backward(seed().view(2, 3))
    return [a, b], []


def one_gradient_for_a_leaf_and_a_retained_intermediate():
    a = leaf()
    h = a * 1
    h.retain_grad()
    b = leaf()
    (h * 2 + b.view(6)).sum().backward()
    return [a, b], [h.grad]


def three_gradients_for_a_leaf_one_passed_to_backward():
    x, g = leaf(), seed()
    (x + x * 2 + x * 3 + x).backward(g)
    return [x], [g]


def three_gradients_for_a_leaf_captured_by_its_hook():
    x, kept = leaf(), []
    x.register_hook(kept.append)
    (x * 2 + x * 3 + x * 4).sum().backward()
    return [x], kept


CASES = [three_gradients_for_a_leaf_one_passed_to_backward,
         three_gradients_for_a_leaf_captured_by_its_hook, passed_to_backward,
         passed_to_backward_of_the_leaf, passed_to_backward_through_a_view,
         passed_to_backward_and_reshaped, captured_by_a_leaf_hook,
         captured_by_a_hook_on_an_intermediate, returned_by_a_hook,
         returned_by_a_hook_on_an_intermediate, captured_by_a_node_post_hook,
         captured_by_a_node_pre_hook, retained_by_an_intermediate,
         retained_by_a_pass_through_intermediate, returned_by_a_custom_function,
         passed_through_a_custom_function, saved_by_a_custom_function,
         seen_by_a_module_backward_hook, shared_by_two_leaves, shared_by_two_leaves_through_views,
         one_gradient_for_a_leaf_and_a_retained_intermediate]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_grad_does_not_alias_what_the_user_can_reach(case):
    leaves, reachable = case()
    reachable = [t for t in reachable if t is not None]
    assert reachable or len(leaves) > 1
    before = [t.numpy().copy() for t in reachable]
    grads = [x.grad for x in leaves]
    for i, g in enumerate(grads):
        assert g is not None
        for other in reachable + grads[:i]:
            assert not np.shares_memory(g.numpy(), other.numpy())
    for g in grads:
        g.add_(100.0)
    for t, was in zip(reachable, before):
        np.testing.assert_array_equal(t.numpy(), was)


def test_many_gradients_for_one_leaf_add_up():
    x = leaf()
    (x * 2 + x * 3 + x.tanh() + x * 4 + x).sum().backward()
    expected = 10 + (1 - np.tanh(np.array(X)) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_later_gradients_are_added_into_the_first_in_place():
    x, g = leaf(), seed()
    (x * 2).backward(g)
    first = x.grad
    (x + 0).backward(g)
    assert x.grad is first
    np.testing.assert_allclose(x.grad.numpy(), 3 * g.numpy())
    np.testing.assert_allclose(g.numpy(), np.linspace(1.0, 2.0, len(X)))


@pytest.fixture
def stored_uncopied(monkeypatch):
    """The ``owned`` flag of each gradient the engine stores into a ``.grad``, in order."""
    from ember.autograd import engine, graph
    seen = []

    def spy(variable, grad, owned):
        seen.append(owned)
        return graph.accumulate_into(variable, grad, owned)

    monkeypatch.setattr(engine, "accumulate_into", spy)
    return seen


# a leaf larger than the engine's small gradients (which a leaf always copies)
LARGE = np.linspace(-3.0, 3.0, 96)


@pytest.mark.parametrize("build", [
    lambda x: (x * 2).tanh().sum(),                      # a formula's fresh result
    lambda x: (x * 2 + x * 3).sum(),                     # the engine's sum of two
    lambda x: (x * 2 + x * 3 + x.tanh() + x * 4).sum(),  # and more, added into that sum
    lambda x: (x.view(8, 12) * 2).t().sum(),             # a view of the engine's own gradient
    lambda x: ember.nn.functional.cross_entropy(x.view(8, 12), ember.tensor([0, 2] * 4)),
], ids=["formula", "sum", "sum_of_four", "view_of_owned", "cross_entropy"])
def test_gradients_only_the_engine_holds_are_stored_uncopied(build, stored_uncopied):
    from ember.autograd import engine
    assert LARGE.size > engine.SMALL_GRAD_ELEMENTS
    x = leaf(LARGE)
    build(x).backward()
    assert stored_uncopied == [True]


def test_small_gradients_are_copied_into_grad_untracked(stored_uncopied, monkeypatch):
    """Gradients of at most ``SMALL_GRAD_ELEMENTS`` elements skip the engine's tracking of who
    may hold them, and a leaf always copies them: its ``.grad`` still shares no memory."""
    from ember.autograd import engine
    calls = []
    real = engine._apart
    monkeypatch.setattr(engine, "_apart", lambda *a: calls.append(1) or real(*a))
    x = leaf()
    y = x * 2
    (y + y).sum().backward()   # add sends one gradient to both of its inputs
    assert calls == [] and stored_uncopied == [False]
    np.testing.assert_allclose(x.grad.numpy(), 4.0)


@pytest.mark.parametrize("case", [passed_to_backward, captured_by_a_leaf_hook,
                                  returned_by_a_custom_function, retained_by_an_intermediate],
                         ids=lambda c: c.__name__)
def test_gradients_the_user_can_reach_are_copied(case, stored_uncopied):
    case()
    assert stored_uncopied == [False]
