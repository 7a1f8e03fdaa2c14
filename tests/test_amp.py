"""Mixed precision: autocast's op table, state and decorators, training under autocast, and
GradScaler, each against real torch."""
import pickle
import threading
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.amp import op_lists
from ember.amp.policy import registered_policy

RNG = np.random.default_rng(0)


def _arr(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape)


def _spd(n=3):
    a = RNG.uniform(-1, 1, size=(n, n))
    return a @ a.T + n * np.eye(n)


def _pos(*shape):
    return RNG.uniform(0.1, 0.9, size=shape)


def _F(lib):
    return lib.nn.functional


def _long(lib, values):
    return lib.tensor(values, dtype=lib.int64)


# name in op_lists -> (fn(lib, *leaves), [input arrays]); every listed op has an entry
CASES = {
    # lower precision
    "mm": (lambda L, a, b: L.mm(a, b), [_arr(3, 4), _arr(4, 5)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [_arr(2, 3, 4), _arr(2, 4, 5)]),
    "matmul": (lambda L, a, b: L.matmul(a, b), [_arr(2, 3, 4), _arr(4, 5)]),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b), [_arr(3, 5), _arr(3, 4), _arr(4, 5)]),
    "addbmm": (lambda L, c, a, b: L.addbmm(c, a, b), [_arr(3, 5), _arr(2, 3, 4), _arr(2, 4, 5)]),
    "baddbmm": (lambda L, c, a, b: L.baddbmm(c, a, b), [_arr(2, 3, 5), _arr(2, 3, 4), _arr(2, 4, 5)]),
    "einsum": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), [_arr(3, 4), _arr(4, 5)]),
    "tensordot": (lambda L, a, b: L.tensordot(a, b, 1), [_arr(3, 4), _arr(4, 5)]),
    "inner": (lambda L, a, b: L.inner(a, b), [_arr(3, 4), _arr(2, 4)]),
    "nn.functional.linear": (lambda L, x, w, b: _F(L).linear(x, w, b), [_arr(3, 4), _arr(5, 4), _arr(5)]),
    "nn.functional.prelu": (lambda L, x, w: _F(L).prelu(x, w), [_arr(2, 3, 4), _pos(3)]),
    "prelu": (lambda L, x, w: L.prelu(x, w), [_arr(2, 3), _pos(3)]),
    "nn.functional.conv1d": (lambda L, x, w, b: _F(L).conv1d(x, w, b), [_arr(1, 2, 5), _arr(3, 2, 2), _arr(3)]),
    "nn.functional.conv2d": (lambda L, x, w, b: _F(L).conv2d(x, w, b, padding=1),
                             [_arr(1, 2, 4, 4), _arr(3, 2, 2, 2), _arr(3)]),
    "nn.functional.conv3d": (lambda L, x, w: _F(L).conv3d(x, w), [_arr(1, 2, 3, 3, 3), _arr(3, 2, 2, 2, 2)]),
    "nn.functional.conv_transpose1d": (lambda L, x, w: _F(L).conv_transpose1d(x, w), [_arr(1, 2, 5), _arr(2, 3, 2)]),
    "nn.functional.conv_transpose2d": (lambda L, x, w: _F(L).conv_transpose2d(x, w, stride=2),
                                       [_arr(1, 2, 3, 3), _arr(2, 3, 2, 2)]),
    "nn.functional.conv_transpose3d": (lambda L, x, w: _F(L).conv_transpose3d(x, w),
                                       [_arr(1, 2, 2, 2, 2), _arr(2, 3, 2, 2, 2)]),
    "linalg.vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), [_arr(3, 4), _arr(3, 4)]),
    "nn.functional.scaled_dot_product_attention": (
        lambda L, q, k, v: _F(L).scaled_dot_product_attention(q, k, v),
        [_arr(1, 2, 3, 4), _arr(1, 2, 3, 4), _arr(1, 2, 3, 4)]),
    # float32
    "prod": (lambda L, x: L.prod(x, 1), [_arr(3, 4, low=0.5, high=1.5)]),
    "quantile": (lambda L, x: L.quantile(x, 0.3, dim=1), [_arr(3, 5)]),
    "nanquantile": (lambda L, x: L.nanquantile(x, 0.6), [_arr(7)]),
    "cdist": (lambda L, a, b: L.cdist(a, b), [_arr(3, 2), _arr(4, 2)]),
    "trace": (lambda L, x: L.trace(x), [_arr(3, 3)]),
    "cholesky": (lambda L, x: L.cholesky(x), [_spd()]),
    "inverse": (lambda L, x: L.inverse(x), [_spd()]),
    "svd": (lambda L, x: L.svd(x)[1], [_spd()]),
    "qr": (lambda L, x: L.qr(x)[1].abs(), [_spd()]),
    "linalg.inv": (lambda L, x: L.linalg.inv(x), [_spd()]),
    "linalg.inv_ex": (lambda L, x: L.linalg.inv_ex(x)[0], [_spd()]),
    "linalg.solve": (lambda L, a, b: L.linalg.solve(a, b), [_spd(), _arr(3, 2)]),
    "linalg.cholesky": (lambda L, x: L.linalg.cholesky(x), [_spd()]),
    "linalg.cholesky_ex": (lambda L, x: L.linalg.cholesky_ex(x)[0], [_spd()]),
    "linalg.svd": (lambda L, x: L.linalg.svd(x)[1], [_spd()]),
    "linalg.svdvals": (lambda L, x: L.linalg.svdvals(x), [_spd()]),
    "linalg.qr": (lambda L, x: L.linalg.qr(x)[1].abs(), [_spd()]),
    "linalg.eigh": (lambda L, x: L.linalg.eigh(x)[0], [_spd()]),
    "linalg.eigvalsh": (lambda L, x: L.linalg.eigvalsh(x), [_spd()]),
    "linalg.matrix_rank": (lambda L, x: L.linalg.matrix_rank(x), [_spd()]),
    "linalg.lstsq": (lambda L, a, b: L.linalg.lstsq(a, b)[0], [_spd(), _arr(3, 2)]),
    "linalg.cond": (lambda L, x: L.linalg.cond(x), [_spd()]),
    "linalg.householder_product": (lambda L, a, t: L.linalg.householder_product(a, t), [_arr(4, 3), _arr(2)]),
    "orgqr": (lambda L, a, t: L.orgqr(a, t), [_arr(4, 3), _arr(3)]),
    "linalg.tensorinv": (lambda L, x: L.linalg.tensorinv(x, 1), [_spd()]),
    "linalg.tensorsolve": (lambda L, a, b: L.linalg.tensorsolve(a, b), [_spd(), _arr(3)]),
    "lu_solve": (lambda L, a, b: L.lu_solve(b, *L.linalg.lu_factor(a.float())), [_spd(), _arr(3, 2)]),
    "nn.functional.avg_pool3d": (lambda L, x: _F(L).avg_pool3d(x, 2), [_arr(1, 1, 4, 4, 4)]),
    "nn.functional.max_pool3d": (lambda L, x: _F(L).max_pool3d(x, 2), [_arr(1, 1, 4, 4, 4)]),
    "nn.functional.max_unpool1d": (
        lambda L, x: _F(L).max_unpool1d(x, _long(L, [[[1, 2]]]), 2), [_arr(1, 1, 2)]),
    "nn.functional.max_unpool2d": (
        lambda L, x: _F(L).max_unpool2d(x, _long(L, [[[[0, 3], [9, 14]]]]), 2), [_arr(1, 1, 2, 2)]),
    "nn.functional.grid_sample": (lambda L, x, g: _F(L).grid_sample(x, g, align_corners=False),
                                  [_arr(1, 1, 3, 3), _arr(1, 2, 2, 2, low=-0.8, high=0.8)]),
    "nn.functional.pad": (lambda L, x: _F(L).pad(x, (1, 1), mode="reflect"), [_arr(1, 2, 4)]),
    "nn.functional.binary_cross_entropy": (lambda L, x, y: _F(L).binary_cross_entropy(x, y), [_pos(4), _pos(4)]),
    "nn.functional.binary_cross_entropy_with_logits": (
        lambda L, x, y: _F(L).binary_cross_entropy_with_logits(x, y), [_arr(4), _pos(4)]),
    "nn.functional.mse_loss": (lambda L, x, y: _F(L).mse_loss(x, y), [_arr(4), _arr(4)]),
    "nn.functional.l1_loss": (lambda L, x, y: _F(L).l1_loss(x, y), [_arr(4), _arr(4)]),
    "nn.functional.smooth_l1_loss": (lambda L, x, y: _F(L).smooth_l1_loss(x, y), [_arr(4), _arr(4)]),
    "nn.functional.huber_loss": (lambda L, x, y: _F(L).huber_loss(x, y), [_arr(4), _arr(4)]),
    "nn.functional.nll_loss": (lambda L, x: _F(L).nll_loss(x, _long(L, [0, 1, 3])), [_arr(3, 4)]),
    "nn.functional.cross_entropy": (lambda L, x: _F(L).cross_entropy(x, _long(L, [0, 1, 3])), [_arr(3, 4)]),
    "nn.functional.kl_div": (lambda L, x, y: _F(L).kl_div(x, y, reduction="batchmean"), [_arr(3, 2), _pos(3, 2)]),
    "nn.functional.poisson_nll_loss": (lambda L, x, y: _F(L).poisson_nll_loss(x, y), [_arr(4), _pos(4)]),
    "nn.functional.ctc_loss": (
        lambda L, x: _F(L).ctc_loss(x, _long(L, [[1, 2]]), _long(L, [5]), _long(L, [2])),
        [_arr(5, 1, 3, low=-3.0, high=-0.1)]),
    "nn.functional.cosine_embedding_loss": (
        lambda L, a, b: _F(L).cosine_embedding_loss(a, b, _long(L, [1, -1, 1])), [_arr(3, 4), _arr(3, 4)]),
    "nn.functional.hinge_embedding_loss": (
        lambda L, x: _F(L).hinge_embedding_loss(x, L.tensor([1.0, -1.0, 1.0])), [_arr(3)]),
    "nn.functional.margin_ranking_loss": (
        lambda L, a, b: _F(L).margin_ranking_loss(a, b, L.tensor([1.0, -1.0, 1.0])), [_arr(3), _arr(3)]),
    "nn.functional.soft_margin_loss": (
        lambda L, x: _F(L).soft_margin_loss(x, L.tensor([1.0, -1.0, 1.0])), [_arr(3)]),
    "nn.functional.triplet_margin_loss": (
        lambda L, a, p, n: _F(L).triplet_margin_loss(a, p, n), [_arr(3, 4), _arr(3, 4), _arr(3, 4)]),
    "nn.functional.multi_margin_loss": (
        lambda L, x: _F(L).multi_margin_loss(x, _long(L, [0, 1, 3])), [_arr(3, 4)]),
    "nn.functional.multilabel_margin_loss": (
        lambda L, x: _F(L).multilabel_margin_loss(x, _long(L, [[0, 1, -1, 0]] * 3)), [_arr(3, 4)]),
    # promote
    "cat": (lambda L, a, b: L.cat([a, b.bfloat16()]), [_arr(2), _arr(3)]),
    "stack": (lambda L, a, b: L.stack([a.bfloat16(), b]), [_arr(2), _arr(2)]),
    "index_copy": (lambda L, a, b: L.index_copy(a.bfloat16(), 0, _long(L, [0, 2]), b), [_arr(3, 2), _arr(2, 2)]),
    # native: torch's own kernel, no autocast inside
    "nn.functional.bilinear": (lambda L, a, b, w: _F(L).bilinear(a, b, w),
                               [_arr(3, 4), _arr(3, 2), _arr(5, 4, 2)]),
    "nn.functional.adaptive_avg_pool1d": (lambda L, x: _F(L).adaptive_avg_pool1d(x, 3), [_arr(1, 2, 5)]),
    "nn.functional.adaptive_avg_pool2d": (lambda L, x: _F(L).adaptive_avg_pool2d(x, 2), [_arr(1, 1, 5, 5)]),
    "nn.functional.interpolate": (
        lambda L, x: _F(L).interpolate(x, scale_factor=2, mode="bilinear"), [_arr(1, 1, 3, 3)]),
}

