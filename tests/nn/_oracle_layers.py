"""Layer checks against torch: the same weights (through state_dict), then outputs, input
gradients, parameter gradients and buffers compared."""
import numpy as np
import torch

import ember


def to_ember(t, device="cpu"):
    return ember.tensor(t.detach().numpy(), device=device)


def assert_close(e, t, atol=1e-8, rtol=1e-6, what=""):
    if t is None:
        assert e is None or not np.any(e.cpu().numpy()), what
        return
    if e is None:  # ember leaves an identically-zero gradient as None
        assert not np.any(t.detach().numpy()), f"{what}: ember gave no value"
        return
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), atol=atol, rtol=rtol,
                               err_msg=what)


def check_layer(ember_cls, torch_cls, args, input_shape, kwargs=None, modes=("train", "eval"),
                seed=0, atol=1e-8, steps=2, call_kwargs=None, device="cpu"):
    """Build both layers in float64 with torch's weights (ember's on ``device``), run ``steps``
    forward/backward passes in each mode and compare everything."""
    kwargs = kwargs or {}
    call_kwargs = call_kwargs or {}
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    tm = torch_cls(*args, **kwargs).double()
    em = ember_cls(*args, **kwargs).double()
    state = tm.state_dict()
    assert list(em.state_dict().keys()) == list(state.keys())
    em.load_state_dict({k: to_ember(v) for k, v in state.items()})
    em.to(device)
    for mode in modes:
        tm.train(mode == "train")
        em.train(mode == "train")
        for _ in range(steps):
            x = rng.standard_normal(input_shape)
            xt = torch.tensor(x, requires_grad=True)
            xe = ember.tensor(x, requires_grad=True, device=device)
            yt, ye = tm(xt, **call_kwargs), em(xe, **call_kwargs)
            if isinstance(yt, tuple):
                assert (ye[1].cpu().numpy() == yt[1].numpy()).all()
                yt, ye = yt[0], ye[0]
            assert tuple(ye.shape) == tuple(yt.shape) and ye.device.type == device
            assert_close(ye, yt, atol, what=f"{mode} output")
            g = rng.standard_normal(tuple(yt.shape))
            yt.backward(torch.tensor(g))
            ye.backward(ember.tensor(g, device=device))
            assert_close(xe.grad, xt.grad, atol, what=f"{mode} input grad")
            for (name, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
                assert_close(pe.grad, pt.grad, atol, what=f"{mode} grad of {name}")
            for (name, be), (_, bt) in zip(em.named_buffers(), tm.named_buffers()):
                assert_close(be, bt, atol, what=f"{mode} buffer {name}")
    return em, tm


def check_function(ember_fn, torch_fn, shapes, *args, atol=1e-8, seed=0, device="cpu", **kwargs):
    """Compare a functional op's output and gradients (float64, ember's on ``device``) with
    torch's."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    te = [ember.tensor(a, requires_grad=True, device=device) for a in arrays]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    ye, yt = ember_fn(*te, *args, **kwargs), torch_fn(*tt, *args, **kwargs)
    if isinstance(yt, tuple):
        assert (ye[1].cpu().numpy() == yt[1].numpy()).all(), "indices differ"
        ye, yt = ye[0], yt[0]
    assert tuple(ye.shape) == tuple(yt.shape) and ye.device.type == device
    assert_close(ye, yt, atol, what="output")
    g = rng.standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(g))
    ye.backward(ember.tensor(g, device=device))
    for i, (a, b) in enumerate(zip(te, tt)):
        assert_close(a.grad, b.grad, atol, what=f"grad of input {i}")


def gradcheck_both(fn, shapes, seed=0, second_order=True):
    """float64 gradcheck (and gradgradcheck) of ``fn`` on tiny random inputs."""
    rng = np.random.default_rng(seed)
    inputs = tuple(ember.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes)
    assert ember.autograd.gradcheck(fn, inputs)
    if second_order:
        assert ember.autograd.gradgradcheck(fn, inputs)
