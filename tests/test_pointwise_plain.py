"""Behaviour of the pointwise family that the op table cannot check: in-place semantics
(versions, failures that leave the tensor unchanged, gradients through in-place ops), error
types and messages, result dtypes of tensor/number mixes, out=, and the comparison operators'
interplay with hashing. Each case runs on ember and on torch and compares."""
import numpy as np
import pytest
import torch

import ember

def _both(fn):
    """fn(lib) on both libraries: (ember's result or exception, torch's result or exception)."""
    out = []
    for lib in (ember, torch):
        try:
            out.append(fn(lib))
        except Exception as e:
            out.append(e)
    return out


def _values(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach()._data)


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


# -- in-place ops: versions, values, dtypes --------------------------------------------------

INPLACE = [
    ("fmod_", lambda lib, x, y: x.fmod_(1.5)),
    ("fmod_tensor", lambda lib, x, y: x.fmod_(y)),
    ("remainder_", lambda lib, x, y: x.remainder_(y)),
    ("floor_divide_", lambda lib, x, y: x.floor_divide_(y)),
    ("atan2_", lambda lib, x, y: x.atan2_(y)),
    ("arctan2_", lambda lib, x, y: x.arctan2_(y)),
    ("hypot_", lambda lib, x, y: x.hypot_(y)),
    ("copysign_", lambda lib, x, y: x.copysign_(y)),
    ("xlogy_", lambda lib, x, y: x.xlogy_(y.abs())),
    ("clamp_", lambda lib, x, y: x.clamp_(-0.5, 0.5)),
    ("clamp_tensor_", lambda lib, x, y: x.clamp_(y, y + 1)),
    ("clip_", lambda lib, x, y: x.clip_(max=0.1)),
    ("clamp_min_", lambda lib, x, y: x.clamp_min_(0.0)),
    ("clamp_max_", lambda lib, x, y: x.clamp_max_(y)),
    ("lerp_", lambda lib, x, y: x.lerp_(y, 0.3)),
    ("lerp_large", lambda lib, x, y: x.lerp_(y, 0.9)),
    ("lerp_tensor", lambda lib, x, y: x.lerp_(y, y.abs())),
    ("addcmul_", lambda lib, x, y: x.addcmul_(y, y, value=-0.5)),
    ("addcdiv_", lambda lib, x, y: x.addcdiv_(y, y.abs() + 1, value=2)),
    ("round_", lambda lib, x, y: x.round_()),
    ("round_decimals", lambda lib, x, y: x.round_(decimals=1)),
    ("logit_", lambda lib, x, y: x.abs_().clamp_(0.1, 0.9).logit_()),
    ("nan_to_num_", lambda lib, x, y: x.div_(0).nan_to_num_(posinf=1.0)),
    ("eq_", lambda lib, x, y: x.eq_(y)),
    ("lt_", lambda lib, x, y: x.lt_(0.2)),
    ("greater_equal_", lambda lib, x, y: x.greater_equal_(y)),
    ("logical_and_", lambda lib, x, y: x.logical_and_(y)),
    ("logical_not_", lambda lib, x, y: x.logical_not_()),
]


def _xy(lib, dtype="float32"):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.uniform(-2, 2, (3, 4)), dtype=getattr(lib, dtype))
    y = lib.tensor(rng.uniform(-2, 2, (4,)), dtype=getattr(lib, dtype))
    return x, y


