"""The float32 elementwise loops of ``_backend/vector_math.py`` (libmvec's vector functions on
OpenMP loops): each op on inputs large enough to take its loop, against torch and against
float64, with NaN, infinities, signed zeros, subnormals and huge arguments; the gradient loop;
and NumPy's path where the loops do not apply or cannot be built."""
import numpy as np
import pytest
import torch

import ember
from ember._backend import choice, vector_math

N = 1 << 20   # at or above every loop's size rule

# (the Python paths the loops are called from: the compiled functions take small cases themselves)
pytestmark = pytest.mark.usefixtures("python_functions")

needs_loops = pytest.mark.skipif(
    not vector_math.available() or not choice.enabled(choice.ONEDNN),
    reason="no C compiler or libmvec, or oneDNN off (the loops run where it does): no vector-math loops here")


# op -> (ember function, torch function, the inputs' range)
OPS = {
    "exp": (ember.exp, torch.exp, 100.0),
    "sin": (ember.sin, torch.sin, 60.0),
    "cos": (ember.cos, torch.cos, 60.0),
    "exp2": (ember.exp2, torch.exp2, 140.0),
    "log1p": (ember.log1p, torch.log1p, 1e6),
    "erf": (ember.erf, torch.erf, 6.0),
    "erfc": (ember.erfc, torch.erfc, 12.0),
    "erfinv": (ember.erfinv, torch.erfinv, 1.0),
    "sqrt": (ember.sqrt, torch.sqrt, 1e6),
    "rsqrt": (ember.rsqrt, torch.rsqrt, 1e6),
    "sigmoid": (ember.sigmoid, torch.sigmoid, 120.0),
    "sign": (ember.sign, torch.sign, 10.0),
    "sgn": (ember.sgn, torch.sgn, 10.0),
    "frac": (ember.frac, torch.frac, 1e4),
    "square": (lambda t: t.pow(2), lambda t: t.pow(2), 1e20),
    "deg2rad": (ember.deg2rad, torch.deg2rad, 1e4),
}

# the IEEE operations and selects, which give NumPy's bits
EXACT = {"sqrt", "rsqrt", "sign", "sgn", "frac", "square", "deg2rad"}


def _inputs(spread, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.uniform(-1, 1, N) * spread).astype(np.float32)
    x[:2000] = (rng.uniform(-1, 1, 2000) * 4).astype(np.float32)   # where the functions bend
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-39, 1.0, -1.0, 0.5,
                3e38, -3e38, 1e5, -1e5, 88.7, -88.7, 103.0, -103.0, 127.5, -150.0]
    x[2000:2000 + len(specials)] = specials
    return x


def _ulps_from_exact(got, exact):
    """Each result's distance from the float64 ``exact`` in units of the float32 result's last
    place (where both are finite; in subnormal results, of the smallest normal's)."""
    finite = np.isfinite(got) & np.isfinite(exact)
    magnitude = np.maximum(np.abs(exact[finite]), np.finfo(np.float32).tiny).astype(np.float32)
    spacing = np.spacing(magnitude).astype(np.float64)
    return np.abs(got[finite].astype(np.float64) - exact[finite]) / spacing


@needs_loops
@pytest.mark.parametrize("op", sorted(OPS))
def test_ops_on_the_vector_math_loops_match_torch(op, spy):
    ember_fn, torch_fn, spread = OPS[op]
    x = _inputs(spread)
    kernel = "square" if op == "square" else ("sign" if op == "sgn" else op)
    taken = spy(vector_math, "unary")
    with choice.only(choice.ONEDNN):
        got = ember_fn(ember.tensor(x)).numpy()
    assert taken == [kernel]
    want = torch_fn(torch.from_numpy(x)).numpy()
    exact = torch_fn(torch.from_numpy(x).double()).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # against torch's float64 values rounded to float32: torch's own float32 cos, at 2 threads,
    # was seen off by up to 1.5e-4 over half of these inputs in about 1 run in 20 (ember's exact)
    with np.errstate(over="ignore"):
        rounded = exact.astype(np.float32)
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(rounded), equal_nan=True)
    if op in EXACT:
        with choice.only(choice.NUMPY):
            np.testing.assert_array_equal(got, ember_fn(ember.tensor(x)).numpy())
    else:   # within libmvec's bound of 4 ulp from the exact result (torch's SLEEF: 1 ulp)
        assert _ulps_from_exact(got, exact).max() <= max(4, _ulps_from_exact(want, exact).max())


