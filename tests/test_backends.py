"""``ember.backends`` against ``torch.backends`` on a CPU-only machine: cpu, cuda (cuBLAS
matmul switches, scaled-dot-product-attention switches), cudnn, mps, openmp and opt_einsum
give torch's defaults with torch's types, keep what is set on them, and reject what torch's
setters reject. Their ``is_available()`` answers are facts about ember."""
import warnings

import pytest
import torch

import ember
from ember._backend import choice, onednn

needs_onednn = pytest.mark.skipif(not choice.enabled(choice.ONEDNN), reason="oneDNN is off (EMBER_ONEDNN=0)")


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


# -- the module machinery: frozen flags, PropModule classes ----------------------------------

def test_switch_modules_are_prop_modules_as_torchs():
    for name in ("cudnn", "mkldnn", "miopen", "opt_einsum", "quantized", "python_native"):
        got, want = getattr(ember.backends, name), getattr(torch.backends, name)
        assert type(got).__name__ == type(want).__name__, name
        assert isinstance(got, ember.backends.PropModule) or name == "quantized"
    assert type(ember.backends).__name__ == type(torch.backends).__name__ == "GenericModule"
    assert type(ember.backends.cudnn.rnn).__name__ == type(torch.backends.cudnn.rnn).__name__


def test_disable_global_flags_forbids_bare_assignment_but_not_flags():
    from ember import backends
    assert backends.flags_frozen() is torch.backends.flags_frozen() is False
    backends.disable_global_flags()
    try:
        assert backends.flags_frozen() is True
        for module, name in ((backends.cudnn, "enabled"), (backends.mkldnn, "deterministic"),
                             (backends.miopen, "immediate"), (backends.opt_einsum, "enabled")):
            with pytest.raises(RuntimeError, match=f"not allowed to set {module.__name__} flags"):
                setattr(module, name, False)
        with backends.cudnn.flags(enabled=False, benchmark=True):
            assert (backends.cudnn.enabled, backends.cudnn.benchmark) == (False, True)
        assert (backends.cudnn.enabled, backends.cudnn.benchmark) == (True, False)
        with pytest.raises(RuntimeError, match="not allowed to set triton DSL flags"):
            backends.python_native.triton.enabled = False
    finally:
        backends._state["allow_nonbracketed_mutation"] = True
    assert backends.flags_frozen() is False


def test_context_prop_calls_getter_and_setter():
    seen = []
    for lib in (ember, torch):
        prop = lib.backends.ContextProp(lambda: "value", seen.append)

        class Holder:
            flag = prop
        holder = Holder()
        holder.flag = 3
        assert holder.flag == "value"
    assert seen == [3, 3]


# -- float32 precision ------------------------------------------------------------------------

def _precisions(lib):
    b = lib.backends
    return [b.fp32_precision, b.cudnn.fp32_precision, b.mkldnn.fp32_precision,
            b.cuda.matmul.fp32_precision, b.cudnn.conv.fp32_precision,
            b.cudnn.rnn.fp32_precision, b.mkldnn.matmul.fp32_precision,
            b.mkldnn.conv.fp32_precision, b.mkldnn.rnn.fp32_precision]


def _set_path(lib, path, value):
    obj = lib.backends
    for part in path[:-1]:
        obj = getattr(obj, part)
    setattr(obj, path[-1], value)


@pytest.mark.parametrize("path,value", [
    (("fp32_precision",), "tf32"), (("fp32_precision",), "ieee"),
    (("mkldnn", "matmul", "fp32_precision"), "bf16"), (("cuda", "matmul", "fp32_precision"), "tf32"),
    (("cudnn", "conv", "fp32_precision"), "ieee"), (("mkldnn", "conv", "fp32_precision"), "tf32"),
    (("cudnn", "rnn", "fp32_precision"), "none"),
])
def test_fp32_precision_falls_back_as_torchs(path, value):
    assert _precisions(ember) == _precisions(torch)
    before = {lib: _precisions(lib) for lib in (ember, torch)}
    paths = [("fp32_precision",), ("mkldnn", "matmul", "fp32_precision"),
             ("mkldnn", "conv", "fp32_precision"), ("cuda", "matmul", "fp32_precision"),
             ("cudnn", "conv", "fp32_precision"), ("cudnn", "rnn", "fp32_precision")]
    saved = {lib: [_get_path(lib, p) for p in paths] for lib in (ember, torch)}
    try:
        for lib in (ember, torch):
            _set_path(lib, path, value)
        assert _precisions(ember) == _precisions(torch) != before[torch]
    finally:
        for lib in (ember, torch):
            for p, v in zip(paths, saved[lib]):
                _set_path(lib, p, v)
    assert _precisions(ember) == _precisions(torch) == before[torch]