@pytest.mark.parametrize("name,fn", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_matches_torch_and_bumps_version(name, fn):
    results = []
    for lib in (ember, torch):
        x, y = _xy(lib)
        before = x._version
        out = fn(lib, x, y)
        assert out is x, f"{name} must return self"
        assert x._version > before, f"{name} did not bump the version counter"
        results.append(x)
    e, t = results
    assert _dtype_name(e) == _dtype_name(t)
    np.testing.assert_allclose(_values(e), _values(t), rtol=1e-6, atol=1e-6, equal_nan=True)


BITWISE_INPLACE = [
    ("and", lambda x, y: x.__iand__(y)), ("or", lambda x, y: x.__ior__(y)),
    ("xor", lambda x, y: x.__ixor__(y)), ("lshift", lambda x, y: x.__ilshift__(y)),
    ("rshift", lambda x, y: x.__irshift__(y)), ("bitwise_and_", lambda x, y: x.bitwise_and_(3)),
    ("bitwise_not_", lambda x, y: x.bitwise_not_()),
    ("bitwise_left_shift_", lambda x, y: x.bitwise_left_shift_(y)),
]


@pytest.mark.parametrize("name,fn", BITWISE_INPLACE, ids=[n for n, _ in BITWISE_INPLACE])
def test_bitwise_inplace(name, fn):
    results = []
    for lib in (ember, torch):
        x = lib.tensor([[1, -6, 7, 12], [0, 3, -1, 5]])
        y = lib.tensor([1, 2, 0, 3])
        before = x._version
        assert fn(x, y) is x
        assert x._version > before
        results.append(x)
    np.testing.assert_array_equal(_values(results[0]), _values(results[1]))


def test_augmented_operators_keep_identity():
    x = ember.tensor([1, 2, 3])
    ident = id(x)
    x &= 1
    x |= 4
    x ^= 1
    x <<= 1
    x >>= 1
    x %= 3
    x //= 2
    assert id(x) == ident and x._version == 7
    t = torch.tensor([1, 2, 3])
    t &= 1
    t |= 4
    t ^= 1
    t <<= 1
    t >>= 1
    t %= 3
    t //= 2
    assert x.tolist() == t.tolist()


# -- failed in-place ops: torch's error, tensor unchanged --------------------------------------

FAILING_INPLACE = [
    ("add_float_to_int", "int64", lambda lib, x: x.add_(1.5)),
    ("add_bad_broadcast", "float32", lambda lib, x: x.add_(lib.ones(2, 3, 4))),
    ("mul_grows", "float32", lambda lib, x: x.mul_(lib.ones(2, 1, 1))),
    ("fmod_float_to_int", "int64", lambda lib, x: x.fmod_(1.5)),
    ("fmod_grows", "float32", lambda lib, x: x.fmod_(lib.ones(2, 1, 1))),
    ("fmod_int_zero", "int64", lambda lib, x: x.fmod_(0)),
    ("remainder_int_zero", "int64", lambda lib, x: x.remainder_(lib.zeros(4, dtype=lib.int64))),
    ("atan2_int", "int64", lambda lib, x: x.atan2_(x)),
    ("hypot_int", "int64", lambda lib, x: x.hypot_(x)),
    ("clamp_float_into_int", "int64", lambda lib, x: x.clamp_(lib.tensor([0.5, 1.0, 1.5, 2.0]))),
    ("clamp_grows", "float32", lambda lib, x: x.clamp_(lib.zeros(2, 3, 4), lib.ones(3, 4))),
    ("clamp_max_grows", "float32", lambda lib, x: x.clamp_(lib.zeros(3, 4), lib.ones(2, 3, 4))),
    ("clamp_no_bounds", "float32", lambda lib, x: x.clamp_()),
    ("lerp_grows", "float32", lambda lib, x: x.lerp_(lib.ones(2, 3, 4), 0.5)),
    ("lerp_dtype", "float32", lambda lib, x: x.lerp_(lib.ones(3, 4, dtype=lib.float64), 0.5)),
    ("addcmul_float_into_int", "int64", lambda lib, x: x.addcmul_(lib.ones(4), lib.ones(4))),
    ("addcmul_grows", "float32", lambda lib, x: x.addcmul_(lib.ones(2, 1, 1), lib.ones(4))),
    ("addcdiv_int", "float32", lambda lib, x: x.addcdiv_(lib.ones(4, dtype=lib.int64),
                                                          lib.ones(4, dtype=lib.int64))),
    ("round_decimals_int", "int64", lambda lib, x: x.round_(decimals=1)),
    ("logit_int", "int64", lambda lib, x: x.logit_()),
    ("eq_grows", "float32", lambda lib, x: x.eq_(lib.ones(2, 3, 4))),
    ("and_float", "float32", lambda lib, x: x.__iand__(1)),
    ("lshift_float", "float32", lambda lib, x: x.bitwise_left_shift_(1)),
    ("bitwise_not_float", "float32", lambda lib, x: x.bitwise_not_()),
    ("and_grows", "int64", lambda lib, x: x.bitwise_and_(lib.ones(2, 3, 4, dtype=lib.int64))),
    ("logical_and_grows", "int64", lambda lib, x: x.logical_and_(lib.ones(2, 3, 4))),
    ("floor_divide_bool", "bool", lambda lib, x: x.floor_divide_(x)),
]


@pytest.mark.parametrize("name,dtype,fn", FAILING_INPLACE, ids=[c[0] for c in FAILING_INPLACE])
def test_failed_inplace_raises_torch_error_and_leaves_tensor(name, dtype, fn):
    errors = []
    for lib in (ember, torch):
        x = lib.tensor(np.arange(-5, 7).reshape(3, 4), dtype=getattr(lib, dtype))
        before = _values(x).copy()
        with pytest.raises(Exception) as info:
            fn(lib, x)
        np.testing.assert_array_equal(_values(x), before, err_msg=f"{name} changed the tensor")
        errors.append(info.value)
    e, t = errors
    assert type(e) is type(t), f"{name}: ember raised {type(e).__name__}: {e}; torch {type(t).__name__}: {t}"
    assert str(e) == str(t)


def test_inplace_on_leaf_requiring_grad_refused():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.clamp_(0, 1)
    with ember.no_grad():
        x.clamp_(0, 0.5)
    assert x.tolist() == [0.5, 0.5, 0.5] and x._version == 1


# -- gradients through in-place ops --------------------------------------------------------------

GRAD_INPLACE = [
    ("clamp_", lambda y, w: y.clamp_(-0.5, 0.5)),
    ("clamp_tensor_", lambda y, w: y.clamp_(min=w)),
    ("lerp_", lambda y, w: y.lerp_(w, 0.25)),
    ("lerp_tensor_", lambda y, w: y.lerp_(w * 2, w.sigmoid())),
    ("addcmul_", lambda y, w: y.addcmul_(w, w, value=3)),
    ("addcdiv_", lambda y, w: y.addcdiv_(w, w * w + 1, value=-2)),
    ("fmod_", lambda y, w: y.fmod_(w.abs() + 0.5)),
    ("hypot_", lambda y, w: y.hypot_(w)),
    ("atan2_", lambda y, w: y.atan2_(w)),
    ("logit_", lambda y, w: y.mul_(0.2).add_(0.5).logit_(eps=0.3)),
    ("round_", lambda y, w: y.mul_(w).round_()),
    ("copysign_", lambda y, w: y.copysign_(w)),
    ("eq_", lambda y, w: (y.eq_(w), y.add_(w))[1]),
]


@pytest.mark.parametrize("name,fn", GRAD_INPLACE, ids=[n for n, _ in GRAD_INPLACE])
def test_gradient_through_inplace(name, fn):
    grads = []
    for lib in (ember, torch):
        rng = np.random.default_rng(3)
        x = lib.tensor(rng.uniform(-2, 2, (3, 4)), dtype=lib.float64, requires_grad=True)
        w = lib.tensor(rng.uniform(-2, 2, (4,)), dtype=lib.float64, requires_grad=True)
        y = x * 1
        out = fn(y, w)
        assert out is y
        (y * lib.arange(12, dtype=lib.float64).reshape(3, 4)).sum().backward()
        grads.append((x.grad, w.grad, y.grad_fn.name()))
    (ex, ew, en), (tx, tw, tn) = grads
    assert en == tn
    np.testing.assert_allclose(_values(ex), _values(tx), atol=1e-12)
    if tw is None:
        assert ew is None or not np.any(_values(ew))
    else:
        np.testing.assert_allclose(_values(ew), _values(tw), atol=1e-12)


def test_saved_tensor_modified_inplace_is_detected():
    x = ember.tensor([0.5, 2.0], requires_grad=True)
    y = x * 1
    z = ember.hypot(y, y)
    y.clamp_(0, 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# -- result dtypes of tensor and number mixes --------------------------------------------------

DTYPES = ("bool", "uint8", "int32", "int64", "float16", "float32", "float64")
NUMBERS = (True, 3, -2, 2.5)

DTYPE_OPS = {
    "fmod": lambda lib, x, s: lib.fmod(x, s),
    "remainder": lambda lib, x, s: lib.remainder(x, s),
    "floor_divide": lambda lib, x, s: lib.floor_divide(x, s),
    "copysign": lambda lib, x, s: lib.copysign(x, s),
    "xlogy": lambda lib, x, s: lib.xlogy(x, s),
    "xlogy_number_first": lambda lib, x, s: lib.xlogy(s, x),
    "remainder_number_first": lambda lib, x, s: lib.remainder(s, x),
    "clamp": lambda lib, x, s: lib.clamp(x, min=s),
    "clamp_both": lambda lib, x, s: lib.clamp(x, s, 5),
    "eq": lambda lib, x, s: lib.eq(x, s),
    "lt": lambda lib, x, s: x < s,
    "bitwise_and": lambda lib, x, s: x & s,
    "bitwise_or_reflected": lambda lib, x, s: s | x,
    "lshift": lambda lib, x, s: x << s,
    "rshift_reflected": lambda lib, x, s: s >> x,
    "round": lambda lib, x, s: lib.round(x),
    "logit": lambda lib, x, s: lib.logit(x),
    "nan_to_num": lambda lib, x, s: lib.nan_to_num(x),
    "isnan": lambda lib, x, s: lib.isnan(x),
    "signbit": lambda lib, x, s: lib.signbit(x),
    "logical_xor": lambda lib, x, s: lib.logical_xor(x, x),
    "addcmul": lambda lib, x, s: lib.addcmul(x, x, x, value=s),
    "addcdiv": lambda lib, x, s: lib.addcdiv(x, x, x, value=s),
    "lerp": lambda lib, x, s: lib.lerp(x, x, s),
}


@pytest.mark.parametrize("op", list(DTYPE_OPS))
def test_result_dtypes_match_torch(op):
    fn = DTYPE_OPS[op]
    checked = 0
    for dtype in DTYPES:
        for number in NUMBERS:
            def call(lib):
                x = lib.tensor([[1, 2], [3, 4]]).to(getattr(lib, dtype))
                return fn(lib, x, number)
            e, t = _both(call)
            where = f"{op}({dtype}, {number!r})"
            if isinstance(t, Exception):
                assert isinstance(e, Exception), f"{where}: torch raised {t!r}, ember gave {e}"
                assert type(e) is type(t), f"{where}: ember raised {e!r}, torch {t!r}"
                continue
            assert not isinstance(e, Exception), f"{where}: ember raised {e!r}"
            assert _dtype_name(e) == _dtype_name(t), f"{where}: {e.dtype} != torch {t.dtype}"
            np.testing.assert_allclose(_values(e).astype(np.float64), _values(t).astype(np.float64),
                                       rtol=1e-3, equal_nan=True, err_msg=where)
            checked += 1
    assert checked > 0


# -- errors ------------------------------------------------------------------------------------

ERRORS = [
    ("clamp_no_bounds", lambda lib: lib.clamp(lib.ones(3))),
    ("clamp_mixed", lambda lib: lib.clamp(lib.ones(3), 0, lib.ones(3))),
    ("bitwise_float", lambda lib: lib.bitwise_and(lib.ones(3), 1)),
    ("bitwise_float_bool", lambda lib: lib.ones(3) & lib.ones(3, dtype=lib.bool)),
    ("shift_float", lambda lib: lib.ones(3) << 1),
    ("shift_bool", lambda lib: lib.ones(3, dtype=lib.bool) >> lib.ones(3, dtype=lib.bool)),
    ("invert_float", lambda lib: ~lib.ones(3)),
    ("bitwise_not_float", lambda lib: lib.bitwise_not(lib.ones(3))),
    ("atan2_number", lambda lib: lib.atan2(lib.ones(3), 2.0)),
    ("maximum_number", lambda lib: lib.maximum(lib.ones(3), 2)),
    ("hypot_int", lambda lib: lib.hypot(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64))),
    ("logaddexp_int", lambda lib: lib.logaddexp(lib.ones(3, dtype=lib.int32), lib.ones(3, dtype=lib.int32))),
    ("fmod_bool", lambda lib: lib.fmod(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool))),
    ("fmod_int_zero", lambda lib: lib.fmod(lib.ones(3, dtype=lib.int64), 0)),
    ("floor_divide_int_zero", lambda lib: lib.ones(3, dtype=lib.int64) // 0),
    ("remainder_bool", lambda lib: lib.remainder(lib.ones(3, dtype=lib.bool), True)),
    ("lerp_end_dtype", lambda lib: lib.lerp(lib.ones(3), lib.ones(3, dtype=lib.float64), 0.5)),
    ("lerp_weight_dtype", lambda lib: lib.lerp(lib.ones(3), lib.ones(3), lib.ones(3, dtype=lib.int64))),
    ("lerp_int", lambda lib: lib.lerp(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64), 2)),
    ("addcmul_bool", lambda lib: lib.addcmul(*[lib.ones(3, dtype=lib.bool)] * 3)),
    ("addcdiv_int", lambda lib: lib.addcdiv(*[lib.ones(3, dtype=lib.int64)] * 3)),
    ("round_decimals_int", lambda lib: lib.round(lib.ones(3, dtype=lib.int64), decimals=2)),
    ("isclose_dtypes", lambda lib: lib.isclose(lib.ones(3), lib.ones(3, dtype=lib.int64))),
    ("logical_xor_number", lambda lib: lib.logical_xor(lib.ones(3), 0)),
    ("equal_number", lambda lib: lib.equal(lib.ones(3), 1)),
    ("broadcast", lambda lib: lib.maximum(lib.ones(3), lib.ones(2))),
    ("broadcast_compare", lambda lib: lib.ones(3) < lib.ones(2)),
    ("broadcast_clamp", lambda lib: lib.clamp(lib.ones(3), lib.ones(2), lib.ones(3))),
    ("broadcast_addcmul", lambda lib: lib.addcmul(lib.ones(3), lib.ones(2, 3), lib.ones(4))),
    ("compare_none_order", lambda lib: lib.ones(3) < None),
    ("isposinf_list", lambda lib: lib.isposinf([1.0])),
    ("isneginf_list", lambda lib: lib.isneginf([1.0])),
    ("isposinf_complex", lambda lib: lib.isposinf(lib.ones(3, dtype=lib.complex64))),
    ("ldexp_float_exponent_list", lambda lib: lib.ldexp(lib.ones(3), [1, 2, 3])),
    ("ldexp_broadcast", lambda lib: lib.ldexp(lib.ones(3), lib.ones(2, dtype=lib.int64))),
    ("float_power_broadcast", lambda lib: lib.float_power(lib.ones(3), lib.ones(2))),
    ("addcmul_int_overflow", lambda lib: lib.addcmul(*[lib.ones(3, dtype=lib.int8)] * 3, value=1000)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[n for n, _ in ERRORS])
def test_errors_match_torch(name, fn):
    e, t = _both(fn)
    assert isinstance(t, Exception), f"torch did not raise for {name}"
    assert isinstance(e, Exception), f"ember did not raise for {name}, gave {e}"
    assert type(e) is type(t), f"{name}: ember {type(e).__name__}: {e}; torch {type(t).__name__}: {t}"
    if not isinstance(t, TypeError) or "position" in str(t) or "only implemented" in str(t):
        assert str(e) == str(t)


def test_floor_divide_has_no_derivative():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        y = lib.floor_divide(x, 2)
        assert type(y.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
            y.sum().backward()


# -- comparison operators, hashing, equal ------------------------------------------------------

def test_eq_returns_tensor_and_hash_is_identity():
    a = ember.tensor([1.0, 2.0])
    b = ember.tensor([1.0, 3.0])
    assert isinstance(a == b, ember.Tensor)
    assert (a == b).tolist() == [True, False] and (a != b).tolist() == [False, True]
    assert hash(a) == id(a) and hash(a) != hash(b)
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b"
    assert a in {a} and len({a, b}) == 2
    assert (a == None) is False and (a != "x") is True  # noqa: E711


def test_equal_returns_bool():
    assert ember.equal(ember.tensor([1, 2]), ember.tensor([1.0, 2.0])) is True
    assert ember.tensor([1, 2]).equal(ember.tensor([1, 3])) is False
    assert ember.equal(ember.ones(2, 3), ember.ones(3)) is False


def test_allclose_returns_bool():
    a = ember.tensor([1.0, float("nan")])
    assert ember.allclose(a, a) is False
    assert ember.allclose(a, a, equal_nan=True) is True


# -- out= --------------------------------------------------------------------------------------

OUT_CASES = [
    ("maximum", lambda lib, out: lib.maximum(lib.tensor([1.0, 5.0]), lib.tensor([3.0, 2.0]), out=out), "float32"),
    ("eq_into_float", lambda lib, out: lib.eq(lib.tensor([1.0, 5.0]), 5.0, out=out), "float32"),
    ("clamp", lambda lib, out: lib.clamp(lib.tensor([1.0, 5.0]), 2, 3, out=out), "float32"),
    ("addcdiv", lambda lib, out: lib.addcdiv(lib.ones(2), lib.ones(2), lib.tensor([2.0, 4.0]), out=out), "float32"),
    ("isposinf", lambda lib, out: lib.isposinf(lib.tensor([1.0, float("inf")]), out=out), "bool"),
    ("bitwise_xor", lambda lib, out: lib.bitwise_xor(lib.tensor([1, 5]), 3, out=out), "int64"),
    ("logical_not", lambda lib, out: lib.logical_not(lib.tensor([1, 0]), out=out), "int32"),
    ("round", lambda lib, out: lib.round(lib.tensor([1.26, 5.5]), decimals=1, out=out), "float32"),
    ("lerp", lambda lib, out: lib.lerp(lib.zeros(2), lib.ones(2), 0.25, out=out), "float32"),
]


@pytest.mark.parametrize("name,fn,dtype", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_out(name, fn, dtype):
    results = []
    for lib in (ember, torch):
        out = lib.empty(2, dtype=getattr(lib, dtype))
        res = fn(lib, out)
        assert res is out
        results.append(out)
    e, t = results
    assert _dtype_name(e) == _dtype_name(t)
    np.testing.assert_allclose(_values(e).astype(np.float64), _values(t).astype(np.float64), rtol=1e-6)


def test_out_refuses_autograd():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.clamp(x, 0, 1, out=ember.empty(2))


# -- no gradient leaks through where's unselected branch beyond torch's own ----------------------

def test_where_gradient_matches_torch_in_unselected_branch():
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([-1.0, 0.0, 4.0], requires_grad=True)
        y = lib.where(x > 0, x, lib.zeros(3))
        z = lib.where(x > 0, x.clamp(min=1e-6).sqrt(), x * 0)
        (y.sum() + z.sum()).backward()
        grads.append(x.grad)
    np.testing.assert_allclose(_values(grads[0]), _values(grads[1]))
    assert not np.isnan(_values(grads[0])).any()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [3, 3.0, -2, -0.5])
def test_pow_small_exponents_are_torchs_bits(exponent, dtype):
    """torch computes these exponents by multiplication (and sqrt); so does ember, not by
    NumPy's scalar power loop."""
    values = np.concatenate([np.random.default_rng(0).standard_normal(1000) * 10,
                             [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 1e30, -1e-30]])
    x = values.astype(dtype)
    got = ember.tensor(x).pow(exponent).numpy()
    want = torch.tensor(x).pow(exponent).numpy()
    np.testing.assert_array_equal(got, want)
    g_ember, g_torch = (lib.tensor(x[:1000], requires_grad=True) for lib in (ember, torch))
    for t in (g_ember, g_torch):
        t.pow(exponent).sum().backward()
    np.testing.assert_allclose(g_ember.grad.numpy(), g_torch.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("exponent_dtype", ["int8", "int32", "int64", "uint8"])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_ldexp_of_an_integer_exponent_rounds_once_as_torch(dtype, exponent_dtype, requires_grad):
    """ldexp of a float tensor and integer exponents at the edges (results past the largest value, among
    and below the subnormals, of 0, infinity and NaN): torch's bits and node; the input's gradient is
    grad * 2**other (torch's is 0 for a negative exponent: compared where none is negative)."""
    rng = np.random.default_rng(17)
    x = rng.standard_normal((4, 6)).astype(dtype)
    x[0, :4] = [0.0, np.inf, np.nan, -0.0]
    low, high = np.iinfo(exponent_dtype).min, np.iinfo(exponent_dtype).max
    exponents = np.clip([-1100, -1075, -150, -149, 128, 1100], low, high).astype(exponent_dtype)
    results = []
    for lib in (ember, torch):
        base = lib.tensor(x, requires_grad=requires_grad)
        y = lib.ldexp(base, lib.tensor(exponents))
        results.append((y.detach().numpy(), type(y.grad_fn).__name__ if requires_grad else None))
    np.testing.assert_array_equal(results[0][0].view(f"u{x.itemsize}"), results[1][0].view(f"u{x.itemsize}"))
    assert results[0][1] == results[1][1]
    if requires_grad:
        grads = []
        small = np.array([0, 1, 2, 3, 4, 5], exponent_dtype)
        for lib in (ember, torch):
            base = lib.tensor(x[1:], requires_grad=True)
            lib.ldexp(base, lib.tensor(small)).sum().backward()
            grads.append(base.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("exponent_dtype", ["int32", "int64"])
def test_ldexp_of_many_float32_elements_on_its_loop_rounds_once_as_torch(exponent_dtype):
    """ldexp of a float32 tensor large enough for its loop (exponents far past float32's range, specials,
    a broadcast row of exponents): NumPy's ldexp's bits (one rounding) and torch's."""
    from ember._backend import openmp_kernels
    rng = np.random.default_rng(29)
    n = 2 * openmp_kernels.LDEXP_LOOP_MIN_ELEMENTS
    x = (rng.standard_normal((2, n)) * 10.0 ** rng.integers(-30, 30, (2, n))).astype(np.float32)
    x[0, :6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.5e-45]
    exponents = rng.integers(-1200, 1200, (2, n)).astype(exponent_dtype)
    exponents[0, :12] = [2000, -2000, 2000, -2000, 5, 1, -150, -149, 127, 128, -126, -127]
    for e in (exponents, exponents[0], exponents[:, :1], exponents[:1, :1], exponents[0, 0]):   # (a row, a column, one)
        got = ember.ldexp(ember.tensor(x), ember.tensor(e)).numpy()
        np.testing.assert_array_equal(got.view(np.uint32), np.ldexp(x, e).view(np.uint32))
        want = torch.ldexp(torch.tensor(x), torch.tensor(e)).numpy()
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_addcmul_of_integers_is_torchs(dtype):
    """addcmul of integer tensors of one dtype (the arrays' steps, wrapping as torch's) with values the dtype
    holds, negative ones into unsigned tensors (which wrap), and torch's error for a value it does not hold."""
    rng = np.random.default_rng(32)
    for value in (1, 3, -2, 100, 127, 1 << 20):
        s, a, b = (rng.integers(-5, 100, shape).astype(dtype) for shape in ((3, 4), (4,), (3, 4)))
        results = _both(lambda lib: lib.addcmul(lib.tensor(s), lib.tensor(a), lib.tensor(b), value=value))
        if isinstance(results[1], Exception):
            assert type(results[0]) is type(results[1]) and str(results[0]) == str(results[1])
        else:
            assert str(results[0].dtype).split(".")[-1] == str(results[1].dtype).split(".")[-1]
            np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())
