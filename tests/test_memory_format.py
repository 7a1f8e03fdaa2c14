"""Memory formats against torch: ``channels_last`` strides through ``contiguous``,
``is_contiguous``, ``to``, ``clone``, the ``*_like`` creators, ``Module.to``, a convolution /
batch norm / ReLU / residual block whose activations stay channels-last, forward and backward,
and pooling, on each kernel library."""
import pickle

import numpy as np
import pytest
import torch

import ember
from ember._backend import choice, openmp_kernels

LIBRARIES = [choice.NUMPY] + ([choice.ONEDNN] if choice.enabled(choice.ONEDNN) else [])


def _x(lib, shape=(2, 3, 4, 5)):
    return lib.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_contiguous_in_a_format_gives_torchs_strides_and_values(fmt):
    got = _x(ember).contiguous(memory_format=getattr(ember, fmt))
    want = _x(torch).contiguous(memory_format=getattr(torch, fmt))
    assert got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for other in ("channels_last", "contiguous_format"):
        assert got.is_contiguous(memory_format=getattr(ember, other)) == \
            want.is_contiguous(memory_format=getattr(torch, other))
    assert got.contiguous(memory_format=getattr(ember, fmt)) is got


def test_channels_last_3d_and_size_one_dims():
    for shape, fmt in (((2, 3, 4, 5, 6), "channels_last_3d"), ((1, 3, 1, 5), "channels_last"),
                       ((2, 1, 4, 5), "channels_last")):
        got = _x(ember, shape).contiguous(memory_format=getattr(ember, fmt))
        want = _x(torch, shape).contiguous(memory_format=getattr(torch, fmt))
        assert got.stride() == want.stride(), shape
        assert got.is_contiguous() == want.is_contiguous(), shape
        assert got.is_contiguous(memory_format=getattr(ember, fmt))


def test_bad_formats_raise_torchs_errors():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
            lib.randn(2, 3, 4).contiguous(memory_format=lib.channels_last)
        with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
            _x(lib).contiguous(memory_format=lib.channels_last).contiguous(
                memory_format=lib.preserve_format)
        assert not lib.randn(2, 3, 4).is_contiguous(memory_format=lib.channels_last)
    assert repr(ember.channels_last) == "ember.channels_last"
    assert pickle.loads(pickle.dumps(ember.channels_last)) is ember.channels_last


def test_to_clone_and_like_keep_or_set_the_format():
    for lib in (torch, ember):
        x = _x(lib)
        y = x.to(memory_format=lib.channels_last)
        assert y.is_contiguous(memory_format=lib.channels_last) and not y.is_contiguous()
        assert y.to(lib.float64).dtype == lib.float64
        assert y.clone().stride() == y.stride()
        assert lib.empty_like(y).stride() == y.stride()
        assert lib.zeros_like(y).stride() == y.stride() and not lib.zeros_like(y).any()
        assert lib.ones_like(y, memory_format=lib.contiguous_format).is_contiguous()
        assert y.to(memory_format=lib.contiguous_format).is_contiguous()
    a, b = (lib_x.to(memory_format=lib.channels_last) for lib_x, lib in ((_x(ember), ember),
                                                                          (_x(torch), torch)))
    assert a.to(memory_format=ember.contiguous_format).stride() == \
        b.to(memory_format=torch.contiguous_format).stride()


def test_clone_of_channels_last_is_differentiable():
    x = _x(ember).requires_grad_()
    y = x.contiguous(memory_format=ember.channels_last)
    (y.clone() * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3, 4, 5), 2.0, np.float32))


class _Block:
    """conv -> batch norm -> relu -> conv, plus the input (a residual block)."""

    def __init__(self, lib):
        lib.manual_seed(0)
        self.lib = lib
        nn = lib.nn
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.modules = nn.ModuleList([self.conv1, self.bn, self.conv2])

    def __call__(self, x):
        return self.conv2(self.lib.relu(self.bn(self.conv1(x)))) + x


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_channels_last_block_stays_channels_last_and_matches_torch(library):
    if library == choice.ONEDNN and not openmp_kernels.available():
        pytest.skip("no C compiler: ReLU has no kernel on oneDNN's side without ember's loops")
    theirs, ours = _Block(torch), _Block(ember)
    ours.modules.load_state_dict({k: ember.tensor(v.detach().numpy())
                                  for k, v in theirs.modules.state_dict().items()})
    for block, lib in ((theirs, torch), (ours, ember)):
        block.modules.to(memory_format=lib.channels_last)
        assert block.conv1.weight.is_contiguous(memory_format=lib.channels_last)
    rng = np.random.default_rng(0)
    # large enough for every kernel of the block to take it (ReLU's OpenMP loop from 16384)
    x_data = rng.standard_normal((4, 8, 24, 25)).astype(np.float32)
    g_data = rng.standard_normal((4, 8, 24, 25)).astype(np.float32)
    results = []
    for block, lib in ((theirs, torch), (ours, ember)):
        x = lib.tensor(x_data).to(memory_format=lib.channels_last).requires_grad_()
        with choice.only(library) if lib is ember else _nothing():
            y = block(x)
            y.backward(lib.tensor(g_data).to(memory_format=lib.channels_last))
        assert y.is_contiguous(memory_format=lib.channels_last), lib.__name__
        results.append([t.detach().numpy() for t in (y, x.grad, block.conv1.weight.grad,
                                                      block.bn.weight.grad, block.conv2.bias.grad)])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1, np.abs(want).max()))


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"])
def test_pooling_keeps_channels_last_and_matches_torch(pool, library):
    """As torch's: a channels-last input gives a channels-last output, on either library."""
    args = {"max_pool2d": (3, 2, 1), "avg_pool2d": (2,), "adaptive_avg_pool2d": ((4, 3),)}[pool]
    x_data = np.random.default_rng(1).standard_normal((8, 16, 12, 12)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        x = lib.tensor(x_data).to(memory_format=lib.channels_last).requires_grad_()
        with choice.only(library) if lib is ember else _nothing():
            y = getattr(lib.nn.functional, pool)(x, *args)
            y.backward(lib.ones_like(y))
        assert y.is_contiguous(memory_format=lib.channels_last), lib.__name__
        results.append([y.detach().numpy(), x.grad.numpy()])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
