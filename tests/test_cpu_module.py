"""``ember.cpu`` against ``torch.cpu``: the device-agnostic answers, streams, events and stream
contexts, the CPU's capabilities, and the deprecated ``cpu.amp`` names."""
import warnings

import pytest
import torch

import ember


def test_names_are_torchs():
    assert sorted(ember.cpu.__all__) == sorted(torch.cpu.__all__)


def test_device_queries_are_torchs():
    for name in ("is_available", "is_initialized", "current_device", "device_count"):
        got, want = getattr(ember.cpu, name)(), getattr(torch.cpu, name)()
        assert got == want and type(got) is type(want), name
    for lib in (ember, torch):
        for device in (None, "cpu", 0, "cuda"):
            assert lib.cpu.synchronize(device) is None
            assert lib.cpu.set_device(device or "cpu") is None


def test_streams_and_events_are_torchs():
    for lib in (ember, torch):
        cpu = lib.cpu
        default = cpu.current_stream()
        assert cpu.current_stream() is default and cpu.current_stream("cpu") is default
        s = cpu.Stream(priority=-1)
        assert s != cpu.Stream()
        assert (s.wait_stream(default), s.record_event(), s.wait_event(cpu.Event())) == (None,) * 3
        e = cpu.Event()
        assert (e.query(), e.record(), e.wait(), e.synchronize()) == (True, None, None, None)
        with cpu.stream(s) as ctx:
            assert ctx is None and cpu.current_stream() is s
            with cpu.StreamContext(None):
                assert cpu.current_stream() is s
        assert cpu.current_stream() is default
        assert not hasattr(s, "query") and not hasattr(s, "synchronize")
        assert sorted(n for n in dir(cpu.Stream) if not n.startswith("_")) == \
            ["record_event", "wait_event", "wait_stream"]


def test_capabilities_agree_with_torchs():
    got, want = ember.cpu.get_capabilities(), torch.cpu.get_capabilities()
    assert got is ember.cpu.get_capabilities()
    with pytest.raises(TypeError):
        got["avx2"] = False
    assert got["architecture"] == want["architecture"]
    assert got["num_logical_cores"] == want["num_logical_cores"]
    flags = [k for k, v in got.items() if type(v) is bool]
    if want["architecture"] == "x86_64":
        assert len(flags) >= 40
    assert {k: got[k] for k in flags if k in want} == {k: want[k] for k in flags if k in want}


@pytest.mark.parametrize("name,make", [
    ("autocast", lambda lib: lib.cpu.amp.autocast()),
    ("GradScaler", lambda lib: lib.cpu.amp.GradScaler()),
])
def test_amp_names_warn_as_torchs(name, make):
    seen = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            obj = make(lib)
        seen.append([(x.category, str(x.message).replace("torch", "ember")) for x in w])
        if name == "autocast":
            with obj:
                assert lib.get_autocast_dtype("cpu") == lib.bfloat16
                assert lib.is_autocast_enabled("cpu")
        else:
            assert obj.get_scale() == 65536.0
    assert seen[0] == seen[1] and seen[0][0][0] is FutureWarning
