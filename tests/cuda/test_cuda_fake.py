"""ember's CUDA plumbing exercised on the CPU, with NumPy posing as CuPy (fake_cupy.py):
devices, copies, device-mixing errors, streams and events, memory statistics, and a small
model trained on 'cuda'. What needs a real GPU is in test_cuda_real.py."""
import sys

import numpy as np
import pytest

import ember
from ember import _backend


def test_without_cupy_cuda_is_unavailable_and_calls_say_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    _backend.reset_cuda()
    try:
        assert ember.cuda.is_available() is False
        assert ember.cuda.device_count() == 0
        assert ember.cuda.memory_allocated() == 0 and ember.cuda.memory_stats() == {}
        ember.cuda.manual_seed(0)  # silently ignored, as in torch
        for call in (ember.cuda.current_device, ember.cuda.synchronize, ember.cuda.Stream,
                     lambda: ember.zeros(2).cuda(), lambda: ember.zeros(2, device="cuda"),
                     lambda: ember.zeros(2).to("cuda:0")):
            with pytest.raises(AssertionError, match="ember has no CUDA device: CuPy is not installed"):
                call()
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            ember.zeros(2).pin_memory()
        assert ember.zeros(2).is_pinned() is False
    finally:
        _backend.reset_cuda()


def test_cupy_present_without_gpu_is_unavailable(monkeypatch):
    import types
    stub = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "cupy", stub)
    _backend.reset_cuda()
    try:
        assert not ember.cuda.is_available()
        with pytest.raises(AssertionError, match="CuPy is installed but finds no usable CUDA GPU"):
            ember.cuda.current_device()
    finally:
        _backend.reset_cuda()


def test_device_queries(fake_cuda):
    assert ember.cuda.is_available() and ember.cuda.device_count() == 1
    assert ember.cuda.current_device() == 0
    assert ember.cuda.get_device_name() == "Fake CUDA GPU (NumPy)"
    assert ember.cuda.get_device_capability(0) == (9, 0)
    assert ember.cuda.get_device_properties("cuda:0").multi_processor_count == 4
    with pytest.raises(AssertionError, match="Invalid device id"):
        ember.cuda.get_device_properties(3)
    with ember.cuda.device(0):
        assert ember.cuda.current_device() == 0
    ember.cuda.synchronize()
    assert ember.cuda.is_initialized()
    assert ember.device(0) == ember.device("cuda", 0)


def test_copies_between_host_and_device(fake_cuda):
    x = ember.arange(6.0).reshape(2, 3)
    y = x.cuda()
    assert y.is_cuda and not y.is_cpu and y.device == ember.device("cuda", 0)
    assert type(y._data) is fake_cuda.ndarray and y.get_device() == 0 and x.get_device() == -1
    assert y.cuda() is y and y.to("cuda:0") is y
    back = y.cpu()
    assert back.device.type == "cpu" and type(back._data) is np.ndarray
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        y.numpy()
    assert y.tolist() == x.tolist() and y.sum().item() == 15.0
    z = ember.zeros(2, 3, device="cuda")
    assert z.is_cuda and ember.ones(2, device="cuda:0").is_cuda
    assert "device='cuda:0'" in repr(y)


def test_non_blocking_copies_use_pinned_memory(fake_cuda):
    x = ember.arange(4.0)
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned() and pinned.pin_memory() is pinned
    y = pinned.to("cuda", non_blocking=True)
    assert y.is_cuda and y.tolist() == x.tolist()
    host = y.to("cpu", non_blocking=True)
    assert host.is_pinned() and host.tolist() == x.tolist()
    assert x.cuda(non_blocking=True).tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        y.pin_memory()


def test_mixing_devices_raises_torchs_error(fake_cuda):
    a, b = ember.ones(3).cuda(), ember.ones(3)
    message = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    for call in (lambda: a + b, lambda: b * a, lambda: a - b):
        with pytest.raises(RuntimeError, match=message):
            call()
    assert (a + 1).is_cuda and (a + a).is_cuda


def test_gradients_flow_back_across_devices(fake_cuda):
    x = ember.arange(3.0, requires_grad=True)
    y = x.cuda() * 2
    y.cpu().sum().backward()
    assert x.grad.device.type == "cpu" and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_streams_and_events(fake_cuda):
    s = ember.cuda.Stream()
    assert ember.cuda.current_stream() == ember.cuda.default_stream()
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
        start.record()
        (ember.ones(4, device="cuda") * 2).sum()
        end.record()
    assert ember.cuda.current_stream() != s
    end.synchronize()
    assert start.query() and s.query()
    # the time between the two events' records, as CuPy reports it, in milliseconds
    assert start.elapsed_time(end) == (end._cupy.time - start._cupy.time) * 1000.0
    with pytest.raises(ValueError, match="Both events must be recorded"):
        ember.cuda.Event(enable_timing=True).elapsed_time(end)
    other = ember.cuda.Stream()
    other.wait_stream(s)
    assert len(other._cupy.waited) == 1
    event = s.record_event()
    event.wait(other)
    assert other._cupy.waited[-1] is event._cupy
    with ember.cuda.stream(None):
        pass
    s.synchronize()
    assert s.device == ember.device("cuda", 0) and isinstance(s.cuda_stream, int)


