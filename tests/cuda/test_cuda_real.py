"""Tests that need a real CUDA GPU through CuPy; they skip with the reason elsewhere.
`scripts/gpu_check.sh` runs them (and the op table with `--device cuda`) on a GPU machine."""
import numpy as np
import pytest

import ember

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(),
                                reason="needs a CUDA GPU: ember.cuda.is_available() is False "
                                       "(no GPU, no driver or no CuPy on this machine)")

DEVICES = [f"cuda:{i}" for i in range(ember.cuda.device_count())] or ["cuda:0"]


@pytest.mark.parametrize("device", DEVICES)
def test_round_trip_and_arithmetic(device):
    x = ember.randn(4, 5)
    y = x.to(device)
    assert y.device == ember.device(device)
    np.testing.assert_allclose((y * 2 + 1).cpu().numpy(), x.numpy() * 2 + 1, rtol=1e-6)
    assert y.sum().item() == pytest.approx(x.sum().item(), rel=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_non_blocking_copies(device):
    x = ember.randn(1000).pin_memory()
    assert x.is_pinned()
    y = x.to(device, non_blocking=True)
    back = y.to("cpu", non_blocking=True)
    ember.cuda.synchronize()
    np.testing.assert_array_equal(back.numpy(), x.numpy())


def test_mixing_error_matches_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here to compare the message with")
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(3, device="cuda") + torch.ones(3)
    with pytest.raises(RuntimeError) as ours:
        ember.ones(3, device="cuda") + ember.ones(3)
    assert str(ours.value) == str(theirs.value).split(" (when checking")[0]


def test_events_report_elapsed_time_between_records():
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    a = ember.randn(512, 512, device="cuda")
    start.record()
    for _ in range(5):
        a = a @ a / 512
    end.record()
    end.synchronize()
    assert end.query()
    elapsed = start.elapsed_time(end)
    assert isinstance(elapsed, float) and elapsed == elapsed  # a number of milliseconds, not NaN
    with pytest.raises(ValueError, match="Both events must be recorded"):
        ember.cuda.Event(enable_timing=True).elapsed_time(end)


def test_memory_statistics():
    ember.cuda.synchronize()
    ember.cuda.empty_cache()
    before = ember.cuda.memory_allocated()
    t = ember.empty(2 ** 20, device="cuda")
    assert ember.cuda.memory_allocated() - before >= 4 * 2 ** 20
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    del t
    assert ember.cuda.memory_allocated() == before
    assert ember.cuda.memory_reserved() >= before


def test_stream_context_and_record_stream():
    s = ember.cuda.Stream()
    with ember.cuda.stream(s):
        t = ember.ones(1000, device="cuda") * 3
    t.record_stream(s)
    s.synchronize()
    assert t.sum().item() == 3000.0
