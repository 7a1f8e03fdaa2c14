"""oneDNN's calls through the compiled shim (``_backend/onednn/direct_calls.py``): a plan whose
arguments stay in the caller's layout runs in one call after its first, with the general
path's results; the general path takes over where the shim cannot run; failures name the call
and the primitive; ``dnnl_sgemm`` gives the same bits through the shim and through ctypes."""
import functools
import threading

import numpy as np
import pytest
import torch

import ember
from ember._backend import choice, native_calls, openmp_kernels
from ember._backend.onednn import capi, direct_calls, gemm, runtime

pytestmark = [
    pytest.mark.skipif(not choice.enabled(choice.ONEDNN),
                       reason="oneDNN is not in use (not installed, or EMBER_ONEDNN=0)"),
    pytest.mark.skipif(not openmp_kernels.available(), reason="no C compiler: the shim cannot be built here"),
]


def _affine_case(rows=128, inner=64, outer=32, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, inner), dtype=np.float32)
    w = rng.standard_normal((outer, inner), dtype=np.float32)
    bias = rng.standard_normal(outer, dtype=np.float32)
    return a, w.T, bias


def _run(plan, a, b, bias):
    out = np.full((a.shape[0], b.shape[1]), np.nan, np.float32)
    plan({capi.ARG_SRC: a, capi.ARG_WEIGHTS: b, capi.ARG_BIAS: bias, capi.ARG_DST: out})
    return out


def test_a_plain_plan_runs_directly_after_its_first_call_with_the_same_bits():
    a, b, bias = _affine_case()
    plan = gemm._affine_plan(a, b)
    assert plan._direct is None
    first = _run(plan, a, b, bias)
    assert isinstance(plan._direct, runtime._DirectRun)
    runs = []
    real = plan._direct.run
    plan._direct.run = lambda *arguments: runs.append(1) or real(*arguments)
    second = _run(plan, a, b, bias)
    assert runs == [1]   # the shim ran it (the general path, had it run instead, gives these bits too)
    assert np.array_equal(first, second)
    want = torch.nn.functional.linear(torch.tensor(a), torch.tensor(b.T), torch.tensor(bias)).numpy()
    np.testing.assert_allclose(second, want, rtol=1e-5, atol=1e-5)
    # new buffers (and a changed input) each call: the memory objects follow them
    a2 = a * -2
    np.testing.assert_allclose(_run(plan, a2, b, bias), a2 @ b + bias, rtol=1e-5, atol=1e-4)


def test_a_plan_with_a_reorder_keeps_the_general_path():
    x = np.random.default_rng(1).standard_normal((2, 8, 10, 10), dtype=np.float32)
    w = np.random.default_rng(2).standard_normal((16, 8, 3, 3), dtype=np.float32)
    with choice.only(choice.ONEDNN):
        out = ember.nn.functional.conv2d(ember.tensor(x), ember.tensor(w), padding=1)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4)
    plans = [p for p in runtime.plans._plans.values()
             if isinstance(p, runtime.Plan) and "convolution" in p.primitive.what]
    assert plans and any(p._direct is False for p in plans)


def test_the_general_path_runs_where_the_shim_refuses_an_argument(monkeypatch):
    """An argument the shim cannot read (a ``BlockedArray``) makes it refuse before it runs
    anything; ``Plan.__call__`` then binds the arguments itself."""
    a, b, bias = _affine_case(seed=3)
    plan = gemm._affine_plan(a, b)
    _run(plan, a, b, bias)
    calls = []

    def refuse(*arguments):
        calls.append(arguments)
        raise TypeError("not an array")
    monkeypatch.setattr(plan._direct, "run", refuse)
    out = _run(plan, a, b, bias)
    assert calls
    np.testing.assert_allclose(out, a @ b + bias, rtol=1e-5, atol=1e-4)
    assert not plan._direct.lock.locked()


def test_a_failure_names_the_call_and_the_primitive(monkeypatch):
    a, b, bias = _affine_case(seed=4)
    plan = gemm._affine_plan(a, b)
    _run(plan, a, b, bias)
    monkeypatch.setattr(plan._direct, "run", lambda *arguments: 256 + 2)   # (2: invalid_arguments)
    with pytest.raises(capi.OneDNNError, match="dnnl_primitive_execute failed for matmul: invalid_arguments"):
        _run(plan, a, b, bias)
    assert not plan._direct.lock.locked()


def test_threads_running_one_plain_plan_at_once_each_get_their_own_results():
    a, b, bias = _affine_case(seed=5)
    plan = gemm._affine_plan(a, b)
    _run(plan, a, b, bias)
    inputs = [a * scale for scale in (1.0, -2.0, 0.5, 3.0)]
    results, errors = {}, []

    def work(k):
        try:
            results[k] = [_run(plan, inputs[k], b, bias) for _ in range(50)]
        except BaseException as error:   # reported below
            errors.append(error)
    workers = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not errors
    for k, outs in results.items():
        for out in outs:
            np.testing.assert_allclose(out, inputs[k] @ b + bias, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("layouts", ["NN", "NT", "TN", "TT"])
def test_sgemm_gives_the_same_bits_through_the_shim_and_through_ctypes(monkeypatch, layouts):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((200, 150), dtype=np.float32)
    b = rng.standard_normal((150, 90), dtype=np.float32)
    a = a if layouts[0] == "N" else np.asfortranarray(a)
    b = b if layouts[1] == "N" else np.asfortranarray(b)
    monkeypatch.setattr(gemm, "_sgemm", [])
    shim = gemm.matmul(a, b)
    assert gemm._sgemm[0].__class__ is functools.partial   # (the shim's call, not the ctypes one)
    monkeypatch.setattr(gemm, "_sgemm", [])
    monkeypatch.setattr(direct_calls, "sgemm", lambda: None)
    through_ctypes = gemm.matmul(a, b)
    assert shim is not None and np.array_equal(shim, through_ctypes)
    want = torch.tensor(a) @ torch.tensor(b)
    np.testing.assert_allclose(shim, want.numpy(), rtol=1e-4, atol=1e-4)


def test_loops_that_return_an_int_give_it_back_both_ways():
    from ember._inductor import _compiler
    source = "#include <stdint.h>\nint difference(int64_t a, int64_t b) { return (int)(a - b); }\n"
    raw = _compiler.load(source, "difference", quiet=True, argtypes=None)
    callers = [native_calls.through_ctypes(raw, "qq", result="i")]
    if native_calls.native("qq", result="i") is not None:
        callers.append(native_calls.bind(raw, "qq", result="i"))
    for call in callers:
        assert call(7, 10) == -3
    with pytest.raises(ValueError, match="returns nothing or an int"):
        native_calls.source("qq", result="d")
