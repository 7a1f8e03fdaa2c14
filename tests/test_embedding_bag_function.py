"""``ember.embedding_bag``: ATen's four outputs (output, offset2bag, bag_size, max_indices) and
the gradient of the output, against ``torch.embedding_bag``."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
WEIGHT = RNG.standard_normal((7, 3))
INDICES = [1, 2, 4, 5, 4, 3, 6, 0]
OFFSETS = [0, 2, 2, 5]

# not compared: scale_grad_by_freq (torch's CPU backward scales some rows by another index's
# count: in [1, 2, 4, 5, 4, 3, 6, 0] the row of 5 gets half its gradient), and a last offset
# short of the end with include_last_offset (torch's float64 kernel adds the rest to the last bag)
CASES = {
    "sum": (False, 0), "mean": (False, 1), "max": (False, 2),
    "sum_last_offset": (False, 0, False, None, True),
    "mean_last_offset": (False, 1, False, None, True),
    "sum_padding": (False, 0, False, None, False, 4),
    "mean_padding": (False, 1, False, None, False, 4),
    "max_padding": (False, 2, False, None, False, 4),
    "per_sample_weights": (False, 0, False, "psw"),
}


def _run(lib, dtype, args, offsets=OFFSETS):
    weight = lib.tensor(WEIGHT).to(getattr(lib, dtype)).requires_grad_()
    args = tuple(lib.tensor(np.linspace(0.5, 2.0, len(INDICES))).to(getattr(lib, dtype))
                 if a == "psw" else a for a in args)
    out = lib.embedding_bag(weight, lib.tensor(INDICES), lib.tensor(offsets), *args)
    (out[0] * lib.arange(1.0, 4.0).to(out[0].dtype)).sum().backward()
    return [t.detach().double().numpy() if t.is_floating_point() else t.numpy() for t in out] + \
        [weight.grad.double().numpy(), [str(t.dtype).split(".")[-1] for t in out]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_embedding_bag_matches_torch(case, dtype):
    offsets = OFFSETS + [len(INDICES)] if "last_offset" in case else OFFSETS
    ours, theirs = _run(ember, dtype, CASES[case], offsets), _run(torch, dtype, CASES[case], offsets)
    assert ours[-1] == theirs[-1]
    for e, t in zip(ours[:-1], theirs[:-1]):
        assert e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-6)


def test_int32_indices_give_int32_outputs():
    out = ember.embedding_bag(ember.tensor(WEIGHT), ember.tensor(INDICES, dtype=ember.int32),
                              ember.tensor(OFFSETS, dtype=ember.int32), False, 1)
    ref = torch.embedding_bag(torch.tensor(WEIGHT), torch.tensor(INDICES, dtype=torch.int32),
                              torch.tensor(OFFSETS, dtype=torch.int32), False, 1)
    assert [str(t.dtype) for t in out[1:]] == [str(t.dtype).replace("torch", "ember") for t in ref[1:]]


def test_offsets_are_required_as_torch():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="argument 'offsets' \\(position 3\\) must be Tensor"):
            lib.embedding_bag(lib.tensor(WEIGHT), lib.tensor([[1, 2], [3, 4]]), None)
