"""nn.DataParallel and nn.parallel's parts against torch: without a GPU, a pass-through
wrapper (torch's behaviour there); the multi-device mechanics (scatter, replicate,
parallel_apply, gather) checked on CPU devices, where torch's refuse to run."""
import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.skipif(ember.cuda.is_available(), reason="the tests of a machine without GPUs")


def _pair():
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)).double()
    e = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Linear(4, 2)).double()
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return t, e


def test_without_a_gpu_it_is_a_pass_through_wrapper_as_torchs():
    t, e = _pair()
    tw, ew = torch.nn.DataParallel(t), ember.nn.DataParallel(e)
    assert ew.module is e and ew.device_ids == tw.device_ids == []
    assert list(ew.state_dict()) == list(tw.state_dict())
    assert all(k.startswith("module.") for k in ew.state_dict())
    assert repr(ember.nn.DataParallel(ember.nn.Linear(3, 4))) == repr(torch.nn.DataParallel(torch.nn.Linear(3, 4)))
    x = np.random.default_rng(0).normal(size=(5, 3))
    xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    w = np.arange(10.0).reshape(5, 2)   # a plain sum through batch norm has a zero gradient
    (tw(xt) * torch.tensor(w)).sum().backward()
    (ew(xe) * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
    for (name, pt), (_, pe) in zip(t.named_parameters(), e.named_parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
    for wrapper in (tw, ew):
        with pytest.raises(AttributeError):
            wrapper.output_device   # torch sets it only where there are devices


def test_a_state_dict_saved_from_data_parallel_loads_into_the_wrapper():
    t, e = _pair()
    state = {k: ember.tensor(v.numpy()) for k, v in torch.nn.DataParallel(t).state_dict().items()}
    wrapper = ember.nn.DataParallel(ember.nn.Sequential(
        ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Linear(4, 2)).double())
    wrapper.load_state_dict(state)
    np.testing.assert_array_equal(wrapper.module[0].weight.detach().numpy(), t[0].weight.detach().numpy())


def test_data_parallel_refuses_without_a_device_type_as_torchs():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="device type could not be determined"):
            lib.nn.parallel.data_parallel(lib.nn.Linear(2, 2), lib.ones(1, 2))


def test_scatter_replicate_apply_gather_give_the_single_device_result():
    from ember.nn.parallel import gather, parallel_apply, replicate, scatter
    _, e = _pair()
    e.eval()
    x = ember.tensor(np.random.default_rng(1).normal(size=(5, 3)), requires_grad=True)
    devices = ["cpu", "cpu"]
    chunks = scatter((x,), devices)
    assert [c[0].shape[0] for c in chunks] == [3, 2]
    replicas = replicate(e, devices)
    assert replicas[0] is not e and replicas[0][0] is not e[0]
    out = gather(parallel_apply(replicas, chunks), "cpu")
    expected = e(x)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    grads = [p.grad.numpy().copy() for p in e.parameters()]
    for p in e.parameters():
        p.grad = None
    expected.sum().backward()
    for got, p in zip(grads, e.parameters()):
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=1e-12)


def test_scatter_and_gather_walk_containers():
    from ember.nn.parallel import gather, scatter
    x = ember.arange(8.0).reshape(4, 2)
    parts = scatter({"a": x, "b": [x, x + 1]}, ["cpu", "cpu"])
    assert parts[1]["a"].shape == (2, 2) and parts[0]["b"][1].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    back = gather(parts, -1)
    np.testing.assert_array_equal(back["a"].numpy(), x.numpy())
    np.testing.assert_array_equal(back["b"][0].numpy(), x.numpy())
