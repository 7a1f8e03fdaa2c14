"""torch's top-level settings against torch: each setter's effect on its getter, the values
and exceptions torch gives, and the deprecation warnings it keeps."""
import warnings

import pytest
import torch

import ember


@pytest.fixture(params=["ember", "torch"])
def lib(request):
    return ember if request.param == "ember" else torch


@pytest.fixture(autouse=True)
def restore():
    yield
    for library in (ember, torch):
        library.use_deterministic_algorithms(False)
        library.set_float32_matmul_precision("highest")
        library.set_warn_always(False)
        library.set_default_dtype(library.float32)


def test_deterministic_algorithms_and_debug_mode(lib):
    assert not lib.are_deterministic_algorithms_enabled()
    assert lib.get_deterministic_debug_mode() == 0
    lib.use_deterministic_algorithms(True, warn_only=True)
    assert lib.are_deterministic_algorithms_enabled()
    assert lib.is_deterministic_algorithms_warn_only_enabled()
    assert lib.get_deterministic_debug_mode() == 1
    lib.set_deterministic_debug_mode("error")
    assert lib.get_deterministic_debug_mode() == 2
    assert not lib.is_deterministic_algorithms_warn_only_enabled()
    lib.set_deterministic_debug_mode(0)
    assert not lib.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize("call,error", [
    (lambda lib: lib.set_deterministic_debug_mode("bad"), RuntimeError),
    (lambda lib: lib.set_deterministic_debug_mode(5), RuntimeError),
    (lambda lib: lib.use_deterministic_algorithms("yes"), TypeError),
    (lambda lib: lib.set_num_interop_threads(0), RuntimeError),
])
def test_bad_settings_are_refused_as_torch_refuses_them(call, error):
    messages = []
    for library in (ember, torch):
        with pytest.raises(error) as info:
            call(library)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_float32_matmul_precision(lib):
    assert lib.get_float32_matmul_precision() == "highest"
    lib.set_float32_matmul_precision("medium")
    assert lib.get_float32_matmul_precision() == "medium"
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        lib.set_float32_matmul_precision("bad")
    assert lib.get_float32_matmul_precision() == "medium"


def test_warn_always_interop_threads_and_denormals(lib):
    assert not lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    assert lib.is_warn_always_enabled()
    assert isinstance(lib.get_num_interop_threads(), int) and lib.get_num_interop_threads() >= 1
    assert lib.set_flush_denormal(False) in (True, False)


def test_set_default_tensor_type_warns_and_sets_the_default_dtype(lib):
    for name, dtype in (("torch.DoubleTensor", lib.float64), ("torch.FloatTensor", lib.float32)):
        with warnings.catch_warnings(record=True) as caught:   # torch warns once a process
            warnings.simplefilter("always")
            lib.set_default_tensor_type(name)
        assert all("set_default_tensor_type() is deprecated" in str(w.message) for w in caught)
        assert lib is torch or len(caught) == 1
        assert lib.get_default_dtype() == dtype and lib.tensor([1.0]).dtype == dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="only floating-point types are supported"):
            lib.set_default_tensor_type("torch.LongTensor")


def test_anomaly_mode_is_reexported(lib):
    assert not lib.is_anomaly_enabled()
    lib.set_anomaly_enabled(True, check_nan=False)
    try:
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
    finally:
        lib.set_anomaly_enabled(False)
    assert not lib.is_anomaly_enabled()
    assert ember.is_anomaly_enabled is ember.autograd.is_anomaly_enabled


def test_deprecated_cpu_autocast_functions(lib):
    with pytest.warns(DeprecationWarning, match="is_autocast_cpu_enabled\\(\\) is deprecated"):
        assert not lib.is_autocast_cpu_enabled()
    with pytest.warns(DeprecationWarning):
        assert lib.get_autocast_cpu_dtype() == lib.bfloat16
    with pytest.warns(DeprecationWarning):
        lib.set_autocast_cpu_enabled(True)
    try:
        assert lib.is_autocast_enabled("cpu")
        with pytest.warns(DeprecationWarning):
            lib.set_autocast_cpu_dtype(lib.float16)
        assert lib.get_autocast_dtype("cpu") == lib.float16
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.set_autocast_cpu_enabled(False)
            lib.set_autocast_cpu_dtype(lib.bfloat16)
    assert lib.is_autocast_cache_enabled()
    lib.set_autocast_cache_enabled(False)
    assert not lib.is_autocast_cache_enabled()
    lib.set_autocast_cache_enabled(True)
    lib.clear_autocast_cache()


def test_autocast_nesting_counts(lib):
    assert [lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
            lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()] == [1, 2, 1, 0]


def test_constants_and_legacy_contiguous_format():
    assert ember.has_lapack is True and isinstance(ember.has_mkl, bool)
    assert ember.has_openmp == ember.backends.openmp.is_available()
    assert ember.has_spectral == hasattr(ember, "fft")
    assert ember.legacy_contiguous_format is ember.contiguous_format
    assert (torch.legacy_contiguous_format is torch.contiguous_format)
