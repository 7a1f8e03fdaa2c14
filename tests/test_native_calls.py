"""The compiled loops' calls (``_backend.native_calls``): through the generated extension module
and through ctypes, the same results; bad arguments refused with a clear error."""
import ctypes

import numpy as np
import pytest

from ember._backend import native_calls, openmp_kernels, special_loops, vector_math

pytestmark = pytest.mark.skipif(not vector_math.available(), reason="the compiled loops cannot be built here")


def _callers(function, kinds):
    """The loop called through the extension (where it builds here) and through ctypes."""
    callers = [native_calls.through_ctypes(function, kinds)]
    if native_calls.native(kinds) is not None:
        callers.append(native_calls.bind(function, kinds))
    return callers


def _sin_loop():
    kinds = native_calls.kinds_of(vector_math._ARRAYS_ARGUMENTS[1])
    from ember._inductor import _compiler
    raw = _compiler.load(vector_math.SOURCE, "sin_float32", quiet=True, libraries=("mvec",),
                         argtypes=vector_math._ARRAYS_ARGUMENTS[1])
    return raw, kinds


def test_the_extension_builds_where_the_headers_are_installed():
    if native_calls.include_dirs() is None:
        pytest.skip("Python's headers are not installed")
    assert native_calls.native("ppqi") is not None
    assert "PyInit_ember_call_ppqi" in native_calls.source("ppqi")


def test_the_compiled_methods_build_where_the_headers_are_installed():
    """The extension of the compiled methods and functions builds (the tests of test_compiled_methods.py
    skip where it cannot, so a C source that does not compile would otherwise pass unseen)."""
    if native_calls.include_dirs() is None:
        pytest.skip("Python's headers are not installed")
    from ember.ops import _compiled_methods
    _compiled_methods.install()
    assert _compiled_methods._state["compiled"]


def test_array_arguments_give_numpys_values_both_ways():
    raw, kinds = _sin_loop()
    x = np.linspace(-3, 3, 37, dtype=np.float32)
    for call in _callers(raw, kinds):
        out = np.full_like(x, np.nan)
        call(x, out, x.size, 1)
        np.testing.assert_allclose(out, np.sin(x), rtol=2e-6, atol=1e-6)


def test_tuples_of_arrays_sizes_and_scalars_both_ways():
    """The OpenMP loops' convention: arrays (None for NULL), sizes and scalars as tuples."""
    from ember._inductor import _compiler
    raw = _compiler.load(openmp_kernels.SOURCE, "batch_norm_forward", quiet=True, argtypes=None)
    assert raw is not None
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    expected = (x - x.mean((0, 2), keepdims=True)) / np.sqrt(x.var((0, 2), keepdims=True) + 1e-5)
    for call in _callers(raw, "PQDi"):
        y, mean, var = np.empty_like(x), np.empty(4, np.float32), np.empty(4, np.float32)
        call((x, y, mean, var, None, None), (*x.shape, 1), (1e-5,), 1)
        np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(mean, x.mean((0, 2)), rtol=1e-5, atol=1e-6)


def test_an_address_stands_for_an_array():
    raw, kinds = _sin_loop()
    x = np.arange(8, dtype=np.float32)
    for call in _callers(raw, kinds):
        out = np.zeros_like(x)
        call(x.ctypes.data, out, x.size, 1)
        np.testing.assert_allclose(out, np.sin(x), rtol=2e-6, atol=1e-6)


def test_bad_arguments_are_refused_before_the_loop_runs():
    raw, kinds = _sin_loop()
    caller = native_calls.native(kinds)
    if caller is None:
        pytest.skip("the extension cannot be built here")
    call = native_calls.bind(raw, kinds)
    x = np.ones(4, np.float32)
    out = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="takes an array, an address or None for a pointer, not list"):
        call(x, [0.0] * 4, 4, 1)
    with pytest.raises(TypeError, match=r"takes 4 arguments \(3 given\)"):
        call(x, out, 4)
    with pytest.raises(TypeError):
        call(x, out, "4", 1)
    with pytest.raises(OverflowError):
        call(x, out, 4, 2 ** 40)
    assert not out.any()
    with pytest.raises(ValueError, match="at most"):   # (refused in the conversion: the loop never runs)
        native_calls.bind(raw, "P")((x,) * (native_calls.MAX_LIST + 1))


def test_without_the_headers_the_loops_go_through_ctypes(monkeypatch):
    raw, kinds = _sin_loop()
    monkeypatch.setattr(native_calls, "include_dirs", lambda: None)
    monkeypatch.setattr(native_calls, "_callers", {})
    call = native_calls.bind(raw, kinds)
    assert call.__name__ == "call" and call.__qualname__.startswith("through_ctypes")
    x = np.linspace(0, 1, 9, dtype=np.float32)
    out = np.empty_like(x)
    call(x, out, x.size, 1)
    np.testing.assert_allclose(out, np.sin(x), rtol=2e-6, atol=1e-6)


def test_two_array_loops_take_their_sizes_as_a_tuple():
    """special_loops' two-argument loops (a C array of sizes) agree with torch."""
    torch = pytest.importorskip("torch")
    x = np.linspace(1.5, 4, 12)
    y = np.linspace(1.5, 3, 12)
    got = special_loops.two_arguments("zeta", x, y)
    assert got is not None
    np.testing.assert_allclose(got, torch.special.zeta(torch.from_numpy(x), torch.from_numpy(y)).numpy(),
                               rtol=1e-10)


def test_none_is_null_in_a_list_of_pointers():
    assert native_calls._pointer_list((None,))[0] is None
    assert isinstance(native_calls._pointer_list((np.ones(2),))[0], int)
    assert ctypes.sizeof(native_calls._int64_list((1, 2, 3))) == 24
