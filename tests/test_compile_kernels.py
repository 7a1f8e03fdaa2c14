"""ember.compile's generated kernels (``ember._inductor``): fused pointwise chains give torch's
values and gradients, the benchmark models compile with kernels and match torch, kernels are
cached on disk across processes, and a missing C compiler falls back to the unfused ops."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import ember
from ember._inductor import _compiler, compiler_available, config, counters, kernels_of
from ember._inductor._kernel import _Plan

pytestmark = pytest.mark.skipif(not compiler_available(), reason="no C compiler")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module", autouse=True)
def kernel_cache(tmp_path_factory):
    """A cache directory of this module's own, shared by its tests."""
    path = str(tmp_path_factory.mktemp("kernels"))
    old = os.environ.get("EMBER_KERNEL_CACHE")
    os.environ["EMBER_KERNEL_CACHE"] = path
    yield path
    if old is None:
        del os.environ["EMBER_KERNEL_CACHE"]
    else:
        os.environ["EMBER_KERNEL_CACHE"] = old


def _graph_modules(compiled):
    """The graph modules a compiled function runs (forward and backward graphs of an
    ahead-of-time backward)."""
    out = []
    for entry in compiled._ember_compiled.entries if hasattr(compiled, "_ember_compiled") \
            else compiled._compiled.entries:
        run = entry.run
        if getattr(run, "aot", False):
            out += [run.forward_graph, run.backward_graph]
            run = run.replay
        out.append(getattr(run, "fused", None) or run.__self__)
    return out


def _kernels_run(compiled):
    """The kernels of ``compiled`` that ran generated code (not their eager fallback)."""
    return [k for gm in _graph_modules(compiled) for k in kernels_of(gm)
            if any(isinstance(p, _Plan) for p in k._plans.values())]


def _pair(*shape, dtype=np.float32, low=-2.0, high=2.0, seed=0):
    rng = np.random.default_rng(seed + len(shape))
    data = rng.uniform(low, high, size=shape).astype(dtype)
    return ember.tensor(data), torch.tensor(data)


def _assert_close(got, expected, atol=1e-5, rtol=1.3e-6):
    got = got.detach().numpy() if isinstance(got, ember.Tensor) else np.asarray(got)
    expected = expected.detach().numpy()
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol)


def _check_fused(fn, inputs, atol=1e-5, rtol=1.3e-6, kernels=1):
    """``fn(lib, *xs)`` compiled (no grad) against torch, replayed through its kernels."""
    compiled = ember.compile(lambda *xs: fn(ember, *xs))
    ours = [a for a, _ in inputs]
    theirs = [b for _, b in inputs]
    with ember.no_grad():
        compiled(*ours)              # the capture
        got = compiled(*ours)        # the kernels' first run specializes and compiles
        got = compiled(*ours)
    expected = fn(torch, *theirs)
    if not isinstance(expected, tuple):
        got, expected = (got,), (expected,)
    for g, e in zip(got, expected):
        _assert_close(g, e, atol, rtol)
    assert len(_kernels_run(compiled)) == kernels
    return compiled


def _gelu_tanh(lib, x):
    return lib.nn.functional.gelu(x, approximate="tanh")