@needs_loops
def test_sigmoid_gradient_on_the_loop_rounds_as_the_formula_on_arrays():
    x = _inputs(30.0)
    g = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    y = 1 / (1 + np.exp(-x.astype(np.float64)))
    y = y.astype(np.float32)
    got = vector_math.gradient("sigmoid", g, y)
    np.testing.assert_array_equal(got, g * y * (1 - y))
    xt = ember.tensor(x, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    ember.sigmoid(xt).backward(ember.tensor(g))
    torch.sigmoid(tt).backward(torch.from_numpy(g))
    torch.testing.assert_close(torch.from_numpy(xt.grad.numpy()), tt.grad, equal_nan=True)


@needs_loops
def test_abs_gradient_on_the_loop_is_the_formula_on_arrays_and_torch_s():
    """g * sign(x) with torch's sign: 0 at 0, -0.0 and NaN (an infinite g there gives NaN)."""
    x = _inputs(30.0)
    x[:5] = [0.0, -0.0, np.nan, np.inf, -np.inf]
    g = np.random.default_rng(2).standard_normal(N).astype(np.float32)
    g[:3] = np.inf
    got = vector_math.gradient("abs", g, x)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, g * np.subtract(x > 0, x < 0, dtype=np.float32))
    xt = ember.tensor(x, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    ember.abs(xt).backward(ember.tensor(g))
    torch.abs(tt).backward(torch.from_numpy(g))
    np.testing.assert_array_equal(xt.grad.numpy(), tt.grad.numpy())


@needs_loops
@pytest.mark.parametrize("layout", ["channels_last", "transposed"])
def test_the_loops_keep_a_dense_layout(layout):
    x = _inputs(5.0).reshape(16, 64, 32, 32)
    t = ember.tensor(x)
    t = (t.contiguous(memory_format=ember.channels_last) if layout == "channels_last"
         else t.transpose(0, 3))
    got = ember.sin(t)
    assert got.stride() == t.stride()
    torch.testing.assert_close(torch.from_numpy(got.numpy()),
                               torch.sin(torch.from_numpy(t.numpy())), equal_nan=True)


@needs_loops
def test_small_strided_and_float64_inputs_take_numpy(monkeypatch):
    taken = []
    monkeypatch.setattr(vector_math, "unary", lambda name, a: taken.append(name))
    x = ember.tensor(_inputs(5.0))
    ember.sin(x[:100])                        # under the threshold
    ember.sin(ember.tensor(_inputs(5.0)).double())   # float64
    assert taken == []
    strided = ember.sin(x[::2].reshape(-1))   # a strided view: the loop declines
    assert taken == ["sin"]
    np.testing.assert_array_equal(strided.numpy(), np.sin(x.numpy()[::2]))


def test_without_the_loops_numpy_runs(monkeypatch):
    monkeypatch.setattr(vector_math, "_function", lambda name, n_inputs: None)
    x = _inputs(5.0)
    np.testing.assert_array_equal(ember.sin(ember.tensor(x)).numpy(), np.sin(x))
    assert vector_math.unary("sin", x) is None


def test_every_table_op_has_a_loop_in_the_source():
    for op in (*vector_math.UNARY, *vector_math.WITH_PARAMETERS):
        assert f"void {op}_float32(" in vector_math.SOURCE
    for op in vector_math.GRADIENTS:
        assert f"void {op}_backward_float32(" in vector_math.SOURCE
    for op in (*vector_math.BINARY, *vector_math.DIVISIONS):
        for form in ("", "_number", "_rows"):
            assert f"void {op}{form}_float32(" in vector_math.SOURCE
    assert max(vector_math.MIN_ELEMENTS[op] for op in vector_math.UNARY) <= N
    assert max(vector_math.MIN_ELEMENTS[op] for op in vector_math.BINARY) <= 2048 * 1024


def test_every_loop_has_a_size_rule():
    assert set(vector_math.MIN_ELEMENTS) == {*vector_math.UNARY, *vector_math.WITH_PARAMETERS, *vector_math.BINARY,
                                             *vector_math.DIVISIONS, *vector_math.TERNARY,
                                             *vector_math.BINARY_WITH_PARAMETERS,
                                             *(f"{op} backward" for op in vector_math.GRADIENTS)}


@pytest.mark.parametrize("points", ["row", "each sample", "none", "dim 0"])
def test_trapezoid_areas_on_one_loop_over_neighbouring_columns(points, spy):
    """trapezoid of float32 samples along their last dim: the areas on one loop over the rows of
    two neighbouring-column views and the spacing (a row, or one per sample), the bits of NumPy's
    passes, torch's values; along another dim (or spaced by a number) the passes alone."""
    from ember.ops import calculus
    if not vector_math.available():
        pytest.skip("the vector-math loops cannot be built here")
    rng = np.random.default_rng(11)
    y = rng.standard_normal((3, 70, 331)).astype(np.float32)
    y[0, :4, :3] = np.array([np.nan, np.inf, -np.inf], np.float32)
    x = {"row": np.sort(rng.standard_normal(331)), "each sample": np.sort(rng.standard_normal(y.shape), -1),
         "none": None, "dim 0": np.sort(rng.standard_normal(3))}[points]
    x = None if x is None else x.astype(np.float32)
    dim = 0 if points == "dim 0" else -1
    def trapezoid(lib, convert):
        return lib.trapezoid(convert(y), *([] if x is None else [convert(x)]), dim=dim).numpy()
    calls = spy(vector_math, "ternary_row_views")
    got = trapezoid(ember, ember.tensor)
    assert len(calls) == (0 if points in ("none", "dim 0") else 1)
    with choice.only(choice.NUMPY):
        passes = trapezoid(ember, ember.tensor)
    np.testing.assert_array_equal(got, passes)
    if calls:
        spacing = x[..., 1:] - x[..., :-1]
        areas = vector_math.ternary_row_views("trapezoid", spacing.reshape(-1, 330), y.reshape(-1, 331)[:, 1:],
                                              y.reshape(-1, 331)[:, :-1])
        np.testing.assert_array_equal(areas.reshape(3, 70, 330), calculus._areas_in_passes(y, 2, spacing))
    np.testing.assert_allclose(got, trapezoid(torch, torch.from_numpy), rtol=1e-5, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv", "lerp"])
@pytest.mark.parametrize("layout", ["row-major", "transposed"])
def test_ternary_loops_give_the_composites_bits_and_torchs_values(op, layout):
    """addcmul, addcdiv and lerp (a tensor weight) of float32 tensors of one layout on one
    loop: the bits of ember's NumPy composite (the same operations in its order), torch's
    values within a few ulp."""
    from ember.ops import ternary
    if not vector_math.available():
        pytest.skip("the vector-math loops cannot be built here")
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal((200, 300)).astype(np.float32) for _ in range(3)]
    arrays[2][::7, ::5] = np.array([0.5, -0.5, 0.0, np.nan, np.inf], np.float32)[rng.integers(0, 5, (29, 60))]
    if layout == "transposed":
        arrays = [np.ascontiguousarray(a.T).T for a in arrays]
    value = {"addcmul": 0.3, "addcdiv": -1.7, "lerp": None}[op]
    kwargs = {} if value is None else {"value": value}
    e = [ember.from_numpy(a) for a in arrays]
    got = getattr(ember, op)(*e, **kwargs).numpy()
    if op == "lerp":
        composite = ternary._lerp_where(*arrays)
    else:
        composite = ternary._addc_composite("multiply" if op == "addcmul" else "true_divide")(*arrays, value)
    np.testing.assert_array_equal(got, composite)
    on_loop = vector_math.ternary(op, *arrays, () if value is None else (value,))
    np.testing.assert_array_equal(on_loop, composite)   # (the loop itself answers, with those bits)
    want = getattr(torch, op)(*(torch.from_numpy(a) for a in arrays), **kwargs).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# op -> ember/torch function name, and whether the loop gives NumPy's bits (the selects and
# copysign, nextafter) or is within libmvec's bound of torch's (hypot, atan2, logaddexp, logaddexp2)
BINARY_OPS = {"maximum": True, "minimum": True, "copysign": True, "hypot": False, "atan2": False,
              "nextafter": True, "logaddexp": False, "logaddexp2": False}


def _binary_operands(form):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2048, 1024)) * 3).astype(np.float32)
    flat = x.reshape(-1)
    flat[:12] = [np.nan, 1.0, np.inf, -np.inf, 0.0, -0.0, 0.0, -0.0, np.nan, 2.0, 1e-45, -5.0]
    if form == "number":
        return x, 0.5
    if form == "row":
        y = (rng.standard_normal((1, 1024)) * 3).astype(np.float32)
        y[0, :12] = [1.0, np.nan, np.inf, np.inf, -0.0, 0.0, 0.0, -0.0, np.nan, 2.0, -1e-45, -5.0]
        return x, y
    y = (rng.standard_normal((2048, 1024)) * 3).astype(np.float32)
    y.reshape(-1)[:12] = [1.0, np.nan, np.inf, np.inf, -0.0, 0.0, 0.0, -0.0, np.nan, 2.0, -1e-45, -5.0]
    return x, y


