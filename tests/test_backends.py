"""``ember.backends`` against ``torch.backends`` on a CPU-only machine: cpu, cuda (cuBLAS
matmul switches, scaled-dot-product-attention switches), cudnn, mps, openmp and opt_einsum
give torch's defaults with torch's types, keep what is set on them, and reject what torch's
setters reject. Their ``is_available()`` answers are facts about ember."""
import warnings

import pytest
import torch

import ember
from ember._backend import onednn


def test_cpu_capability_is_torchs():
    got = ember.backends.cpu.get_cpu_capability()
    assert type(got) is str and got == torch.backends.cpu.get_cpu_capability()


def test_mps_and_cuda_are_not_there():
    for name in ("is_available", "is_built"):
        assert getattr(ember.backends.mps, name)() is getattr(torch.backends.mps, name)() is False
    assert ember.backends.cuda.is_built() is torch.backends.cuda.is_built() is False


def test_openmp_is_oneDNNs():
    assert ember.backends.openmp.is_available() is bool(onednn.available())
    assert torch.backends.openmp.is_available() is True


CUDNN = ["enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"]


def test_cudnn_defaults_and_queries_are_torchs():
    for name in CUDNN:
        got, want = getattr(ember.backends.cudnn, name), getattr(torch.backends.cudnn, name)
        assert type(got) is type(want) and got == want, name
    assert ember.backends.cudnn.is_available() is torch.backends.cudnn.is_available() is False
    assert ember.backends.cudnn.version() is torch.backends.cudnn.version() is None


@pytest.mark.parametrize("name", ["enabled", "benchmark", "deterministic", "allow_tf32"])
def test_cudnn_switches_keep_their_value_and_reject_non_bools(name):
    for lib in (ember, torch):
        mod = lib.backends.cudnn
        before = getattr(mod, name)
        try:
            setattr(mod, name, not before)
            assert getattr(mod, name) is (not before)
            with pytest.raises(RuntimeError, match="expects a bool, but got int"):
                setattr(mod, name, 1)
            assert getattr(mod, name) is (not before)
        finally:
            setattr(mod, name, before)
        assert getattr(mod, name) is before


def test_cudnn_flags_sets_all_switches_and_restores_them():
    def inside(lib, **kw):
        with lib.backends.cudnn.flags(**kw) as r:
            return r, [getattr(lib.backends.cudnn, n) for n in CUDNN[:4]]
    for kw in ({}, {"enabled": True, "benchmark": True, "deterministic": True, "allow_tf32": False}):
        assert inside(ember, **kw) == inside(torch, **kw)
        assert [getattr(ember.backends.cudnn, n) for n in CUDNN] == \
            [getattr(torch.backends.cudnn, n) for n in CUDNN]


MATMUL = ["allow_tf32", "allow_fp16_reduced_precision_reduction",
          "allow_bf16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction_split_k",
          "allow_bf16_reduced_precision_reduction_split_k", "allow_fp16_accumulation"]


def _matmul(lib):
    return [getattr(lib.backends.cuda.matmul, n) for n in MATMUL]


def test_matmul_defaults_are_torchs():
    got, want = _matmul(ember), _matmul(torch)
    assert got == want and [type(v) for v in got] == [type(v) for v in want]


@pytest.mark.parametrize("name,value", [
    ("allow_tf32", True), ("allow_fp16_accumulation", True),
    ("allow_fp16_reduced_precision_reduction", False),
    ("allow_bf16_reduced_precision_reduction", (False, False)),
    ("allow_fp16_reduced_precision_reduction", [False, True]),
    ("allow_bf16_reduced_precision_reduction", (False,)),
])
def test_matmul_switches_keep_what_is_set(name, value):
    before = {lib: _matmul(lib) for lib in (ember, torch)}
    seen = {}
    for lib in (ember, torch):
        setattr(lib.backends.cuda.matmul, name, value)
        seen[lib] = _matmul(lib)
        for n, v in zip(MATMUL, before[lib]):
            if not n.endswith("_split_k"):
                setattr(lib.backends.cuda.matmul, n, (v, True) if "reduction" in n else v)
        assert _matmul(lib) == before[lib]
    assert seen[ember] == seen[torch] != before[torch]


@pytest.mark.parametrize("name,value", [
    ("allow_tf32", 1), ("allow_bf16_reduced_precision_reduction", 1),
    ("allow_fp16_reduced_precision_reduction", ()), ("allow_fp16_reduced_precision_reduction", (1,)),
    ("allow_bf16_reduced_precision_reduction", (True, True, True)), ("no_such_switch", True),
    ("allow_fp16_reduced_precision_reduction", [True, False]),
])
def test_matmul_rejects_what_torch_rejects(name, value):
    with pytest.raises(Exception) as want:
        setattr(torch.backends.cuda.matmul, name, value)
    with pytest.raises(type(want.value)) as got:
        setattr(ember.backends.cuda.matmul, name, value)
    if type(want.value) is not RuntimeError:
        assert str(got.value) == str(want.value)
    assert _matmul(ember) == _matmul(torch)
    with pytest.raises(AttributeError, match="Unknown attribute no_such_switch"):
        ember.backends.cuda.matmul.no_such_switch


SDP = ["flash", "mem_efficient", "math", "cudnn"]


def _sdp(lib):
    return [getattr(lib.backends.cuda, f"{k}_sdp_enabled")() for k in SDP]


@pytest.mark.parametrize("kind", SDP)
def test_sdp_switches_follow_torch(kind):
    assert _sdp(ember) == _sdp(torch) == [True] * 4
    for lib in (ember, torch):
        getattr(lib.backends.cuda, f"enable_{kind}_sdp")(False)
    try:
        assert _sdp(ember) == _sdp(torch) != [True] * 4
        for lib in (ember, torch):
            with pytest.raises(RuntimeError, match="expects a bool, but got"):
                getattr(lib.backends.cuda, f"enable_{kind}_sdp")(1)
        assert _sdp(ember) == _sdp(torch)
    finally:
        for lib in (ember, torch):
            getattr(lib.backends.cuda, f"enable_{kind}_sdp")(True)
    assert _sdp(ember) == [True] * 4


def test_sdp_kernel_warns_as_torch_and_restores():
    seen = {}
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.backends.cuda.sdp_kernel(enable_flash=False, enable_cudnn=False) as ctx:
                seen[lib] = (ctx, _sdp(lib))
        assert [x.category for x in w] == [FutureWarning]
        assert "sdp_kernel()` is deprecated" in str(w[0].message)
        if lib is ember:  # torch's points into contextlib
            assert w[0].filename == __file__
    assert seen[ember] == seen[torch] == ({}, [False, True, True, False])
    assert _sdp(ember) == _sdp(torch) == [True] * 4


def test_opt_einsum_is_not_used():
    oe, toe = ember.backends.opt_einsum, torch.backends.opt_einsum
    assert oe.is_available() is False and oe.get_opt_einsum() is None
    if toe.is_available():
        pytest.skip("opt_einsum is installed: torch's defaults differ from ember's")
    assert (oe.enabled, oe.strategy) == (toe.enabled, toe.strategy) == (False, None)
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="opt_einsum is not available, so setting `enabled`"):
            with lib.backends.opt_einsum.flags(enabled=True):
                pass
        with pytest.raises(ValueError, match="so setting `strategy` to greedy"):
            with lib.backends.opt_einsum.flags(strategy="greedy"):
                pass
        with lib.backends.opt_einsum.flags(enabled=False):
            assert lib.backends.opt_einsum.enabled is False
    assert oe.enabled is False
