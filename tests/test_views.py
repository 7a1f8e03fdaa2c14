"""Storage sharing, strides, version counters, index writes and the errors of views and
shape ops, checked against torch."""
import numpy as np
import pytest
import torch

import ember


def _pair(shape=(3, 4, 5)):
    """The same contiguous float64 tensor in both libraries."""
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return ember.tensor(values), torch.tensor(values)


# Views: each takes a tensor of shape (3, 4, 5) and returns a view of it.
VIEWS = {
    "view": lambda x: x.view(12, 5),
    "reshape": lambda x: x.reshape(3, 20),
    "permute": lambda x: x.permute(2, 0, 1),
    "transpose": lambda x: x.transpose(0, 2),
    "t": lambda x: x[0].t(),
    "T": lambda x: x[0].T,
    "mT": lambda x: x.mT,
    "squeeze": lambda x: x[:, :1].squeeze(1),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "flatten": lambda x: x.flatten(1),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "narrow": lambda x: x.narrow(2, 1, 3),
    "select": lambda x: x.select(1, -2),
    "unbind": lambda x: x.unbind(2)[3],
    "chunk": lambda x: x.chunk(2, 1)[1],
    "split": lambda x: x.split(2, 2)[1],
    "split_sizes": lambda x: x.split([1, 3, 1], 2)[1],
    "diagonal": lambda x: x.diagonal(1, 1, 2),
    "diagonal_neg": lambda x: x.diagonal(-1, 0, 2),
    "movedim": lambda x: x.movedim((0, 1), (2, 0)),
    "moveaxis": lambda x: x.moveaxis(0, -1),
    "unfold": lambda x: x.unfold(2, 2, 3),
    "slice_step": lambda x: x[::2, 1::2, -1],
    "slice_negative": lambda x: x[-2:, :-1, None, ...],
    "ellipsis": lambda x: x[..., 1],
    "detach": lambda x: x.detach()[1],
    "chain": lambda x: x.transpose(0, 1)[1:, ::2].narrow(2, 1, 2).unsqueeze(0),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_write_through_view_changes_base(name):
    eb, tb = _pair()
    ev, tv = VIEWS[name](eb), VIEWS[name](tb)
    fill = np.arange(tv.numel(), dtype=np.float64).reshape(tuple(tv.shape)) * -1 - 1
    ev.copy_(ember.tensor(fill))
    tv.copy_(torch.tensor(fill))
    np.testing.assert_array_equal(eb.numpy(), tb.numpy())


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_write_to_base_shows_in_view(name):
    eb, tb = _pair()
    ev, tv = VIEWS[name](eb), VIEWS[name](tb)
    for key, value in ((1, -7.0), ((slice(None), 2), 3.0), ((Ellipsis, 1), -1.0)):
        eb[key] = value
        tb[key] = value
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_shares_version_counter(name):
    eb, _ = _pair()
    ev = VIEWS[name](eb)
    before = eb._version
    ev.zero_()
    assert eb._version == before + 1
    assert ev._version == eb._version
    eb.fill_(1.0)
    assert ev._version == before + 2
    assert float(ev.sum()) == ev.numel()


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_stride_and_storage_offset_match_torch(name):
    eb, tb = _pair()
    ev, tv = VIEWS[name](eb), VIEWS[name](tb)
    assert tuple(ev.shape) == tuple(tv.shape)
    assert ev.stride() == tv.stride()
    assert ev.storage_offset() == tv.storage_offset()
    for d in range(-ev.dim(), ev.dim()):
        assert ev.stride(d) == tv.stride(d)
    assert ev.is_contiguous() == tv.is_contiguous()


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_storage(name):
    eb, _ = _pair()
    ev = VIEWS[name](eb)
    assert ev.untyped_storage().data_ptr() == eb.untyped_storage().data_ptr()
    assert ev.data_ptr() == eb.data_ptr() + ev.storage_offset() * ev.element_size()
    assert len(ev.untyped_storage()) == eb.untyped_storage().nbytes() == eb.nbytes
    assert eb.clone().untyped_storage().data_ptr() != eb.untyped_storage().data_ptr()


STRIDE_CASES = {
    "contiguous": lambda x: x,
    "expand": lambda x: x[:, :1].expand(2, 3, 4, 5),
    "expand_new_dim": lambda x: x[0, 0].expand(3, 5),
    "size_one_dims": lambda x: x[:1, 1:2],
    "unsqueeze_transposed": lambda x: x.transpose(0, 2).unsqueeze(1),
    "select_last": lambda x: x[:, :, 4],
    "slice_step_3": lambda x: x[1:, ::3, 1::2],
    "diagonal_empty": lambda x: x.diagonal(7, 1, 2),
    "empty_rows": lambda x: x[3:],
    "scalar": lambda x: x[1, 2, 3],
}


@pytest.mark.parametrize("name", sorted(STRIDE_CASES))
def test_strides_of_special_views(name):
    eb, tb = _pair()
    ev, tv = STRIDE_CASES[name](eb), STRIDE_CASES[name](tb)
    assert tuple(ev.shape) == tuple(tv.shape)
    assert ev.stride() == tv.stride()
    if ev.numel():
        assert ev.storage_offset() == tv.storage_offset()


def test_view_of_incompatible_strides_raises_torch_error():
    eb, tb = _pair((2, 6))
    with pytest.raises(RuntimeError) as te:
        tb.t().view(12)
    with pytest.raises(RuntimeError) as ee:
        eb.t().view(12)
    assert str(ee.value) == str(te.value)
    assert eb.t().reshape(12).tolist() == tb.t().reshape(12).tolist()


def test_elements_of_1d_tensor_are_0d_views():
    e = ember.arange(3.0)
    first, second, _ = e.unbind(0)
    first.fill_(5.0)
    e[1:2].select(0, 0).fill_(6.0)
    for item in e:
        assert item._base is e and item.dim() == 0
    assert e.tolist() == [5.0, 6.0, 2.0] and second.item() == 6.0


def test_view_results_are_views_and_copies_are_not():
    eb, _ = _pair()
    assert eb.narrow(0, 1, 1)._base is eb
    assert eb.unbind(0)[1]._base is eb
    assert eb.split(2)[1][0]._base is eb
    assert eb[[0, 1]]._base is None
    assert eb.flip(0)._base is None
    assert eb.flip(0).is_contiguous()


# -- errors -------------------------------------------------------------------------------------

ERRORS = {
    "int_out_of_range": lambda lib, x: x[5],
    "negative_int_out_of_range": lambda lib, x: x[:, -5],
    "negative_step": lambda lib, x: x[::-1],
    "zero_step": lambda lib, x: x[::0],
    "too_many_indices": lambda lib, x: x[0, 0, 0, 0],
    "list_out_of_range": lambda lib, x: x[[0, 5]],
    "tensor_out_of_range": lambda lib, x: x[:, lib.tensor([0, -5])],
    "float_index": lambda lib, x: x[lib.tensor([1.0])],
    "int16_index": lambda lib, x: x[lib.tensor([1], dtype=lib.int16)],
    "mask_shape": lambda lib, x: x[lib.ones(2, 2, dtype=lib.bool)],
    "narrow_start": lambda lib, x: x.narrow(0, 4, 0),
    "narrow_length": lambda lib, x: x.narrow(0, 2, 2),
    "narrow_negative_length": lambda lib, x: x.narrow(0, 0, -1),
    "select_out_of_range": lambda lib, x: x.select(1, 4),
    "select_0d": lambda lib, x: x[0, 0, 0].select(0, 0),
    "chunk_zero": lambda lib, x: x.chunk(0),
    "split_zero": lambda lib, x: x.split(0),
    "split_negative": lambda lib, x: x.split(-1),
    "split_sizes_sum": lambda lib, x: x.split([1, 1]),
    "diagonal_same_dims": lambda lib, x: x.diagonal(0, 1, 1),
    "movedim_lengths": lambda lib, x: x.movedim((0, 1), (1,)),
    "movedim_repeated": lambda lib, x: x.movedim((0, 0), (1, 2)),
    "unflatten_sizes": lambda lib, x: x.unflatten(1, (3, 2)),
    "unflatten_empty": lambda lib, x: x.unflatten(1, ()),
    "unfold_size": lambda lib, x: x.unfold(1, 5, 1),
    "unfold_step": lambda lib, x: x.unfold(1, 2, 0),
    "cat_empty_list": lambda lib, x: lib.cat([]),
    "cat_rank": lambda lib, x: lib.cat([x, x[0]]),
    "cat_sizes": lambda lib, x: lib.cat([x, x[:, :2]], 2),
    "cat_0d": lambda lib, x: lib.cat([x[0, 0, 0], x[0, 0, 1]]),
    "cat_dim": lambda lib, x: lib.cat([x, x], 3),
    "cat_not_list": lambda lib, x: lib.cat(x),
    "cat_not_tensor": lambda lib, x: lib.cat([x, 1]),
    "stack_sizes": lambda lib, x: lib.stack([x, x[:2]]),
    "stack_empty": lambda lib, x: lib.stack([]),
    "fliplr_1d": lambda lib, x: lib.fliplr(x[0, 0]),
    "flip_repeated": lambda lib, x: x.flip(0, 0),
    "roll_align": lambda lib, x: x.roll((1, 2), (0,)),
    "roll_no_shifts": lambda lib, x: x.roll((), ()),
    "repeat_few": lambda lib, x: x.repeat(2),
    "repeat_negative": lambda lib, x: x.repeat(-1, 2, 1),
    "tril_1d": lambda lib, x: x[0, 0].tril(),
    "setitem_shape": lambda lib, x: x.__setitem__([0, 1], lib.ones(3)),
    "setitem_dtype": lambda lib, x: x.__setitem__([0, 1], lib.ones(5, dtype=lib.float32)),
    "setitem_list_out_of_range": lambda lib, x: x.__setitem__((slice(None), [0, 9]), 1.0),
    "index_second_tensor": lambda lib, x: x[[0, 1], :, [0, 7]],
    "index_int_then_tensor": lambda lib, x: x[:, 9, [0]],
    "setitem_str": lambda lib, x: x.__setitem__(0, "a"),
    "setitem_expanded": lambda lib, x: x[:, :1].expand(3, 4, 5).__setitem__(0, 1.0),
    "fill_1d_value": lambda lib, x: x.fill_(lib.ones(2)),
    "copy_shape": lambda lib, x: x.copy_(lib.ones(2, 5)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    eb, tb = _pair((3, 4, 5))
    original = eb.numpy().copy()
    with pytest.raises(Exception) as te:
        ERRORS[name](torch, tb)
    with pytest.raises(Exception) as ee:
        ERRORS[name](ember, eb)
    assert type(ee.value) is type(te.value)
    expected = str(te.value).split("\n")[0].replace("torch.FloatTensor", "DOUBLE_TENSOR") \
        .replace("torch.DoubleTensor", "DOUBLE_TENSOR").replace("torch.", "ember.") \
        .replace("DOUBLE_TENSOR", "torch.DoubleTensor")   # ember spells type strings as torch
    assert str(ee.value) == expected
    np.testing.assert_array_equal(eb.numpy(), original)  # a failed op leaves its input alone


# -- __setitem__, fill_, zero_, copy_ -------------------------------------------------------------

SETITEMS = [
    (1, 5.0), ((slice(None), 2), -1), ((Ellipsis, slice(1, None, 2)), 2.5),
    ([0, 2], 3.0), ((slice(None), [1, 1, 3]), 4.0), ((None, 0, slice(None)), 1.0),
]


@pytest.mark.parametrize("key,value", SETITEMS)
def test_setitem_scalar_bumps_version(key, value):
    eb, tb = _pair((3, 4, 5))
    before = eb._version
    eb[key] = value
    tb[key] = value
    np.testing.assert_array_equal(eb.numpy(), tb.numpy())
    assert eb._version == before + 1


def test_setitem_tensor_broadcasts_and_casts():
    eb, tb = _pair((3, 4))
    eb[1:, ::2] = ember.tensor([7, 8], dtype=ember.int64)
    tb[1:, ::2] = torch.tensor([7, 8])
    ei = ember.zeros(3, 4, dtype=ember.int32)
    ti = torch.zeros(3, 4, dtype=torch.int32)
    ei[ember.tensor([True, False, True])] = ember.tensor(2.7, dtype=ember.float64)
    ti[torch.tensor([True, False, True])] = torch.tensor(2.7, dtype=torch.float64)
    ei[1] = ember.tensor([[1.7, 2.2, -1.5, 0.0]], dtype=ember.float64)
    ti[1] = torch.tensor([[1.7, 2.2, -1.5, 0.0]], dtype=torch.float64)
    np.testing.assert_array_equal(eb.numpy(), tb.numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    assert ei.dtype == ember.int32


def test_setitem_through_view_writes_base():
    eb, tb = _pair((3, 4))
    ev, tv = eb.t(), tb.t()
    ev[[0, 3], 1:] = -1.0
    tv[[0, 3], 1:] = -1.0
    np.testing.assert_array_equal(eb.numpy(), tb.numpy())
    assert eb._version == 1


def _history_case(lib, key):
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    v = lib.tensor(np.array([0.5, -2.0, 3.0, 1.5]), requires_grad=True)
    y = x * 2
    version = y._version
    y[key] = v * v
    (y * lib.arange(12.0).reshape(3, 4)).sum().backward()
    return y, version, x.grad, v.grad


@pytest.mark.parametrize("key", [1, (slice(None, 2),), [2, 0], (ember.tensor([True, False, True]),)],
                         ids=["int", "slice", "list", "mask"])
def test_setitem_records_history_like_torch(key):
    tkey = key if not isinstance(key, tuple) or not isinstance(key[0], ember.Tensor) else \
        (torch.tensor(key[0].tolist()),)
    ey, ev, egx, egv = _history_case(ember, key)
    ty, tv, tgx, tgv = _history_case(torch, tkey)
    assert ey.grad_fn.name() == ty.grad_fn.name().split("::")[-1]
    assert ey._version == ev + 1
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(egx.numpy(), tgx.numpy())
    np.testing.assert_allclose(egv.numpy(), tgv.numpy())


def test_setitem_on_leaf_requiring_grad_raises():
    x = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 1.0
    with ember.no_grad():
        x[0] = 1.0
    assert x.tolist() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("write", ["setitem", "fill_", "zero_", "copy_"])
def test_writes_into_view_of_graph_tensor_match_torch(write):
    grads = []
    for lib in (torch, ember):
        x = lib.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], requires_grad=True)
        y = x * 2
        v = y[0]
        {"setitem": lambda: v.__setitem__(1, 5.0), "fill_": lambda: v.fill_(1.0),
         "zero_": lambda: v.zero_(), "copy_": lambda: v.copy_(lib.ones(4))}[write]()
        assert type(y.grad_fn).__name__ == "CopySlices"
        (y * y).sum().backward()
        grads.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    np.testing.assert_array_equal(grads[1][0], grads[0][0])
    np.testing.assert_array_equal(grads[1][1], grads[0][1])


def test_setitem_value_gives_history_to_plain_tensor():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    z = ember.zeros(2, 3)
    z[:, 1] = w
    assert z.requires_grad and z.grad_fn.name() == "CopySlices"
    (z * z).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_fill_and_zero():
    e = ember.arange(6).reshape(2, 3)
    e.fill_(ember.tensor(2.7))
    assert e.tolist() == [[2, 2, 2], [2, 2, 2]] and e.dtype == ember.int64
    e[0].zero_()
    assert e.tolist() == [[0, 0, 0], [2, 2, 2]] and e._version == 2
    f = ember.ones(2)
    assert f.fill_(3) is f and f.tolist() == [3.0, 3.0]


def test_fill_with_tensor_value_gradient():
    tv = torch.tensor(1.5, requires_grad=True)
    ev = ember.tensor(1.5, requires_grad=True)
    ty = torch.zeros(2, 3).fill_(tv)
    ey = ember.zeros(2, 3).fill_(ev)
    assert ey.grad_fn.name() == ty.grad_fn.name().split("::")[-1]
    (ty * torch.arange(6.0).reshape(2, 3)).sum().backward()
    (ey * ember.arange(6.0).reshape(2, 3)).sum().backward()
    assert ev.grad.item() == tv.grad.item() == 15.0


@pytest.mark.parametrize("value", ["number", "tensor"])
def test_out_of_place_fill_records_torchs_node_on_its_input(value):
    """fill(input, value): torch's FillBackward0 (a number) or FillBackward1 (a 0-d tensor) straight on the
    input's AccumulateGrad (no clone under it), no gradient to the input, the sum to a tensor value."""
    x, xt = ember.ones(2, 3, requires_grad=True), torch.ones(2, 3, requires_grad=True)
    v, vt = (1.5, 1.5) if value == "number" else (ember.tensor(2.0, requires_grad=True),
                                                  torch.tensor(2.0, requires_grad=True))
    y, yt = ember.fill(x, v), torch.fill(xt, vt)
    assert y.grad_fn.name() == yt.grad_fn.name().split("::")[-1]
    assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == \
        [type(f).__name__ for f, _ in yt.grad_fn.next_functions]
    (y * ember.arange(6.0).reshape(2, 3)).sum().backward()
    (yt * torch.arange(6.0).reshape(2, 3)).sum().backward()
    assert x.grad.tolist() == xt.grad.tolist() and y.tolist() == yt.tolist()
    if value == "tensor":
        assert v.grad.item() == vt.grad.item() == 15.0


def test_copy_converts_broadcasts_and_differentiates():
    e = ember.zeros(2, 3, dtype=ember.int32)
    assert e.copy_(ember.tensor([1.9, -2.5, 3.0])) is e
    assert e.tolist() == [[1, -2, 3], [1, -2, 3]] and e._version == 1
    src = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float32, requires_grad=True)
    dst = ember.zeros(2, 3, dtype=ember.float64)
    dst.copy_(src)
    assert dst.grad_fn.name() == "ember::autograd::CopyBackwards" and dst.dtype == ember.float64
    (dst * 2).sum().backward()
    assert src.grad.dtype == ember.float32 and src.grad.tolist() == [4.0, 4.0, 4.0]


@pytest.mark.parametrize("key", [[[0, 1], [1, 2]], [[0, 2], slice(1, None)], [None, 1]],
                         ids=["lists", "list_slice", "none"])
def test_list_of_sequences_is_read_as_tuple_with_warning(key):
    eb, tb = _pair((3, 4))
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        expected = tb[key]
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        got = eb[key]
    assert got.tolist() == expected.tolist()


def test_byte_mask_warns_and_selects():
    eb, tb = _pair((3, 2))
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        got = eb[ember.tensor([1, 0, 1], dtype=ember.uint8)]
    with pytest.warns(UserWarning):
        expected = tb[torch.tensor([1, 0, 1], dtype=torch.uint8)]
    assert got.tolist() == expected.tolist()


def test_advanced_index_gradient_accumulates_repeats():
    x = ember.zeros(4, requires_grad=True)
    x[ember.tensor([[0, 0], [3, 0]])].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 0.0, 1.0]


