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
