"""Indexing ops: what the op table cannot check. Errors (type and wording, against torch), node
names, in-place forms (history, version counter, a failed one leaving its tensor unchanged),
accumulation over repeated indices, and scatter's `reduce=` (no gradient, a deprecation
warning)."""
import warnings

import numpy as np
import pytest
import torch

import ember


def both(values, dtype="float32", requires_grad=False):
    """The same values as an ember and a torch tensor."""
    arr = np.array(values)
    return (ember.tensor(arr, dtype=getattr(ember, dtype), requires_grad=requires_grad),
            torch.tensor(arr, dtype=getattr(torch, dtype), requires_grad=requires_grad))


def L(lib, values, dtype="int64"):
    """An index tensor of ``lib``."""
    return lib.tensor(values, dtype=getattr(lib, dtype))


def B(lib, values):
    return lib.tensor(values, dtype=lib.bool)


def same_error(fn, e, t):
    """``fn(lib, x)`` raises the same exception type with the same message in both."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            fn(torch, t)
        with pytest.raises(Exception) as got:
            fn(ember, e)
    assert type(got.value) is type(expected.value)
    assert str(got.value) == str(expected.value).split("\n")[0]


_ROWS = [[0, 1], [2, 0], [1, 1]]

ERRORS = {
    # index_select
    "index_select_oob": lambda lib, x: lib.index_select(x, 0, L(lib, [0, 3])),
    "index_select_negative": lambda lib, x: lib.index_select(x, 0, L(lib, [-1])),
    "index_select_2d": lambda lib, x: lib.index_select(x, 0, L(lib, [[0]])),
    "index_select_float": lambda lib, x: lib.index_select(x, 0, lib.tensor([0.0])),
    "index_select_int16": lambda lib, x: lib.index_select(x, 0, L(lib, [0], "int16")),
    "index_select_dim": lambda lib, x: lib.index_select(x, 2, L(lib, [0])),
    "index_select_scalar": lambda lib, x: lib.index_select(x.sum(), 0, L(lib, [0, 0])),
    "index_select_scalar_oob": lambda lib, x: lib.index_select(x.sum(), 0, L(lib, [1])),
    "index_select_not_tensor": lambda lib, x: lib.index_select(x, 0, [0]),
    # gather
    "gather_oob": lambda lib, x: lib.gather(x, 1, L(lib, [[0, 5]])),
    "gather_negative": lambda lib, x: lib.gather(x, 1, L(lib, [[0, -1]])),
    "gather_float_index": lambda lib, x: lib.gather(x, 1, lib.tensor([[0.0]])),
    "gather_int16_index": lambda lib, x: lib.gather(x, 1, L(lib, [[0]], "int16")),
    "gather_rank": lambda lib, x: lib.gather(x, 1, L(lib, [0, 1])),
    "gather_size": lambda lib, x: lib.gather(x, 1, L(lib, [[0]] * 4)),
    "gather_dim": lambda lib, x: lib.gather(x, 2, L(lib, _ROWS)),
    # scatter family
    "scatter_oob": lambda lib, x: lib.scatter(x, 1, L(lib, [[0, 4]]), lib.ones(1, 2)),
    "scatter_negative": lambda lib, x: lib.scatter(x, 1, L(lib, [[-1]]), 2.0),
    "scatter_float_index": lambda lib, x: lib.scatter(x, 1, lib.tensor([[0.0]]), 2.0),
    "scatter_src_small": lambda lib, x: lib.scatter(x, 1, L(lib, _ROWS), lib.ones(3, 1)),
    "scatter_index_big": lambda lib, x: lib.scatter(x, 1, L(lib, [[0]] * 4), lib.ones(4, 1)),
    "scatter_value_index_big": lambda lib, x: lib.scatter(x, 1, L(lib, [[0]] * 4), 1.0),
    "scatter_src_dtype": lambda lib, x: lib.scatter(x, 1, L(lib, _ROWS), lib.ones(3, 2).double()),
    "scatter_rank": lambda lib, x: lib.scatter(x, 1, L(lib, [0, 1]), lib.ones(3, 2)),
    "scatter_src_rank": lambda lib, x: lib.scatter(x, 0, L(lib, [[0]]), lib.ones(1)),
    "scatter_bad_reduce": lambda lib, x: lib.scatter(x, 1, L(lib, _ROWS), lib.ones(3, 2), reduce="sum"),
    "scatter_add_oob": lambda lib, x: lib.scatter_add(x, 0, L(lib, [[3]]), lib.ones(1, 1)),
    "scatter_add_dtype": lambda lib, x: lib.scatter_add(x, 0, L(lib, [[0]]), lib.ones(1, 1).double()),
    "scatter_add_value": lambda lib, x: lib.scatter_add(x, 0, L(lib, [[0]]), 1.0),
    "scatter_reduce_bad": lambda lib, x: lib.scatter_reduce(x, 1, L(lib, _ROWS), lib.ones(3, 2), "add"),
    "scatter_reduce_oob": lambda lib, x: lib.scatter_reduce(x, 1, L(lib, [[7]]), lib.ones(1, 1), "amax"),
    # index_add, index_copy, index_fill
    "index_add_oob": lambda lib, x: lib.index_add(x, 0, L(lib, [0, 5]), lib.ones(2, 4)),
    "index_add_negative": lambda lib, x: lib.index_add(x, 0, L(lib, [-1]), lib.ones(1, 4)),
    "index_add_count": lambda lib, x: lib.index_add(x, 0, L(lib, [0, 1]), lib.ones(3, 4)),
    "index_add_shape": lambda lib, x: lib.index_add(x, 0, L(lib, [0, 1]), lib.ones(2, 3)),
    "index_add_rank": lambda lib, x: lib.index_add(x, 0, L(lib, [1]), lib.ones(1, 4, 1)),
    "index_add_scalar_source": lambda lib, x: lib.index_add(x, 0, L(lib, [1]), lib.tensor(2.0)),
    "index_add_dtype": lambda lib, x: lib.index_add(x, 0, L(lib, [0]), lib.ones(1, 4).double()),
    "index_add_float_index": lambda lib, x: lib.index_add(x, 0, lib.tensor([0.0]), lib.ones(1, 4)),
    "index_add_2d_index": lambda lib, x: lib.index_add(x, 0, L(lib, [[1]]), lib.ones(1, 4)),
    "index_add_source_dim": lambda lib, x: lib.index_add(x, 1, L(lib, [1]), lib.ones(1)),
    "index_copy_oob": lambda lib, x: lib.index_copy(x, 0, L(lib, [0, 5]), lib.ones(2, 4)),
    "index_copy_negative": lambda lib, x: lib.index_copy(x, 0, L(lib, [-1]), lib.ones(1, 4)),
    "index_copy_int32": lambda lib, x: lib.index_copy(x, 0, L(lib, [0], "int32"), lib.ones(1, 4)),
    "index_copy_count": lambda lib, x: lib.index_copy(x, 0, L(lib, [0, 1]), lib.ones(3, 4)),
    "index_copy_slice": lambda lib, x: lib.index_copy(x, 0, L(lib, [1]), lib.ones(1, 3)),
    "index_copy_rank": lambda lib, x: lib.index_copy(x, 0, L(lib, [1]), lib.ones(4)),
    "index_copy_dtype": lambda lib, x: lib.index_copy(x, 0, L(lib, [1]), lib.ones(2, 4).double()),
    "index_copy_2d_index": lambda lib, x: lib.index_copy(x, 0, L(lib, [[1]]), lib.ones(1, 4)),
    "index_fill_oob": lambda lib, x: lib.index_fill(x, 0, L(lib, [0, 3]), 1.0),
    "index_fill_negative_oob": lambda lib, x: lib.index_fill(x, 0, L(lib, [-4]), 1.0),
    "index_fill_int32": lambda lib, x: lib.index_fill(x, 0, L(lib, [0], "int32"), 1.0),
    "index_fill_2d_index": lambda lib, x: lib.index_fill(x, 0, L(lib, [[0]]), 1.0),
    "index_fill_1d_value": lambda lib, x: lib.index_fill(x, 0, L(lib, [0]), lib.ones(1)),
    # index_put
    "index_put_oob": lambda lib, x: lib.index_put(x, (L(lib, [0, 5]),), lib.tensor(1.0)),
    "index_put_accumulate_oob": lambda lib, x: lib.index_put(x, (L(lib, [3]),), lib.tensor(1.0),
                                                             accumulate=True),
    "index_put_dtype": lambda lib, x: lib.index_put(x, (L(lib, [0]),), lib.tensor(1.0).double()),
    "index_put_dtype_1d": lambda lib, x: lib.index_put(x, (L(lib, [0]),), lib.ones(4).double()),
    "index_put_shape": lambda lib, x: lib.index_put(x, (L(lib, [0, 2]),), lib.ones(3)),
    "index_put_accumulate_shape": lambda lib, x: lib.index_put(x, (L(lib, [0, 2]),), lib.ones(3),
                                                               accumulate=True),
    "index_put_float_index": lambda lib, x: lib.index_put(x, (lib.tensor([0.0]),), lib.tensor(1.0)),
    "index_put_too_many": lambda lib, x: lib.index_put(x, (L(lib, [0]),) * 3, lib.tensor(1.0)),
    "index_put_not_tuple": lambda lib, x: lib.index_put(x, L(lib, [0]), lib.tensor(1.0)),
    "index_put_none": lambda lib, x: lib.index_put(x, (None, L(lib, [0])), lib.tensor(1.0)),
    "index_put_number": lambda lib, x: lib.index_put(x, (L(lib, [0]),), 1.0),
    # masked ops
    "masked_fill_long_mask": lambda lib, x: lib.masked_fill(x, L(lib, [1, 0, 1, 0]), 1.0),
    "masked_fill_byte_mask": lambda lib, x: lib.masked_fill(x, L(lib, [1, 0, 1, 0], "uint8"), 1.0),
    "masked_fill_float_mask": lambda lib, x: lib.masked_fill(x, lib.ones(4), 1.0),
    "masked_fill_1d_value": lambda lib, x: lib.masked_fill(x, B(lib, [True] * 4), lib.ones(1)),
    "masked_fill_shape": lambda lib, x: lib.masked_fill(x, B(lib, [True] * 3), 1.0),
    "masked_fill__shape": lambda lib, x: x.clone().masked_fill_(B(lib, [[True]] * 3 + [[False]]), 1.0),
    "masked_fill__bcast": lambda lib, x: x[0].clone().masked_fill_(B(lib, [[True] * 4] * 3), 1.0),
    "masked_select_long_mask": lambda lib, x: lib.masked_select(x, L(lib, [1, 0, 1, 0])),
    "masked_select_shape": lambda lib, x: lib.masked_select(x, B(lib, [True] * 3)),
    "masked_scatter_long_mask": lambda lib, x: lib.masked_scatter(x, L(lib, [1, 0, 1, 0]), x),
    "masked_scatter_dtype": lambda lib, x: lib.masked_scatter(x, B(lib, [True] * 4), x.double()),
    "masked_scatter_small": lambda lib, x: lib.masked_scatter(x, B(lib, [True] * 4), lib.ones(5)),
    "masked_scatter_shape": lambda lib, x: lib.masked_scatter(x, B(lib, [True] * 3), lib.ones(12)),
    "masked_scatter__shape": lambda lib, x: x.clone().masked_scatter_(B(lib, [True] * 3), lib.ones(12)),
    # take, take_along_dim
    "take_oob": lambda lib, x: lib.take(x, L(lib, [0, 12])),
    "take_negative_oob": lambda lib, x: lib.take(x, L(lib, [-13])),
    "take_int32": lambda lib, x: lib.take(x, L(lib, [0], "int32")),
    "take_empty": lambda lib, x: lib.take(x[:0], L(lib, [0])),
    "take_along_dim_int32": lambda lib, x: lib.take_along_dim(x, L(lib, _ROWS, "int32"), 1),
    "take_along_dim_rank": lambda lib, x: lib.take_along_dim(x, L(lib, [0, 1]), 1),
    "take_along_dim_bcast": lambda lib, x: lib.take_along_dim(x, L(lib, [[0]] * 2), 1),
    "take_along_dim_flat_oob": lambda lib, x: lib.take_along_dim(x, L(lib, [0, 12])),
    "take_along_dim_flat_negative": lambda lib, x: lib.take_along_dim(x, L(lib, [-1])),
    "take_along_dim_scalar": lambda lib, x: lib.take_along_dim(x.sum(), L(lib, 0), 0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    e, t = both(np.arange(12.0).reshape(3, 4))
    same_error(ERRORS[name], e, t)


# -- in-place forms -----------------------------------------------------------------------------

INPLACE_FAILURES = {
    "scatter_": lambda lib, x: x.scatter_(1, L(lib, [[0, 1], [2, 9]]), lib.ones(2, 2)),
    "scatter_add_": lambda lib, x: x.scatter_add_(1, L(lib, [[0], [5]]), lib.ones(2, 1)),
    "scatter_reduce_": lambda lib, x: x.scatter_reduce_(1, L(lib, [[0], [5]]), lib.ones(2, 1), "sum"),
    "index_add_": lambda lib, x: x.index_add_(0, L(lib, [0, 1, 3]), lib.ones(3, 4)),
    "index_copy_": lambda lib, x: x.index_copy_(0, L(lib, [0, 3]), lib.ones(2, 4)),
    "index_fill_": lambda lib, x: x.index_fill_(1, L(lib, [0, 4]), 7.0),
    "index_put_": lambda lib, x: x.index_put_((L(lib, [0, 1, 3]),), lib.tensor(7.0), accumulate=True),
    "masked_scatter_": lambda lib, x: x.masked_scatter_(B(lib, [True] * 4), lib.ones(3)),
}


@pytest.mark.parametrize("name", list(INPLACE_FAILURES))
def test_failed_inplace_leaves_tensor_unchanged(name):
    e, t = both(np.arange(12.0).reshape(3, 4))
    same_error(INPLACE_FAILURES[name], e, t)
    np.testing.assert_array_equal(e.numpy(), np.arange(12.0).reshape(3, 4))
    assert e._version == 0


INPLACE = {
    "scatter_": (lambda lib, x: x.scatter_(1, L(lib, [[0], [3], [1]]), 5.0), "ScatterBackward1"),
    "scatter_add_": (lambda lib, x: x.scatter_add_(1, L(lib, _ROWS), lib.ones(3, 2)), "ScatterAddBackward0"),
    "scatter_reduce_": (lambda lib, x: x.scatter_reduce_(1, L(lib, _ROWS), lib.ones(3, 2), "amax"),
                        "ScatterReduceBackward0"),
    "index_add_": (lambda lib, x: x.index_add_(0, L(lib, [0, 0]), lib.ones(2, 4)), "IndexAddBackward0"),
    "index_copy_": (lambda lib, x: x.index_copy_(0, L(lib, [2]), lib.ones(1, 4)), "IndexCopyBackward0"),
    "index_fill_": (lambda lib, x: x.index_fill_(1, L(lib, [0]), 7.0), "IndexFillBackward0"),
    "index_put_": (lambda lib, x: x.index_put_((L(lib, [0, 0]),), lib.tensor(1.0), accumulate=True),
                   "IndexPutBackward0"),
    "masked_fill_": (lambda lib, x: x.masked_fill_(B(lib, [True, False, True, False]), -1.0),
                     "MaskedFillBackward0"),
    "masked_scatter_": (lambda lib, x: x.masked_scatter_(B(lib, [True, False, True, False]), lib.ones(6)),
                        "MaskedScatterBackward0"),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace(name):
    """The same values as torch, the same tensor back, the version bumped, and under autograd
    the node torch records."""
    fn, node = INPLACE[name]
    e, t = both(np.arange(12.0).reshape(3, 4))
    out = fn(ember, e)
    assert out is e and e._version == 1
    np.testing.assert_allclose(e.numpy(), fn(torch, t).numpy())
    leaf = ember.tensor(np.arange(12.0).reshape(3, 4), dtype=ember.float32, requires_grad=True)
    y = leaf * 1
    fn(ember, y)
    assert type(y.grad_fn).__name__ == node


def test_inplace_on_leaf_requiring_grad():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.index_fill_(0, ember.tensor([0]), 2.0)


def test_inplace_value_with_grad_on_plain_tensor():
    """An in-place op whose value requires grad gives the written tensor a history."""
    x = ember.zeros(3)
    v = ember.tensor(2.0, requires_grad=True)
    x.masked_fill_(ember.tensor([True, False, True]), v)
    x.sum().backward()
    assert v.grad.item() == 2.0


# -- node names ---------------------------------------------------------------------------------

NODES = {
    "index_select": lambda lib, x: lib.index_select(x, 0, L(lib, [0, 2])),
    "gather": lambda lib, x: lib.gather(x, 1, L(lib, _ROWS)),
    "scatter": lambda lib, x: lib.scatter(x, 1, L(lib, [[0], [1], [2]]), x[:, :1] * 2),
    "scatter_value": lambda lib, x: lib.scatter(x, 1, L(lib, [[0], [1], [2]]), 2.0),
    "scatter_add": lambda lib, x: lib.scatter_add(x, 1, L(lib, _ROWS), x[:, :2]),
    "scatter_reduce": lambda lib, x: lib.scatter_reduce(x, 1, L(lib, _ROWS), x[:, :2], "mean"),
    "index_add": lambda lib, x: lib.index_add(x, 0, L(lib, [0, 0]), x[:2]),
    "index_copy": lambda lib, x: lib.index_copy(x, 0, L(lib, [0]), x[:1]),
    "index_fill": lambda lib, x: lib.index_fill(x, 0, L(lib, [0]), 1.0),
    "index_fill_tensor": lambda lib, x: lib.index_fill(x, 0, L(lib, [0]), x.sum()),
    "index_put": lambda lib, x: lib.index_put(x, (L(lib, [0]),), x[0]),
    "masked_fill": lambda lib, x: lib.masked_fill(x, x > 5, 1.0),
    "masked_fill_tensor": lambda lib, x: lib.masked_fill(x, x > 5, x.sum()),
    "masked_select": lambda lib, x: lib.masked_select(x, x > 5),
    "masked_scatter": lambda lib, x: lib.masked_scatter(x, x > 5, x * 2),
    "take": lambda lib, x: lib.take(x, L(lib, [0, 5])),
    "take_along_dim": lambda lib, x: lib.take_along_dim(x, L(lib, _ROWS), 1),
    "take_along_dim_flat": lambda lib, x: lib.take_along_dim(x, L(lib, [0, 5])),
}


@pytest.mark.parametrize("name", list(NODES))
def test_node_names(name):
    e, t = both(np.arange(12.0).reshape(3, 4), requires_grad=True)
    assert type(NODES[name](ember, e).grad_fn).__name__ == type(NODES[name](torch, t).grad_fn).__name__


@pytest.mark.parametrize("shape", [(3, 4), ()])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_records_torchs_node_and_its_gradients(reduce, include_self, shape):
    values = np.arange(12.0).reshape(3, 4) % 5 if shape else np.array(2.0)
    got = []
    for lib in (ember, torch):
        x = lib.tensor(values, dtype=lib.float32, requires_grad=True)
        source = lib.tensor(values[:2] - 1 if shape else np.array(3.0), dtype=lib.float32, requires_grad=True)
        index = L(lib, [2, 2] if shape else [0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # (torch's and ember's beta warning)
            out = lib.index_reduce(x, 0, index, source, reduce, include_self=include_self)
        node = out.grad_fn
        recorded = (type(node).__name__, [type(f).__name__ for f, _ in node.next_functions], node._saved_dim,
                    node._saved_reduce, node._saved_include_self, node._saved_index.tolist())
        out.backward(lib.ones_like(out) * 1.5)
        got.append(recorded + (out.detach().numpy().tolist(), x.grad.numpy().tolist(), source.grad.numpy().tolist()))
    assert got[0] == got[1] and got[0][0] == "IndexReduceBackward0"


def test_nothing_recorded_without_grad():
    x = ember.arange(12.0).reshape(3, 4)
    for name, fn in NODES.items():
        assert fn(ember, x).grad_fn is None, name
    w = ember.ones(3, 4, requires_grad=True)
    with ember.no_grad():
        assert ember.gather(w, 1, L(ember, _ROWS)).grad_fn is None


def test_nonzero_has_no_history():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    assert x.nonzero().grad_fn is None and not x.nonzero().requires_grad
    assert ember.argwhere(x).dtype == ember.int64


# -- scatter with reduce= -----------------------------------------------------------------------

def test_scatter_reduce_argument_has_no_gradient():
    x = ember.ones(3, 4, requires_grad=True)
    y = ember.scatter(x, 1, L(ember, [[0], [1], [2]]), 2.0, reduce="multiply")
    assert type(y.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()


def test_scatter_reduce_argument_with_src_warns():
    from ember.ops import _common
    _common._warned.clear()   # (given once per process, as torch's)
    x = ember.zeros(3)
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src is deprecated"):
        out = x.scatter(0, L(ember, [0, 0, 2]), ember.ones(3), reduce="add")
    np.testing.assert_array_equal(out.numpy(), [2.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.scatter(0, L(ember, [0]), 1.0, reduce="add")


# -- accumulation over repeated indices -----------------------------------------------------------

def test_repeated_indices_accumulate():
    """Each repeated position gets every contribution (no buffered ``a[idx] += v``)."""
    index = np.array([0, 1, 0, 0, 3, 1, 0])
    expected = np.bincount(index, minlength=4).astype(np.float32)
    idx = ember.tensor(index)
    ones = ember.ones(7)
    zeros = ember.zeros(4)
    np.testing.assert_array_equal(zeros.index_add(0, idx, ones).numpy(), expected)
    np.testing.assert_array_equal(zeros.scatter_add(0, idx, ones).numpy(), expected)
    np.testing.assert_array_equal(zeros.scatter_reduce(0, idx, ones, "sum").numpy(), expected)
    np.testing.assert_array_equal(zeros.index_put((idx,), ones, accumulate=True).numpy(), expected)
    np.testing.assert_array_equal(zeros.clone().index_put_((idx,), ember.tensor(1.0), True).numpy(),
                                  expected)
    np.testing.assert_array_equal(ember.ones(4).scatter(0, idx, 2.0, reduce="multiply").numpy(),
                                  2.0 ** expected)


def test_repeated_indices_gradient():
    """The gradient of a gather (and of the ops built on one) adds up over repeated indices."""
    x = ember.zeros(4, requires_grad=True)
    idx = ember.tensor([0, 1, 0, 0, 3, 1, 0])
    (x.gather(0, idx).sum() + x.index_select(0, idx).sum() + x.take(idx).sum()
     + x[idx].sum() + ember.take_along_dim(x, idx, 0).sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), 5 * np.bincount(idx.numpy(), minlength=4))


def test_scatter_reduce_legacy_max_min():
    """torch still takes "max" and "min" forward (as amax, amin), but has no gradient for them."""
    e, t = both(np.arange(12.0).reshape(3, 4), requires_grad=True)
    for reduce in ("max", "min"):
        got = e.scatter_reduce(1, L(ember, _ROWS), e[:, :2] * 3, reduce)
        want = t.scatter_reduce(1, L(torch, _ROWS), t[:, :2] * 3, reduce)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        same_error(lambda lib, y: y.sum().backward(), got, want)


def test_scatter_reduce_mean_integer_floors():
    e, t = both(np.arange(12).reshape(3, 4), "int64")
    src = [[9, 9], [9, 9], [9, 9]]
    got = e.scatter_reduce(1, L(ember, _ROWS), L(ember, src), "mean")
    want = t.scatter_reduce(1, L(torch, _ROWS), L(torch, src), "mean")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_saved_index_modified_in_place():
    """The index is saved for backward: changing it in place afterwards is caught."""
    x = ember.ones(3, 4, requires_grad=True)
    idx = L(ember, _ROWS)
    y = x.gather(1, idx)
    idx.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# -- nonzero, where -----------------------------------------------------------------------------

def test_nonzero_as_tuple_and_where():
    e, t = both([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]])
    for got, want in ((ember.nonzero(e, as_tuple=True), torch.nonzero(t, as_tuple=True)),
                      (ember.where(e), torch.where(t)),
                      (e.sum().nonzero(as_tuple=True), t.sum().nonzero(as_tuple=True))):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == ember.int64
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_masked_fill_casts_value_to_input_dtype():
    for dtype, value in (("int64", 1.5), ("int64", ember.tensor(2.5)), ("float32", True),
                         ("bool", 0)):
        e = ember.zeros(3, dtype=getattr(ember, dtype))
        t = torch.zeros(3, dtype=getattr(torch, dtype))
        tvalue = torch.tensor(value.item()) if isinstance(value, ember.Tensor) else value
        got = e.masked_fill(ember.tensor([True, False, True]), value)
        want = t.masked_fill(torch.tensor([True, False, True]), tvalue)
        assert got.dtype == getattr(ember, dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("value", [2.5, float("nan"), float("inf"), -7, 1e39, 1 << 30, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_masked_fill_inplace_of_a_number_is_torchs(dtype, value):
    """In place, with a Python number: the values torch writes, or its error with nothing written."""
    values = np.linspace(-2, 2, 12).reshape(3, 4)
    (x, tx), mask = both(values, dtype), values > 0
    results = []
    for lib, t in ((ember, x), (torch, tx)):
        try:
            t.masked_fill_(lib.tensor(mask), value)
            results.append(t.numpy().tobytes())
        except RuntimeError as error:
            results.append((str(error), t.numpy().tobytes()))
    assert results[0] == results[1]
    assert x._version == (tx._version if isinstance(results[0], bytes) else 0)


@pytest.mark.parametrize("value", [1.5, -3, float("nan")])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_fill_and_copy_of_plain_tensors_are_torchs(dtype, value):
    values = np.arange(12).reshape(3, 4)
    (x, tx), (y, ty) = both(values, dtype), both(values[::-1].copy(), dtype)
    if not (dtype == "int64" and value != value):
        out, want = ember.fill(x, value), torch.fill(tx, value)
        assert out.numpy().dtype == want.numpy().dtype
        assert out.numpy().tobytes() == want.numpy().tobytes() and out.stride() == want.stride()
    x.copy_(y)
    tx.copy_(ty)
    assert x.numpy().tobytes() == tx.numpy().tobytes() and x._version == tx._version


@pytest.mark.parametrize("case", ["out_of_range", "wrong_shape", "both"])
def test_index_put_inplace_errors_are_torchs_and_write_nothing(case):
    """The in-place write into the tensor's own array: torch's errors (a shape mismatch before an index out of
    range), and nothing written (where torch has written the rows before the one out of range)."""
    results = []
    for lib in (ember, torch):
        x = lib.zeros(3, 5)
        index = lib.tensor([0, 7] if case in ("out_of_range", "both") else [0, 1])
        values = lib.ones(4 if case in ("wrong_shape", "both") else 5)
        with pytest.raises((IndexError, RuntimeError)) as caught:
            x.index_put_((index,), values)
        results.append((caught.type, str(caught.value).split("\n")[0]))
        if lib is ember:
            assert x.sum().item() == 0
    assert results[0] == results[1]


def test_masked_scatter_in_place_where_nothing_records():
    """Written into self's array at once: the out-of-place op's values and torch's, self's version
    bumped, a view's base written, and the same errors as where autograd records."""
    rng = np.random.default_rng(21)
    x, m, s = rng.standard_normal((3, 5)).astype(np.float32), rng.random((3, 5)) > 0.5, rng.standard_normal(15)
    s = s.astype(np.float32)
    for mask in (m, m[0]):
        e = ember.tensor(x)
        before = e._version
        out = e.masked_scatter_(ember.tensor(mask), ember.tensor(s))
        want = torch.tensor(x).masked_scatter_(torch.tensor(mask), torch.tensor(s))
        assert out is e and e._version == before + 1
        np.testing.assert_array_equal(e.numpy(), want.numpy())
        np.testing.assert_array_equal(e.numpy(), ember.tensor(x).masked_scatter(ember.tensor(mask), ember.tensor(s)))
    base = ember.tensor(x)
    base[1].masked_scatter_(ember.tensor(m[1]), ember.tensor(s))
    want = torch.tensor(x)
    want[1].masked_scatter_(torch.tensor(m[1]), torch.tensor(s))
    np.testing.assert_array_equal(base.numpy(), want.numpy())
    for bad in (lambda t: t.masked_scatter_(ember.tensor(m), ember.tensor(s[:2])),
                lambda t: t.masked_scatter_(ember.tensor(m), ember.tensor(s).double()),
                lambda t: t.masked_scatter_(ember.tensor(m).int(), ember.tensor(s))):
        errors = []
        for grad in (False, True):
            t = ember.tensor(x, requires_grad=grad).clone()
            with pytest.raises(RuntimeError) as error:
                bad(t)
            errors.append(str(error.value))
            assert np.array_equal(t.detach().numpy(), x)
        assert errors[0] == errors[1]