def test_unused_outputs_of_multi_output_ops_get_zero_gradient():
    x = ember.arange(6.0).reshape(2, 3).requires_grad_()
    a, b, c = x.unbind(1)
    b.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]
    assert a.grad_fn is b.grad_fn is c.grad_fn and c._output_nr == 2


@pytest.mark.parametrize("name,fn", [
    ("narrow", lambda x: x.narrow(0, 1, 1)), ("select", lambda x: x.select(1, 2)),
    ("int", lambda x: x[1]), ("slice", lambda x: x[1:]), ("none", lambda x: x[None]),
    ("alias", lambda x: x[...]), ("unbind", lambda x: x.unbind(0)[0]),
    ("chunk", lambda x: x.chunk(2, 1)[0]), ("split_sizes", lambda x: x.split([1, 5], 1)[0]),
    ("diagonal", lambda x: x.diagonal()), ("movedim", lambda x: x.movedim(0, 1)),
    ("unflatten", lambda x: x.unflatten(1, (2, 3))), ("unfold", lambda x: x.unfold(1, 2, 2)),
    ("index", lambda x: x[[0, 1]]), ("mask", lambda x: x[x > 0]), ("flip", lambda x: x.flip(0)),
    ("roll", lambda x: x.roll(1)), ("repeat", lambda x: x.repeat(2, 1)), ("tile", lambda x: x.tile(2)),
    ("tril", lambda x: x.tril()), ("triu", lambda x: x.triu()),
    ("cat", lambda x: (ember if isinstance(x, ember.Tensor) else torch).cat([x, x])),
    ("stack", lambda x: (ember if isinstance(x, ember.Tensor) else torch).stack([x, x])),
])
def test_grad_fn_names_match_torch(name, fn):
    ex = ember.ones(4, 6, requires_grad=True)
    tx = torch.ones(4, 6, requires_grad=True)
    assert fn(ex).grad_fn.name() == fn(tx).grad_fn.name()


@pytest.mark.parametrize("op", ["add_", "mul_", "exp_"])
def test_inplace_on_expanded_tensor_raises_torchs_error(op):
    messages = []
    for lib in (torch, ember):
        e = lib.ones(3).expand(2, 3)
        with pytest.raises(RuntimeError) as info:
            getattr(e, op)(*([2] if op in ("add_", "mul_") else []))
        messages.append(str(info.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("shape, dim, size, step", [
    ((4, 10, 3), 1, 3, 1), ((4, 10, 3), 1, 8, 1), ((4, 10, 3), 1, 2, 4), ((10,), 0, 9, 1),
    ((6, 7), -1, 7, 2), ((5, 6), 0, 2, 2)])
def test_unfold_gradient_on_arrays_matches_torch(shape, dim, size, step):
    """By offsets within the windows (more windows than offsets) or by windows (fewer), the
    windows overlapping, apart or touching."""
    rng = np.random.default_rng(sum(shape) + size)
    x = rng.standard_normal(shape)
    y_shape = tuple(torch.zeros(shape).unfold(dim, size, step).shape)
    g = rng.standard_normal(y_shape)
    grads = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        t.unfold(dim, size, step).backward(lib.tensor(g))
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