def _get_path(lib, path):
    obj = lib.backends
    for part in path:
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("path", [("cuda", "matmul", "allow_tf32"), ("cudnn", "allow_tf32")])
def test_legacy_tf32_switches_are_precisions(path):
    """The legacy switches read and write the new API's settings (torch raises where a program
    mixes the two APIs inconsistently; ember does not check that)."""
    for lib in (ember, torch):
        before = lib.backends.cuda.matmul.allow_tf32, lib.backends.cudnn.allow_tf32
        precision = lib.backends.cuda.matmul if path[0] == "cuda" else lib.backends.cudnn.conv
        try:
            _set_path(lib, path, not before[path[0] == "cudnn"])
            assert precision.fp32_precision == ("tf32" if path[0] == "cuda" else "none")
        finally:
            _set_path(lib, path, before[path[0] == "cudnn"])
        assert precision.fp32_precision == ("ieee" if path[0] == "cuda" else "tf32")
    lib.backends.cuda.matmul.fp32_precision = ember.backends.cuda.matmul.fp32_precision = "none"


@pytest.mark.parametrize("path,value", [
    (("fp32_precision",), "fp32"), (("cuda", "matmul", "fp32_precision"), "bf16"),
    (("cudnn", "fp32_precision"), "foo"), (("cudnn", "conv", "precision"), "tf32"),
])
def test_fp32_precision_rejects_what_torch_rejects(path, value):
    with pytest.raises(Exception) as want:
        _set_path(torch, path, value)
    with pytest.raises(type(want.value)) as got:
        _set_path(ember, path, value)
    assert str(got.value) == str(want.value)


def test_generic_flags_set_and_restore_precision():
    for lib in (ember, torch):
        with lib.backends.flags(fp32_precision="tf32"):
            assert lib.backends.mkldnn.matmul.fp32_precision == "tf32"
        assert lib.backends.fp32_precision == "none"
        assert lib.backends.set_flags(None) == ("none",)


# -- cudnn, mkldnn, miopen, nnpack: set_flags, flags and the other switches ------------------

@needs_onednn
def test_set_flags_returns_torchs_tuples():
    for name in ("cudnn", "mkldnn", "miopen", "opt_einsum"):
        got = getattr(ember.backends, name).set_flags()
        want = getattr(torch.backends, name).set_flags()
        if name == "mkldnn":  # torch reads oneDNN's allow_tf32 as None
            got, want = got[:2] + got[3:], want[:2] + want[3:]
            assert got[0] == ember.backends.mkldnn.is_available()
            got, want = got[1:], want[1:]
        assert got == want, name
    assert ember.backends.nnpack.set_flags(True) == torch.backends.nnpack.set_flags(True) == (True,)


def test_cudnn_extras_are_torchs():
    c, tc = ember.backends.cudnn, torch.backends.cudnn
    assert {d.name for d in c.CUDNN_TENSOR_DTYPES} == {str(d)[6:] for d in tc.CUDNN_TENSOR_DTYPES}
    assert c.depthwise_kernel == tc.depthwise_kernel == "auto"
    assert c.is_acceptable(ember.zeros(1)) is tc.is_acceptable(torch.zeros(1)) is False
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Unknown cuDNN depthwise kernel mode: foo. "
                                               "Expected one of: auto, cudnn, native"):
            lib.backends.cudnn.depthwise_kernel = "foo"
        with lib.backends.cudnn.flags(depthwise_kernel="native"):
            assert lib.backends.cudnn.depthwise_kernel == "native"
        assert lib.backends.cudnn.depthwise_kernel == "auto"


@pytest.mark.parametrize("module,name", [("mkldnn", "deterministic"), ("mkldnn", "allow_tf32"),
                                         ("miopen", "immediate"), ("mkldnn", "enabled")])
def test_other_switches_keep_values_and_reject_non_bools(module, name):
    with pytest.raises(RuntimeError) as want:
        setattr(getattr(torch.backends, module), name, 1)
    mod = getattr(ember.backends, module)
    before = getattr(mod, name)
    with pytest.raises(RuntimeError) as got:
        setattr(mod, name, 1)
    assert str(got.value) == str(want.value)
    flags = {"deterministic": {"deterministic": True}, "allow_tf32": {"allow_tf32": False},
             "immediate": {"immediate": True}, "enabled": {"enabled": False}}[name]
    with mod.flags(**flags):
        assert getattr(mod, name) == flags[name]
    assert getattr(mod, name) == before


