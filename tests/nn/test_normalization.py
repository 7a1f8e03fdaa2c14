"""Normalization functions and layers against torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn as nn
import ember.nn.functional as F

try:
    from ._oracle_layers import check_function, check_layer, gradcheck_both
except ImportError:
    from _oracle_layers import check_function, check_layer, gradcheck_both


@pytest.mark.parametrize("cls,args,kwargs,shape", [
    ("BatchNorm1d", (3,), {}, (4, 3)),
    ("BatchNorm1d", (3,), dict(momentum=None), (4, 3, 5)),
    ("BatchNorm2d", (3,), dict(affine=False), (2, 3, 4, 5)),
    ("BatchNorm2d", (3,), dict(track_running_stats=False), (2, 3, 4, 5)),
    ("BatchNorm3d", (2,), dict(momentum=0.3, eps=1e-3), (2, 2, 3, 2, 3)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 5)),
    ("InstanceNorm1d", (3,), dict(affine=True, track_running_stats=True), (3, 5)),
    ("InstanceNorm2d", (3,), dict(affine=True, track_running_stats=True), (2, 3, 4, 5)),
    ("LayerNorm", ((4, 5),), {}, (2, 3, 4, 5)),
    ("LayerNorm", (5,), dict(bias=False), (2, 3, 5)),
    ("LayerNorm", (5,), dict(elementwise_affine=False), (2, 3, 5)),
    ("GroupNorm", (2, 6), {}, (2, 6, 3, 2)),
    ("GroupNorm", (3, 3), dict(affine=False), (2, 3, 4)),
    ("RMSNorm", ((3, 4),), {}, (2, 3, 4)),
    ("RMSNorm", (4,), dict(eps=1e-3, elementwise_affine=False), (2, 3, 4)),
    ("LocalResponseNorm", (3,), {}, (2, 6, 4)),
    ("LocalResponseNorm", (2,), dict(alpha=0.1, k=2.0), (2, 5, 3, 4)),
])
def test_normalization_layers_match_torch(cls, args, kwargs, shape, device):
    check_layer(getattr(nn, cls), getattr(torch.nn, cls), args, shape, kwargs, steps=3, device=device)


def test_batch_norm_state_dict_keys_and_cumulative_average():
    em, tm = check_layer(nn.BatchNorm2d, torch.nn.BatchNorm2d, (2,), (3, 2, 2, 2),
                         dict(momentum=None), modes=("train",), steps=4)
    assert list(em.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    assert int(em.num_batches_tracked) == 4 and em.num_batches_tracked.dtype == ember.int64


def test_batch_norm_functional_running_stats():
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    rm, rv = ember.zeros(2, dtype=ember.float64), ember.ones(2, dtype=ember.float64)
    rmt, rvt = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    F.batch_norm(ember.tensor(x), rm, rv, training=True, momentum=0.3)
    TF.batch_norm(torch.tensor(x), rmt, rvt, training=True, momentum=0.3)
    np.testing.assert_allclose(rm.numpy(), rmt.numpy())
    np.testing.assert_allclose(rv.numpy(), rvt.numpy())


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_function_grads(training):
    rng = np.random.default_rng(4)
    stats = (torch.tensor(rng.standard_normal(3)), torch.tensor(rng.uniform(0.5, 2, 3)))

    def run(lib, fn, x, w, b):
        rm, rv = (lib.tensor(s.numpy()) for s in stats)
        return fn(x, rm, rv, w, b, training=training)
    check_function(lambda x, w, b: run(ember, F.batch_norm, x, w, b),
                   lambda x, w, b: run(torch, TF.batch_norm, x, w, b),
                   [(4, 3, 2), (3,), (3,)])


def test_normalization_functions_match_torch():
    check_function(F.layer_norm, TF.layer_norm, [(3, 4, 5)], (4, 5))
    check_function(lambda x, w, b: F.layer_norm(x, (5,), w, b),
                   lambda x, w, b: TF.layer_norm(x, (5,), w, b), [(3, 4, 5), (5,), (5,)])
    check_function(lambda x, w, b: F.group_norm(x, 2, w, b),
                   lambda x, w, b: TF.group_norm(x, 2, w, b), [(3, 4, 5), (4,), (4,)])
    check_function(F.instance_norm, TF.instance_norm, [(3, 4, 5)])
    check_function(lambda x, w: F.rms_norm(x, (5,), w), lambda x, w: TF.rms_norm(x, (5,), w),
                   [(3, 4, 5), (5,)])
    check_function(F.local_response_norm, TF.local_response_norm, [(2, 5, 3, 3)], 3)


def test_normalization_gradcheck_and_double_backward():
    gradcheck_both(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), [(3, 2, 4), (2,), (2,)])
    gradcheck_both(lambda x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)])
    gradcheck_both(lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)])
    gradcheck_both(lambda x: F.instance_norm(x), [(2, 2, 4)])
    gradcheck_both(lambda x, w: F.rms_norm(x, (4,), w), [(3, 4), (4,)])


def test_norm_grad_fn_names():
    x = ember.randn(3, 4, requires_grad=True)
    assert type(F.batch_norm(x, None, None, training=True).grad_fn).__name__ == \
        "NativeBatchNormBackward0"
    assert type(F.layer_norm(x, (4,)).grad_fn).__name__ == "NativeLayerNormBackward0"


def test_normalization_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(ember.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match="running_mean should contain 4 elements not 3"):
        nn.BatchNorm2d(3)(ember.randn(2, 4, 4, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(ember.randn(1, 3))
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\]"):
        F.layer_norm(ember.randn(2, 3), (4,))
