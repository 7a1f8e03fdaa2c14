"""Type promotion against torch, exhaustively: promote_types, can_cast, result_type over
tensors of different dimensions and Python scalars, the dtypes of arithmetic results, and the
default dtype."""
import itertools

import pytest
import torch

import ember

DTYPES = ("float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32",
          "int64", "bool", "complex64", "complex128")
PAIRS = list(itertools.product(DTYPES, DTYPES))
SCALARS = [True, False, 2, -3, 2 ** 40, 2.5, -0.0, 1 + 2j]
# (dimensions of a, dimensions of b): dimensioned tensors take part in promotion before
# zero-dimensional ones
DIMS = [(1, 1), (0, 1), (1, 0), (0, 0), (2, 1)]


def name(dtype):
    return str(dtype).split(".")[-1]


def expected_name(dtype):
    """torch's dtype name, with the one dtype ember has no counterpart for mapped: torch gives
    complex32 (ComplexHalf) where float16 meets a complex number; ember gives complex64."""
    n = name(dtype)
    return "complex64" if n == "complex32" else n


def tensor(lib, dtype, ndim):
    return lib.ones((2,) * ndim, dtype=getattr(lib, dtype))


@pytest.fixture
def default_dtype():
    """Set the default dtype in both libraries for one test."""
    def set_both(dtype):
        for lib in (torch, ember):
            lib.set_default_dtype(getattr(lib, dtype))
    yield set_both
    set_both("float32")


@pytest.mark.parametrize("a,b", PAIRS)
def test_promote_types(a, b):
    expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert name(ember.promote_types(getattr(ember, a), getattr(ember, b))) == name(expected)


@pytest.mark.parametrize("a,b", PAIRS)
def test_can_cast(a, b):
    assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == \
        torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("dims", DIMS, ids=str)
@pytest.mark.parametrize("a,b", PAIRS)
def test_result_type_of_tensors(a, b, dims):
    na, nb = dims
    expected = torch.result_type(tensor(torch, a, na), tensor(torch, b, nb))
    assert name(ember.result_type(tensor(ember, a, na), tensor(ember, b, nb))) == expected_name(expected)


@pytest.mark.parametrize("ndim", [0, 1])
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
def test_result_type_with_python_scalar(dtype, scalar, ndim):
    expected = torch.result_type(tensor(torch, dtype, ndim), scalar)
    assert name(ember.result_type(tensor(ember, dtype, ndim), scalar)) == expected_name(expected)
    expected = torch.result_type(scalar, tensor(torch, dtype, ndim))
    assert name(ember.result_type(scalar, tensor(ember, dtype, ndim))) == expected_name(expected)


OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}


def outcome(fn):
    try:
        return expected_name(fn().dtype)
    except NotImplementedError:  # torch has no ComplexHalf division on the CPU
        return "not implemented"
    except RuntimeError as exc:
        return str(exc).replace("torch", "ember")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dims", DIMS[:3], ids=str)