def _resolve(name):
    obj = ember
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _leaves(lib, arrays):
    return [lib.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().float().numpy() if t.is_floating_point() else t.detach().numpy()
    return t.detach().float().numpy() if t.is_floating_point() else t.detach().numpy()


def _close(e, t, what, atol=3e-2, rtol=3e-2):
    scale = max(1.0, float(np.abs(_np(t)).max(initial=0)))
    np.testing.assert_allclose(_np(e), _np(t), atol=atol * scale, rtol=rtol, err_msg=what)


def test_table_matches_the_decorators():
    for name, policy in op_lists.POLICY_OF.items():
        assert registered_policy(_resolve(name)) == policy, name
    assert set(CASES) == set(op_lists.POLICY_OF)


def _run_case(lib, name, grad=True):
    fn, arrays = CASES[name]
    leaves = _leaves(lib, arrays)
    with lib.autocast("cpu"):
        out = fn(lib, *leaves)
    if grad and out.is_floating_point():
        out.float().sum().backward()
    return out, leaves


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_under_autocast_matches_torch(name):
    t_out, t_leaves = _run_case(torch, name)
    e_out, e_leaves = _run_case(ember, name)
    assert str(e_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], name
    _close(e_out, t_out, f"{name} forward")
    for i, (e, t) in enumerate(zip(e_leaves, t_leaves)):
        if t.grad is None:
            assert e.grad is None or not np.any(_np(e.grad)), f"{name} grad {i}"
            continue
        assert e.grad.dtype == ember.float32 and t.grad.dtype == torch.float32
        _close(e.grad, t.grad, f"{name} grad of input {i}")


@pytest.mark.parametrize("name", sorted(op_lists.FP32))
def test_fp32_ops_take_bfloat16_inputs_to_float32(name):
    fn, arrays = CASES[name]
    with ember.autocast("cpu"):
        out = fn(ember, *[ember.tensor(a, dtype=ember.bfloat16) for a in arrays])
    assert out.dtype in (ember.float32, ember.int64)


@pytest.mark.parametrize("name", ["mm", "nn.functional.linear", "nn.functional.mse_loss", "prod", "cat"])
def test_float64_inputs_are_left_alone(name):
    fn, arrays = CASES[name]
    with ember.autocast("cpu"):
        out = fn(ember, *[ember.tensor(a) for a in arrays])
    assert out.dtype == ember.float64


def test_float64_mixed_with_float32_raises_torch_error():
    a, b = torch.randn(3, 3, dtype=torch.float64), torch.randn(3, 3)
    with torch.autocast("cpu"), pytest.raises(RuntimeError) as t_err:
        torch.mm(a, b)
    with ember.autocast("cpu"), pytest.raises(RuntimeError) as e_err:
        ember.mm(ember.tensor(a.numpy()), ember.tensor(b.numpy()))
    assert str(e_err.value) == str(t_err.value)


def test_tensor_methods_and_operator_go_through_the_policy():
    x, w = ember.randn(3, 4), ember.randn(4, 2)
    with ember.autocast("cpu"):
        for out in (x @ w, x.matmul(w), x.mm(w), ember.randn(1, 2).addmm(x, w),
                    x.unsqueeze(0).bmm(w.unsqueeze(0)), x.inner(w.t())):
            assert out.dtype == ember.bfloat16
        assert x.prod().dtype == ember.float32
        assert x.bfloat16().prod().dtype == ember.float32


def test_integer_inputs_are_not_cast():
    a = ember.ones(2, 2, dtype=ember.int64)
    with ember.autocast("cpu"):
        assert (a @ a).dtype == ember.int64


def test_out_and_explicit_dtype_are_not_eligible():
    x, w = ember.randn(3, 4), ember.randn(4, 5)
    out = ember.empty(3, 5)
    with ember.autocast("cpu"):
        assert ember.mm(x, w, out=out).dtype == ember.float32
        assert ember.prod(x.bfloat16(), dtype=ember.bfloat16).dtype == ember.bfloat16


def test_float16_autocast_on_cpu():
    x, w = np.random.rand(3, 4), np.random.rand(4, 2)
    with torch.autocast("cpu", dtype=torch.float16):
        t = torch.tensor(x, dtype=torch.float32) @ torch.tensor(w, dtype=torch.float32)
    with ember.autocast("cpu", dtype=ember.float16):
        e = ember.tensor(x, dtype=ember.float32) @ ember.tensor(w, dtype=ember.float32)
        assert ember.get_autocast_dtype("cpu") == ember.float16
    assert e.dtype == ember.float16 and t.dtype == torch.float16
    _close(e, t, "float16 matmul", atol=1e-3, rtol=1e-3)


def test_pad_casts_only_torchs_modes():
    x = ember.randn(1, 2, 4, dtype=ember.bfloat16)
    x3 = ember.randn(1, 1, 3, 3, 3, dtype=ember.bfloat16)
    F = ember.nn.functional
    with ember.autocast("cpu"):
        assert F.pad(x, (1, 1), mode="replicate").dtype == ember.float32
        assert F.pad(x, (1, 1)).dtype == ember.bfloat16
        assert F.pad(x, (1, 1), mode="circular").dtype == ember.bfloat16
        assert F.pad(x3, (1,) * 6, mode="reflect").dtype == ember.bfloat16
        assert F.pad(x3, (1,) * 6, mode="replicate").dtype == ember.float32
        assert F.max_pool3d(x3, 2).dtype == ember.float32
        assert F.max_pool3d(x3, 2, return_indices=True)[0].dtype == ember.bfloat16


def test_composites_take_the_policy_of_their_parts():
    x, w = ember.randn(3, 4), ember.randn(4, 4)
    with ember.autocast("cpu"):
        assert ember.linalg.multi_dot([x, w, w]).dtype == ember.bfloat16
        assert ember.linalg.matrix_power(w, 2).dtype == ember.bfloat16
        assert ember.nn.Linear(4, 2)(x).dtype == ember.bfloat16
        assert ember.vstack([x, w.bfloat16()]).dtype == ember.float32
        assert ember.nn.functional.adaptive_avg_pool2d(x.reshape(1, 1, 3, 4), 2).dtype == ember.float32


# ----------------------------------------------------------------------------------------
# State: nesting, decorators, threads, warnings

def test_nesting_restores_the_previous_state():
    assert not ember.is_autocast_enabled("cpu")
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and not ember.is_autocast_enabled()
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert (ember.randn(2, 2) @ ember.randn(2, 2)).dtype == ember.float32
        with ember.autocast("cpu", dtype=ember.float16):
            assert ember.get_autocast_dtype("cpu") == ember.float16
        assert ember.is_autocast_enabled("cpu")
        assert ember.get_autocast_dtype("cpu") == ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    assert (ember.randn(2, 2) @ ember.randn(2, 2)).dtype == ember.float32


def test_exception_inside_region_restores_state():
    with pytest.raises(ValueError):
        with ember.autocast("cpu"):
            raise ValueError("boom")
    assert not ember.is_autocast_enabled("cpu")


def test_decorator():
    @ember.autocast("cpu")
    def product(a, b):
        assert ember.is_autocast_enabled("cpu")
        return a @ b
    assert product(ember.randn(2, 2), ember.randn(2, 2)).dtype == ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    assert ember.amp.autocast is ember.autocast


def test_state_is_thread_local():
    seen = []

    def worker():
        seen.append((ember.is_autocast_enabled("cpu"), (ember.randn(2, 2) @ ember.randn(2, 2)).dtype))
        with ember.autocast("cpu"):
            seen.append((ember.is_autocast_enabled("cpu"), (ember.randn(2, 2) @ ember.randn(2, 2)).dtype))
    with ember.autocast("cpu"):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert ember.is_autocast_enabled("cpu")
    assert seen == [(False, ember.float32), (True, ember.bfloat16)]
    from ember.amp import policy
    assert policy._threads_enabled == 0


def test_set_autocast_enabled_forms():
    ember.set_autocast_enabled("cpu", True)
    try:
        assert ember.is_autocast_enabled("cpu")
    finally:
        ember.set_autocast_enabled("cpu", False)
    assert not ember.is_autocast_enabled("cpu")
    ember.set_autocast_enabled(False)  # the legacy form sets CUDA's
    assert not ember.is_autocast_enabled("cuda")
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16
    assert ember.get_autocast_dtype("cuda") == ember.float16


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_unsupported_cpu_dtype_warns_and_disables(dtype):
    with warnings.catch_warnings(record=True) as t_warn:
        warnings.simplefilter("always")
        t = torch.autocast("cpu", dtype=getattr(torch, dtype))
    with warnings.catch_warnings(record=True) as e_warn:
        warnings.simplefilter("always")
        e = ember.autocast("cpu", dtype=getattr(ember, dtype))
    assert not t._enabled and not e._enabled
    assert str(e_warn[0].message) == str(t_warn[0].message).replace("torch.", "ember.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autocast("cpu", dtype=getattr(ember, dtype)):
            assert not ember.is_autocast_enabled("cpu")
            assert (ember.randn(2, 2) @ ember.randn(2, 2)).dtype == ember.float32


def test_cuda_autocast_without_cuda_warns_and_disables():
    from ember._backend import load_cuda
    if load_cuda() is not None:
        pytest.skip("a CUDA device is available")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        region = ember.autocast("cuda")
    with region:
        assert not ember.is_autocast_enabled("cuda")


@pytest.mark.parametrize("device_type, exc", [("foo", RuntimeError), (3, ValueError)])
def test_bad_device_type(device_type, exc):
    with pytest.raises(exc) as t_err:
        torch.autocast(device_type)
    with pytest.raises(exc) as e_err:
        ember.autocast(device_type)
    assert str(e_err.value) == str(t_err.value)


def test_backward_inside_region_gives_float32_leaf_grads_like_torch():
    x, w = _arr(3, 4), _arr(4, 2)
    grads = {}
    for lib in (torch, ember):
        xl, wl = _leaves(lib, [x, w])
        with lib.autocast("cpu"):
            out = lib.nn.functional.mse_loss(xl @ wl, lib.zeros(3, 2))
            assert out.dtype == lib.float32
            out.backward()
        grads[lib] = (xl.grad, wl.grad)
    for e, t in zip(grads[ember], grads[torch]):
        assert e.dtype == ember.float32 and t.dtype == torch.float32
        _close(e, t, "grad")


def test_no_grad_graph_for_casts_under_no_grad():
    x = ember.randn(2, 2, requires_grad=True)
    with ember.no_grad(), ember.autocast("cpu"):
        out = x @ x
    assert out.grad_fn is None and out.dtype == ember.bfloat16


# ----------------------------------------------------------------------------------------
# custom_fwd / custom_bwd

def _scaled_mm_function(lib, cast_inputs):
    class ScaledMM(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.fwd_state = lib.is_autocast_enabled("cpu")
            return a.mm(b) * 2

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            ctx.bwd_state = lib.is_autocast_enabled("cpu")
            return grad.mm(b.t()) * 2, a.t().mm(grad) * 2
    return ScaledMM


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_bwd_match_torch(cast_inputs):
    x, w = _arr(3, 4), _arr(4, 2)
    seen = {}
    for lib in (torch, ember):
        fn = _scaled_mm_function(lib, None if cast_inputs is None else getattr(lib, cast_inputs))
        a, b = _leaves(lib, [x, w])
        with lib.autocast("cpu"):
            out = fn.apply(a, b)
        out.float().sum().backward()
        seen[lib] = (str(out.dtype).split(".")[-1], out, a.grad, b.grad)
    assert seen[ember][0] == seen[torch][0]
    for e, t in zip(seen[ember][1:], seen[torch][1:]):
        _close(e, t, "custom function")


def test_custom_fwd_requires_device_type():
    with pytest.raises(TypeError):
        ember.amp.custom_fwd(lambda ctx, x: x)


# ----------------------------------------------------------------------------------------
# Training under autocast

def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def _convnet(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, padding=1), lib.nn.ReLU(),
                             lib.nn.Flatten(), lib.nn.Linear(4 * 5 * 5, 3))


def _copy_weights(torch_model, ember_model):
    state = {k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()}
    ember_model.load_state_dict(state)


@pytest.mark.parametrize("make_model, shape", [(_mlp, (5, 6)), (_convnet, (4, 2, 5, 5))])
def test_training_under_autocast_matches_torch(make_model, shape):
    t_model, e_model = make_model(torch), make_model(ember)
    _copy_weights(t_model, e_model)
    rng = np.random.default_rng(1)
    t_opt = torch.optim.SGD(t_model.parameters(), lr=0.1)
    e_opt = ember.optim.SGD(e_model.parameters(), lr=0.1)
    for step in range(3):
        x, y = rng.standard_normal(shape), rng.integers(0, 3, shape[0])
        losses = []
        for lib, model, opt in ((torch, t_model, t_opt), (ember, e_model, e_opt)):
            opt.zero_grad()
            with lib.autocast("cpu"):
                out = model(lib.tensor(x, dtype=lib.float32))
                loss = lib.nn.functional.cross_entropy(out, lib.tensor(y))
            assert loss.dtype == lib.float32
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert abs(losses[0] - losses[1]) < 2e-2 * max(1.0, abs(losses[0])), f"step {step}: {losses}"
    for (name, t), e in zip(t_model.state_dict().items(), e_model.state_dict().values()):
        assert e.dtype == ember.float32
        _close(e, t, name)


def _encoder_layer(lib):
    return lib.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)


def _bn_convnet(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, padding=1), lib.nn.BatchNorm2d(4),
                             lib.nn.ReLU(), lib.nn.MaxPool2d(2), lib.nn.Flatten(),
                             lib.nn.Linear(4 * 3 * 3, 5))