def test_nnpack_flags():
    nn = ember.backends.nnpack
    assert nn.is_available() is False  # ember has no NNPACK (torch's CPU build has)
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="set_enabled_NNPACK expects a bool, but got int"):
            lib.backends.nnpack.set_flags(1)
        with lib.backends.nnpack.flags(enabled=False):
            assert lib.backends.nnpack.set_flags(False) == (False,)
        assert lib.backends.nnpack.set_flags(True) == (True,)


@needs_onednn
def test_mkldnn_flags_switch_ember_kernels():
    from ember._backend import choice
    with ember.backends.mkldnn.flags(enabled=False):
        assert choice.enabled(choice.ONEDNN) is False
    assert choice.enabled(choice.ONEDNN) is bool(onednn.available())
    assert ember.backends.mkldnn.is_acl_available() is torch.backends.mkldnn.is_acl_available()


@needs_onednn
def test_mkldnn_verbose_turns_onednns_verbose_on(capfd):
    mk = ember.backends.mkldnn
    assert (mk.VERBOSE_OFF, mk.VERBOSE_ON, mk.VERBOSE_ON_CREATION) == (0, 1, 2)
    with mk.verbose(mk.VERBOSE_OFF) as v:
        assert v is None
    if not onednn.available():
        with pytest.raises(AssertionError, match="Failed to set MKLDNN into verbose mode"):
            mk.verbose(mk.VERBOSE_ON).__enter__()
        return
    x, w = ember.randn(1, 2, 6, 6), ember.randn(3, 2, 3, 3)
    ember.nn.functional.conv2d(x, w)
    capfd.readouterr()
    with mk.verbose(mk.VERBOSE_ON):
        ember.nn.functional.conv2d(x, w)
    inside = capfd.readouterr().out
    ember.nn.functional.conv2d(x, w)
    after = capfd.readouterr().out
    assert "onednn_verbose" in inside and "convolution" in inside
    assert "onednn_verbose" not in after


def test_mkl_is_not_there():
    mkl = ember.backends.mkl
    assert mkl.is_available() is False and (mkl.VERBOSE_OFF, mkl.VERBOSE_ON) == (0, 1)
    assert mkl.verbose(mkl.VERBOSE_OFF).__enter__() is None
    with pytest.raises(AssertionError, match="Failed to set MKL into verbose mode"):
        mkl.verbose(mkl.VERBOSE_ON).__enter__()


def test_libraries_ember_does_not_use_answer_as_torchs():
    b, tb = ember.backends, torch.backends
    for name in ("version", "is_available", "get_max_alg_id"):
        assert getattr(b.cusparselt, name)() == getattr(tb.cusparselt, name)()
    assert b.kleidiai.is_available() is tb.kleidiai.is_available() is False
    assert b.cuda.is_flash_attention_available() is tb.cuda.is_flash_attention_available()
    assert b.cuda.is_ck_sdpa_available() is tb.cuda.is_ck_sdpa_available() is False


def test_mps_queries_raise_as_torchs_without_mps():
    for call in (lambda m: m.is_macos_or_newer(13, 0), lambda m: m.is_macos13_or_newer()):
        with pytest.raises(RuntimeError) as want:
            call(torch.backends.mps)
        with pytest.raises(RuntimeError) as got:
            call(ember.backends.mps)
        assert str(got.value) == str(want.value)
    for name in ("get_name", "get_core_count"):
        with pytest.raises(RuntimeError, match="without MPS backend"):
            getattr(ember.backends.mps, name)()


def test_mha_fastpath_switch_is_torchs_and_takes_the_general_path():
    mha = ember.backends.mha
    assert mha.get_fastpath_enabled() is torch.backends.mha.get_fastpath_enabled() is True
    attn = ember.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = ember.randn(2, 5, 8)
    fast = attn(x, x, x, need_weights=False)[0]
    assert attn._packed_self_attention_applies(x, x, x, None, False, None, False)
    mha.set_fastpath_enabled(False)
    try:
        assert mha.get_fastpath_enabled() is False
        assert not attn._packed_self_attention_applies(x, x, x, None, False, None, False)
        slow = attn(x, x, x, need_weights=False)[0]
    finally:
        mha.set_fastpath_enabled(True)
    assert ember.allclose(fast, slow, atol=1e-6)


def test_quantized_engine_as_torchs():
    q, tq = ember.backends.quantized, torch.backends.quantized
    assert q.engine == tq.engine and q.supported_engines == tq.supported_engines
    for value in ("foo", "none"):
        with pytest.raises(RuntimeError) as want:
            tq.engine = value
        with pytest.raises(RuntimeError) as got:
            q.engine = value
        assert str(got.value) == str(want.value)
    for lib in (ember, torch):
        before = lib.backends.quantized.engine
        lib.backends.quantized.engine = "qnnpack"
        assert lib.backends.quantized.engine == "qnnpack"
        lib.backends.quantized.engine = before
        with pytest.raises(RuntimeError, match="Assignment not supported"):
            lib.backends.quantized.supported_engines = []


