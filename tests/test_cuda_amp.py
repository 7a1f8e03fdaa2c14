"""``ember.cuda.amp`` against ``torch.cuda.amp`` on a machine without CUDA: the same names and
signatures, the same deprecation and fallback warnings, and the objects ``ember.amp`` makes
for ``"cuda"`` underneath."""
import inspect
import warnings

import numpy as np
import pytest
import torch

import ember


def _warnings_of(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make()
    return result, [(w.category, str(w.message).replace("torch", "ember"),
                     w.filename == __file__) for w in caught]


def test_the_names_and_signatures_are_torchs():
    assert ember.cuda.amp.__all__ == torch.cuda.amp.__all__
    for name in ("autocast", "GradScaler", "custom_fwd", "custom_bwd"):
        ours, theirs = getattr(ember.cuda.amp, name), getattr(torch.cuda.amp, name)
        ours = ours.__init__ if isinstance(ours, type) else ours
        theirs = theirs.__init__ if isinstance(theirs, type) else theirs
        assert inspect.signature(ours).parameters.keys() == \
            inspect.signature(theirs).parameters.keys(), name
    assert ember.cuda.amp.amp_definitely_not_available() == \
        torch.cuda.amp.amp_definitely_not_available()


@pytest.mark.parametrize("make", [
    lambda lib: lib.cuda.amp.autocast(),
    lambda lib: lib.cuda.amp.autocast(dtype=lib.bfloat16, cache_enabled=False),
    lambda lib: lib.cuda.amp.GradScaler(),
    lambda lib: lib.cuda.amp.GradScaler(init_scale=8.0, enabled=False),
])
def test_construction_warns_and_disables_as_torch(make):
    ours, our_warnings = _warnings_of(lambda: make(ember))
    theirs, their_warnings = _warnings_of(lambda: make(torch))
    assert our_warnings == their_warnings
    assert our_warnings[0][0] is FutureWarning
    assert ours._enabled == theirs._enabled
    base = ember.amp.autocast if isinstance(ours, ember.amp.autocast) else ember.amp.GradScaler
    assert isinstance(ours, base)


def test_autocast_leaves_the_state_alone_when_disabled():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.cuda.amp.autocast():
            assert not ember.is_autocast_enabled("cuda")
        with torch.cuda.amp.autocast():
            assert not torch.is_autocast_enabled("cuda")


def _function(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        @lib.cuda.amp.custom_fwd(cast_inputs=lib.float32)
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @lib.cuda.amp.custom_bwd
        def backward(ctx, grad):
            return grad * 2
    return Double


def test_custom_fwd_and_bwd_warn_and_decorate_as_torchs():
    (ours, our_warnings), (theirs, their_warnings) = (_warnings_of(lambda: _function(lib))
                                                      for lib in (ember, torch))
    assert our_warnings == their_warnings and len(our_warnings) == 2
    grads = []
    for lib, fn in ((ember, ours), (torch, theirs)):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        fn.apply(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)
    bare, bare_warnings = _warnings_of(lambda: ember.cuda.amp.custom_fwd(lambda ctx, x: x))
    assert callable(bare) and bare_warnings[0][0] is FutureWarning
