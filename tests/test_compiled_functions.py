"""The compiled functions of one or two tensors (``ops/_compiled_functions.py``): each gives the
bits, the dtype, the node and the gradients its Python path gives (the same loop or ufunc),
torch's values, and every case it does not take reaches the Python path."""
import contextlib
import math
import itertools
import warnings

import numpy as np
import pytest

import ember
from ember._backend import choice, vector_math
from ember.ops import _common, _compiled_functions, _compiled_methods, linalg

torch = pytest.importorskip("torch")

# name: (ember's function, torch's, the inputs' range, the dtypes its loops take)
SINGLE, BOTH = ("float32",), ("float32", "float64")
OPS = {
    "sigmoid": (ember.sigmoid, torch.sigmoid, (-8, 8), SINGLE),
    "rsqrt": (ember.rsqrt, torch.rsqrt, (0.1, 4), SINGLE),
    "frac": (ember.frac, torch.frac, (-5, 5), SINGLE),
    "erf": (ember.erf, torch.erf, (-3, 3), SINGLE),
    "erfc": (ember.erfc, torch.erfc, (-3, 3), SINGLE),
    "erfinv": (ember.erfinv, torch.erfinv, (-0.99, 0.99), SINGLE),
    "entr": (ember.special.entr, torch.special.entr, (-1, 3), SINGLE),
    "sinc": (ember.special.sinc, torch.special.sinc, (-3, 3), SINGLE),
    "bessel_j0": (ember.special.bessel_j0, torch.special.bessel_j0, (-10, 10), BOTH),
    "bessel_j1": (ember.special.bessel_j1, torch.special.bessel_j1, (-10, 10), BOTH),
    "bessel_y0": (ember.special.bessel_y0, torch.special.bessel_y0, (0.1, 10), BOTH),
    "bessel_y1": (ember.special.bessel_y1, torch.special.bessel_y1, (0.1, 10), BOTH),
    "modified_bessel_i0": (ember.special.modified_bessel_i0, torch.special.modified_bessel_i0, (-5, 5), BOTH),
    "modified_bessel_i1": (ember.special.modified_bessel_i1, torch.special.modified_bessel_i1, (-5, 5), BOTH),
    "modified_bessel_k0": (ember.special.modified_bessel_k0, torch.special.modified_bessel_k0, (0.1, 5), BOTH),
    "modified_bessel_k1": (ember.special.modified_bessel_k1, torch.special.modified_bessel_k1, (0.1, 5), BOTH),
    "scaled_modified_bessel_k0": (ember.special.scaled_modified_bessel_k0,
                                  torch.special.scaled_modified_bessel_k0, (0.1, 5), BOTH),
    "scaled_modified_bessel_k1": (ember.special.scaled_modified_bessel_k1,
                                  torch.special.scaled_modified_bessel_k1, (0.1, 5), BOTH),
    "spherical_bessel_j0": (ember.special.spherical_bessel_j0, torch.special.spherical_bessel_j0, (-10, 10), BOTH),
    "airy_ai": (ember.special.airy_ai, torch.special.airy_ai, (-5, 3), BOTH),
    "i0": (ember.special.i0, torch.special.i0, (-5, 5), BOTH),
    "i0e": (ember.special.i0e, torch.special.i0e, (-5, 5), BOTH),
    "i1": (ember.special.i1, torch.special.i1, (-5, 5), BOTH),
    "i1e": (ember.special.i1e, torch.special.i1e, (-5, 5), BOTH),
    "erfcx": (ember.special.erfcx, torch.special.erfcx, (-3, 10), BOTH),
    "ndtri": (ember.special.ndtri, torch.special.ndtri, (0.01, 0.99), BOTH),
    "log_ndtr": (ember.special.log_ndtr, torch.special.log_ndtr, (-10, 5), BOTH),
    "lgamma": (ember.lgamma, torch.lgamma, (-4.5, 5), BOTH),
    "digamma": (ember.digamma, torch.digamma, (0.1, 5), BOTH),
    "sign": (ember.sign, torch.sign, (-5, 5), SINGLE),
    "sgn": (ember.sgn, torch.sgn, (-5, 5), SINGLE),
}
# the ops whose forward on float arrays is a NumPy ufunc (below their loop's size, where they have one)
OPS.update({name: (getattr(ember, name), getattr(torch, name), domain, BOTH) for name, domain in {
    "exp": (-5, 5), "exp2": (-5, 5), "expm1": (-5, 5), "log": (0.1, 5), "log2": (0.1, 5), "log10": (0.1, 5),
    "log1p": (-0.5, 5), "sqrt": (0.1, 5), "sin": (-5, 5), "cos": (-5, 5), "tan": (-1.5, 1.5), "asin": (-0.9, 0.9),
    "acos": (-0.9, 0.9), "atan": (-5, 5), "sinh": (-5, 5), "cosh": (-5, 5), "tanh": (-5, 5), "asinh": (-5, 5),
    "acosh": (1.1, 5), "atanh": (-0.9, 0.9), "abs": (-5, 5), "floor": (-5, 5), "ceil": (-5, 5),
    "trunc": (-5, 5)}.items()})

# name: (ember's function, torch's, the inputs' range, the dtypes its loop takes: none where the
# op is on a ufunc)
BINARY_OPS = {name: (getattr(ember, name), getattr(torch, name), domain, ()) for name, domain in {
    "maximum": (-5, 5), "minimum": (-5, 5), "fmax": (-5, 5), "fmin": (-5, 5), "atan2": (-5, 5),
    "hypot": (-5, 5), "copysign": (-5, 5), "nextafter": (-5, 5), "logaddexp": (-5, 5),
    "logaddexp2": (-5, 5), "fmod": (-5, 5)}.items()}
BINARY_OPS["xlogy"] = (ember.xlogy, torch.xlogy, (0, 5), SINGLE)
BINARY_OPS["xlog1py"] = (ember.special.xlog1py, torch.special.xlog1py, (-0.5, 5), SINGLE)
BINARY_OPS["floor_divide"] = (ember.floor_divide, torch.floor_divide, (-5, 5), SINGLE)
BINARY_OPS["remainder"] = (ember.remainder, torch.remainder, (-5, 5), SINGLE)
# (div's rounding modes, under their Python paths' names)
BINARY_OPS["_python_div_floor"] = (lambda a, b: ember.div(a, b, rounding_mode="floor"),
                                   lambda a, b: torch.div(a, b, rounding_mode="floor"), (-5, 5), SINGLE)
BINARY_OPS["_python_div_trunc"] = (lambda a, b: ember.div(a, b, rounding_mode="trunc"),
                                   lambda a, b: torch.div(a, b, rounding_mode="trunc"), (-5, 5), SINGLE)

@pytest.fixture(autouse=True)
def compiled(dispatch_off):
    """The compiled functions built (``_compiled_methods.install`` builds them with the methods)
    and taking their cases (dispatch switched off)."""
    _compiled_methods.install()
    if _compiled_methods._state["module"] is None:
        pytest.skip("the compiled functions cannot be built here (no C compiler or headers)")


@contextlib.contextmanager
def python_paths():
    """The Python paths in place of the compiled functions within the block."""
    functions = _compiled_functions.python_functions()
    compiled = [entry[0] for entry, _ in functions]
    for entry, python_op in functions:
        entry[0] = python_op
    try:
        yield
    finally:
        for (entry, _), function in zip(functions, compiled):
            entry[0] = function


def _on_both_paths(call, errors=(RuntimeError, TypeError, IndexError)):
    """``call()``'s result (its dtype, shape, requires_grad, bytes and the warnings it gave) or
    error (its type and message), with the compiled functions and with the Python paths in their
    place."""
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _common._warned.clear()   # (torch's warnings given once per process: once on each path here)
            try:
                result = call()
            except errors as error:
                results.append((type(error), str(error)))
                continue
            results.append((result.dtype, result.shape, result.requires_grad, result.detach().numpy().tobytes(),
                            [str(w.message) for w in caught]))
    return results


def _inputs(name, dtype, shape=(3, 5)):
    lo, hi = OPS[name][2]
    values = np.linspace(lo, hi, math.prod(shape)).reshape(shape).astype(dtype)
    if values.size > 3:   # the loops' special values too
        values.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    return values


def test_every_registered_function_is_tested_here():
    names = {python_op.__name__ for _, python_op in _compiled_functions.python_functions()}
    # (cat's, stack's and the reductions' Python paths)
    assert names == set(OPS) | set(BINARY_OPS) | {"_cat", "_stack", "_plain_sum", "_plain_mean", "_python_amax",
                                                  "_python_amin", "_max_along", "_min_along", "_checked_mm",
                                                  "_checked_bmm", "_checked_matmul", "_corrected_var", "_corrected_std",
                                                  "_python_where", "_python_gather", "_python_scatter",
                                                  "_python_scatter_add", "_python_index_select", "_python_take",
                                                  "_python_max_all", "_python_min_all", "_python_index_add",
                                                  "_python_index_copy", "_python_index_fill", "_python_cummax",
                                                  "_python_cummin", "_python_masked_fill", "_python_add",
                                                  "_python_sub", "_python_mul", "_python_div", "_python_eq",
                                                  "_python_ne", "_python_lt", "_python_le", "_python_gt",
                                                  "_python_ge", "_python_2_norm", "_python_dot",
                                                  "_python_mv", "_python_addmm", "_python_addmv",
                                                  "_python_softmax", "_python_log_softmax", "_python_vdot",
                                                  "_python_outer", "_python_trace", "_python_addr",
                                                  "_python_baddbmm", "_python_addbmm", "isfinite", "isnan", "isinf",
                                                  "signbit",
                                                  "_python_pow", "logical_and", "logical_or", "logical_xor",
                                                  "_python_cross", "_python_addcmul", "_python_addcdiv",
                                                  "_python_cumsum", "_python_cumprod", "_plain_nansum",
                                                  "_corrected_var_mean", "_corrected_std_mean", "_python_p_norm",
                                                  "_python_sort", "_python_topk", "_python_median",
                                                  "_python_nanmedian", "_python_kthvalue", "_python_tril",
                                                  "_python_triu", "_python_flip", "gcd", "lcm", "bitwise_and",
                                                  "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                                                  "bitwise_right_shift",
                                                  "_python_mode", "_python_clamp", "_python_scatter_reduce",
                                                  "_python_logit", "_python_hardshrink", "_python_nan_to_num",
                                                  "_python_heaviside", "_python_lerp", "_python_frexp",
                                                  "_python_lu_factor_ex", "_python_lu_factor", "_python_qr",
                                                  "_python_lu", "_python_lu_unpack", "_python_ldl_factor_ex",
                                                  "_python_ldl_factor", "_python_triangular_solve",
                                                  "_python_solve_triangular", "_python_cholesky_factor",
                                                  "_python_pdist", "_standard_gamma_grad",
                                                  "_python_reduced_scatter", "_python_index_reduce",
                                                  "_python_vander", "_python_isin", "_python_round",
                                                  "_python_prelu", "_python_histc", "_python_diag_embed",
                                                  "_diag", "_python_logcumsumexp", "_python_dirichlet_grad",
                                                  "_python_histogram", "_python_cdist", "_prod",
                                                  "_python_linalg_svd_factors", "_python_svdvals",
                                                  "_python_svd_factors", "_python_eigh_factors",
                                                  "_python_tensor_split", "_python_unbind", "_python_chunk",
                                                  "_python_masked_scatter", "_python_householder_product",
                                                  "_python_index_put", "_python_cholesky_solve",
                                                  "_python_index_put_", "_python_put", "_python_put_",
                                                  "_kron"} \
        | set(SPECIALS) | set(POLYNOMIALS)


def test_the_registered_functions_fit_the_c_table():
    import re
    limit = int(re.search(r"#define MAX_FUNCTIONS (\d+)", _compiled_functions.SOURCE).group(1))
    assert len(_compiled_functions.python_functions()) <= limit


def _assert_the_compiled_function_takes(monkeypatch, call, spied):
    """``call()`` reaches none of the functions ``spied`` (``(owner, name)`` pairs) that its
    Python path reaches: the C function does their work itself. (A first call checks the kernel
    choice's settings and makes the op's compiled function.)"""
    call()
    calls = []
    for owner, name in spied:
        real = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *args, real=real, **kwargs: calls.append(real) or real(*args, **kwargs))
    call()
    assert calls == []
    with python_paths():
        call()
    assert calls


def _ufunc_names(name):
    """``(np, attribute)`` for the ufunc of the registered op ``name`` under each of NumPy's names
    for it (np.abs is np.absolute)."""
    ufuncs = [f.ufunc for f in _compiled_functions._functions if f.python_op.__name__ == name and f.ufunc]
    return [(np, attribute) for attribute, value in vars(np).items() if any(value is ufunc for ufunc in ufuncs)]


@pytest.mark.parametrize("name", sorted(OPS))
def test_the_compiled_function_takes_the_common_case(monkeypatch, name):
    """A small float32 tensor reaches neither the Python path's loop call nor its ufunc."""
    from ember._backend import special_loops
    x = ember.tensor(_inputs(name, "float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: OPS[name][0](x),
                                        [(vector_math, "unary"), (special_loops, "compute"), *_ufunc_names(name)])


@pytest.mark.parametrize("name", ["erfinv", "bessel_j0", "lgamma", "abs", "floor"])
def test_the_compiled_function_takes_large_tensors(monkeypatch, name):
    """Past the small arrays too: a loop's op (on the loops' threads) and a ufunc's below its max_elements."""
    from ember._backend import special_loops
    x = ember.tensor(_inputs(name, "float32", (222, 295)))
    _assert_the_compiled_function_takes(monkeypatch, lambda: OPS[name][0](x),
                                        [(vector_math, "unary"), (special_loops, "compute"), *_ufunc_names(name)])


@pytest.mark.parametrize("name", ["sigmoid", "exp", "bessel_j0"])
def test_the_compiled_function_takes_integers_as_floats(monkeypatch, name):
    """An int64 tensor reaches neither the Python path's loop call nor its ufunc."""
    from ember._backend import special_loops
    x = ember.tensor(np.arange(-3, 12).reshape(3, 5))
    _assert_the_compiled_function_takes(monkeypatch, lambda: OPS[name][0](x),
                                        [(vector_math, "unary"), (special_loops, "compute"), *_ufunc_names(name)])


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8", "bool"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_integer_inputs_are_the_python_paths(name, dtype):
    """Integers and bools: as the default float dtype (float32, float64, or half, left to Python),
    the bits, dtype and errors of the Python path."""
    values = np.arange(-6, 9).reshape(3, 5)
    if dtype == "bool":
        values = values > 0
    else:
        values = (np.abs(values) if dtype == "uint8" else values).astype(dtype)
    previous = ember.get_default_dtype()
    try:
        for default in (ember.float32, ember.float64, ember.float16):
            ember.set_default_dtype(default)
            results = []
            for python in (False, True):
                with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        out = OPS[name][0](ember.tensor(values))
                    except (RuntimeError, TypeError, NotImplementedError) as error:
                        results.append((type(error), str(error)))
                        continue
                    results.append((out.dtype, out.shape, out.stride(), out.numpy().tobytes()))
            assert results[0] == results[1], default
    finally:
        ember.set_default_dtype(previous)


def _run(fn, values, requires_grad=False):
    x = ember.tensor(values, requires_grad=requires_grad)
    y = fn(x)
    return x, y


@pytest.mark.parametrize("shape", [(3, 5), (16,), (1,), (), (222, 295)])   # (the last past the small arrays)
@pytest.mark.parametrize("name", sorted(OPS))
def test_values_are_the_python_paths_and_torchs(name, shape):
    fn, torch_fn, _, dtypes = OPS[name]
    for dtype in ("float32", "float64"):
        values = _inputs(name, dtype, shape)
        compiled = fn(ember.tensor(values))
        with python_paths():
            python = fn(ember.tensor(values))
        assert compiled.dtype == python.dtype and compiled.shape == python.shape
        np.testing.assert_array_equal(compiled.numpy(), python.numpy())
        want = torch_fn(torch.tensor(values)).numpy()   # (their accuracy: the op table's tests)
        np.testing.assert_allclose(compiled.numpy(), want, rtol=1e-4,
                                   atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("name", sorted(n for n, (fn, *_) in OPS.items()))
def test_nodes_and_gradients_are_the_python_paths(name):
    fn = OPS[name][0]
    values = _inputs(name, "float32")[:, 1:]   # (finite values: NaN gradients compare unequal)
    values = np.ascontiguousarray(np.where(np.isfinite(values), values, 0.5), dtype=np.float32)
    grad = np.linspace(-1, 1, values.size, dtype=np.float32).reshape(values.shape)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, y = _run(fn, values, requires_grad=True)
            node = y.grad_fn
            if node is None:
                results.append((y.requires_grad, None, None))
                continue
            y.backward(ember.tensor(grad))
            results.append((y.requires_grad, type(node).__name__, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "int64", "float16", "transposed", "large", "no_grad"])
def test_other_cases_take_the_python_path(case):
    rng = np.random.default_rng(0)
    values = rng.uniform(-0.9, 0.9, (5, 3)).astype(np.float32)
    large = rng.uniform(-0.9, 0.9, 1 << 16).astype(np.float32)
    make = {"out": lambda: ember.tensor(values), "int64": lambda: ember.tensor(np.arange(6)),
            "float16": lambda: ember.tensor(values.astype(np.float16)),
            "transposed": lambda: ember.tensor(values).t(),
            "large": lambda: ember.tensor(large),
            "no_grad": lambda: ember.tensor(values, requires_grad=True)}[case]
    for name in ("sigmoid", "erfinv", "bessel_j0", "i1e", "exp", "acos"):
        fn = OPS[name][0]
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = make()
                try:
                    if case == "out":
                        out = ember.empty(5, 3)
                        result = fn(x, out=out)
                        assert result is out
                    elif case == "no_grad":
                        with ember.no_grad():
                            result = fn(x)
                    else:
                        result = fn(x)
                except NotImplementedError as error:   # (half precision, where torch refuses it)
                    results.append(str(error))
                    continue
                results.append((result.dtype, result.requires_grad, result.grad_fn, result.numpy().tobytes()))
        assert results[0] == results[1], (name, case)


def test_a_tensor_that_requires_grad_with_no_gradient_formula_takes_the_python_path():
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    y = ember.special.bessel_j0(x)   # (torch's is not differentiable: a result without history)
    assert y.grad_fn is None and not y.requires_grad


def test_errors_are_the_python_paths():
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.sigmoid([1.0])
    with pytest.raises(NotImplementedError, match="erfinv_vml_cpu"):
        ember.erfinv(ember.tensor([1j]))
    with pytest.raises(NotImplementedError):
        ember.special.bessel_j0(ember.tensor([1.0], dtype=ember.float16))


def test_until_the_settings_are_checked_the_python_path_runs(monkeypatch):
    """After a setting changes (or under ``choice.only``) the Python path runs, which checks the
    settings; then the compiled function runs the loop itself."""
    calls = []
    unary = vector_math.unary
    monkeypatch.setattr(vector_math, "unary", lambda op, x: calls.append(op) or unary(op, x))
    x = ember.tensor(np.linspace(-2, 2, 15, dtype=np.float32))
    expected = ember.sigmoid(x).numpy()
    calls.clear()   # (whichever path that took)
    choice.settings_changed()
    assert not choice.settled()
    first = ember.sigmoid(x)
    assert calls == ["sigmoid"] and choice.settled()
    second = ember.sigmoid(x)
    assert calls == ["sigmoid"]
    np.testing.assert_array_equal(first.numpy(), expected)
    np.testing.assert_array_equal(second.numpy(), expected)
    with choice.only(choice.NUMPY):
        assert not choice.settled()
        ember.sigmoid(x)
    assert calls == ["sigmoid"]   # (NumPy's kernel, by the Python path)


def test_forward_mode_ad_and_torch_function_take_the_python_path():
    import ember.autograd.forward_ad as fwAD
    from ember.overrides import TorchFunctionMode
    primal, tangent = ember.tensor([0.0, 1.0]), ember.tensor([1.0, 2.0])
    with fwAD.dual_level():
        y = ember.sigmoid(fwAD.make_dual(primal, tangent))
        got = fwAD.unpack_dual(y).tangent.numpy()
    s = 1 / (1 + np.exp(-primal.numpy()))
    np.testing.assert_allclose(got, tangent.numpy() * s * (1 - s), rtol=1e-6)
    seen = []

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Recording():
        ember.sigmoid(primal)
        ember.special.i0e(primal)
    assert seen == ["sigmoid", "i0e"]


def test_a_function_registered_after_the_build_is_filled():
    calls = []

    def python_op(input, *, out=None):
        calls.append(input)
        return input

    entry = _compiled_functions.register(python_op, None, addresses=lambda: (None, None))
    try:
        x = ember.ones(2)
        assert entry[0](x) is x and calls == [x] and entry[0] is python_op   # (filled at its first call)
    finally:
        _compiled_functions._functions[:] = [f for f in _compiled_functions._functions if f.entry is not entry]


# -- functions of two tensors ------------------------------------------------------------------

def _operands(name, dtype, shapes=((3, 5), (3, 5))):
    """Two arrays in the op's range, unlike each other (ties and the special values included)."""
    lo, hi = BINARY_OPS[name][2]
    a = np.linspace(lo, hi, math.prod(shapes[0])).reshape(shapes[0]).astype(dtype)
    b = np.linspace(hi, lo, math.prod(shapes[1])).reshape(shapes[1]).astype(dtype)
    if a.size > 4 and b.size > 4:
        a.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 0.0]
        b.reshape(-1)[:4] = [1.0, np.nan, np.inf, 0.0]
    return a, b


@pytest.mark.parametrize("name", sorted(BINARY_OPS))
def test_the_compiled_binary_function_takes_the_common_case(monkeypatch, name):
    """Two small float32 tensors reach neither the Python path's loop call nor its ufunc."""
    a, b = (ember.tensor(v) for v in _operands(name, "float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: BINARY_OPS[name][0](a, b),
                                        [(vector_math, "binary"), *_ufunc_names(name)])


@pytest.mark.parametrize("name", ["maximum", "atan2", "xlogy", "_python_div_floor"])   # (below their max_elements)
def test_the_compiled_binary_function_takes_large_tensors_of_one_shape(monkeypatch, name):
    a, b = (ember.tensor(v) for v in _operands(name, "float32", ((222, 295), (222, 295))))
    _assert_the_compiled_function_takes(monkeypatch, lambda: BINARY_OPS[name][0](a, b),
                                        [(vector_math, "binary"), *_ufunc_names(name)])


@pytest.mark.parametrize("shapes", [((3, 5), (3, 5)), ((3, 5), (5,)), ((3, 1), (1, 5)), ((), (4,)), ((), ()),
                                    ((222, 295), (222, 295)), ((222, 295), (295,))])   # (past the small arrays)
@pytest.mark.parametrize("name", sorted(BINARY_OPS))
def test_binary_values_are_the_python_paths_and_torchs(name, shapes):
    fn, torch_fn, _, _ = BINARY_OPS[name]
    for dtype in ("float32", "float64"):
        a, b = _operands(name, dtype, shapes)
        compiled = fn(ember.tensor(a), ember.tensor(b))
        with python_paths():
            python = fn(ember.tensor(a), ember.tensor(b))
        assert compiled.dtype == python.dtype and compiled.shape == python.shape
        np.testing.assert_array_equal(compiled.numpy(), python.numpy())
        want = torch_fn(torch.tensor(a), torch.tensor(b)).numpy()
        np.testing.assert_allclose(compiled.numpy(), want, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("grads", ["both", "input", "other"])
@pytest.mark.parametrize("shapes", [((3, 5), (3, 5)), ((3, 5), (1, 5))])
@pytest.mark.parametrize("name", sorted(BINARY_OPS))
def test_binary_nodes_and_gradients_are_the_python_paths(name, shapes, grads):
    fn = BINARY_OPS[name][0]
    a, b = (np.where(np.isfinite(v), v, 0.5).astype(np.float32) for v in _operands(name, "float32", shapes))
    a.reshape(-1)[1] = b.reshape(-1)[1] = 1.5   # (a tie: maximum's and minimum's gradients split there)
    grad = np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(a, requires_grad=grads in ("both", "input"))
            y = ember.tensor(b, requires_grad=grads in ("both", "other"))
            z = fn(x, y)
            node = z.grad_fn
            fields = (type(node).__name__, node.self_shape, node.self_dtype, node.other_shape, node.other_dtype,
                      [t.detach().numpy().tobytes() if t is not None else None for t in node.saved_tensors])
            try:
                z.backward(ember.tensor(grad))
            except RuntimeError as error:   # (an op without a derivative: floor_divide's)
                fields += (str(error),)
            results.append((fields, [t.grad.numpy().tobytes() if t.grad is not None else None for t in (x, y)]))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "int64", "float16", "mixed_dtypes", "number", "transposed", "large",
                                  "no_grad", "scalar_first"])
def test_other_binary_cases_take_the_python_path(case):
    rng = np.random.default_rng(0)
    values, others = rng.uniform(0.1, 0.9, (2, 5, 3)).astype(np.float32)
    large = rng.uniform(0.1, 0.9, (2, 1 << 14)).astype(np.float32)
    make = {"out": lambda: (ember.tensor(values), ember.tensor(others)),
            "int64": lambda: (ember.tensor(np.arange(6)), ember.tensor(np.arange(6) % 4)),
            "float16": lambda: (ember.tensor(values.astype(np.float16)), ember.tensor(others.astype(np.float16))),
            "mixed_dtypes": lambda: (ember.tensor(values), ember.tensor(others.astype(np.float64))),
            "number": lambda: (ember.tensor(values), 0.5),
            "transposed": lambda: (ember.tensor(values).t(), ember.tensor(others).t()),
            "large": lambda: (ember.tensor(large[0]), ember.tensor(large[1])),
            "no_grad": lambda: (ember.tensor(values, requires_grad=True), ember.tensor(others)),
            "scalar_first": lambda: (0.5, ember.tensor(others))}[case]
    for name in ("maximum", "hypot", "logaddexp", "xlogy", "xlog1py"):
        fn = BINARY_OPS[name][0]
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                a, b = make()
                try:
                    if case == "out":
                        out = ember.empty(5, 3)
                        result = fn(a, b, out=out)
                        assert result is out
                    elif case == "no_grad":
                        with ember.no_grad():
                            result = fn(a, b)
                    else:
                        result = fn(a, b)
                except (NotImplementedError, RuntimeError, TypeError) as error:   # (where torch refuses it)
                    results.append((type(error), str(error)))
                    continue
                results.append((result.dtype, result.requires_grad, result.grad_fn, result.numpy().tobytes()))
        assert results[0] == results[1], (name, case)


def test_binary_errors_are_the_python_paths():
    a, b = ember.ones(3), ember.ones(4)
    for fn in (ember.maximum, ember.xlogy, ember.atan2):
        with pytest.raises(RuntimeError, match="must match the size"):
            fn(a, b)
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.maximum(a, 1.0)


def test_binary_functions_cat_and_stack_under_forward_mode_ad_and_torch_function():
    import ember.autograd.forward_ad as fwAD
    from ember.overrides import TorchFunctionMode
    a, b, tangent = ember.tensor([0.5, 2.0]), ember.tensor([1.0, 1.0]), ember.tensor([1.0, 2.0])
    with fwAD.dual_level():
        y = ember.maximum(fwAD.make_dual(a, tangent), b)
        got = fwAD.unpack_dual(y).tangent.numpy()
        joined = fwAD.unpack_dual(ember.cat([fwAD.make_dual(a, tangent), b])).tangent.numpy()
    np.testing.assert_array_equal(got, [0.0, 2.0])
    np.testing.assert_array_equal(joined, [1.0, 2.0, 0.0, 0.0])
    seen = []

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Recording():
        ember.atan2(a, b)
        ember.special.xlog1py(a, b)
        ember.cat([a, b])
        ember.stack([a, b])
    assert seen == ["atan2", "xlog1py", "cat", "stack"]


# -- cat and stack ---------------------------------------------------------------------------

JOINS = {"cat": (ember.cat, torch.cat), "stack": (ember.stack, torch.stack)}


@pytest.mark.parametrize("name", sorted(JOINS))
def test_cat_and_stack_take_the_common_case(monkeypatch, name):
    tensors = [ember.ones(2, 3), ember.zeros(2, 3)]
    _assert_the_compiled_function_takes(monkeypatch, lambda: JOINS[name][0](tensors, 1), [(np, "concatenate")])


def _join_inputs(dtype, shapes):
    rng = np.random.default_rng(0)
    return [(rng.standard_normal(shape) * 4).astype(dtype) for shape in shapes]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16", "complex64"])
@pytest.mark.parametrize("name", sorted(JOINS))
def test_cat_and_stack_values_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = JOINS[name]
    for shapes in ([(3,)], [(2, 3), (2, 3)], [(2, 3, 4)] * 3, [(1, 5), (1, 5)]):
        arrays = _join_inputs(dtype, shapes)
        for dim in range(-len(shapes[0]) - (name == "stack"), len(shapes[0]) + (name == "stack")):
            for sequence in (list, tuple):
                compiled = fn(sequence(ember.tensor(a) for a in arrays), dim)
                with python_paths():
                    python = fn(sequence(ember.tensor(a) for a in arrays), dim)
                want = torch_fn(sequence(torch.tensor(a) for a in arrays), dim)
                assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
                assert compiled.stride() == python.stride() == want.stride()
                np.testing.assert_array_equal(compiled.numpy(), python.numpy())
                np.testing.assert_array_equal(compiled.numpy(), want.numpy())


@pytest.mark.parametrize("grads", ["all", "some"])
@pytest.mark.parametrize("name", sorted(JOINS))
def test_cat_and_stack_nodes_and_gradients_are_the_python_paths(name, grads):
    fn = JOINS[name][0]
    arrays = _join_inputs("float32", [(2, 3)] * 3)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            tensors = [ember.tensor(a, requires_grad=grads == "all" or i == 1) for i, a in enumerate(arrays)]
            out = fn(tensors, 1)
            node = out.grad_fn
            fields = (type(node).__name__, node.dim, node.dtypes, getattr(node, "sizes", None),
                      getattr(node, "used", None), [type(f).__name__ for f, _ in node.next_functions])
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((fields, [t.grad.numpy().tobytes() if t.grad is not None else None for t in tensors]))
    assert results[0] == results[1]


_PROMOTED_JOIN_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("name", sorted(JOINS))
def test_cat_and_stack_of_two_dtypes_are_the_python_paths_and_torchs(monkeypatch, name):
    """Tensors of two dtypes that NumPy promotes as torch does (integers with floats taking the floats' dtype):
    the promoted result, from C, is the Python path's and torch's, and so are the gradients of float inputs."""
    fn, torch_fn = JOINS[name]
    rng = np.random.default_rng(5)
    for first, second in itertools.product(_PROMOTED_JOIN_DTYPES, repeat=2):
        arrays = [(rng.standard_normal((2, 3)) * 4).astype(first), (rng.standard_normal((2, 3)) * 4).astype(second)]
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                tensors = [ember.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
                out = fn(tensors, 1)
                if out.requires_grad:
                    out.backward(ember.ones(out.shape, dtype=out.dtype))
                results.append((out.dtype, out.detach().numpy().tobytes(), type(out.grad_fn).__name__,
                                [(t.grad.dtype, t.grad.numpy().tobytes()) if t.grad is not None else None
                                 for t in tensors]))
        assert results[0] == results[1]
        want = torch_fn([torch.tensor(a) for a in arrays], 1)
        assert str(results[0][0]).split(".")[1] == str(want.dtype).split(".")[1]
        assert results[0][1] == want.numpy().tobytes()
    tensors = [ember.ones(2, 3), ember.ones(2, 3, dtype=ember.int64)]
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(tensors, 1), [(np, "concatenate")])


@pytest.mark.parametrize("case", ["out", "mixed_dtypes", "empty_vector", "zero_dim", "dim_out_of_range",
                                  "sizes_differ", "not_a_tensor", "numpy_dim", "empty_list", "no_grad",
                                  "bfloat16_mixed", "complex_mixed", "uint16_mixed"])
@pytest.mark.parametrize("name", sorted(JOINS))
def test_other_cat_and_stack_cases_take_the_python_path(name, case):
    fn = JOINS[name][0]
    a, b = _join_inputs("float32", [(2, 3), (2, 3)])
    make = {"out": lambda: ([ember.tensor(a), ember.tensor(b)], 0),
            "mixed_dtypes": lambda: ([ember.tensor(a), ember.tensor(b.astype(np.float64))], 0),
            "bfloat16_mixed": lambda: ([ember.tensor(a), ember.tensor(b).bfloat16()], 0),
            "complex_mixed": lambda: ([ember.tensor(a), ember.tensor(b.astype(np.complex64))], 0),
            "uint16_mixed": lambda: ([ember.tensor(a), ember.tensor(b.astype(np.uint16))], 0),
            "empty_vector": lambda: ([ember.tensor(a), ember.tensor(np.zeros(0, np.float32))], 0),
            "zero_dim": lambda: ([ember.tensor(a[0, 0]), ember.tensor(b[0, 0])], 0),
            "dim_out_of_range": lambda: ([ember.tensor(a), ember.tensor(b)], 3),
            "sizes_differ": lambda: ([ember.tensor(a), ember.tensor(b[:1])], 1),
            "not_a_tensor": lambda: ([ember.tensor(a), b], 0),
            "numpy_dim": lambda: ([ember.tensor(a), ember.tensor(b)], np.int64(1)),
            "empty_list": lambda: ([], 0),
            "no_grad": lambda: ([ember.tensor(a, requires_grad=True), ember.tensor(b)], 1)}[case]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            tensors, dim = make()
            try:
                if case == "out":
                    out = ember.empty(0)
                    assert fn(tensors, dim, out=out) is out
                    result = out
                elif case == "no_grad":
                    with ember.no_grad():
                        result = fn(tensors, dim)
                else:
                    result = fn(tensors, dim)
            except (RuntimeError, TypeError, IndexError, ValueError) as error:
                results.append((type(error), str(error)))
                continue
            results.append((result.dtype, result.shape, result.requires_grad, result.numpy().tobytes()))
    assert results[0] == results[1]


# -- reductions ------------------------------------------------------------------------------

REDUCTIONS = {"sum": (ember.sum, torch.sum), "mean": (ember.mean, torch.mean), "amax": (ember.amax, torch.amax),
              "amin": (ember.amin, torch.amin),
              "sum_method": (lambda x, *a: x.sum(*a), lambda x, *a: x.sum(*a)),
              "mean_method": (lambda x, *a: x.mean(*a), lambda x, *a: x.mean(*a)),
              "amax_method": (lambda x, *a: x.amax(*a), lambda x, *a: x.amax(*a)),
              "vector_norm": (lambda x, *a: ember.linalg.vector_norm(x, 2, *a),
                              lambda x, *a: torch.linalg.vector_norm(x, 2, *a)),
              "norm_method": (lambda x, *a: x.norm(2, *a), lambda x, *a: x.norm(2, *a)),
              "nansum": (ember.nansum, torch.nansum)}
# vector norms of orders other than 2 (the compiled function's fourth argument)
REDUCTIONS.update({f"vector_norm_{order}": tuple((lambda lib, p: lambda x, *a: lib.linalg.vector_norm(x, p, *a))(lib, p)
                                                 for lib in (ember, torch))
                   for order, p in (("1", 1), ("1.5", 1.5), ("3", 3), ("0", 0), ("inf", math.inf), ("-inf", -math.inf),
                                    ("-1.5", -1.5), ("0.5", 0.5), ("-1", -1))})
REDUCTIONS["norm_method_1.5"] = (lambda x, *a: x.norm(1.5, *a), lambda x, *a: x.norm(1.5, *a))
# (var's and std's third positional argument is the legacy ``unbiased``: keepdim by name)
REDUCTIONS.update({f"{name}{suffix}": tuple((lambda fn: lambda x, dim=None, keepdim=False: fn(x, dim, keepdim=keepdim))(
    getattr(lib, name) if suffix == "" else getattr(lib.Tensor, name)) for lib in (ember, torch))
    for name in ("var", "std") for suffix in ("", "_method")})
DIMS = [(), (1,), (0, True), (-1, False), ((0, 2),), ([-1, 0], True), ((),), ([],), (None,), (None, True)]


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_take_the_common_case(monkeypatch, name):
    from ember.ops import reduce
    x = ember.tensor(np.arange(1, 13, dtype=np.float32).reshape(3, 4))   # (no zero: a negative order's case)
    _assert_the_compiled_function_takes(monkeypatch, lambda: REDUCTIONS[name][0](x, 1), [(reduce, "_reduce_dims")])


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_values_are_the_python_paths_and_torchs(name, layout):
    for dtype in ("float32", "float64"):
        values = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(dtype)
        if layout == "transposed":
            values = values.transpose(2, 1, 0)
        _reductions_are_the_python_paths_and_torchs(name, REDUCTIONS[name], values, DIMS, atol=1e-6)


def _reductions_are_the_python_paths_and_torchs(name, fns, values, dims, atol):
    """``fn(values, *args)`` for each of ``dims`` (amax's and amin's without None) with the compiled
    functions: the Python paths' bits, and torch's values within ``atol``."""
    fn, torch_fn = fns
    for args in dims:
        if ("amax" in name or "amin" in name) and args and args[0] is None:
            continue
        compiled = fn(ember.tensor(values), *args)
        with python_paths():
            python = fn(ember.tensor(values), *args)
        want = torch_fn(torch.tensor(values), *args)
        assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape), args
        np.testing.assert_array_equal(compiled.numpy(), python.numpy())
        np.testing.assert_allclose(compiled.numpy(), want.numpy(), rtol=1e-5, atol=atol)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_nodes_and_gradients_are_the_python_paths(name):
    fn = REDUCTIONS[name][0]
    values = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    values[0, 0, :2] = 3.0   # (ties: amax's and amin's gradient shared between them)
    for args in DIMS:
        if ("amax" in name or "amin" in name) and args and args[0] is None:
            continue
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(values, requires_grad=True)
                y = fn(x, *args)
                node = y.grad_fn
                fields = {key: getattr(node, key, None) for key in ("in_shape", "in_dtype", "dims", "keepdim", "count",
                                                                    "dof", "ord")}
                saved = [t.detach().numpy().tobytes() for t in getattr(node, "saved_tensors", ())]
                y.backward(ember.tensor(np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(y.shape)))
                grad = None if x.grad is None else x.grad.numpy().tobytes()   # (the 0-norm's: none)
                results.append((type(node).__name__, fields, saved, grad))
        assert results[0] == results[1], args


@pytest.mark.parametrize("case", ["int64", "float16", "dtype", "out", "out_of_range", "repeated_dims", "empty",
                                  "zero_dim", "large", "axis_name", "int_keepdim", "numpy_dim", "no_grad", "nan",
                                  "transposed_nan"])
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "std", "vector_norm", "nansum", "vector_norm_-1.5",
                                  "vector_norm_inf"])
def test_other_reduction_cases_take_the_python_path(name, case):
    fn = REDUCTIONS[name][0]
    values = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    with_nan = np.where(values > 1, np.nan, values).astype(np.float32)
    call = {"nan": lambda: fn(ember.tensor(with_nan), 1),
            "transposed_nan": lambda: fn(ember.tensor(with_nan).t(), 0),
            "int64": lambda: fn(ember.tensor(np.arange(12).reshape(3, 4)), 1),
            "float16": lambda: fn(ember.tensor(values.astype(np.float16)), 1),
            "dtype": lambda: fn(ember.tensor(values), 1, dtype=ember.float64),
            "out": lambda: fn(ember.tensor(values), 1, out=ember.empty(3)),
            "out_of_range": lambda: fn(ember.tensor(values), 2),
            "repeated_dims": lambda: fn(ember.tensor(values), (1, -1)),
            "empty": lambda: fn(ember.tensor(np.zeros((0, 4), np.float32)), 1),
            "zero_dim": lambda: fn(ember.tensor(values[0, 0]), 0),
            "large": lambda: fn(ember.tensor(np.ones((64, 64), np.float32)), 0),
            "axis_name": lambda: fn(ember.tensor(values), axis=1),
            "int_keepdim": lambda: fn(ember.tensor(values), 1, 1),
            "numpy_dim": lambda: fn(ember.tensor(values), np.int64(1)),
            "no_grad": lambda: _no_grad(fn, ember.tensor(values, requires_grad=True), 1)}[case]
    results = _on_both_paths(call)
    assert results[0] == results[1]


def _no_grad(fn, *args):
    with ember.no_grad():
        return fn(*args)


# the reductions whose compiled functions take a large float32 tensor: over every dim on the whole-reduction
# loops (sums, means, nansums, 2-norms), or at any size on NumPy's reduction (amax, amin, max and min of all)
LARGE_REDUCTIONS = {name: REDUCTIONS[name] for name in ("sum", "mean", "nansum", "vector_norm", "amax", "amin",
                                                         "sum_method", "mean_method", "norm_method")}
LARGE_REDUCTIONS["max_all"] = (ember.max, torch.max)
LARGE_DIMS = [(), (None,), ((),), ((0, 1),), ([1, 0],), (None, True), (1,), (0, True)]


def _large_values(nan=False, rows=222, columns=295):
    values = np.random.default_rng(5).standard_normal((rows, columns)).astype(np.float32)
    if nan:
        values[7, 11] = values[rows - 1, 3] = np.nan
    return values


@pytest.mark.parametrize("name", sorted(LARGE_REDUCTIONS))
def test_large_reductions_over_every_dim_take_the_common_case(monkeypatch, name):
    from ember.ops import reduce
    x = ember.tensor(_large_values())
    _assert_the_compiled_function_takes(monkeypatch, lambda: LARGE_REDUCTIONS[name][0](x), [(reduce, "make")])


@pytest.mark.parametrize("name", ["sum", "mean", "vector_norm", "sum_method", "mean_method", "norm_method"])
def test_large_reductions_over_rows_take_the_common_case(monkeypatch, name):
    from ember.ops import reduce
    x = ember.tensor(_large_values())
    _assert_the_compiled_function_takes(monkeypatch, lambda: LARGE_REDUCTIONS[name][0](x, -1), [(reduce, "make")])


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "short", "narrow", "long"])
@pytest.mark.parametrize("name", sorted(LARGE_REDUCTIONS))
def test_large_reduction_values_are_the_python_paths_and_torchs(name, layout, nan):
    """Every dim (the whole-reduction loops), the rows (the row loop, rows over its chunk too; narrow ones on
    einsum), the columns."""
    # (short: under the sum's loop; long: rows of three of the row loop's chunks)
    rows, columns = {"short": (222, 71), "narrow": (4000, 16), "long": (40, 2365)}.get(layout, (222, 295))
    values = _large_values(nan, rows, columns)
    if layout == "transposed":
        values = values.T
    # (sums of thousands of terms, in different orders: within their rounding)
    _reductions_are_the_python_paths_and_torchs(name, LARGE_REDUCTIONS[name], values,
                                                LARGE_DIMS if name != "max_all" else [()], atol=1e-4)


@pytest.mark.parametrize("name", sorted(LARGE_REDUCTIONS))
def test_large_reduction_nodes_and_gradients_are_the_python_paths(name):
    fn = LARGE_REDUCTIONS[name][0]
    values = _large_values()
    values[0, :2] = 9.0   # (ties: amax's gradient shared between them)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(values, requires_grad=True)
            y = fn(x)
            node = y.grad_fn
            fields = {key: getattr(node, key, None) for key in ("in_shape", "in_dtype", "dims", "keepdim", "count",
                                                                "ord")}
            saved = [t.detach().numpy().tobytes() for t in getattr(node, "saved_tensors", ())]
            y.backward(ember.tensor(np.float32(0.5)))
            results.append((type(node).__name__, fields, saved, y.detach().numpy().tobytes(), x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["sum", "mean", "nansum", "vector_norm"])
def test_large_reductions_with_a_library_forced_take_the_python_path(monkeypatch, name):
    """Under ``choice.only`` the kernel choice is not settled: the Python op runs the forced library's kernel."""
    from ember.ops import reduce
    x = ember.tensor(_large_values())
    calls = []
    real = reduce.make
    monkeypatch.setattr(reduce, "make", lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    for library in (choice.NUMPY, choice.ONEDNN):
        with choice.only(library):
            LARGE_REDUCTIONS[name][0](x)
    assert len(calls) == 2

# -- max and min along a dim -----------------------------------------------------------------

EXTREMES = {"max": (ember.max, torch.max), "min": (ember.min, torch.min),
            "max_method": (lambda x, *a: x.max(*a), lambda x, *a: x.max(*a))}


def _extreme_values(dtype):
    """(2, 3, 4) values with ties (and NaN for floats) along every dim."""
    values = np.random.default_rng(3).integers(-2, 3, (2, 3, 4)).astype(dtype)
    if values.dtype.kind == "f":
        values[1, 2, 1] = values[0, 1, 3] = np.nan
    return values


@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_max_and_min_along_a_dim_take_the_common_case(monkeypatch, name):
    from ember.ops import reduce
    x = ember.tensor(_extreme_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: EXTREMES[name][0](x, 1), [(reduce, "_extreme_along")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8"])
@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_max_and_min_along_a_dim_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = EXTREMES[name]
    values = _extreme_values(dtype)
    for source in (values, values.transpose(2, 0, 1)):
        for dim in range(-3, 3):
            for keepdim in (False, True):
                compiled = fn(ember.tensor(source), dim, keepdim)
                with python_paths():
                    python = fn(ember.tensor(source), dim, keepdim)
                want = torch_fn(torch.tensor(source), dim, keepdim)
                assert type(compiled) is type(python)
                for got, same, expected in zip(compiled, python, want):
                    assert got.dtype == same.dtype and got.shape == same.shape == tuple(expected.shape)
                    assert got.stride() == same.stride()
                    np.testing.assert_array_equal(got.numpy(), same.numpy())
                    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_max_and_min_along_a_dim_nodes_and_gradients_are_the_python_paths(name):
    fn = EXTREMES[name][0]
    values = _extreme_values("float32")
    for dim, keepdim in ((1, False), (-1, True), (0, False)):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(values, requires_grad=True)
                out, indices = fn(x, dim, keepdim)
                node = out.grad_fn
                fields = (type(node).__name__, node.dim, node.keepdim, node.in_shape,
                          node.saved_tensors[0].numpy().tobytes(), indices.requires_grad)
                out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
                results.append((fields, x.grad.numpy().tobytes()))
        assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "bool", "complex", "empty", "zero_dim", "out_of_range", "numpy_dim",
                                  "tuple_dim", "int_keepdim", "large", "bfloat16", "no_grad"])
def test_other_max_and_min_cases_take_the_python_path(case):
    values = _extreme_values("float32")
    call = {"out": lambda fn: fn(ember.tensor(values), 1, out=(ember.empty(0), ember.empty(0, dtype=ember.int64))),
            "bool": lambda fn: fn(ember.tensor(values > 0), 1),
            "complex": lambda fn: fn(ember.tensor(values.astype(np.complex64)), 1),
            "empty": lambda fn: fn(ember.tensor(np.zeros((0, 3), np.float32)), 1),
            "zero_dim": lambda fn: fn(ember.tensor(values[0, 0, 0]), 0),
            "out_of_range": lambda fn: fn(ember.tensor(values), 3),
            "numpy_dim": lambda fn: fn(ember.tensor(values), np.int64(1)),
            "tuple_dim": lambda fn: fn(ember.tensor(values), (1,)),
            "int_keepdim": lambda fn: fn(ember.tensor(values), 1, 1),
            "large": lambda fn: fn(ember.tensor(np.ones((128, 128), np.float32)), 0),
            "bfloat16": lambda fn: fn(ember.tensor(values).to(ember.bfloat16), 1),
            "no_grad": lambda fn: _no_grad(fn, ember.tensor(values, requires_grad=True), 1)}[case]
    for fn in (ember.max, ember.min):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                try:
                    values_t, indices = call(fn)
                except (RuntimeError, TypeError, IndexError) as error:
                    results.append((type(error), str(error)))
                    continue
                results.append([(t.dtype, t.shape, t.requires_grad, t.numpy().tobytes()) for t in (values_t, indices)])
        assert results[0] == results[1], case


# -- small matrix products -------------------------------------------------------------------

PRODUCTS = {"mm": (ember.mm, torch.mm, 2), "bmm": (ember.bmm, torch.bmm, 3), "matmul": (ember.matmul, torch.matmul, 2),
            "operator": (lambda a, b: a @ b, lambda a, b: a @ b, 2),
            "mm_method": (lambda a, b: a.mm(b), lambda a, b: a.mm(b), 2)}


def _factors(ndim, dtype="float32", k=4):
    rng = np.random.default_rng(4)
    lead = (2,) if ndim == 3 else ()
    return rng.standard_normal(lead + (3, k)).astype(dtype), rng.standard_normal(lead + (k, 5)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_by_numpys_blas_routines_are_numpys_bits(dtype):
    """The compiled products call the CBLAS routine NumPy's matmul and dot call (gemm, gemv, dot) where
    the operands are laid out as NumPy's loop takes them, and NumPy's ufunc elsewhere (a row or column of
    one, an inner size of one, strided or overlapping operands, a matrix times its own transpose, where
    NumPy takes syrk): NumPy's bits in every case, long inner sizes included."""
    rng = np.random.default_rng(14)
    shapes = [((3, 5), (5, 2)), ((2, 64), (64, 3)), ((7, 33), (33, 9)), ((4, 200), (200, 5)), ((1, 5), (5, 3)),
              ((3, 5), (5, 1)), ((5,), (5,)), ((64,), (64,)), ((3, 40), (40,)), ((40,), (40, 3)), ((1, 40), (40,)),
              ((40,), (40, 1)), ((2,), (2,)), ((1,), (1,)), ((3, 1), (1,)), ((2, 3, 40), (2, 40, 4)),
              ((2, 1, 8), (2, 8, 3))]
    for xs, ys in shapes:
        for _ in range(3):
            a, b = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ys).astype(dtype)
            x, y = ember.tensor(a), ember.tensor(b)
            got = (ember.bmm(x, y) if len(xs) == 3 else ember.matmul(x, y)).numpy()
            np.testing.assert_array_equal(got, np.matmul(a, b))
            if len(xs) == len(ys) == 1:
                np.testing.assert_array_equal(ember.dot(x, y).numpy(), np.dot(a, b))
                np.testing.assert_array_equal(ember.vdot(x, y).numpy(), np.vdot(a, b))
            if len(xs) == 2 and len(ys) == 1:
                np.testing.assert_array_equal(ember.mv(x, y).numpy(), np.matmul(a, b))
            if len(xs) == len(ys) == 2:
                c = rng.standard_normal((xs[0], ys[1])).astype(dtype)
                got = ember.addmm(ember.tensor(c), x, y, beta=0.5, alpha=2.0).numpy()
                want = np.matmul(a, b)
                want *= 2.0
                want += c * 0.5
                np.testing.assert_array_equal(got, want)
    a = rng.standard_normal((6, 40)).astype(dtype)
    x = ember.tensor(a)
    np.testing.assert_array_equal((x @ x.mT).numpy(), a @ a.T)   # (NumPy's syrk)
    np.testing.assert_array_equal((x[:, ::2] @ x[:3, ::2].mT).numpy(), a[:, ::2] @ a[:3, ::2].T)   # (strided)
    np.testing.assert_array_equal((x[:3] @ x[1:4].mT.contiguous()).numpy(), a[:3] @ np.ascontiguousarray(a[1:4].T))


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_small_products_take_the_common_case(monkeypatch, name):
    from ember._backend import products
    fn, _, ndim = PRODUCTS[name]
    a, b = (ember.tensor(v) for v in _factors(ndim))
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(a, b), [(products, "matmul")])


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_small_products_are_the_python_paths_and_torchs(name, layout):
    fn, torch_fn, ndim = PRODUCTS[name]
    for dtype in ("float32", "float64"):
        a, b = _factors(ndim, dtype)
        if layout == "transposed":   # (the same values, column-major)
            a, b = (np.ascontiguousarray(v.swapaxes(-1, -2)).swapaxes(-1, -2) for v in (a, b))
        compiled = fn(ember.tensor(a), ember.tensor(b))
        with python_paths():
            python = fn(ember.tensor(a), ember.tensor(b))
        want = torch_fn(torch.tensor(a), torch.tensor(b))
        assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
        np.testing.assert_array_equal(compiled.numpy(), python.numpy())
        np.testing.assert_allclose(compiled.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_matmul_is_the_python_paths_and_torchs(monkeypatch, dtype):
    """matmul of two float16 or bfloat16 tensors multiplies their float32 forms in C (NumPy's routine
    or ufunc, as for float32) and casts the product back, as the Python op does."""
    from ember._backend import products
    rng = np.random.default_rng(5)
    shapes = [((3, 5), (5, 2)), ((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 2)), ((1,), (1,)), ((3, 1), (1, 2)),
              ((2, 3, 4), (2, 4, 2)), ((1, 40), (40, 3))]
    for xs, ys in shapes:
        a, b = (ember.tensor(rng.standard_normal(shape).astype(np.float32)).to(getattr(ember, dtype))
                for shape in (xs, ys))
        results = _on_both_paths(lambda: ember.matmul(a, b))
        assert results[0] == results[1]
        want = torch.matmul(*(torch.tensor(t.float().numpy()).to(getattr(torch, dtype)) for t in (a, b)))
        np.testing.assert_array_equal(ember.matmul(a, b).float().numpy(), want.float().numpy())
    a, b = (ember.tensor(v).to(getattr(ember, dtype)) for v in _factors(2))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.matmul(a, b), a @ b), [(products, "matmul")])
    results = _on_both_paths(lambda: ember.matmul(a.requires_grad_(), b))   # (the Python op's composite records)
    assert results[0] == results[1] and results[0][2]


@pytest.mark.parametrize("grads", ["both", "input", "other"])
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_small_products_nodes_and_gradients_are_the_python_paths(name, grads):
    fn, _, ndim = PRODUCTS[name]
    a, b = _factors(ndim)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(a, requires_grad=grads in ("both", "input"))
            y = ember.tensor(b, requires_grad=grads in ("both", "other"))
            z = fn(x, y)
            node = z.grad_fn
            saved = [t.detach().numpy().tobytes() if t is not None else None for t in node.saved_tensors]
            z.backward(ember.tensor(np.linspace(-1, 1, z.numel(), dtype=np.float32).reshape(z.shape)))
            results.append((type(node).__name__, saved,
                            [t.grad.numpy().tobytes() if t.grad is not None else None for t in (x, y)]))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "out_dtype", "int64", "float16", "mixed_dtypes", "inner_one", "large",
                                  "wrong_shapes", "vector", "batched_matmul", "no_grad", "flop_counter"])
def test_other_small_product_cases_take_the_python_path(case):
    from ember.utils.flop_counter import FlopCounterMode
    a, b = _factors(2)
    a3, b3 = _factors(3)
    big = np.ones((64, 128), np.float32)
    call = {"out": lambda fn: fn(ember.tensor(a), ember.tensor(b), out=ember.empty(0)),
            "out_dtype": lambda fn: fn(ember.tensor(a), ember.tensor(b), out_dtype=ember.float32),
            "int64": lambda fn: fn(ember.tensor(a.astype(np.int64)), ember.tensor(b.astype(np.int64))),
            "float16": lambda fn: fn(ember.tensor(a.astype(np.float16)), ember.tensor(b.astype(np.float16))),
            "mixed_dtypes": lambda fn: fn(ember.tensor(a), ember.tensor(b.astype(np.float64))),
            "inner_one": lambda fn: fn(ember.tensor(a[:, :1]), ember.tensor(b[:1])),
            "large": lambda fn: fn(ember.tensor(big), ember.tensor(big.T.copy())),
            "wrong_shapes": lambda fn: fn(ember.tensor(a), ember.tensor(a)),
            "vector": lambda fn: fn(ember.tensor(a), ember.tensor(b[:, 0])),
            "batched_matmul": lambda fn: fn(ember.tensor(a3, requires_grad=True), ember.tensor(b3)),
            "no_grad": lambda fn: _no_grad(fn, ember.tensor(a, requires_grad=True), ember.tensor(b)),
            "flop_counter": None}[case]
    for fn in (ember.mm, ember.matmul):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                counts = None
                try:
                    if case == "flop_counter":
                        with FlopCounterMode(display=False) as counter:
                            result = fn(ember.tensor(a), ember.tensor(b))
                        counts = counter.get_total_flops()
                    else:
                        result = call(fn)
                except (RuntimeError, TypeError, ValueError) as error:
                    results.append((type(error), str(error)))
                    continue
                results.append((result.dtype, result.shape, result.requires_grad, type(result.grad_fn).__name__,
                                result.detach().numpy().tobytes(), counts))
        assert results[0] == results[1], (fn, case)


# -- where -----------------------------------------------------------------------------------

def _where_operands(dtype="float32"):
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((2, 3, 4)).astype(dtype)
    return rng.random((3, 4)) > 0.5, x, y


WHERE_FORMS = {   # (condition, x, y) -> (condition, input, other), as arrays, numbers or None
    "tensors": lambda c, x, y: (c, x, y), "number_other": lambda c, x, y: (c, x, 0.5),
    "number_input": lambda c, x, y: (c, -2, y), "broadcast": lambda c, x, y: (c, x[:, :1], y[0]),
    "condition_broadcast": lambda c, x, y: (c[0], x, y), "rounded_number": lambda c, x, y: (c, x, 0.1),
    "nan_number": lambda c, x, y: (c, math.nan, y), "large_int": lambda c, x, y: (c, x, 2 ** 53 + 1)}


def _tensor_or(value, lib, requires_grad=False):
    if isinstance(value, np.ndarray):
        return lib.tensor(value, requires_grad=requires_grad and value.dtype.kind == "f")
    return value


def test_where_takes_the_common_case(monkeypatch):
    c, x, y = (ember.tensor(v) for v in _where_operands())
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.where(c, x, y), x.where(c, 0.0)), [(np, "where")])


@pytest.mark.parametrize("form", sorted(WHERE_FORMS))
def test_where_is_the_python_paths_and_torchs(form):
    for dtype in ("float32", "float64"):
        operands = WHERE_FORMS[form](*_where_operands(dtype))
        compiled = ember.where(*(_tensor_or(v, ember) for v in operands))
        with python_paths():
            python = ember.where(*(_tensor_or(v, ember) for v in operands))
        want = torch.where(*(_tensor_or(v, torch) for v in operands))
        assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
        assert str(compiled.dtype) == str(want.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(compiled.numpy(), python.numpy())
        np.testing.assert_array_equal(compiled.numpy(), want.numpy())


@pytest.mark.parametrize("form", sorted(WHERE_FORMS))
def test_where_nodes_and_gradients_are_the_python_paths(form):
    operands = WHERE_FORMS[form](*_where_operands())
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            tensors = [_tensor_or(v, ember, requires_grad=True) for v in operands]
            out = ember.where(*tensors)
            node = out.grad_fn
            fields = (type(node).__name__, node.shapes, node.dtypes, node.saved_tensors[0].numpy().tobytes(),
                      [type(fn).__name__ for fn, _ in node.next_functions])
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((fields, [t.grad.numpy().tobytes() for t in tensors[1:] if isinstance(t, ember.Tensor)]))
    assert results[0] == results[1]


@pytest.mark.parametrize("value", [1e300, -1e39])
def test_where_of_a_number_past_float32_raises_torchs_error(value):
    c, x, _ = _where_operands()
    errors = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as caught:
            lib.where(lib.tensor(c), lib.tensor(x), value)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("case", ["out", "int64", "float16", "mixed_dtypes", "uint8_condition", "float_condition",
                                  "large", "shapes_differ", "one_argument", "both_numbers", "no_grad",
                                  "number_overflows_float32", "number_first_overflows_float32", "huge_int"])
def test_other_where_cases_take_the_python_path(case):
    c, x, y = _where_operands()
    big = np.ones(1 << 14, np.float32)
    call = {"number_overflows_float32": lambda: ember.where(ember.tensor(c), ember.tensor(x), 1e300),
            "number_first_overflows_float32": lambda: ember.where(ember.tensor(c), -1e39, ember.tensor(x)),
            "huge_int": lambda: ember.where(ember.tensor(c), ember.tensor(x), 2 ** 1100),
            "out": lambda: ember.where(ember.tensor(c), ember.tensor(x), ember.tensor(y), out=ember.empty(0)),
            "int64": lambda: ember.where(ember.tensor(c), ember.tensor(x.astype(np.int64)), ember.tensor(y > 0)),
            "float16": lambda: ember.where(ember.tensor(c), ember.tensor(x.astype(np.float16)), 0.5),
            "mixed_dtypes": lambda: ember.where(ember.tensor(c), ember.tensor(x), ember.tensor(y.astype(np.float64))),
            "uint8_condition": lambda: ember.where(ember.tensor(c.astype(np.uint8)), ember.tensor(x), 0.0),
            "float_condition": lambda: ember.where(ember.tensor(x), ember.tensor(x), 0.0),
            "large": lambda: ember.where(ember.tensor(big > 0), ember.tensor(big), 0.0),
            "shapes_differ": lambda: ember.where(ember.tensor(c), ember.tensor(x), ember.tensor(y[:2, :3])),
            "one_argument": lambda: ember.where(ember.tensor(c)),
            "both_numbers": lambda: ember.where(ember.tensor(c), 1.0, 0.0),
            "no_grad": lambda: _no_grad(ember.where, ember.tensor(c), ember.tensor(x, requires_grad=True), 0.0)}[case]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    result = call()
                except (RuntimeError, TypeError, OverflowError) as error:
                    results.append((type(error), str(error)))
                    continue
            if isinstance(result, tuple):
                results.append([t.numpy().tobytes() for t in result])
                continue
            results.append((result.dtype, result.shape, result.requires_grad, result.numpy().tobytes(),
                            [str(w.message) for w in caught]))
    assert results[0] == results[1]


# -- gather ----------------------------------------------------------------------------------

def _gather_operands(dtype="float32"):
    """A (3, 4, 5) input and an index along each dim: of the input's shape but along the dim,
    or smaller in the other dims too (repeats included)."""
    rng = np.random.default_rng(7)
    values = rng.standard_normal((3, 4, 5)) * 4
    values = values.astype(dtype) if np.dtype(dtype).kind != "b" else values > 0
    indices = []
    for dim in range(3):
        for shape in [(3, 4, 5)[:dim] + (6,) + (3, 4, 5)[dim + 1:], (2, 1, 2)]:
            indices.append((dim, rng.integers(0, values.shape[dim], shape)))
    return values, indices


GATHERS = {"function": (ember.gather, torch.gather), "method": (lambda x, d, i: x.gather(d, i),
                                                                 lambda x, d, i: x.gather(d, i))}


def test_gather_takes_the_common_case(monkeypatch):
    from ember.ops import index
    values, indices = _gather_operands()
    x, (dim, idx) = ember.tensor(values), indices[0]
    i = ember.tensor(idx)
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.gather(x, dim, i), x.gather(dim - 3, i)),
                                        [(index, "_gather_kernel")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(GATHERS))
def test_gather_is_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = GATHERS[name]
    values, indices = _gather_operands(dtype)
    for source in (values, values.transpose(2, 0, 1).copy().transpose(1, 2, 0)):
        for dim, idx in indices:
            for index_values in (idx, np.asfortranarray(idx)):
                compiled = fn(ember.tensor(source), dim, ember.tensor(index_values))
                with python_paths():
                    python = fn(ember.tensor(source), dim, ember.tensor(index_values))
                want = torch_fn(torch.tensor(source), dim, torch.tensor(index_values))
                assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
                assert compiled.stride() == python.stride()
                np.testing.assert_array_equal(compiled.numpy(), python.numpy())
                np.testing.assert_array_equal(compiled.numpy(), want.numpy())


def test_gather_nodes_and_gradients_are_the_python_paths():
    values, indices = _gather_operands()
    for dim, idx in indices:
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(values, requires_grad=True)
                out = ember.gather(x, dim - 3, ember.tensor(idx))
                node = out.grad_fn
                fields = (type(node).__name__, node.dim, node.in_shape, node._saved_sparse_grad,
                          node.saved_tensors[0].numpy().tobytes(), [type(fn).__name__ for fn, _ in node.next_functions])
                out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
                results.append((fields, x.grad.numpy().tobytes()))
        assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "sparse_grad", "int32_index", "negative_index", "index_past_the_end",
                                  "index_larger", "index_dims", "zero_dim", "empty_index", "complex", "bfloat16",
                                  "numpy_dim", "dim_out_of_range", "index_not_a_tensor", "large", "no_grad"])
def test_other_gather_cases_take_the_python_path(case):
    values, _ = _gather_operands()
    x, idx = ember.tensor(values), np.zeros((3, 4, 2), np.int64)
    call = {"out": lambda: ember.gather(x, 2, ember.tensor(idx), out=ember.empty(0)),
            "sparse_grad": lambda: ember.gather(x, 2, ember.tensor(idx), sparse_grad=True),
            "int32_index": lambda: ember.gather(x, 2, ember.tensor(idx.astype(np.int32))),
            "negative_index": lambda: ember.gather(x, 2, ember.tensor(idx - 1)),
            "index_past_the_end": lambda: ember.gather(x, 2, ember.tensor(idx + 5)),
            "index_larger": lambda: ember.gather(x, 2, ember.tensor(np.zeros((4, 4, 2), np.int64))),
            "index_dims": lambda: ember.gather(x, 1, ember.tensor(idx[0])),
            "zero_dim": lambda: ember.gather(ember.tensor(values[0, 0, 0]), 0, ember.tensor(np.int64(0))),
            "empty_index": lambda: ember.gather(x, 1, ember.tensor(np.zeros((3, 0, 5), np.int64))),
            "complex": lambda: ember.gather(ember.tensor(values.astype(np.complex64)), 2, ember.tensor(idx)),
            "bfloat16": lambda: ember.gather(x.to(ember.bfloat16), 2, ember.tensor(idx)),
            "numpy_dim": lambda: ember.gather(x, np.int64(2), ember.tensor(idx)),
            "dim_out_of_range": lambda: ember.gather(x, 3, ember.tensor(idx)),
            "index_not_a_tensor": lambda: ember.gather(x, 2, idx),
            "large": lambda: ember.gather(ember.tensor(np.ones((128, 128), np.float32)), 0,
                                          ember.tensor(np.zeros((128, 128), np.int64))),
            "no_grad": lambda: _no_grad(ember.gather, ember.tensor(values, requires_grad=True), 2,
                                        ember.tensor(idx))}[case]
    results = _on_both_paths(call)
    assert results[0] == results[1], case


# -- scatter and scatter_add ---------------------------------------------------------------------

SCATTERS = {   # name: (ember's call, torch's) of (input, dim, index, src)
    "scatter": (ember.scatter, torch.scatter), "scatter_add": (ember.scatter_add, torch.scatter_add),
    "scatter_method": (lambda x, d, i, s: x.scatter(d, i, s), lambda x, d, i, s: x.scatter(d, i, s)),
    "scatter_add_method": (lambda x, d, i, s: x.scatter_add(d, i, s), lambda x, d, i, s: x.scatter_add(d, i, s))}


def _scatter_operands(dtype="float32", distinct=False):
    """A (3, 4, 5) input, and along each dim an index (repeats included unless ``distinct``) with
    a src of its shape or larger."""
    rng = np.random.default_rng(9)
    values = rng.standard_normal((3, 4, 5)) * 4
    values = values.astype(dtype) if np.dtype(dtype).kind != "b" else values > 0
    cases = []
    for dim in range(3):
        for shape in [(3, 4, 5)[:dim] + (2,) + (3, 4, 5)[dim + 1:], (2, 1, 2)]:
            if distinct:
                index = np.argsort(rng.random(shape[:dim] + (values.shape[dim],) + shape[dim + 1:]), axis=dim)
                index = index[tuple(slice(0, n) for n in shape)]
            else:
                index = rng.integers(0, values.shape[dim], shape)
            src = rng.standard_normal((3, 4, 5) if shape == (2, 1, 2) else shape) * 4
            cases.append((dim, index, src.astype(dtype) if np.dtype(dtype).kind != "b" else src > 0))
    return values, cases


def test_scatter_takes_the_common_case(monkeypatch):
    from ember.ops import index
    values, cases = _scatter_operands()
    x, (dim, idx, src) = ember.tensor(values), cases[0]
    i, s = ember.tensor(idx), ember.tensor(src)
    _assert_the_compiled_function_takes(
        monkeypatch, lambda: (ember.scatter(x, dim, i, s), x.scatter(dim - 3, i, 0.5), ember.scatter_add(x, dim, i, s)),
        [(index, "_scatter_data")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_scatter_is_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = SCATTERS[name]
    for distinct in (False, True):
        values, cases = _scatter_operands(dtype, distinct)
        for source in (values, np.asfortranarray(values)):
            for dim, idx, src in cases:
                for s in ((src, np.asfortranarray(src)) if "add" in name else (src, np.asfortranarray(src), 0.5, -3)):
                    def call(lib):
                        operand = lib.tensor(s) if isinstance(s, np.ndarray) else s
                        return (fn if lib is ember else torch_fn)(lib.tensor(source), dim, lib.tensor(idx), operand)
                    try:
                        want = call(torch)
                    except RuntimeError:   # (a number torch's dtype cannot take, or a sum of bools)
                        continue
                    compiled = call(ember)
                    with python_paths():
                        python = call(ember)
                    assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
                    assert compiled.stride() == python.stride()
                    np.testing.assert_array_equal(compiled.numpy(), python.numpy())
                    if distinct or "add" in name:   # (torch does not define which of repeated writes is kept)
                        np.testing.assert_allclose(compiled.numpy().astype(np.float64),
                                                   want.numpy().astype(np.float64), rtol=1e-3, atol=1e-3)


def _large_picks_operands():
    """A (222, 295) input (past the small arrays), a (222, 1) index along dim 1 (repeats included) and a larger
    (222, 222) src, as the op table's ``scatter_add_src_larger`` at its medium size."""
    rng = np.random.default_rng(19)
    values = rng.standard_normal((222, 295)).astype(np.float32)
    return values, rng.integers(0, 295, (222, 1)), rng.standard_normal((222, 222)).astype(np.float32)


_LARGE_PICKS = {
    "gather": lambda lib, x, i, s: lib.gather(x, 1, i), "scatter": lambda lib, x, i, s: lib.scatter(x, 1, i, s),
    "scatter_number": lambda lib, x, i, s: lib.scatter(x, 1, i, 2.5),
    "scatter_add": lambda lib, x, i, s: lib.scatter_add(x, 1, i, s),
    "scatter_reduce": lambda lib, x, i, s: lib.scatter_reduce(x, 1, i, s, "sum"),
}


@pytest.mark.parametrize("name", sorted(_LARGE_PICKS))
def test_small_indices_into_large_inputs_take_the_common_case_as_the_python_paths_and_torch(monkeypatch, name):
    from ember.ops import index
    values, idx, src = _large_picks_operands()
    call = _LARGE_PICKS[name]
    x, i, s = ember.tensor(values), ember.tensor(idx), ember.tensor(src)
    _assert_the_compiled_function_takes(monkeypatch, lambda: call(ember, x, i, s),
                                        [(index, "_gather_kernel" if name == "gather" else "_scatter_data")])
    results = _on_both_paths(lambda: call(ember, ember.tensor(values), ember.tensor(idx), ember.tensor(src)))
    assert results[0] == results[1]
    want = call(torch, torch.tensor(values), torch.tensor(idx), torch.tensor(src)).numpy()
    np.testing.assert_array_equal(np.frombuffer(results[0][3], np.float32).reshape(want.shape), want)


@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_scatter_nodes_and_gradients_are_the_python_paths(name):
    fn = SCATTERS[name][0]
    values, cases = _scatter_operands()
    for dim, idx, src in cases:
        for number in ((False,) if "add" in name else (False, True)):
            results = []
            for python in (False, True):
                with python_paths() if python else contextlib.nullcontext():
                    x = ember.tensor(values, requires_grad=True)
                    s = 1.5 if number else ember.tensor(src, requires_grad=True)
                    out = fn(x, dim - 3, ember.tensor(idx), s)
                    node = out.grad_fn
                    fields = (type(node).__name__, node.dim, getattr(node, "src_shape", None),
                              node.saved_tensors[0].numpy().tobytes(),
                              [type(f).__name__ for f, _ in node.next_functions])
                    out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
                    results.append((fields, x.grad.numpy().tobytes(), None if number else s.grad.numpy().tobytes()))
            assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "reduce", "value_keyword", "int32_index", "negative_index",
                                  "index_past_the_end", "index_larger", "src_smaller", "src_dtype", "src_dims",
                                  "number_into_ints", "number_overflows", "bool_number", "numpy_number", "complex",
                                  "bfloat16", "zero_dim", "empty_index", "numpy_dim", "dim_out_of_range",
                                  "src_not_a_tensor", "large", "no_grad"])
def test_other_scatter_cases_take_the_python_path(case):
    values, _ = _scatter_operands()
    x, idx, src = ember.tensor(values), np.zeros((3, 4, 2), np.int64), np.ones((3, 4, 2), np.float32)
    i, s = ember.tensor(idx), ember.tensor(src)
    call = {"out": lambda fn: fn(x, 2, i, s, out=ember.empty(0)),
            "reduce": lambda fn: ember.scatter(x, 2, i, s, reduce="add"),
            "value_keyword": lambda fn: ember.scatter(x, 2, i, value=0.5),
            "int32_index": lambda fn: fn(x, 2, ember.tensor(idx.astype(np.int32)), s),
            "negative_index": lambda fn: fn(x, 2, ember.tensor(idx - 1), s),
            "index_past_the_end": lambda fn: fn(x, 2, ember.tensor(idx + 5), s),
            "index_larger": lambda fn: fn(x, 2, ember.tensor(np.zeros((4, 4, 2), np.int64)), s),
            "src_smaller": lambda fn: fn(x, 2, i, ember.tensor(src[:, :3])),
            "src_dtype": lambda fn: fn(x, 2, i, ember.tensor(src.astype(np.float64))),
            "src_dims": lambda fn: fn(x, 2, i, ember.tensor(src[None])),
            "number_into_ints": lambda fn: fn(ember.tensor(values.astype(np.int64)), 2, i, 3),
            "number_overflows": lambda fn: fn(x, 2, i, 1e300),
            "bool_number": lambda fn: fn(x, 2, i, True),
            "numpy_number": lambda fn: fn(x, 2, i, np.float32(0.5)),
            "complex": lambda fn: fn(ember.tensor(values.astype(np.complex64)), 2, i, s.to(ember.complex64)),
            "bfloat16": lambda fn: fn(x.to(ember.bfloat16), 2, i, s.to(ember.bfloat16)),
            "zero_dim": lambda fn: fn(ember.tensor(values[0, 0, 0]), 0, ember.tensor(np.int64(0)),
                                      ember.tensor(np.float32(2))),
            "empty_index": lambda fn: fn(x, 1, ember.tensor(np.zeros((3, 0, 5), np.int64)), s),
            "numpy_dim": lambda fn: fn(x, np.int64(2), i, s),
            "dim_out_of_range": lambda fn: fn(x, 3, i, s),
            "src_not_a_tensor": lambda fn: fn(x, 2, i, src),
            "large": lambda fn: fn(ember.tensor(np.ones((128, 128), np.float32)), 0,
                                   ember.tensor(np.zeros((128, 128), np.int64)),
                                   ember.tensor(np.ones((128, 128), np.float32))),
            "no_grad": lambda fn: _no_grad(fn, ember.tensor(values, requires_grad=True), 2, i, s)}[case]
    for fn in (ember.scatter, ember.scatter_add):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    _common._warned.clear()   # (torch's warnings given once per process: once on each path here)
                    try:
                        result = call(fn)
                    except (RuntimeError, TypeError, IndexError) as error:
                        results.append((type(error), str(error)))
                        continue
                results.append((result.dtype, result.shape, result.requires_grad, result.numpy().tobytes(),
                                [str(w.message) for w in caught]))
        assert results[0] == results[1], (case, fn)


# -- index_select and take -------------------------------------------------------------------

SELECTS = {   # name: (ember's call, torch's) of (input, dim, index); take ignores the dim
    "index_select": (ember.index_select, torch.index_select),
    "index_select_method": (lambda x, d, i: x.index_select(d, i), lambda x, d, i: x.index_select(d, i)),
    "take": (lambda x, d, i: ember.take(x, i), lambda x, d, i: torch.take(x, i)),
    "take_method": (lambda x, d, i: x.take(i), lambda x, d, i: x.take(i))}


def _select_operands(name, dtype="float32"):
    """A (3, 4, 5) input, and for each dim an index with repeats (take: of every shape, negative
    indices too)."""
    rng = np.random.default_rng(11)
    values = rng.standard_normal((3, 4, 5)) * 4
    values = values.astype(dtype) if np.dtype(dtype).kind != "b" else values > 0
    if name.startswith("take"):
        return values, [(0, rng.integers(-60, 60, shape)) for shape in [(7,), (2, 3), (), (1, 2, 2, 1)]]
    return values, [(dim, rng.integers(0, values.shape[dim], n)) for dim in (0, 1, 2, -1) for n in (1, 6)]


def test_index_select_and_take_take_the_common_case(monkeypatch):
    from ember.ops import index
    x = ember.tensor(_select_operands("index_select")[0])
    i = ember.tensor(np.array([2, 0, 2]))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.index_select(x, 1, i), x.take(i)),
                                        [(index, "_selected"), (index, "_check_bounds")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(SELECTS))
def test_index_select_and_take_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = SELECTS[name]
    values, cases = _select_operands(name, dtype)
    for source in (values, np.asfortranarray(values), values[0]):
        for dim, idx in cases:
            if not name.startswith("take") and dim >= source.ndim:
                continue
            if name.startswith("take"):
                idx = idx % source.size - (idx < 0) * source.size
            compiled = fn(ember.tensor(source), dim, ember.tensor(idx))
            with python_paths():
                python = fn(ember.tensor(source), dim, ember.tensor(idx))
            want = torch_fn(torch.tensor(source), dim, torch.tensor(idx))
            assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
            assert compiled.stride() == python.stride()
            np.testing.assert_array_equal(compiled.numpy(), python.numpy())
            np.testing.assert_array_equal(compiled.numpy(), want.numpy())


@pytest.mark.parametrize("name", sorted(SELECTS))
def test_index_select_and_take_nodes_and_gradients_are_the_python_paths(name):
    fn = SELECTS[name][0]
    values, cases = _select_operands(name)
    for dim, idx in cases:
        if name.startswith("take"):
            idx = idx % values.size - (idx < 0) * values.size
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(values, requires_grad=True)
                out = fn(x, dim, ember.tensor(idx))
                node = out.grad_fn
                fields = (type(node).__name__, getattr(node, "dim", None), node.in_shape,
                          node.saved_tensors[0].numpy().tobytes(), [type(f).__name__ for f, _ in node.next_functions])
                out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
                results.append((fields, x.grad.numpy().tobytes()))
        assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "int32_index", "negative_index", "index_past_the_end", "index_dims",
                                  "zero_dim_input", "empty_index", "empty_input", "complex", "bfloat16", "numpy_dim",
                                  "dim_out_of_range", "index_not_a_tensor", "large", "no_grad"])
def test_other_index_select_and_take_cases_take_the_python_path(case):
    values, _ = _select_operands("index_select")
    x, idx = ember.tensor(values), np.array([0, 2, 1])
    i = ember.tensor(idx)
    call = {"out": lambda fn: fn(x, 1, i, out=ember.empty(0)),
            "int32_index": lambda fn: fn(x, 1, ember.tensor(idx.astype(np.int32))),
            "negative_index": lambda fn: fn(x, 1, ember.tensor(idx - 1)),
            "index_past_the_end": lambda fn: fn(x, 1, ember.tensor(idx + 100)),
            "index_dims": lambda fn: fn(x, 1, ember.tensor(idx[None])),
            "zero_dim_input": lambda fn: fn(ember.tensor(values[0, 0, 0]), 0, ember.tensor(np.array([0]))),
            "empty_index": lambda fn: fn(x, 1, ember.tensor(np.zeros(0, np.int64))),
            "empty_input": lambda fn: fn(ember.tensor(np.zeros((3, 0), np.float32)), 0, i),
            "complex": lambda fn: fn(ember.tensor(values.astype(np.complex64)), 1, i),
            "bfloat16": lambda fn: fn(x.to(ember.bfloat16), 1, i),
            "numpy_dim": lambda fn: fn(x, np.int64(1), i),
            "dim_out_of_range": lambda fn: fn(x, 3, i),
            "index_not_a_tensor": lambda fn: fn(x, 1, idx),
            "large": lambda fn: fn(ember.tensor(np.ones((128, 128), np.float32)), 0, i),
            "no_grad": lambda fn: _no_grad(fn, ember.tensor(values, requires_grad=True), 1, i)}[case]
    for fn in (ember.index_select, lambda x, d, i, **kwargs: ember.take(x, i, **kwargs)):
        results = _on_both_paths(lambda: call(fn))
        assert results[0] == results[1], case


# -- max and min of all elements ---------------------------------------------------------------

WHOLE_EXTREMES = {"max": (ember.max, torch.max), "min": (ember.min, torch.min),
                  "max_method": (lambda x: x.max(), lambda x: x.max()),
                  "min_method": (lambda x: x.min(), lambda x: x.min())}


def test_max_and_min_of_all_elements_take_the_common_case(monkeypatch):
    from ember.ops import reduce
    x = ember.tensor(_extreme_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.max(x), x.min()), [(reduce, "_extreme")])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(WHOLE_EXTREMES))
def test_max_and_min_of_all_elements_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = WHOLE_EXTREMES[name]
    values = _extreme_values(dtype)
    for source in (values, values.transpose(2, 0, 1), values[1, 2], np.nan_to_num(values), -np.abs(values) * 0.0):
        compiled = fn(ember.tensor(source))
        with python_paths():
            python = fn(ember.tensor(source))
        want = torch_fn(torch.tensor(source))
        assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape) == ()
        assert compiled.numpy().tobytes() == python.numpy().tobytes()
        np.testing.assert_array_equal(compiled.numpy(), want.numpy())


@pytest.mark.parametrize("name", sorted(WHOLE_EXTREMES))
def test_max_and_min_of_all_elements_nodes_and_gradients_are_the_python_paths(name):
    fn = WHOLE_EXTREMES[name][0]
    values = _extreme_values("float32")
    for source in (values, np.nan_to_num(values)):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(source, requires_grad=True)
                out = fn(x)
                node = out.grad_fn
                fields = (type(node).__name__, node.dims, node.keepdim,
                          [t.detach().numpy().tobytes() for t in node.saved_tensors])
                out.backward(ember.tensor(np.float32(0.75)))
                results.append((fields, x.grad.numpy().tobytes()))
        assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "int64", "float16", "bool", "zero_dim", "empty", "keepdim", "large",
                                  "no_grad"])
def test_other_max_and_min_of_all_elements_cases_take_the_python_path(case):
    values = _extreme_values("float32")
    call = {"out": lambda fn: fn(ember.tensor(values), out=ember.empty(())),
            "int64": lambda fn: fn(ember.tensor(values.astype(np.int64))),
            "float16": lambda fn: fn(ember.tensor(values.astype(np.float16))),
            "bool": lambda fn: fn(ember.tensor(values > 0)),
            "zero_dim": lambda fn: fn(ember.tensor(values[0, 0, 0])),
            "empty": lambda fn: fn(ember.tensor(np.zeros((0, 3), np.float32))),
            "keepdim": lambda fn: fn(ember.tensor(values), keepdim=True),
            "large": lambda fn: fn(ember.tensor(np.ones((128, 128), np.float32))),
            "no_grad": lambda fn: _no_grad(fn, ember.tensor(values, requires_grad=True))}[case]
    for fn in (ember.max, ember.min):
        results = _on_both_paths(lambda: call(fn))
        assert results[0] == results[1], case


# -- index_add, index_copy and index_fill --------------------------------------------------------

SLICES = {   # name: (ember's call, torch's) of (input, dim, index, source or value)
    "index_add": (ember.index_add, torch.index_add), "index_copy": (ember.index_copy, torch.index_copy),
    "index_fill": (ember.index_fill, torch.index_fill),
    "index_add_method": (lambda x, *a: x.index_add(*a), lambda x, *a: x.index_add(*a)),
    "index_fill_inplace": (lambda x, *a: x.clone().index_fill_(*a), lambda x, *a: x.clone().index_fill_(*a))}


def _slices_operands(name, dtype="float32", distinct=False):
    """A (3, 4, 5) input, and for each dim an index (repeats included unless ``distinct``;
    index_fill's negative too) with a source of the input's shape but along the dim (index_fill:
    a number)."""
    rng = np.random.default_rng(13)
    values = rng.standard_normal((3, 4, 5)) * 4
    values = values.astype(dtype) if np.dtype(dtype).kind != "b" else values > 0
    cases = []
    for dim in (0, 1, 2, -1):
        size = values.shape[dim]
        for n in (1, 3):
            index = rng.permutation(size)[:n] if distinct else rng.integers(0, size, n)
            if "fill" in name:
                cases.append((dim, index - size * (rng.random(n) < 0.5), -2.5))
                continue
            shape = list(values.shape)
            shape[dim] = n
            source = rng.standard_normal(shape) * 4
            cases.append((dim, index, source.astype(dtype) if np.dtype(dtype).kind != "b" else source > 0))
    return values, cases


def _operand(value, lib, requires_grad=False):
    return lib.tensor(value, requires_grad=requires_grad) if isinstance(value, np.ndarray) else value


def test_index_add_copy_and_fill_take_the_common_case(monkeypatch):
    from ember.ops import index
    values, cases = _slices_operands("index_add")
    x, (dim, idx, src) = ember.tensor(values), cases[1]
    i, s = ember.tensor(idx), ember.tensor(src)
    _assert_the_compiled_function_takes(
        monkeypatch, lambda: (ember.index_add(x, dim, i, s), x.index_copy(dim, i, s), ember.index_fill(x, dim, i, 2.0)),
        [(index, "_check_bounds")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(SLICES))
def test_index_add_copy_and_fill_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = SLICES[name]
    for distinct in (False, True):
        values, cases = _slices_operands(name, dtype, distinct)
        for source in (values, np.asfortranarray(values)):
            for dim, idx, src in cases:
                for s in ((src, np.asfortranarray(src)) if isinstance(src, np.ndarray) else (src, 3)):
                    def call(lib):
                        return (fn if lib is ember else torch_fn)(lib.tensor(source), dim, lib.tensor(idx),
                                                                   _operand(s, lib))
                    try:
                        want = call(torch)
                    except RuntimeError:   # (a number torch's dtype cannot take, a sum of bools)
                        continue
                    compiled = call(ember)
                    with python_paths():
                        python = call(ember)
                    assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
                    assert compiled.stride() == python.stride()
                    np.testing.assert_array_equal(compiled.numpy(), python.numpy())
                    if distinct or "copy" not in name:   # (torch does not define which of repeated copies is kept)
                        tol = 2e-2 if dtype == "float16" else 1e-3   # (torch adds half in its own order)
                        np.testing.assert_allclose(compiled.numpy().astype(np.float64),
                                                   want.numpy().astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(SLICES))
def test_index_add_copy_and_fill_nodes_and_gradients_are_the_python_paths(name):
    fn = SLICES[name][0]
    values, cases = _slices_operands(name)
    for dim, idx, src in cases:
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(values, requires_grad=True)
                s = _operand(src, ember, requires_grad=True)
                out = fn(x, dim, ember.tensor(idx), s)
                node = out.grad_fn
                fields = (type(node).__name__, getattr(node, "dim", None), getattr(node, "alpha", None),
                          getattr(node, "source_shape", None),
                          [t.numpy().tobytes() for t in getattr(node, "saved_tensors", ())],
                          [type(f).__name__ for f, _ in node.next_functions])
                out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
                results.append((fields, x.grad.numpy().tobytes(),
                                s.grad.numpy().tobytes() if isinstance(s, ember.Tensor) else None))
        assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "alpha", "int32_index", "negative_index", "index_past_the_end",
                                  "index_dims", "zero_dim_index", "empty_index", "source_shape", "source_dtype",
                                  "number_into_ints", "number_overflows", "bool_number", "tensor_value", "complex",
                                  "bfloat16", "zero_dim_input", "numpy_dim", "dim_out_of_range", "large", "no_grad"])
def test_other_index_add_copy_and_fill_cases_take_the_python_path(case):
    values, _ = _slices_operands("index_add")
    x, idx, src = ember.tensor(values), np.array([0, 2, 2]), np.ones((3, 3, 5), np.float32)
    i, s = ember.tensor(idx), ember.tensor(src)
    call = {"out": lambda fn, v: fn(x, 1, i, v, out=ember.empty(0)),
            "alpha": lambda fn, v: fn(x, 1, i, v, alpha=2),
            "int32_index": lambda fn, v: fn(x, 1, ember.tensor(idx.astype(np.int32)), v),
            "negative_index": lambda fn, v: fn(x, 1, ember.tensor(idx - 5), v),
            "index_past_the_end": lambda fn, v: fn(x, 1, ember.tensor(idx + 5), v),
            "index_dims": lambda fn, v: fn(x, 1, ember.tensor(idx[None]), v),
            "zero_dim_index": lambda fn, v: fn(x, 1, ember.tensor(np.int64(1)), v),
            "empty_index": lambda fn, v: fn(x, 1, ember.tensor(np.zeros(0, np.int64)), v),
            "source_shape": lambda fn, v: fn(x, 1, i, ember.tensor(src[:, :2]) if isinstance(v, ember.Tensor) else v),
            "source_dtype": lambda fn, v: fn(x, 1, i, v.double() if isinstance(v, ember.Tensor) else v),
            "number_into_ints": lambda fn, v: fn(ember.tensor(values.astype(np.int64)), 1, i,
                                                 v.long() if isinstance(v, ember.Tensor) else 3),
            "number_overflows": lambda fn, v: fn(x, 1, i, v if isinstance(v, ember.Tensor) else 1e300),
            "bool_number": lambda fn, v: fn(x, 1, i, v if isinstance(v, ember.Tensor) else True),
            "tensor_value": lambda fn, v: fn(x, 1, i, v if isinstance(v, ember.Tensor) else ember.tensor(2.0)),
            "complex": lambda fn, v: fn(x.to(ember.complex64), 1, i,
                                        v.to(ember.complex64) if isinstance(v, ember.Tensor) else v),
            "bfloat16": lambda fn, v: fn(x.to(ember.bfloat16), 1, i,
                                         v.to(ember.bfloat16) if isinstance(v, ember.Tensor) else v),
            "zero_dim_input": lambda fn, v: fn(ember.tensor(values[0, 0, 0]), 0, ember.tensor(np.array([0])),
                                               ember.tensor(np.float32(2)) if isinstance(v, ember.Tensor) else v),
            "numpy_dim": lambda fn, v: fn(x, np.int64(1), i, v),
            "dim_out_of_range": lambda fn, v: fn(x, 3, i, v),
            "large": lambda fn, v: fn(ember.tensor(np.ones((128, 128), np.float32)), 1, i,
                                      ember.ones(128, 3) if isinstance(v, ember.Tensor) else v),
            "no_grad": lambda fn, v: _no_grad(fn, ember.tensor(values, requires_grad=True), 1, i, v)}[case]
    for fn, v in ((ember.index_add, s), (ember.index_copy, s), (ember.index_fill, 1.5)):
        if case in ("out", "alpha") and fn is not ember.index_add:
            continue
        results = _on_both_paths(lambda: call(fn, v))
        assert results[0] == results[1], (case, fn)


# -- cummax and cummin -----------------------------------------------------------------------

CUMULATIVE = {"cummax": (ember.cummax, torch.cummax), "cummin": (ember.cummin, torch.cummin),
              "cummax_method": (lambda x, d: x.cummax(d), lambda x, d: x.cummax(d))}


def _running_values(dtype):
    """(2, 3, 4) values with ties, signed zeros and (for floats) NaN along every dim."""
    values = np.random.default_rng(17).integers(-2, 3, (2, 3, 4)).astype(dtype)
    if values.dtype.kind == "f":
        values[values == 0] = -0.0
        values[0, 1, 1] = values[1, 0, 2] = 0.0
        values[1, 2, 1] = values[0, 0, 3] = np.nan
    return values


def test_cummax_and_cummin_take_the_common_case(monkeypatch):
    x = ember.tensor(_running_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.cummax(x, 1), x.cummin(-1)),
                                        [(sort_module(), "_cumulative_extreme")])


def sort_module():
    from ember.ops import sort
    return sort


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16", "uint8"])
@pytest.mark.parametrize("name", sorted(CUMULATIVE))
def test_cummax_and_cummin_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = CUMULATIVE[name]
    values = _running_values(dtype)
    for source in (values, values[1], values[0, 1], values.transpose(2, 0, 1)):
        for dim in range(-source.ndim, source.ndim):
            compiled = fn(ember.tensor(source), dim)
            with python_paths():
                python = fn(ember.tensor(source), dim)
            want = torch_fn(torch.tensor(source), dim)
            assert type(compiled) is type(python)
            for got, same, expected in zip(compiled, python, want):
                assert got.dtype == same.dtype and got.shape == same.shape == tuple(expected.shape)
                assert got.stride() == same.stride()
                assert got.numpy().tobytes() == same.numpy().tobytes()
                np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
def test_cummax_and_cummin_nodes_and_gradients_are_the_python_paths(name):
    fn = CUMULATIVE[name][0]
    values = np.nan_to_num(_running_values("float32"))
    for dim in (0, 1, -1):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(values, requires_grad=True)
                out, indices = fn(x, dim)
                node = out.grad_fn
                fields = (type(node).__name__, node.dim, node.keepdim, node.in_shape,
                          node.saved_tensors[0].numpy().tobytes(), indices.requires_grad)
                out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
                results.append((fields, x.grad.numpy().tobytes()))
        assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "bool", "complex", "bfloat16", "empty", "zero_dim", "out_of_range",
                                  "numpy_dim", "large", "no_grad"])
def test_other_cummax_and_cummin_cases_take_the_python_path(case):
    values = _running_values("float32")
    call = {"out": lambda fn: fn(ember.tensor(values), 1, out=(ember.empty(0), ember.empty(0, dtype=ember.int64))),
            "bool": lambda fn: fn(ember.tensor(values > 0), 1),
            "complex": lambda fn: fn(ember.tensor(values.astype(np.complex64)), 1),
            "bfloat16": lambda fn: fn(ember.tensor(values).to(ember.bfloat16), 1),
            "empty": lambda fn: fn(ember.tensor(np.zeros((0, 3), np.float32)), 1),
            "zero_dim": lambda fn: fn(ember.tensor(values[0, 0, 0]), 0),
            "out_of_range": lambda fn: fn(ember.tensor(values), 3),
            "numpy_dim": lambda fn: fn(ember.tensor(values), np.int64(1)),
            "large": lambda fn: fn(ember.tensor(np.ones((128, 128), np.float32)), 0),
            "no_grad": lambda fn: _no_grad(fn, ember.tensor(values, requires_grad=True), 1)}[case]
    for fn in (ember.cummax, ember.cummin):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                try:
                    values_t, indices = call(fn)
                except (RuntimeError, TypeError, IndexError) as error:
                    results.append((type(error), str(error)))
                    continue
                results.append([(t.dtype, t.shape, t.requires_grad, t.numpy().tobytes()) for t in (values_t, indices)])
        assert results[0] == results[1], case


# -- masked_fill -------------------------------------------------------------------------------

def _masked_operands(dtype="float32"):
    rng = np.random.default_rng(19)
    return rng.standard_normal((2, 3, 4)).astype(dtype), rng.random((2, 3, 4)) > 0.5


MASKS = {"same": lambda m: m, "row": lambda m: m[:1, :1], "column": lambda m: m[:, :, :1],
         "one": lambda m: m[:1, :1, :1]}


def test_masked_fill_takes_the_common_case(monkeypatch):
    from ember.ops import index
    x, m = (ember.tensor(v) for v in _masked_operands())
    _assert_the_compiled_function_takes(monkeypatch,
                                        lambda: (ember.masked_fill(x, m, 0.5), x.masked_fill(m, -math.inf)),
                                        [(index, "_select")])


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_masked_fill_is_the_python_paths_and_torchs(mask):
    for dtype in ("float32", "float64"):
        values, m = _masked_operands(dtype)
        m = np.ascontiguousarray(MASKS[mask](m))
        for value in (0.5, -math.inf, math.nan, 3, -0.0):
            compiled = ember.tensor(values).masked_fill(ember.tensor(m), value)
            with python_paths():
                python = ember.tensor(values).masked_fill(ember.tensor(m), value)
            want = torch.tensor(values).masked_fill(torch.tensor(m), value)
            assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
            assert compiled.stride() == python.stride()
            assert compiled.numpy().tobytes() == python.numpy().tobytes()
            np.testing.assert_array_equal(compiled.numpy(), want.numpy())


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_masked_fill_nodes_and_gradients_are_the_python_paths(mask):
    values, m = _masked_operands()
    m = np.ascontiguousarray(MASKS[mask](m))
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(values, requires_grad=True)
            out = x.masked_fill(ember.tensor(m), 1.5)
            node = out.grad_fn
            fields = (type(node).__name__, node.in_shape, node.saved_tensors[0].numpy().tobytes(),
                      [type(f).__name__ for f, _ in node.next_functions])
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((fields, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["tensor_value", "int64", "float16", "uint8_mask", "mask_larger", "mask_dims",
                                  "transposed", "transposed_mask", "number_overflows", "bool_number", "numpy_number",
                                  "empty", "zero_dim", "large", "no_grad"])
def test_other_masked_fill_cases_take_the_python_path(case):
    values, m = _masked_operands()
    x, mt = ember.tensor(values), ember.tensor(m)
    call = {"tensor_value": lambda: x.masked_fill(mt, ember.tensor(2.0)),
            "int64": lambda: ember.tensor(values.astype(np.int64)).masked_fill(mt, 3),
            "float16": lambda: x.half().masked_fill(mt, 0.5),
            "uint8_mask": lambda: x.masked_fill(ember.tensor(m.astype(np.uint8)), 0.5),
            "mask_larger": lambda: x[:1].masked_fill(mt, 0.5),
            "mask_dims": lambda: x.masked_fill(ember.tensor(m[0]), 0.5),
            "transposed": lambda: ember.tensor(values.transpose(2, 1, 0)).masked_fill(
                ember.tensor(m.transpose(2, 1, 0).copy()), 0.5),
            "transposed_mask": lambda: x.masked_fill(ember.tensor(m.transpose(2, 1, 0)).permute(2, 1, 0), 0.5),
            "number_overflows": lambda: x.masked_fill(mt, 1e300),
            "bool_number": lambda: x.masked_fill(mt, True),
            "numpy_number": lambda: x.masked_fill(mt, np.float32(0.5)),
            "empty": lambda: ember.zeros(0, 3).masked_fill(ember.zeros(0, 3, dtype=ember.bool), 1.0),
            "zero_dim": lambda: ember.tensor(values[0, 0, 0]).masked_fill(ember.tensor(True), 1.0),
            "large": lambda: ember.ones(128, 128).masked_fill(ember.ones(128, 128) > 0, 2.0),
            "no_grad": lambda: _no_grad(ember.masked_fill, ember.tensor(values, requires_grad=True), mt, 0.5)}[case]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            try:
                result = call()
            except (RuntimeError, TypeError, IndexError) as error:
                results.append((type(error), str(error)))
                continue
            results.append((result.dtype, result.shape, result.stride(), result.requires_grad,
                            result.numpy().tobytes()))
    assert results[0] == results[1], case


# -- the functions of the operators --------------------------------------------------------------

OPERATOR_FUNCTIONS = {name: (getattr(ember, name), getattr(torch, name))
                      for name in ("add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge")}
OPERATOR_FUNCTIONS.update({"add_method": (lambda a, b: a.add(b), lambda a, b: a.add(b)),
                           "less_method": (lambda a, b: a.less(b), lambda a, b: a.less(b)),
                           "multiply": (ember.multiply, torch.multiply), "divide": (ember.divide, torch.divide)})


def _operator_operands(dtype):
    rng = np.random.default_rng(23)
    a, b = (rng.integers(-3, 4, (3, 4)) if dtype.startswith("int") else rng.standard_normal((3, 4)) for _ in range(2))
    b[b == 0] = 1
    return a.astype(dtype), b.astype(dtype)


def test_the_functions_of_the_operators_take_the_operators_common_case(monkeypatch):
    from ember.ops import compare, pointwise
    a, b = (ember.tensor(v) for v in _operator_operands("float32"))
    _assert_the_compiled_function_takes(
        monkeypatch, lambda: (ember.add(a, b), a.sub(2.0), ember.mul(a, b), ember.div(a, b), ember.lt(a, b), a.eq(0.5)),
        [(pointwise, "_binary"), (compare, "_apply")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16", "bool"])
@pytest.mark.parametrize("name", sorted(OPERATOR_FUNCTIONS))
def test_the_functions_of_the_operators_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = OPERATOR_FUNCTIONS[name]
    a, b = _operator_operands(dtype)
    for other in (b, b[0], 2.5, 3, b.T.copy().T):
        def call(lib):
            operand = lib.tensor(other) if isinstance(other, np.ndarray) else other
            return (fn if lib is ember else torch_fn)(lib.tensor(a), operand)
        try:
            want = call(torch)
        except RuntimeError:   # (a bool subtraction)
            with pytest.raises(RuntimeError):
                call(ember)
            continue
        compiled = call(ember)
        with python_paths():
            python = call(ember)
        assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
        assert str(compiled.dtype) == str(want.dtype).replace("torch", "ember")
        assert compiled.numpy().tobytes() == python.numpy().tobytes()
        np.testing.assert_allclose(compiled.numpy().astype(np.float64), want.numpy().astype(np.float64),
                                   rtol=1e-3 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "add_method"])
def test_the_functions_of_the_operators_nodes_and_gradients_are_the_python_paths(name):
    fn = OPERATOR_FUNCTIONS[name][0]
    a, b = _operator_operands("float32")
    for other, grads in ((b, (True, True)), (b, (True, False)), (b, (False, True)), (b[0], (True, True)),
                         (2.5, (True,))):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(a, requires_grad=grads[0])
                y = ember.tensor(other, requires_grad=grads[1]) if isinstance(other, np.ndarray) else other
                out = fn(x, y)
                node = out.grad_fn
                fields = (type(node).__name__,
                          {key: repr(getattr(node, key, None)) for key in ("self_shape", "self_dtype", "other_shape",
                                                                           "other_dtype", "other_scalar", "alpha")},
                          [None if t is None else t.detach().numpy().tobytes()
                           for t in getattr(node, "saved_tensors", ())])
                out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
                results.append((fields, [t.grad.numpy().tobytes() for t in (x, y)
                                         if isinstance(t, ember.Tensor) and t.requires_grad]))
        assert results[0] == results[1], (other, grads)


@pytest.mark.parametrize("case", ["out", "alpha", "float_alpha", "rounding_mode", "input_a_number", "other_a_list",
                                  "bool_number", "numpy_number", "mixed_dtypes", "shapes_differ", "large"])
def test_other_cases_of_the_functions_of_the_operators_take_the_python_path(case):
    a, b = _operator_operands("float32")
    x, y = ember.tensor(a), ember.tensor(b)
    call = {"out": lambda fn: fn(x, y, out=ember.empty(0)),
            "alpha": lambda fn: fn(x, y, alpha=2) if fn in (ember.add, ember.sub) else fn(x, y),
            "float_alpha": lambda fn: fn(x, y, alpha=1.0) if fn in (ember.add, ember.sub) else fn(x, y),
            "rounding_mode": lambda fn: fn(x, y, rounding_mode="floor") if fn is ember.div else fn(x, y),
            "input_a_number": lambda fn: fn(2.0, y),
            "other_a_list": lambda fn: fn(x, [1.0, 2.0, 3.0, 4.0]),
            "bool_number": lambda fn: fn(x, True),
            "numpy_number": lambda fn: fn(x, np.float32(2.0)),
            "mixed_dtypes": lambda fn: fn(x, y.double()),
            "shapes_differ": lambda fn: fn(x, y[:2, :3]),
            "large": lambda fn: fn(ember.ones(256, 256), ember.ones(256, 256))}[case]
    for fn in (ember.add, ember.sub, ember.mul, ember.div, ember.lt, ember.eq):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                try:
                    result = call(fn)
                except (RuntimeError, TypeError) as error:
                    results.append((type(error), str(error)))
                    continue
                results.append((result.dtype, result.shape, result.numpy().tobytes()))
        assert results[0] == results[1], (case, fn)


def test_torch_function_modes_see_the_functions_of_the_operators():
    from ember.overrides import TorchFunctionMode
    seen = []

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = ember.ones(2)
    with Recording():
        ember.add(x, x)
        x.mul(2.0)
        ember.lt(x, 1.0)
        x * x
    assert seen == ["add", "mul", "lt", "mul"]


# -- products of vectors ---------------------------------------------------------------------

VECTOR_PRODUCTS = {   # name: (ember's call, torch's, the operands' shapes)
    "dot": (ember.dot, torch.dot, ((6,), (6,))),
    "dot_method": (lambda a, b: a.dot(b), lambda a, b: a.dot(b), ((6,), (6,))),
    "vdot": (ember.vdot, torch.vdot, ((6,), (6,))),
    "mv": (ember.mv, torch.mv, ((4, 6), (6,))), "matmul_vectors": (ember.matmul, torch.matmul, ((6,), (6,))),
    "matmul_matrix_vector": (ember.matmul, torch.matmul, ((4, 6), (6,))),
    "matmul_vector_matrix": (ember.matmul, torch.matmul, ((4,), (4, 6))),
    "operator_vector_matrix": (lambda a, b: a @ b, lambda a, b: a @ b, ((4,), (4, 6)))}


def _vector_factors(name, dtype="float32"):
    rng = np.random.default_rng(29)
    return [rng.standard_normal(shape).astype(dtype) for shape in VECTOR_PRODUCTS[name][2]]


def test_products_of_vectors_take_the_common_case(monkeypatch):
    from ember._backend import products
    v, m = (ember.tensor(x) for x in _vector_factors("matmul_vector_matrix"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.dot(v, v), ember.mv(m.t(), v), ember.matmul(v, m)),
                                        [(np, "dot"), (products, "matmul")])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(VECTOR_PRODUCTS))
def test_products_of_vectors_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn, _ = VECTOR_PRODUCTS[name]
    a, b = _vector_factors(name, dtype)
    for first, second in ((a, b), (np.asfortranarray(a), b), (a[::-1].copy(), b[::-1].copy())):
        compiled = fn(ember.tensor(first), ember.tensor(second))
        with python_paths():
            python = fn(ember.tensor(first), ember.tensor(second))
        want = torch_fn(torch.tensor(first), torch.tensor(second))
        assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
        assert compiled.numpy().tobytes() == python.numpy().tobytes()
        np.testing.assert_allclose(compiled.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["dot", "mv", "matmul_vectors", "matmul_vector_matrix"])
def test_products_with_a_vector_past_the_small_arrays_are_numpys_from_c(monkeypatch, name):
    """Operands past the small arrays' 64 KiB, a product with a vector of fewer multiply-adds than the compiled
    functions' bound: the C function (NumPy's product, the Python op's at every size), the same bits."""
    from ember._backend import products
    fn, torch_fn, _ = VECTOR_PRODUCTS[name]
    rng = np.random.default_rng(30)
    shapes = {"dot": ((65536,), (65536,)), "mv": ((222, 295), (295,)), "matmul_vectors": ((65536,), (65536,)),
              "matmul_vector_matrix": ((300,), (300, 222))}[name]
    a, b = (rng.standard_normal(shape).astype(np.float32) for shape in shapes)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(ember.tensor(a), ember.tensor(b)),
                                        [(np, "dot"), (products, "matmul")])
    compiled = fn(ember.tensor(a), ember.tensor(b))
    with python_paths():
        python = fn(ember.tensor(a), ember.tensor(b))
    assert compiled.numpy().tobytes() == python.numpy().tobytes()
    np.testing.assert_allclose(compiled.numpy(), torch_fn(torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-4,
                               atol=1e-3)


@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("name", sorted(VECTOR_PRODUCTS))
def test_products_of_vectors_nodes_and_gradients_are_the_python_paths(name, grads):
    fn = VECTOR_PRODUCTS[name][0]
    a, b = _vector_factors(name)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, y = ember.tensor(a, requires_grad=grads[0]), ember.tensor(b, requires_grad=grads[1])
            out = fn(x, y)
            node = out.grad_fn
            fields = (type(node).__name__, [t.detach().numpy().tobytes() for t in node.saved_tensors],
                      [type(f).__name__ for f, _ in node.next_functions])
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((fields, [t.grad.numpy().tobytes() for t in (x, y) if t.requires_grad]))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "int64", "float16", "mixed_dtypes", "sizes_differ", "matrices", "empty",
                                  "large", "no_grad", "flop_counter"])
def test_other_products_of_vectors_take_the_python_path(case):
    from ember.utils.flop_counter import FlopCounterMode
    v, m = _vector_factors("mv")
    big = np.ones(4096, np.float32)
    call = {"out": lambda fn, x, y: fn(x, y, out=ember.empty(0)),
            "int64": lambda fn, x, y: fn(x.long(), y.long()),
            "float16": lambda fn, x, y: fn(x.half(), y.half()),
            "mixed_dtypes": lambda fn, x, y: fn(x, y.double()),
            "sizes_differ": lambda fn, x, y: fn(x, y[:3]),
            "matrices": lambda fn, x, y: fn(x, y[:, None]),
            "empty": lambda fn, x, y: fn(x[..., :0], y[:0]),
            "large": lambda fn, x, y: fn(ember.tensor(big) if x.dim() == 1 else ember.ones(64, 4096),
                                         ember.tensor(big)),
            "no_grad": lambda fn, x, y: _no_grad(fn, x.requires_grad_(), y),
            "flop_counter": None}[case]
    for fn, x_values in ((ember.dot, v), (ember.mv, m), (ember.matmul, v), (ember.matmul, m)):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x, y = ember.tensor(x_values), ember.tensor(v)
                counts = None
                try:
                    if case == "flop_counter":
                        with FlopCounterMode(display=False) as counter:
                            result = fn(x, y)
                        counts = counter.get_total_flops()
                    else:
                        result = call(fn, x, y)
                except (RuntimeError, TypeError, ValueError, IndexError) as error:
                    results.append((type(error), str(error)))
                    continue
                results.append((result.dtype, result.shape, result.requires_grad, type(result.grad_fn).__name__,
                                result.detach().numpy().tobytes(), counts))
        assert results[0] == results[1], (fn, case)


# -- predicates ------------------------------------------------------------------------------

PREDICATES = ("isfinite", "isnan", "isinf", "signbit")


def _predicate_values(dtype):
    values = np.linspace(-3, 3, 15).astype(dtype).reshape(3, 5)
    values.reshape(-1)[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    return values


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_take_the_common_case(monkeypatch, name):
    x = ember.tensor(_predicate_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: getattr(ember, name)(x), _ufunc_names(name))


@pytest.mark.parametrize("name", ["isfinite", "isnan", "isinf"])
def test_predicates_take_integers(monkeypatch, name):
    x = ember.tensor(np.arange(-7, 8).reshape(3, 5))
    _assert_the_compiled_function_takes(monkeypatch, lambda: getattr(ember, name)(x), [(np, "zeros"), (np, "ones")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_are_the_python_paths_and_torchs(name, dtype):
    values = _predicate_values("float64")
    if dtype == "bool":
        values = values > 0
    elif dtype in ("int64", "int32", "uint8"):
        info = np.iinfo(dtype)
        values = np.clip(np.arange(-7, 8), info.min, info.max).astype(dtype).reshape(3, 5)
        values.reshape(-1)[:2] = [info.min, info.max]
    else:
        values = values.astype(dtype)
    for source in (values, values.T, values[:, ::2]):
        for call in (lambda lib, x: getattr(lib, name)(x), lambda lib, x: getattr(x, name)()):
            compiled = call(ember, ember.tensor(source))
            with python_paths():
                python = call(ember, ember.tensor(source))
            want = call(torch, torch.tensor(source))
            assert compiled.dtype == python.dtype == ember.bool and compiled.shape == python.shape
            assert compiled.stride() == python.stride()
            np.testing.assert_array_equal(compiled.numpy(), python.numpy())
            np.testing.assert_array_equal(compiled.numpy(), want.numpy())


@pytest.mark.parametrize("case", ["requires_grad", "out", "complex", "large", "zero_dim"])
@pytest.mark.parametrize("name", PREDICATES)
def test_other_predicate_cases_take_the_python_path(name, case):
    values = _predicate_values("float32")
    fn = getattr(ember, name)
    call = {"requires_grad": lambda: fn(ember.tensor(values, requires_grad=True)),
            "out": lambda: fn(ember.tensor(values), out=ember.empty(0, dtype=ember.bool)),
            "complex": lambda: fn(ember.tensor(values.astype(np.complex64))),
            "large": lambda: fn(ember.ones(256, 256)),
            "zero_dim": lambda: fn(ember.tensor(values[0, 0]))}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]


# -- pow of a tensor and a number --------------------------------------------------------------

EXPONENTS = [2, 3, -2, -0.5, 0.5, 1.7, 0, 1, -1, 2.0, 3.0, -3]
POWERS = {"pow": (ember.pow, torch.pow), "method": (lambda x, e: x.pow(e), lambda x, e: x.pow(e)),
          "operator": (lambda x, e: x ** e, lambda x, e: x ** e)}


def _power_values(dtype):
    values = np.linspace(-3, 3, 15).astype(dtype).reshape(3, 5)
    values.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 0.0]
    return values


def test_pow_takes_the_common_case(monkeypatch):
    x = ember.tensor(_power_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (x ** 2, x.pow(3), ember.pow(x, 1.7)),
                                        [(np, "square"), (np, "power")])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(POWERS))
def test_pow_is_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = POWERS[name]
    values = _power_values(dtype)
    for source in (values, values.T):
        for exponent in EXPONENTS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compiled = fn(ember.tensor(source), exponent)
                with python_paths():
                    python = fn(ember.tensor(source), exponent)
            want = torch_fn(torch.tensor(source), exponent)
            assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
            assert compiled.stride() == python.stride()
            assert compiled.numpy().tobytes() == python.numpy().tobytes(), exponent
            np.testing.assert_allclose(compiled.numpy(), want.numpy(), rtol=1e-5, equal_nan=True)


@pytest.mark.parametrize("exponent", EXPONENTS)
def test_pow_nodes_and_gradients_are_the_python_paths(exponent):
    values = np.linspace(0.5, 3, 15).astype(np.float32).reshape(3, 5)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(values, requires_grad=True)
            out = x ** exponent
            node = out.grad_fn
            fields = (type(node).__name__, repr(node.exponent),
                      [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((fields, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((3, 5), (3, 5)), ((3, 5), (5,)), ((3, 1), (1, 5)), ((), (4,))], ids=str)
def test_pow_of_two_tensors_is_the_python_paths_and_torchs(shapes, dtype):
    """NumPy's power of the two arrays (broadcast), as the Python op's: NaN for a negative base and a fraction,
    with NumPy's warning on both paths."""
    rng = np.random.default_rng(20)
    base = rng.uniform(-2, 3, shapes[0]).astype(dtype)
    exponent = rng.uniform(-3, 3, shapes[1]).astype(dtype)
    exponent.reshape(-1)[:1] = 2.0
    results = _on_both_paths(lambda: ember.pow(ember.tensor(base), ember.tensor(exponent)))
    assert results[0] == results[1]
    want = torch.pow(torch.tensor(base), torch.tensor(exponent)).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype).reshape(want.shape), want, rtol=1e-5,
                               equal_nan=True)


@pytest.mark.parametrize("case", ["out", "tensor_exponent_grad", "mixed_exponent", "int_exponent", "shapes",
                                  "number_base", "int64", "float16", "numpy_exponent",
                                  "bool_exponent", "huge_exponent", "complex_exponent", "large", "no_grad"])
def test_other_pow_cases_take_the_python_path(case):
    values = _power_values("float32")
    x = ember.tensor(values)
    call = {"out": lambda: ember.pow(x, 2, out=ember.empty(0)),
            "tensor_exponent_grad": lambda: ember.pow(x, ember.tensor(values, requires_grad=True)).detach(),
            "mixed_exponent": lambda: ember.pow(x, ember.tensor(values).double()),
            "int_exponent": lambda: ember.pow(x, ember.tensor(np.arange(15).reshape(3, 5))),
            "shapes": lambda: ember.pow(x, ember.tensor(values[:2])),
            "number_base": lambda: ember.pow(2.0, x),
            "int64": lambda: ember.pow(ember.tensor(np.arange(6)), 3),
            "float16": lambda: ember.pow(x.half(), 2),
            "numpy_exponent": lambda: ember.pow(x, np.float32(2.0)),
            "bool_exponent": lambda: ember.pow(x, True),
            "huge_exponent": lambda: ember.pow(x, 10 ** 400),
            "complex_exponent": lambda: ember.pow(x, 2j),
            "large": lambda: ember.ones(256, 256) ** 3,
            "no_grad": lambda: _no_grad(ember.pow, ember.tensor(values, requires_grad=True), 3)}[case]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = call()
            except (RuntimeError, TypeError, OverflowError) as error:
                results.append((type(error), str(error)))
                continue
            results.append((result.dtype, result.shape, result.requires_grad, result.numpy().tobytes()))
    assert results[0] == results[1]


# -- logical_and, logical_or, logical_xor ------------------------------------------------------

LOGICAL = ("logical_and", "logical_or", "logical_xor")


def _logical_operands(dtype):
    a = np.array([[0.0, -0.0, 1.5, np.nan, -2.0], [np.inf, 0.0, 3.0, 0.0, -1.0], [1.0, 0.0, np.nan, 2.0, 0.0]])
    return a.astype(dtype), a[::-1].copy().astype(dtype)


def test_logical_ops_take_the_common_case(monkeypatch):
    from ember.ops import compare
    a, b = (ember.tensor(v) for v in _logical_operands("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: [getattr(ember, name)(a, b) for name in LOGICAL],
                                        [(compare, "_truth")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("name", LOGICAL)
def test_logical_ops_are_the_python_paths_and_torchs(name, dtype):
    a, b = _logical_operands("float64")
    a, b = ((v != 0) if dtype == "bool" else np.nan_to_num(v, posinf=5).astype(dtype) if dtype == "int64"
            else v.astype(dtype) for v in (a, b))
    for other in (b, b[0], b.T.copy().T):
        for call in (lambda lib, x, y: getattr(lib, name)(x, y), lambda lib, x, y: getattr(x, name)(y)):
            compiled = call(ember, ember.tensor(a), ember.tensor(other))
            with python_paths():
                python = call(ember, ember.tensor(a), ember.tensor(other))
            want = call(torch, torch.tensor(a), torch.tensor(other))
            assert compiled.dtype == python.dtype == ember.bool and compiled.shape == python.shape
            assert compiled.stride() == python.stride()
            np.testing.assert_array_equal(compiled.numpy(), python.numpy())
            np.testing.assert_array_equal(compiled.numpy(), want.numpy())


@pytest.mark.parametrize("case", ["requires_grad", "out", "mixed_dtypes", "shapes_differ", "other_a_number"])
@pytest.mark.parametrize("name", LOGICAL)
def test_other_logical_cases_take_the_python_path(name, case):
    a, b = _logical_operands("float32")
    fn = getattr(ember, name)
    call = {"requires_grad": lambda: fn(ember.tensor(a, requires_grad=True), ember.tensor(b)),
            "out": lambda: fn(ember.tensor(a), ember.tensor(b), out=ember.empty(0, dtype=ember.bool)),
            "mixed_dtypes": lambda: fn(ember.tensor(a), ember.tensor(b.astype(np.float64))),
            "shapes_differ": lambda: fn(ember.tensor(a), ember.tensor(b[:2, :3])),
            "other_a_number": lambda: fn(ember.tensor(a), 1.0)}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError))
    assert results[0] == results[1]


# -- cross -------------------------------------------------------------------------------------

CROSSES = {"linalg_cross": (lambda a, b, d: ember.linalg.cross(a, b, dim=d),
                            lambda a, b, d: torch.linalg.cross(a, b, dim=d)),
           "cross": (lambda a, b, d: ember.cross(a, b, dim=d), lambda a, b, d: torch.cross(a, b, dim=d)),
           "method": (lambda a, b, d: a.cross(b, dim=d), lambda a, b, d: a.cross(b, dim=d))}


def _cross_operands(dtype, shape=(2, 3, 4)):
    rng = np.random.default_rng(31)
    return [(rng.standard_normal(shape) * 3).astype(dtype) for _ in range(2)]


def test_cross_takes_the_common_case(monkeypatch):
    from ember.ops import matrix_decompositions
    a, b = (ember.tensor(v) for v in _cross_operands("float32", (5, 3)))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.linalg.cross(a, b), a.cross(b, dim=1)),
                                        [(matrix_decompositions, "_cross_arrays")])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CROSSES))
def test_cross_is_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = CROSSES[name]
    for shape, dims in (((2, 3, 4), (1, -2)), ((3,), (0, -1)), ((5, 3), (1, -1)), ((3, 3), (0, 1))):
        a, b = _cross_operands(dtype, shape)
        for dim in dims:
            compiled = fn(ember.tensor(a), ember.tensor(b), dim)
            with python_paths():
                python = fn(ember.tensor(a), ember.tensor(b), dim)
            want = torch_fn(torch.tensor(a), torch.tensor(b), dim)
            assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
            assert compiled.stride() == python.stride()
            assert compiled.numpy().tobytes() == python.numpy().tobytes()
            np.testing.assert_allclose(compiled.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shapes", [((2, 3), (1, 3)), ((1, 3), (4, 3)), ((2, 1, 3), (1, 4, 3)),
                                    ((2, 3, 4), (1, 3, 1))])
def test_broadcast_cross_is_the_python_paths_and_torchs(monkeypatch, shapes):
    from ember.ops import matrix_decompositions
    rng = np.random.default_rng(32)
    a, b = ((rng.standard_normal(shape) * 3).astype(np.float32) for shape in shapes)
    dim = 1 if len(shapes[0]) == 3 and shapes[0][1] == 3 else -1
    grad = None
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, y = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
            out = ember.linalg.cross(x, y, dim=dim)
            grad = np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)
            out.backward(ember.tensor(grad))
            results.append((out.shape, out.detach().numpy().tobytes(), x.grad.numpy().tobytes(),
                            y.grad.numpy().tobytes()))
    assert results[0] == results[1]
    want = torch.linalg.cross(torch.tensor(a), torch.tensor(b), dim=dim)
    np.testing.assert_allclose(np.frombuffer(results[0][1], np.float32).reshape(want.shape), want.numpy(),
                               rtol=1e-5, atol=1e-5)
    x, y = ember.tensor(a), ember.tensor(b)
    _assert_the_compiled_function_takes(monkeypatch, lambda: ember.linalg.cross(x, y, dim=dim),
                                        [(matrix_decompositions, "_cross_arrays")])


@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_cross_nodes_and_gradients_are_the_python_paths(grads):
    a, b = _cross_operands("float32")
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, y = ember.tensor(a, requires_grad=grads[0]), ember.tensor(b, requires_grad=grads[1])
            out = ember.linalg.cross(x, y, dim=1)
            node = out.grad_fn
            fields = (type(node).__name__, node.dim, node._saved_dim,
                      [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((fields, [t.grad.numpy().tobytes() for t in (x, y) if t.requires_grad]))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["out", "broadcast", "not_broadcasting", "mixed_dtypes", "not_three", "int64",
                                  "float16", "transposed",
                                  "default_dim", "numpy_dim", "dim_out_of_range", "other_not_a_tensor", "no_grad"])
def test_other_cross_cases_take_the_python_path(case):
    a, b = _cross_operands("float32", (4, 3))
    x, y = ember.tensor(a), ember.tensor(b)
    call = {"out": lambda: ember.linalg.cross(x, y, out=ember.empty(0)),
            "broadcast": lambda: ember.linalg.cross(x, y[:1]),
            "not_broadcasting": lambda: ember.linalg.cross(x, y[:2]),
            "mixed_dtypes": lambda: ember.linalg.cross(x, y.double()),
            "not_three": lambda: ember.linalg.cross(ember.ones(4, 4), ember.ones(4, 4)),
            "int64": lambda: ember.linalg.cross(x.long(), y.long()),
            "float16": lambda: ember.linalg.cross(x.half(), y.half()),
            "transposed": lambda: ember.linalg.cross(x.t(), y.t(), dim=0),
            "default_dim": lambda: ember.cross(x, y),
            "numpy_dim": lambda: ember.linalg.cross(x, y, dim=np.int64(1)),
            "dim_out_of_range": lambda: ember.linalg.cross(x, y, dim=2),
            "other_not_a_tensor": lambda: ember.linalg.cross(x, b),
            "no_grad": lambda: _no_grad(ember.linalg.cross, ember.tensor(a, requires_grad=True), y)}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, IndexError))
    assert results[0] == results[1]


# ember.special's functions of two tensors (``_compiled_special``'s form "tensors"): name: (ember's,
# torch's, the first's range, the second's)
SPECIALS = {"gammainc": (ember.special.gammainc, torch.special.gammainc, (0.1, 6), (0.05, 10)),
            "gammaincc": (ember.special.gammaincc, torch.special.gammaincc, (0.1, 6), (0.05, 10)),
            "igamma": (ember.igamma, torch.igamma, (0.1, 6), (0.05, 10)),
            "igammac": (ember.igammac, torch.igammac, (0.1, 6), (0.05, 10)),
            "zeta": (ember.special.zeta, torch.special.zeta, (1.1, 6), (0.1, 5))}
SPECIALS["polygamma"] = (ember.special.polygamma, torch.special.polygamma, None, (0.1, 5))
POLYNOMIALS = [name for name in ember.special.__all__ if name.endswith(("_polynomial_t", "_polynomial_u",
                                                                        "_polynomial_v", "_polynomial_w",
                                                                        "_polynomial_h", "_polynomial_he",
                                                                        "_polynomial_l", "_polynomial_p"))]


def _special_operands(dtype, shape=(3, 5), first=(0.1, 6), second=(0.05, 10)):
    a = np.linspace(*first, math.prod(shape)).reshape(shape).astype(dtype)
    b = np.linspace(*second, math.prod(shape))[::-1].reshape(shape).astype(dtype)
    return a, b


def _special_calls(name, a, b):
    """``(ember's call, torch's call)`` of the special function ``name`` on the arrays ``a`` and ``b``
    (polygamma: of each n it takes on ``b``; a polynomial: of ``a`` and each degree)."""
    if name in POLYNOMIALS:
        fn, torch_fn = getattr(ember.special, name), getattr(torch.special, name)
        return [(lambda n=n: fn(ember.tensor(a), n), lambda n=n: torch_fn(torch.tensor(a), n))
                for n in (0, 1, 3, 7, 11, 2.7, -1)]
    fn, torch_fn = SPECIALS[name][:2]
    if name == "polygamma":
        return [(lambda n=n: fn(n, ember.tensor(b)), lambda n=n: torch_fn(n, torch.tensor(b))) for n in (0, 1, 2, 3, 5)]
    return [(lambda: fn(ember.tensor(a), ember.tensor(b)), lambda: torch_fn(torch.tensor(a), torch.tensor(b)))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(SPECIALS) + POLYNOMIALS)
def test_special_functions_are_the_python_paths_and_torchs(name, dtype):
    first, second = SPECIALS[name][2:] if name in SPECIALS else ((-1.2, 1.2), (0, 1))
    a, b = _special_operands(dtype, first=first or (0.1, 6), second=second)
    for call, torch_call in _special_calls(name, a, b):
        compiled = call()
        with python_paths():
            python = call()
        want = torch_call()
        assert compiled.dtype == python.dtype and compiled.shape == python.shape == tuple(want.shape)
        assert compiled.numpy().tobytes() == python.numpy().tobytes()
        np.testing.assert_allclose(compiled.numpy(), want.numpy(), rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["gammainc", "igammac", "zeta", "polygamma"])
def test_special_nodes_and_gradients_are_the_python_paths(name):
    fn = SPECIALS[name][0]
    a, b = _special_operands("float32", first=SPECIALS[name][2] or (0.1, 6), second=SPECIALS[name][3])
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, y = ember.tensor(a), ember.tensor(b, requires_grad=True)
            out = fn(2, y) if name == "polygamma" else fn(x, y)
            node = out.grad_fn
            fields = [getattr(node, field, None) for field in ("n", "self_shape", "self_dtype", "other_shape",
                                                               "other_dtype")]
            fields += [t.detach().numpy().tobytes() for t in node.saved_tensors]
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((type(node).__name__, fields, y.grad.numpy().tobytes()))
    assert results[0] == results[1]


# the dtypes of two tensors that the incomplete gamma functions promote (the first cast, as torch does)
_MIXED_DTYPES = [("int64", "float32"), ("float32", "int32"), ("bool", "float32"), ("uint8", "float64"),
                 ("float32", "float64"), ("float64", "int16"), ("int8", "float32")]


@pytest.mark.parametrize("dtypes", _MIXED_DTYPES, ids="-".join)
@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "igamma", "igammac"])
def test_incomplete_gamma_of_two_dtypes_is_the_python_paths_and_torchs(name, dtypes):
    a = np.array([0, 1, 2, 3, 7, 1, 40, 5, 2, 1, 3, 9]).reshape(3, 4).astype(dtypes[0])
    b = np.linspace(0.05, 12, 12)[::-1].reshape(3, 4).astype(dtypes[1])
    if dtypes[1] == "int32" or dtypes[1] == "int16":
        a, b = np.linspace(0.5, 9, 12).reshape(3, 4).astype(dtypes[0]), np.arange(12).reshape(3, 4).astype(dtypes[1])
    fn, torch_fn = SPECIALS[name][:2]
    results = _on_both_paths(lambda: fn(ember.tensor(a), ember.tensor(b)))
    assert results[0] == results[1]
    want = torch_fn(torch.tensor(a), torch.tensor(b))
    assert results[0][0] == getattr(ember, str(want.dtype).removeprefix("torch."))
    np.testing.assert_allclose(np.frombuffer(results[0][3], want.numpy().dtype).reshape(3, 4), want.numpy(),
                               rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [1, 512, 513, 3000])
def test_special_functions_of_many_elements_are_the_python_paths(size, dtype):
    """The float64 copies and the result on the stack up to 512 elements, on the heap beyond: the same bits
    (the incomplete gamma functions compiled below the size from which their loop runs on the threads)."""
    from ember._backend import special_loops
    from ember.special import _binary
    assert _binary.INCOMPLETE_ONE_THREAD_ELEMENTS == special_loops.PARALLEL_MIN_ELEMENTS
    a, b = _special_operands(dtype, shape=(size,), first=(0.1, 6), second=(0.05, 10))
    for name in ("gammainc", "igammac", "zeta"):
        fn = SPECIALS[name][0]
        results = _on_both_paths(lambda: fn(ember.tensor(a + (1.0 if name == "zeta" else 0.0)), ember.tensor(b)))
        assert results[0] == results[1]


@pytest.mark.parametrize("degrees", ["int64", "bool", "float32", "float64", "edges"])
@pytest.mark.parametrize("x", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("name", ["legendre_polynomial_p", "shifted_chebyshev_polynomial_t", "hermite_polynomial_he"])
def test_polynomials_of_tensor_degrees_and_integer_x_are_the_python_paths_and_torchs(name, x, degrees):
    xs = np.array([-3, 1, 2, 0, 1, -1, 0.5, 0.25]).astype(x)
    ns = (np.array([np.nan, np.inf, -np.inf, 2.0 ** 70, -2.0 ** 63, 3.9, -0.5, 7]) if degrees == "edges"
          else np.array([0, 1, 4, 5, 3, 12, 2.7, -1]).astype(degrees))
    fn, torch_fn = getattr(ember.special, name), getattr(torch.special, name)
    for degree in [ember.tensor(ns), 3, 2.5]:
        results = _on_both_paths(lambda: fn(ember.tensor(xs), degree))
        assert results[0] == results[1]
        want = torch_fn(torch.tensor(xs), torch.tensor(ns) if isinstance(degree, ember.Tensor) else degree)
        assert results[0][0] == getattr(ember, str(want.dtype).removeprefix("torch."))
        if degrees != "edges":   # (torch's degrees beyond int64 are its own: ember's take the Python op's)
            np.testing.assert_allclose(np.frombuffer(results[0][3], want.numpy().dtype), want.numpy(), rtol=2e-5,
                                       atol=1e-5)


def test_polynomials_of_integers_take_the_default_float_dtype():
    xs, ns = np.array([-3, 1, 2, 0]), np.array([0, 1, 4, 5])
    results = _on_both_paths(lambda: _with_default(ember.float64, lambda: ember.special.legendre_polynomial_p(
        ember.tensor(xs), ember.tensor(ns))))
    assert results[0] == results[1]
    want = torch.special.legendre_polynomial_p(torch.tensor(xs, dtype=torch.float64), torch.tensor(ns)).numpy()
    assert results[0][0] == ember.float64 and np.frombuffer(results[0][3], np.float64).tolist() == want.tolist()


def test_standard_gamma_grad_is_the_python_paths_and_torchs():
    for dtype in ("float32", "float64"):
        alpha = np.linspace(0.05, 20, 20).reshape(4, 5).astype(dtype)
        x = np.linspace(0.02, 30, 20)[::-1].reshape(4, 5).astype(dtype)
        results = _on_both_paths(lambda: ember._standard_gamma_grad(ember.tensor(alpha), ember.tensor(x)))
        assert results[0] == results[1]
        want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
        np.testing.assert_allclose(np.frombuffer(results[0][3], dtype).reshape(4, 5), want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["gammainc", "zeta", "polygamma", "legendre_polynomial_p", "mixed_dtypes",
                                  "polynomial_tensor_degrees", "polynomial_int_x", "standard_gamma_grad"])
def test_special_functions_take_the_common_case(monkeypatch, name):
    from ember._backend import special_loops
    a, b = (ember.tensor(v) for v in _special_operands("float32", first=(1.1, 6)))
    call = {"gammainc": lambda: ember.special.gammainc(a, b), "zeta": lambda: ember.special.zeta(a, b),
            "polygamma": lambda: (ember.special.polygamma(1, b), ember.special.polygamma(3, b)),
            "legendre_polynomial_p": lambda: ember.special.legendre_polynomial_p(a, 4),
            "mixed_dtypes": lambda: (ember.special.gammaincc(a.long(), b), ember.igamma(a, b.double())),
            "polynomial_tensor_degrees": lambda: ember.special.hermite_polynomial_h(a, b.long()),
            "polynomial_int_x": lambda: ember.special.laguerre_polynomial_l(a.long(), 3),
            "standard_gamma_grad": lambda: ember._standard_gamma_grad(a, b)}[name]
    _assert_the_compiled_function_takes(monkeypatch, call, [(special_loops, "_over_two_arrays"),
                                                            (special_loops, "compute")])


_SPECIAL_CASES = {
    "out": lambda a, b: ember.special.gammainc(a, b, out=ember.empty(0)),
    "broadcast": lambda a, b: ember.special.gammaincc(a, b[:1]),
    "zeta_mixed_dtypes": lambda a, b: ember.special.zeta(a, b.double()),
    "mixed_dtypes_grad": lambda a, b: ember.igamma(a.long(), b.requires_grad_()),
    "mixed_dtypes_broadcast": lambda a, b: ember.igammac(a.long(), b[:1]),
    "int_and_bool": lambda a, b: ember.igammac(a.long(), b > 2),
    "standard_gamma_grad_grad": lambda a, b: ember._standard_gamma_grad(a.requires_grad_(), b),
    "standard_gamma_grad_mixed": lambda a, b: ember._standard_gamma_grad(a, b.double()),
    "standard_gamma_grad_int": lambda a, b: ember._standard_gamma_grad(a.long(), b.long()),
    "standard_gamma_grad_broadcast": lambda a, b: ember._standard_gamma_grad(a, b[:1]),
    "polynomial_degrees_of_another_shape": lambda a, b: ember.special.hermite_polynomial_h(a, b[:1]),
    "polynomial_float16_degrees": lambda a, b: ember.special.hermite_polynomial_h(a, b.half()),
    "polynomial_complex_degrees": lambda a, b: ember.special.hermite_polynomial_h(a, b.to(ember.complex64)),
    "polynomial_int_x_float16_default": lambda a, b: _with_default_float16(
        lambda: ember.special.legendre_polynomial_p(a.long(), b.long())),
    "float16": lambda a, b: ember.special.zeta(a.half(), b.half()),
    "int64": lambda a, b: ember.special.gammainc(a.long(), b.long()),
    "transposed": lambda a, b: ember.special.zeta(a.t(), b.t()),
    "number": lambda a, b: ember.special.zeta(a, 2.5),
    "number_first": lambda a, b: ember.special.zeta(2.5, b),
    "keywords": lambda a, b: ember.special.zeta(a, other=b),
    "empty": lambda a, b: ember.special.gammainc(a[:0], b[:0]),
    "zeta_beyond_its_loop": lambda a, b: ember.special.zeta(ember.full((64, 64), 2.0), ember.full((64, 64), 0.5)),
    "polygamma_negative_n": lambda a, b: ember.special.polygamma(-1, b),
    "polygamma_large_n": lambda a, b: ember.special.polygamma(171, b),
    "polygamma_float_n": lambda a, b: ember.special.polygamma(2.0, b),
    "polygamma_int": lambda a, b: ember.special.polygamma(2, b.long()),
    "polygamma_bool": lambda a, b: ember.special.polygamma(0, b > 3),
    "polygamma_float16": lambda a, b: ember.special.polygamma(1, b.half()),
    "polygamma_no_grad": lambda a, b: _no_grad(lambda t: ember.special.polygamma(2, t), b.requires_grad_()),
    "polynomial_tensor_degrees": lambda a, b: ember.special.hermite_polynomial_h(a, b[0]),
    "polynomial_tensor_x_number": lambda a, b: ember.special.hermite_polynomial_h(0.5, b),
    "polynomial_huge_degree": lambda a, b: ember.special.chebyshev_polynomial_t(a / 7, 2 ** 70),
    "polynomial_least_degree": lambda a, b: ember.special.chebyshev_polynomial_t(a / 7, -2 ** 63),
    "polynomial_nan_degree": lambda a, b: ember.special.chebyshev_polynomial_u(a / 7, math.nan),
    "polynomial_bool_degree": lambda a, b: ember.special.legendre_polynomial_p(a / 7, True),
    "polynomial_grad": lambda a, b: ember.special.hermite_polynomial_he(a.requires_grad_(), 4),
}


def _with_default_float16(call):
    return _with_default(ember.float16, call)


def _with_default(dtype, call):
    before = ember.get_default_dtype()
    ember.set_default_dtype(dtype)
    try:
        return call()
    finally:
        ember.set_default_dtype(before)


@pytest.mark.parametrize("case", sorted(_SPECIAL_CASES))
def test_other_special_cases_take_the_python_path(case):
    a, b = _special_operands("float32", first=(1.1, 6))
    results = _on_both_paths(lambda: _SPECIAL_CASES[case](ember.tensor(a), ember.tensor(b)),
                             (RuntimeError, TypeError, NotImplementedError, OverflowError))
    assert results[0] == results[1]


@pytest.mark.parametrize("shape", [(3, 5), (222, 295)])   # (the second past the small arrays)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_binary_integer_cases_are_the_python_paths_and_torchs(monkeypatch, name, dtype, shape):
    rng = np.random.default_rng(0)
    a, b = rng.integers(0 if dtype in ("uint8", "bool") else -9, 9, (2,) + shape).astype(dtype)
    fn, torch_fn = BINARY_OPS[name][:2]
    results = _on_both_paths(lambda: fn(ember.tensor(a), ember.tensor(b)))
    assert results[0] == results[1]
    assert results[0][3] == torch_fn(torch.tensor(a), torch.tensor(b)).numpy().tobytes()
    ufunc = getattr(np, name)
    calls = []
    monkeypatch.setattr(np, name, lambda *args: calls.append(args) or ufunc(*args))
    fn(ember.tensor(a), ember.tensor(b))
    assert calls == []   # (the C function calls the ufunc itself)
    with python_paths():
        fn(ember.tensor(a), ember.tensor(b))
    assert calls



# -- addcmul and addcdiv -----------------------------------------------------------------------

ADDCS = {"addcmul": (ember.addcmul, torch.addcmul), "addcdiv": (ember.addcdiv, torch.addcdiv),
         "addcmul_method": (lambda x, a, b, **k: x.addcmul(a, b, **k), lambda x, a, b, **k: x.addcmul(a, b, **k))}


def _addc_operands(dtype, shape=(3, 5)):
    rng = np.random.default_rng(0)
    x, a = rng.uniform(-3, 3, (2,) + shape).astype(dtype)
    b = rng.uniform(0.5, 2, shape).astype(dtype)
    return x, a, b


def test_addc_takes_the_common_case(monkeypatch):
    from ember.ops import ternary
    x, a, b = (ember.tensor(v) for v in _addc_operands("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.addcmul(x, a, b), ember.addcdiv(x, a, b, value=2)),
                                        [(ternary, "_addc_arrays")])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv", "lerp"])
def test_addc_and_lerp_of_medium_tensors_take_the_c_loop_with_the_python_loops_bits(monkeypatch, name, dtype):
    """Past the small arrays, up to ``COMPILED_TERNARY_MAX_ELEMENTS``: the C function's loop, the bits of the
    Python op's (vector-math loops for float32, NumPy's passes for float64), torch's values."""
    from ember.ops import ternary
    rng = np.random.default_rng(7)
    x, a, b = rng.uniform(0.5, 2, (3, 300, 301)).astype(dtype)
    assert 1 << 16 < x.size <= ternary.COMPILED_TERNARY_MAX_ELEMENTS
    call = {"addcmul": lambda lib: lib.addcmul(lib.tensor(x), lib.tensor(a), lib.tensor(b), value=0.3),
            "addcdiv": lambda lib: lib.addcdiv(lib.tensor(x), lib.tensor(a), lib.tensor(b), value=-2),
            "lerp": lambda lib: lib.lerp(lib.tensor(x), lib.tensor(a), 0.7)}[name]
    spied = (ternary, "_lerp_forward" if name == "lerp" else "_addc_arrays")
    _assert_the_compiled_function_takes(monkeypatch, lambda: call(ember), [spied])
    results = _on_both_paths(lambda: call(ember))
    assert results[0] == results[1]
    want = call(torch).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype=dtype).reshape(want.shape), want, rtol=1e-5)


@pytest.mark.parametrize("value", [1, 1.0, 2, -0.5, 0.1, 3e-39, 16777216, -7])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ADDCS))
def test_addc_is_the_python_paths_and_torchs(name, dtype, value):
    fn, torch_fn = ADDCS[name]
    x, a, b = _addc_operands(dtype)
    results = _on_both_paths(lambda: fn(ember.tensor(x), ember.tensor(a), ember.tensor(b), value=value))
    assert results[0] == results[1]
    want = torch_fn(torch.tensor(x), torch.tensor(a), torch.tensor(b), value=value).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype=dtype).reshape(3, 5), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("grads", [(True, True, True), (False, True, False), (True, False, False)])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addc_nodes_and_gradients_are_the_python_paths(name, grads):
    fn = ADDCS[name][0]
    values = _addc_operands("float32")
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            tensors = [ember.tensor(v, requires_grad=g) for v, g in zip(values, grads)]
            out = fn(*tensors, value=0.75)
            node = out.grad_fn
            fields = (type(node).__name__, node.value, node.metas,
                      [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)))
            results.append((fields, [t.grad.numpy().tobytes() for t in tensors if t.requires_grad]))
    assert results[0] == results[1]


_ADDC_CASES = {
    "out": lambda x, a, b: ember.addcmul(x, a, b, out=ember.empty(0)),
    "broadcast": lambda x, a, b: ember.addcmul(x, a[:1], b),
    "mixed_dtypes": lambda x, a, b: ember.addcdiv(x, a.double(), b),
    "float16": lambda x, a, b: ember.addcmul(x.half(), a.half(), b.half()),
    "int_division": lambda x, a, b: ember.addcdiv(x, a.long(), b.long()),
    "transposed": lambda x, a, b: ember.addcmul(x.t(), a.t(), b.t()),
    "bool_value": lambda x, a, b: ember.addcmul(x, a, b, value=True),
    "large_int_value": lambda x, a, b: ember.addcmul(x, a, b, value=16777217),
    "huge_int_value": lambda x, a, b: ember.addcmul(x, a, b, value=2 ** 80),
    "nan_value": lambda x, a, b: ember.addcmul(x, a, b, value=math.nan),
    "overflowing_value": lambda x, a, b: ember.addcmul(x, a, b, value=1e39),
    "zero_value": lambda x, a, b: ember.addcmul(x, a, b, value=0),
    "zero_divisor": lambda x, a, b: ember.addcdiv(x, a, b * 0),
    "overflow": lambda x, a, b: ember.addcmul(x, a * 1e30, b * 1e30),
    "infinities": lambda x, a, b: ember.addcmul(x, a * math.inf, b),
    "large": lambda x, a, b: ember.addcdiv(ember.ones(600, 500), ember.ones(600, 500), ember.ones(600, 500)),
    "tensor_value": lambda x, a, b: ember.addcmul(x, a, b, value=ember.tensor(2.0)),
    "not_a_tensor": lambda x, a, b: ember.addcmul(x, a.numpy(), b),
    "no_grad": lambda x, a, b: _no_grad(ember.addcmul, x.requires_grad_(), a, b),
}


@pytest.mark.parametrize("case", sorted(_ADDC_CASES))
def test_other_addc_cases_take_the_python_path(case):
    values = _addc_operands("float32")
    results = _on_both_paths(lambda: _ADDC_CASES[case](*(ember.tensor(v) for v in values)), (RuntimeError, TypeError))
    assert results[0] == results[1]


def _integer_addc_operands(dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    low, high = max(info.min, -2 ** 62), min(info.max, 2 ** 62)
    return (rng.integers(low, high, (3, 4), endpoint=True).astype(dtype),
            rng.integers(low, high, (4,), endpoint=True).astype(dtype),
            rng.integers(low, high, (3, 1), endpoint=True).astype(dtype))


def test_integer_addcmul_takes_the_common_case(monkeypatch):
    from ember.ops import ternary
    x, a, b = (ember.tensor(v) for v in _integer_addc_operands("int64"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.addcmul(x, a, b, value=3), x.addcmul(a, b)),
                                        [(ternary, "_compute")])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64"])
def test_integer_addcmul_is_the_python_paths_and_torchs(dtype):
    """Three integer tensors of one dtype whose shapes broadcast and an int value: each step wraps around as
    NumPy's passes (and torch's kernel) wrap."""
    x, a, b = _integer_addc_operands(dtype)
    info = np.iinfo(dtype)
    for value in sorted({1, 3, 0, -7, info.max, info.min, -1}):
        if not info.min <= value <= info.max:
            continue
        for args in ((x, a, b), (a, x, b), (b, a, x[:1]), (x[0, 0], a, b[0])):
            results = _on_both_paths(lambda: ember.addcmul(*(ember.tensor(v) for v in args), value=value))
            assert results[0] == results[1]
            if dtype in ("int64", "int32", "int16", "int8", "uint8"):   # (torch's integer dtypes)
                want = torch.addcmul(*(torch.tensor(v) for v in args), value=value).numpy()
                assert np.frombuffer(results[0][3], dtype).reshape(want.shape).tolist() == want.tolist()


_INTEGER_ADDC_CASES = {
    "not_held_value": lambda x, a, b: ember.addcmul(x.int(), a.int(), b.int(), value=2 ** 40),
    "negative_value_unsigned": lambda x, a, b: ember.addcmul(x.byte(), a.byte(), b.byte(), value=-1),
    "float_value": lambda x, a, b: ember.addcmul(x, a, b, value=0.5),
    "bool_value": lambda x, a, b: ember.addcmul(x, a, b, value=True),
    "huge_value": lambda x, a, b: ember.addcmul(x, a, b, value=2 ** 70),
    "bool": lambda x, a, b: ember.addcmul(x > 0, a > 0, b > 0),
    "mixed_dtypes": lambda x, a, b: ember.addcmul(x, a.int(), b),
    "float_and_integers": lambda x, a, b: ember.addcmul(x.float(), a, b),
    "not_broadcasting": lambda x, a, b: ember.addcmul(x, a[:3], b),
    "division": lambda x, a, b: ember.addcdiv(x, a, b),
    "out": lambda x, a, b: ember.addcmul(x, a, b, out=ember.empty(0, dtype=ember.int64)),
    "empty": lambda x, a, b: ember.addcmul(x[:0], a, b[:0]),
}


@pytest.mark.parametrize("case", sorted(_INTEGER_ADDC_CASES))
def test_other_integer_addc_cases_take_the_python_path(case):
    values = [v % 100 for v in _integer_addc_operands("int64")]
    results = _on_both_paths(lambda: _INTEGER_ADDC_CASES[case](*(ember.tensor(v) for v in values)),
                             (RuntimeError, TypeError))
    assert results[0] == results[1]



# -- cumsum and cumprod ------------------------------------------------------------------------

SCANS = {"cumsum": (ember.cumsum, torch.cumsum), "cumprod": (ember.cumprod, torch.cumprod),
         "cumsum_method": (lambda x, d: x.cumsum(d), lambda x, d: x.cumsum(d)),
         "cumprod_method": (lambda x, d: x.cumprod(d), lambda x, d: x.cumprod(d))}


def _scan_values(dtype, shape=(3, 5)):
    values = np.linspace(-1.5, 1.5, math.prod(shape)).reshape(shape)
    if dtype == "int64":
        return np.arange(math.prod(shape)).reshape(shape) * 3 ** 11 - 7
    return values.astype(dtype)


def test_scans_take_the_common_case(monkeypatch):
    from ember.ops import reduce
    x = ember.tensor(_scan_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.cumsum(x, 1), x.cumprod(0)),
                                        [(reduce, "_cumsum_array"), (reduce, "_cumprod_array")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", sorted(SCANS))
def test_scans_are_the_python_paths_and_torchs(name, dtype):
    fn, torch_fn = SCANS[name]
    for shape in ((3, 5), (2, 3, 4), (7,)):
        values = _scan_values(dtype, shape)
        for dim in range(-len(shape), len(shape)):
            results = _on_both_paths(lambda: fn(ember.tensor(values), dim))
            assert results[0] == results[1]
            want = torch_fn(torch.tensor(values), dim).numpy()
            assert results[0][0] == ember.tensor(want).dtype
            got = np.frombuffer(results[0][3], dtype=want.dtype).reshape(shape)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6) if dtype != "int64" \
                else np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scan_nodes_and_gradients_are_the_python_paths(name):
    fn = SCANS[name][0]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(_scan_values("float32", (2, 3, 4)), requires_grad=True)
            out = fn(x, -2)
            node = out.grad_fn
            fields = (type(node).__name__, node.dim, node.in_dtype,
                      [t.detach().numpy().tobytes() for t in node.saved_tensors] if name == "cumprod" else None)
            out.backward(ember.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)))
            results.append((fields, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


_SCAN_CASES = {
    "dtype": lambda x: ember.cumsum(x, 1, dtype=ember.float64),
    "out": lambda x: ember.cumsum(x, 1, out=ember.empty(0)),
    "int32": lambda x: ember.cumsum(x.int(), 1),
    "bool": lambda x: ember.cumprod(x > 0, 1),
    "float16": lambda x: ember.cumsum(x.half(), 1),
    "zero_dim": lambda x: ember.cumsum(x[0, 0], 0),
    "transposed": lambda x: ember.cumprod(x.t(), 1),
    "empty": lambda x: ember.cumsum(x[:, :0], 1),
    "dim_out_of_range": lambda x: ember.cumsum(x, 2),
    "numpy_dim": lambda x: ember.cumsum(x, np.int64(1)),
    "dim_keyword": lambda x: ember.cumsum(x, dim=1),
    "large": lambda x: ember.cumsum(ember.ones(128, 128), 1),
    "no_grad": lambda x: _no_grad(ember.cumprod, x.requires_grad_(), 1),
    "overflow": lambda x: ember.cumprod(x * 1e30, 1),
}


@pytest.mark.parametrize("case", sorted(_SCAN_CASES))
def test_other_scan_cases_take_the_python_path(case):
    values = _scan_values("float32")
    results = _on_both_paths(lambda: _SCAN_CASES[case](ember.tensor(values)), (RuntimeError, TypeError, IndexError))
    assert results[0] == results[1]



# -- var_mean and std_mean ---------------------------------------------------------------------

MOMENT_PAIRS = {"var_mean": (ember.var_mean, torch.var_mean), "std_mean": (ember.std_mean, torch.std_mean)}


@pytest.mark.parametrize("name", sorted(MOMENT_PAIRS))
def test_moment_pairs_take_the_common_case(monkeypatch, name):
    from ember.ops import reduce
    x = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    _assert_the_compiled_function_takes(monkeypatch, lambda: MOMENT_PAIRS[name][0](x, 1), [(reduce, "_reduce_dims")])


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", sorted(MOMENT_PAIRS))
def test_moment_pairs_are_the_python_paths_and_torchs(name, layout):
    fn, torch_fn = MOMENT_PAIRS[name]
    for dtype in ("float32", "float64"):
        values = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(dtype)
        if layout == "transposed":
            values = values.transpose(2, 1, 0)
        for args in DIMS:
            compiled = fn(ember.tensor(values), *args)
            with python_paths():
                python = fn(ember.tensor(values), *args)
            want = torch_fn(torch.tensor(values), *args)
            assert type(compiled) is type(python) is tuple and len(compiled) == 2
            for c, p, w in zip(compiled, python, want):
                assert c.dtype == p.dtype and c.shape == p.shape == tuple(w.shape), args
                np.testing.assert_array_equal(c.numpy(), p.numpy())
                np.testing.assert_allclose(c.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("values", ["spread", "nan", "inf", "huge", "nan_and_huge", "constant", "zeros"])
@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 8), (1, 129), (2, 300), (4, 17, 2)])
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean", "sum", "mean", "norm", "amax", "amin",
                                  "nansum"])
def test_moments_of_trailing_runs_are_the_python_paths(name, shape, values):
    """The sums, means, 2-norms and moments computed in C over runs of the last dims (NumPy's pairwise
    sums, whatever the run's length), and where a step overflows or is invalid the NumPy passes (their
    warnings too)."""
    fn = {"norm": lambda x, dim=None, unbiased=None, keepdim=False: ember.linalg.vector_norm(x, 2, dim, keepdim),
          "sum": lambda x, dim=None, unbiased=None, keepdim=False: ember.sum(x, dim, keepdim),
          "mean": lambda x, dim=None, unbiased=None, keepdim=False: ember.mean(x, dim, keepdim),
          "nansum": lambda x, dim=None, unbiased=None, keepdim=False: ember.nansum(x, dim, keepdim),
          "amax": lambda x, dim=None, unbiased=None, keepdim=False: ember.amax(x, dim or (), keepdim),
          "amin": lambda x, dim=None, unbiased=None, keepdim=False: ember.amin(x, dim or (), keepdim)}.get(
              name, getattr(ember, name))
    rng = np.random.default_rng(5)
    for dtype in ("float32", "float64"):
        x = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)).astype(dtype)
        if values == "nan":
            x.reshape(-1)[1] = np.nan
        elif values == "inf":
            x.reshape(-1)[2] = np.inf
        elif values in ("huge", "nan_and_huge"):   # (overflowing sums of squares, or sums of two)
            x.reshape(-1)[:2] = np.finfo(dtype).max / 1.5
            x.reshape(-1)[2] = np.nan if values == "nan_and_huge" else x.reshape(-1)[2]
        elif values == "constant":
            x[...] = 0.1
        elif values == "zeros":   # (signed zeros as the extremes: NumPy's choice, on the Python path)
            x[...] = 0.0
            x.reshape(-1)[::3] = -0.0
        for args in [(), (-1,), (-1, None, True), (tuple(range(1, len(shape))),), (None, None, True)]:
            def call():
                result = fn(ember.tensor(x), *args)
                return result if isinstance(result, ember.Tensor) else ember.stack(result)
            results = _on_both_paths(call)
            assert results[0] == results[1], (args, dtype)


_CORRECTIONS = {"correction0": {"correction": 0}, "correction2": {"correction": 2},
                "correction_float": {"correction": 1.5}, "correction_negative": {"correction": -1},
                "correction_all": {"correction": 4}, "correction_beyond": {"correction": 9},
                "correction_nan": {"correction": math.nan}, "unbiased_false": {"unbiased": False},
                "unbiased_true": {"unbiased": True}, "both": {"unbiased": True, "correction": 0}}


@pytest.mark.parametrize("given", sorted(_CORRECTIONS))
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_moments_with_corrections_are_the_python_paths(monkeypatch, name, given):
    """A correction (or ``unbiased``) taken in C: the Python path's bits, node fields (``dof`` an int or
    a float, as it computes it), gradients and warnings; no degrees of freedom left: its warning."""
    from ember.ops import reduce
    fn = getattr(ember, name)
    values = np.random.default_rng(12).standard_normal((3, 4)).astype(np.float32)
    for args in ((), (1,), (1, True)):
        kwargs = dict(_CORRECTIONS[given])
        if len(args) == 2:
            kwargs["keepdim"], args = True, args[:1]
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                x = ember.tensor(values, requires_grad=True)
                try:
                    out = fn(x, *args, **kwargs)
                except TypeError as error:
                    results.append(str(error))
                    continue
                first = out if isinstance(out, ember.Tensor) else out[0]
                node = first.grad_fn
                first.backward(ember.ones_like(first))
                results.append((first.detach().numpy().tobytes(), type(node.dof), repr(node.dof),
                                x.grad.numpy().tobytes(), [str(m.message) for m in w]))
        assert results[0] == results[1], (args, kwargs)
    if given in ("correction0", "correction_float", "unbiased_false"):
        x = ember.tensor(values)
        _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, 1, **_CORRECTIONS[given]),
                                            [(reduce, "_reduce_dims")])
        want = getattr(torch, name)(torch.tensor(values), 1, **_CORRECTIONS[given])
        got = fn(x, 1, **_CORRECTIONS[given])
        for g, t in zip(*((got, want) if isinstance(got, tuple) else ((got,), (want,)))):
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("which", [0, 1, None])
@pytest.mark.parametrize("name", sorted(MOMENT_PAIRS))
def test_moment_pair_nodes_and_gradients_are_the_python_paths(name, which):
    fn = MOMENT_PAIRS[name][0]
    values = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    for args in DIMS:
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                x = ember.tensor(values, requires_grad=True)
                pair = fn(x, *args)
                node = pair[0].grad_fn
                assert pair[1].grad_fn is node
                fields = {key: getattr(node, key, None) for key in ("dims", "keepdim", "dof")}
                saved = [t.detach().numpy().tobytes() for t in node.saved_tensors]
                chosen = pair if which is None else (pair[which],)
                ember.autograd.backward(chosen, [ember.tensor(np.linspace(-1, 1, y.numel(), dtype=np.float32)
                                                              .reshape(y.shape)) for y in chosen])
                results.append((type(node).__name__, fields, saved, x.grad.numpy().tobytes()))
        assert results[0] == results[1], args


@pytest.mark.parametrize("case", ["int64", "float16", "unbiased", "correction", "one_element", "large", "empty",
                                  "no_grad", "bool_dim"])
@pytest.mark.parametrize("name", sorted(MOMENT_PAIRS))
def test_other_moment_pair_cases_take_the_python_path(name, case):
    fn = MOMENT_PAIRS[name][0]
    values = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    call = {"int64": lambda: fn(ember.tensor(np.arange(12).reshape(3, 4)), 1),
            "float16": lambda: fn(ember.tensor(values.astype(np.float16)), 1),
            "unbiased": lambda: fn(ember.tensor(values), 1, False),
            "correction": lambda: fn(ember.tensor(values), 1, correction=0),
            "one_element": lambda: fn(ember.tensor(values[:1]), 0),
            "large": lambda: fn(ember.tensor(np.ones((64, 64), np.float32)), 0),
            "empty": lambda: fn(ember.tensor(values[:0]), 0),
            "no_grad": lambda: _no_grad(fn, ember.tensor(values, requires_grad=True), 1),
            "bool_dim": lambda: fn(ember.tensor(values), True)}[case]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                pair = call()
            except (RuntimeError, TypeError, IndexError) as error:
                results.append((type(error), str(error)))
                continue
            results.append([(t.dtype, t.shape, t.requires_grad, t.detach().numpy().tobytes()) for t in pair]
                           + [str(w.message) for w in caught])
    assert results[0] == results[1]


@pytest.mark.parametrize("shapes", [((3, 5), (3, 5)), ((3, 5), (5,))])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("name", ["fmod", "floor_divide", "remainder", "_python_div_floor"])
def test_integer_divisions_are_the_python_paths_and_torchs(monkeypatch, name, dtype, shapes):
    rng = np.random.default_rng(0)
    low = 0 if dtype == "uint8" else -9
    a = rng.integers(low, 9, shapes[0]).astype(dtype)
    b = np.where(rng.integers(0, 2, shapes[1]) == 1, 1, -1) * rng.integers(1, 5, shapes[1])
    b = (np.abs(b) if dtype == "uint8" else b).astype(dtype)
    fn, torch_fn = BINARY_OPS[name][:2]
    results = _on_both_paths(lambda: fn(ember.tensor(a), ember.tensor(b)))
    assert results[0] == results[1]
    assert results[0][3] == torch_fn(torch.tensor(a), torch.tensor(b)).numpy().tobytes()
    ufunc_name = {"_python_div_floor": "floor_divide"}.get(name, name)
    int_ufunc = getattr(np, ufunc_name)
    calls = []
    monkeypatch.setattr(np, ufunc_name, lambda *args: calls.append(args) or int_ufunc(*args))
    fn(ember.tensor(a), ember.tensor(b))
    assert calls == []   # (the C function calls the ufunc itself)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("name", ["fmod", "floor_divide", "remainder"])
def test_integer_divisions_by_an_int_are_the_python_paths_and_torchs(monkeypatch, name, dtype):
    """An integer tensor divided by a Python int in its dtype's range, not 0 (as functions, and as ``//`` and
    ``%``), on the ufunc from C: the Python path's bits and dtype, and torch's."""
    info = np.iinfo(dtype)
    a = np.array([info.min, -7 if info.min else 7, 0, 1, 5, 13, info.max], dtype=dtype)
    fn, torch_fn = BINARY_OPS[name][:2]
    operator = {"floor_divide": lambda x, v: x // v, "remainder": lambda x, v: x % v}.get(name)
    for value in (1, 3, 7, -1, -3, int(info.max), int(info.min)):
        if not info.min <= value <= info.max or value == 0:
            continue
        for call in (fn, operator) if operator else (fn,):
            results = _on_both_paths(lambda: call(ember.tensor(a), value))
            assert results[0] == results[1]
            want = torch_fn(torch.tensor(a), value)
            assert str(results[0][0]).split(".")[1] == str(want.dtype).split(".")[1]
            assert results[0][3] == want.numpy().tobytes()
    int_ufunc = getattr(np, name)
    calls = []
    monkeypatch.setattr(np, name, lambda *args: calls.append(args) or int_ufunc(*args))
    fn(ember.tensor(a), 3)
    assert calls == []   # (the C function calls the ufunc itself)


@pytest.mark.parametrize("case", ["zero_divisor", "zero_in_a_row", "bool", "mixed_ints", "not_broadcasting",
                                  "zero_int", "int_out_of_range", "uint8_negative_int"])
@pytest.mark.parametrize("name", ["fmod", "floor_divide", "remainder", "_python_div_floor"])
def test_other_integer_division_cases_take_the_python_path(name, case):
    fn = BINARY_OPS[name][0]
    a = np.arange(-7, 8).reshape(3, 5)
    call = {"zero_divisor": lambda: fn(ember.tensor(a), ember.tensor(a)),
            "zero_int": lambda: fn(ember.tensor(a), 0),
            "int_out_of_range": lambda: fn(ember.tensor(a.astype(np.int8)), 300),
            "uint8_negative_int": lambda: fn(ember.tensor(np.abs(a).astype(np.uint8)), -3),
            "zero_in_a_row": lambda: fn(ember.tensor(a), ember.tensor(np.array([1, 2, 0, 3, 4]))),
            "bool": lambda: fn(ember.tensor(a > 0), ember.tensor(a > -9)),
            "mixed_ints": lambda: fn(ember.tensor(a), ember.tensor(np.ones(5, np.int32))),
            "not_broadcasting": lambda: fn(ember.tensor(a), ember.tensor(np.ones(4, np.int64)))}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]



@pytest.mark.parametrize("case", ["zero", "infinity", "nan_order", "bool_order", "numpy_order", "dtype", "tensor_order",
                                  "huge_order", "one_element", "empty"])
def test_other_p_norm_cases_take_the_python_path(case):
    values = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    with_zero, with_inf = values.copy(), values.copy()
    with_zero[1, 2], with_inf[0, 1] = 0.0, np.inf
    norm = ember.linalg.vector_norm
    call = {"zero": lambda: norm(ember.tensor(with_zero), -1.5, 1),
            "infinity": lambda: norm(ember.tensor(with_inf), -2, 1),
            "nan_order": lambda: norm(ember.tensor(values), math.nan),
            "bool_order": lambda: norm(ember.tensor(values), True),
            "numpy_order": lambda: norm(ember.tensor(values), np.float64(1.5)),
            "dtype": lambda: norm(ember.tensor(values), 1.5, dtype=ember.float64),
            "tensor_order": lambda: ember.norm(ember.tensor(values), 1.5, ember.tensor(1)),
            "huge_order": lambda: norm(ember.tensor(values), 10 ** 400),
            "one_element": lambda: norm(ember.tensor(values[:1]), -1.5, 0),
            "empty": lambda: norm(ember.tensor(values[:0]), 1.5, 0)}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, IndexError, OverflowError))
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_additions_wrap_around_as_the_python_paths_and_torchs(dtype):
    big = np.iinfo(dtype).max
    x = np.full((3, 4), big - 2, dtype)
    idx = np.array([[0, 1], [1, 1], [3, 0]])
    src = np.full((3, 2), 5, dtype)
    rows = np.array([0, 2, 0])
    for call in (lambda lib: lib.scatter_add(lib.tensor(x), 1, lib.tensor(idx), lib.tensor(src)),
                 lambda lib: lib.index_add(lib.tensor(x), 0, lib.tensor(rows), lib.tensor(np.full((3, 4), 5, dtype)))):
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1]
        assert results[0][3] == call(torch).numpy().tobytes()


@pytest.mark.parametrize("value", [3, -7, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 2.5, -1.5,
                                   2147483647.0, 2147483647.5, -2147483648.5, 9.3e18, -9.223372036854775808e18,
                                   math.nan, math.inf, -0.0, True])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_fills_are_the_python_paths_and_torchs(dtype, value):
    x = np.arange(-6, 6).reshape(3, 4).astype(dtype)
    mask = np.array([[True, False, True, False]] * 3)
    idx, rows = np.array([[0, 1], [3, 3], [2, 0]]), np.array([2, 0])
    for call in (lambda lib: lib.tensor(x).masked_fill(lib.tensor(mask), value),
                 lambda lib: lib.tensor(x).index_fill(0, lib.tensor(rows), value),
                 lambda lib: lib.scatter(lib.tensor(x), 1, lib.tensor(idx), value)):
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1]
        try:
            want = call(torch)
        except RuntimeError:
            assert results[0][0] is RuntimeError
            continue
        assert results[0][3] == want.numpy().tobytes()


# -- sort and topk -----------------------------------------------------------------------------

SORTS = {"sort": lambda lib, x, dim, flag: lib.sort(x, dim, flag),
         "sort_method": lambda lib, x, dim, flag: x.sort(dim, descending=flag),
         "msort": lambda lib, x, dim, flag: (lib.msort(x),),
         "topk": lambda lib, x, dim, flag: lib.topk(x, 3, dim, flag),
         "topk_one": lambda lib, x, dim, flag: lib.topk(x, 1, dim, largest=flag),
         "topk_all": lambda lib, x, dim, flag: x.topk(x.shape[dim], dim, flag, True),
         "topk_none": lambda lib, x, dim, flag: lib.topk(x, 0, dim, flag)}


def _sort_values(dtype, shape=(3, 4, 5)):
    """Values with ties (and NaN and signed zeros for floats) along every dim."""
    values = np.random.default_rng(4).integers(-2, 3, shape).astype(dtype)
    if values.dtype.kind == "f":
        values.reshape(-1)[::7] = np.nan
        values.reshape(-1)[1::9] = -0.0
    return values


def test_sort_and_topk_take_the_common_case(monkeypatch):
    from ember.ops import sort
    x = ember.tensor(_sort_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.sort(x, 1), x.topk(2, 0), ember.msort(x)),
                                        [(sort, "_sort_arrays")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("name", sorted(SORTS))
def test_sort_and_topk_are_the_python_paths_and_torchs(name, dtype):
    values = _sort_values(dtype)
    for dim in (0, 1, 2, -1):
        for flag in (False, True):
            def call(lib):
                return SORTS[name](lib, lib.tensor(values), dim, flag)
            compiled = call(ember)
            with python_paths():
                python = call(ember)
            want = call(torch)
            for c, p, w in zip(compiled, python, want):
                assert c.dtype == p.dtype and c.shape == p.shape == tuple(w.shape)
                assert c.numpy().tobytes() == p.numpy().tobytes()
            np.testing.assert_array_equal(compiled[0].numpy(), want[0].numpy())
            if name.startswith("sort") or dtype.startswith("int"):   # (torch's indices of NaN ties: its own order)
                np.testing.assert_array_equal(np.take_along_axis(values, compiled[-1].numpy(), dim)
                                              if len(compiled) > 1 else compiled[0].numpy(), want[0].numpy())


@pytest.mark.parametrize("name", ["sort", "topk"])
def test_sort_and_topk_nodes_and_gradients_are_the_python_paths(name):
    values = _sort_values("float32")
    values = np.where(np.isnan(values), 0.5, values)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(values, requires_grad=True)
            out = SORTS[name](ember, x, 1, True)
            node = out[0].grad_fn
            fields = (type(node).__name__, node.in_shape, node.dim, node.keepdim,
                      [t.numpy().tobytes() for t in node.saved_tensors])
            out[0].backward(ember.tensor(np.linspace(-1, 1, out[0].numel(), dtype=np.float32).reshape(out[0].shape)))
            results.append((fields, type(out).__name__, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


_SORT_CASES = {
    "long_rows": lambda x: ember.sort(ember.tensor(np.arange(70.0)[::-1].copy()), 0),
    "partition": lambda x: ember.topk(ember.tensor(np.arange(40.0)), 2),
    "bool": lambda x: ember.sort(x > 0, 1),
    "float16": lambda x: ember.sort(x.half(), 1),
    "uint8": lambda x: ember.topk(x.abs().to(ember.uint8), 2),
    "transposed": lambda x: ember.sort(x.transpose(0, 2), 1),
    "zero_dim": lambda x: ember.sort(x[0, 0, 0]),
    "bool_dim": lambda x: ember.sort(x, True),
    "int_flag": lambda x: ember.sort(x, 1, 1),
    "tensor_k": lambda x: ember.topk(x, ember.tensor(2)),
    "k_out_of_range": lambda x: ember.topk(x, 6),
    "negative_k": lambda x: ember.topk(x, -1),
    "dim_out_of_range": lambda x: ember.sort(x, 3),
    "out": lambda x: ember.sort(x, 1, out=(ember.empty(0), ember.empty(0, dtype=ember.int64))),
    "stable": lambda x: ember.sort(x, dim=1, stable=True),
    "no_grad": lambda x: _no_grad(lambda t: ember.topk(t, 2), x.requires_grad_()),
    "empty_dim": lambda x: ember.sort(x[:, :0], 1),
}


@pytest.mark.parametrize("case", sorted(_SORT_CASES))
def test_other_sort_cases_take_the_python_path(case):
    values = np.where(np.isnan(_sort_values("float32")), 0.5, _sort_values("float32"))
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            try:
                result = _SORT_CASES[case](ember.tensor(values))
            except (RuntimeError, TypeError, IndexError) as error:
                results.append((type(error), str(error)))
                continue
            results.append([(t.dtype, t.shape, t.requires_grad, t.detach().numpy().tobytes()) for t in result])
    assert results[0] == results[1]



# -- median, nanmedian and kthvalue ---------------------------------------------------------------

PICKS = {"median": lambda lib, x, dim, keep: lib.median(x, dim, keep),
         "nanmedian": lambda lib, x, dim, keep: lib.nanmedian(x, dim, keepdim=keep),
         "median_method": lambda lib, x, dim, keep: x.median(dim, keep),
         "kthvalue": lambda lib, x, dim, keep: lib.kthvalue(x, 2, dim, keep),
         "kthvalue_last": lambda lib, x, dim, keep: x.kthvalue(x.shape[dim], dim, keepdim=keep),
         "mode": lambda lib, x, dim, keep: lib.mode(x, dim, keep)}
ALL_PICKS = {"median": lambda lib, x: lib.median(x), "nanmedian": lambda lib, x: x.nanmedian()}


def test_picks_take_the_common_case(monkeypatch):
    from ember.ops import sort
    x = ember.tensor(_sort_values("float32", (3, 4)))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.median(x, 1), ember.kthvalue(x, 2, 0),
                                                              ember.nanmedian(x), ember.median(x)),
                                        [(sort, "_small_rows")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("name", sorted(PICKS))
def test_picks_are_the_python_paths_and_torchs(name, dtype):
    for shape in ((3, 4, 5), (2, 7), (9,)):
        values = _sort_values(dtype, shape)
        for dim in range(-1, len(shape)):
            for keep in (False, True):
                def call(lib):
                    return PICKS[name](lib, lib.tensor(values), dim, keep)
                compiled = call(ember)
                with python_paths():
                    python = call(ember)
                want = call(torch)
                assert type(compiled) is type(python)
                for c, p, w in zip(compiled, python, want):
                    assert c.dtype == p.dtype and c.shape == p.shape == tuple(w.shape)
                    assert c.numpy().tobytes() == p.numpy().tobytes()
                if name != "mode" or not np.isnan(values.astype(np.float64)).any():   # (torch's NaN runs: its own)
                    np.testing.assert_array_equal(compiled[0].numpy(), want[0].numpy())
    for of_all in ALL_PICKS.values():
        values = _sort_values(dtype, (3, 5))
        compiled = of_all(ember, ember.tensor(values))
        with python_paths():
            python = of_all(ember, ember.tensor(values))
        assert compiled.dtype == python.dtype and compiled.shape == python.shape == ()
        assert compiled.numpy().tobytes() == python.numpy().tobytes()
        np.testing.assert_array_equal(compiled.numpy(), of_all(torch, torch.tensor(values)).numpy())


@pytest.mark.parametrize("name", ["median", "nanmedian", "kthvalue", "median_all", "mode"])
def test_pick_nodes_and_gradients_are_the_python_paths(name):
    values = _sort_values("float32", (3, 4))
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(values, requires_grad=True)
            out = ember.median(x) if name == "median_all" else PICKS[name](ember, x, 1, False)[0]
            node = out.grad_fn
            fields = (type(node).__name__, [getattr(node, key, None) for key in ("in_shape", "dim", "keepdim")],
                      [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((fields, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


_PICK_CASES = {
    "large": lambda x: ember.median(ember.tensor(np.arange(80.0).reshape(8, 10)), 1),
    "large_all": lambda x: ember.median(ember.tensor(np.arange(80.0))),
    "bool": lambda x: ember.median(x > 0, 1),
    "float16": lambda x: ember.kthvalue(x.half(), 2, 1),
    "transposed": lambda x: ember.median(x.t(), 1),
    "zero_dim": lambda x: ember.median(x[0, 0], 0),
    "empty": lambda x: ember.median(x[:, :0], 1),
    "keepdim_without_dim": lambda x: ember.median(x, None, True),
    "k_zero": lambda x: ember.kthvalue(x, 0, 1),
    "k_beyond": lambda x: ember.kthvalue(x, 5, 1),
    "tensor_k": lambda x: ember.kthvalue(x, ember.tensor(2), 1),
    "int_keepdim": lambda x: ember.median(x, 1, 1),
    "dim_out_of_range": lambda x: ember.nanmedian(x, 2),
    "out": lambda x: ember.median(x, 1, out=(ember.empty(0), ember.empty(0, dtype=ember.int64))),
    "no_grad": lambda x: _no_grad(lambda t: ember.median(t, 1), x.requires_grad_()),
    "mode_without_dim": lambda x: ember.mode(x, None),
    "mode_large": lambda x: ember.mode(ember.tensor(np.arange(80.0).reshape(8, 10) % 3), 1),
    "mode_zero_dim": lambda x: ember.mode(x[0, 0]),
}


@pytest.mark.parametrize("case", sorted(_PICK_CASES))
def test_other_pick_cases_take_the_python_path(case):
    values = _sort_values("float32", (3, 4))
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            try:
                result = _PICK_CASES[case](ember.tensor(values))
            except (RuntimeError, TypeError, IndexError) as error:
                results.append((type(error), str(error)))
                continue
            result = result if isinstance(result, tuple) else (result,)
            results.append([(t.dtype, t.shape, t.requires_grad, t.detach().numpy().tobytes()) for t in result])
    assert results[0] == results[1]



# -- tril and triu -------------------------------------------------------------------------------

TRIANGLES = {"tril": lambda lib, x, k: lib.tril(x, k), "triu": lambda lib, x, k: lib.triu(x, k),
             "triu_method": lambda lib, x, k: x.triu(diagonal=k)}


def test_triangles_take_the_common_case(monkeypatch):
    from ember.ops import shape
    x = ember.tensor(np.arange(12.0).reshape(3, 4))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.tril(x), x.triu(1)), [(shape, "_triangle_data")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(TRIANGLES))
def test_triangles_are_the_python_paths_and_torchs(name, dtype):
    values = np.linspace(-3, 3, 60).reshape(3, 4, 5)
    if dtype.startswith("float"):
        values[0, 0, :2] = [-0.0, np.nan]
    values = values.astype(dtype) if dtype != "bool" else values > 0
    for source in (values, values[0], values[:, :1], values[0, :, :1]):
        for k in (0, 1, -1, 3, -4, 9, -9):
            results = _on_both_paths(lambda: TRIANGLES[name](ember, ember.tensor(source), k))
            assert results[0] == results[1]
            assert results[0][3] == TRIANGLES[name](torch, torch.tensor(source), k).numpy().tobytes()


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_triangle_nodes_and_gradients_are_the_python_paths(name):
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
            out = TRIANGLES[name](ember, x, 1)
            node = out.grad_fn
            out.backward(ember.tensor(np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4)))
            results.append((type(node).__name__, node.diagonal, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["vector", "complex", "transposed", "empty", "bool_diagonal", "tensor_diagonal",
                                  "huge_diagonal", "out", "no_grad"])
def test_other_triangle_cases_take_the_python_path(case):
    x = ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    call = {"vector": lambda: ember.tril(x[0]),
            "complex": lambda: ember.triu(x.to(ember.complex64)),
            "transposed": lambda: ember.tril(x.t(), 1),
            "empty": lambda: ember.tril(x[:0]),
            "bool_diagonal": lambda: ember.triu(x, True),
            "tensor_diagonal": lambda: ember.triu(x, ember.tensor(1)),
            "huge_diagonal": lambda: ember.tril(x, 2 ** 70),
            "out": lambda: ember.tril(x, out=ember.empty(0)),
            "no_grad": lambda: _no_grad(lambda t: ember.triu(t), x.requires_grad_())}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, OverflowError))
    assert results[0] == results[1]



# -- flip ----------------------------------------------------------------------------------------

FLIPS = {"flip": lambda lib, x, dims: lib.flip(x, dims),
         "flip_method": lambda lib, x, dims: x.flip(*dims) if dims else x.flip(dims),
         "flip_keyword": lambda lib, x, dims: lib.flip(x, dims=dims)}


def test_flip_takes_the_common_case(monkeypatch):
    from ember.ops import shape
    x = ember.tensor(np.arange(12.0).reshape(3, 4))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.flip(x, [1]), ember.fliplr(x), x.flipud()),
                                        [(shape, "_flipped")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(FLIPS))
def test_flips_are_the_python_paths_and_torchs(name, dtype):
    values = np.arange(60).reshape(3, 4, 5)
    values = values.astype(dtype) if dtype != "bool" else values % 3 == 0
    for source in (values, values.transpose(2, 0, 1), values[:, ::2], values[1]):
        for dims in ([0], [-1], [0, 2], [2, 0, 1], [1, -1], []):
            if len(dims) > source.ndim or any(d >= source.ndim for d in dims) or (dims == [1, -1] and source.ndim == 2):
                continue
            results = _on_both_paths(lambda: FLIPS[name](ember, ember.tensor(source), dims))
            assert results[0] == results[1]
            assert results[0][3] == FLIPS[name](torch, torch.tensor(source), dims).numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "float16", "bool"])
def test_large_flips_are_the_python_paths_and_torchs(monkeypatch, dtype):
    """Past the small arrays: the last axis reversed on the row loop (elements of 4 and 8 bytes), other
    flips by NumPy's copy of the reversed view."""
    values = np.arange(16 * 40 * 65).reshape(16, 40, 65) % 251
    values = values.astype(dtype) if dtype != "bool" else values % 3 == 0
    from ember.ops import shape
    x = ember.tensor(values)
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.flip(x, [-1]), ember.flip(x, [1])),
                                        [(shape, "_flipped")])
    for source in (values, values.transpose(2, 0, 1), values[:, ::2]):
        for dims in ([-1], [0, 2], [1], [0, 1, 2]):
            results = _on_both_paths(lambda: ember.flip(ember.tensor(source), dims))
            assert results[0] == results[1]
            assert results[0][3] == torch.flip(torch.tensor(source), dims).numpy().tobytes()


def test_flip_nodes_and_gradients_are_the_python_paths():
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4), requires_grad=True)
            out = ember.flip(x, (-1, 0))
            node = out.grad_fn
            out.backward(ember.tensor(np.linspace(-1, 2, 24, dtype=np.float32).reshape(2, 3, 4)))
            results.append((type(node).__name__, node.dims, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["repeated", "out_of_range", "complex", "zero_dim", "empty", "numpy_dim", "no_grad"])
def test_other_flip_cases_take_the_python_path(case):
    x = ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    call = {"repeated": lambda: ember.flip(x, (1, -1)),
            "out_of_range": lambda: ember.flip(x, (2,)),
            "complex": lambda: ember.flip(x.to(ember.complex64), (1,)),
            "zero_dim": lambda: ember.flip(x[0, 0], (0,)),
            "empty": lambda: ember.flip(x[:0], (0,)),
            "numpy_dim": lambda: ember.flip(x, (np.int64(1),)),
            "no_grad": lambda: _no_grad(lambda t: ember.flip(t, (0,)), x.requires_grad_())}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, IndexError))
    assert results[0] == results[1]



@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16"])
@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_and_lcm_are_the_python_paths_and_torchs(monkeypatch, name, dtype):
    rng = np.random.default_rng(0)
    low = 0 if dtype == "uint8" else -12
    a, b = rng.integers(low, 12, (2, 3, 5)).astype(dtype)
    for x, y in ((a, b), (a, b[:1]), (a.T, b.T)):
        results = _on_both_paths(lambda: getattr(ember, name)(ember.tensor(x), ember.tensor(y)))
        assert results[0] == results[1]
        assert results[0][3] == getattr(torch, name)(torch.tensor(x), torch.tensor(y)).numpy().tobytes()
    ufunc = getattr(np, name)
    calls = []
    monkeypatch.setattr(np, name, lambda *args: calls.append(args) or ufunc(*args))
    getattr(ember, name)(ember.tensor(a), ember.tensor(b))
    assert calls == []   # (the C function calls the ufunc itself)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16", "int8", "bool"])
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_ops_are_the_python_paths_and_torchs(monkeypatch, name, dtype):
    """bitwise_and, bitwise_or and bitwise_xor of two integer or bool tensors of one dtype, as functions and
    as operators, on the ufunc from C: the Python path's bits (broadcast and transposed operands too) and
    torch's."""
    rng = np.random.default_rng(1)
    a, b = rng.integers(-12 if dtype.startswith("int") else 0, 12 if dtype != "bool" else 2, (2, 3, 5)).astype(dtype)
    operator = {"bitwise_and": lambda x, y: x & y, "bitwise_or": lambda x, y: x | y,
                "bitwise_xor": lambda x, y: x ^ y}[name]
    for x, y in ((a, b), (a, b[:1]), (a.T, b.T)):
        for fn in (getattr(ember, name), operator):
            results = _on_both_paths(lambda: fn(ember.tensor(x), ember.tensor(y)))
            assert results[0] == results[1]
            assert results[0][3] == getattr(torch, name)(torch.tensor(x), torch.tensor(y)).numpy().tobytes()
    ufunc = getattr(np, name)
    calls = []
    monkeypatch.setattr(np, name, lambda *args: calls.append(args) or ufunc(*args))
    getattr(ember, name)(ember.tensor(a), ember.tensor(b))
    operator(ember.tensor(a), ember.tensor(b))
    assert calls == []   # (the C function calls the ufunc itself)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_ops_of_an_int_are_the_python_paths_and_torchs(monkeypatch, name, dtype):
    """bitwise_and, bitwise_or and bitwise_xor of an integer tensor and a Python int in its dtype's range, as
    functions and as operators (the int first too), on the ufunc from C: the Python path's bits and dtype,
    and torch's; an int out of the dtype's range goes to the Python op."""
    rng = np.random.default_rng(2)
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -100), min(info.max, 100), (3, 5)).astype(dtype)
    operator = {"bitwise_and": lambda x, y: x & y, "bitwise_or": lambda x, y: x | y,
                "bitwise_xor": lambda x, y: x ^ y}[name]
    calls = [lambda x, v: getattr(ember, name)(x, v), operator, lambda x, v: operator(v, x)]
    for value in (0, 5, -1 if info.min < 0 else 255, int(info.max), int(info.min)):
        for call in calls:
            results = _on_both_paths(lambda: call(ember.tensor(a), value))
            assert results[0] == results[1]
            want = getattr(torch, name)(torch.tensor(a), value)
            assert results[0][:2] == (getattr(ember, str(want.dtype).split(".")[-1]), tuple(want.shape))
            assert results[0][3] == want.numpy().tobytes()
    ufunc = getattr(np, name)
    seen = []
    monkeypatch.setattr(np, name, lambda *args: seen.append(args) or ufunc(*args))
    for call in calls:
        call(ember.tensor(a), 3)
    assert seen == []   # (the C function calls the ufunc itself)
    results = _on_both_paths(lambda: getattr(ember, name)(ember.tensor(a), int(info.max) + 1),
                             (RuntimeError, TypeError, OverflowError))
    assert results[0] == results[1]


_SHIFTS = {"bitwise_left_shift": lambda x, y: x << y, "bitwise_right_shift": lambda x, y: x >> y}


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16", "int8"])
@pytest.mark.parametrize("name", sorted(_SHIFTS))
def test_shifts_are_the_python_paths_and_torchs(monkeypatch, name, dtype):
    """bitwise_left_shift and bitwise_right_shift of two integer tensors of one dtype and of an integer tensor and
    an int in its range, as functions and as operators, on the ufunc from C: the Python path's bits and torch's,
    shift amounts that are negative or past the width included (0, or the sign bit)."""
    rng = np.random.default_rng(4)
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -100), min(info.max, 100), (3, 4)).astype(dtype)
    amounts = rng.integers(-3 if info.min < 0 else 0, 2 * 8 * a.itemsize + 3, (3, 4)).astype(dtype)
    operator = _SHIFTS[name]
    cases = [(a, amounts), (a, amounts[:1]), (a.T, amounts.T)]
    cases += [(a, v) for v in (0, 3, 8 * a.itemsize - 1, 8 * a.itemsize, 70 if info.max > 70 else 7)]
    for x, y in cases:
        for fn in (getattr(ember, name), operator):
            make = ember.tensor if isinstance(y, np.ndarray) else (lambda v: v)
            results = _on_both_paths(lambda: fn(ember.tensor(x), make(y)))
            assert results[0] == results[1]
            want = getattr(torch, name)(torch.tensor(x), torch.tensor(y) if isinstance(y, np.ndarray) else y)
            assert results[0][3] == want.numpy().tobytes()
    ufunc = {"bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift}[name]
    seen = []
    monkeypatch.setattr(np, ufunc.__name__, lambda *args: seen.append(args) or ufunc(*args))
    getattr(ember, name)(ember.tensor(a), ember.tensor(amounts))
    operator(ember.tensor(a), 2)
    assert seen == []   # (the C function calls the ufunc itself)


@pytest.mark.parametrize("case", ["bool", "float32", "number_first", "out_of_range", "mixed"])
@pytest.mark.parametrize("name", sorted(_SHIFTS))
def test_other_shift_cases_take_the_python_path(name, case):
    a = np.arange(-6, 6).reshape(3, 4)
    fn, operator = getattr(ember, name), _SHIFTS[name]
    call = {"bool": lambda: fn(ember.tensor(a > 0), ember.tensor(a > 1)),
            "float32": lambda: operator(ember.tensor(a.astype(np.float32)), 1),
            "number_first": lambda: operator(3, ember.tensor(a % 4)),
            "out_of_range": lambda: operator(ember.tensor(a.astype(np.int8)), 300),
            "mixed": lambda: fn(ember.tensor(a), ember.tensor((a % 4).astype(np.int32)))}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["float32", "mixed", "not_broadcasting", "number", "number_first", "out"])
def test_other_bitwise_cases_take_the_python_path(case):
    a = np.arange(-6, 6).reshape(3, 4)
    call = {"float32": lambda: ember.tensor(a.astype(np.float32)) | ember.tensor(a.astype(np.float32)),
            "mixed": lambda: ember.bitwise_and(ember.tensor(a), ember.tensor(a.astype(np.int32))),
            "not_broadcasting": lambda: ember.tensor(a) ^ ember.tensor(a[:, :3]),
            "number": lambda: ember.tensor(a) & 3,
            "number_first": lambda: ember.bitwise_or(5, ember.tensor(a)),
            "out": lambda: ember.bitwise_xor(ember.tensor(a), ember.tensor(a),
                                             out=ember.empty(3, 4, dtype=ember.int64))}
    results = _on_both_paths(call[case], (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["float32", "float64", "bool", "mixed", "not_broadcasting"])
def test_other_gcd_cases_take_the_python_path(case):
    a = np.arange(-6, 6).reshape(3, 4)
    call = {"float32": lambda: ember.gcd(ember.tensor(a.astype(np.float32)), ember.tensor(a.astype(np.float32))),
            "float64": lambda: ember.lcm(ember.tensor(a.astype(np.float64)), ember.tensor(a.astype(np.float64))),
            "bool": lambda: ember.gcd(ember.tensor(a > 0), ember.tensor(a > 1)),
            "mixed": lambda: ember.gcd(ember.tensor(a), ember.tensor(a.astype(np.int32))),
            "not_broadcasting": lambda: ember.gcd(ember.tensor(a), ember.tensor(a[:, :3]))}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]



# -- clamp ---------------------------------------------------------------------------------------

def _clamp_values(dtype):
    values = np.linspace(-3, 3, 20).reshape(4, 5)
    if dtype.startswith("float"):
        values[0, :3] = [np.nan, -0.0, 0.0]
    return values.astype(dtype)


def test_clamp_takes_the_common_case(monkeypatch):
    from ember.ops import ternary
    x, lo, hi = (ember.tensor(v) for v in (_clamp_values("float32"), -np.ones(5, np.float32), np.ones((4, 1),
                                                                                                      np.float32)))
    i = ember.tensor(_clamp_values("int64"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.clamp(x, -0.5, 0.5), x.clamp(lo, hi),
                                                              ember.clamp(i, -2, 3), ember.clip(x, max=1)),
                                        [(ternary, "_clamp_forward")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "uint8"])
def test_clamp_is_the_python_paths_and_torchs(dtype):
    values = _clamp_values(dtype)
    bounds = [(-0.5, 0.5), (-1, None), (None, 2), (2, 1), (-0.0, 0.0), (0.1, 1e30), (-2, 3), (100, 200)]
    if dtype.startswith("float"):
        lo, hi = np.linspace(-2, -0.1, 5).astype(dtype), np.linspace(0.1, 2, 4).reshape(4, 1).astype(dtype)
        bounds += [(lo, hi), (lo, None), (None, hi), (hi, lo), (values, values[:1])]
    for low, high in bounds:
        def call(lib):
            low_b, high_b = (lib.tensor(b) if isinstance(b, np.ndarray) else b for b in (low, high))
            return lib.clamp(lib.tensor(values), low_b, high_b)
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1], (low, high)
        try:
            want = call(torch)
        except RuntimeError:
            assert results[0][0] is RuntimeError
            continue
        np.testing.assert_array_equal(np.frombuffer(results[0][3], dtype=want.numpy().dtype).reshape(want.shape),
                                      want.numpy())


@pytest.mark.parametrize("bounds", ["numbers", "tensors", "lower_tensor"])
def test_clamp_nodes_and_gradients_are_the_python_paths(bounds):
    values = np.where(np.isnan(_clamp_values("float32")), 0.5, _clamp_values("float32"))
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(values, requires_grad=True)
            lo = ember.tensor(-np.ones(5, np.float32), requires_grad=True)
            hi = ember.tensor(np.ones((4, 1), np.float32))
            out = {"numbers": lambda: ember.clamp(x, -0.5, 2), "tensors": lambda: ember.clamp(x, lo, hi),
                   "lower_tensor": lambda: ember.clamp(x, lo)}[bounds]()
            node = out.grad_fn
            fields = [getattr(node, key, None) for key in ("bounds", "lo", "hi", "x_shape", "x_dtype", "lo_shape",
                                                          "lo_dtype", "hi_shape", "hi_dtype")]
            saved = [None if t is None else t.detach().numpy().tobytes() for t in node.saved_tensors]
            out.backward(ember.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)))
            results.append((type(node).__name__, fields, saved, x.grad.numpy().tobytes(),
                            None if lo.grad is None else lo.grad.numpy().tobytes()))
    assert results[0] == results[1]


_CLAMP_CASES = {
    "no_bounds": lambda x: ember.clamp(x),
    "mixed_bounds": lambda x: ember.clamp(x, ember.tensor(-1.0), 1.0),
    "other_dtype_bound": lambda x: ember.clamp(x, ember.tensor(np.float64(-1)), None),
    "int_tensor_bounds": lambda x: ember.clamp(x.long(), ember.tensor([-1, 0, 1, 2, 3])),
    "large_int_bound": lambda x: ember.clamp(x.long(), -1000, 1000),
    "huge_float_int_bound": lambda x: ember.clamp(x, 2 ** 30),
    "overflowing_bound": lambda x: ember.clamp(x, 1e39),
    "bool_bound": lambda x: ember.clamp(x, True),
    "float_bound_of_ints": lambda x: ember.clamp(x.long(), 0.5),
    "float16": lambda x: ember.clamp(x.half(), -1, 1),
    "uint8": lambda x: ember.clamp(x.to(ember.uint8), 1, 2),
    "large": lambda x: ember.clamp(ember.ones(64, 64), -1, 1),
    "not_broadcasting": lambda x: ember.clamp(x, ember.ones(4), None),
    "bigger_bound": lambda x: ember.clamp(x, ember.ones(2, 4, 5), None),
    "out": lambda x: ember.clamp(x, -1, 1, out=ember.empty(0)),
    "no_grad": lambda x: _no_grad(lambda t: ember.clamp(t, -1, 1), x.requires_grad_()),
}


@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (None, 0.3), (-2, None), (1.0, -1.0), (-0.0, 0.0), (-math.inf, 2.0),
                                    (math.nan, 1.0), (None, math.nan)])
def test_large_float32_clamp_to_numbers_runs_the_clip_loop_from_c(monkeypatch, bounds):
    """Past the small tensors, a float32 tensor and number bounds: the Python op's clip loop, called from C (a NaN
    bound, which the loop does not keep, goes to the Python op), the same bits, torch's."""
    from ember.ops import ternary
    x = np.random.default_rng(13).standard_normal((222, 295)).astype(np.float32)
    x[0, :5] = [np.nan, -0.0, 0.0, np.inf, -np.inf]
    call = lambda: ember.clamp(ember.tensor(x), *bounds)   # noqa: E731
    if not any(b is not None and math.isnan(b) for b in bounds):
        _assert_the_compiled_function_takes(monkeypatch, call, [(ternary, "_clamp_forward")])
    results = _on_both_paths(call)
    assert results[0] == results[1]
    want = torch.clamp(torch.tensor(x), *bounds).numpy()
    np.testing.assert_array_equal(np.frombuffer(results[0][3], np.int32), want.view(np.int32).reshape(-1))


@pytest.mark.parametrize("case", sorted(_CLAMP_CASES))
def test_other_clamp_cases_take_the_python_path(case):
    values = np.where(np.isnan(_clamp_values("float32")), 0.5, _clamp_values("float32"))
    results = _on_both_paths(lambda: _CLAMP_CASES[case](ember.tensor(values)), (RuntimeError, TypeError))
    assert results[0] == results[1]



# -- scatter_reduce ------------------------------------------------------------------------------

def _scatter_reduce_operands(dtype):
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (3, 5)).astype(dtype) if dtype.startswith("float") else rng.integers(-4, 5, (3, 5))
    src = rng.uniform(-2, 2, (3, 4)).astype(dtype) if dtype.startswith("float") else rng.integers(-4, 5, (3, 4))
    index = np.array([[0, 1, 1, 4], [2, 2, 2, 2], [4, 0, 3, 0]])
    return x.astype(dtype), index, src.astype(dtype)


def test_scatter_reduce_takes_the_common_case(monkeypatch):
    from ember.ops import index
    x, i, s = (ember.tensor(v) for v in _scatter_reduce_operands("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.scatter_reduce(x, 1, i, s, "sum"),
                                                              x.scatter_reduce(1, i, s, "prod", include_self=False)),
                                        [(index, "_scatter_data")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("reduce", ["sum", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_is_the_python_paths_and_torchs(dtype, reduce, include_self):
    x, i, s = _scatter_reduce_operands(dtype)
    for dim, idx, src in ((1, i, s), (0, i[:2, :3], s), (-1, i[:, :2], s[:, :3])):
        def call(lib):
            return lib.scatter_reduce(lib.tensor(x), dim, lib.tensor(idx), lib.tensor(src), reduce,
                                      include_self=include_self)
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1]
        want = call(torch).numpy()
        got = np.frombuffer(results[0][3], dtype=want.dtype).reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod"])
def test_scatter_reduce_nodes_and_gradients_are_the_python_paths(reduce, include_self):
    values = _scatter_reduce_operands("float32")
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, src = ember.tensor(values[0], requires_grad=True), ember.tensor(values[2], requires_grad=True)
            out = ember.scatter_reduce(x, 1, ember.tensor(values[1]), src, reduce, include_self=include_self)
            node = out.grad_fn
            fields = (type(node).__name__, node.dim, node.src_shape, node.reduce, node.include_self,
                      [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)))
            results.append((fields, x.grad.numpy().tobytes(), src.grad.numpy().tobytes()))
    assert results[0] == results[1]


_SCATTER_REDUCE_CASES = {
    "mean": lambda x, i, s: ember.scatter_reduce(x, 1, i, s, "mean"),
    "amax": lambda x, i, s: ember.scatter_reduce(x, 1, i, s, "amax"),
    "unknown": lambda x, i, s: ember.scatter_reduce(x, 1, i, s, "median"),
    "float16": lambda x, i, s: ember.scatter_reduce(x.half(), 1, i, s.half(), "sum"),
    "mixed": lambda x, i, s: ember.scatter_reduce(x, 1, i, s.double(), "sum"),
    "out_of_range": lambda x, i, s: ember.scatter_reduce(x, 1, i + 3, s, "sum"),
    "int32_index": lambda x, i, s: ember.scatter_reduce(x, 1, i.int(), s, "prod"),
    "small_src": lambda x, i, s: ember.scatter_reduce(x, 1, i, s[:, :2], "sum"),
    "int_include_self": lambda x, i, s: ember.scatter_reduce(x, 1, i, s, "sum", include_self=1),
    "out": lambda x, i, s: ember.scatter_reduce(x, 1, i, s, "sum", out=ember.empty(0)),
    "no_grad": lambda x, i, s: _no_grad(lambda t: ember.scatter_reduce(t, 1, i, s, "sum"), x.requires_grad_()),
}


@pytest.mark.parametrize("case", sorted(_SCATTER_REDUCE_CASES))
def test_other_scatter_reduce_cases_take_the_python_path(case):
    x, i, s = _scatter_reduce_operands("float32")
    results = _on_both_paths(lambda: _SCATTER_REDUCE_CASES[case](ember.tensor(x), ember.tensor(i), ember.tensor(s)),
                             (RuntimeError, TypeError, IndexError))
    assert results[0] == results[1]


def test_scatter_with_a_reduce_takes_the_common_case(monkeypatch):
    from ember.ops import index
    x, i, s = (ember.tensor(v) for v in _scatter_reduce_operands("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.scatter(x, 1, i, s, reduce="add"),
                                                              x.scatter(1, i, s, reduce="multiply")),
                                        [(index, "_scatter_data")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_a_reduce_is_the_python_paths_and_torchs(dtype, reduce):
    """scatter's reduce "add" and "multiply" of a src tensor take scatter_reduce's C function (its "sum"
    and "prod" with include_self), with scatter's deprecation warning, once per process."""
    x, i, s = _scatter_reduce_operands(dtype)
    for dim, idx, src in ((1, i, s), (0, i[:2, :3], s), (-1, i[:, :2], s[:, :3])):
        def call(lib):
            return lib.scatter(lib.tensor(x), dim, lib.tensor(idx), lib.tensor(src), reduce=reduce)
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1] and len(results[0][4]) == 1 and "deprecated" in results[0][4][0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = call(torch).numpy()
        got = np.frombuffer(results[0][3], dtype=want.dtype).reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


_REDUCED_SCATTER_CASES = {
    "unknown": lambda x, i, s: ember.scatter(x, 1, i, s, reduce="sum"),
    "value": lambda x, i, s: ember.scatter(x, 1, i, value=2.0, reduce="add"),
    "number_src": lambda x, i, s: ember.scatter(x, 1, i, 2.0, reduce="multiply"),
    "mixed": lambda x, i, s: ember.scatter(x, 1, i, s.double(), reduce="add"),
    "out_of_range": lambda x, i, s: ember.scatter(x, 1, i + 3, s, reduce="add"),
    "int32_index": lambda x, i, s: ember.scatter(x, 1, i.int(), s, reduce="multiply"),
    "grad": lambda x, i, s: ember.scatter(x.requires_grad_(), 1, i, s, reduce="add"),
    "no_grad": lambda x, i, s: _no_grad(lambda t: ember.scatter(t, 1, i, s, reduce="add"), x.requires_grad_()),
    "out": lambda x, i, s: ember.scatter(x, 1, i, s, reduce="add", out=ember.empty(0)),
    "float16": lambda x, i, s: ember.scatter(x.half(), 1, i, s.half(), reduce="add"),
}


@pytest.mark.parametrize("case", sorted(_REDUCED_SCATTER_CASES))
def test_other_scatter_with_a_reduce_cases_take_the_python_path(case):
    x, i, s = _scatter_reduce_operands("float32")
    results = _on_both_paths(lambda: _REDUCED_SCATTER_CASES[case](ember.tensor(x), ember.tensor(i), ember.tensor(s)),
                             (RuntimeError, TypeError, IndexError))
    assert results[0] == results[1]



# -- logit ---------------------------------------------------------------------------------------

def _logit_values(dtype):
    values = np.linspace(0, 1, 20).reshape(4, 5)
    if dtype.startswith("float"):
        values[0, :4] = [np.nan, -0.0, 1e-8, -0.5]
    return values.astype(dtype) if dtype != "bool" else values > 0.5


def test_logit_takes_the_common_case(monkeypatch):
    from ember.ops import unary
    x = ember.tensor(np.linspace(0.1, 0.9, 15, dtype=np.float32).reshape(3, 5))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.logit(x), x.logit(1e-6)),
                                        [(unary, "_logit_forward")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_logit_is_the_python_paths_and_torchs(dtype):
    values = _logit_values(dtype)
    for source in (values[1:], values[1:].T, values[:1, :4]):
        for eps in (None, 1e-6, 0.25, 0, 0.5, 1, 0.75):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results = _on_both_paths(lambda: ember.logit(ember.tensor(source), eps))
                want = torch.logit(torch.tensor(source), eps).numpy()
            assert results[0] == results[1], eps
            got = np.frombuffer(results[0][3], dtype=want.dtype).reshape(want.shape)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_logit_nodes_and_gradients_are_the_python_paths():
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.linspace(0.1, 0.9, 15, dtype=np.float32).reshape(3, 5), requires_grad=True)
            out = ember.logit(x, 0.1)
            node = out.grad_fn
            fields = (type(node).__name__, node.eps, [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)))
            results.append((fields, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_logit_outside_its_domain_takes_the_compiled_function(monkeypatch, dtype):
    """Inputs outside (0, 1), integers and bools among them: the compiled function (no call of the Python
    path's step), -inf for odds of 0 and the Python path's NaN bits for negative odds, bit for bit, with and
    without eps; a negative subnormal odds (NumPy's float32 log takes it for zero) and a tensor of more than
    1024 elements with such odds go to the Python op, the same bits."""
    from ember.ops import unary
    if dtype == "bool":
        values = np.array([[True, False, True], [False, False, True]])
    elif dtype == "int64":
        values = np.arange(-3, 5).reshape(2, 4)
    else:
        values = np.array([-np.inf, -3e38, -7.5, -1.0, -0.25, -1e-30, -0.0, 0.0, 0.5, 1.0, 1.5, 1e30, np.inf,
                           np.nan], dtype=dtype)
    x = ember.tensor(values)
    for eps in (None, 0.0):
        _assert_the_compiled_function_takes(monkeypatch, lambda: ember.logit(x, eps), [(unary, "_logit_forward")])
        monkeypatch.undo()
        results = _on_both_paths(lambda: ember.logit(x, eps))
        assert results[0] == results[1] and results[0][4] == []
    if dtype.startswith("float"):
        for other in (np.array([-1e-40, 0.5], dtype=dtype), np.full(1100, -2.0, dtype=dtype)):
            results = _on_both_paths(lambda: ember.logit(ember.tensor(other)))
            assert results[0] == results[1]


@pytest.mark.parametrize("case", ["one", "zero_eps_one", "nan_eps", "negative_eps", "big_eps", "bool_eps", "float16",
                                  "complex", "large", "out", "no_grad"])
def test_other_logit_cases_take_the_python_path(case):
    values = _logit_values("float32")
    x = ember.tensor(values)
    call = {"one": lambda: ember.logit(x),
            "zero_eps_one": lambda: ember.logit(x, 0.0),
            "nan_eps": lambda: ember.logit(x, math.nan),
            "negative_eps": lambda: ember.logit(x, -0.1),
            "big_eps": lambda: ember.logit(x, 1.5),
            "bool_eps": lambda: ember.logit(x, True),
            "float16": lambda: ember.logit(x.half(), 0.1),
            "complex": lambda: ember.logit(x.to(ember.complex64)),
            "large": lambda: ember.logit(ember.full((100, 100), 0.5)),
            "out": lambda: ember.logit(x, out=ember.empty(0)),
            "no_grad": lambda: _no_grad(lambda t: ember.logit(t, 0.1), x.requires_grad_())}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]



# -- hardshrink, nan_to_num and heaviside -------------------------------------------------------------

SELECTIONS = {
    "hardshrink": lambda lib, x, y: lib.nn.functional.hardshrink(x),
    "hardshrink_method": lambda lib, x, y: x.hardshrink(0.1),
    "hardshrink_int_lambd": lambda lib, x, y: x.hardshrink(1),
    "nan_to_num": lambda lib, x, y: lib.nan_to_num(x),
    "nan_to_num_values": lambda lib, x, y: lib.nan_to_num(x, 1.5, 1000, -1000),
    "nan_to_num_method": lambda lib, x, y: x.nan_to_num(posinf=2.0),
    "heaviside": lambda lib, x, y: lib.heaviside(x, y),
}


def _selection_values(dtype):
    values = np.linspace(-2, 2, 20).reshape(4, 5)
    if dtype.startswith("float"):
        values[0, :5] = [np.nan, np.inf, -np.inf, -0.0, 0.1]
    values[1, :2] = 0
    return values.astype(dtype)


def test_selections_take_the_common_case(monkeypatch):
    from ember.nn.functional import activation
    from ember.ops import pointwise, unary
    x = ember.tensor(_selection_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.nn.functional.hardshrink(x), ember.nan_to_num(x),
                                                              ember.heaviside(x, x)),
                                        [(activation, "_hardshrink_forward"), (unary, "_nan_to_num_forward"),
                                         (pointwise, "_heaviside_kernel")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selections_are_the_python_paths_and_torchs(name, dtype):
    if dtype.startswith("int") and name != "heaviside":
        return
    x, y = _selection_values(dtype), _selection_values(dtype)[::-1].copy()
    for first in (x, x.T):   # (nan_to_num takes any layout; the others leave a transposed one to Python)
        second = y if first is x else y.T
        results = _on_both_paths(lambda: SELECTIONS[name](ember, ember.tensor(first), ember.tensor(second)))
        assert results[0] == results[1]
        want = SELECTIONS[name](torch, torch.tensor(first), torch.tensor(second)).numpy()
        np.testing.assert_array_equal(np.frombuffer(results[0][3], dtype=want.dtype).reshape(want.shape), want)


@pytest.mark.parametrize("name", ["hardshrink_method", "nan_to_num_values"])
def test_selection_nodes_and_gradients_are_the_python_paths(name):
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.linspace(-2, 2, 20, dtype=np.float32).reshape(4, 5), requires_grad=True)
            out = SELECTIONS[name](ember, x, None)
            node = out.grad_fn
            fields = (type(node).__name__, getattr(node, "lambd", None),
                      [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)))
            results.append((fields, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


_SELECTION_CASES = {
    "hardshrink_int": lambda x: ember.nn.functional.hardshrink(x.long()),
    "hardshrink_tensor_lambd": lambda x: x.hardshrink(ember.tensor(0.5)),
    "hardshrink_transposed": lambda x: x.t().hardshrink(),
    "hardshrink_float16": lambda x: x.half().hardshrink(),
    "nan_to_num_int": lambda x: ember.nan_to_num(x.long()),
    "nan_to_num_nan_none": lambda x: ember.nan_to_num(x, None),
    "nan_to_num_overflowing": lambda x: ember.nan_to_num(x, posinf=1e39),
    "nan_to_num_out": lambda x: ember.nan_to_num(x, out=ember.empty(0)),
    "heaviside_broadcast": lambda x: ember.heaviside(x, x[:1]),
    "heaviside_broadcast_row": lambda x: ember.heaviside(x, x[0]),
    "heaviside_broadcast_column": lambda x: ember.heaviside(x, x[:, :1]),
    "heaviside_broadcast_number_tensor": lambda x: ember.heaviside(x, x[0, 0]),
    "heaviside_broadcast_both": lambda x: ember.heaviside(x[:1], x[:, :1]),
    "heaviside_broadcast_wider": lambda x: ember.heaviside(x, x[None]),
    "heaviside_broadcast_not": lambda x: ember.heaviside(x, x[:, :2]),
    "heaviside_broadcast_strided": lambda x: ember.heaviside(x, x.t()[:, 1]),
    "heaviside_mixed": lambda x: ember.heaviside(x, x.double()),
    "heaviside_grad": lambda x: ember.heaviside(x.requires_grad_(), x.detach()),
    "heaviside_bool": lambda x: ember.heaviside(x > 0, x > 1),
    "heaviside_number": lambda x: ember.heaviside(x, 0.5),
}


@pytest.mark.parametrize("case", sorted(_SELECTION_CASES))
def test_other_selection_cases_take_the_python_path(case):
    x = ember.tensor(_selection_values("float32"))
    results = _on_both_paths(lambda: _SELECTION_CASES[case](x.detach().clone()),
                             (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]
    if case.startswith("heaviside_broadcast") and not isinstance(results[0][0], type):   # (and torch's values)
        t = torch.tensor(_selection_values("float32"))
        got = np.frombuffer(results[0][3], np.float32)
        values = {"heaviside_broadcast": t[:1], "heaviside_broadcast_row": t[0], "heaviside_broadcast_column": t[:, :1],
                  "heaviside_broadcast_number_tensor": t[0, 0], "heaviside_broadcast_both": t[:, :1],
                  "heaviside_broadcast_wider": t[None], "heaviside_broadcast_strided": t.t()[:, 1]}[case]
        base = t[:1] if case == "heaviside_broadcast_both" else t
        np.testing.assert_array_equal(got, torch.heaviside(base, values).numpy().reshape(-1))



# -- lerp with a number weight -----------------------------------------------------------------------

@pytest.mark.parametrize("weight", [0.3, 0.7, 0, 1, -0.25, 0.5, 2.5, 1e-30, -3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lerp_is_the_python_paths_and_torchs(dtype, weight):
    rng = np.random.default_rng(6)
    a, b = rng.uniform(-3, 3, (2, 3, 4)).astype(dtype)
    for call in (lambda lib: lib.lerp(lib.tensor(a), lib.tensor(b), weight),
                 lambda lib: lib.tensor(a).lerp(lib.tensor(b), weight)):
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1]
        want = call(torch).numpy()
        np.testing.assert_allclose(np.frombuffer(results[0][3], dtype=want.dtype).reshape(want.shape), want,
                                   rtol=1e-6, atol=1e-6)


def test_lerp_takes_the_common_case_and_records_its_node(monkeypatch):
    from ember.ops import ternary
    a, b = (ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4) * k) for k in (1, -2))
    _assert_the_compiled_function_takes(monkeypatch, lambda: ember.lerp(a, b, 0.3), [(ternary, "_lerp_forward")])
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, y = a.detach().requires_grad_(), b.detach().requires_grad_()
            out = ember.lerp(x, y, 0.7)
            node = out.grad_fn
            fields = (type(node).__name__, node.weight, node.metas)
            out.backward(ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
            results.append((fields, x.grad.numpy().tobytes(), y.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["tensor_weight", "broadcast", "mixed", "int", "float16", "nan_weight",
                                  "overflowing_weight", "overflow", "transposed", "out", "large"])
def test_other_lerp_cases_take_the_python_path(case):
    a, b = (ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4) * k) for k in (1, -2))
    call = {"tensor_weight": lambda: ember.lerp(a, b, ember.full((3, 4), 0.3)),
            "broadcast": lambda: ember.lerp(a, b[:1], 0.3),
            "mixed": lambda: ember.lerp(a, b.double(), 0.3),
            "int": lambda: ember.lerp(a.long(), b.long(), 0.3),
            "float16": lambda: ember.lerp(a.half(), b.half(), 0.3),
            "nan_weight": lambda: ember.lerp(a, b, math.nan),
            "overflowing_weight": lambda: ember.lerp(a, b, 1e39),
            "overflow": lambda: ember.lerp(a * 3e38, b * 3e38, 0.3),
            "transposed": lambda: ember.lerp(a.t(), b.t(), 0.3),
            "out": lambda: ember.lerp(a, b, 0.3, out=ember.empty(0)),
            "large": lambda: ember.lerp(ember.ones(600, 500), ember.zeros(600, 500), 0.3)}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]



# -- frexp ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frexp_is_the_python_paths_and_torchs(monkeypatch, dtype):
    values = np.array([[0.0, -0.0, 1.0, -3.5, 1e-40], [np.inf, -np.inf, np.nan, 6.0e4, 0.3]]).astype(dtype)
    for source in (values, values.T):
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                m, e = ember.frexp(ember.tensor(source))
                results.append((type(ember.frexp(ember.tensor(source))).__name__, m.dtype, e.dtype, m.stride(),
                                m.numpy().tobytes(), e.numpy().tobytes()))
        assert results[0] == results[1]
        finite = np.isfinite(source)
        want_m, want_e = torch.frexp(torch.tensor(source))
        np.testing.assert_array_equal(np.frombuffer(results[0][4], dtype=dtype).reshape(source.shape)[finite],
                                      want_m.numpy()[finite])
        np.testing.assert_array_equal(np.frombuffer(results[0][5], dtype=np.int32).reshape(source.shape)[finite],
                                      want_e.numpy()[finite])
    x = ember.tensor(values)
    _assert_the_compiled_function_takes(monkeypatch, lambda: ember.frexp(x), [(np, "frexp")])


def test_frexp_node_and_gradient_are_the_python_paths():
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
            m, e = x.frexp()
            node = m.grad_fn
            fields = (type(node).__name__, e.grad_fn, [t.numpy().tobytes() for t in node.saved_tensors])
            m.backward(ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
            results.append((fields, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["int", "float16", "out", "empty"])
def test_other_frexp_cases_take_the_python_path(case):
    x = ember.tensor(np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4))
    call = {"int": lambda: ember.frexp(x.long()), "float16": lambda: ember.frexp(x.half()),
            "out": lambda: ember.frexp(x, out=(ember.empty(0), ember.empty(0, dtype=ember.int32))),
            "empty": lambda: ember.frexp(x[:0])}[case]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            try:
                result = call()
            except (RuntimeError, TypeError) as error:
                results.append((type(error), str(error)))
                continue
            results.append([(t.dtype, t.shape, t.numpy().tobytes()) for t in result])
    assert results[0] == results[1]


# -- products added to a tensor -------------------------------------------------------------------

_ADD_PRODUCTS = {  # name: (ember's op, torch's, the factors' shapes, the product's shape)
    "addmm": (ember.addmm, torch.addmm, ((3, 5), (5, 2)), (3, 2)),
    "addmv": (ember.addmv, torch.addmv, ((3, 5), (5,)), (3,)),
    "baddbmm": (ember.baddbmm, torch.baddbmm, ((2, 3, 4), (2, 4, 2)), (2, 3, 2)),
    "addbmm": (ember.addbmm, torch.addbmm, ((2, 3, 4), (2, 4, 2)), (3, 2)),
}


def _add_product_operands(name, bias_shape=None, dtype=np.float32):
    _, _, shapes, product = _ADD_PRODUCTS[name]
    rng = np.random.default_rng(3)
    bias = rng.standard_normal(product if bias_shape is None else bias_shape).astype(dtype)
    return [bias] + [rng.standard_normal(shape).astype(dtype) for shape in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", ["same", "row", "scalar", "column"])
@pytest.mark.parametrize("name", sorted(_ADD_PRODUCTS))
def test_added_products_are_the_python_paths_and_torchs(monkeypatch, name, bias, dtype):
    fn, torch_fn, _, product = _ADD_PRODUCTS[name]
    bias_shape = {"same": product, "row": product[-1:], "scalar": (), "column": product[:-1] + (1,)}[bias]
    arrays = _add_product_operands(name, bias_shape, dtype)
    results = _on_both_paths(lambda: fn(*(ember.tensor(a) for a in arrays)))
    assert results[0] == results[1]
    want = torch_fn(*(torch.tensor(a) for a in arrays)).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype=dtype).reshape(product), want, rtol=1e-5, atol=1e-6)
    tensors = [ember.tensor(a) for a in arrays]
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(*tensors), [(linalg, "_add_product")])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_addmv_past_the_small_arrays_is_the_python_paths_from_c(monkeypatch, dtype):
    """A matrix of more than 64 KiB and a vector, fewer multiply-adds than the bound: the C function (NumPy's
    BLAS product, the Python op's at every size), the same bits, torch's values."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in ((222,), (222, 295), (295,))]
    call = lambda: ember.addmv(*(ember.tensor(a) for a in arrays), beta=0.5, alpha=2)   # noqa: E731
    results = _on_both_paths(call)
    assert results[0] == results[1]
    want = torch.addmv(*(torch.tensor(a) for a in arrays), beta=0.5, alpha=2).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype=dtype), want, rtol=1e-4, atol=1e-4)
    _assert_the_compiled_function_takes(monkeypatch, call, [(linalg, "_add_product")])


@pytest.mark.parametrize("coefficients", [(0.5, 2.0), (0, 1), (-1, 0.5), (2, 1), (1, 3), (0.0, -1.5)])
@pytest.mark.parametrize("name", sorted(_ADD_PRODUCTS))
def test_added_products_coefficients_are_the_python_paths_and_torchs(monkeypatch, name, coefficients):
    """beta and alpha as ``_scale_sum`` applies them; a beta of 0 ignores the input's NaN."""
    fn, torch_fn, _, product = _ADD_PRODUCTS[name]
    beta, alpha = coefficients
    arrays = _add_product_operands(name, product[-1:])
    arrays[0][0] = np.nan if beta == 0 else arrays[0][0]
    results = _on_both_paths(lambda: fn(*(ember.tensor(a) for a in arrays), beta=beta, alpha=alpha))
    assert results[0] == results[1]
    want = torch_fn(*(torch.tensor(a) for a in arrays), beta=beta, alpha=alpha).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype=np.float32).reshape(product), want, rtol=1e-5,
                               atol=1e-6)
    tensors = [ember.tensor(a) for a in arrays]
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(*tensors, beta=beta, alpha=alpha),
                                        [(linalg, "_add_product")])


@pytest.mark.parametrize("grads", ["all", "input", "factors"])
@pytest.mark.parametrize("name", sorted(_ADD_PRODUCTS))
def test_added_products_nodes_and_gradients_are_the_python_paths(name, grads):
    fn, _, _, product = _ADD_PRODUCTS[name]
    arrays = _add_product_operands(name, product[-1:])
    grad = np.linspace(-1, 1, math.prod(product), dtype=np.float32).reshape(product)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            tensors = [ember.tensor(a, requires_grad=grads == "all" or (grads == "input") == (i == 0))
                       for i, a in enumerate(arrays)]
            out = fn(*tensors)
            node = out.grad_fn
            fields = (type(node).__name__, node.beta, node.alpha, node.in_shape,
                      [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(grad))
            results.append((fields, [t.grad.numpy().tobytes() if t.grad is not None else None for t in tensors]))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["bool_beta", "tensor_alpha", "out", "not_broadcasting", "bias_more_dims", "inner_one",
                                  "mixed_dtypes", "int64", "float16", "transposed", "flop_counter", "wrong_sizes"])
@pytest.mark.parametrize("name", sorted(_ADD_PRODUCTS))
def test_other_added_product_cases_take_the_python_path(name, case):
    from ember.utils.flop_counter import FlopCounterMode
    fn, _, shapes, product = _ADD_PRODUCTS[name]
    bias, a, b = (ember.tensor(v) for v in _add_product_operands(name))
    inner = {"addmm": ((3, 1), (1, 2)), "addmv": ((3, 1), (1,)), "baddbmm": ((2, 3, 1), (2, 1, 2)),
             "addbmm": ((1, 3, 1), (1, 1, 2))}[name]
    call = {"bool_beta": lambda: fn(bias, a, b, beta=True),
            "tensor_alpha": lambda: fn(bias, a, b, alpha=ember.tensor(2.0)),
            "out": lambda: fn(bias, a, b, out=ember.empty(product)),
            "not_broadcasting": lambda: fn(ember.ones(product[-1] + 1), a, b),
            "bias_more_dims": lambda: fn(ember.ones((1,) + product), a, b),
            "inner_one": lambda: fn(bias, ember.ones(inner[0]), ember.ones(inner[1])),
            "mixed_dtypes": lambda: fn(bias.double(), a, b),
            "int64": lambda: fn(bias.long(), a.long(), b.long()),
            "float16": lambda: fn(bias.half(), a.half(), b.half()),
            "transposed": lambda: fn(bias, a.mT.contiguous().mT, b),
            "flop_counter": lambda: fn(bias, a, b),
            "wrong_sizes": lambda: fn(bias, a, a)}[case]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            try:
                with FlopCounterMode(display=False) if case == "flop_counter" else contextlib.nullcontext() as counter:
                    result = call()
            except (RuntimeError, TypeError, IndexError, NotImplementedError) as error:
                results.append((type(error), str(error)))
                continue
            flops = counter.get_total_flops() if counter is not None else None
            results.append((result.dtype, result.shape, result.numpy().tobytes(), flops))
    assert results[0] == results[1]


# -- softmax and log_softmax -------------------------------------------------------------------------

SOFTMAXES = {"softmax": (ember.nn.functional.softmax, torch.nn.functional.softmax),
             "log_softmax": (ember.nn.functional.log_softmax, torch.nn.functional.log_softmax)}


@pytest.mark.parametrize("shape", [(3, 5), (7,), (2, 3, 40), (64, 8), (4, 300)])
@pytest.mark.parametrize("name", sorted(SOFTMAXES))
def test_softmaxes_are_the_python_paths_and_torchs(monkeypatch, name, shape):
    from ember._backend import vector_math as loops
    fn, torch_fn = SOFTMAXES[name]
    values = (np.random.default_rng(6).standard_normal(shape) * 4).astype(np.float32)
    values.reshape(-1)[:3] = [np.inf, -np.inf, np.nan] if values.size > 20 else values.reshape(-1)[:3]
    results = _on_both_paths(lambda: fn(ember.tensor(values), -1))
    assert results[0] == results[1]
    want = torch_fn(torch.tensor(values), -1).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], np.float32).reshape(shape), want, rtol=1e-5, atol=1e-6)
    x = ember.tensor(values)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, len(shape) - 1), [(loops, "softmax_rows")])


@pytest.mark.parametrize("name", sorted(SOFTMAXES))
def test_softmax_nodes_and_gradients_are_the_python_paths(name):
    fn = SOFTMAXES[name][0]
    values = np.linspace(-3, 3, 15, dtype=np.float32).reshape(3, 5)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(values, requires_grad=True)
            out = fn(x, 1)
            node = out.grad_fn
            fields = (type(node).__name__, node.dim, [t.detach().numpy().tobytes() for t in node.saved_tensors])
            out.backward(ember.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)))
            results.append((fields, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["first_dim", "float64", "dtype", "no_dim", "transposed", "large", "narrow_rows",
                                  "int64", "not_a_tensor", "dim_out_of_range", "numpy_dim", "empty", "zero_dims"])
@pytest.mark.parametrize("name", sorted(SOFTMAXES))
def test_other_softmax_cases_take_the_python_path(name, case):
    fn = SOFTMAXES[name][0]
    values = np.random.default_rng(7).standard_normal((4, 6)).astype(np.float32)
    call = {"first_dim": lambda: fn(ember.tensor(values), 0),
            "float64": lambda: fn(ember.tensor(values.astype(np.float64)), 1),
            "dtype": lambda: fn(ember.tensor(values), 1, dtype=ember.float64),
            "no_dim": lambda: fn(ember.tensor(values)),
            "transposed": lambda: fn(ember.tensor(values).t(), 1),
            "large": lambda: fn(ember.tensor(np.ones((64, 512), np.float32)), 1),
            "narrow_rows": lambda: fn(ember.tensor(np.ones((600, 4), np.float32)), 1),
            "int64": lambda: fn(ember.tensor(np.arange(6)), 0),
            "not_a_tensor": lambda: fn(values, 1),
            "dim_out_of_range": lambda: fn(ember.tensor(values), 2),
            "numpy_dim": lambda: fn(ember.tensor(values), np.int64(1)),
            "empty": lambda: fn(ember.tensor(values[:0]), 1),
            "zero_dims": lambda: fn(ember.tensor(np.float32(2.0)), 0)}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, IndexError, NotImplementedError, AttributeError))
    assert results[0] == results[1]


# -- outer products ------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["contiguous", "strided", "one_element"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["outer", "ger"])
def test_outer_products_are_the_python_paths_and_torchs(monkeypatch, name, dtype, layout):
    from ember.ops import linalg as products_module
    rng = np.random.default_rng(8)
    a, b = (rng.standard_normal(n).astype(dtype) * 3 for n in ((7, 10) if layout == "strided" else (3, 5)))
    if layout == "one_element":
        a = a[:1]
    fn = (lambda x, y: x.ger(y)) if name == "ger" else ember.outer
    make = (lambda v: ember.tensor(v)[::2]) if layout == "strided" else ember.tensor
    results = _on_both_paths(lambda: fn(make(a), make(b)))
    assert results[0] == results[1]
    want = torch.outer(torch.tensor(a)[::2] if layout == "strided" else torch.tensor(a),
                       torch.tensor(b)[::2] if layout == "strided" else torch.tensor(b)).numpy()
    assert results[0][3] == want.tobytes()
    x, y = make(a), make(b)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, y), [(products_module, "rank_one_untracked")])


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "int64", "mixed_dtypes", "matrix", "empty", "large",
                                  "out", "not_a_tensor", "bool"])
def test_other_outer_cases_take_the_python_path(case):
    a, b = np.linspace(-1, 1, 3, dtype=np.float32), np.linspace(2, 3, 5, dtype=np.float32)
    call = {"requires_grad": lambda: ember.outer(ember.tensor(a, requires_grad=True), ember.tensor(b)),
            "no_grad": lambda: _no_grad(ember.outer, ember.tensor(a, requires_grad=True), ember.tensor(b)),
            "int64": lambda: ember.outer(ember.tensor([1, 2]), ember.tensor([3, 4])),
            "mixed_dtypes": lambda: ember.outer(ember.tensor(a), ember.tensor(b).double()),
            "matrix": lambda: ember.outer(ember.tensor(a)[None], ember.tensor(b)),
            "empty": lambda: ember.outer(ember.tensor(a[:0]), ember.tensor(b)),
            "large": lambda: ember.outer(ember.ones(200), ember.ones(200)),
            "out": lambda: ember.outer(ember.tensor(a), ember.tensor(b), out=ember.empty(3, 5)),
            "not_a_tensor": lambda: ember.outer(a, ember.tensor(b)),
            "bool": lambda: ember.outer(ember.tensor(a > 0), ember.tensor(b > 2.5))}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, AttributeError))
    assert results[0] == results[1]


# -- trace ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (9, 2), (1, 1), (60, 100), (20, 20), (130, 140), (400, 300)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_trace_is_the_python_paths_and_torchs(monkeypatch, dtype, shape):
    """The diagonal's sum in C, read in place whatever the layout: the Python path's bits (NumPy's
    pairwise sum over the diagonal's stride) and torch's values."""
    from ember.ops import shape as shape_ops
    rng = np.random.default_rng(9)
    values = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)).astype(dtype)
    for make in (ember.tensor, lambda v: ember.tensor(np.asfortranarray(v)), lambda v: ember.tensor(v).flip(0)):
        results = _on_both_paths(lambda: ember.trace(make(values)))
        assert results[0] == results[1]
    want = torch.trace(torch.tensor(values)).numpy()
    got = ember.trace(ember.tensor(values)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)
    x = ember.tensor(values)
    _assert_the_compiled_function_takes(monkeypatch, lambda: x.trace(), [(shape_ops, "record")])


def test_trace_node_and_gradient_are_the_python_paths():
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), requires_grad=True)
            out = x.trace()
            node = out.grad_fn
            out.backward(ember.tensor(1.5))
            results.append((type(node).__name__, node.in_shape, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["int32", "bool", "float16", "vector", "batch", "empty", "no_grad", "uint8"])
def test_other_trace_cases_take_the_python_path(case):
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    call = {"int32": lambda: ember.trace(ember.tensor(values.astype(np.int32))),
            "bool": lambda: ember.trace(ember.tensor(values > 3)),
            "float16": lambda: ember.trace(ember.tensor(values.astype(np.float16))),
            "vector": lambda: ember.trace(ember.tensor(values[0])),
            "batch": lambda: ember.trace(ember.tensor(values[None])),
            "empty": lambda: ember.trace(ember.tensor(values[:0])),
            "no_grad": lambda: _no_grad(ember.trace, ember.tensor(values, requires_grad=True)),
            "uint8": lambda: ember.trace(ember.tensor(values.astype(np.uint8)))}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]


# -- addr ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("input_shape", [(3, 5), (5,), (1, 5), (3, 1), (), "transposed", "flipped"])
@pytest.mark.parametrize("coefficients", [(1, 1), (0.5, 2.0), (0, 3), (-1, 1), (2, 0.25)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_addr_is_the_python_paths_and_torchs(monkeypatch, dtype, coefficients, input_shape):
    from ember._backend import openmp_kernels as loops
    rng = np.random.default_rng(10)
    beta, alpha = coefficients
    base = (rng.standard_normal((5, 3)).T.copy() if input_shape == "transposed" else
            rng.standard_normal((3, 5)) if input_shape == "flipped" else rng.standard_normal(input_shape)).astype(dtype)
    a, b = (rng.standard_normal(n).astype(dtype) for n in (3, 5))

    def given():
        t = ember.tensor(base)
        return t.flip(0) if input_shape == "flipped" else t.mT.contiguous().mT if input_shape == "transposed" else t
    results = _on_both_paths(lambda: ember.addr(given(), ember.tensor(a), ember.tensor(b), beta=beta, alpha=alpha))
    assert results[0] == results[1]
    want = torch.addr(torch.tensor(given().numpy()), torch.tensor(a), torch.tensor(b), beta=beta, alpha=alpha)
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype).reshape(3, 5), want.numpy(), rtol=1e-5, atol=1e-6)
    x, y, z = given(), ember.tensor(a), ember.tensor(b)
    _assert_the_compiled_function_takes(monkeypatch, lambda: ember.addr(x, y, z, beta=beta, alpha=alpha),
                                        [(loops, "rank_one")])


@pytest.mark.parametrize("case", ["requires_grad", "int64", "bool", "bool_beta", "mixed_dtypes", "matrix_vec",
                                  "not_broadcasting", "three_dims", "large", "out", "flop_counter", "inplace"])
def test_other_addr_cases_take_the_python_path(case):
    from ember.utils.flop_counter import FlopCounterMode
    m, a, b = np.ones((3, 5), np.float32), np.linspace(-1, 1, 3, dtype=np.float32), np.arange(5, dtype=np.float32)

    def flops():
        with FlopCounterMode(display=False) as counter:
            out = ember.addr(ember.tensor(m), ember.tensor(a), ember.tensor(b))
        return out + counter.get_total_flops()
    call = {"requires_grad": lambda: ember.addr(ember.tensor(m, requires_grad=True), ember.tensor(a), ember.tensor(b)),
            "int64": lambda: ember.addr(ember.tensor(m).long(), ember.tensor(a).long(), ember.tensor(b).long()),
            "bool": lambda: ember.addr(ember.tensor(m > 0), ember.tensor(a > 0), ember.tensor(b > 1)),
            "bool_beta": lambda: ember.addr(ember.tensor(m), ember.tensor(a), ember.tensor(b), beta=True),
            "mixed_dtypes": lambda: ember.addr(ember.tensor(m).double(), ember.tensor(a), ember.tensor(b)),
            "matrix_vec": lambda: ember.addr(ember.tensor(m), ember.tensor(m), ember.tensor(b)),
            "not_broadcasting": lambda: ember.addr(ember.ones(4), ember.tensor(a), ember.tensor(b)),
            "three_dims": lambda: ember.addr(ember.ones(1, 3, 5), ember.tensor(a), ember.tensor(b)),
            "large": lambda: ember.addr(ember.ones(200, 200), ember.ones(200), ember.ones(200)),
            "out": lambda: ember.addr(ember.tensor(m), ember.tensor(a), ember.tensor(b), out=ember.empty(3, 5)),
            "flop_counter": flops,
            "inplace": lambda: ember.tensor(m).addr_(ember.tensor(a), ember.tensor(b), beta=0.5, alpha=3)}[case]
    results = _on_both_paths(call, (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("eps", [None, 0.0])
def test_logit_outside_its_domain_is_silent_as_torchs(dtype, eps):
    """logit of 0, 1 and values outside [0, 1]: infinities and NaN without NumPy's warnings, on the
    compiled function and on the Python path, as torch's."""
    values = np.array([0.0, 1.0, 2.0, -1.0, 0.25, np.nan], dtype=dtype)
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings():
            warnings.simplefilter("error")
            got = ember.logit(ember.tensor(values), eps).numpy()
        np.testing.assert_array_equal(got, torch.logit(torch.tensor(values), eps).numpy())


# -- LU factorizations ---------------------------------------------------------------------------------

def _lu_fields(result):
    """An LU factorization's result as its fields' (dtype, shape, requires_grad, bytes)."""
    return (type(result).__name__, [(t.dtype, t.shape, t.requires_grad, t.numpy().tobytes()) for t in result])


def _factorization_on_both_paths(call):
    """``call()`` with the compiled functions, then on the Python paths: each result's type, which of its
    tensors have a node, and their dtypes, shapes and bytes, or its error (type and message)."""
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = call()
            except (RuntimeError, TypeError, NotImplementedError, AttributeError, IndexError) as error:
                results.append((type(error), str(error)))
                continue
            parts = result if isinstance(result, tuple) else (result,)
            results.append((type(result).__name__, [t.grad_fn is not None for t in parts],
                            [(t.dtype, t.shape, t.detach().numpy().tobytes()) for t in parts]))
    return results


def _assert_the_factorization_is_the_python_path_s_and_torch_s(monkeypatch, fn, torch_fn, a, spied):
    """``fn(A)`` with the compiled functions: the Python path's fields bit for bit, torch's result type and
    fields' shapes, dtypes and values; the C function reaches none of ``spied``."""
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            results.append(_lu_fields(fn(ember.tensor(a))))
    assert results[0] == results[1]
    want = torch_fn(torch.tensor(a))
    got = fn(ember.tensor(a))
    assert type(got).__name__ == type(want).__name__.split(".")[-1]
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape) and str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-4)
    x = ember.tensor(a)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x), spied)


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (2, 3, 4, 4), (40, 40), "singular", "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["lu_factor_ex", "lu_factor", "lu"])
def test_lu_factorizations_are_the_python_paths_and_torchs(monkeypatch, name, dtype, shape):
    """lu_factor_ex and lu_factor on the recursive LU loop from C, and lu with its unpacking loop too: the
    Python path's fields, bit for bit (a zero pivot's info too), and torch's pivots, info and factors."""
    from ember._backend import openmp_kernels as loops
    rng = np.random.default_rng(12)
    a = (np.zeros((3, 3)) if shape == "singular" else rng.standard_normal((5, 4)).T if shape == "transposed"
         else rng.standard_normal(shape)).astype(dtype)
    if name == "lu_factor" and shape == "singular":   # (the error: the Python path's, below)
        return
    _assert_the_factorization_is_the_python_path_s_and_torch_s(
        monkeypatch, getattr(ember.linalg, name), getattr(torch.linalg, name), a,
        [(loops, "getrf_recursive"), (loops, "lu_unpack")])


LU_UNPACK_FLAGS = [(True, True), (True, False), (False, True)]


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (2, 3, 4, 4), (2, 6, 2), "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("flags", LU_UNPACK_FLAGS)
def test_lu_unpack_is_the_python_path_and_torchs(monkeypatch, flags, dtype, shape):
    """lu_unpack with each pair of flags on the unpacking loop from C: the Python path's P, L and U bit
    for bit (NaN, signed zeros and infinities copied as they are), and torch's."""
    from ember._backend import openmp_kernels as loops
    rng = np.random.default_rng(19)
    data = (rng.standard_normal((5, 4)).T if shape == "transposed" else rng.standard_normal(shape)).astype(dtype)
    if data.flags.c_contiguous:
        data.reshape(-1)[:3] = [np.nan, -0.0, -np.inf][:data.size]
    m, n = data.shape[-2:]
    pivots = (rng.integers(0, m, data.shape[:-2] + (min(m, n),)) + 1).astype(np.int32)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            results.append(_lu_fields(ember.lu_unpack(ember.tensor(data), ember.tensor(pivots), *flags)))
    assert results[0] == results[1]
    want = torch.lu_unpack(torch.tensor(data), torch.tensor(pivots), *flags)
    for g, w in zip(ember.lu_unpack(ember.tensor(data), ember.tensor(pivots), *flags), want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    LU, piv = ember.tensor(data), ember.tensor(pivots)
    _assert_the_compiled_function_takes(monkeypatch, lambda: ember.lu_unpack(LU, piv, *flags), [(loops, "lu_unpack")])


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "out_of_range", "zero", "int64_pivots", "float16",
                                  "vector", "empty", "out", "not_a_tensor", "broadcast_pivots", "no_parts", "int_flags",
                                  "large", "strided_pivots"])
def test_other_lu_unpack_cases_take_the_python_path(case):
    """Every other case: the Python path's result or error (its type and message)."""
    rng = np.random.default_rng(20)
    a = rng.standard_normal((2, 3, 3)).astype(np.float32)
    piv = np.array([[2, 3, 3], [1, 3, 3]], np.int32)
    call = {"requires_grad": lambda: ember.lu_unpack(ember.tensor(a, requires_grad=True), ember.tensor(piv)),
            "no_grad": lambda: _no_grad(lambda x: ember.lu_unpack(x, ember.tensor(piv)),
                                        ember.tensor(a, requires_grad=True)),
            "out_of_range": lambda: ember.lu_unpack(ember.tensor(a), ember.tensor(piv + 1)),
            "zero": lambda: ember.lu_unpack(ember.tensor(a), ember.tensor(piv - 1)),
            "int64_pivots": lambda: ember.lu_unpack(ember.tensor(a), ember.tensor(piv).long()),
            "float16": lambda: ember.lu_unpack(ember.tensor(a).half(), ember.tensor(piv)),
            "vector": lambda: ember.lu_unpack(ember.tensor(a[0, 0]), ember.tensor(piv[0])),
            "empty": lambda: ember.lu_unpack(ember.zeros(0, 3, 3), ember.zeros(0, 3, dtype=ember.int32)),
            "out": lambda: ember.lu_unpack(ember.tensor(a), ember.tensor(piv),
                                           out=(ember.empty(0), ember.empty(0), ember.empty(0))),
            "not_a_tensor": lambda: ember.lu_unpack(a, piv),
            "broadcast_pivots": lambda: ember.lu_unpack(ember.tensor(a), ember.tensor(piv[0])),
            "no_parts": lambda: ember.lu_unpack(ember.tensor(a), ember.tensor(piv), False, False),
            "int_flags": lambda: ember.lu_unpack(ember.tensor(a), ember.tensor(piv), 1, 0),
            "large": lambda: ember.lu_unpack(ember.ones(200, 200), ember.ones(200, dtype=ember.int32)),
            "strided_pivots": lambda: ember.lu_unpack(ember.tensor(a), ember.tensor(np.repeat(piv, 2, -1))[..., ::2]),
            }[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 3), (6, 6), (40, 40), "singular", "transposed", "pivoting"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["ldl_factor_ex", "ldl_factor"])
def test_ldl_factorizations_are_the_python_paths_and_torchs(monkeypatch, name, dtype, shape):
    """ldl_factor_ex and ldl_factor on the sytf2 loop from C: the Python path's fields bit for bit (a
    singular D's info too), and torch's pivots, info and factors."""
    from ember._backend import openmp_kernels as loops
    rng = np.random.default_rng(21)
    a = {"singular": np.zeros((3, 3)), "transposed": rng.standard_normal((5, 5)).T,
         "pivoting": np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 3.0], [1.0, 3.0, 1e-3]])}.get(shape)
    if a is None:
        a = rng.standard_normal(shape)
        a = a + np.swapaxes(a, -1, -2)
    a = a.astype(dtype)
    if name == "ldl_factor" and shape == "singular":   # (the error: the Python path's, below)
        return
    _assert_the_factorization_is_the_python_path_s_and_torch_s(
        monkeypatch, getattr(ember.linalg, name), getattr(torch.linalg, name), a, [(loops, "ldl_factor")])


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "int64", "float16", "complex64", "vector", "empty",
                                  "hermitian", "check_errors", "out", "not_a_tensor", "large", "singular", "wide"])
@pytest.mark.parametrize("name", ["ldl_factor_ex", "ldl_factor"])
def test_other_ldl_factorization_cases_take_the_python_path(name, case):
    """Every other case: the Python path's result or error (its type and message)."""
    fn = getattr(ember.linalg, name)
    a = np.random.default_rng(22).standard_normal((3, 3)).astype(np.float32)
    a = a + a.T
    out_dtypes = [ember.float32, ember.int32, ember.int32][:3 if name == "ldl_factor_ex" else 2]
    call = {"requires_grad": lambda: fn(ember.tensor(a, requires_grad=True)),
            "no_grad": lambda: _no_grad(fn, ember.tensor(a, requires_grad=True)),
            "int64": lambda: fn(ember.tensor(a).long()),
            "float16": lambda: fn(ember.tensor(a).half()),
            "complex64": lambda: fn(ember.tensor(a).to(ember.complex64)),
            "vector": lambda: fn(ember.tensor(a[0])),
            "empty": lambda: fn(ember.zeros(0, 0)),
            "hermitian": lambda: fn(ember.tensor(a), hermitian=True),
            "check_errors": lambda: (fn(ember.zeros(3, 3), check_errors=True) if name == "ldl_factor_ex"
                                     else fn(ember.tensor(a))),
            "out": lambda: fn(ember.tensor(a), out=tuple(ember.empty(0, dtype=d) for d in out_dtypes)),
            "not_a_tensor": lambda: fn(a),
            "large": lambda: fn(ember.ones(200, 200) + ember.eye(200)),
            "singular": lambda: fn(ember.zeros(2, 3, 3)),
            "wide": lambda: fn(ember.ones(2, 3))}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


def _triangular_operands(layout, dtype, rng):
    """(A, b) of a triangular solve, A laid out as ``layout`` says, well conditioned."""
    n, k = 5, 3
    a = rng.standard_normal((2, n, n)) + 4 * np.eye(n)
    b = rng.standard_normal((2, n, k))
    if layout == "matrix":
        return a[0].astype(dtype), b[0].astype(dtype)
    if layout == "columns":   # one matrix stored column by column
        return np.asfortranarray(a[0].astype(dtype)), b[0].astype(dtype)
    if layout == "batched_columns":
        return np.swapaxes(np.swapaxes(a, 1, 2).astype(dtype).copy(), 1, 2), b.astype(dtype)
    if layout == "sliced":   # (every other matrix of a batch)
        return np.concatenate([a, a]).astype(dtype)[::2], b.astype(dtype)
    if layout == "one":
        return np.ones((1, 1), dtype) * 2, np.ones((1, 4), dtype)
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("layout", ["matrix", "columns", "batched", "batched_columns", "sliced", "one"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=3)))
def test_triangular_solves_are_the_python_paths_and_torchs(monkeypatch, flags, dtype, layout):
    """triangular_solve with each set of flags and linalg.solve_triangular's left solve on the recursive solve
    from C, A laid out every way: the Python path's solution (and copy of A, its strides too) bit for bit,
    and torch's values."""
    from ember._backend import openmp_kernels as loops
    upper, transpose, unit = flags
    a, b = _triangular_operands(layout, dtype, np.random.default_rng(23))
    calls = [lambda: ember.triangular_solve(ember.tensor(b), ember.from_numpy(a), upper, transpose, unit)]
    if not transpose:
        calls.append(lambda: (ember.linalg.solve_triangular(ember.from_numpy(a), ember.tensor(b), upper=upper,
                                                            unitriangular=unit),))
    for call in calls:
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = call()
            results.append([(t.dtype, t.shape, t._data.strides, t.numpy().tobytes()) for t in got])
        assert results[0] == results[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.triangular_solve(torch.tensor(b), torch.tensor(a), upper, transpose, unit)
        got = ember.triangular_solve(ember.tensor(b), ember.from_numpy(a), upper, transpose, unit)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)
    if layout == "sliced":   # (a batch stride the C function leaves to the Python path)
        return
    A, B = ember.from_numpy(a), ember.tensor(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_the_compiled_function_takes(monkeypatch, lambda: ember.triangular_solve(B, A, upper, transpose, unit),
                                            [(loops, "trsm_recursive")])


@pytest.mark.parametrize("layout", ["matrix", "columns", "batched", "batched_columns", "sliced", "one"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solves_are_the_python_paths_and_torchs(monkeypatch, upper, dtype, layout):
    """cholesky_solve on two recursive solves from C, the factor laid out every way: the Python path's
    solution bit for bit, and torch's values; the Python path's step not reached."""
    from ember._backend import openmp_kernels as loops
    a, b = _triangular_operands(layout, dtype, np.random.default_rng(25))
    factor = np.triu(a) if upper else np.tril(a)   # (a factor of A = F^T F, or F F^T)
    factor = factor if factor.flags.c_contiguous == a.flags.c_contiguous else np.asfortranarray(factor)
    if layout == "batched_columns":
        factor = np.swapaxes(np.swapaxes(factor, 1, 2).copy(), 1, 2)

    def call():
        return ember.cholesky_solve(ember.tensor(b), ember.from_numpy(factor), upper)
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]
    want = torch.cholesky_solve(torch.tensor(b), torch.tensor(factor), upper).numpy()
    np.testing.assert_allclose(call().numpy(), want, rtol=1e-3, atol=1e-4)
    if layout != "sliced":   # (a batch stride the C function leaves to the Python path)
        _assert_the_compiled_function_takes(monkeypatch, call, [(loops, "trsm_recursive")])


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "broadcast", "int_upper", "out", "mixed_dtypes",
                                  "float16", "wide", "empty", "not_a_tensor", "large", "vector"])
def test_other_cholesky_solve_cases_take_the_python_path(case):
    """Every other case: the Python path's result (its node too) or error (its type and message)."""
    rng = np.random.default_rng(26)
    factor = np.tril(rng.standard_normal((3, 3)) + 4 * np.eye(3)).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    fn = ember.cholesky_solve
    call = {"requires_grad": lambda: fn(ember.tensor(b), ember.tensor(factor, requires_grad=True)),
            "no_grad": lambda: _no_grad(lambda x: fn(ember.tensor(b), x), ember.tensor(factor, requires_grad=True)),
            "broadcast": lambda: fn(ember.tensor(np.stack([b, b])), ember.tensor(factor)),
            "int_upper": lambda: fn(ember.tensor(b), ember.tensor(factor), 1),
            "out": lambda: fn(ember.tensor(b), ember.tensor(factor), out=ember.empty(3, 2)),
            "mixed_dtypes": lambda: fn(ember.tensor(b).double(), ember.tensor(factor)),
            "float16": lambda: fn(ember.tensor(b).half(), ember.tensor(factor).half()),
            "wide": lambda: fn(ember.tensor(b), ember.ones(2, 3)),
            "empty": lambda: fn(ember.zeros(3, 0), ember.tensor(factor)),
            "not_a_tensor": lambda: fn(b, factor),
            "large": lambda: fn(ember.ones(200, 100), ember.eye(200) * 2),
            "vector": lambda: fn(ember.tensor(b[:, 0]), ember.tensor(factor))}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "broadcast", "int_flags", "out", "right", "mixed_dtypes",
                                  "no_upper", "float16", "complex64", "wide", "empty", "not_a_tensor", "large"])
@pytest.mark.parametrize("name", ["triangular_solve", "solve_triangular"])
def test_other_triangular_solve_cases_take_the_python_path(name, case):
    """Every other case: the Python path's result or error (its type and message)."""
    rng = np.random.default_rng(24)
    a = (rng.standard_normal((3, 3)) + 4 * np.eye(3)).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)

    def solve(A, B, **k):
        if name == "triangular_solve":
            k.pop("left", None)
            upper = k.pop("upper", True)
            return tuple(ember.triangular_solve(B, A, upper, **k))
        k.setdefault("upper", True)
        return (ember.linalg.solve_triangular(A, B, **k),)
    call = {"requires_grad": lambda: solve(ember.tensor(a, requires_grad=True), ember.tensor(b)),
            "no_grad": lambda: _no_grad(lambda x: solve(x, ember.tensor(b))[0], ember.tensor(a, requires_grad=True)),
            "broadcast": lambda: solve(ember.tensor(a), ember.tensor(np.stack([b, b]))),
            "int_flags": lambda: solve(ember.tensor(a), ember.tensor(b), upper=1),
            "out": lambda: (ember.linalg.solve_triangular(ember.tensor(a), ember.tensor(b), upper=True,
                                                          out=ember.empty(0)),) if name == "solve_triangular"
            else tuple(ember.triangular_solve(ember.tensor(b), ember.tensor(a), out=(ember.empty(0), ember.empty(0)))),
            "right": lambda: solve(ember.tensor(a), ember.tensor(b.T.copy()), left=False),
            "mixed_dtypes": lambda: solve(ember.tensor(a), ember.tensor(b).double()),
            "no_upper": lambda: solve(ember.tensor(a), ember.tensor(b), upper=None),
            "float16": lambda: solve(ember.tensor(a).half(), ember.tensor(b).half()),
            "complex64": lambda: solve(ember.tensor(a).to(ember.complex64), ember.tensor(b).to(ember.complex64)),
            "wide": lambda: solve(ember.ones(2, 3), ember.tensor(b)),
            "empty": lambda: solve(ember.tensor(a), ember.zeros(3, 0)),
            "not_a_tensor": lambda: solve(a, b),
            "large": lambda: solve(ember.eye(200) * 2, ember.ones(200, 100))}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


CHOLESKY_CALLS = [("linalg.cholesky", {}), ("linalg.cholesky", {"upper": True}), ("cholesky", {}),
                  ("cholesky", {"upper": True}), ("linalg.cholesky_ex", {}), ("linalg.cholesky_ex", {"upper": True}),
                  ("Tensor.cholesky", {})]


def _cholesky_fn(name):
    return {"linalg.cholesky": ember.linalg.cholesky, "cholesky": ember.cholesky,
            "Tensor.cholesky": ember.Tensor.cholesky, "linalg.cholesky_ex": ember.linalg.cholesky_ex}[name]


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 3), (40, 40), "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CHOLESKY_CALLS, ids=[f"{n}{k}" for n, k in CHOLESKY_CALLS])
def test_cholesky_factorizations_are_the_python_paths_and_torchs(monkeypatch, name, kwargs, dtype, shape):
    """linalg.cholesky, cholesky and linalg.cholesky_ex, lower and upper, on the recursive factorization from C:
    the Python path's factor (and info) bit for bit, and torch's values."""
    from ember._backend import openmp_kernels as loops
    rng = np.random.default_rng(25)
    a = rng.standard_normal((4, 4) if shape == "transposed" else shape)
    a = (a @ np.swapaxes(a, -1, -2) + a.shape[-1] * np.eye(a.shape[-1])).astype(dtype)
    if shape == "transposed":
        a = np.asfortranarray(a)
    fn = _cholesky_fn(name)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            got = fn(ember.from_numpy(a), **kwargs)
            results.append(_lu_fields(got if isinstance(got, tuple) else (got,)))
    assert results[0] == results[1]
    want = {"linalg.cholesky": torch.linalg.cholesky, "cholesky": torch.cholesky,
            "Tensor.cholesky": torch.Tensor.cholesky, "linalg.cholesky_ex": torch.linalg.cholesky_ex}[name](
        torch.tensor(a), **kwargs)
    got = fn(ember.from_numpy(a), **kwargs)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.shape == tuple(w.shape) and str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-4)
    x = ember.from_numpy(a)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, **kwargs), [(loops, "potrf_recursive")])


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "int64", "float16", "complex64", "vector", "empty",
                                  "not_positive_definite", "nan", "int_upper", "check_errors", "out", "not_a_tensor",
                                  "large", "wide"])
@pytest.mark.parametrize("name,kwargs", CHOLESKY_CALLS[::2], ids=[f"{n}{k}" for n, k in CHOLESKY_CALLS[::2]])
def test_other_cholesky_cases_take_the_python_path(name, kwargs, case):
    """Every other case: the Python path's result or error (its type and message)."""
    fn = _cholesky_fn(name)
    a = np.random.default_rng(26).standard_normal((3, 3)).astype(np.float32)
    a = a @ a.T + 3 * np.eye(3, dtype=np.float32)
    bad = np.array([[[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]], np.float32)
    outs = (ember.empty(0), ember.empty(0, dtype=ember.int32)) if name == "linalg.cholesky_ex" else ember.empty(0)
    call = {"requires_grad": lambda: fn(ember.tensor(a, requires_grad=True), **kwargs),
            "no_grad": lambda: _no_grad(lambda x: fn(x, **kwargs), ember.tensor(a, requires_grad=True)),
            "int64": lambda: fn(ember.tensor(a).long(), **kwargs),
            "float16": lambda: fn(ember.tensor(a).half(), **kwargs),
            "complex64": lambda: fn(ember.tensor(a).to(ember.complex64), **kwargs),
            "vector": lambda: fn(ember.tensor(a[0]), **kwargs),
            "empty": lambda: fn(ember.zeros(0, 0), **kwargs),
            "not_positive_definite": lambda: fn(ember.tensor(bad), **kwargs),
            "nan": lambda: fn(ember.tensor(np.full((2, 2), np.nan, np.float32)), **kwargs),
            "int_upper": lambda: fn(ember.tensor(a), upper=1),
            "check_errors": lambda: (fn(ember.tensor(bad), check_errors=True) if name == "linalg.cholesky_ex"
                                     else fn(ember.tensor(a), **kwargs)),
            "out": lambda: fn(ember.tensor(a), **kwargs, out=outs),
            "not_a_tensor": lambda: fn(a, **kwargs),
            "large": lambda: fn(ember.eye(200) * 2, **kwargs),
            "wide": lambda: fn(ember.ones(2, 3), **kwargs)}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


# -- QR factorizations -----------------------------------------------------------------------------------

QR_CALLS = [("linalg.qr", {}), ("linalg.qr", {"mode": "complete"}), ("linalg.qr", {"mode": "r"}), ("qr", {}),
            ("qr", {"some": False}), ("Tensor.qr", {})]


def _qr_fn(name):
    return {"linalg.qr": ember.linalg.qr, "qr": ember.qr, "Tensor.qr": ember.Tensor.qr}[name]


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (2, 3, 4, 4), (1, 7), (7, 1), (40, 40),
                                   "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", QR_CALLS, ids=[f"{n}{k}" for n, k in QR_CALLS])
def test_qr_factorizations_are_the_python_paths_and_torchs(monkeypatch, name, kwargs, dtype, shape):
    """linalg.qr in each mode and qr on the QR driver from C: the Python path's fields bit for bit, and
    torch's shapes, dtypes and values (up to the sign of each column of Q and row of R)."""
    from ember._backend import lapack
    rng = np.random.default_rng(14)
    a = (rng.standard_normal((5, 4)).T if shape == "transposed" else rng.standard_normal(shape)).astype(dtype)
    fn = _qr_fn(name)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            results.append(_lu_fields(fn(ember.tensor(a), **kwargs)))
    assert results[0] == results[1]
    torch_fn = {"linalg.qr": torch.linalg.qr, "qr": torch.qr, "Tensor.qr": torch.Tensor.qr}[name]
    want = torch_fn(torch.tensor(a), **kwargs)
    got = fn(ember.tensor(a), **kwargs)
    assert type(got).__name__ == type(want).__name__.split(".")[-1]
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape) and str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
    q, r = got
    if q.numel():
        np.testing.assert_allclose((q @ r).numpy(), a, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.abs(r.numpy()), np.abs(want[1].numpy()), rtol=1e-4, atol=1e-5)
    x = ember.tensor(a)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, **kwargs), [(lapack, "qr")])


def test_qr_of_matrices_without_elements_is_torchs():
    """Empty matrices and empty batches (the Python path, which NumPy's qr takes): torch's shapes and values."""
    for shape in [(0, 3), (3, 0), (2, 0, 3), (0, 2, 3), (0, 0)]:
        for mode in ("reduced", "complete", "r"):
            got, want = ember.linalg.qr(ember.zeros(*shape), mode=mode), torch.linalg.qr(torch.zeros(*shape), mode=mode)
            for g, w in zip(got, want):
                assert g.shape == tuple(w.shape)
                np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "int64", "float16", "complex64", "vector", "empty",
                                  "bad_mode", "out", "not_a_tensor", "large", "bfloat16"])
@pytest.mark.parametrize("name,kwargs", QR_CALLS[:4], ids=[f"{n}{k}" for n, k in QR_CALLS[:4]])
def test_other_qr_cases_take_the_python_path(name, kwargs, case):
    """Every other case: the Python path's result or error (its type and message)."""
    fn = _qr_fn(name)
    a = np.random.default_rng(15).standard_normal((4, 3)).astype(np.float32)
    call = {"requires_grad": lambda: fn(ember.tensor(a, requires_grad=True), **kwargs),
            "no_grad": lambda: _no_grad(lambda x: fn(x, **kwargs), ember.tensor(a, requires_grad=True)),
            "int64": lambda: fn(ember.tensor(a).long(), **kwargs),
            "float16": lambda: fn(ember.tensor(a).half(), **kwargs),
            "bfloat16": lambda: fn(ember.tensor(a).bfloat16(), **kwargs),
            "complex64": lambda: fn(ember.tensor(a).to(ember.complex64), **kwargs),
            "vector": lambda: fn(ember.tensor(a[0]), **kwargs),
            "empty": lambda: fn(ember.zeros(0, 3), **kwargs),
            "bad_mode": lambda: (fn(ember.tensor(a), mode="full") if name == "linalg.qr" else fn(ember.tensor(a), 0)),
            "out": lambda: fn(ember.tensor(a), **kwargs, out=(ember.empty(0), ember.empty(0))),
            "not_a_tensor": lambda: fn(a, **kwargs),
            "large": lambda: fn(ember.ones(200, 100) + ember.eye(200, 100), **kwargs)}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "int64", "float16", "complex64", "vector", "empty",
                                  "no_pivot", "check_errors", "out", "not_a_tensor", "large", "singular", "bfloat16"])
@pytest.mark.parametrize("name", ["lu_factor_ex", "lu_factor", "lu"])
def test_other_lu_factorization_cases_take_the_python_path(name, case):
    """Every other case: the Python path's result or error (its type and message)."""
    fn = getattr(ember.linalg, name)
    a = np.random.default_rng(13).standard_normal((3, 3)).astype(np.float32)
    out_dtypes = ([ember.float32] * 3 if name == "lu"
                  else [ember.float32, ember.int32, ember.int32][:3 if name == "lu_factor_ex" else 2])
    call = {"requires_grad": lambda: fn(ember.tensor(a, requires_grad=True)),
            "no_grad": lambda: _no_grad(fn, ember.tensor(a, requires_grad=True)),
            "int64": lambda: fn(ember.tensor(a).long()),
            "float16": lambda: fn(ember.tensor(a).half()),
            "bfloat16": lambda: fn(ember.tensor(a).bfloat16()),
            "complex64": lambda: fn(ember.tensor(a).to(ember.complex64)),
            "vector": lambda: fn(ember.tensor(a[0])),
            "empty": lambda: fn(ember.zeros(0, 0)),
            "no_pivot": lambda: fn(ember.tensor(a), pivot=False),
            "check_errors": lambda: (fn(ember.zeros(3, 3), check_errors=True) if name == "lu_factor_ex"
                                     else fn(ember.tensor(a))),
            "out": lambda: fn(ember.tensor(a), out=tuple(ember.empty(0, dtype=d) for d in out_dtypes)),
            "not_a_tensor": lambda: fn(a),
            "large": lambda: fn(ember.ones(200, 200) + ember.eye(200)),
            "singular": lambda: fn(ember.zeros(2, 3, 3))}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


# -- SVD and eigh ----------------------------------------------------------------------------------------

SVD_CALLS = [("linalg.svd", {}), ("linalg.svd", {"full_matrices": False}), ("linalg.svdvals", {}), ("svd", {}),
             ("svd", {"some": False}), ("svd", {"compute_uv": False}), ("Tensor.svd", {})]
EIGH_CALLS = [("linalg.eigh", {}), ("linalg.eigh", {"UPLO": "U"}), ("linalg.eigvalsh", {}),
              ("linalg.eigvalsh", {"UPLO": "U"})]


def _decomposition_fns(name):
    """(ember's function, torch's) of ``name`` (one of ``SVD_CALLS``, ``EIGH_CALLS`` or a householder product)."""
    owner, attribute = name.rsplit(".", 1) if "." in name else ("", name)
    return tuple(getattr({"": lib, "linalg": lib.linalg, "Tensor": lib.Tensor}[owner], attribute)
                 for lib in (ember, torch))


def _decomposition_input(shape, dtype):
    rng = np.random.default_rng(16)
    return (rng.standard_normal((5, 4)).T if shape == "transposed" else rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (2, 3, 4, 4), (1, 7), (7, 1), (30, 20),
                                   "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", SVD_CALLS, ids=[f"{n}{k}" for n, k in SVD_CALLS])
def test_svds_are_the_python_paths_and_torchs(monkeypatch, name, kwargs, dtype, shape):
    """linalg.svd, svdvals and svd on the gesdd driver from C: the Python path's fields bit for bit (svd's V
    a view of Vh on both), and torch's result type, shapes, dtypes and singular values, with factors that
    rebuild the matrix."""
    from ember._backend import lapack
    a = _decomposition_input(shape, dtype)
    fn, torch_fn = _decomposition_fns(name)
    results = _factorization_on_both_paths(lambda: fn(ember.tensor(a), **kwargs))
    assert results[0] == results[1]
    got, want = fn(ember.tensor(a), **kwargs), torch_fn(torch.tensor(a), **kwargs)
    assert type(got).__name__ == type(want).__name__.split(".")[-1]
    got_parts, want_parts = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got_parts, want_parts):
        assert g.shape == tuple(w.shape) and str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
    tolerance = {"rtol": 1e-4, "atol": 1e-5}
    values = got_parts[1] if isinstance(got, tuple) else got
    np.testing.assert_allclose(values.numpy(), (want_parts[1] if isinstance(got, tuple) else want).numpy(),
                               **tolerance)
    if name.endswith("svd") and kwargs.get("compute_uv", True):
        U, S, V = (t.numpy() for t in got)
        k = S.shape[-1]
        Vh = V[..., :k, :] if name == "linalg.svd" else np.swapaxes(V[..., :, :k], -1, -2)
        np.testing.assert_allclose(U[..., :, :k] * S[..., None, :] @ Vh, a, **tolerance)
        if name != "linalg.svd":   # (V a view of Vh on both paths)
            with python_paths():
                python_V = fn(ember.tensor(a), **kwargs).V
            assert got.V._base is not None and python_V._base is not None
    elif name.endswith("svd"):
        np.testing.assert_array_equal(got.U.numpy(), want.U.numpy())
        np.testing.assert_array_equal(got.V.numpy(), want.V.numpy())
    x = ember.tensor(a)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, **kwargs), [(lapack, "gesdd")])


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 4, 4), (7, 7), (20, 20), "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", EIGH_CALLS, ids=[f"{n}{k}" for n, k in EIGH_CALLS])
def test_eighs_are_the_python_paths_and_torchs(monkeypatch, name, kwargs, dtype, shape):
    """linalg.eigh and eigvalsh on the syevd driver from C, reading the triangle UPLO names: the Python path's
    fields bit for bit, and torch's result type, shapes, dtypes and eigenvalues, with eigenvectors that
    rebuild the matrix."""
    from ember._backend import lapack
    a = _decomposition_input((4, 4) if shape == "transposed" else shape, dtype)
    if shape == "transposed":
        a = a.T
    fn, torch_fn = _decomposition_fns(name)
    results = _factorization_on_both_paths(lambda: fn(ember.tensor(a), **kwargs))
    assert results[0] == results[1]
    got, want = fn(ember.tensor(a), **kwargs), torch_fn(torch.tensor(a), **kwargs)
    assert type(got).__name__ == type(want).__name__.split(".")[-1]
    tolerance = {"rtol": 1e-4, "atol": 1e-5}
    values = got[0] if isinstance(got, tuple) else got
    np.testing.assert_allclose(values.numpy(), (want[0] if isinstance(got, tuple) else want).numpy(), **tolerance)
    if isinstance(got, tuple):
        read = np.tril(a) if kwargs.get("UPLO", "L") == "L" else np.triu(a)
        symmetric = read + np.swapaxes(read, -1, -2) - np.eye(a.shape[-1]) * np.diagonal(a, 0, -2, -1)[..., None, :]
        w, V = got[0].numpy(), got[1].numpy()
        np.testing.assert_allclose(V * w[..., None, :] @ np.swapaxes(V, -1, -2), symmetric, **tolerance)
    x = ember.tensor(a)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, **kwargs), [(lapack, "syevd")])


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "int64", "float16", "complex64", "vector", "empty",
                                  "out", "not_a_tensor", "large", "bfloat16", "nan", "infinity", "flag", "driver"])
@pytest.mark.parametrize("name,kwargs", SVD_CALLS[:6], ids=[f"{n}{k}" for n, k in SVD_CALLS[:6]])
def test_other_svd_cases_take_the_python_path(name, kwargs, case):
    """Every other case: the Python path's result or error (its type and message)."""
    fn = _decomposition_fns(name)[0]
    a = np.random.default_rng(17).standard_normal((4, 3)).astype(np.float32)
    with_nan, with_infinity = a.copy(), a.copy()
    with_nan[1, 2], with_infinity[0, 0] = np.nan, np.inf
    flag = {"linalg.svd": {"full_matrices": 1}, "svd": {"some": 0}}.get(name, {})
    call = {"requires_grad": lambda: fn(ember.tensor(a, requires_grad=True), **kwargs),
            "no_grad": lambda: _no_grad(lambda x: fn(x, **kwargs), ember.tensor(a, requires_grad=True)),
            "int64": lambda: fn(ember.tensor(a).long(), **kwargs),
            "float16": lambda: fn(ember.tensor(a).half(), **kwargs),
            "bfloat16": lambda: fn(ember.tensor(a).bfloat16(), **kwargs),
            "complex64": lambda: fn(ember.tensor(a).to(ember.complex64), **kwargs),
            "vector": lambda: fn(ember.tensor(a[0]), **kwargs),
            "empty": lambda: fn(ember.zeros(0, 3), **kwargs),
            "out": lambda: fn(ember.tensor(a), **kwargs, out=(ember.empty(0), ember.empty(0), ember.empty(0))
                              if name != "linalg.svdvals" else ember.empty(0)),
            "not_a_tensor": lambda: fn(a, **kwargs),
            "large": lambda: fn(ember.ones(200, 100) + ember.eye(200, 100), **kwargs),
            "nan": lambda: fn(ember.tensor(with_nan), **kwargs),
            "infinity": lambda: fn(ember.tensor(with_infinity), **kwargs),
            "flag": lambda: fn(ember.tensor(a), **{**kwargs, **flag}),
            "driver": lambda: (fn(ember.tensor(a), driver="gesvd") if name.startswith("linalg")
                               else fn(ember.tensor(a), **kwargs))}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "int64", "float16", "complex64", "vector", "empty",
                                  "out", "not_a_tensor", "large", "bfloat16", "nan", "not_square", "bad_uplo",
                                  "uplo_not_a_string"])
@pytest.mark.parametrize("name,kwargs", EIGH_CALLS, ids=[f"{n}{k}" for n, k in EIGH_CALLS])
def test_other_eigh_cases_take_the_python_path(name, kwargs, case):
    """Every other case: the Python path's result or error (its type and message)."""
    fn = _decomposition_fns(name)[0]
    a = np.random.default_rng(18).standard_normal((4, 4)).astype(np.float32)
    with_nan = a.copy()
    with_nan[2, 1] = with_nan[1, 2] = np.nan
    call = {"requires_grad": lambda: fn(ember.tensor(a, requires_grad=True), **kwargs),
            "no_grad": lambda: _no_grad(lambda x: fn(x, **kwargs), ember.tensor(a, requires_grad=True)),
            "int64": lambda: fn(ember.tensor(a).long(), **kwargs),
            "float16": lambda: fn(ember.tensor(a).half(), **kwargs),
            "bfloat16": lambda: fn(ember.tensor(a).bfloat16(), **kwargs),
            "complex64": lambda: fn(ember.tensor(a).to(ember.complex64), **kwargs),
            "vector": lambda: fn(ember.tensor(a[0]), **kwargs),
            "empty": lambda: fn(ember.zeros(0, 0), **kwargs),
            "out": lambda: fn(ember.tensor(a), **kwargs, out=(ember.empty(0), ember.empty(0))
                              if name == "linalg.eigh" else ember.empty(0)),
            "not_a_tensor": lambda: fn(a, **kwargs),
            "large": lambda: fn(ember.ones(120, 120) + ember.eye(120), **kwargs),
            "nan": lambda: fn(ember.tensor(with_nan), **kwargs),
            "not_square": lambda: fn(ember.tensor(a[:3]), **kwargs),
            "bad_uplo": lambda: fn(ember.tensor(a), UPLO="X"),
            "uplo_not_a_string": lambda: fn(ember.tensor(a), UPLO=None)}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


# -- splits into views: tensor_split, chunk, unbind ----------------------------------------------------

def _split_fields(result, x):
    """A split's parts: each one's shape, strides, data pointer (from ``x``'s), bytes, whether it is writeable,
    a view, and has a node."""
    start = x._data.__array_interface__["data"][0]
    return [(p.shape, p._data.strides, p._data.__array_interface__["data"][0] - start, p.detach().numpy().tobytes(),
             p._data.flags.writeable, p._base is not None, p.grad_fn is not None) for p in result]


SPLIT_CALLS = [(ember.tensor_split, 3, 0), (ember.tensor_split, 2, 1), (ember.tensor_split, [1, 4], 0),
               (ember.tensor_split, (2, 2, 8), 0), (ember.tensor_split, [-2], -1), (ember.tensor_split, [4, 1], 0),
               (ember.tensor_split, [], 0), (ember.tensor_split, 9, 0), (ember.chunk, 3, 0), (ember.chunk, 4, 1),
               (ember.chunk, 2, -1), (ember.chunk, 1, 0), (ember.chunk, 7, 0), (ember.unbind, None, 0),
               (ember.unbind, None, 1), (ember.unbind, None, -1)]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "empty", "read_only"])
@pytest.mark.parametrize("call", range(len(SPLIT_CALLS)))
def test_splits_are_the_python_paths_and_torchs(monkeypatch, call, layout):
    """tensor_split (sections or indices), chunk and unbind on the views made in C: each part's shape,
    strides, data pointer, bytes and flags the Python path's, a view of the input sharing its version
    counter; torch's shapes and values; the Python path's step not reached."""
    from ember.ops import shape as shape_ops, view as view_ops
    fn, arg, dim = SPLIT_CALLS[call]
    a = np.arange(42, dtype=np.float32).reshape(7, 6)
    a = {"contiguous": a, "transposed": a.T, "strided": a[::2, ::3], "empty": a[:0], "read_only": a}[layout]
    if layout == "read_only":
        a = a.copy()
        a.flags.writeable = False
    args = (arg, dim) if fn is not ember.unbind else (dim,)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.from_numpy(a)
            parts = fn(x, *args)
            assert all(p._version_counter is x._version_counter and p._base is x for p in parts)
            results.append(_split_fields(parts, x))
    assert results[0] == results[1]
    torch_fn = getattr(torch, fn.__name__)
    want = torch_fn(torch.from_numpy(a.copy()), *args)
    assert [tuple(w.shape) for w in want] == [p[0] for p in results[0]]
    for p, w in zip(fn(ember.from_numpy(a), *args), want):
        np.testing.assert_array_equal(p.numpy(), w.numpy())
    spied = {ember.tensor_split: (shape_ops, "_split_points"), ember.chunk: (view_ops, "_split_sizes"),
             ember.unbind: (view_ops, "_record_multi")}[fn]
    if layout != "read_only" and results[0]:   # (a read-only tensor goes to the Python op)
        x = ember.from_numpy(a)
        _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, *args), [spied])


def test_directional_splits_are_the_python_paths():
    """hsplit, vsplit and dsplit into equal parts or at indices: the Python path's views."""
    x = np.arange(48.0).reshape(4, 6, 2)
    for fn, arg in [(ember.hsplit, 3), (ember.vsplit, 2), (ember.dsplit, 2), (ember.hsplit, [1, 4]),
                    (ember.vsplit, [3])]:
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                t = ember.tensor(x)
                results.append(_split_fields(fn(t, arg), t))
        assert results[0] == results[1]


@pytest.mark.parametrize("case", ["requires_grad", "no_grad", "zero_dims", "bad_dim", "zero_sections", "bool",
                                  "numpy_int", "float", "tensor_indices", "not_a_tensor", "bool_dim", "big_dim",
                                  "negative_sections", "float_index"])
@pytest.mark.parametrize("name", ["tensor_split", "chunk", "unbind"])
def test_other_split_cases_take_the_python_path(name, case):
    """Every other case: the Python path's parts (their nodes too) or error (its type and message)."""
    fn = getattr(ember, name)
    a = np.arange(12.0, dtype=np.float32).reshape(4, 3)

    def call(x, arg=2, dim=0):
        return fn(x, dim) if name == "unbind" else fn(x, arg, dim)
    cases = {"requires_grad": lambda: call(ember.tensor(a, requires_grad=True)),
             "no_grad": lambda: _no_grad(call, ember.tensor(a, requires_grad=True)),
             "zero_dims": lambda: call(ember.tensor(1.0)),
             "bad_dim": lambda: call(ember.tensor(a), dim=2),
             "zero_sections": lambda: call(ember.tensor(a), 0),
             "bool": lambda: call(ember.tensor(a), True),
             "numpy_int": lambda: call(ember.tensor(a), np.int64(2)),
             "float": lambda: call(ember.tensor(a), 2.0),
             "tensor_indices": lambda: call(ember.tensor(a), ember.tensor([1, 2])),
             "not_a_tensor": lambda: call(a),
             "bool_dim": lambda: call(ember.tensor(a), dim=True),
             "big_dim": lambda: call(ember.tensor(a), dim=2 ** 70),
             "negative_sections": lambda: call(ember.tensor(a), -1),
             "float_index": lambda: call(ember.tensor(a), [1.5])}
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                parts = cases[case]()
                results.append([(type(p.grad_fn).__name__, p.shape, p.detach().numpy().tobytes()) for p in parts])
            except (RuntimeError, TypeError, IndexError, AttributeError, OverflowError) as error:
                results.append((type(error), str(error)))
    assert results[0] == results[1]


# -- masked_scatter ------------------------------------------------------------------------------------

MASKED_SCATTER_SHAPES = [((3, 4), (3, 4), (12,)), ((3, 4), (4,), (3, 5)), ((4,), (3, 4), (2, 8)), ((), (2,), (3,)),
                         ((3, 1), (1, 4), (20,)), ((2, 3), (2, 3), (1,))]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool", "float16"])
@pytest.mark.parametrize("shapes", range(len(MASKED_SCATTER_SHAPES)))
def test_masked_scatter_is_the_python_paths_and_torchs(monkeypatch, shapes, dtype, layout):
    """masked_scatter in C: the Python path's bits (the mask and input broadcast, the source read in
    row-major order from any layout) and torch's values; the Python path's step not reached."""
    from ember.ops import index
    input_shape, mask_shape, source_shape = MASKED_SCATTER_SHAPES[shapes]
    rng = np.random.default_rng(20)
    a = rng.integers(0, 5, input_shape).astype(dtype)
    mask = rng.random(mask_shape) < 0.5
    if shapes == 5:
        mask[:] = False
        mask[1, 2] = True
    source = rng.integers(5, 9, (source_shape[0] * 2,) + source_shape[1:]).astype(dtype)
    source = {"contiguous": source[:source_shape[0]], "transposed": source[:source_shape[0]].T,
              "strided": source[::2]}[layout]

    def call():
        return ember.masked_scatter(ember.tensor(a), ember.tensor(mask), ember.from_numpy(source))
    results = _on_both_paths(call)
    assert results[0] == results[1]
    want = torch.masked_scatter(torch.tensor(a), torch.tensor(mask), torch.from_numpy(source.copy()))
    np.testing.assert_array_equal(call().numpy(), want.numpy())
    _assert_the_compiled_function_takes(monkeypatch, call, [(index, "_masked_scatter_checked")])


@pytest.mark.parametrize("case", ["requires_grad", "source_requires_grad", "no_grad", "too_few", "int_mask",
                                  "other_dtype", "no_broadcast", "empty", "not_a_tensor", "large", "method"])
def test_other_masked_scatter_cases_take_the_python_path(case):
    """Every other case: the Python path's result (its node too) or error (its type and message)."""
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    mask = np.array([True, False, True, True])
    source = np.arange(20.0, 32.0, dtype=np.float32)

    def call(x=None, m=None, s=None):
        return ember.masked_scatter(ember.tensor(a) if x is None else x, ember.tensor(mask) if m is None else m,
                                    ember.tensor(source) if s is None else s)
    cases = {"requires_grad": lambda: call(x=ember.tensor(a, requires_grad=True)),
             "source_requires_grad": lambda: call(s=ember.tensor(source, requires_grad=True)),
             "no_grad": lambda: _no_grad(lambda x: call(x=x), ember.tensor(a, requires_grad=True)),
             "too_few": lambda: call(s=ember.tensor(source[:5])),
             "int_mask": lambda: call(m=ember.tensor(mask.astype(np.int64))),
             "other_dtype": lambda: call(s=ember.tensor(source.astype(np.float64))),
             "no_broadcast": lambda: call(m=ember.tensor(mask[:3])),
             "empty": lambda: call(x=ember.zeros(0, 4)),
             "not_a_tensor": lambda: call(s=source),
             "large": lambda: call(x=ember.ones(300, 4), s=ember.ones(1200)),
             "method": lambda: ember.tensor(a).masked_scatter(ember.tensor(mask), ember.tensor(source))}
    results = _factorization_on_both_paths(cases[case])
    assert results[0] == results[1]


# -- householder_product (orgqr) -------------------------------------------------------------------------

ORGQR_SHAPES = [((5, 3), (2,)), ((4, 4), (4,)), ((2, 6, 3), (2, 3)), ((3, 1), (1,)), ((5, 3), (0,)), ((1, 1), (1,)),
                ((30, 20), (20,))]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", range(len(ORGQR_SHAPES)))
@pytest.mark.parametrize("name", ["linalg.householder_product", "orgqr", "Tensor.orgqr"])
def test_householder_products_are_the_python_paths_and_torchs(monkeypatch, name, shapes, dtype, layout):
    """linalg.householder_product and orgqr on the orgqr driver from C: the Python path's bits and torch's
    values; the Python path's LAPACK call not reached."""
    from ember._backend import lapack
    a_shape, tau_shape = ORGQR_SHAPES[shapes]
    rng = np.random.default_rng(21)
    a = rng.standard_normal(a_shape).astype(dtype)
    if layout == "transposed":
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    tau = (rng.random(tau_shape) + 0.5).astype(dtype)
    fn, torch_fn = _decomposition_fns(name)
    results = _factorization_on_both_paths(lambda: fn(ember.tensor(a), ember.tensor(tau)))
    assert results[0] == results[1]
    want = torch_fn(torch.tensor(a), torch.tensor(tau)).numpy()
    np.testing.assert_allclose(fn(ember.tensor(a), ember.tensor(tau)).numpy(), want, rtol=1e-4, atol=1e-5)
    x, t = ember.tensor(a), ember.tensor(tau)
    _assert_the_compiled_function_takes(monkeypatch, lambda: fn(x, t), [(lapack, "orgqr")])


@pytest.mark.parametrize("case", ["requires_grad", "tau_requires_grad", "no_grad", "wide", "too_many_scales",
                                  "other_dtype", "batch", "float16", "int64", "vector", "empty", "out",
                                  "not_a_tensor", "large", "tau_not_a_tensor"])
def test_other_householder_product_cases_take_the_python_path(case):
    """Every other case: the Python path's result (its node too) or error (its type and message)."""
    a = np.random.default_rng(22).standard_normal((4, 3)).astype(np.float32)
    tau = np.array([1.2, 0.7], np.float32)
    fn = ember.linalg.householder_product
    cases = {"requires_grad": lambda: fn(ember.tensor(a, requires_grad=True), ember.tensor(tau)),
             "tau_requires_grad": lambda: fn(ember.tensor(a), ember.tensor(tau, requires_grad=True)),
             "no_grad": lambda: _no_grad(fn, ember.tensor(a, requires_grad=True), ember.tensor(tau)),
             "wide": lambda: fn(ember.tensor(a.T), ember.tensor(tau)),
             "too_many_scales": lambda: fn(ember.tensor(a), ember.tensor(np.ones(4, np.float32))),
             "other_dtype": lambda: fn(ember.tensor(a), ember.tensor(tau.astype(np.float64))),
             "batch": lambda: fn(ember.tensor(np.stack([a, a])), ember.tensor(np.stack([tau, tau, tau]))),
             "float16": lambda: fn(ember.tensor(a).half(), ember.tensor(tau).half()),
             "int64": lambda: fn(ember.tensor(a).long(), ember.tensor(tau).long()),
             "vector": lambda: fn(ember.tensor(a[0]), ember.tensor(tau)),
             "empty": lambda: fn(ember.zeros(0, 0), ember.zeros(0)),
             "out": lambda: fn(ember.tensor(a), ember.tensor(tau), out=ember.empty(4, 3)),
             "not_a_tensor": lambda: fn(a, ember.tensor(tau)),
             "large": lambda: fn(ember.ones(200, 100), ember.ones(10)),
             "tau_not_a_tensor": lambda: fn(ember.tensor(a), tau)}
    results = _factorization_on_both_paths(cases[case])
    assert results[0] == results[1]


# -- index_put -----------------------------------------------------------------------------------------

INDEX_PUT_CASES = [((3, 4), [2, 0], (4,)), ((3, 4), [1, 1, 1], (3, 4)), ((3, 4), [-1, 0, -3], (3, 1)),
                   ((5,), [4, 0, 4], ()), ((2, 3, 2), [1, 0], (3, 2)), ((3, 4), [], (4,)), ((4, 2), [3, 3, 0], (1, 2))]


def _index_put_operands(case, dtype):
    """The input, the int64 index and the values of ``INDEX_PUT_CASES[case]``, of ``dtype``."""
    shape, rows, values_shape = INDEX_PUT_CASES[case]
    rng = np.random.default_rng(23)
    return (rng.integers(0, 9, shape).astype(dtype), np.array(rows, dtype=np.int64),
            rng.integers(0, 9, values_shape).astype(dtype))


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("case", range(len(INDEX_PUT_CASES)))
def test_index_put_is_the_python_paths_and_torchs(monkeypatch, case, dtype, accumulate):
    """index_put of one int64 index tensor (repeated and negative indices, broadcast values), written or
    (floats) accumulated in C: the Python path's bits and torch's values (a repeated row written once by
    torch's rule is left out of the comparison); the Python path's step not reached."""
    from ember.ops import index as index_ops
    shape, rows, _ = INDEX_PUT_CASES[case]
    a, idx, values = _index_put_operands(case, dtype)

    def call():
        return ember.index_put(ember.tensor(a), (ember.tensor(idx),), ember.tensor(values), accumulate)
    results = _on_both_paths(call)
    assert results[0] == results[1]
    if accumulate and dtype not in ("float32", "float64"):
        return
    if accumulate or len(set(r % shape[0] for r in rows)) == len(rows):
        want = torch.index_put(torch.tensor(a), (torch.tensor(idx),), torch.tensor(values), accumulate)
        np.testing.assert_array_equal(call().numpy(), want.numpy())
    _assert_the_compiled_function_takes(monkeypatch, call, [(index_ops, "_index_put_key")])


@pytest.mark.parametrize("case", ["requires_grad", "values_requires_grad", "no_grad", "out_of_range", "int32_index",
                                  "two_indices", "bool_index", "other_dtype", "no_broadcast", "accumulate_int",
                                  "not_a_tuple", "zero_dims", "accumulate_not_bool", "method", "in_place"])
def test_other_index_put_cases_take_the_python_path(case):
    """Every other case: the Python path's result (its node too) or error (its type and message)."""
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = ember.tensor([2, 0])
    values = np.arange(4.0, dtype=np.float32)

    def call(x=None, indices=None, v=None, accumulate=False):
        return ember.index_put(ember.tensor(a) if x is None else x, (idx,) if indices is None else indices,
                               ember.tensor(values) if v is None else v, accumulate)
    cases = {"requires_grad": lambda: call(x=ember.tensor(a, requires_grad=True)),
             "values_requires_grad": lambda: call(v=ember.tensor(values, requires_grad=True)),
             "no_grad": lambda: _no_grad(lambda x: call(x=x), ember.tensor(a, requires_grad=True)),
             "out_of_range": lambda: call(indices=(ember.tensor([3]),)),
             "int32_index": lambda: call(indices=(ember.tensor([2, 0], dtype=ember.int32),)),
             "two_indices": lambda: call(indices=(idx, ember.tensor([1, 1])), v=ember.tensor([5.0, 6.0])),
             "bool_index": lambda: call(indices=(ember.tensor([True, False, True]),)),
             "other_dtype": lambda: call(v=ember.tensor(values.astype(np.float64))),
             "no_broadcast": lambda: call(v=ember.tensor(values[:3])),
             "accumulate_int": lambda: call(x=ember.tensor(a).long(), v=ember.tensor(values).long(), accumulate=True),
             "not_a_tuple": lambda: call(indices=idx),
             "zero_dims": lambda: call(x=ember.tensor(1.0), indices=(ember.tensor([0]),), v=ember.tensor(2.0)),
             "accumulate_not_bool": lambda: call(accumulate=1),
             "method": lambda: ember.tensor(a).index_put((idx,), ember.tensor(values)),
             "in_place": lambda: ember.tensor(a).index_put_((idx,), ember.tensor(values), True)}
    results = _factorization_on_both_paths(cases[case])
    assert results[0] == results[1]


def _values_on_both_paths(call):
    """``call()`` (a list of plain values) with the compiled functions, then on the Python paths."""
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            results.append(call())
    return results


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("case", range(len(INDEX_PUT_CASES)))
def test_index_put_in_place_is_the_python_paths(monkeypatch, case, dtype, accumulate):
    """index_put_ in C writes into the tensor itself: the Python path's bits, the tensor returned, its version
    counted once; the Python path's step not reached."""
    from ember.ops import index as index_ops
    a, idx, values = _index_put_operands(case, dtype)

    def call():
        x = ember.tensor(a)
        try:
            out = x.index_put_((ember.tensor(idx),), ember.tensor(values), accumulate)
        except (RuntimeError, IndexError) as error:
            return [(type(error), str(error))]
        return [out is x, x._version, x.numpy().tobytes()]
    results = _values_on_both_paths(call)
    assert results[0] == results[1]
    if dtype in ("float32", "float64") or not accumulate:
        assert results[0][:2] == [True, 1]
        _assert_the_compiled_function_takes(monkeypatch, call, [(index_ops, "_index_put_key")])


@pytest.mark.parametrize("case", ["transposed", "expanded", "leaf_requires_grad", "no_grad", "aliased_values",
                                  "view", "values_requires_grad"])
def test_other_index_put_in_place_cases_take_the_python_path(case):
    """index_put_ where its compiled function does not write (or writes into a view): the Python path's result,
    versions and error."""
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = ember.tensor([2, 0])

    def run():
        x = {"transposed": lambda: ember.tensor(a.T.copy()).t(), "expanded": lambda: ember.tensor(a[:1]).expand(3, 4),
             "leaf_requires_grad": lambda: ember.tensor(a, requires_grad=True)}.get(case, lambda: ember.tensor(a))()
        base = x
        if case == "view":
            x = base[1:]
        values = {"aliased_values": lambda: x[1], "values_requires_grad": lambda: ember.ones(4, requires_grad=True)}
        v = values.get(case, lambda: ember.ones(4))()
        try:
            if case == "no_grad":
                x.requires_grad_()
                with ember.no_grad():
                    x.index_put_((idx if case != "view" else ember.tensor([1, 0]),), v)
            else:
                x.index_put_((idx if case != "view" else ember.tensor([1, 0]),), v)
        except RuntimeError as error:
            return [(type(error), str(error))]
        return [x._version, base._version, base.detach().numpy().tobytes(), type(x.grad_fn).__name__]
    results = _values_on_both_paths(run)
    assert results[0] == results[1]


PUT_CASES = [((3, 4), [1, 6], None), ((3, 4), [[0, -1], [5, 11]], None), ((5,), [4, 0, 4], None),
             ((2, 3), [], None), ((3, 4), [2, 7, 2], "transposed_source"), ((2, 2, 3), [-12, 3], None)]


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("case", range(len(PUT_CASES)))
def test_put_is_the_python_paths_and_torchs(monkeypatch, case, dtype, accumulate):
    """put and put_ of an int64 index of any shape (negative and repeated positions) and a source with as many
    elements, written or (float32, float64, int64, int32) added in C: the Python path's bits, torch's values
    (where no position repeats), put_'s tensor returned with its version counted once; no Python step reached."""
    from ember.ops import index as index_ops
    shape, positions, layout = PUT_CASES[case]
    rng = np.random.default_rng(25)
    a = rng.integers(0, 9, shape).astype(dtype)
    idx = np.array(positions, dtype=np.int64)
    source = rng.integers(0, 9, idx.shape).astype(dtype)
    if layout == "transposed_source":
        source = np.asfortranarray(source.reshape(1, -1).T).T.reshape(-1)

    def put():
        return ember.put(ember.tensor(a), ember.tensor(idx), ember.tensor(source), accumulate)

    def put_():
        x = ember.tensor(a)
        try:
            out = x.put_(ember.tensor(idx), ember.tensor(source), accumulate)
        except (RuntimeError, IndexError) as error:
            return [(type(error), str(error))]
        return [out is x, x._version, x.numpy().tobytes()]
    results = _on_both_paths(put, (RuntimeError, IndexError))
    assert results[0] == results[1]
    assert _values_on_both_paths(put_)[0] == _values_on_both_paths(put_)[1]
    adds = dtype in ("float32", "float64", "int64", "int32")
    if accumulate and not adds:
        return
    flat = [p % a.size for p in idx.reshape(-1)]
    if accumulate or len(set(flat)) == len(flat):
        want = torch.tensor(a).put(torch.tensor(idx), torch.tensor(source), accumulate)
        np.testing.assert_array_equal(put().numpy(), want.numpy())
    assert put_()[:2] == [True, 1]
    _assert_the_compiled_function_takes(monkeypatch, lambda: (put(), put_()), [(index_ops, "_check_put")])


@pytest.mark.parametrize("case", ["out_of_range", "int32_index", "other_dtype", "fewer_source", "requires_grad",
                                  "source_requires_grad", "transposed_in_place", "expanded_in_place", "empty",
                                  "accumulate_uint8", "view_in_place"])
def test_other_put_cases_take_the_python_path(case):
    """Every other case of put and put_: the Python path's result, versions (and node) or error."""
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)

    def run():
        x = {"requires_grad": lambda: ember.tensor(a, requires_grad=True),
             "transposed_in_place": lambda: ember.tensor(a.T.copy()).t(),
             "expanded_in_place": lambda: ember.tensor(a[:1]).expand(3, 4),
             "empty": lambda: ember.empty(0),
             "accumulate_uint8": lambda: ember.tensor(a.astype(np.uint8)),
             "view_in_place": lambda: ember.tensor(a)[1:]}.get(case, lambda: ember.tensor(a))()
        index = {"out_of_range": ember.tensor([1, 12]), "int32_index": ember.tensor([1, 2], dtype=ember.int32)}
        idx = index.get(case, ember.tensor([1, 6]))
        source = {"other_dtype": ember.tensor([1.0, 2.0], dtype=ember.float64), "fewer_source": ember.tensor([1.0]),
                  "source_requires_grad": ember.tensor([1.0, 2.0], requires_grad=True),
                  "accumulate_uint8": ember.tensor([1, 2], dtype=ember.uint8)}.get(case, ember.tensor([1.0, 2.0]))
        accumulate = case == "accumulate_uint8"
        got = []
        for in_place in (False, True):
            try:
                target = x if in_place else x
                out = target.put_(idx, source, accumulate) if in_place else ember.put(target, idx, source, accumulate)
                got.append((out.detach().numpy().tobytes(), out._version, type(out.grad_fn).__name__))
            except (RuntimeError, IndexError) as error:
                got.append((type(error), str(error)))
        return got
    results = _values_on_both_paths(run)
    assert results[0] == results[1]


KRON_SHAPES = [(2, 3), (2, 2), (3,), (), (2, 1, 2), (1, 3, 2)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_kron_is_the_python_paths_and_torchs(monkeypatch, dtype):
    """kron of two tensors of one dtype (ranks padded, 0-d, transposed), each product written in C: the Python
    path's bits and torch's, as a function and as a method; an int64 product wraps around as NumPy's."""
    rng = np.random.default_rng(26)
    for first, second in itertools.product(KRON_SHAPES, repeat=2):
        a, b = ((rng.standard_normal(shape) * 5).astype(dtype) for shape in (first, second))
        for call in (lambda: ember.kron(ember.tensor(a), ember.tensor(b)),
                     lambda: ember.tensor(a).mT.mT.kron(ember.tensor(b.T).T) if a.ndim >= 2 and b.ndim
                     else ember.tensor(a).kron(ember.tensor(b))):
            results = _on_both_paths(call)
            assert results[0] == results[1]
            assert results[0][3] == torch.kron(torch.tensor(a), torch.tensor(b)).numpy().tobytes()
    if dtype == "int64":
        big = np.array([2 ** 62, 3])
        results = _on_both_paths(lambda: ember.kron(ember.tensor(big), ember.tensor(np.array([4, 5]))))
        assert results[0] == results[1]
    x, y = ember.tensor(np.ones((2, 3), dtype)), ember.tensor(np.ones((2, 2), dtype))
    from ember.ops import shape
    python_kernel = (np, "multiply") if dtype == "int64" else (shape, "_kron_of_matrices")   # (float matrices' loop)
    _assert_the_compiled_function_takes(monkeypatch, lambda: ember.kron(x, y), [python_kernel])


@pytest.mark.parametrize("case", ["requires_grad", "mixed_dtypes", "int32", "complex", "empty", "large", "out",
                                  "not_a_tensor"])
def test_other_kron_cases_take_the_python_path(case):
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    call = {"requires_grad": lambda: ember.kron(ember.tensor(a, requires_grad=True), ember.tensor(a)),
            "mixed_dtypes": lambda: ember.kron(ember.tensor(a), ember.tensor(a.astype(np.float64))),
            "int32": lambda: ember.kron(ember.tensor(a.astype(np.int32)), ember.tensor(a.astype(np.int32))),
            "complex": lambda: ember.kron(ember.tensor(a.astype(np.complex64)), ember.tensor(a.astype(np.complex64))),
            "empty": lambda: ember.kron(ember.tensor(a[:0]), ember.tensor(a)),
            "large": lambda: ember.kron(ember.ones(100, 100), ember.ones(2, 2)),
            "out": lambda: ember.kron(ember.tensor(a), ember.tensor(a), out=ember.empty(0)),
            "not_a_tensor": lambda: ember.kron(ember.tensor(a), a)}[case]
    results = _factorization_on_both_paths(call)
    assert results[0] == results[1]


# -- pdist ------------------------------------------------------------------------------------

def _pdist_rows(shape, dtype="float32"):
    return np.random.default_rng(8).standard_normal(shape).astype(dtype)


def test_pdist_takes_the_common_case(monkeypatch):
    from ember._backend import openmp_kernels
    x = ember.tensor(_pdist_rows((6, 3)))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.pdist(x), ember.nn.functional.pdist(x, 2.0)),
                                        [(openmp_kernels, "pdist_euclidean")])


@pytest.mark.parametrize("shape", [(2, 1), (5, 3), (7, 4), (9, 17), (30, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pdist_is_the_python_paths_and_torchs(shape, dtype):
    a = _pdist_rows(shape, dtype)
    a[1] = a[0]   # (a distance of 0)
    for p in (2, 2.0):
        results = _on_both_paths(lambda: ember.pdist(ember.tensor(a), p))
        assert results[0] == results[1]
        want = torch.pdist(torch.tensor(a), p).numpy()
        np.testing.assert_allclose(np.frombuffer(results[0][3], dtype), want, rtol=1e-5, atol=1e-6)


def test_pdist_nodes_and_gradients_are_the_python_paths():
    a = _pdist_rows((6, 3))
    a[2] = a[4]
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(a, requires_grad=True)
            out = ember.pdist(x)
            node = out.grad_fn
            saved = [t.detach().numpy().tobytes() for t in node.saved_tensors]
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32)))
            results.append((type(node).__name__, saved, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


_PDIST_CASES = {
    "p_1": lambda a: ember.pdist(a, 1),
    "p_fraction": lambda a: ember.pdist(a, 2.5),
    "p_huge_int": lambda a: ember.pdist(a, 2 ** 70),
    "p_negative": lambda a: ember.pdist(a, -2),
    "p_nan": lambda a: ember.pdist(a, math.nan),
    "one_row": lambda a: ember.pdist(a[:1]),
    "no_columns": lambda a: ember.pdist(a[:, :0]),
    "transposed": lambda a: ember.pdist(a.t()),
    "float16": lambda a: ember.pdist(a.half()),
    "int64": lambda a: ember.pdist(a.long()),
    "three_dims": lambda a: ember.pdist(a[None]),
    "large": lambda a: ember.pdist(ember.ones(200, 64)),
    "not_a_tensor": lambda a: ember.pdist(a.numpy()),
    "no_grad": lambda a: _no_grad(ember.pdist, a.requires_grad_()),
}


@pytest.mark.parametrize("case", sorted(_PDIST_CASES))
def test_other_pdist_cases_take_the_python_path(case):
    results = _on_both_paths(lambda: _PDIST_CASES[case](ember.tensor(_pdist_rows((5, 3)))),
                             (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]


# -- index_reduce -----------------------------------------------------------------------------

def _index_reduce_operands(dtype):
    rng = np.random.default_rng(9)
    if dtype.startswith("float"):
        x, src = rng.uniform(-2, 2, (5, 3)).astype(dtype), rng.uniform(-2, 2, (4, 3)).astype(dtype)
        x[0, 0], x[2, 1], src[1, 2], src[3, 0], src[0, 1], x[4, 2] = np.nan, -0.0, np.nan, 0.0, np.inf, -np.inf
    else:
        x, src = rng.integers(-4, 5, (5, 3)).astype(dtype), rng.integers(-4, 5, (4, 3)).astype(dtype)
    return x, np.array([0, 2, 0, 4]), src


def _index_reduce_warned():
    with warnings.catch_warnings():   # (torch's beta warning, once per process, by the Python op)
        warnings.simplefilter("ignore")
        ember.index_reduce(ember.ones(2), 0, ember.tensor([0]), ember.ones(1), "prod")


def test_index_reduce_takes_the_common_case(monkeypatch):
    from ember.ops import index
    _index_reduce_warned()
    x, i, s = (ember.tensor(v) for v in _index_reduce_operands("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.index_reduce(x, 0, i, s, "mean"),
                                                              x.index_reduce(0, i, s, "amax", include_self=False),
                                                              x.clone().index_reduce_(0, i, s, "prod")),
                                        [(index, "_slices_reduced_at")])   # (float slices: ufunc.at)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_is_the_python_paths_and_torchs(dtype, reduce, include_self):
    _index_reduce_warned()
    x, i, s = _index_reduce_operands(dtype)
    for dim, xs, idx, src in ((0, x, i, s), (1, x.T.copy(), i[:3] % 3, s.T[:, :3].copy()),
                              (-1, x[None], i[1:] % 3, s[None, 1:].transpose(0, 2, 1).copy())):
        if dim == -1:
            xs = xs.transpose(0, 2, 1).copy()
        def call(lib):
            return lib.index_reduce(lib.tensor(xs), dim, lib.tensor(idx), lib.tensor(src), reduce,
                                    include_self=include_self)
        results = _on_both_paths(lambda: call(ember), (RuntimeError,))
        assert results[0] == results[1]
        if isinstance(results[0][0], type):   # (an integer mean: torch's error, on the Python path)
            assert reduce == "mean" and dtype.startswith("int")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = call(torch).numpy()
        got = np.frombuffer(results[0][3], dtype=want.dtype).reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


_INDEX_REDUCE_CASES = {
    "sum": lambda x, i, s: ember.index_reduce(x, 0, i, s, "sum"),
    "int32_index": lambda x, i, s: ember.index_reduce(x, 0, i.int(), s, "prod"),
    "out_of_range": lambda x, i, s: ember.index_reduce(x, 0, i + 3, s, "amax"),
    "negative_index": lambda x, i, s: ember.index_reduce(x, 0, i - 1, s, "amin"),
    "mixed": lambda x, i, s: ember.index_reduce(x, 0, i, s.double(), "mean"),
    "float16": lambda x, i, s: ember.index_reduce(x.half(), 0, i, s.half(), "prod"),
    "int_mean": lambda x, i, s: ember.index_reduce(x.long(), 0, i, s.long(), "mean"),
    "wrong_source": lambda x, i, s: ember.index_reduce(x, 0, i, s[:, :2], "prod"),
    "int_include_self": lambda x, i, s: ember.index_reduce(x, 0, i, s, "prod", include_self=1),
    "zero_dims": lambda x, i, s: ember.index_reduce(x[0, 0], 0, i[:1], s[0, 0], "prod"),
    "grad": lambda x, i, s: ember.index_reduce(x, 0, i, s.requires_grad_(), "mean"),
    "out": lambda x, i, s: ember.index_reduce(x, 0, i, s, "prod", out=ember.empty(0)),
}


@pytest.mark.parametrize("case", sorted(_INDEX_REDUCE_CASES))
def test_other_index_reduce_cases_take_the_python_path(case):
    _index_reduce_warned()
    x, i, s = _index_reduce_operands("float32")
    results = _on_both_paths(lambda: _INDEX_REDUCE_CASES[case](ember.tensor(x), ember.tensor(i), ember.tensor(s)),
                             (RuntimeError, TypeError, IndexError))
    assert results[0] == results[1]


# -- float ops of integer tensors; ops on loops of two shapes ------------------------------------

FLOAT_OPS_OF_TWO = ["xlogy", "xlog1py", "atan2", "copysign"]   # (their Python ops take float_arrays' operands)
LOOP_OPS_OF_TWO = ["xlogy", "xlog1py", "floor_divide", "remainder", "_python_div_floor", "_python_div_trunc"]


def _two_operands(dtypes, shapes):
    rng = np.random.default_rng(11)
    out = []
    for dtype, shape in zip(dtypes, shapes):
        if dtype == "bool":
            out.append(rng.integers(0, 2, shape).astype(bool))
        elif dtype.startswith(("int", "uint")):
            out.append(rng.integers(0 if dtype.startswith("u") else -6, 7, shape).astype(dtype))
        else:
            values = rng.uniform(-4, 4, shape).astype(dtype)
            values.reshape(-1)[:2] = [0.0, np.nan][:values.size]
            out.append(values)
    return out


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3))], ids=str)
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int32", "float32"), ("float64", "int16"), ("bool", "bool"),
                                    ("uint8", "float32"), ("int8", "uint8")], ids="-".join)
@pytest.mark.parametrize("name", FLOAT_OPS_OF_TWO)
def test_float_ops_of_integers_are_the_python_paths_and_torchs(name, dtypes, shapes):
    fn, torch_fn = BINARY_OPS[name][:2]
    a, b = _two_operands(dtypes, shapes)
    results = _on_both_paths(lambda: fn(ember.tensor(a), ember.tensor(b)))
    assert results[0] == results[1]
    want = torch_fn(torch.tensor(a), torch.tensor(b))
    assert results[0][0] == getattr(ember, str(want.dtype).removeprefix("torch."))
    got = np.frombuffer(results[0][3], want.numpy().dtype).reshape(want.shape)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 4), (1, 4)), ((2, 3, 4), (3, 4)), ((2, 3, 4), (1, 1, 4)),
                                    ((4,), (3, 4)), ((3, 1), (1, 4)), ((3, 4), (3, 1)), ((2, 1, 4), (3, 1)),
                                    ((3, 4), ()), ((3, 4), (1,)), ((), (5,))], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", LOOP_OPS_OF_TWO)
def test_loop_ops_of_two_shapes_are_the_python_paths_and_torchs(name, dtype, shapes):
    fn, torch_fn = BINARY_OPS[name][:2]
    a, b = _two_operands((dtype, dtype), shapes)
    if name != "xlogy" and name != "xlog1py":
        b[b == 0] = 0.5   # (no division by zero: NumPy's warning is the Python path's alone)
    else:
        b = np.abs(b)
    results = _on_both_paths(lambda: fn(ember.tensor(a), ember.tensor(b)))
    assert results[0] == results[1]
    want = torch_fn(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype).reshape(want.shape), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["xlogy", "atan2", "remainder"])
def test_two_shapes_nodes_and_gradients_are_the_python_paths(name):
    fn = BINARY_OPS[name][0]
    a, b = _two_operands(("float32", "float32"), ((3, 4), (4,)))
    b = np.abs(b) + 0.5
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, y = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
            out = fn(x, y)
            node = out.grad_fn
            fields = [getattr(node, field, None)
                      for field in ("self_shape", "self_dtype", "other_shape", "other_dtype")]
            fields += [t.detach().numpy().tobytes() for t in node.saved_tensors]
            out.backward(ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
            results.append((type(node).__name__, fields, x.grad.numpy().tobytes(), y.grad.numpy().tobytes()))
    assert results[0] == results[1]


def test_float_ops_of_integers_take_the_common_case(monkeypatch):
    from ember.ops import pointwise
    a, b = (ember.tensor(v) for v in _two_operands(("int64", "int32"), ((3, 4), (4,))))
    x = ember.tensor(np.linspace(0.5, 2, 3, dtype=np.float32).reshape(3, 1))
    row = ember.tensor(np.linspace(0.5, 2, 4, dtype=np.float32))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.xlogy(a, b), ember.atan2(a, x), ember.xlogy(a, row),
                                                              ember.remainder(x * row, row)),
                                        [(pointwise, "_binary")])


_TWO_OPERAND_CASES = {
    "float32_and_float64": lambda a, b: ember.xlogy(a.float(), b.double()),
    "not_broadcasting": lambda a, b: ember.xlogy(a.float(), b[:3].float()),
    "not_broadcasting_ints": lambda a, b: ember.atan2(a, b[:3]),
    "complex": lambda a, b: ember.xlogy(a.to(ember.complex64), b),
    "float16": lambda a, b: ember.xlogy(a.half(), b),
    "integer_remainder_broadcast": lambda a, b: ember.remainder(a, b.abs() + 1),
    "integer_remainder_by_zero": lambda a, b: ember.remainder(a, b * 0),
    "integer_maximum_mixed": lambda a, b: ember.maximum(a, b.int()),
    "hypot_of_integers": lambda a, b: ember.hypot(a, b),
    "xlogy_number": lambda a, b: ember.xlogy(a, 2.0),
    "out": lambda a, b: ember.xlogy(a, b, out=ember.empty(0)),
    "float16_default": lambda a, b: _with_default_float16(lambda: ember.xlogy(a, b)),
}


@pytest.mark.parametrize("case", sorted(_TWO_OPERAND_CASES))
def test_other_two_operand_cases_take_the_python_path(case):
    a, b = _two_operands(("int64", "int64"), ((3, 4), (4,)))
    results = _on_both_paths(lambda: _TWO_OPERAND_CASES[case](ember.tensor(a), ember.tensor(b)),
                             (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]


# -- Vandermonde matrices ---------------------------------------------------------------------

def _vander_values(dtype, shape=(2, 4)):
    values = np.array([1.5, -2, 3, 0, 0.5, 7, -1, 2.25]).reshape(shape)
    return values.astype(dtype) if dtype.startswith("float") else (values * 3).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "int8"])
def test_vandermonde_matrices_are_the_python_paths_and_torchs(dtype):
    """Each power the one before times the element, in the dtype (integers in int64, wrapping), as the
    composites' cumprod (and the Python path's powers_array) run them."""
    x = _vander_values(dtype)
    calls = [(lambda lib, N=N: lib.linalg.vander(lib.tensor(x), N=N)) for N in (None, 2, 7, 40)]
    calls += [(lambda lib, N=N, inc=inc: lib.vander(lib.tensor(x[1]), N=N, increasing=inc))
              for N in (None, 1, 3, 40) for inc in (True, False)]
    calls += [lambda lib: lib.linalg.vander(lib.tensor(x[0, 0]), N=3)]   # (a 0-d x: one value)
    for call in calls:
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1]
        want = call(torch).numpy()
        got = np.frombuffer(results[0][3], want.dtype).reshape(want.shape)
        if dtype.startswith("float"):
            np.testing.assert_allclose(got, want, rtol=1e-6)
        else:
            assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_large_vandermonde_matrices_are_the_python_paths_and_torchs(monkeypatch, dtype):
    """Rows in blocks of eight and the rows after them, matrices past the small arrays' size."""
    x = (np.linspace(-1.1, 1.1, 301) if dtype.startswith("float") else np.arange(-150, 151)).astype(dtype)
    from ember.ops import matrix_functions
    t = ember.tensor(x)
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.vander(t), ember.linalg.vander(t[:21], N=40)),
                                        [(matrix_functions, "powers_array")])
    for call in (lambda lib: lib.vander(lib.tensor(x)), lambda lib: lib.linalg.vander(lib.tensor(x[:21]), N=40),
                 lambda lib: lib.vander(lib.tensor(x[:21]), N=40, increasing=True)):
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1]
        want = call(torch).numpy()
        got = np.frombuffer(results[0][3], want.dtype).reshape(want.shape)
        if dtype.startswith("float"):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-30)
        else:
            assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vandermonde_matrices_of_tensors_that_require_grad_are_the_composites(dtype):
    x = _vander_values(dtype)
    for call in (lambda t: ember.linalg.vander(t, N=5), lambda t: ember.vander(t[0], increasing=False)):
        untracked = call(ember.tensor(x))
        tracked = call(ember.tensor(x, requires_grad=True))
        assert tracked.grad_fn is not None and tracked.detach().numpy().tobytes() == untracked.numpy().tobytes()


def test_vandermonde_matrices_take_the_common_case(monkeypatch):
    from ember.ops import matrix_functions
    x = ember.tensor(_vander_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.linalg.vander(x), ember.vander(x[0], N=3)),
                                        [(matrix_functions, "powers_array")])


_VANDER_CASES = {
    "linalg_N_1": lambda x: ember.linalg.vander(x, N=1),
    "linalg_float16": lambda x: ember.linalg.vander(x.half()),
    "linalg_bool": lambda x: ember.linalg.vander(x > 0),
    "linalg_complex": lambda x: ember.linalg.vander(x.to(ember.complex64)),
    "linalg_transposed": lambda x: ember.linalg.vander(x.t()),
    "linalg_float_N": lambda x: ember.linalg.vander(x, N=3.0),
    "linalg_huge_N": lambda x: ember.linalg.vander(x, N=2 ** 70),
    "linalg_grad": lambda x: ember.linalg.vander(x.requires_grad_()),
    "vander_two_dims": lambda x: ember.vander(x),
    "vander_N_0": lambda x: ember.vander(x[0], N=0),
    "vander_negative_N": lambda x: ember.vander(x[0], N=-1),
    "vander_int_increasing": lambda x: ember.vander(x[0], increasing=1),
    "vander_float16": lambda x: ember.vander(x[0].half()),
    "vander_large": lambda x: ember.vander(ember.ones(20000), N=2),   # (x past the small arrays)
    "not_a_tensor": lambda x: ember.vander(x[0].numpy()),
}


@pytest.mark.parametrize("case", sorted(_VANDER_CASES))
def test_other_vandermonde_cases_take_the_python_path(case):
    results = _on_both_paths(lambda: _VANDER_CASES[case](ember.tensor(_vander_values("float32"))),
                             (RuntimeError, TypeError, NotImplementedError, OverflowError, ValueError))
    assert results[0] == results[1]


# -- isin -----------------------------------------------------------------------------------------

def _isin_operands(dtype):
    if dtype.startswith("float"):
        a = np.array([[1.5, np.nan, -0.0, 2.0], [7.0, 0.25, np.inf, -3.0]], dtype)
        b = np.array([0.0, np.nan, 2.0, np.inf, 9.0], dtype)
    else:
        info = np.iinfo(dtype)
        a = np.array([[1, info.max, 0, 2], [7, info.min, 3, 5]], dtype)
        b = np.array([0, info.min, 2, 9, 3], dtype)
    return a, b


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_is_the_python_paths_and_torchs(dtype, invert):
    a, b = _isin_operands(dtype)
    for x, y in ((a, b), (a[0], b[:1]), (b, a), (a[0, 0], b)):
        results = _on_both_paths(lambda: ember.isin(ember.tensor(x), ember.tensor(y), invert=invert))
        assert results[0] == results[1]
        want = torch.isin(torch.tensor(x), torch.tensor(y), invert=invert).numpy()
        assert np.frombuffer(results[0][3], bool).reshape(want.shape).tolist() == want.tolist()


def test_isin_takes_the_common_case(monkeypatch):
    a, b = (ember.tensor(v) for v in _isin_operands("int64"))
    from ember.ops import statistics
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.isin(a, b), ember.isin(b, a, invert=True)),
                                        [(statistics, "make")])


_ISIN_CASES = {
    "bool": lambda a, b: ember.isin(a > 0, b > 0),
    "mixed_dtypes": lambda a, b: ember.isin(a, b.double()),
    "number": lambda a, b: ember.isin(a, 2.0),
    "number_first": lambda a, b: ember.isin(2.0, b),
    "assume_unique": lambda a, b: ember.isin(a, b, assume_unique=True),
    "empty": lambda a, b: ember.isin(a[:0], b),
    "empty_test": lambda a, b: ember.isin(a, b[:0]),
    "transposed": lambda a, b: ember.isin(a.t(), b),
    "float16": lambda a, b: ember.isin(a.half(), b.half()),
    "many_pairs": lambda a, b: ember.isin(ember.arange(300.0), ember.arange(0.0, 600.0, 2.5)),
    "int_invert": lambda a, b: ember.isin(a, b, invert=1),
    "not_a_tensor": lambda a, b: ember.isin(a.numpy(), b),
}


@pytest.mark.parametrize("case", sorted(_ISIN_CASES))
def test_other_isin_cases_take_the_python_path(case):
    a, b = _isin_operands("float32")
    results = _on_both_paths(lambda: _ISIN_CASES[case](ember.tensor(a), ember.tensor(b)), (RuntimeError, TypeError))
    assert results[0] == results[1]


# -- round ----------------------------------------------------------------------------------------

def _round_values(dtype):
    values = np.array([[0.5, 1.5, 2.5, -0.5, -1.25, 0.125], [123.456, -98.765, 1e-3, 7.0, np.nan, np.inf]])
    return (values * np.array([[1.0], [3.0]])).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("decimals", [0, 1, 2, 3, -1, -2, 7, 30, 39, 300, -300, 400])
def test_round_is_the_python_paths_and_torchs(dtype, decimals):
    """Each element scaled, rounded halves to even and scaled back, each step in the dtype; where a step
    overflows or is invalid (a scale beyond the dtype), the Python path's NumPy passes (and warning)."""
    x = _round_values(dtype)
    results = _on_both_paths(lambda: ember.round(ember.tensor(x), decimals=decimals), (RuntimeError, OverflowError))
    assert results[0] == results[1]
    if abs(decimals) <= 30 and not isinstance(results[0][0], type):
        want = torch.round(torch.tensor(x), decimals=decimals).numpy()
        np.testing.assert_array_equal(np.frombuffer(results[0][3], dtype).reshape(want.shape), want)


def test_round_takes_the_common_case(monkeypatch):
    from ember.ops import unary
    x = ember.tensor(_round_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.round(x), x.round(decimals=2),
                                                              ember.round(x, decimals=-1)),
                                        [(unary, "_round_forward")])


_ROUND_CASES = {
    "grad": lambda x: ember.round(x.requires_grad_(), decimals=1),
    "grad_no_decimals": lambda x: ember.round(x.requires_grad_()),
    "no_grad": lambda x: _no_grad(lambda t: ember.round(t, decimals=1), x.requires_grad_()),
    "int64": lambda x: ember.round(ember.tensor([1, 2, 3])),
    "int64_decimals": lambda x: ember.round(ember.tensor([1, 2, 3]), decimals=1),
    "bool": lambda x: ember.round(x > 0),
    "float16": lambda x: ember.round(x.half(), decimals=1),
    "bool_decimals": lambda x: ember.round(x, decimals=True),
    "float_decimals": lambda x: ember.round(x, decimals=1.0),
    "huge_decimals": lambda x: ember.round(x, decimals=2 ** 70),
    "transposed": lambda x: ember.round(x.t(), decimals=1),
    "out": lambda x: ember.round(x, decimals=1, out=ember.empty(0)),
    "not_a_tensor": lambda x: ember.round(x.numpy(), decimals=1),
}


@pytest.mark.parametrize("case", sorted(_ROUND_CASES))
def test_other_round_cases_take_the_python_path(case):
    results = _on_both_paths(lambda: _ROUND_CASES[case](ember.tensor(_round_values("float32"))),
                             (RuntimeError, TypeError, NotImplementedError, OverflowError))
    assert results[0] == results[1]


# -- prelu ----------------------------------------------------------------------------------------

def _prelu_operands(shape=(2, 3, 4), channels=3):
    rng = np.random.default_rng(12)
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    x.reshape(-1)[:3] = [0.0, -0.0, np.nan]
    return x, rng.uniform(0.05, 0.5, channels).astype(np.float32)


@pytest.mark.parametrize("shape, channels", [((2, 3, 4), 3), ((2, 3, 4), 1), ((5, 3), 3), ((2, 3, 2, 2), 3), ((7,), 1),
                                             ((2, 1, 4), 1)])
def test_prelu_is_the_python_paths_and_torchs(shape, channels):
    x, w = _prelu_operands(shape, channels)
    for call in (lambda lib: lib.nn.functional.prelu(lib.tensor(x), lib.tensor(w)),
                 lambda lib: lib.tensor(x).prelu(lib.tensor(w)),
                 lambda lib: lib.nn.functional.prelu(lib.tensor(x), lib.tensor(w[0]))):
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1]
        want = call(torch).detach().numpy()
        np.testing.assert_array_equal(np.frombuffer(results[0][3], np.float32).reshape(want.shape), want)


def test_prelu_takes_the_common_case(monkeypatch):
    from ember.nn.functional import activation
    x, w = (ember.tensor(v) for v in _prelu_operands())
    _assert_the_compiled_function_takes(monkeypatch, lambda: (x.prelu(w), ember.nn.functional.prelu(x, w[:1])),
                                        [(activation, "record")])


_PRELU_CASES = {
    "grad": lambda x, w: x.requires_grad_().prelu(w),
    "weight_grad": lambda x, w: x.prelu(w.requires_grad_()),
    "no_grad": lambda x, w: _no_grad(lambda t: t.prelu(w), x.requires_grad_()),
    "float64": lambda x, w: x.double().prelu(w.double()),
    "mixed": lambda x, w: x.prelu(w.double()),
    "wrong_channels": lambda x, w: x.prelu(w[:2]),
    "two_dim_weight": lambda x, w: x.prelu(w[None]),
    "zero_dims": lambda x, w: x[0, 0, 0].prelu(w[:1]),
    "transposed": lambda x, w: x.transpose(0, 2).prelu(w[:1]),
    "int": lambda x, w: x.long().prelu(w.long()),
    "bfloat16": lambda x, w: x.bfloat16().prelu(w.bfloat16()),
    "autocast": lambda x, w: _under_autocast(lambda: x.prelu(w)),
}


def _under_autocast(call):
    with ember.autocast("cpu", dtype=ember.bfloat16):
        return call()


@pytest.mark.parametrize("case", sorted(_PRELU_CASES))
def test_other_prelu_cases_take_the_python_path(case):
    x, w = _prelu_operands()
    results = _on_both_paths(lambda: _PRELU_CASES[case](ember.tensor(x), ember.tensor(w)),
                             (RuntimeError, TypeError, NotImplementedError))
    assert results[0] == results[1]


# -- histc ----------------------------------------------------------------------------------------

def _histc_values(dtype):
    values = np.linspace(-1.5, 2.5, 17)
    values[:4] = [0.0, 1.0, -1.0, 0.1]
    return values.reshape(1, 17).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("args", [(), (4, -1, 1), (7,), (3, 0.5, 0.5), (10, -0.3, 2), (5, 0, 1), (1, -2, 3), (1000,),
                                  (6, 0.1, 1.3), (3, -1, 1.0000001)], ids=str)
def test_histc_is_the_python_paths_and_torchs(dtype, args):
    x = _histc_values(dtype)
    for values in (x, np.where(np.arange(17) % 5 == 0, np.nan, x).astype(dtype), np.full((2, 2), 0.75, dtype),
                   np.array([np.inf, -np.inf, 0.5], dtype)):
        results = _on_both_paths(lambda: ember.histc(ember.tensor(values), *args))
        assert results[0] == results[1]
        if isinstance(results[0][0], type):   # (the data's bounds NaN or infinite: the Python op's error, torch's)
            with pytest.raises(RuntimeError):
                torch.histc(torch.tensor(values), *args)
            continue
        want = torch.histc(torch.tensor(values), *args).numpy()
        assert np.frombuffer(results[0][3], dtype).tolist() == want.tolist()


def test_histc_takes_the_common_case(monkeypatch):
    x = ember.tensor(_histc_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.histc(x), x.histc(4, -1, 1)),
                                        [(np, "bincount")])


_HISTC_CASES = {
    "int": lambda x: ember.histc(x.long()),
    "no_bins": lambda x: ember.histc(x, 0),
    "negative_bins": lambda x: ember.histc(x, -3),
    "float_bins": lambda x: ember.histc(x, 4.0),
    "huge_bins": lambda x: ember.histc(x, 2 ** 70),
    "many_bins": lambda x: ember.histc(x, 100000),
    "infinite_range": lambda x: ember.histc(x, 4, -math.inf, 1),
    "reversed_range": lambda x: ember.histc(x, 4, 2, 1),
    "nan_data": lambda x: ember.histc(x * math.nan),
    "nan_bound": lambda x: ember.histc(x, 4, math.nan, 1),
    "bool_bound": lambda x: ember.histc(x, 4, False, True),
    "tensor_bound": lambda x: ember.histc(x, 4, ember.tensor(0.0), 1),
    "float16": lambda x: ember.histc(x.half()),
    "bfloat16": lambda x: ember.histc(x.bfloat16(), 4, -1, 1),
    "transposed": lambda x: ember.histc(x.t().contiguous().t()),
    "empty": lambda x: ember.histc(x[:, :0]),
    "empty_range": lambda x: ember.histc(x[:, :0], 3, 1, 2),
    "grad": lambda x: ember.histc(x.requires_grad_()),
}


@pytest.mark.parametrize("case", sorted(_HISTC_CASES))
def test_other_histc_cases_take_the_python_path(case):
    x = np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4)
    results = _on_both_paths(lambda: _HISTC_CASES[case](ember.tensor(x)), (RuntimeError, TypeError, NotImplementedError,
                                                                            OverflowError, ValueError))
    assert results[0] == results[1]


# -- diag and diag_embed --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64", "uint8", "complex128",
                                   "float16"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4)], ids=str)
def test_diagonals_are_the_python_paths_and_torchs(shape, dtype):
    x = (np.arange(math.prod(shape)).reshape(shape) % 5).astype(dtype)
    calls = [(lambda lib, o=o, d=d: lib.diag_embed(lib.tensor(x), o, *d)) for o in (0, 1, -2, 7)
             for d in ((-2, -1), (0, 1), (1, 0), (0, 2), (-1, 0)) if max(d) < len(shape) + 1]
    if len(shape) == 3:   # (a transposed input)
        calls += [lambda lib: lib.diag_embed(lib.tensor(x).transpose(0, 2), 1, 0, 2)]
    if len(shape) <= 2:
        calls += [(lambda lib, o=o: lib.diag(lib.tensor(x), o)) for o in (0, 1, -1, 3, -5)]
        calls += [lambda lib: lib.tensor(x).diag(1)]
    for call in calls:
        results = _on_both_paths(lambda: call(ember))
        assert results[0] == results[1]
        want = call(torch).numpy()
        assert np.frombuffer(results[0][3], want.dtype).reshape(want.shape).tolist() == want.tolist()


@pytest.mark.parametrize("name", ["diag_embed", "diag"])
def test_diagonals_nodes_and_gradients_are_the_python_paths(name):
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape((2, 3) if name == "diag_embed" else (6,)),
                             requires_grad=True)
            out = ember.diag_embed(x, -1, 0, 2) if name == "diag_embed" else ember.diag(x, 2)
            node = out.grad_fn
            out.backward(ember.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
            results.append((type(node).__name__, node.offset, node.dim1, node.dim2, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


def test_diagonals_take_the_common_case(monkeypatch):
    from ember.ops import view
    x = ember.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.diag_embed(x), ember.diag(x[0]), x.diag_embed(1),
                                                              ember.diag(x, 1), x.diag()),
                                        [(view, "_diagonal_data"), (ember.Tensor, "diagonal")])


_DIAGONAL_CASES = {
    "same_dims": lambda x: ember.diag_embed(x, 0, 1, 1),
    "dim_out_of_range": lambda x: ember.diag_embed(x, 0, 0, 3),
    "float_offset": lambda x: ember.diag_embed(x, 1.0),
    "huge_offset": lambda x: ember.diag_embed(x, 2 ** 70),
    "zero_dims": lambda x: ember.diag_embed(x[0, 0]),
    "diag_three_dims": lambda x: ember.diag(x[None]),
    "diag_zero_dims": lambda x: ember.diag(x[0, 0]),
    "diag_float": lambda x: ember.diag(x, 1.0),
    "diag_matrix_grad": lambda x: ember.diag(x.requires_grad_()),
    "diag_out": lambda x: ember.diag(x, out=ember.empty(0)),
    "transposed": lambda x: ember.diag(x.t(), 1),
    "empty_diagonal": lambda x: ember.diag(x, 9),
    "not_a_tensor": lambda x: ember.diag(x.numpy()),
}


@pytest.mark.parametrize("case", sorted(_DIAGONAL_CASES))
def test_other_diagonal_cases_take_the_python_path(case):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    results = _on_both_paths(lambda: _DIAGONAL_CASES[case](ember.tensor(x)), (RuntimeError, TypeError, IndexError,
                                                                               OverflowError, ValueError))
    assert results[0] == results[1]


# -- logcumsumexp ---------------------------------------------------------------------------------

def _logcumsumexp_values(dtype, shape=(3, 4, 5)):
    rng = np.random.default_rng(13)
    x = (rng.standard_normal(shape) * rng.choice([0.1, 1, 30], shape)).astype(dtype)
    x.reshape(-1)[:6] = [np.inf, -np.inf, np.nan, 0.0, -np.inf, 88.0]
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_logcumsumexp_is_the_python_paths_and_torchs(dtype, dim):
    """Each step NumPy's logaddexp (its formula, the C library's exp and log1p), as the Python op's
    accumulation takes it: the same bits, infinities and NaN included."""
    for x in (_logcumsumexp_values(dtype), _logcumsumexp_values(dtype)[1:2, 1:2, 1:2]):
        results = _on_both_paths(lambda: ember.logcumsumexp(ember.tensor(x), dim))
        assert results[0] == results[1]
        want = torch.logcumsumexp(torch.tensor(x), dim).numpy()
        np.testing.assert_allclose(np.frombuffer(results[0][3], dtype).reshape(want.shape), want, rtol=1e-5, atol=1e-5)


def test_logcumsumexp_nodes_and_gradients_are_the_python_paths():
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
            out = ember.logcumsumexp(x, 1)
            node = out.grad_fn
            saved = [t.detach().numpy().tobytes() for t in node.saved_tensors]
            out.backward(ember.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
            results.append((type(node).__name__, node.dim, saved, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


def test_logcumsumexp_takes_the_common_case(monkeypatch):
    from ember.ops import sort
    x = ember.tensor(_logcumsumexp_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.logcumsumexp(x, 1), x.logcumsumexp(0)),
                                        [(sort, "accumulate")])


_LOGCUMSUMEXP_CASES = {
    "int": lambda x: ember.logcumsumexp(x.long(), 0),
    "complex": lambda x: ember.logcumsumexp(x.to(ember.complex64), 0),
    "float16": lambda x: ember.logcumsumexp(x.half(), 0),
    "zero_dims": lambda x: ember.logcumsumexp(x[0, 0, 0], 0),
    "transposed": lambda x: ember.logcumsumexp(x.transpose(0, 2), 1),
    "dim_out_of_range": lambda x: ember.logcumsumexp(x, 3),
    "float_dim": lambda x: ember.logcumsumexp(x, 1.0),
    "empty": lambda x: ember.logcumsumexp(x[:0], 0),
    "out": lambda x: ember.logcumsumexp(x, 0, out=ember.empty(0)),
    "no_grad": lambda x: _no_grad(lambda t: ember.logcumsumexp(t, 1), x.requires_grad_()),
}


@pytest.mark.parametrize("case", sorted(_LOGCUMSUMEXP_CASES))
def test_other_logcumsumexp_cases_take_the_python_path(case):
    results = _on_both_paths(lambda: _LOGCUMSUMEXP_CASES[case](ember.tensor(_logcumsumexp_values("float32"))),
                             (RuntimeError, TypeError, IndexError, NotImplementedError))
    assert results[0] == results[1]


# -- _dirichlet_grad ------------------------------------------------------------------------------

def _dirichlet_operands(dtype):
    rng = np.random.default_rng(14)
    x = rng.uniform(0.001, 0.999, (4, 5)).astype(dtype)
    alpha = rng.uniform(0.1, 30.0, (4, 5)).astype(dtype)
    return x, alpha, (alpha + rng.uniform(0.1, 30.0, (4, 5))).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_grad_is_the_python_paths_and_torchs(dtype):
    x, alpha, total = _dirichlet_operands(dtype)
    results = _on_both_paths(lambda: ember._dirichlet_grad(ember.tensor(x), ember.tensor(alpha), ember.tensor(total)))
    assert results[0] == results[1]
    want = torch._dirichlet_grad(torch.tensor(x), torch.tensor(alpha), torch.tensor(total)).numpy()
    np.testing.assert_allclose(np.frombuffer(results[0][3], dtype).reshape(4, 5), want, rtol=1e-4, atol=1e-6)


def test_dirichlet_grad_takes_the_common_case(monkeypatch):
    from ember._backend import gamma_gradients
    x, alpha, total = (ember.tensor(v) for v in _dirichlet_operands("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: ember._dirichlet_grad(x, alpha, total),
                                        [(gamma_gradients, "dirichlet_grad")])


_DIRICHLET_CASES = {
    "grad": lambda x, a, t: ember._dirichlet_grad(x.requires_grad_(), a, t),
    "mixed": lambda x, a, t: ember._dirichlet_grad(x, a.double(), t),
    "int": lambda x, a, t: ember._dirichlet_grad(x.long(), a.long(), t.long()),
    "float16": lambda x, a, t: ember._dirichlet_grad(x.half(), a.half(), t.half()),
    "broadcast": lambda x, a, t: ember._dirichlet_grad(x, a[:1], t),
    "transposed": lambda x, a, t: ember._dirichlet_grad(x.t(), a.t(), t.t()),
    "not_a_tensor": lambda x, a, t: ember._dirichlet_grad(x, a.numpy(), t),
}


@pytest.mark.parametrize("case", sorted(_DIRICHLET_CASES))
def test_other_dirichlet_grad_cases_take_the_python_path(case):
    results = _on_both_paths(lambda: _DIRICHLET_CASES[case](*(ember.tensor(v) for v in _dirichlet_operands("float32"))),
                             (RuntimeError, TypeError, NotImplementedError, AttributeError))
    assert results[0] == results[1]


# -- histogram ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bins", [1, 3, 5, 30])
def test_histogram_is_the_python_paths_and_torchs(dtype, bins):
    rng = np.random.default_rng(15)
    for values in (rng.standard_normal(20), rng.standard_normal((4, 5)) * 100, np.full(3, 2.5),
                   np.array([1.0, 2.0, 2.0, 3.0, 1e-30]), np.array([-1.0, 0.0, 1.0]), np.array([0.25, np.nan])):
        x = values.astype(dtype)
        results = []
        for python in (False, True):
            with python_paths() if python else contextlib.nullcontext():
                try:
                    hist, edges = ember.histogram(ember.tensor(x), bins)
                    results.append((hist.dtype, hist.numpy().tobytes(), edges.numpy().tobytes()))
                except RuntimeError as error:
                    results.append(str(error))
        assert results[0] == results[1]
        if isinstance(results[0], str):
            with pytest.raises(RuntimeError):
                torch.histogram(torch.tensor(x), bins)
            continue
        want_hist, want_edges = torch.histogram(torch.tensor(x), bins)
        assert results[0][1] == want_hist.numpy().tobytes() and results[0][2] == want_edges.numpy().tobytes()


def test_histogram_takes_the_common_case(monkeypatch):
    from ember.ops import statistics
    x = ember.tensor(np.linspace(-1, 2, 20, dtype=np.float32))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.histogram(x, 5), x.histogram(3)),
                                        [(statistics, "_histogramdd_data")])


_HISTOGRAM_CASES = {
    "range": lambda x: ember.histogram(x, 4, range=(-1.0, 1.0))[0],
    "weight": lambda x: ember.histogram(x, 4, weight=x.abs())[0],
    "density": lambda x: ember.histogram(x, 4, density=True)[0],
    "edges": lambda x: ember.histogram(x, ember.tensor([-2.0, 0.5, 3.0]))[0],
    "bool_bins": lambda x: ember.histogram(x, True)[0],
    "no_bins": lambda x: ember.histogram(x, 0)[0],
    "huge_bins": lambda x: ember.histogram(x, 2 ** 70)[0],
    "many_bins": lambda x: ember.histogram(x, 100000)[0],
    "grad": lambda x: ember.histogram(x.requires_grad_(), 4)[0],
    "int": lambda x: ember.histogram(x.long(), 4)[0],
    "float16": lambda x: ember.histogram(x.half(), 4)[0],
    "empty": lambda x: ember.histogram(x[:0], 4)[0],
    "transposed": lambda x: ember.histogram(x.reshape(4, 5).t(), 4)[0],
    "infinity": lambda x: ember.histogram(x * math.inf, 4)[0],
}


@pytest.mark.parametrize("case", sorted(_HISTOGRAM_CASES))
def test_other_histogram_cases_take_the_python_path(case):
    x = np.linspace(-1.5, 2.5, 20, dtype=np.float32)
    results = _on_both_paths(lambda: _HISTOGRAM_CASES[case](ember.tensor(x)), (RuntimeError, TypeError,
                                                                                NotImplementedError, OverflowError,
                                                                                ValueError))
    assert results[0] == results[1]


# -- cdist ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((3, 5), (4, 5)), ((1, 1), (1, 1)), ((7, 9), (2, 9)), ((25, 130), (3, 130)),
                                    ((2, 300), (2, 300)), ((30, 3), (2, 3))], ids=str)
def test_cdist_is_the_python_paths_and_torchs(dtype, shapes):
    """Each distance's absolute differences (squared for p 2) added as NumPy's add.reduce adds a row (its
    pairwise sum, of every length), then the square root: the Python path's bits."""
    rng = np.random.default_rng(16)
    a, b = (rng.standard_normal(shape).astype(dtype) for shape in shapes)
    b[0] = a[0]   # (a distance of 0)
    for p in (2, 2.0, 1, 1.0):
        for mode in ("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"):
            results = _on_both_paths(lambda: ember.cdist(ember.tensor(a), ember.tensor(b), p, mode))
            assert results[0] == results[1]
            want = torch.cdist(torch.tensor(a), torch.tensor(b), p, compute_mode=mode).numpy()
            np.testing.assert_allclose(np.frombuffer(results[0][3], dtype).reshape(want.shape), want, rtol=1e-4,
                                       atol=1e-5)


def test_cdist_nodes_and_gradients_are_the_python_paths():
    rng = np.random.default_rng(17)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x, y = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
            out = ember.cdist(x, y, 1.0)
            node = out.grad_fn
            saved = [t.detach().numpy().tobytes() for t in node.saved_tensors]
            out.backward(ember.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)))
            results.append((type(node).__name__, node.p, saved, x.grad.numpy().tobytes(), y.grad.numpy().tobytes()))
    assert results[0] == results[1]


def test_cdist_takes_the_common_case(monkeypatch):
    from ember.ops import matrix_decompositions
    a, b = ember.randn(3, 4), ember.randn(5, 4)
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.cdist(a, b), ember.cdist(a, b, 1)),
                                        [(matrix_decompositions, "_pairwise_norm")])


_CDIST_CASES = {
    "p_3": lambda a, b: ember.cdist(a, b, 3.0),
    "p_0": lambda a, b: ember.cdist(a, b, 0),
    "p_inf": lambda a, b: ember.cdist(a, b, math.inf),
    "p_negative": lambda a, b: ember.cdist(a, b, -1.0),
    "mm_mode": lambda a, b: ember.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
    "unknown_mode": lambda a, b: ember.cdist(a, b, compute_mode="sometimes"),
    "many_rows": lambda a, b: ember.cdist(ember.ones(30, 4), b),
    "batched": lambda a, b: ember.cdist(a[None], b[None]),
    "mixed": lambda a, b: ember.cdist(a, b.double()),
    "columns": lambda a, b: ember.cdist(a, b[:, :3]),
    "int": lambda a, b: ember.cdist(a.long(), b.long()),
    "float16": lambda a, b: ember.cdist(a.half(), b.half()),
    "empty": lambda a, b: ember.cdist(a[:0], b),
    "no_columns": lambda a, b: ember.cdist(a[:, :0], b[:, :0]),
    "transposed": lambda a, b: ember.cdist(a.t().contiguous().t(), b),
    "one_dim": lambda a, b: ember.cdist(a[0], b),
    "not_a_tensor": lambda a, b: ember.cdist(a, b.numpy()),
}


@pytest.mark.parametrize("case", sorted(_CDIST_CASES))
def test_other_cdist_cases_take_the_python_path(case):
    rng = np.random.default_rng(18)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    results = _on_both_paths(lambda: _CDIST_CASES[case](ember.tensor(a), ember.tensor(b)),
                             (RuntimeError, TypeError, NotImplementedError, ValueError, AttributeError))
    assert results[0] == results[1]


# -- remainder and floor_divide of a number and a tensor -------------------------------------------

def _settled():
    """The kernel choice's settings checked on this thread (an op on a loop asks them), as in a program."""
    ember.floor_divide(ember.ones(3), ember.full((3,), 2.0))


@pytest.mark.parametrize("name", ["remainder", "floor_divide"])
def test_number_first_divisions_are_the_python_paths_and_torchs(name):
    """The number spread over the divisor's shape in float32 and the op's loop run on the two: the bits of the
    Python op's NumPy passes (below 1024 elements) and of its loop (above), zeros' signs included."""
    _settled()
    rng = np.random.default_rng(19)
    fn, torch_fn = getattr(ember, name), getattr(torch, name)
    for scale in (0.01, 1.0, 100.0, 1e6):
        y = (rng.standard_normal((3, 7)) * scale).astype(np.float32)
        y[y == 0] = 1.0
        y[0, :4] = [1.25, -1.25, 0.5, 2.5]
        for number in (2.5, -7, 7, 0.0, -0.0, 1e-30, 3e38, 123456789, -2.5e-3):
            results = _on_both_paths(lambda: fn(number, ember.tensor(y)))
            assert results[0] == results[1]
            if number == 3e38:   # (torch's quotient overflows float32 there: NaN where the exact answer is finite)
                continue
            want = torch_fn(number, torch.tensor(y)).numpy()
            np.testing.assert_allclose(np.frombuffer(results[0][3], np.float32).reshape(want.shape), want, rtol=1e-6)


def test_number_first_divisions_take_the_common_case(monkeypatch):
    from ember.ops import pointwise
    _settled()
    y = ember.tensor(np.linspace(0.5, 3, 12, dtype=np.float32).reshape(3, 4))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.remainder(2.5, y), ember.floor_divide(7, y),
                                                              2.5 % y, 7 // y),
                                        [(pointwise, "_scalar_first")])


_NUMBER_FIRST_CASES = {
    "zero_divisor": lambda y: ember.remainder(2.5, y * 0),
    "nan_divisor": lambda y: ember.remainder(2.5, y * math.nan),
    "infinite_number": lambda y: ember.remainder(math.inf, y),
    "nan_number": lambda y: ember.floor_divide(math.nan, y),
    "overflowing_number": lambda y: ember.remainder(1e39, y),
    "huge_int": lambda y: ember.remainder(2 ** 60 + 1, y),
    "bool_number": lambda y: ember.remainder(True, y),
    "float64": lambda y: ember.remainder(2.5, y.double()),
    "int_tensor": lambda y: ember.remainder(3, y.long() + 1),
    "grad": lambda y: ember.remainder(2.5, y.requires_grad_()),
    "transposed": lambda y: ember.floor_divide(2.5, y.t()),
    "out": lambda y: ember.floor_divide(2.5, y, out=ember.empty(0)),
}


@pytest.mark.parametrize("case", sorted(_NUMBER_FIRST_CASES))
def test_other_number_first_cases_take_the_python_path(case):
    _settled()
    y = np.linspace(0.5, 3, 12, dtype=np.float32).reshape(3, 4)
    results = _on_both_paths(lambda: _NUMBER_FIRST_CASES[case](ember.tensor(y)), (RuntimeError, TypeError))
    assert results[0] == results[1]


# -- prod -----------------------------------------------------------------------------------------

def _prod_values(dtype, shape=(3, 4, 5)):
    values = np.random.default_rng(21).uniform(0.5, 1.6, shape).astype(dtype)
    values.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    return values


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("args", [(), (0,), (1,), (2,), (-1,), (1, True), (-3, True)], ids=str)
def test_prod_is_the_python_paths_and_torchs(dtype, args):
    """Each product element after element along its lane, as NumPy's multiply.reduce multiplies: the same
    bits, NaN, signed zeros and infinities included; an overflow (NumPy's warning) on the Python path."""
    for values in (_prod_values(dtype), _prod_values(dtype)[1:2], np.full((2, 3, 400), 9.0, dtype)):
        results = _on_both_paths(lambda: ember.prod(ember.tensor(values), *args))
        assert results[0] == results[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = torch.prod(torch.tensor(values), *args).numpy()
        np.testing.assert_allclose(np.frombuffer(results[0][3], dtype).reshape(want.shape), want, rtol=1e-5,
                                   equal_nan=True)


@pytest.mark.parametrize("args", [(), (1,), (0, True)], ids=str)
def test_prod_nodes_and_gradients_are_the_python_paths(args):
    results = []
    for python in (False, True):
        with python_paths() if python else contextlib.nullcontext():
            x = ember.tensor(np.linspace(0.5, 1.5, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
            out = ember.prod(x, *args)
            node = out.grad_fn
            fields = [getattr(node, name, None) for name in ("dim", "keepdim")]
            saved = [t.detach().numpy().tobytes() for t in node.saved_tensors]
            out.backward(ember.ones(out.shape))
            results.append((type(node).__name__, fields, saved, x.grad.numpy().tobytes()))
    assert results[0] == results[1]


def test_prod_takes_the_common_case(monkeypatch):
    from ember.ops import reduce
    x = ember.tensor(_prod_values("float32"))
    _assert_the_compiled_function_takes(monkeypatch, lambda: (ember.prod(x), ember.prod(x, 1), x.prod(0)),
                                        [(reduce, "_accumulated")])


_PROD_CASES = {
    "int": lambda x: ember.prod(x.long()),
    "dtype": lambda x: ember.prod(x, dtype=ember.float64),
    "tuple_dim": lambda x: ember.prod(x, (0, 1)),
    "dim_out_of_range": lambda x: ember.prod(x, 3),
    "int_keepdim": lambda x: ember.prod(x, 1, 1),
    "large": lambda x: ember.prod(ember.ones(80, 80)),
    "transposed": lambda x: ember.prod(x.transpose(0, 2), 1),
    "float16": lambda x: ember.prod(x.half(), 1),
    "zero_dims": lambda x: ember.prod(x[0, 0, 0]),
    "empty": lambda x: ember.prod(x[:0], 1),
    "out": lambda x: ember.prod(x, 1, out=ember.empty(0)),
    "no_grad": lambda x: _no_grad(lambda t: ember.prod(t, 1), x.requires_grad_()),
}


@pytest.mark.parametrize("case", sorted(_PROD_CASES))
def test_other_prod_cases_take_the_python_path(case):
    results = _on_both_paths(lambda: _PROD_CASES[case](ember.tensor(_prod_values("float32"))),
                             (RuntimeError, TypeError, IndexError))
    assert results[0] == results[1]


def test_the_sizes_the_c_functions_follow_are_the_python_ops():
    import re
    from ember._backend import openmp_kernels
    from ember.ops import pointwise
    size = int(re.search(r"#define LOOP_SERIAL_MAX_ELEMENTS (\d+)", _compiled_functions.SOURCE).group(1))
    assert size == vector_math.SERIAL_MAX_ELEMENTS
    shift = int(re.search(r"#define BINARY_LOOP_MIN_BYTES \(1 << (\d+)\)", _compiled_functions.SOURCE).group(1))
    assert 1 << shift == openmp_kernels.BINARY_MIN_BYTES
    shift = int(re.search(r"#define INT64_DIVISION_MIN_ELEMENTS \(1 << (\d+)\)", _compiled_functions.SOURCE).group(1))
    assert 1 << shift == pointwise.INT64_DIVISION_MIN_ELEMENTS