@needs_loops
@pytest.mark.parametrize("form", ["same", "number", "row"])
@pytest.mark.parametrize("op", sorted(BINARY_OPS))
def test_binary_ops_on_the_vector_math_loops_match_torch(op, form, spy):
    x, y = _binary_operands(form)
    taken = spy(vector_math, "binary")

    def run(lib):   # (a number as a 0-d tensor: not every one of these ops takes a number)
        other = lib.tensor(np.float32(y)) if form == "number" else lib.tensor(y)
        return getattr(lib, op)(lib.tensor(x), other)

    with choice.only(choice.ONEDNN):
        got = run(ember).numpy()
    assert taken == [op]
    want = run(torch).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(want), equal_nan=True)
    if BINARY_OPS[op]:   # NumPy's path, bit for bit (signed zeros included)
        with choice.only(choice.NUMPY):
            expected = run(ember).numpy()
        np.testing.assert_array_equal(got, expected)
        assert np.array_equal(np.signbit(got), np.signbit(expected))


def test_binary_operands_the_loops_do_not_take_run_on_numpy(monkeypatch):
    x = np.random.default_rng(4).standard_normal((512, 512)).astype(np.float32)
    for y in (x[:, :1].copy(),            # a column: not a trailing row
              x.T,                         # another layout
              x.astype(np.float64)):       # another dtype (promoted by the op)
        got = ember.maximum(ember.tensor(x), ember.tensor(y)).numpy()
        np.testing.assert_array_equal(got, np.maximum(x, y).astype(got.dtype))
    assert vector_math.binary("maximum", x, x.T) is None
    assert vector_math.binary("maximum", x, x[:, :1].copy()) is None


# op -> the ember and torch functions
DIVISION_OPS = {"fmod": (ember.fmod, torch.fmod), "remainder": (ember.remainder, torch.remainder),
                "floor_divide": (lambda a, b: a.div(b, rounding_mode="floor"),
                                 lambda a, b: a.div(b, rounding_mode="floor"))}
