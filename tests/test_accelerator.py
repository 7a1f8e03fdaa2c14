"""``ember.accelerator`` against ``torch.accelerator`` on a machine without an accelerator:
the queries answer as torch's, the calls that need a device raise torch's errors. With a
(fake) GPU it is ember.cuda's: tests/cuda/test_accelerator_fake.py."""
import warnings

import pytest
import torch

import ember

if ember.cuda.is_available():  # pragma: no cover (a GPU machine)
    pytest.skip("these compare with torch's CPU build: no accelerator", allow_module_level=True)


def test_queries_without_an_accelerator_are_torchs():
    for lib in (ember, torch):
        acc = lib.accelerator
        assert acc.is_available() is False
        assert acc.current_accelerator() is None
        assert acc.current_accelerator(check_available=True) is None
        assert acc.device_count() == 0 and type(acc.device_count()) is int


CALLS = [
    ("current_device_index", lambda acc: acc.current_device_index()),
    ("set_device_index", lambda acc: acc.set_device_index(0)),
    ("set_device_index_cpu", lambda acc: acc.set_device_index("cpu")),
    ("set_device_index_none", lambda acc: acc.set_device_index(None)),
    ("synchronize", lambda acc: acc.synchronize()),
    ("synchronize_0", lambda acc: acc.synchronize(0)),
    ("synchronize_cpu", lambda acc: acc.synchronize("cpu")),
    ("device_index", lambda acc: acc.device_index(0).__enter__()),
    ("current_stream", lambda acc: acc.current_stream()),
    ("get_device_capability", lambda acc: acc.get_device_capability()),
    ("Graph", lambda acc: acc.Graph()),
] + [(name, lambda acc, name=name: getattr(acc, name)()) for name in (
    "empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
    "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
    "reset_accumulated_memory_stats", "reset_peak_memory_stats")]


@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_calls_needing_a_device_raise_torchs_errors(name, call):
    with pytest.raises(Exception) as want:
        call(torch.accelerator)
    with pytest.raises(type(want.value)) as got:
        call(ember.accelerator)
    assert str(got.value) == str(want.value).replace("torch", "ember")


def test_device_index_none_does_nothing():
    for lib in (ember, torch):
        with lib.accelerator.device_index(None) as r:
            assert r is None


@pytest.mark.parametrize("old,new,args", [("current_device_idx", "current_device_index", ()),
                                          ("set_device_idx", "set_device_index", (0,))])
def test_deprecated_aliases_warn_as_torch(old, new, args):
    seen = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
                getattr(lib.accelerator, old)(*args)
        seen.append([(x.category, str(x.message)) for x in w])
    assert seen[0] == seen[1] == [(FutureWarning, f"Use `{new}` instead.")]


def test_set_stream_refuses_a_cpu_stream():
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.accelerator.set_stream(lib.cpu.current_stream())


def test_names_and_submodules_are_torchs():
    assert sorted(ember.accelerator.__all__) == sorted(torch.accelerator.__all__)
    for name in ("memory", "graphs"):
        assert sorted(getattr(ember.accelerator, name).__all__) == \
            sorted(getattr(torch.accelerator, name).__all__)