@pytest.mark.parametrize("a,b", PAIRS)
def test_arithmetic_result_dtype(a, b, dims, op):
    na, nb = dims
    fn = OPS[op]
    expected = outcome(lambda: fn(tensor(torch, a, na), tensor(torch, b, nb)))
    if expected == "not implemented":
        pytest.skip("torch does not implement this for ComplexHalf")
    assert outcome(lambda: fn(tensor(ember, a, na), tensor(ember, b, nb))) == expected


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("scalar", [True, 2, 2.5, 1 + 2j], ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
def test_arithmetic_with_scalar_result_dtype(dtype, scalar, op):
    fn = OPS[op]
    for ndim in (0, 1):
        for args in ((True, False), (False, True)):  # tensor op scalar, scalar op tensor
            def run(lib):
                t = tensor(lib, dtype, ndim)
                return fn(t, scalar) if args[0] else fn(scalar, t)
            expected = outcome(lambda: run(torch))
            if expected == "not implemented":
                continue
            assert outcome(lambda: run(ember)) == expected


def test_integer_true_division_gives_default_float(default_dtype):
    assert (ember.tensor([1, 2]) / ember.tensor([2, 4])).dtype is ember.float32
    assert (ember.tensor([1, 2]) / ember.tensor([2, 4])).tolist() == [0.5, 0.5]
    default_dtype("float64")
    assert (ember.tensor([1, 2]) / ember.tensor([2, 4])).dtype is ember.float64
    assert (ember.tensor([True]) / 2).dtype is ember.float64


DEFAULT_DTYPE_CASES = {
    "tensor-float": lambda l: l.tensor(2.5),
    "tensor-int": lambda l: l.tensor(2),
    "tensor-complex": lambda l: l.tensor(1 + 2j),
    "tensor-mixed-list": lambda l: l.tensor([1, 2.5]),
    "int-div-int": lambda l: l.tensor([1, 2]) / l.tensor([2, 2]),
    "int-times-float": lambda l: l.tensor([1, 2]) * 2.5,
    "int-plus-complex": lambda l: l.tensor([1, 2]) + 1j,
    "float32-times-complex": lambda l: l.tensor([1.0, 2.0], dtype=l.float32) * 1j,
    "float64-times-float": lambda l: l.tensor([1.0], dtype=l.float64) * 2.5,
    "float16-times-float": lambda l: l.tensor([1.0], dtype=l.float16) * 2.5,
    "bool-plus-float": lambda l: l.tensor([True]) + 1.5,
    "zeros": lambda l: l.zeros(2),
    "legacy-constructor": lambda l: l.Tensor([1, 2]),
    "result-type-int-float": lambda l: l.result_type(l.tensor([1]), 2.5),
    "result-type-int-complex": lambda l: l.result_type(l.tensor([1]), 2j),
    "get-default-dtype": lambda l: l.get_default_dtype(),
}


@pytest.mark.parametrize("default", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", DEFAULT_DTYPE_CASES)
def test_default_dtype_effects(case, default, default_dtype):
    if default == "bfloat16" and "complex" in case:
        pytest.skip("torch has no complex counterpart of bfloat16 (ember uses complex64)")
    default_dtype(default)
    fn = DEFAULT_DTYPE_CASES[case]
    result = fn(torch)
    result = result if isinstance(result, torch.dtype) else result.dtype
    got = fn(ember)
    got = got if isinstance(got, ember.dtype) else got.dtype
    assert name(got) == expected_name(result)


@pytest.mark.parametrize("bad", ["int64", "complex64", "bool"])
def test_set_default_dtype_refuses_non_float(bad):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(TypeError) as info:
            lib.set_default_dtype(getattr(lib, bad))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert ember.get_default_dtype() is ember.float32


@pytest.mark.parametrize("bad", ["x", float, None])
def test_set_default_dtype_refuses_non_dtype(bad):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(TypeError) as info:
            lib.set_default_dtype(bad)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_dtype_properties_match_torch():
    for d in DTYPES:
        t, e = getattr(torch, d), getattr(ember, d)
        assert (e.is_floating_point, e.is_complex, e.is_signed, e.itemsize) == \
            (t.is_floating_point, t.is_complex, t.is_signed, t.itemsize), d
        assert repr(e) == repr(t).replace("torch", "ember")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_matches_torch(dtype):
    t, e = torch.finfo(getattr(torch, dtype)), ember.finfo(getattr(ember, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(e, field) == getattr(t, field), field


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(dtype):
    t, e = torch.iinfo(getattr(torch, dtype)), ember.iinfo(getattr(ember, dtype))
    assert (e.bits, e.min, e.max) == (t.bits, t.min, t.max)


@pytest.mark.parametrize("build", [
    lambda l: l.finfo(l.float16), lambda l: l.finfo(l.bfloat16), lambda l: l.finfo(),
    lambda l: l.finfo(l.complex128), lambda l: l.iinfo(l.int64), lambda l: l.iinfo(l.uint8),
])
def test_finfo_iinfo_repr(build):
    assert repr(build(ember)) == repr(build(torch))


@pytest.mark.parametrize("build", [
    lambda l: l.finfo(l.int64), lambda l: l.iinfo(l.float32), lambda l: l.iinfo(l.bool),
])
def test_finfo_iinfo_errors(build):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(TypeError) as info:
            build(lib)
        messages.append(str(info.value).replace("torch", "ember"))
    assert messages[0] == messages[1]