_DIVISION_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -3e38, 1.0,
                               -1.0, 2.0, -2.0, 0.5, 7.0, -7.0, 1e30, 1e-30, 4194304.5, -0.75],
                              np.float32)


def _division_operands(form):
    """Operands with quotients of every kind: ordinary, huge (beyond the exact range, in a block
    of their own and mixed in), and every pair of special values."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((1024, 400)) * 10).astype(np.float32)
    y = rng.standard_normal((1024, 400)).astype(np.float32)
    x[:20, :20] = _DIVISION_SPECIALS[:, None]
    y[:20, :20] = _DIVISION_SPECIALS[None, :]
    x[100:110] *= np.float32(1e7)          # quotients beyond 2^22, a block of them
    x[500, ::7] *= np.float32(1e7)         # and a few among exact ones
    if form == "number":
        return x, -0.7
    if form == "row":
        return x, y[:1].copy()
    return x, y


@needs_loops
@pytest.mark.parametrize("form", ["same", "number", "row"])
@pytest.mark.parametrize("op", sorted(vector_math.DIVISIONS))
def test_divisions_on_the_loops_give_the_numpy_paths_bits_and_torchs(op, form, spy):
    x, y = _division_operands(form)
    taken = spy(vector_math, "binary")
    ember_fn, torch_fn = DIVISION_OPS[op]

    def run(lib):
        return ember_fn(ember.tensor(x), y if form == "number" else ember.tensor(y)) if lib is ember \
            else torch_fn(torch.tensor(x), y if form == "number" else torch.tensor(y))

    with choice.only(choice.ONEDNN):
        got = run(ember).numpy()
    assert taken == [op]
    with choice.only(choice.NUMPY):
        expected = run(ember).numpy()
    assert _same_bits(got, expected).all()
    want = run(torch).numpy()
    # torch's float32 fmod (and remainder, which starts from it) gives NaN where the float32
    # quotient overflows (3e38 / 0.5), where C's fmod, and ember, give the exact remainder
    with np.errstate(all="ignore"):
        overflow = np.isinf(x / np.broadcast_to(np.float32(y), x.shape)) & np.isfinite(x)
    assert _same_bits(got, want)[~overflow].all()


def _same_bits(a, b):
    """Where float32 arrays hold the same bits, or NaN both."""
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


@needs_loops
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_float16_conversions_on_the_loop_give_torchs_bits(layout, spy):
    """float32 -> float16 rounds to nearest (ties to even), overflows to infinity and keeps
    subnormals and NaN as torch's and NumPy's casts do; float16 -> float32 is exact."""
    if vector_math.convert(np.ones(4, np.float32), np.float16) is None:
        pytest.skip("the conversion loops cannot be built here (C's _Float16 needs GCC 12)")
    taken = spy(vector_math, "convert", which=1)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((256, 300)) * 3e4).astype(np.float32)
    x.reshape(-1)[:12] = [np.nan, np.inf, -np.inf, 65504, 65520, 65519.99, 1e-8, -1e-8, 6e-5,
                          -0.0, 2049.0, 2051.0]   # (2049 and 2051 are ties)
    t, e = torch.from_numpy(x), ember.tensor(x)
    if layout == "transposed":
        t, e = t.T, e.T
    with choice.only(choice.ONEDNN):
        half = e.half()
        back = half.float()
    assert [np.dtype(d) for d in taken] == [np.float16, np.float32]
    want = t.half()
    assert half.stride() == want.stride()
    np.testing.assert_array_equal(half.numpy().view(np.uint16), want.numpy().view(np.uint16))
    np.testing.assert_array_equal(back.numpy().view(np.uint32), want.float().numpy().view(np.uint32))


@needs_loops
def test_bfloat16_conversion_on_the_loop_gives_numpys_path_bits(spy):
    """float32 -> bfloat16 rounds to nearest even on the bits, as ml_dtypes (ember's NumPy
    path) and torch do, for every kind of bit pattern; a NaN becomes the quiet NaN of its sign
    (ml_dtypes' rule: torch's vectorized cast gives all ones)."""
    if vector_math.convert(np.ones(4, np.float32), ember.bfloat16.np) is None:
        pytest.skip("the conversion loops cannot be built here")
    taken = spy(vector_math, "convert", which=1)
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((512, 512)) * 100).astype(np.float32)
    x.reshape(-1)[:20000] = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with choice.only(choice.ONEDNN):
        got = ember.tensor(x).bfloat16()
    assert [np.dtype(d) for d in taken] == [ember.bfloat16.np]
    with choice.only(choice.NUMPY):
        expected = ember.tensor(x).bfloat16()
    np.testing.assert_array_equal(got.numpy().view(np.uint16), expected.numpy().view(np.uint16))
    want = torch.from_numpy(x).bfloat16().float().numpy()
    np.testing.assert_array_equal(np.isnan(got.float().numpy()), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(got.float().numpy()[finite], want[finite])


@needs_loops
@pytest.mark.parametrize("values", [{}, {"nan": 1.5, "posinf": 7.0, "neginf": -2e40}])
def test_nan_to_num_on_the_loop_gives_torchs_bits(values, spy):
    taken = spy(vector_math, "with_parameters")
    x = _inputs(3e38)
    with choice.only(choice.ONEDNN):
        got = ember.nan_to_num(ember.tensor(x), **values).numpy()
    assert taken == ["nan_to_num"]
    with choice.only(choice.NUMPY):
        expected = ember.nan_to_num(ember.tensor(x), **values).numpy()
    want = torch.nan_to_num(torch.tensor(x), **values).numpy()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


@needs_loops
@pytest.mark.parametrize("eps", [None, 0.01, 1e-6])
def test_logit_gradient_on_the_loop_rounds_as_the_formula(eps, spy):
    """logit's gradient on the loop: the formula's bits (the bounds eps and 1 - eps in float32,
    NaN or 0 outside them), and torch's values."""
    taken = spy(vector_math, "gradient")
    rng = np.random.default_rng(6)
    x = rng.uniform(-0.1, 1.1, N).astype(np.float32)
    x[:8] = [0.0, 1.0, np.nan, -0.0, 0.01, 0.99, 1e-6, np.float32(1 - 1e-6)]
    g = rng.standard_normal(N).astype(np.float32)

    def grad_of(lib):
        t = lib.tensor(x, requires_grad=True)
        lib.logit(t, eps).backward(lib.tensor(g))
        return t.grad.numpy()

    with choice.only(choice.ONEDNN):
        got = grad_of(ember)
    assert taken == ["logit"]
    with choice.only(choice.NUMPY):
        expected = grad_of(ember)
    assert _same_bits(got, expected).all()
    # (at a NaN input with eps, torch's vectorized loop gives 0 and its scalar loop NaN; ember
    # gives NaN, as its formula on tensors does)
    want = grad_of(torch)
    number = ~np.isnan(x)
    torch.testing.assert_close(torch.from_numpy(got[number]), torch.from_numpy(want[number]), equal_nan=True)