UNARY = {
    "neg": lambda lib, x: -x,
    "exp": lambda lib, x: x.exp(),
    "log": lambda lib, x: (x * x + 0.25).log(),
    "tanh": lambda lib, x: x.tanh(),
    "sigmoid": lambda lib, x: lib.sigmoid(x),
    "relu": lambda lib, x: lib.nn.functional.relu(x),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "gelu_tanh": _gelu_tanh,
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "sqrt": lambda lib, x: (x * x).sqrt(),
    "rsqrt": lambda lib, x: (x * x + 0.5).rsqrt(),
    "abs": lambda lib, x: x.abs(),
    "square": lambda lib, x: x.pow(2),
    "cube": lambda lib, x: x ** 3,
    "pow_fraction": lambda lib, x: (x * x + 1).pow(1.7),
    "rpow": lambda lib, x: 2.0 ** x,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_chain(name):
    op = UNARY[name]
    _check_fused(lambda lib, x, y: op(lib, x * 1.5 + y) * y - 0.25,
                 [_pair(6, 33), _pair(6, 33, seed=1)])


BINARY = {
    "add_alpha": lambda lib, a, b: lib.add(a, b, alpha=-0.5),
    "sub": lambda lib, a, b: a - b,
    "rsub": lambda lib, a, b: 1 - a * b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / (b.abs() + 0.5),
    "gt": lambda lib, a, b: (a > b) * a,
    "lt": lambda lib, a, b: (a < 0.5) * b,
    "ge": lambda lib, a, b: (a >= b).logical_not() * b,
    "le": lambda lib, a, b: lib.where(a <= b, a, b * 2),
    "eq": lambda lib, a, b: lib.where((a * 0) == 0, a + b, b),
    "ne": lambda lib, a, b: (a != b) * (a - b),
    "where": lambda lib, a, b: lib.where(a > 0, a.exp(), b.tanh()),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_chain(name):
    op = BINARY[name]
    _check_fused(lambda lib, x, y: op(lib, x + 0.125, y) * 3 + x,
                 [_pair(5, 40), _pair(5, 40, seed=1)])


def test_float64_chain_every_op():
    def chain(lib, x, y):
        F = lib.nn.functional
        a = F.gelu(x * y) + F.silu(y) - lib.sigmoid(x) * (x * 0.5).tanh()
        b = lib.where(a > 0, a.exp(), -a) / (y.abs() + 1) + _gelu_tanh(lib, x).pow(2)
        return (b * b + 0.5).rsqrt() + F.relu(b - 0.25).sqrt() + (x * x + 1).log()
    _check_fused(chain, [_pair(7, 19, dtype=np.float64), _pair(7, 19, dtype=np.float64, seed=3)],
                 atol=1e-12, rtol=1e-12)


def test_broadcasting_scalars_and_strided_inputs():
    x, tx = _pair(4, 6, 8)
    col, tcol = _pair(6, 1, seed=2)
    s, ts = _pair(seed=3)                       # a 0-d tensor
    base, tbase = _pair(8, 4, seed=4)
    w, tw = base.t(), tbase.t()                 # (4, 8), transposed
    row, trow = _pair(16, seed=5)
    step, tstep = row[::2], trow[::2]           # (8,), stride 2

    def fn(lib, x, col, s, w, step):
        return ((x * col + s) * w.unsqueeze(1) - step).tanh() * 2.5 + s
    compiled = ember.compile(lambda *a: fn(ember, *a))
    with ember.no_grad():
        for _ in range(3):
            got = compiled(x, col, s, w, step)
    _assert_close(got, fn(torch, tx, tcol, ts, tw, tstep))
    assert _kernels_run(compiled)


def test_mixed_dtypes_promote_as_torch():
    x32, tx32 = _pair(8, 9)
    y64, ty64 = _pair(8, 9, dtype=np.float64, seed=1)
    s64, ts64 = _pair(dtype=np.float64, seed=2)         # 0-d float64: does not promote

    def fn(lib, x, y, s):
        mixed = (x * 2 + y).exp() - y
        kept = (x - s).sigmoid() * s
        mask = (x > 0) * x + (y < 0)                    # bool * float, float + bool
        return mixed, kept, mask
    _check_fused(fn, [(x32, tx32), (y64, ty64), (s64, ts64)], atol=1e-6, kernels=3)


@pytest.mark.parametrize("case", ["last", "last_keepdim", "leading", "all", "mean_middle"])
def test_trailing_reduction(case):
    x, tx = _pair(6, 10, 12)
    y, ty = _pair(10, 12, seed=1)
    reduce = {"last": lambda v: v.sum(-1),
              "last_keepdim": lambda v: v.mean(dim=2, keepdim=True),
              "leading": lambda v: v.sum((0, 1)),
              "all": lambda v: v.sum(),
              "mean_middle": lambda v: v.mean(1)}[case]

    def fn(lib, x, y):
        z = (x - y) * (x - y)
        return z + 1, reduce(z * 0.5)
    _check_fused(fn, [(x, tx), (y, ty)], atol=1e-5, rtol=1e-5)


AOT = {"aot_backward": True}


def _trained(fn, inputs, steps=3):
    """Values and input gradients of ``fn(ember, ...)`` compiled (default backend, with its
    ahead-of-time backward) over ``steps`` calls, the last one's."""
    compiled = ember.compile(lambda *xs: fn(ember, *xs), options=AOT)
    for _ in range(steps):
        for x in inputs:
            x.grad = None
        out = compiled(*inputs)
        out.sum().backward()
    return compiled, out


def test_gradients_of_a_fused_chain():
    x, tx = _pair(16, 24)
    y, ty = _pair(16, 24, seed=1)
    b, tb = _pair(24, seed=2)
    for t in (x, y, b, tx, ty, tb):
        t.requires_grad_()

    def fn(lib, x, y, b):
        F = lib.nn.functional
        h = F.gelu(x * y + b) * lib.sigmoid(y) - F.silu(x - b) / 2
        return lib.where(h > 0, h, 0.1 * h).tanh() + _gelu_tanh(lib, h) * F.relu(y)
    compiled, out = _trained(fn, [x, y, b])
    expected = fn(torch, tx, ty, tb)
    expected.sum().backward()
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    _assert_close(out, expected)
    for got, want in ((x, tx), (y, ty), (b, tb)):
        _assert_close(got.grad, want.grad, atol=2e-5, rtol=1e-5)
    run = compiled._ember_compiled.entries[0].run
    assert [k for k in kernels_of(run.forward_graph) if k._plans]
    assert [k for k in kernels_of(run.backward_graph) if k._plans]


def _models(lib):
    from benchmarks.compile_steps import _gpt_block_class
    lib.manual_seed(0)
    nn = lib.nn
    mlp = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                        nn.Linear(32, 5))
    return {"gpt_block": (_gpt_block_class(lib)(32, 4), (2, 8, 32)),
            "mlp": (mlp, (12, 20))}


@pytest.mark.parametrize("name", ["gpt_block", "mlp"])
def test_benchmark_models_match_torch(name):
    model, shape = _models(ember)[name]
    tmodel, _ = _models(torch)[name]
    tmodel.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in model.state_dict().items()})
    x, tx = _pair(*shape, seed=7)
    compiled = ember.compile(model, options=AOT)
    for _ in range(3):
        model.zero_grad()
        out = compiled(x)
        out.pow(2).mean().backward()
    tout = tmodel(tx)
    tout.pow(2).mean().backward()
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    _assert_close(out, tout, atol=1e-5, rtol=1e-4)
    tparams = dict(tmodel.named_parameters())
    for pname, p in model.named_parameters():
        _assert_close(p.grad, tparams[pname].grad, atol=1e-5, rtol=1e-4)
    # its backward graph calls the nodes' array kernels (no pointwise chain left to fuse)
    assert "run_node_arrays(" in compiled._compiled.entries[-1].run.backward_graph.code
    with ember.no_grad():                    # inference: the default backend's forward
        inference = ember.compile(model)
        for _ in range(2):
            got = inference(x)
    _assert_close(got, tout, atol=1e-5, rtol=1e-4)
    replayed = ember.compile(model, options={"aot_backward": False})   # eager autograd
    for _ in range(3):
        model.zero_grad()
        out = replayed(x)
        out.pow(2).mean().backward()
    assert out.grad_fn.name() != "CompiledFunctionBackward"
    for pname, p in model.named_parameters():
        _assert_close(p.grad, tparams[pname].grad, atol=1e-5, rtol=1e-4)


