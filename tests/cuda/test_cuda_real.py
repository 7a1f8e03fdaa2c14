"""Tests that need a real CUDA GPU through CuPy; they skip with the reason elsewhere.
`scripts/gpu_check.sh` runs them (and the op table with `--device cuda`) on a GPU machine."""
import os

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


def test_empty_cache_returns_cached_blocks():
    t = ember.empty(2 ** 22, device="cuda")
    del t
    ember.cuda.synchronize()
    cached = ember.cuda.memory_reserved()
    ember.cuda.empty_cache()
    assert ember.cuda.memory_reserved() < cached
    assert ember.cuda.memory_allocated() <= ember.cuda.memory_reserved()


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here to compare with")
    return torch


def test_save_of_cuda_tensors_loads_on_the_cpu(tmp_path):
    w = ember.randn(3, 4, device="cuda")
    model = ember.nn.Linear(4, 2).to("cuda")
    path = tmp_path / "checkpoint.pt"
    ember.save({"w": w, "model": model.state_dict()}, path)
    on_cpu = ember.load(path, map_location="cpu")
    assert on_cpu["w"].device.type == "cpu" and on_cpu["model"]["weight"].device.type == "cpu"
    np.testing.assert_array_equal(on_cpu["w"].numpy(), w.cpu().numpy())
    as_saved = ember.load(path)
    assert as_saved["w"].device == w.device
    np.testing.assert_array_equal(as_saved["model"]["bias"].cpu().numpy(), model.bias.detach().cpu().numpy())
    torch = _torch_cuda()
    theirs = torch.load(path, map_location="cpu")
    np.testing.assert_array_equal(theirs["w"].numpy(), w.cpu().numpy())
    assert torch.load(path)["w"].device.type == "cuda"


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(16, 32), lib.nn.ReLU(), lib.nn.Linear(32, 4))


def _autocast_scaled_steps(lib, model, x, y, init_scale, steps):
    """SGD steps under float16 autocast with a GradScaler; the losses, output dtypes and scales."""
    optimizer = lib.optim.SGD(model.parameters(), lr=0.05)
    scaler = lib.amp.GradScaler("cuda", init_scale=init_scale)
    losses, dtypes, scales = [], [], []
    for _ in range(steps):
        optimizer.zero_grad()
        with lib.autocast(device_type="cuda", dtype=lib.float16):
            out = model(x)
            loss = lib.nn.functional.mse_loss(out, y)
        dtypes.append(str(out.dtype))
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
        scales.append(scaler.get_scale())
    return losses, dtypes, scales


@pytest.mark.parametrize("init_scale", [2.0 ** 10, 2.0 ** 20])  # the second overflows float16 first
def test_autocast_float16_with_grad_scaler_matches_torch(init_scale):
    torch = _torch_cuda()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 16), dtype=np.float32), rng.standard_normal((32, 4), dtype=np.float32)
    ours = _mlp(ember).to("cuda")
    theirs = _mlp(torch)
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.from_numpy(dict(ours.named_parameters())[name].detach().cpu().numpy()))
    theirs = theirs.to("cuda")
    got = _autocast_scaled_steps(ember, ours, ember.from_numpy(x).to("cuda"), ember.from_numpy(y).to("cuda"),
                                 init_scale, 6)
    want = _autocast_scaled_steps(torch, theirs, torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(),
                                  init_scale, 6)
    assert [d.split(".")[-1] for d in got[1]] == [d.split(".")[-1] for d in want[1]] == ["float16"] * 6
    assert got[2] == want[2]  # the same steps skipped, the same scale after each
    np.testing.assert_allclose(got[0], want[0], rtol=2e-2, atol=2e-3)
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(dict(ours.named_parameters())[name].detach().cpu().numpy(),
                                   p.detach().cpu().numpy(), rtol=2e-2, atol=2e-3)


_DDP_ON_ONE_RANK = """
import numpy as np, ember
import ember.distributed as dist
dist.init_process_group("mpi")
ember.manual_seed(0)
model = ember.nn.Linear(8, 4).to("cuda")
reference = ember.nn.Linear(8, 4).to("cuda")
reference.load_state_dict(model.state_dict())
ddp = ember.nn.parallel.DistributedDataParallel(model)
x = ember.randn(5, 8, device="cuda")
ddp(x).square().sum().backward()
reference(x).square().sum().backward()
assert model.weight.grad.device.type == "cuda"
np.testing.assert_allclose(model.weight.grad.cpu().numpy(), reference.weight.grad.cpu().numpy(), rtol=1e-6)
np.testing.assert_allclose(model.bias.grad.cpu().numpy(), reference.bias.grad.cpu().numpy(), rtol=1e-6)
dist.destroy_process_group()
print("DDP-ON-ONE-RANK-OK")
"""


def test_ddp_broadcasts_and_reduces_a_cuda_model_on_one_rank():
    import subprocess
    import sys
    pytest.importorskip("mpi4py")
    script = _DDP_ON_ONE_RANK
    if getattr(sys.modules.get("cupy"), "__name__", "") == "fake_cupy":  # the dry run: the child needs it too
        script = f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import fake_cupy; " \
                 f"fake_cupy.install()\n{script}"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "DDP-ON-ONE-RANK-OK" in done.stdout, done.stdout + done.stderr