@needs_loops
@pytest.mark.parametrize("eps", [None, 0.01, float("nan")])
def test_logit_on_the_loop_matches_torch(eps, spy):
    """logit on the loop: the input clamped to [eps, 1 - eps] (a NaN eps clamps nothing), then
    libmvec's log of the float32 quotient, as torch's loop computes it."""
    taken = spy(vector_math, "with_parameters")
    x = np.random.default_rng(7).uniform(-0.1, 1.1, N).astype(np.float32)
    x[:9] = [0.0, 1.0, np.nan, -0.0, 0.01, 0.99, 1e-6, 0.5, -np.inf]
    with choice.only(choice.ONEDNN):
        got = ember.logit(ember.tensor(x), eps).numpy()
    assert taken == ["logit"]
    want = torch.logit(torch.from_numpy(x), eps).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(want), equal_nan=True)


@needs_loops
def test_nan_to_num_of_a_strided_input_takes_the_loop_after_one_copy(spy):
    taken = spy(vector_math, "with_parameters")
    x = _inputs(3e38).reshape(1024, 1024)
    with choice.only(choice.ONEDNN):
        got = ember.nan_to_num(ember.tensor(x)[:, ::2]).numpy()
    assert taken == ["nan_to_num"]
    np.testing.assert_array_equal(got, torch.nan_to_num(torch.from_numpy(x)[:, ::2]).numpy())


@needs_loops
def test_small_erfinv_and_floor_division_take_their_loops_and_give_torchs_values(spy):
    """Below 4,096 elements their NumPy paths are several passes whatever the size: the loops
    run at every size (erfinv's is also exact where that path was a few ulp off)."""
    x = np.random.default_rng(9).uniform(-0.99, 0.99, 15).astype(np.float32)
    unary, binary = spy(vector_math, "unary"), spy(vector_math, "binary")
    got = ember.erfinv(ember.tensor(x)).numpy()
    quotient = ember.floor_divide(ember.tensor(x), 0.3).numpy()
    assert unary == ["erfinv"] and binary == ["floor_divide"]
    np.testing.assert_array_equal(got, torch.erfinv(torch.from_numpy(x)).numpy())
    np.testing.assert_array_equal(quotient, torch.floor_divide(torch.from_numpy(x), 0.3).numpy())


@needs_loops
def test_remainder_of_a_number_by_a_large_tensor_takes_the_loop(spy):
    """``remainder(number, tensor)`` spreads the number over the divisor, so that the loop reads it
    as an array: torch's values, its special cases included."""
    rng = np.random.default_rng(6)
    y = (rng.standard_normal((64, 129)) * 3).astype(np.float32)
    y.reshape(-1)[:len(_DIVISION_SPECIALS)] = _DIVISION_SPECIALS
    taken = spy(vector_math, "binary")
    with choice.only(choice.ONEDNN):
        got = ember.remainder(1.5, ember.tensor(y)).numpy()
    assert taken == ["remainder"]
    want = torch.remainder(1.5, torch.from_numpy(y)).numpy()
    # (a subnormal divisor: torch's vectorized loop gives NaN, its scalar one 0, as ember's)
    kept = (np.abs(y) >= np.finfo(np.float32).tiny) | (y == 0)
    np.testing.assert_array_equal(np.isnan(got[kept]), np.isnan(want[kept]))
    kept &= ~np.isnan(want)
    np.testing.assert_array_equal(got[kept].view(np.uint32), want[kept].view(np.uint32))


