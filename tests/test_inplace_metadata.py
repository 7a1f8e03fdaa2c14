"""In-place metadata changes (``t_``, ``transpose_``/``swapdims_``/``swapaxes_``,
``squeeze_``, ``unsqueeze_``, ``as_strided_``) against torch: the tensor itself takes the new
shape and strides over the same memory, its version moves on, gradients flow through the
change, and leaves that require grad (and views of them) are refused."""
import numpy as np
import pytest
import torch

import ember

CHANGES = {
    "t_": lambda y: y.t_(),
    "transpose_": lambda y: y.transpose_(0, 1),
    "swapdims_": lambda y: y.swapdims_(1, 0),
    "swapaxes_": lambda y: y.swapaxes_(-1, 0),
    "unsqueeze_": lambda y: y.unsqueeze_(1),
    "unsqueeze_ then squeeze_": lambda y: y.unsqueeze_(0).squeeze_(0),
    "squeeze_ dims": lambda y: y.unsqueeze_(2).squeeze_((0, 2)),
    "as_strided_": lambda y: y.as_strided_((2, 2), (1, 3), 1),
}


def _run(lib, change, requires_grad):
    x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=requires_grad)
    y = x * 2 if requires_grad else x.clone()
    before = y.data_ptr()
    result = change(y)
    state = (result is y, tuple(y.shape), y.stride(), y.storage_offset(), y._version,
             y.data_ptr() == before, y.detach().numpy().tolist())
    if not requires_grad:
        return state, None
    weights = lib.tensor(np.arange(float(y.numel())).reshape(tuple(y.shape)) + 1)
    (y * weights).sum().backward()
    return state, x.grad.numpy().tolist()


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("name", sorted(CHANGES))
def test_in_place_metadata_change_matches_torch(name, requires_grad):
    assert _run(ember, CHANGES[name], requires_grad) == _run(torch, CHANGES[name], requires_grad)


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_leaves_that_require_grad_and_their_views_are_refused(name):
    for make in (lambda lib: lib.ones(2, 3, requires_grad=True),
                 lambda lib: lib.ones(2, 3, requires_grad=True)[:, :]):
        errors = []
        for lib in (torch, ember):
            t = make(lib)
            shape = tuple(t.shape)
            with pytest.raises(RuntimeError) as info:
                CHANGES[name](t)
            errors.append(str(info.value).split(".")[0])
            assert tuple(t.shape) == shape and t._version == 0
        assert errors[0] == errors[1]


def test_a_view_changed_in_place_keeps_its_base_and_moves_the_shared_version():
    results = []
    for lib in (torch, ember):
        base = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        b = base * 1
        v = b[:, :2]
        v.t_()
        (v * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        results.append((tuple(v.shape), v.stride(), v._base is b, b._version,
                        base.grad.numpy().tolist()))
    assert results[0] == results[1]


def test_a_tensor_saved_for_backward_then_changed_in_place_is_detected():
    for lib in (torch, ember):
        x = lib.ones(2, 3, requires_grad=True)
        y = x * 2
        z = y.exp()   # saves its result... and y's version is what matters for mul's saved y
        w = y * y     # saves y
        y.t_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            w.sum().backward()
        z.sum().backward()


# -- resize_, resize_as_, set_ and the deprecated resize / resize_as ---------------------------

SIZE_CHANGES = {
    "resize_ leaf that requires grad": lambda L: L.ones(2, 3, requires_grad=True).resize_(3, 2),
    "resize_ non-leaf that requires grad": lambda L: (L.ones(2, 3, requires_grad=True) * 2).resize_(3, 2),
    "resize_ smaller": lambda L: L.arange(6.0).resize_(2, 2),
    "resize_ larger": lambda L: L.arange(6.0).resize_(3, 3)[:2],
    "resize_ same size": lambda L: L.ones(2, 3).resize_((2, 3)),
    "resize_ a view": lambda L: L.arange(6.0)[2:].resize_(2, 2),
    "resize_ same size, not contiguous": lambda L: L.arange(6.0).view(2, 3).t().resize_(3, 2),
    "resize_ channels_last": lambda L: L.ones(1, 2, 2, 2).resize_(1, 2, 2, 2, memory_format=L.channels_last),
    "resize_ channels_last, wrong rank": lambda L: L.ones(2, 3).resize_(2, 3, memory_format=L.channels_last),
    "resize_ negative": lambda L: L.ones(2, 3).resize_(2, -1),
    "resize_as_": lambda L: L.ones(2, 3).resize_as_(L.ones(6)),
    "torch.resize_as_": lambda L: L.resize_as_(L.ones(2, 3), L.ones(3, 1)),
    "resize": lambda L: L.ones(2, 3).resize(3, 2),
    "resize to another numel": lambda L: L.ones(2, 3).resize(3, 3),
    "resize_as": lambda L: L.ones(2, 3).resize_as(L.ones(6)),
    "set_ empty": lambda L: L.ones(2, 3).set_(),
    "set_ tensor": lambda L: L.ones(2, 3).set_(L.arange(4.0)),
    "set_ tensor of another dtype": lambda L: L.ones(2, 3).set_(L.arange(4)),
    "set_ leaf that requires grad": lambda L: L.ones(2, 3, requires_grad=True).set_(L.arange(4.0)),
    "set_ non-leaf": lambda L: (L.ones(2, 3, requires_grad=True) * 1).set_(L.arange(4.0)),
    "set_ from a tensor that requires grad": lambda L: L.ones(2, 3).set_(L.arange(4.0, requires_grad=True)),
    "set_ storage": lambda L: L.ones(2, 3).set_(L.arange(6.0).untyped_storage(), 1, (2, 2), (1, 2)),
    "set_ tensor with size": lambda L: L.ones(2, 3).set_(L.arange(6.0), 2, (2, 2)),
    "set_ tensor with strides": lambda L: L.ones(2, 3).set_(L.arange(6.0), 1, (2, 2), (1, 2)),
}


def _size_change(lib, change):
    import warnings
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = change(lib)
    except RuntimeError as error:
        return "RuntimeError", str(error)
    return (tuple(r.shape), r.stride(), r.storage_offset(), r._version, r.requires_grad,
            r.detach().reshape(-1)[:4].tolist() if r.numel() else [],
            [str(w.message) for w in caught])


@pytest.mark.parametrize("name", sorted(SIZE_CHANGES))
def test_size_and_storage_changes_match_torch(name):
    assert _size_change(ember, SIZE_CHANGES[name]) == _size_change(torch, SIZE_CHANGES[name])


def test_set_shares_the_memory_but_not_the_version():
    results = []
    for lib in (torch, ember):
        a, b = lib.ones(2, 3), lib.arange(4.0)
        a.set_(b)
        b[0] = 7
        results.append((a.tolist(), a._version, b._version, a.data_ptr() == b.data_ptr()))
    assert results[0] == results[1]


def test_backward_through_set_raises_as_torch_does():
    errors = []
    for lib in (torch, ember):
        y = (lib.ones(2, 3, requires_grad=True) * 1).set_(lib.arange(4.0))
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_deprecated_resize_passes_gradients():
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = (x * 1).resize(3, 2)
        (y * lib.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
