"""The dtypes beyond the everyday twelve, against torch: uint16/uint32/uint64 and the float8
types as tensor dtypes (promotion, result_type, can_cast, value casts, iinfo/finfo, printing),
and the dtypes ember keeps as objects only (bits, sub-byte integers, quantized, complex32,
float4), which print, promote and pickle as torch's and refuse to make tensors."""
import math
import pickle

import numpy as np
import pytest
import torch

import ember
from ember import _dtype

TENSOR_NAMES = [d.name for d in _dtype.ALL_DTYPES]
OBJECT_NAMES = [d.name for d in _dtype.NO_TENSOR_DTYPES]
NEW_NAMES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
             "float8_e5m2fnuz", "float8_e8m0fnu"]
ALIASES = ["bit", "chalf", "half", "float", "double", "short", "int", "long", "cfloat", "cdouble"]


def test_every_torch_dtype_name_is_there():
    names = [n for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype)]
    missing = [n for n in names if not isinstance(getattr(ember, n, None), ember.dtype)]
    assert not missing
    for n in names:
        assert repr(getattr(ember, n)) == repr(getattr(torch, n)).replace("torch", "ember"), n


@pytest.mark.parametrize("name", TENSOR_NAMES + OBJECT_NAMES + ALIASES)
def test_dtype_properties_are_torchs(name):
    got, want = getattr(ember, name), getattr(torch, name)
    assert str(got) == str(want).replace("torch", "ember")
    for attr in ("itemsize", "is_floating_point", "is_complex", "is_signed"):
        try:
            expected = getattr(want, attr)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                getattr(got, attr)
            continue
        assert getattr(got, attr) == expected, attr
    assert pickle.loads(pickle.dumps(got)) is got


ALL_NAMES = TENSOR_NAMES + OBJECT_NAMES


def _outcome(fn):
    try:
        return fn()
    except Exception as e:
        return e


def _same_outcome(got, want):
    if isinstance(want, Exception):
        assert isinstance(got, type(want)), (got, want)
        if "INTERNAL ASSERT" not in str(want):  # torch's own bug report, not a message to match
            assert str(got) == str(want).replace("torch", "ember"), (got, want)
    else:
        assert not isinstance(got, Exception), (got, want)
        assert repr(got) == repr(want).replace("torch", "ember")


@pytest.mark.parametrize("a", ALL_NAMES)
def test_promote_types_is_torchs_over_all_pairs(a):
    for b in ALL_NAMES:
        got = _outcome(lambda: ember.promote_types(getattr(ember, a), getattr(ember, b)))
        want = _outcome(lambda: torch.promote_types(getattr(torch, a), getattr(torch, b)))
        _same_outcome(got, want)


@pytest.mark.parametrize("a", ALL_NAMES)
def test_can_cast_is_torchs_over_all_pairs(a):
    got = [ember.can_cast(getattr(ember, a), getattr(ember, b)) for b in ALL_NAMES]
    want = [torch.can_cast(getattr(torch, a), getattr(torch, b)) for b in ALL_NAMES]
    assert got == want


def _pair(lib, name, shape):
    return lib.ones(shape).to(getattr(lib, name))


SCALARS = [2, 2.5, True]


@pytest.mark.parametrize("name", NEW_NAMES)
def test_result_type_with_tensors_and_scalars_is_torchs(name):
    for other in TENSOR_NAMES:
        for shapes in (((2,), (2,)), ((2,), ()), ((), (2,))):
            got = _outcome(lambda: ember.result_type(_pair(ember, name, shapes[0]),
                                                     _pair(ember, other, shapes[1])))
            want = _outcome(lambda: torch.result_type(_pair(torch, name, shapes[0]),
                                                      _pair(torch, other, shapes[1])))
            _same_outcome(got, want)
    for scalar in SCALARS:
        got = ember.result_type(_pair(ember, name, (2,)), scalar)
        want = torch.result_type(_pair(torch, name, (2,)), scalar)
        assert repr(got) == repr(want).replace("torch", "ember")


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("other", ["int8", "int64", "bool", "float32", "uint16", "float8_e5m2"])
def test_arithmetic_promotion_errors_are_torchs(name, other):
    """Where torch refuses to promote, ember's ops raise its error; where it promotes, the
    result has its dtype (ember computes some ops torch has no kernel for on these types)."""
    want = _outcome(lambda: _pair(torch, name, (2,)) * _pair(torch, other, (2,)))
    got = _outcome(lambda: _pair(ember, name, (2,)) * _pair(ember, other, (2,)))
    if isinstance(want, RuntimeError) and "Promotion" in str(want):
        _same_outcome(got, want)
    elif not isinstance(want, Exception):
        assert repr(got.dtype) == repr(want.dtype).replace("torch", "ember")
        assert got.float().tolist() == want.float().tolist()


VALUES = [0.0, -0.0, 1.0, -1.0, 0.3, 2.5, -3.7, 1e-9, 100.0, 300.0, 448.0, 449.0, 464.0,
          1000.0, 57344.0, 61440.0, 70000.0, 1e6, 5e9, 1e19, -1e6, math.inf, -math.inf, math.nan]


def _floats(t):
    return [repr(v) for v in t.double().tolist()]