@needs_loops
@pytest.mark.parametrize("width", [16, 17, 31, 295, 1024])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_rows_on_the_loop_match_torch(name, width, spy):
    """The row loops, forward and backward, over rows of whole vectors and of a remainder, with
    masked (-inf) positions, a row holding NaN, one holding +inf and one of -inf only (each
    NaN whole, as torch's), and large magnitudes."""
    rng = np.random.default_rng(width)
    x = (rng.standard_normal((40, width)) * 8).astype(np.float32)
    x[rng.random(x.shape) < 0.2] = -np.inf
    x[:, 0] = rng.standard_normal(40).astype(np.float32)   # no other row all -inf
    x[3, width // 2], x[5, -1], x[7] = np.nan, np.inf, -np.inf
    x[9] *= 1e4
    g = rng.standard_normal(x.shape).astype(np.float32)
    forward, backward = spy(vector_math, "softmax_rows"), spy(vector_math, "softmax_rows_backward")
    results = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(xt, -1)
        y.backward(lib.tensor(g))
        results.append((y.detach().numpy(), xt.grad.numpy()))
    assert len(forward) == len(backward) == 1
    assert vector_math.softmax_rows(x, name == "log_softmax") is not None   # (the loop answered)
    assert vector_math.softmax_rows_backward(g, results[0][0], name == "log_softmax") is not None
    (got_y, got_g), (want_y, want_g) = results
    np.testing.assert_allclose(got_y, want_y, rtol=1e-5, atol=1e-6 * (1e4 if name == "log_softmax" else 1),
                               equal_nan=True)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-5, atol=1e-5, equal_nan=True)


@needs_loops
@pytest.mark.parametrize("shape", [(40, 1), (40, 5), (40, 16), (40, 17), (40, 295), (6, 1024), (300,), (2, 3, 33)])
@pytest.mark.parametrize("library", [choice.ONEDNN, choice.NUMPY])
def test_logsumexp_over_rows_matches_torch(shape, library, spy):
    """logsumexp over the last dim, on the row loop and on NumPy's passes: rows with masked
    (-inf) terms (some longer than the loop's chunk of clamped exponents), a row holding NaN,
    one holding +inf, one of -inf only, large magnitudes; forward and backward, keepdim or not."""
    if not choice.enabled(library):
        pytest.skip(f"{library} kernels are not in use")
    rng = np.random.default_rng(shape[-1])
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    rows = x.reshape(-1, shape[-1])
    if rows.shape[0] >= 10:
        rows[rng.random(rows.shape) < 0.3] = -np.inf
        rows[:, 0] = rng.standard_normal(rows.shape[0]).astype(np.float32)   # no other row all -inf
        rows[3, -1], rows[5, 0], rows[7] = np.nan, np.inf, -np.inf
        rows[9] *= 1e4
    taken = spy(vector_math, "logsumexp_rows")
    for keepdim in (False, True):
        results = []
        for lib in (ember, torch):
            xt = lib.tensor(x, requires_grad=True)
            if lib is ember:
                with choice.only(library):
                    y = xt.logsumexp(-1, keepdim=keepdim)
            else:
                y = xt.logsumexp(-1, keepdim=keepdim)
            y.sum().backward()
            results.append((y.detach().numpy(), xt.grad.numpy()))
        (got_y, got_g), (want_y, want_g) = results
        assert got_y.shape == want_y.shape
        np.testing.assert_allclose(got_y, want_y, rtol=2e-6, atol=1e-6, equal_nan=True)
        np.testing.assert_allclose(got_g, want_g, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert len(taken) == (2 if library == choice.ONEDNN else 0)


@needs_loops
def test_softmax_rows_narrower_than_a_vector_take_numpy():
    x = np.random.default_rng(0).standard_normal((4096, 5)).astype(np.float32)
    assert vector_math.softmax_rows(x, False) is None
    got = ember.nn.functional.softmax(ember.tensor(x), -1).numpy()
    np.testing.assert_allclose(got, torch.softmax(torch.tensor(x), -1).numpy(), rtol=1e-6, atol=1e-7)


# activation -> (its arguments, the vector-math loop its forward and gradient run on, the
# function of vector_math called for the forward)
_ACTIVATION_LOOPS = {"elu": ({"alpha": 0.7}, "elu", "with_parameters"), "selu": ({}, "elu", "with_parameters"),
                     "celu": ({"alpha": 1.3}, "elu", "with_parameters"),
                     "softplus": ({"beta": 2.0, "threshold": 3.0}, "softplus", "with_parameters"),
                     "softplus_default": ({}, "softplus", "with_parameters"),
                     "logsigmoid": ({}, "logsigmoid", "unary")}


@needs_loops
@pytest.mark.parametrize("case", sorted(_ACTIVATION_LOOPS))
def test_activations_on_the_loops_give_the_numpy_paths_values_and_torchs(case, spy):
    """elu, selu, celu, softplus and logsigmoid of a large float32 tensor, forward and backward
    on the vector-math loops (libmvec's expm1f, expf, log1pf): within a few ulp of NumPy's path,
    torch's values and gradients; NaN, zeros and the tails included."""
    kwargs, loop, forward_function = _ACTIVATION_LOOPS[case]
    name = case.split("_")[0]
    forward, backward = spy(vector_math, forward_function), spy(vector_math, "gradient")
    x = (np.random.default_rng(12).standard_normal((200, 300)) * 8).astype(np.float32)
    x[0, :5] = [0.0, -0.0, np.nan, 40.0, -40.0]
    g = np.random.default_rng(13).standard_normal(x.shape).astype(np.float32)
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(t, **kwargs)
        y.backward(lib.tensor(g))
        results.append((y.detach().numpy(), t.grad.numpy()))
    assert forward == [loop] and backward == [loop]
    with choice.only(choice.NUMPY):
        t = ember.tensor(x, requires_grad=True)
        y = getattr(ember.nn.functional, name)(t, **kwargs)
        y.backward(ember.tensor(g))
        numpy_path = (y.detach().numpy(), t.grad.numpy())
    for got, want in zip(results[0], numpy_path):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-30, equal_nan=True)
    for got, want in zip(results[0], results[1]):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7, equal_nan=True)