@pytest.mark.parametrize("make_model, shape", [(_encoder_layer, (2, 5, 16)),
                                               (_bn_convnet, (3, 2, 6, 6))])
def test_model_forward_backward_under_autocast_matches_torch(make_model, shape):
    torch.manual_seed(0)
    t_model, e_model = make_model(torch), make_model(ember)
    _copy_weights(t_model, e_model)
    x = np.random.default_rng(2).standard_normal(shape)
    results = {}
    for lib, model in ((torch, t_model), (ember, e_model)):
        inp = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        with lib.autocast("cpu"):
            out = model(inp)
        seed = lib.tensor(np.random.default_rng(3).uniform(-1, 1, size=tuple(out.shape)))
        (out.float() * seed).sum().backward()
        results[lib] = (out, inp.grad, [p.grad for p in model.parameters()])
    (t_out, t_gx, t_grads), (e_out, e_gx, e_grads) = results[torch], results[ember]
    assert str(e_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
    _close(e_out, t_out, "output")
    _close(e_gx, t_gx, "input grad")
    for (name, _), e, t in zip(t_model.named_parameters(), e_grads, t_grads):
        assert e.dtype == ember.float32 and t.dtype == torch.float32, name
        _close(e, t, f"grad of {name}")


# ----------------------------------------------------------------------------------------
# GradScaler

def _scaler_run(lib, script, **kwargs):
    """Run ``script`` (a list of gradient arrays, one per step) through GradScaler and SGD;
    record the scale, growth tracker and parameters after each update."""
    param = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
    opt = lib.optim.SGD([param], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **kwargs)
    history = []
    for grads in script:
        loss = scaler.scale((param * lib.tensor(grads, dtype=lib.float32)).sum())
        opt.zero_grad()
        loss.backward()
        result = scaler.step(opt)
        scaler.update()
        history.append((scaler.get_scale(), scaler._get_growth_tracker(), _np(param).copy(),
                        result))
    return history, scaler


INF, NAN = float("inf"), float("nan")
SCRIPT = [[1, 2, 3], [0.5, 0.5, 0.5], [INF, 1, 1], [1, 1, 1], [1, NAN, 1], [1, 1, 1],
          [2, 2, 2], [1, 1, 1], [3, 1, 2]]


@pytest.mark.parametrize("kwargs", [dict(init_scale=8.0, growth_interval=2),
                                    dict(init_scale=2.0 ** 16, growth_factor=3.0,
                                         backoff_factor=0.25, growth_interval=1)])
def test_grad_scaler_sequence_matches_torch(kwargs):
    t_hist, t_scaler = _scaler_run(torch, SCRIPT, **kwargs)
    e_hist, e_scaler = _scaler_run(ember, SCRIPT, **kwargs)
    for step, (t, e) in enumerate(zip(t_hist, e_hist)):
        assert e[0] == t[0] and e[1] == t[1], f"step {step}: scale/tracker {e[:2]} vs {t[:2]}"
        np.testing.assert_allclose(e[2], t[2], rtol=1e-6, err_msg=f"step {step}")
        assert (e[3] is None) == (t[3] is None)
    assert e_scaler.state_dict() == t_scaler.state_dict()


def test_grad_scaler_state_dict_round_trip_and_pickle():
    hist, scaler = _scaler_run(ember, SCRIPT[:4], init_scale=8.0, growth_interval=2)
    fresh = ember.amp.GradScaler("cpu")
    fresh.load_state_dict(scaler.state_dict())
    assert fresh.state_dict() == scaler.state_dict()
    assert fresh.get_scale() == scaler.get_scale()
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.state_dict() == scaler.state_dict()
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        ember.amp.GradScaler("cpu").load_state_dict({})


def test_grad_scaler_unscale_and_errors_match_torch():
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        with pytest.raises(AssertionError, match="_scale is None"):
            scaler.step(opt)
        scaler.scale(lib.tensor(1.0))
        p.grad = lib.tensor([4.0, 8.0])
        scaler.unscale_(opt)
        np.testing.assert_allclose(_np(p.grad), [1.0, 2.0])
        with pytest.raises(RuntimeError, match="already been called on this optimizer"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match=r"step\(\) has already been called"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match="after step"):
            scaler.unscale_(opt)
        scaler.update()
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            scaler.step(opt, closure=lambda: 0)
        with pytest.raises(ValueError, match="outputs must be a Tensor"):
            scaler.scale(3.0)
        scaled = scaler.scale([lib.tensor(1.0), (lib.tensor(2.0),)])
        assert float(scaled[1][0]) == 8.0


def test_grad_scaler_refuses_fp16_grads():
    p = ember.nn.Parameter(ember.ones(2, dtype=ember.float16))
    opt = ember.optim.SGD([p], lr=0.1)
    scaler = ember.amp.GradScaler("cpu")
    scaler.scale(ember.tensor(1.0))
    p.grad = ember.ones(2, dtype=ember.float16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.unscale_(opt)


def test_disabled_grad_scaler_is_a_no_op():
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.5)
    scaler = ember.amp.GradScaler("cpu", enabled=False)
    x = ember.tensor(3.0)
    assert scaler.scale(x) is x and scaler.get_scale() == 1.0 and not scaler.is_enabled()
    assert scaler.state_dict() == {}
    p.grad = ember.ones(2)
    scaler.step(opt)
    np.testing.assert_allclose(_np(p), [0.5, 0.5])


def test_cuda_grad_scaler_without_cuda_warns_and_disables():
    from ember._backend import load_cuda
    if load_cuda() is not None:
        pytest.skip("a CUDA device is available")
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        scaler = ember.amp.GradScaler()
    assert not scaler.is_enabled()
