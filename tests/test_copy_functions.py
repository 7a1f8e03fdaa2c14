"""torch's ``*_copy`` functions against torch: the view's values in fresh contiguous memory,
and the view's gradients."""
import numpy as np
import pytest
import torch

import ember

VALUES = np.random.default_rng(1).uniform(-1, 1, size=(4, 3, 2))
CALLS = {
    "view_copy": (((6, 4),), {}),
    "permute_copy": (([2, 0, 1],), {}),
    "t_copy": ((), {}),
    "transpose_copy": ((0, 2), {}),
    "unsqueeze_copy": ((1,), {}),
    "squeeze_copy": ((), {}),
    "select_copy": ((1, -1), {}),
    "slice_copy": ((), {"dim": 1, "start": 1, "end": None, "step": 2}),
    "split_copy": ((3,), {}),
    "split_with_sizes_copy": (([1, 2], 1), {}),
    "unbind_copy": ((2,), {}),
    "unfold_copy": ((0, 2, 1), {}),
    "expand_copy": (((2, 4, 3, 2),), {}),
    "diagonal_copy": ((), {"offset": 1, "dim1": 0, "dim2": 1}),
    "alias_copy": ((), {}),
    "as_strided_copy": (((3, 3), (2, 5), 1), {}),
    "narrow_copy": ((0, 1, 2), {}),
}
SHAPES = {"t_copy": (8, 3), "squeeze_copy": (8, 1, 3)}


def _run(lib, name):
    args, kwargs = CALLS[name]
    x = lib.tensor(VALUES.reshape(SHAPES.get(name, VALUES.shape)), requires_grad=True)
    result = getattr(lib, name)(x, *args, **kwargs)
    pieces = list(result) if isinstance(result, (tuple, list)) else [result]
    total = sum((p * lib.arange(1.0, p.numel() + 1, dtype=p.dtype).reshape(p.shape)).sum()
                for p in pieces)
    total.backward()
    with lib.no_grad():
        x.add_(100.0)   # no piece shares the input's memory
    return ([(p.is_contiguous(), tuple(p.shape), p.detach().numpy().copy()) for p in pieces],
            type(result).__name__, x.grad.numpy())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_copies_match_torch(name):
    (ours, our_type, our_grad), (theirs, their_type, their_grad) = (_run(lib, name)
                                                                    for lib in (ember, torch))
    assert our_type == their_type
    assert [o[:2] for o in ours] == [t[:2] for t in theirs]
    assert all(o[0] for o in ours)
    for (_, _, a), (_, _, b) in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(our_grad, their_grad)


def test_detach_copy_and_view_copy_by_dtype():
    # torch's detach_copy keeps requires_grad with a node whose backward is not implemented;
    # ember's result has no history, as detach()'s.
    x = ember.ones(2, 3, requires_grad=True)
    d = ember.detach_copy(x)
    assert not d.requires_grad and d.data_ptr() != x.data_ptr()
    for lib in (ember, torch):
        assert lib.view_copy(lib.ones(2, dtype=lib.float32), lib.int32).tolist() == [1065353216] * 2
    out = ember.empty(0)
    assert ember.t_copy(ember.ones(2, 3), out=out) is out and tuple(out.shape) == (3, 2)
    assert ember.ones(3).narrow_copy(0, 1, 2).tolist() == torch.ones(3).narrow_copy(0, 1, 2).tolist()