@needs_loops
@pytest.mark.parametrize("width", [300, 256, 7])   # (rows ending in part of a vector, in whole ones, narrower)
@pytest.mark.parametrize("op", ["maximum", "minimum", "fmod", "atan2"])
def test_a_row_repeated_over_rows_takes_the_loops_rows_form(op, width, spy):
    """From ``ROWS_MIN_ELEMENTS`` a float32 tensor and a row of its trailing shape go to the
    loop's rows form, whatever the op's own size rule: NumPy's bits for the selects and fmod,
    torch's values for atan2."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((60000 // width, width)).astype(np.float32)
    row = rng.standard_normal(width).astype(np.float32)
    assert x.size >= vector_math.ROWS_MIN_ELEMENTS
    taken = spy(vector_math, "binary", 0)
    got = getattr(ember, op)(ember.from_numpy(x), ember.from_numpy(row)).numpy()
    assert taken == [op]
    want = getattr(torch, op)(torch.from_numpy(x), torch.from_numpy(row)).numpy()
    if op == "atan2":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, getattr(np, op)(x, row))
        np.testing.assert_array_equal(got, want)


@needs_loops
@pytest.mark.parametrize("decimals", [-3, -1, 1, 2, 5])
def test_round_to_decimals_on_its_loop_is_the_passes_and_torchs(decimals, spy):
    """round(x, decimals) of a large float32 tensor: one loop with the three passes' bits (ties, NaN and the
    infinities among the elements), torch's values."""
    from ember.ops import unary
    rng = np.random.default_rng(35)
    x = (rng.standard_normal((200, 300)) * 1000).astype(np.float32)
    x.reshape(-1)[:8] = [np.nan, np.inf, -np.inf, 0.25, 2.5, -0.05, 1500.0, -0.0]
    taken = spy(vector_math, "with_parameters", 0)
    got = ember.round(ember.from_numpy(x), decimals=decimals).numpy()
    assert taken == ["round_tens" if decimals < 0 else "round_decimals"]
    scale = np.float32(10.0 ** abs(decimals))
    on_loop = vector_math.with_parameters(taken[0], x, (scale,))
    assert on_loop is not None   # (the loop itself answers, with the passes' bits)
    np.testing.assert_array_equal(on_loop.view(np.uint32), unary._round_in_passes(x, scale, decimals).view(np.uint32))
    np.testing.assert_array_equal(got.view(np.uint32), unary._round_in_passes(x, scale, decimals).view(np.uint32))
    want = torch.round(torch.from_numpy(x), decimals=decimals).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("weight", [0.3, 0.75, -2.0, 0.5, 0.49999999999, 3])
def test_lerp_with_a_number_weight_on_its_loop(weight):
    """lerp of large float32 tensors by a number: one loop with the composite's bits (the
    branch chosen on the weight as Python compares it), torch's values."""
    from ember.ops import ternary
    if not vector_math.available():
        pytest.skip("the vector-math loops cannot be built here")
    rng = np.random.default_rng(9)
    a, b = (rng.standard_normal((200, 300)).astype(np.float32) for _ in range(2))
    a[::7, ::3] = np.nan
    got = ember.lerp(ember.from_numpy(a), ember.from_numpy(b), weight).numpy()
    np.testing.assert_array_equal(got, ternary._lerp_in_passes(a, b, weight))
    assert ternary._lerp_number_on_loop(a, b, weight) is not None
    want = torch.lerp(torch.from_numpy(a), torch.from_numpy(b), weight).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@needs_loops
