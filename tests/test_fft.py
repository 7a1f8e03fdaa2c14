"""ember.fft and autograd through complex tensors, against torch.

The op table (tests/op_db) compares real outputs and real gradients only, so the transforms
and the complex ops are checked here: values for every function over shapes, lengths, dims and
norms, dtypes and layouts; gradients (torch's convention for complex inputs) for every function
and every complex op; errors for bad arguments."""
import numpy as np
import pytest
import torch

import ember

NORMS = [None, "backward", "ortho", "forward"]
C2C = ["fft", "ifft"]
R2C = ["rfft", "ihfft"]
C2R = ["irfft", "hfft"]
N_C2C = ["fft2", "ifft2", "fftn", "ifftn"]
N_R2C = ["rfft2", "rfftn", "ihfft2", "ihfftn"]
N_C2R = ["irfft2", "irfftn", "hfft2", "hfftn"]
ALL = C2C + R2C + C2R + N_C2C + N_R2C + N_C2R


def _array(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * rng.standard_normal(shape)
    return data.astype(dtype)


def _pair(data, requires_grad=False):
    e = ember.tensor(data, requires_grad=requires_grad)
    t = torch.tensor(data, requires_grad=requires_grad)
    return e, t


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    return t.detach().numpy()


def _same(e, t, rtol=None, atol=None):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    single = e.dtype in (ember.float32, ember.complex64)
    tol = 2e-5 if single else 1e-10
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol or tol, atol=atol or tol)


def _real_input(name):
    return name in R2C + N_R2C


def _input_dtypes(name):
    if _real_input(name):
        return ["float32", "float64"]
    return ["float32", "float64", "complex64", "complex128"]


# -- values ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", C2C + R2C + C2R)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape,dim,n", [
    ((8,), -1, None), ((7,), 0, None), ((4, 6), -1, None), ((4, 6), 0, None), ((4, 6), 1, 5),
    ((4, 6), -1, 9), ((3, 4, 5), 1, 4), ((3, 4, 5), -1, 1), ((3, 4, 5), 0, 7),
])
def test_one_dim_values(name, norm, shape, dim, n):
    for dtype in _input_dtypes(name):
        e, t = _pair(_array(shape, dtype))
        got = getattr(ember.fft, name)(e, n=n, dim=dim, norm=norm)
        _same(got, getattr(torch.fft, name)(t, n=n, dim=dim, norm=norm))


@pytest.mark.parametrize("name", N_C2C + N_R2C + N_C2R)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape,s,dim", [
    ((4, 6), None, None), ((5, 7), (3, 8), None), ((3, 4, 5), None, (0, 2)),
    ((3, 4, 5), (6, -1), (2, 0)), ((3, 4, 5), (2, 3, 4), None), ((2, 3, 4, 5), None, (1, 2, 3)),
    ((4, 6), (5,), (0,)), ((6,), None, (0,)),
])
def test_n_dim_values(name, norm, shape, s, dim):
    two = name.endswith("2")
    if two and ((dim is not None and len(dim) != 2) or (s is not None and len(s) != 2)
                or len(shape) < 2):
        return
    kwargs = {"s": s, "norm": norm}
    if dim is not None or not two:
        kwargs["dim"] = dim
    for dtype in _input_dtypes(name):
        e, t = _pair(_array(shape, dtype))
        _same(getattr(ember.fft, name)(e, **kwargs), getattr(torch.fft, name)(t, **kwargs))


@pytest.mark.parametrize("name", ALL)
def test_non_contiguous_and_integer_inputs(name):
    data = _array((6, 5, 4), "complex128" if not _real_input(name) else "float64")
    e, t = _pair(data)
    e, t = e.transpose(0, 2)[:, ::2], t.transpose(0, 2)[:, ::2]
    assert not e.is_contiguous()
    _same(getattr(ember.fft, name)(e), getattr(torch.fft, name)(t))
    ints = np.arange(12).reshape(3, 4) % 5
    e, t = _pair(ints)
    _same(getattr(ember.fft, name)(e), getattr(torch.fft, name)(t))


