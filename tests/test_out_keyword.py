"""torch's ``out=`` keyword on reductions, sorting, indexing and scatter functions, against
torch: the values written, ``out`` itself returned, the resize warning for an out of the
wrong shape, torch's dtype rules (which differ from op to op) and the refusal of inputs that
require grad. Tensor methods take no out=, as torch's."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _arrays():
    rng = np.random.default_rng(0)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    x = normal(3, 4)
    with_nan = x.copy()
    with_nan[0, 1] = with_nan[2, 3] = np.nan
    return {"x": x, "y": normal(3, 4), "xn": with_nan, "xr": np.round(x), "sq": normal(3, 3) * 0.5,
            "a43": normal(4, 3), "b42": normal(4, 2), "v4": normal(4), "v2": normal(2),
            "s24": normal(2, 4), "mask": x > 0.2, "i2": np.array([2, 0]),
            "idx": rng.integers(0, 4, (3, 2))}


A = _arrays()


def _t(lib, key):
    return lib.tensor(A[key])


# name (a dotted path in the library; "-..." tells cases apart), f(lib) -> (args, kwargs)
CASES = [
    ("all", lambda L: ((_t(L, "mask"), 1), {})),
    ("all-full", lambda L: ((_t(L, "mask"),), {})),
    ("any", lambda L: ((_t(L, "mask"),), {})),
    ("amax", lambda L: ((_t(L, "x"), 1), {})),
    ("amin", lambda L: ((_t(L, "x"), (0, 1)), {})),
    ("aminmax", lambda L: ((_t(L, "x"),), {"dim": 1})),
    ("aminmax-full", lambda L: ((_t(L, "x"),), {})),
    ("argmax", lambda L: ((_t(L, "x"), 1), {})),
    ("argmin", lambda L: ((_t(L, "x"),), {})),
    ("argsort", lambda L: ((_t(L, "x"),), {"dim": 1, "stable": True})),
    ("cummax", lambda L: ((_t(L, "x"), 1), {})),
    ("cummin", lambda L: ((_t(L, "x"), 0), {})),
    ("cumprod", lambda L: ((_t(L, "x") * 3, 1), {})),
    ("cumsum", lambda L: ((_t(L, "x") * 3, 0), {})),
    ("diag", lambda L: ((_t(L, "x"),), {})),
    ("diag-vector", lambda L: ((_t(L, "v4"), 1), {})),
    ("diff", lambda L: ((_t(L, "x"), 1, 1), {})),
    ("gather", lambda L: ((_t(L, "x"), 1, _t(L, "idx")), {})),
    ("index_add", lambda L: ((_t(L, "x"), 0, _t(L, "i2"), _t(L, "s24")), {"alpha": 2})),
    ("index_copy", lambda L: ((_t(L, "x"), 0, _t(L, "i2"), _t(L, "s24")), {})),
    ("index_reduce", lambda L: ((_t(L, "x"), 0, _t(L, "i2"), _t(L, "s24"), "prod"), {})),
    ("index_select", lambda L: ((_t(L, "x"), 0, _t(L, "i2")), {})),
    ("kron", lambda L: ((_t(L, "x"), _t(L, "sq")[:2, :2]), {})),
    ("kthvalue", lambda L: ((_t(L, "x"), 2, 1), {})),
    ("linalg.lstsq", lambda L: ((_t(L, "a43"), _t(L, "b42")), {})),
    ("linalg.matrix_power", lambda L: ((_t(L, "sq"), 3), {})),
    ("matrix_power", lambda L: ((_t(L, "sq"), 2), {})),
    ("logcumsumexp", lambda L: ((_t(L, "x"), 1), {})),
    ("logsumexp", lambda L: ((_t(L, "x"), 1), {})),
    ("special.logsumexp", lambda L: ((_t(L, "x"), (0, 1)), {})),
    ("masked_select", lambda L: ((_t(L, "x"), _t(L, "mask")), {})),
    ("max", lambda L: ((_t(L, "x"),), {})),
    ("max-dim", lambda L: ((_t(L, "x"), 1), {})),
    ("max-binary", lambda L: ((_t(L, "x"), _t(L, "y")), {})),
    ("median-dim", lambda L: ((_t(L, "x"), 1), {})),
    ("min", lambda L: ((_t(L, "x"),), {})),
    ("min-dim", lambda L: ((_t(L, "x"), 0, True), {})),
    ("min-binary", lambda L: ((_t(L, "x"), _t(L, "y")), {})),
    ("mode", lambda L: ((_t(L, "xr"), 1), {})),
    ("msort", lambda L: ((_t(L, "x"),), {})),
    ("nanmean", lambda L: ((_t(L, "xn"), 1), {})),
    ("nanmedian-dim", lambda L: ((_t(L, "xn"), 0), {})),
    ("nanquantile", lambda L: ((_t(L, "xn"), 0.7), {})),
    ("nansum", lambda L: ((_t(L, "xn"), 1), {})),
    ("nansum-full", lambda L: ((_t(L, "xn"),), {})),
    ("nonzero", lambda L: ((_t(L, "mask"),), {})),
    ("prod", lambda L: ((_t(L, "x") * 3, 1), {})),
    ("quantile", lambda L: ((_t(L, "x"), L.tensor([0.3, 0.5]), 1), {})),
    ("renorm", lambda L: ((_t(L, "x"), 2, 0, 1.0), {})),
    ("scatter", lambda L: ((_t(L, "x"), 1, _t(L, "idx"), _t(L, "y")), {})),
    ("scatter-value", lambda L: ((_t(L, "x"), 1, _t(L, "idx")), {"value": 2.0})),
    ("scatter_add", lambda L: ((_t(L, "x"), 1, _t(L, "idx"), _t(L, "y")), {})),
    ("scatter_reduce", lambda L: ((_t(L, "x"), 1, _t(L, "idx"), _t(L, "y"), "amax"), {})),
    ("slice_scatter", lambda L: ((_t(L, "x"), _t(L, "s24"), 0, 0, 2), {})),
    ("std", lambda L: ((_t(L, "x"), 1), {})),
    ("take", lambda L: ((_t(L, "x"), _t(L, "i2")), {})),
    ("take_along_dim", lambda L: ((_t(L, "x"), _t(L, "idx"), 1), {})),
    ("topk", lambda L: ((_t(L, "x"), 2), {})),
    ("var", lambda L: ((_t(L, "x"),), {"correction": 0})),
]
IDS = [c[0] for c in CASES]

# torch's Python takes no out= on these (ATen has out variants Python does not see), nor on
# the forms of the others named after them
NO_OUT = [
    ("count_nonzero", lambda L: ((_t(L, "x"), 1), {})),
    ("diag_embed", lambda L: ((_t(L, "x"),), {})),
    ("diagonal_scatter", lambda L: ((_t(L, "x"), _t(L, "v4")[:3]), {})),
    ("dist", lambda L: ((_t(L, "x"), _t(L, "y")), {})),
    ("fill", lambda L: ((_t(L, "x"), 1.5), {})),
    ("flip", lambda L: ((_t(L, "x"), (0,)), {})),
    ("index_fill", lambda L: ((_t(L, "x"), 1, _t(L, "i2"), 2.0), {})),
    ("index_put", lambda L: ((_t(L, "x"), (_t(L, "i2"),), _t(L, "s24")), {})),
    ("linalg.matrix_exp", lambda L: ((_t(L, "sq"),), {})),
    ("masked_fill", lambda L: ((_t(L, "x"), _t(L, "mask"), 1.0), {})),
    ("masked_scatter", lambda L: ((_t(L, "x"), _t(L, "mask"), _t(L, "y")), {})),
    ("put", lambda L: ((_t(L, "x"), _t(L, "i2"), _t(L, "v2")), {})),
    ("repeat_interleave", lambda L: ((_t(L, "x"), 2, 0), {})),
    ("roll", lambda L: ((_t(L, "x"), 1, 0), {})),
    ("rot90", lambda L: ((_t(L, "x"), 1, (0, 1)), {})),
    ("select_scatter", lambda L: ((_t(L, "x"), _t(L, "v4"), 0, 1), {})),
    ("trace", lambda L: ((_t(L, "sq"),), {})),
    ("prod-full", lambda L: ((_t(L, "x"),), {})),
    ("median-full", lambda L: ((_t(L, "x"),), {})),
    ("nanmedian-full", lambda L: ((_t(L, "xn"),), {})),
    ("var-unbiased", lambda L: ((_t(L, "x"), False), {})),
]


def _fn(lib, name):
    obj = lib
    for part in name.split("-")[0].split("."):
        obj = getattr(obj, part)
    return obj


def _outs(lib, result, dtype=None, index_dtype=None, shape=None):
    """Empty out= tensors for ``result`` (a tuple for a tuple): its dtypes unless ``dtype``
    (the first output's) or ``index_dtype`` (the others') say otherwise."""
    def one(r, dt):
        return lib.empty(r.shape if shape is None else shape, dtype=getattr(lib, dt) if dt else r.dtype)
    if isinstance(result, tuple):
        return tuple(one(r, dtype if i == 0 else index_dtype) for i, r in enumerate(result))
    return one(result, dtype)


def _run(lib, name, make_args, requires_grad=False, grad_mode=True, **out_kw):
    """(exception type or None, [out values], resize warnings) of one out= call in ``lib``
    (with grad mode on or off)."""
    fn = _fn(lib, name)
    args, kwargs = make_args(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fn(*args, **kwargs)
    if requires_grad:
        args = tuple(a.clone().requires_grad_() if isinstance(a, lib.Tensor) and a.is_floating_point()
                     else a for a in args)
    outs = _outs(lib, result, **out_kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with lib.set_grad_enabled(grad_mode):
                returned = fn(*args, **kwargs, out=outs)
        except Exception as error:   # compared with torch's by type
            return type(error), None, None
    resized = [str(w.message).split(" (Triggered internally")[0] for w in caught
               if "resized" in str(w.message)]
    if isinstance(outs, tuple):
        assert len(returned) == len(outs) and all(r is o for r, o in zip(returned, outs))
        assert getattr(returned, "_fields", None) == getattr(result, "_fields", None)
    else:
        assert returned is outs
    values = [o.detach().numpy().copy() for o in (outs if isinstance(outs, tuple) else (outs,))]
    return None, values, resized


def _same(name, make_args, **kw):
    want = _run(torch, name, make_args, **kw)
    got = _run(ember, name, make_args, **kw)
    assert got[0] == want[0], f"ember: {got[0]}, torch: {want[0]}"
    if want[0] is None:
        assert len(got[1]) == len(want[1])
        for g, w in zip(got[1], want[1]):
            assert g.shape == w.shape and g.dtype == w.dtype
            wide = np.complex128 if w.dtype.kind == "c" else np.float64
            np.testing.assert_allclose(g.astype(wide), w.astype(wide), rtol=2e-3, atol=1e-5)
        if name in KEEPDIM_WORDING:
            assert len(got[2]) == len(want[2])
        else:
            assert got[2] == want[2]
    return want


# torch's resize warning for these names the shapes with the reduced dim kept (its kernels
# resize a keepdim view of out); ember's names the shapes as they are
KEEPDIM_WORDING = ("kthvalue", "mode")


@pytest.mark.parametrize("name,make_args", CASES, ids=IDS)
def test_out_is_written_and_returned_as_torchs(name, make_args):
    assert _same(name, make_args)[0] is None


@pytest.mark.parametrize("name,make_args", CASES, ids=IDS)
def test_out_of_the_wrong_shape_is_resized_with_torchs_warning(name, make_args):
    want = _same(name, make_args, shape=(7,))
    assert want[0] is None and want[2]
    assert _same(name, make_args, shape=(0,))[2] == []


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("name,make_args", CASES, ids=IDS)
def test_out_dtype_rules_are_torchs(name, make_args, dtype):
    _same(name, make_args, dtype=dtype)


@pytest.mark.parametrize("name,make_args", [c for c in CASES if c[0] in (
    "aminmax", "cummax", "cummin", "kthvalue", "linalg.lstsq", "max-dim", "median-dim", "min-dim",
    "mode", "nanmedian-dim", "topk")])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_second_out_dtype_rules_are_torchs(name, make_args, dtype):
    _same(name, make_args, index_dtype=dtype)


@pytest.mark.parametrize("name,make_args", CASES, ids=IDS)
def test_inputs_requiring_grad_as_torch(name, make_args):
    _same(name, make_args, requires_grad=True)


@pytest.mark.parametrize("name,make_args", CASES, ids=IDS)
def test_inputs_requiring_grad_are_taken_with_grad_mode_off(name, make_args):
    assert _same(name, make_args, requires_grad=True, grad_mode=False)[0] is None


@pytest.mark.parametrize("name,make_args", NO_OUT, ids=[c[0] for c in NO_OUT])
def test_no_out_where_torchs_python_takes_none(name, make_args):
    for lib in (torch, ember):
        args, kwargs = make_args(lib)
        with pytest.raises(TypeError):
            _fn(lib, name)(*args, **kwargs, out=lib.empty(0))


TOP_LEVEL = [c for c in CASES if "." not in c[0]]


@pytest.mark.parametrize("name,make_args", TOP_LEVEL, ids=[c[0] for c in TOP_LEVEL])
def test_tensor_methods_take_no_out(name, make_args):
    for lib in (torch, ember):
        args, kwargs = make_args(lib)
        method = getattr(args[0], name.split("-")[0], None)
        if method is None:   # torch has no such Tensor method either
            assert not hasattr(torch.Tensor, name.split("-")[0])
            continue
        with pytest.raises(TypeError):
            method(*args[1:], **kwargs, out=lib.empty(0))


def test_out_in_place_of_an_input_and_kept_storage():
    for lib in (torch, ember):
        x = lib.tensor(A["x"])
        out = lib.empty(3)
        before = out.data_ptr() if lib is torch else out._data.ctypes.data
        lib.amax(x, 1, out=out)
        after = out.data_ptr() if lib is torch else out._data.ctypes.data
        assert before == after
        np.testing.assert_array_equal(out.numpy(), A["x"].max(1))


def test_a_refused_out_is_left_unchanged():
    for lib in (torch, ember):
        x = lib.tensor(A["x"])
        values, indices = lib.zeros(3), lib.zeros(3, dtype=lib.int32)
        with pytest.raises(RuntimeError):
            lib.max(x, 1, out=(values, indices))
        assert not values.numpy().any() and not indices.numpy().any()


def test_a_non_contiguous_out_is_written_through():
    got = []
    for lib in (torch, ember):
        base = lib.zeros(2, 3)
        out = base.t()   # (3, 2), not contiguous
        returned = lib.gather(lib.tensor(A["x"]), 1, lib.tensor(A["idx"]), out=out)
        assert returned is out and out.shape == (3, 2)
        got.append(base.numpy().copy())
    np.testing.assert_array_equal(got[1], got[0])
    np.testing.assert_array_equal(got[0].T, np.take_along_axis(A["x"], A["idx"], 1))