def test_record_stream_keeps_memory_until_the_stream_is_done(fake_cuda):
    from ember._backend import cuda as backend
    s = ember.cuda.Stream()
    t = ember.ones(8, device="cuda")
    t.record_stream(s)
    root = backend.base_allocation(t._data)
    del t
    assert any(held is root for _, held in backend._in_flight)
    with pytest.raises(RuntimeError, match="only supported for CUDA tensors"):
        ember.ones(2).record_stream(s)


def test_memory_statistics_follow_allocations(fake_cuda):
    ember.cuda.empty_cache()
    ember.cuda.reset_peak_memory_stats()
    base = ember.cuda.memory_allocated()
    t = ember.zeros(1024, device="cuda")  # 4 KiB
    assert ember.cuda.memory_allocated() - base == 4096
    peak = ember.cuda.max_memory_allocated()
    assert peak >= base + 4096
    del t
    assert ember.cuda.memory_allocated() == base
    assert ember.cuda.max_memory_allocated() == peak
    assert ember.cuda.memory_reserved() >= base + 4096  # the pool keeps the freed block
    ember.cuda.empty_cache()
    assert ember.cuda.memory_reserved() == base
    ember.cuda.reset_peak_memory_stats()
    assert ember.cuda.max_memory_allocated() == base
    stats = ember.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == base
    assert "Allocated memory" in ember.cuda.memory_summary()


def test_small_model_trains_on_cuda(fake_cuda):
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 3))
    reference = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 3))
    reference.load_state_dict(model.state_dict())
    model.cuda()
    assert all(p.is_cuda for p in model.parameters())
    x, target = ember.randn(5, 4), ember.tensor([0, 2, 1, 1, 0])
    losses = []
    for net, inputs, labels in ((model, x.cuda(), target.cuda()), (reference, x, target)):
        opt = ember.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            loss = ember.nn.functional.cross_entropy(net(inputs), labels)
            loss.backward()
            opt.step()
        losses.append(loss.item())
    assert all(p.grad.is_cuda for p in model.parameters())
    assert losses[0] == pytest.approx(losses[1], rel=1e-6)


def test_batch_norm_and_softmax_never_make_the_host_wait_for_the_device(fake_cuda, monkeypatch):
    """Reading a device value on the host waits for the GPU's queue: none in these layers' steps."""
    reads = []
    for name in ("__bool__", "__int__", "__float__", "item", "get", "tolist"):
        original = getattr(fake_cuda.ndarray, name)
        monkeypatch.setattr(fake_cuda.ndarray, name,
                            lambda self, *a, _f=original, _n=name, **k: reads.append(_n) or _f(self, *a, **k))
    ember.manual_seed(0)
    norm = ember.nn.BatchNorm2d(3).to("cuda")
    x = ember.randn(4, 3, 5, 5, device="cuda", requires_grad=True)
    (norm(x).softmax(-1) * ember.randn(4, 3, 5, 5, device="cuda")).sum().backward()
    assert reads == [] and x.grad is not None and x.grad.device.type == "cuda"


def test_random_draws_are_moved_to_the_tensors_device(fake_cuda, monkeypatch):
    """Samples drawn on the host (dropout masks included) go to the device of the tensor they
    are for (or the requested one), not to the current device. (Arithmetic on a non-current device still computes on the
    current one, as in CuPy, so the uploads themselves are watched.)"""
    monkeypatch.setattr(fake_cuda._state, "device_count", 2)
    backend = _backend.load_cuda()
    with ember.cuda.device(1):
        mean, probs, filled = ember.zeros(4, 3).cuda(), ember.full((4, 3), 0.5).cuda(), ember.empty(3).cuda()
    uploads = []
    from_array = backend.from_array
    monkeypatch.setattr(backend, "from_array", lambda a, index=None, non_blocking=False: (
        uploads.append(index), from_array(a, index, non_blocking))[1])
    assert ember.cuda.current_device() == 0
    ember.normal(mean, 1.0)
    ember.bernoulli(probs)
    ember.randn_like(mean)
    ember.rand(2, device="cuda:1")
    filled.uniform_()
    filled.bernoulli_(0.5)
    ember.nn.functional.dropout(mean, 0.5)
    assert uploads == [1] * 7
    assert filled.device == ember.device("cuda:1")


def test_dataloader_pins_batches(fake_cuda):
    from ember.utils.data import DataLoader, TensorDataset
    loader = DataLoader(TensorDataset(ember.arange(6.0)), batch_size=3, pin_memory=True)
    batches = list(loader)
    assert all(b[0].is_pinned() for b in batches)


def test_gpu_check_dry_run(tmp_path):
    import os
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, EMBER_GPU_CHECK_DRY_RUN="1", EMBER_GPU_CHECK_STEPS="1", PYTHON=sys.executable,
               GPU_CHECK_LOGS=str(tmp_path))
    result = subprocess.run(["bash", os.path.join(root, "scripts", "gpu_check.sh")], cwd=root,
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "DRY RUN" in result.stdout and "AGREE" in result.stdout
    assert "nn + losses (cuda)               PASS" in result.stdout
    assert "cuda tests                       PASS" in result.stdout
    bench = (tmp_path / "bench.log").read_text()
    for model in ("resnet20", "resnet50", "resnet50-amp", "gpt2-small", "lstm-lm"):
        assert any(line.split()[:2] == [model, "AGREE"] for line in bench.splitlines()), bench
