"""CTCLoss / F.ctc_loss against torch: losses and gradients w.r.t. the log-probabilities."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn as nn
import ember.nn.functional as F

T, N, C = 7, 4, 5
INPUT_LENGTHS = [7, 6, 7, 3]
TARGET_LENGTHS = [3, 4, 0, 2]


def _targets(rng, repeated=True):
    targets = rng.integers(1, C, (N, 4))
    if repeated:
        targets[0, :3] = 2  # repeated labels need a blank between them
    return targets


def _concatenated(padded, lengths):
    return np.concatenate([padded[i, :n] for i, n in enumerate(lengths)])


def _run(lib, logits, targets, input_lengths, target_lengths, through_log_softmax=True,
         **kwargs):
    functional = TF if lib is torch else F
    x = lib.tensor(logits, requires_grad=True)
    log_probs = x.log_softmax(-1) if through_log_softmax else x
    loss = functional.ctc_loss(log_probs, lib.tensor(targets), input_lengths, target_lengths,
                               **kwargs)
    return x, loss


def _check(logits, targets, input_lengths, target_lengths, through_log_softmax=True,
           lengths_as_tensors=False, **kwargs):
    if lengths_as_tensors:
        lengths_t = (torch.tensor(input_lengths), torch.tensor(target_lengths))
        lengths_e = (ember.tensor(input_lengths), ember.tensor(target_lengths))
    else:
        lengths_t = lengths_e = (input_lengths, target_lengths)
    xt, lt = _run(torch, logits, targets, *lengths_t, through_log_softmax, **kwargs)
    xe, le = _run(ember, logits, targets, *lengths_e, through_log_softmax, **kwargs)
    assert tuple(le.shape) == tuple(lt.shape)
    assert le.dtype == ember.float64
    np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = np.random.default_rng(9).standard_normal(tuple(lt.shape))
    lt.backward(torch.tensor(g))
    le.backward(ember.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("concatenated", [False, True])
@pytest.mark.parametrize("blank", [0, 3])
def test_ctc_loss_matches_torch(reduction, concatenated, blank):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((T, N, C))
    targets = (_targets(rng) + blank) % C  # labels avoid the blank
    targets[targets == blank] = (blank + 1) % C
    if concatenated:
        targets = _concatenated(targets, TARGET_LENGTHS)
    _check(logits, targets, INPUT_LENGTHS, TARGET_LENGTHS, blank=blank, reduction=reduction,
           lengths_as_tensors=concatenated)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_impossible_alignments_are_infinite_or_zeroed(reduction):
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((T, N, C))
    targets = _targets(rng)  # sequence 0 (2, 2, 2) needs 5 steps, sequence 3 needs 2
    input_lengths = [3, 6, 7, 1]
    _check(logits, targets, input_lengths, TARGET_LENGTHS, reduction=reduction,
           zero_infinity=True)
    xe, le = _run(ember, logits, targets, input_lengths, TARGET_LENGTHS, reduction="none")
    xt, lt = _run(torch, logits, targets, input_lengths, TARGET_LENGTHS, reduction="none")
    assert np.isinf(lt.detach().numpy()).sum() == 2
    np.testing.assert_array_equal(np.isinf(le.detach().numpy()), np.isinf(lt.detach().numpy()))
    le.sum().backward()
    lt.sum().backward()
    np.testing.assert_array_equal(np.isnan(xe.grad.numpy()), np.isnan(xt.grad.numpy()))
    finite = ~np.isnan(xt.grad.numpy())
    np.testing.assert_allclose(xe.grad.numpy()[finite], xt.grad.numpy()[finite], atol=1e-12)


def test_gradient_on_raw_log_probs_matches_torch():
    """torch's gradient w.r.t. log_probs is exp(log_probs) - occupancy (the gradient through
    a log_softmax); inputs that are not normalized show it."""
    rng = np.random.default_rng(2)
    _check(rng.standard_normal((T, N, C)), _targets(rng), INPUT_LENGTHS, TARGET_LENGTHS,
           through_log_softmax=False, reduction="sum")


def test_unbatched_module_and_float32():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((6, C))
    target = np.array([1, 2, 2])
    for reduction in ("none", "mean"):
        _check(logits, target, 6, 3, reduction=reduction, lengths_as_tensors=True)
    loss_t = torch.nn.CTCLoss(blank=0, zero_infinity=True)
    loss_e = nn.CTCLoss(blank=0, zero_infinity=True)
    lp = rng.standard_normal((T, N, C)).astype(np.float32)
    xt = torch.tensor(lp, requires_grad=True)
    xe = ember.tensor(lp, requires_grad=True)
    targets = _targets(rng)
    yt = loss_t(xt.log_softmax(2), torch.tensor(targets), INPUT_LENGTHS, TARGET_LENGTHS)
    ye = loss_e(xe.log_softmax(2), ember.tensor(targets), INPUT_LENGTHS, TARGET_LENGTHS)
    assert ye.dtype == ember.float32 and ye.shape == ()
    np.testing.assert_allclose(ye.item(), yt.item(), rtol=1e-5)
    yt.backward()
    ye.backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_ctc_loss_errors_match_torch():
    lp = ember.randn(4, 2, 3).log_softmax(2)
    targets = ember.tensor([[1, 1, 1], [1, 2, 0]])
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 4, "
                                           "but got value 5"):
        F.ctc_loss(lp, targets, [5, 3], [3, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size at least 4 at "
                                           "dimension 1, but got size 3 for argument #2"):
        F.ctc_loss(lp, targets, [4, 3], [4, 2])
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, targets, [4, 3, 3], [3, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size 5 at dimension 0, "
                                           "but got size 4 for argument #2 'targets'"):
        F.ctc_loss(lp, ember.tensor([1, 1, 1, 1]), [4, 3], [3, 2])
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.ctc_loss(lp, targets, [4, 3], [3, 2], reduction="foo")


def test_ctc_loss_graph_names_and_training_reduces_loss():
    lp = ember.randn(5, 2, 4, requires_grad=True)
    loss = F.ctc_loss(lp.log_softmax(2), ember.tensor([[1, 2], [3, 3]]), [5, 5], [2, 2],
                      reduction="none")
    assert loss.grad_fn.name() == "CtcLossBackward0"
    logits = ember.zeros(6, 1, 4, requires_grad=True)
    opt = ember.optim.Adam([logits], lr=0.1)
    first = None
    for _ in range(40):
        opt.zero_grad()
        loss = F.ctc_loss(logits.log_softmax(2), ember.tensor([[1, 2, 3]]), [6], [3])
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < first / 4