@pytest.mark.parametrize("name", ALL)
def test_out(name):
    data = _array((4, 6), "complex128" if not _real_input(name) else "float64")
    e, t = _pair(data)
    expected = getattr(torch.fft, name)(t)
    out = ember.empty(0, dtype=getattr(ember, str(expected.dtype).split(".")[1]))
    res = getattr(ember.fft, name)(e, out=out)
    assert res is out
    _same(out, expected)


def test_dtype_of_results():
    x = ember.randn(8)
    assert ember.fft.fft(x).dtype == ember.complex64
    assert ember.fft.rfft(x).dtype == ember.complex64
    assert ember.fft.irfft(ember.fft.rfft(x)).dtype == ember.float32
    assert ember.fft.fft(x.double()).dtype == ember.complex128
    assert ember.fft.fft(ember.arange(4)).dtype == ember.complex64   # the default float dtype


def test_round_trips():
    x = ember.randn(4, 10, dtype=ember.float64)
    np.testing.assert_allclose(ember.fft.irfft(ember.fft.rfft(x), n=10).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(ember.fft.ifftn(ember.fft.fftn(x)).real.numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(ember.fft.hfft(ember.fft.ihfft(x), n=10).numpy(), x.numpy(), atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_frequencies(n, d, dtype):
    kwargs = {} if dtype is None else {"dtype": dtype}
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(ember.fft, name)(n, d, **{k: getattr(ember, v) for k, v in kwargs.items()})
        want = getattr(torch.fft, name)(n, d, **{k: getattr(torch, v) for k, v in kwargs.items()})
        _same(got, want)


def test_frequencies_keywords():
    f = ember.fft.fftfreq(5, requires_grad=True)
    assert f.requires_grad and f.is_leaf
    out = ember.empty(3, dtype=ember.float64)
    assert ember.fft.rfftfreq(4, out=out) is out
    _same(out, torch.fft.rfftfreq(4, dtype=torch.float64))


@pytest.mark.parametrize("shape,dim", [((8,), None), ((5, 6), None), ((5, 6), 0), ((3, 5, 6), (1, 2)),
                                       ((3, 5, 6), -1)])
def test_shifts(shape, dim):
    e, t = _pair(_array(shape, "float64"))
    for name in ("fftshift", "ifftshift"):
        _same(getattr(ember.fft, name)(e, dim=dim), getattr(torch.fft, name)(t, dim=dim))


# -- gradients -------------------------------------------------------------------------------

def _loss(lib, out, weight):
    """A real loss that weighs the real and imaginary parts of a complex output separately."""
    if out.is_complex():
        return (lib.view_as_real(out.resolve_conj()) * lib.tensor(weight)).sum()
    return (out * lib.tensor(weight[..., 0])).sum()


def _check_grads(fn_e, fn_t, *arrays, seed=1):
    pairs = [_pair(a, requires_grad=True) for a in arrays]
    out_e = fn_e(*[p[0] for p in pairs])
    out_t = fn_t(*[p[1] for p in pairs])
    _same(out_e, out_t)
    weight = np.random.default_rng(seed).standard_normal(tuple(out_t.shape) + (2,))
    _loss(ember, out_e, weight).backward()
    _loss(torch, out_t, weight).backward()
    for e, t in pairs:
        assert e.grad.dtype == e.dtype
        _same(e.grad, t.grad)
    # the other real loss
    for e, t in pairs:
        e.grad = t.grad = None
    (fn_e(*[p[0] for p in pairs]).abs() ** 2).sum().backward()
    (fn_t(*[p[1] for p in pairs]).abs() ** 2).sum().backward()
    for e, t in pairs:
        _same(e.grad, t.grad)


@pytest.mark.parametrize("name", C2C + R2C + C2R)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 4, 5, 9])
def test_one_dim_grads(name, norm, n):
    for dtype in ["float64"] if _real_input(name) else ["float64", "complex128"]:
        _check_grads(lambda x: getattr(ember.fft, name)(x, n=n, dim=0, norm=norm),
                     lambda x: getattr(torch.fft, name)(x, n=n, dim=0, norm=norm),
                     _array((6, 3), dtype))


@pytest.mark.parametrize("name", N_C2C + N_R2C + N_C2R)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s", [None, (3, 4), (5, 7), (6, -1)])
def test_n_dim_grads(name, norm, s):
    for dtype in ["float64"] if _real_input(name) else ["float64", "complex128"]:
        _check_grads(lambda x: getattr(ember.fft, name)(x, s=s, norm=norm),
                     lambda x: getattr(torch.fft, name)(x, s=s, norm=norm),
                     _array((2, 4, 6), dtype))


def test_three_dim_grads_and_shift():
    _check_grads(lambda x: ember.fft.fftshift(ember.fft.rfftn(x, dim=(0, 1, 2)), dim=(0, 1)),
                 lambda x: torch.fft.fftshift(torch.fft.rfftn(x, dim=(0, 1, 2)), dim=(0, 1)),
                 _array((3, 4, 5), "float64"))
    _check_grads(lambda x: ember.fft.irfftn(x, s=(4, 3, 6), norm="ortho"),
                 lambda x: torch.fft.irfftn(x, s=(4, 3, 6), norm="ortho"),
                 _array((3, 4, 5), "complex128"))


def test_grad_nodes_named_as_torch():
    x = ember.randn(4, requires_grad=True)
    z = ember.randn(4, dtype=ember.complex64, requires_grad=True)
    assert type(ember.fft.fft(z).grad_fn).__name__ == "FftC2CBackward0"
    assert type(ember.fft.rfft(x).grad_fn).__name__ == "FftR2CBackward0"
    assert type(ember.fft.irfft(z).grad_fn).__name__ == "FftC2RBackward0"
    assert type(ember.fft.ihfft(x).grad_fn).__name__ == "ConjBackward0"


def test_gradcheck_through_transforms():
    x = ember.randn(3, 6, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.view_as_real(ember.fft.rfft(t, norm="ortho")), (x,))
    assert ember.autograd.gradcheck(lambda t: ember.fft.irfft(ember.fft.fft(t), n=7), (x,))
    assert ember.autograd.gradcheck(lambda t: ember.fft.hfft2(ember.fft.ihfft2(t), s=(3, 6)), (x,))


# -- complex autograd through the everyday ops -------------------------------------------------

Z = (3, 4)


def _z(seed=0, shape=Z):
    return _array(shape, "complex128", seed)


def _x(seed=0, shape=Z):
    return _array(shape, "float64", seed)


@pytest.mark.parametrize("case", [
    ("abs", lambda lib, z: z.abs()),
    ("angle", lambda lib, z: z.angle()),
    ("real", lambda lib, z: z.real * 2),
    ("imag", lambda lib, z: lib.imag(z) * 3),
    ("conj", lambda lib, z: z.conj() * lib.tensor(_z(5))),
    ("conj_physical", lambda lib, z: lib.conj_physical(z) * lib.tensor(_z(5))),
    ("view_as_real", lambda lib, z: lib.view_as_real(z) ** 2),
    ("view_as_complex", lambda lib, z: lib.view_as_complex(lib.view_as_real(z) * 2)),
    ("exp", lambda lib, z: z.exp()),
    ("log", lambda lib, z: z.log()),
    ("sqrt", lambda lib, z: z.sqrt()),
    ("sin_cos", lambda lib, z: z.sin() + z.cos()),
    ("pow", lambda lib, z: z ** 3),
    ("pow_float", lambda lib, z: z.pow(2.5)),
    ("mul_div", lambda lib, z: z * z / (z + 2)),
    ("add_sub_neg", lambda lib, z: -(z + 1j) - z * 2),
    ("scalar_div", lambda lib, z: (1 - 2j) / z - z / (3 + 1j)),
    ("sum_mean", lambda lib, z: z.sum(0) + z.mean(1).unsqueeze(1).sum() + z.mean()),
    ("views_indexing", lambda lib, z: z.reshape(2, 6).t()[1:, ::2] + z[lib.tensor([0, 2])].flatten()[:3]),
    ("cat_stack_flip_roll", lambda lib, z: lib.cat([z, z.flip(0)]).roll(1, 0) + lib.stack([z, z]).sum(0).repeat(2, 1)),
    ("matmul", lambda lib, z: z @ z.mT + lib.tensor(_z(2, (3, 3))).matmul(z[:, :3])),
    ("bmm", lambda lib, z: lib.bmm(z.reshape(1, 3, 4), z.reshape(1, 4, 3))),
    ("dot_vdot_mv", lambda lib, z: lib.dot(z[0], z[1]) * lib.vdot(z[1], z[2].exp())
     + (z @ z[1]).sum() + z.reshape(2, 6).matmul(z.reshape(2, 6, 1)).sum()),
    ("to", lambda lib, z: z.to(lib.complex64).to(lib.complex128)),
    ("square_outer_kron_tensordot", lambda lib, z: z.square().sum() + lib.outer(z[0], z[1]).sum()
     + lib.kron(z[:2, :2], z[1:, 2:]).sum() + lib.tensordot(z, z.mT, 1).sum()),
    ("l1_loss", lambda lib, z: lib.nn.functional.l1_loss(z, z.detach() * 2 + 1)),
    ("clone_expand", lambda lib, z: z.clone()[:, :1].expand(3, 5)),
])
def test_complex_ops_grads(case):
    name, fn = case
    _check_grads(lambda z: fn(ember, z), lambda z: fn(torch, z), _z())


@pytest.mark.parametrize("case", [
    ("polar", lambda lib, a, b: lib.polar(a.abs(), b)),
    ("complex", lambda lib, a, b: lib.complex(a, b[:1])),
    ("real_times_complex", lambda lib, a, b: a * lib.tensor(_z(3)) + b / lib.tensor(_z(4))),
    ("real_plus_complex_scalar", lambda lib, a, b: (a + 2j) * (b - 1j)),
    ("real_to_complex", lambda lib, a, b: a.to(lib.complex128) * b.to(lib.complex128).exp()),
])
def test_real_inputs_of_complex_results(case):
    name, fn = case
    _check_grads(lambda a, b: fn(ember, a, b), lambda a, b: fn(torch, a, b), _x(0), _x(1))


def test_complex_to_real_conversion_grad():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check_grads(lambda z: z.to(ember.float64) * 2, lambda z: z.to(torch.float64) * 2, _z())


def test_complex_grad_of_leaf_is_conjugate_wirtinger():
    z = ember.tensor([3 + 4j, -1 + 2j], requires_grad=True)
    (z.abs() ** 2).sum().backward()   # d/dRe + i d/dIm of |z|^2 is 2z
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())