def test_each_element_takes_the_same_bits_at_any_position_and_thread_count():
    """A loop's element is the vector function's wherever it lies (the body, the last elements, each
    thread's share, an array shorter than a vector) and at 1 and 2 threads: the forms of the unary,
    binary (arrays, a number, rows) and gradient loops, which call libmvec's functions."""
    rng = np.random.default_rng(18)
    threads = ember.get_num_threads()
    x = (rng.standard_normal(4099) * 4).astype(np.float32)
    y = (rng.standard_normal(4099) * 4).astype(np.float32)
    forms = {"unary": lambda a, b: vector_math.unary("sigmoid", a),
             "exp": lambda a, b: vector_math.unary("exp", a),
             "binary": lambda a, b: vector_math.binary("atan2", a, b),
             "number": lambda a, b: vector_math.binary("atan2", a, 0.75),
             "gradient": lambda a, b: vector_math.gradient("softplus", b, a, (1.0, 20.0))}
    try:
        for name, form in forms.items():
            ember.set_num_threads(1)
            whole = form(x, y)
            assert whole is not None
            for count in (1, 2):
                ember.set_num_threads(count)
                np.testing.assert_array_equal(form(x, y).view(np.uint32), whole.view(np.uint32), err_msg=name)
                for start, stop in [(0, 5), (3, 20), (100, 117), (7, 4099), (2000, 2049)]:
                    part = form(x[start:stop].copy(), y[start:stop].copy())
                    np.testing.assert_array_equal(part.view(np.uint32), whole[start:stop].view(np.uint32),
                                                  err_msg=f"{name} {start}:{stop}")
        rows = vector_math.binary("atan2", x[:4096].reshape(64, 64), y[:64].copy())
        by_element = vector_math.binary("atan2", x[:4096].reshape(64, 64), np.tile(y[:64], (64, 1)))
        np.testing.assert_array_equal(rows.view(np.uint32), by_element.view(np.uint32))
        rows = vector_math.binary("atan2", x[:57 * 9].reshape(9, 57), y[:57].copy())
        by_element = vector_math.binary("atan2", x[:57 * 9].reshape(9, 57), np.tile(y[:57], (9, 1)))
        np.testing.assert_array_equal(rows.view(np.uint32), by_element.view(np.uint32))
    finally:
        ember.set_num_threads(threads)


@needs_loops
def test_clamp_to_a_row_of_bounds_takes_the_loops_rows_form(spy):
    """clamp of a float32 tensor (below the clamp loop's size) to tensor bounds, the upper ones a row repeated
    over its rows: the row on the binary loops' rows form, NumPy's bits (NaN in the input or the bounds kept),
    torch's values."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((200, 300)).astype(np.float32)
    lo = rng.uniform(-2, -0.2, (200, 300)).astype(np.float32)
    hi = rng.uniform(0.2, 2, 300).astype(np.float32)
    x[3, 4], lo[5, 6], hi[7] = np.nan, np.nan, np.nan
    taken = spy(vector_math, "binary", 0)
    got = ember.clamp(ember.from_numpy(x), ember.from_numpy(lo), ember.from_numpy(hi)).numpy()
    assert taken == ["minimum"]
    np.testing.assert_array_equal(got, np.minimum(np.maximum(x, lo), hi))
    want = torch.clamp(torch.from_numpy(x), torch.from_numpy(lo), torch.from_numpy(hi)).numpy()
    np.testing.assert_array_equal(got, want)


@needs_loops
@pytest.mark.parametrize("width", [300, 256, 7])   # (rows ending in part of a vector, in whole ones, narrower)
@pytest.mark.parametrize("shapes", ["full, row", "row, full", "full, full", "row, row", "row with a 1, full"])
def test_clamp_to_tensor_bounds_takes_one_ternary_loop(shapes, width, spy):
    """clamp of a large float32 tensor to two tensor bounds, each of its shape or a row repeated over its rows:
    one ternary loop (its rows form where a bound is a row), the bits of NumPy's two passes (NaN in the input
    or the bounds kept), torch's values."""
    from ember.ops import ternary
    rng = np.random.default_rng(13)
    rows = vector_math.MIN_ELEMENTS["clamp"] // width + 1
    shape_of = {"full": (rows, width), "row": (width,), "row with a 1": (1, width)}
    lo_shape, hi_shape = (shape_of[name] for name in shapes.split(", "))
    x = rng.standard_normal((rows, width)).astype(np.float32)
    lo = rng.uniform(-2, -0.2, lo_shape).astype(np.float32)
    hi = rng.uniform(0.2, 2, hi_shape).astype(np.float32)
    x[3, 4], lo.reshape(-1)[5], hi.reshape(-1)[6] = np.nan, np.nan, np.nan
    taken = spy(vector_math, "ternary", 0)
    got = ember.clamp(ember.from_numpy(x), ember.from_numpy(lo), ember.from_numpy(hi)).numpy()
    assert taken == ["clamp"]
    assert vector_math.ternary("clamp", x, lo, hi) is not None
    np.testing.assert_array_equal(got, ternary._clamp_in_passes(x, lo, hi))
    np.testing.assert_array_equal(got, np.minimum(np.maximum(x, lo), hi))
    want = torch.clamp(torch.from_numpy(x), torch.from_numpy(lo), torch.from_numpy(hi)).numpy()
    np.testing.assert_array_equal(got, want)


@needs_loops
def test_the_ternary_rows_form_declines_what_it_does_not_cover():
    """Bounds that are columns, rows of two sizes, or not row-major, and arrays of another dtype: None (the
    op takes NumPy's passes)."""
    x = np.ones((64, 40), np.float32)
    row = np.zeros(40, np.float32)
    assert vector_math.ternary("clamp", x, np.zeros((64, 1), np.float32), row) is None
    assert vector_math.ternary("clamp", x.reshape(64, 4, 10), np.zeros(10, np.float32), row.reshape(4, 10)) is None
    assert vector_math.ternary("clamp", x, np.zeros((40, 64), np.float32).T, row) is None
    assert vector_math.ternary("clamp", x, row.astype(np.float64), row) is None
    assert vector_math.ternary("clamp", x, np.zeros(1, np.float32), row) is None
