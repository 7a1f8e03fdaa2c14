"""Activations kept in oneDNN's layout between ops (``ember._blocked_tensor``): models made of
convolutions, batch norms, activations and residual additions give torch's outputs and
gradients, the activations between them stay in the primitives' layout (nothing converts
them), and a tensor held so is an ordinary tensor to everything that reads it."""
import io

import numpy as np
import pytest
import torch

import ember
from ember._backend import choice
from ember._blocked_tensor import blocked_array

pytestmark = pytest.mark.skipif(not choice.enabled(choice.ONEDNN),
                                reason="oneDNN is not in use (EMBER_ONEDNN=0 or no wheel)")


def _pair(build, seed=0):
    """The same module built in both libraries, ember's with torch's weights."""
    torch.manual_seed(seed)
    theirs = build(torch)
    ours = build(ember)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def _residual(lib, cin, cout, stride):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
            self.shortcut = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                           nn.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else nn.Identity())
            self.relu = nn.ReLU()

        def forward(self, x):
            return self.relu(self.body(x) + self.shortcut(x))
    return Block()


def resnet_like(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                         nn.ReLU(), _residual(lib, 16, 16, 1), _residual(lib, 16, 32, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def mobilenet_like(lib):
    """24 and 144 channels: blocks of 16 padded; depthwise convolutions; ReLU6; a residual."""
    nn = lib.nn

    class Inverted(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(
                nn.Conv2d(24, 144, 1, bias=False), nn.BatchNorm2d(144), nn.ReLU6(),
                nn.Conv2d(144, 144, 3, 1, 1, groups=144, bias=False), nn.BatchNorm2d(144),
                nn.ReLU6(), nn.Conv2d(144, 24, 1, bias=False), nn.BatchNorm2d(24))

        def forward(self, x):
            return x + self.conv(x)
    return nn.Sequential(nn.Conv2d(3, 24, 3, 2, 1, bias=False), nn.BatchNorm2d(24), nn.ReLU6(),
                         Inverted(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(24, 5))


def dcgan_like(lib):
    """Transposed convolutions, LeakyReLU, Tanh."""
    nn = lib.nn
    return nn.Sequential(
        nn.ConvTranspose2d(8, 32, 4, 1, 0, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
        nn.ConvTranspose2d(32, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2),
        nn.Conv2d(32, 1, 4, 1, 0, bias=False), nn.Tanh(), nn.Flatten())


MODELS = {"resnet": (resnet_like, (4, 3, 16, 16)), "mobilenet": (mobilenet_like, (4, 3, 16, 16)),
          "dcgan": (dcgan_like, (4, 8, 1, 1))}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("training", [True, False])
def test_models_match_torch_with_layouts_kept(name, training):
    build, shape = MODELS[name]
    ours, theirs = _pair(build)
    ours.train(training)
    theirs.train(training)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    for _ in range(2):   # the second step on the running statistics the first updated
        ey, ty = ours(ex), theirs(tx)
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        (ey * ey).sum().backward()
        (ty * ty).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-5)
    for (pname, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=pname)
    for (bname, b), (_, c) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-5, atol=1e-6, err_msg=bname)


def test_activations_stay_in_the_primitives_layout():
    """Between the convolutions of a residual block nothing converts the activations: each op
    hands the next one its output in oneDNN's layout, in the forward and in the backward."""
    ours, _ = _pair(lambda lib: _residual(lib, 16, 16, 1))
    x = ember.randn(2, 16, 8, 8, requires_grad=True)
    conv1, bn1, relu1 = ours.body[0], ours.body[1], ours.body[2]
    y1 = conv1(x)
    z1 = relu1(bn1(y1))
    assert blocked_array(y1) is not None and blocked_array(z1) is not None
    out = ours.relu(ours.body[4](ours.body[3](z1)) + x)
    assert blocked_array(out) is None   # x is plain: the sum is computed on plain arrays
    grads = ember.autograd.grad(ours.body[4](ours.body[3](z1)).sum(), [z1, y1])
    assert all(blocked_array(g) is not None for g in grads)


def test_a_kept_tensor_is_an_ordinary_tensor():
    conv = ember.nn.Conv2d(16, 16, 3, padding=1, bias=False)
    tconv = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
    tconv.weight.data = torch.tensor(conv.weight.detach().numpy())
    x = np.random.default_rng(2).standard_normal((2, 16, 5, 5)).astype(np.float32)
    expected = tconv(torch.tensor(x)).detach().numpy()

    def fresh():
        with ember.no_grad():
            y = conv(ember.tensor(x))
        assert blocked_array(y) is not None
        return y

    y = fresh()   # metadata without converting
    assert (y.shape, y.dtype, y.dim(), y.numel(), y.device.type) == \
        ((2, 16, 5, 5), ember.float32, 4, 800, "cpu")
    assert y.is_floating_point() and not y.is_complex() and y.layout == ember.strided
    assert blocked_array(y) is not None
    assert isinstance(y, ember.Tensor) and type(y).__name__ == "Tensor"
    for read in (lambda t: t.numpy(), lambda t: t[1].numpy(), lambda t: t.view(-1).numpy(),
                 lambda t: t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).numpy(),
                 lambda t: t.clone().numpy(), lambda t: t.detach().numpy()):
        np.testing.assert_allclose(read(fresh()), read(ember.tensor(expected)), rtol=1e-5,
                                   atol=1e-5)
    y = fresh()
    assert y.stride() == (400, 25, 5, 1) and y.is_contiguous()
    assert blocked_array(y) is None and type(y) is ember.Tensor   # converted for good
    assert "tensor(" in repr(fresh())
    buffer = io.BytesIO()
    ember.save(fresh(), buffer)
    buffer.seek(0)
    np.testing.assert_allclose(ember.load(buffer).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_aliases_of_a_kept_tensor_share_its_data():
    conv = ember.nn.Conv2d(16, 16, 1, bias=False)
    y = conv(ember.randn(1, 16, 3, 3))
    alias = y.detach()
    assert blocked_array(alias) is not None
    alias.add_(1)   # converts the alias; the tensor it aliases sees the change
    assert blocked_array(y) is None
    np.testing.assert_array_equal(y.detach().numpy(), alias.numpy())
    y.mul_(0)
    np.testing.assert_array_equal(alias.numpy(), np.zeros((1, 16, 3, 3), np.float32))


def test_in_place_change_of_a_saved_kept_tensor_is_refused():
    conv = ember.nn.Conv2d(16, 16, 3, padding=1, bias=False)
    y = ember.nn.functional.relu(conv(ember.randn(1, 16, 4, 4, requires_grad=True)))
    z = conv(y)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_mixed_layouts_in_an_addition_and_a_backward():
    """A kept tensor added to a plain one, and a plain gradient meeting a kept saved output:
    the plain operand is converted into the kept one's layout."""
    ours, theirs = _pair(lambda lib: lib.nn.Sequential(lib.nn.Conv2d(16, 16, 3, padding=1),
                                                       lib.nn.ReLU()))
    x = np.random.default_rng(3).standard_normal((2, 16, 6, 6)).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ey, ty = ours(ex) + ex, theirs(tx) + tx
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    weight = np.random.default_rng(4).standard_normal((2, 16, 6, 6)).astype(np.float32)
    (ey * ember.tensor(weight)).sum().backward()
    (ty * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def _read_in_child(y, queue):
    queue.put(float(y.numpy().sum()))


def test_a_kept_tensor_read_in_a_forked_child():
    """The child converts with a reorder made for its one thread (the parent's primitives are
    not run there: GNU OpenMP's pool does not survive fork)."""
    import multiprocessing
    with ember.no_grad():
        y = ember.nn.Conv2d(16, 16, 3, padding=1, bias=False)(ember.randn(2, 16, 8, 8))
    assert blocked_array(y) is not None
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_read_in_child, args=(y, queue))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == pytest.approx(float(y.numpy().sum()), rel=1e-5)