def test_backward_of_a_complex_output_needs_a_gradient():
    z = ember.randn(3, dtype=ember.complex64, requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        z.sum().backward()
    out = z * 2
    out.backward(ember.ones(3, dtype=ember.complex64))
    t = torch.tensor(z.detach().numpy(), requires_grad=True)
    (t * 2).backward(torch.ones(3, dtype=torch.complex64))
    _same(z.grad, t.grad)


@pytest.mark.parametrize("fn", [
    lambda z: z.tanh(), lambda z: z.sigmoid(), lambda z: z.prod(), lambda z: z.var(),
    lambda z: z.norm(), lambda z: z.sgn(), lambda z: z.cumsum(0), lambda z: z.asin(),
])
def test_other_ops_refuse_complex_autograd(fn):
    z = ember.randn(3, dtype=ember.complex128, requires_grad=True)
    with pytest.raises(NotImplementedError, match="for complex tensors"):
        fn(z)
    with ember.no_grad():
        fn(z)   # without autograd they compute
    fn(z.detach())


def test_real_ops_still_refuse_integer_results():
    x = ember.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Autograd not support dtype"):
        x.to(ember.int64).float()   # conversions to int drop the history, as in torch
        ember.ops._common.record(type(x.exp().grad_fn), (x,), ember.tensor([1, 2]))


# -- the complex ops' values and errors ----------------------------------------------------------

def test_complex_op_values():
    z_e, z_t = _pair(_z())
    x_e, x_t = _pair(_x())
    _same(z_e.real, z_t.real)
    _same(z_e.imag, z_t.imag)
    assert x_e.real is x_e
    _same(ember.view_as_real(z_e), torch.view_as_real(z_t))
    _same(ember.view_as_real(z_e[:, ::2]), torch.view_as_real(z_t[:, ::2]))
    _same(ember.view_as_complex(ember.view_as_real(z_e)), z_t)
    _same(z_e.conj(), z_t.conj())
    _same(ember.angle(x_e), torch.angle(x_t))
    _same(ember.angle(ember.tensor([-1, 0, 2])), torch.angle(torch.tensor([-1, 0, 2])))
    _same(ember.polar(x_e.abs(), x_e), torch.polar(x_t.abs(), x_t))
    _same(ember.complex(x_e, x_e[:1]), torch.complex(x_t, x_t[:1]))
    r = ember.view_as_real(z_e)
    r.mul_(2)   # a view: writes reach the complex tensor
    np.testing.assert_allclose(z_e.numpy(), 2 * _z())
    z_e.real = ember.zeros(Z, dtype=ember.float64)
    assert (z_e.real == 0).all()


@pytest.mark.parametrize("call", [
    lambda lib: lib.view_as_real(lib.ones(3, 2)),
    lambda lib: lib.view_as_complex(lib.ones(3, 3)),
    lambda lib: lib.view_as_complex(lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: lib.view_as_complex(lib.ones(2, 3).t()),
    lambda lib: lib.view_as_complex(lib.ones(3, 3)[:, :2]),
    lambda lib: lib.view_as_complex(lib.ones(7)[1:].view(3, 2)),
    lambda lib: lib.imag(lib.ones(3)),
    lambda lib: lib.polar(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.complex(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
])
def test_complex_op_errors(call):
    with pytest.raises(Exception) as torch_error:
        call(torch)
    with pytest.raises(type(torch_error.value)) as ember_error:
        call(ember)
    assert str(ember_error.value) == str(torch_error.value)


# -- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda fft, lib: fft.fft(lib.ones(4, 6), norm="bad"),
    lambda fft, lib: fft.fft(lib.ones(4, 6), n=0),
    lambda fft, lib: fft.fft(lib.ones(4, 6), n=-1),
    lambda fft, lib: fft.fft(lib.ones(4, 6), dim=2),
    lambda fft, lib: fft.fft(lib.ones(4, 6), dim=-3),
    lambda fft, lib: fft.fft(lib.tensor(1.0)),
    lambda fft, lib: fft.fft(lib.ones(4, dtype=lib.float16)),
    lambda fft, lib: fft.rfft(lib.ones(4, dtype=lib.bfloat16)),
    lambda fft, lib: fft.rfft(lib.ones(4, dtype=lib.complex64)),
    lambda fft, lib: fft.ihfft(lib.ones(4, dtype=lib.complex64)),
    lambda fft, lib: fft.rfftn(lib.ones(4, dtype=lib.complex64)),
    lambda fft, lib: fft.ihfftn(lib.ones(4, dtype=lib.complex64)),
    lambda fft, lib: fft.irfft(lib.ones(1, dtype=lib.complex64)),
    lambda fft, lib: fft.fftn(lib.ones(4, 6), s=(2,), dim=(0, 1)),
    lambda fft, lib: fft.fftn(lib.ones(4, 6), dim=(0, 0)),
    lambda fft, lib: fft.fftn(lib.ones(4, 6), dim=(1, -1)),
    lambda fft, lib: fft.fftn(lib.ones(4, 6), s=(2, 2, 2)),
    lambda fft, lib: fft.fftn(lib.ones(4, 6), s=(0, 2)),
    lambda fft, lib: fft.rfftn(lib.ones(4, 6), dim=()),
    lambda fft, lib: fft.irfftn(lib.ones(4, 6), dim=()),
    lambda fft, lib: fft.hfftn(lib.ones(4, 6), dim=()),
    lambda fft, lib: fft.ihfftn(lib.ones(4, 6), dim=()),
    lambda fft, lib: fft.fft2(lib.ones(4)),
    lambda fft, lib: fft.fft(lib.ones(4, 6), out=lib.empty(4, 6)),
    lambda fft, lib: fft.irfft(lib.ones(4, 6, dtype=lib.complex64), out=lib.empty(4, 10, dtype=lib.complex64)),
    lambda fft, lib: fft.fftfreq(4, dtype=lib.int64),
    lambda fft, lib: fft.rfftfreq(4, dtype=lib.complex64),
    lambda fft, lib: fft.fftfreq(-1),
    lambda fft, lib: fft.fft([1.0, 2.0]),
    lambda fft, lib: fft.fft(lib.ones(4), dim=1.5),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as torch_error:
        call(torch.fft, torch)
    with pytest.raises(type(torch_error.value)) as ember_error:
        call(ember.fft, ember)
    want = str(torch_error.value).replace("torch.", "ember.")
    assert str(ember_error.value) == want


def test_namespace_has_torch_names():
    import torch.fft as tfft
    public = {n for n in dir(tfft) if not n.startswith("_")} - {"common_args", "factory_common_args",
                                                                 "torch"}
    assert public <= set(dir(ember.fft))
    assert ember.fft.Tensor is ember.Tensor


def test_gradcheck_takes_complex_inputs_and_outputs():
    z = ember.randn(3, 4, dtype=ember.complex128, requires_grad=True)
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    gradcheck = ember.autograd.gradcheck
    assert gradcheck(lambda a: ember.fft.fft2(a, norm="ortho"), (z,))
    assert gradcheck(lambda a, b: (a * b).exp() / (a + 3), (z, x))
    assert gradcheck(lambda a: ember.fft.hfft(a, n=7), (z,))
    assert gradcheck(lambda a: a.angle() + a.abs(), (z,))
    assert ember.autograd.gradgradcheck(lambda a: ember.fft.fft(a) * a, (z,))

    class Right(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * (2 + 1j)

        @staticmethod
        def backward(ctx, g):
            return g * (2 - 1j)   # the conjugate of the derivative: torch's convention

    class Wrong(Right):
        @staticmethod
        def backward(ctx, g):
            return g * (2 + 1j)

    assert gradcheck(Right.apply, (z,))
    assert not gradcheck(Wrong.apply, (z,), raise_exception=False)


# -- stft / istft ------------------------------------------------------------------------------

def _hann(n):
    return np.hanning(n + 2)[1:-1]


STFT_CASES = [(8, None, None), (9, 3, 6), (16, 4, 16), (8, 2, 5)]


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.filterwarnings("ignore:The length of signal is shorter")
@pytest.mark.parametrize("shape", [(40,), (2, 37)])
@pytest.mark.parametrize("n_fft,hop,win_length", STFT_CASES)
@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("window", [False, True])
@pytest.mark.parametrize("normalized", [False, True])
def test_stft_and_istft(shape, n_fft, hop, win_length, center, window, normalized):
    rng = np.random.default_rng(3)
    for dtype in ("float64", "complex128"):
        x = _array(shape, dtype, seed=4)
        w = _hann(win_length or n_fft) if window else None
        kwargs = dict(hop_length=hop, win_length=win_length, center=center, normalized=normalized)
        arrays = (x,) if w is None else (x, w)
        _check_grads(
            lambda x, w=None: ember.stft(x, n_fft, window=w, return_complex=True, **kwargs),
            lambda x, w=None: torch.stft(x, n_fft, window=w, return_complex=True, **kwargs),
            *arrays, seed=int(rng.integers(100)))
        if dtype != "float64":
            continue
        with torch.no_grad():
            spectrum = torch.stft(torch.tensor(x), n_fft, window=None if w is None else torch.tensor(w),
                                  return_complex=True, **kwargs).numpy()
        istft_arrays = (spectrum,) if w is None else (spectrum, w)
        for length in (None, shape[-1], shape[-1] + 5):
            try:
                torch.istft(torch.tensor(spectrum), n_fft, window=None if w is None else torch.tensor(w),
                            length=length, **kwargs)
            except RuntimeError as error:   # the window's overlap-add has zeros
                with pytest.raises(RuntimeError) as ember_error:
                    ember.istft(ember.tensor(spectrum), n_fft, length=length,
                                window=None if w is None else ember.tensor(w), **kwargs)
                assert str(ember_error.value).replace("ember.", "torch.") == str(error)
                continue
            _check_grads(lambda z, w=None: ember.istft(z, n_fft, window=w, length=length, **kwargs),
                         lambda z, w=None: torch.istft(z, n_fft, window=w, length=length, **kwargs),
                         *istft_arrays)


def test_stft_round_trip_and_old_format():
    x = ember.randn(3, 100, dtype=ember.float64)
    window = ember.hann_window(32, dtype=ember.float64)
    spectrum = ember.stft(x, 32, hop_length=8, window=window, return_complex=True)
    assert spectrum.shape == (3, 17, 13)
    back = ember.istft(spectrum, 32, hop_length=8, window=window, length=100)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-12)
    assert x.stft(32, window=window, return_complex=True).shape == (3, 17, 13)
    assert spectrum.istft(32, hop_length=8, window=window).shape == (3, 96)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        parts = ember.stft(x, 32, hop_length=8, window=window, return_complex=False)
    np.testing.assert_allclose(parts.numpy(), ember.view_as_real(spectrum).numpy())


@pytest.mark.parametrize("n_fft,win_length,hop", [(8, 4, 2), (9, 4, 3), (8, 8, 2)])
def test_stft_align_to_window(n_fft, win_length, hop):
    x = _array((17,), "float64")
    w = _hann(win_length)
    kwargs = dict(hop_length=hop, win_length=win_length, center=False, return_complex=True,
                  align_to_window=True)
    _check_grads(lambda x, w: ember.stft(x, n_fft, window=w, **kwargs),
                 lambda x, w: torch.stft(x, n_fft, window=w, **kwargs), x, w)


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("call", [
    lambda lib: lib.stft(lib.randn(10), 20, return_complex=True, center=False),
    lambda lib: lib.stft(lib.randn(10), 8),
    lambda lib: lib.stft(lib.randn(10), 8, hop_length=0, return_complex=True),
    lambda lib: lib.stft(lib.randn(10), 8, win_length=9, return_complex=True),
    lambda lib: lib.stft(lib.randn(10), 8, window=lib.ones(7), return_complex=True),
    lambda lib: lib.stft(lib.ones(2, 2, 10), 8, return_complex=True),
    lambda lib: lib.stft(lib.randn(10, dtype=lib.complex64), 8, onesided=True),
    lambda lib: lib.stft(lib.randn(10), 4, return_complex=True, align_to_window=True),
    lambda lib: lib.stft(lib.randn(20, dtype=lib.float16), 8, return_complex=True),
    lambda lib: lib.stft(lib.randn(20, dtype=lib.bfloat16), 8, return_complex=True),
    lambda lib: lib.istft(lib.randn(5, 6), 8),
    lambda lib: lib.istft(lib.randn(5, 6, dtype=lib.complex64), 8, hop_length=9),
    lambda lib: lib.istft(lib.randn(5, 6, dtype=lib.complex64), 8, window=lib.ones(3)),
    lambda lib: lib.istft(lib.randn(5, 6, dtype=lib.complex64), 10),
    lambda lib: lib.istft(lib.randn(5, 6, dtype=lib.complex64), 8, onesided=False),
])
def test_stft_errors_match_torch(call):
    with pytest.raises(Exception) as torch_error:
        call(torch)
    with pytest.raises(type(torch_error.value)) as ember_error:
        call(ember)
    assert str(ember_error.value).replace("ember.", "torch.") == str(torch_error.value)


def test_isreal_conj_physical_and_copies():
    data = np.array([1 + 0j, 1 + 1j, np.nan + 0j, -2j])
    e, t = _pair(data)
    assert ember.isreal(e).tolist() == torch.isreal(t).tolist()
    assert e.isreal().tolist() == t.isreal().tolist()
    assert ember.isreal(ember.ones(2)).tolist() == [True, True]
    assert ember.conj_physical_(e) is e
    _same(e, torch.conj_physical_(t))
    real_copy = ember.view_as_real_copy(e)
    _same(real_copy, torch.view_as_real_copy(t))
    real_copy.zero_()
    assert not (e == 0).all()   # a copy: no shared memory
    _same(ember.view_as_complex_copy(ember.view_as_real(e)), torch.view_as_complex_copy(torch.view_as_real(t)))