@pytest.mark.parametrize("target", NEW_NAMES)
@pytest.mark.parametrize("source", ["float32", "float64", "bfloat16", "float16", "int64"])
def test_casts_to_the_new_dtypes_are_torchs(source, target):
    values = [v for v in VALUES if source != "int64" or math.isfinite(v)]
    if source in ("int64",):
        values = [v for v in values if abs(v) < 2 ** 62]
    elif source in ("float16", "bfloat16"):
        values = [v for v in values if abs(v) < 6e4 or not math.isfinite(v)]
    if target.startswith("uint"):  # torch's float -> unsigned casts of NaN, inf and values out
        values = [v for v in values if math.isfinite(v) and -2 ** 31 < v < 2 ** 32]  # of range
    want = torch.tensor(values, dtype=torch.float64).to(getattr(torch, source)).to(getattr(torch, target))
    got = ember.tensor(values, dtype=ember.float64).to(getattr(ember, source)).to(getattr(ember, target))
    assert got.dtype is getattr(ember, target)
    assert _floats(got) == _floats(want)


@pytest.mark.parametrize("source", NEW_NAMES)
@pytest.mark.parametrize("target", ["float32", "float64", "int64", "uint8", "bool"] + NEW_NAMES)
def test_casts_from_the_new_dtypes_are_torchs(source, target):
    values = [0.0, 1.0, 2.0, 3.0, 100.0, 200.0]
    if not source.startswith("uint") and source != "float8_e8m0fnu":
        values += [-1.0, -2.5, 0.3]
    tw = torch.tensor(values).to(getattr(torch, source))
    want = _outcome(lambda: tw.to(getattr(torch, target)))
    got = ember.tensor(values).to(getattr(ember, source)).to(getattr(ember, target))
    if isinstance(want, Exception):
        pytest.skip(f"torch cannot cast {source} to {target}: {want}")
    assert _floats(got) == _floats(want)


@pytest.mark.parametrize("name", ["uint8", "uint16", "uint32", "uint64", "int8", "int64"])
def test_integer_casts_wrap_as_torchs(name):
    ints = [-1, -2 ** 31, 2 ** 16 + 3, 2 ** 40 + 7, -2 ** 63, 2 ** 62]
    assert ember.tensor(ints).to(getattr(ember, name)).tolist() == \
        torch.tensor(ints).to(getattr(torch, name)).tolist()
    big = [2 ** 64 - 1, 2 ** 63 + 5, 0]
    assert ember.tensor(big, dtype=ember.uint64).to(getattr(ember, name)).tolist() == \
        torch.tensor(big, dtype=torch.uint64).to(getattr(torch, name)).tolist()


@pytest.mark.parametrize("name", [n for n in TENSOR_NAMES if n != "bool"] + OBJECT_NAMES)
def test_finfo_and_iinfo_are_torchs(name):
    for kind in ("finfo", "iinfo"):
        want = _outcome(lambda: getattr(torch, kind)(getattr(torch, name)))
        got = _outcome(lambda: getattr(ember, kind)(getattr(ember, name)))
        text = want if isinstance(want, Exception) else _outcome(lambda: repr(want))
        if isinstance(text, Exception):  # (torch makes some info objects it cannot print:
            assert isinstance(got, type(text)), (got, text)  # ember refuses to make them)
            continue
        assert repr(got) == text
        for attr in ("bits", "max", "min", "eps", "tiny", "smallest_normal", "resolution"):
            if hasattr(want, attr):
                assert getattr(got, attr) == getattr(want, attr), attr
        assert got.dtype == want.dtype


@pytest.mark.parametrize("name", NEW_NAMES)
def test_printing_is_torchs(name):
    values = [0.5, 3.0, 300.0] if not name.startswith("uint") else [0, 3, 300]
    for data in (values, [], values[0]):
        t = torch.tensor(data).to(getattr(torch, name))
        e = ember.tensor(data).to(getattr(ember, name))
        assert repr(e) == repr(t).replace("torch", "ember")
    assert ember.zeros(2, dtype=getattr(ember, name)).type() == \
        torch.zeros(2, dtype=getattr(torch, name)).type()  # torch's spelling, as code compares it
    if name == "uint64":
        big = [2 ** 64 - 1, 5]
        assert repr(ember.tensor(big, dtype=ember.uint64)) == \
            repr(torch.tensor(big, dtype=torch.uint64)).replace("torch", "ember")


@pytest.mark.parametrize("name", NEW_NAMES)
def test_tensors_of_the_new_dtypes_move_view_and_copy(name):
    d = getattr(ember, name)
    x = ember.arange(6.0).to(d).reshape(2, 3)
    t = torch.arange(6.0).to(getattr(torch, name)).reshape(2, 3)
    assert x.dtype is d and x.element_size() == t.element_size()
    assert _floats(x.t().contiguous()) == _floats(t.t().contiguous())
    assert x.view(ember.uint8).tolist() == t.view(torch.uint8).tolist()
    assert _floats(ember.cat([x, x.clone()])) == _floats(torch.cat([t, t.clone()]))
    assert _floats(x[1]) == _floats(t[1])
    assert x.to(d) is x and x.to(ember.float32).dtype is ember.float32
    y = ember.empty(2, 3, dtype=d)
    y.copy_(x)
    assert _floats(y) == _floats(t)


def test_uint_tensors_from_numpy():
    for name in ("uint16", "uint32", "uint64"):
        a = np.arange(3, dtype=name)
        assert ember.from_numpy(a).dtype is getattr(ember, name)
        assert ember.tensor(a).tolist() == torch.tensor(a).tolist()
    with pytest.raises(TypeError, match="can't convert np.ndarray of type object"):
        ember.from_numpy(np.array([object()]))


@pytest.mark.parametrize("name", OBJECT_NAMES)
def test_dtype_objects_make_no_tensors(name):
    d = getattr(ember, name)
    for make in (lambda: ember.zeros(2, dtype=d), lambda: ember.tensor([1, 0], dtype=d),
                 lambda: ember.zeros(2).to(d), lambda: ember.empty(3, dtype=d)):
        with pytest.raises(NotImplementedError, match=f"no tensors of dtype ember.{name}"):
            make()
