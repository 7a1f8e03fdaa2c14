"""The legacy tensor types (ember.FloatTensor, ...) and Tensor.type against torch."""
import numpy as np
import pytest
import torch

import ember

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
         "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


def _outcome(fn):
    try:
        r = fn()
    except (TypeError, ValueError, RuntimeError) as error:
        return type(error).__name__
    if isinstance(r, (torch.Tensor, ember.Tensor)):
        values = r.float().tolist() if r.dtype in (torch.bfloat16, ember.bfloat16) else r.tolist()
        return (str(r.dtype).split(".")[-1], tuple(r.shape), values if r.numel() < 10 else None)
    return r


CONSTRUCTIONS = {
    "sizes": lambda L, T: T(2, 3).shape,
    "Size": lambda L, T: T(L.Size([2, 2])).shape,
    "empty": lambda L, T: T(),
    "list": lambda L, T: T([1, 0, 2]),
    "nested list": lambda L, T: T([[1, 2], [3, 4]]),
    "tuple is data": lambda L, T: T((2, 3)),
    "NumPy array": lambda L, T: T(np.array([1, 2])),
    "float number": lambda L, T: T(2.5),
    "string": lambda L, T: T("a"),
    "ragged": lambda L, T: T([[1, 2], [3]]),
    "device keyword": lambda L, T: T([1, 2], device="cpu"),
    "dtype keyword": lambda L, T: T(2, dtype=L.float64),
    "tensor of its dtype": lambda L, T: T(L.tensor([1, 2]).to(T.dtype)),
    "tensor of another dtype": lambda L, T: T(L.tensor([1, 2], dtype=L.complex64)),
}


@pytest.mark.parametrize("construction", sorted(CONSTRUCTIONS))
@pytest.mark.parametrize("name", NAMES)
def test_constructing_matches_torch(name, construction):
    make = CONSTRUCTIONS[construction]
    got = _outcome(lambda: make(ember, getattr(ember, name)))
    expected = _outcome(lambda: make(torch, getattr(torch, name)))
    if construction == "sizes":
        got, expected = tuple(got), tuple(expected)
    assert got == expected


@pytest.mark.parametrize("name", NAMES)
def test_isinstance_holds_exactly_for_the_dtype_on_the_cpu(name):
    for lib in (torch, ember):
        T = getattr(lib, name)
        assert isinstance(lib.zeros(2, dtype=T.dtype), T)
        assert type(T(2)) is lib.Tensor
        others = [n for n in NAMES if n != name]
        assert not any(isinstance(lib.zeros(2, dtype=getattr(lib, n).dtype), T) for n in others)
        assert not isinstance(1, T) and not issubclass(T, lib.Tensor)
        assert T.__name__ == name and not T.is_cuda and T.layout == lib.strided
    assert isinstance(ember.nn.Parameter(ember.ones(2)), ember.FloatTensor)


TYPE_CALLS = {
    "no argument": lambda L, t: t.type(),
    "class": lambda L, t: t.type(L.DoubleTensor).type(),
    "torch name": lambda L, t: t.type("torch.IntTensor").type(),
    "bare name": lambda L, t: t.type("FloatTensor"),
    "dtype name": lambda L, t: t.type("torch.float16"),
    "dtype": lambda L, t: t.type(L.float16).type(),
    "long tensor": lambda L, t: t.long().type(),
    "typename": lambda L, t: L.typename(t.bool()),
}


@pytest.mark.parametrize("call", sorted(TYPE_CALLS))
def test_type_matches_torch(call):
    got = _outcome(lambda: TYPE_CALLS[call](ember, ember.ones(2)))
    assert got == _outcome(lambda: TYPE_CALLS[call](torch, torch.ones(2)))


def test_type_accepts_embers_spelling_too():
    t = ember.ones(2).type("ember.LongTensor")
    assert t.dtype == ember.int64 and t.type() == "torch.LongTensor"