_PROBE = """
import json, ember
from ember._inductor import counters
fn = lambda x, y: ((x * y).sigmoid() - y).tanh() * 0.75 + x
x, y = ember.randn(5, 7), ember.randn(5, 7)
with ember.no_grad():
    fn(x, y)    # (ember's own loops, which the ops run eagerly, built before the count starts)
at_start = dict(counters)
f = ember.compile(fn)
with ember.no_grad():
    f(x, y); f(x, y)
print(json.dumps({k: counters[k] - at_start[k] for k in counters}))
"""


def test_kernels_are_cached_across_processes(tmp_path):
    env = dict(os.environ, EMBER_KERNEL_CACHE=str(tmp_path),
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src"), ROOT]))
    runs = [json.loads(subprocess.run([sys.executable, "-c", _PROBE], env=env,
                                      capture_output=True, text=True, timeout=300,
                                      check=True).stdout.splitlines()[-1])
            for _ in range(2)]
    assert runs[0]["kernels_compiled"] == 1 and runs[0]["kernels_loaded"] == 0
    assert runs[1]["kernels_compiled"] == 0 and runs[1]["kernels_loaded"] == 1
    assert any(name.endswith(".so") for name in os.listdir(tmp_path))


def test_a_missing_compiler_falls_back_with_one_warning(monkeypatch):
    monkeypatch.setattr(config, "cc", "/nonexistent/ember-test-cc")
    monkeypatch.setattr(_compiler, "_warned", set())
    x, tx = _pair(3, 11)
    y, ty = _pair(3, 11, seed=1)

    def fn(lib, x, y):
        return (x * y + 1.25).exp() - y * 3
    compiled = ember.compile(lambda *a: fn(ember, *a))
    with pytest.warns(RuntimeWarning, match="no C compiler found"):
        with ember.no_grad():
            compiled(x, y)
            compiled(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ember.no_grad():
            got = compiled(x, y)
            other = ember.compile(lambda a: (a * 2).sigmoid() * a)
            other(x)
            other(x)
    _assert_close(got, fn(torch, tx, ty))
    assert not _kernels_run(compiled)
    assert kernels_of(_graph_modules(compiled)[0])      # the kernel is there, unbuilt


def test_compile_time_is_counted(tmp_path, monkeypatch):
    """The compiler's time goes into ``compile_seconds`` once per kernel built (a fake clock
    that advances 2.5 s a reading: the count, not the machine's speed, is under test); a
    kernel loaded from the cache adds nothing."""
    readings = iter(range(1000))
    monkeypatch.setattr(_compiler, "time",
                        type("FakeTime", (), {"perf_counter": staticmethod(
                            lambda: 2.5 * next(readings))}))
    monkeypatch.setenv("EMBER_KERNEL_CACHE", str(tmp_path))    # nothing cached: one build
    monkeypatch.setattr(_compiler, "_loaded", {})
    before = dict(counters)
    _check_fused(lambda lib, x: (x * 0.3 - 1).exp() * x + 0.0625, [_pair(2, 3, seed=11)])
    assert counters["kernels_compiled"] - before["kernels_compiled"] == 1
    assert counters["compile_seconds"] - before["compile_seconds"] == 2.5
    monkeypatch.setattr(_compiler, "_loaded", {})              # a new process, the same cache
    before = dict(counters)
    _check_fused(lambda lib, x: (x * 0.3 - 1).exp() * x + 0.0625, [_pair(2, 3, seed=11)])
    assert counters["kernels_loaded"] - before["kernels_loaded"] == 1
    assert counters["compile_seconds"] == before["compile_seconds"]


def test_tangents_and_autocast_run_the_ops_eagerly():
    """A kernel computes no forward-mode tangent and takes no autocast dtype: such calls run
    the group's ops (torch's values and tangents)."""
    import ember.autograd.forward_ad as fwad
    x, tx = _pair(4, 9)
    v, tv = _pair(4, 9, seed=1)

    def fn(lib, x):
        return (x * 0.5).sigmoid() * x - 1
    compiled = ember.compile(lambda a: fn(ember, a))
    with ember.no_grad():
        compiled(x)
        compiled(x)
    assert _kernels_run(compiled)
    with fwad.dual_level():
        out = compiled(fwad.make_dual(x, v))
        primal, tangent = fwad.unpack_dual(out)
    _, expected = torch.func.jvp(lambda a: fn(torch, a), (tx,), (tv,))
    _assert_close(primal, fn(torch, tx))
    _assert_close(tangent, expected)
    with ember.no_grad(), ember.autocast("cpu", dtype=ember.bfloat16):
        got = compiled(x)
        want = fn(ember, x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_options_choose_the_backward_and_the_kernels():
    """``options``: ``aot_backward`` and ``fuse`` per compiled function; torch's other
    inductor options are accepted and do nothing."""
    x, tx = _pair(6, 10)
    x.requires_grad_()
    tx.requires_grad_()

    def fn(lib, a):
        return (a * 2).sigmoid() * a + 1
    expected = fn(torch, tx)
    expected.sum().backward()
    for options, node, kernels in (({"aot_backward": True}, "CompiledFunctionBackward", True),
                                   ({"aot_backward": True, "fuse": False},
                                    "CompiledFunctionBackward", False),
                                   ({"aot_backward": False}, "AddBackward0", False),
                                   ({"epilogue_fusion": True}, "CompiledFunctionBackward", True)):
        compiled = ember.compile(lambda a: fn(ember, a), options=options)
        for _ in range(3):
            x.grad = None
            out = compiled(x)
            out.sum().backward()
        assert out.grad_fn.name() == node
        _assert_close(out, expected)
        _assert_close(x.grad, tx.grad)
        assert bool(_kernels_run(compiled)) == kernels


def test_an_unwritable_cache_falls_back_with_a_warning(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("EMBER_KERNEL_CACHE", str(blocker / "kernels"))   # under a file
    monkeypatch.setattr(_compiler, "_warned", set())
    x, tx = _pair(3, 13, seed=9)

    def fn(lib, a):
        return (a * 0.375 + 0.5).exp() * a - 2.25
    compiled = ember.compile(lambda a: fn(ember, a))
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        with ember.no_grad():
            compiled(x)
            got = compiled(x)
    _assert_close(got, fn(torch, tx))
    assert not _kernels_run(compiled)


def test_a_dynamic_graph_builds_one_kernel_for_every_size():
    def fn(lib, a, b):
        return (a - b).abs() * 0.625 + (b * 1.75).sigmoid()
    compiled = ember.compile(lambda a, b: fn(ember, a, b))
    before = counters["kernels_compiled"] + counters["kernels_loaded"]
    with ember.no_grad():
        for rows in (5, 7, 9, 11, 7):
            (x, tx), (y, ty) = _pair(rows, 21, seed=rows), _pair(rows, 21, seed=rows + 1)
            got = compiled(x, y)
            _assert_close(got, fn(torch, tx, ty))
    assert counters["kernels_compiled"] + counters["kernels_loaded"] - before == 1
    assert _kernels_run(compiled)