def test_python_native_as_torchs_without_dsls():
    pn, tpn = ember.backends.python_native, torch.backends.python_native
    assert pn.all_dsls == tpn.all_dsls and pn.available_dsls == tpn.available_dsls == []
    assert repr(pn.triton) == repr(tpn.triton) == "DSLController(triton, unavailable, enabled)"
    assert pn.get_dsl_operations("triton") == tpn.get_dsl_operations("triton") == []
    with pn.triton.disabled():
        assert pn.is_dsl_disabled("triton") and not pn.triton.enabled
    assert pn.triton.enabled and not pn.is_dsl_disabled("triton")
    with pn.operations_disabled("scaled_mm"):
        assert pn.is_operation_disabled("scaled_mm")
    assert not pn.is_operation_disabled("scaled_mm")
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        pn.nothing


# -- cuda: libraries, workspace, plan cache, attention checks --------------------------------

@pytest.mark.parametrize("fn,arg", [
    ("preferred_blas_library", None), ("preferred_blas_library", "cublas"),
    ("preferred_blas_library", "hipblas"), ("preferred_blas_library", "default"),
    ("preferred_blas_library", "cublaslt"), ("preferred_blas_library", "zz"),
    ("preferred_blas_library", 5), ("preferred_linalg_library", None),
    ("preferred_linalg_library", "cusolver"), ("preferred_linalg_library", "x"),
    ("preferred_linalg_library", 3), ("preferred_rocm_fa_library", None),
    ("preferred_rocm_fa_library", "x"), ("preferred_rocm_fa_library", 5),
])
def test_preferred_libraries_as_torchs_cpu_build(fn, arg):
    try:
        want = getattr(torch.backends.cuda, fn)(arg)
    except Exception as e:
        with pytest.raises(type(e)) as got:
            getattr(ember.backends.cuda, fn)(arg)
        assert str(got.value) == str(e).replace("PyTorch", "ember")
        return
    got = getattr(ember.backends.cuda, fn)(arg)
    assert repr(got)[1:].split(":")[0] == repr(want)[1:].split(":")[0] and int(got) == int(want)


def test_sdpa_params_and_can_use_checks():
    q = ember.zeros(1, 2, 3, 4)
    p = ember.backends.cuda.SDPAParams(q, q, q, None, 0.0, False, False)
    assert (p.query is q, p.attn_mask, p.dropout, p.is_causal, p.enable_gqa) == \
        (True, None, 0.0, False, False)
    tq = torch.zeros(1, 2, 3, 4)
    tp = torch.backends.cuda.SDPAParams(tq, tq, tq, None, 0.0, False, False)
    for name in ("can_use_flash_attention", "can_use_efficient_attention", "can_use_cudnn_attention"):
        assert getattr(ember.backends.cuda, name)(p) is getattr(torch.backends.cuda, name)(tp) is False
    with pytest.raises(TypeError, match="incompatible constructor arguments"):
        ember.backends.cuda.SDPAParams(1, 2, 3, 4, 5, 6, 7)
    assert ember.backends.cuda.SDPAParams.__name__ == "SDPAParams"


def test_math_sdp_reduction_switch():
    for lib in (ember, torch):
        cuda = lib.backends.cuda
        assert cuda.fp16_bf16_reduction_math_sdp_allowed() is False
        cuda.allow_fp16_bf16_reduction_math_sdp(True)
        assert cuda.fp16_bf16_reduction_math_sdp_allowed() is True
        cuda.allow_fp16_bf16_reduction_math_sdp(False)
        with pytest.raises(RuntimeError, match="expects a bool, but got int"):
            cuda.allow_fp16_bf16_reduction_math_sdp(1)


def test_cufft_plan_cache_without_a_gpu():
    if ember.cuda.is_available():  # pragma: no cover
        pytest.skip("a GPU machine")
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=r"expected 0 <= device index < 0, but got device "
                                               "with index 0"):
            lib.backends.cuda.cufft_plan_cache[0]
        with pytest.raises(AssertionError):
            lib.backends.cuda.cufft_plan_cache.max_size


def test_build_constants_and_legacy_format():
    assert ember.has_lapack is torch.has_lapack is True
    assert ember.has_spectral is hasattr(ember, "fft")  # (False until ember.fft exists)
    assert ember.has_mkl is False  # (torch's x86 build links MKL; ember does not)
    assert ember.has_openmp is ember.backends.openmp.is_available()
    assert ember.legacy_contiguous_format is ember.contiguous_format
    assert repr(ember.legacy_contiguous_format) == repr(torch.legacy_contiguous_format).replace(
        "torch", "ember")
