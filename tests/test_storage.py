"""Storages against torch's: ``Tensor.untyped_storage()`` / ``storage()``, ``UntypedStorage``,
``TypedStorage`` and the legacy classes (``FloatStorage``, ...): sizes, element access, slices
sharing memory, writes seen by the tensor, conversions, ``set_`` onto a storage."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember

LIBS = (torch, ember)
LEGACY = ["DoubleStorage", "FloatStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
          "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage",
          "ComplexDoubleStorage", "ComplexFloatStorage"]


pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")


def _both(program):
    return program(torch), program(ember)


def test_untyped_storage_of_a_tensor():
    def program(lib):
        t = lib.arange(6.0).reshape(2, 3)
        s = t.untyped_storage()
        view = t[1]
        return (s.nbytes(), s.size(), len(s), s.element_size(), s.tolist()[:8], s[4], s[-1],
                view.untyped_storage().data_ptr() == s.data_ptr(), str(s.device),
                s.is_shared(), lib.is_storage(s), lib.is_storage(t))
    assert _both(program)[0] == _both(program)[1]


def test_writes_through_a_storage_reach_the_tensor():
    def program(lib):
        t = lib.zeros(3)
        s = t.untyped_storage()
        s[0:4] = 0
        s[2], s[3] = 128, 63           # 1.0 as float32, little-endian
        sl = s[4:8]
        sl.fill_(0)
        typed = t.storage()
        typed[2] = 5.0
        typed[-2] = 7.0
        return t.tolist(), s[4:12].tolist(), type(sl).__name__
    assert _both(program)[0] == _both(program)[1]


def test_typed_storage_of_a_tensor():
    def program(lib):
        t = lib.tensor([[1, 2], [3, 4]], dtype=lib.int32)
        ts = t.storage()
        return (type(ts).__name__, str(ts.dtype).split(".")[1], ts.size(), len(ts), ts.element_size(),
                ts.nbytes(), ts.tolist(), ts[3], list(ts), isinstance(ts, lib.IntStorage),
                isinstance(ts, lib.FloatStorage), t.storage_type().__name__, ts.type(),
                ts.untyped().data_ptr() == t.untyped_storage().data_ptr(), lib.is_storage(ts))
    ours, theirs = _both(program)[1], _both(program)[0]
    assert ours[:-3] == theirs[:-3] and ours[-2:] == theirs[-2:]
    assert ours[-3] == theirs[-3].replace("torch", "ember")


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_storage_classes(name):
    def program(lib):
        cls = getattr(lib, name)
        empty, sized = cls(), cls(3)
        values = cls([1, 0, 1])
        wrapped = cls(wrap_storage=values.untyped())
        return (str(cls.dtype).split(".")[1], empty.size(), sized.size(), values.tolist(),
                wrapped.tolist(), isinstance(values, cls), isinstance(values, lib.TypedStorage),
                values.element_size(), values.nbytes())
    assert _both(program)[0] == _both(program)[1]


def test_untyped_storage_constructors_slices_and_copies():
    def program(lib):
        u = lib.UntypedStorage([1, 2, 3, 4])
        part = u[1:3]
        part[0] = 9
        c = u.clone()
        c[0] = 7
        other = lib.UntypedStorage(4)
        other.copy_(u)
        return (lib.UntypedStorage().size(), lib.UntypedStorage(5).size(), u.tolist(), c.tolist(),
                other.tolist(), part.size(), u.untyped() is u)
    assert _both(program)[0] == _both(program)[1]


def test_typed_storage_conversions_and_set():
    def program(lib):
        t = lib.arange(4.0)
        ts = t.storage()
        d = ts.double()
        d[0] = 5.0
        x = lib.tensor([]).set_(ts)
        y = lib.tensor([]).set_(ts.untyped(), 1, (2,), (2,))
        x[3] = 9.0
        return (str(d.dtype).split(".")[1], d.tolist(), t.tolist(), x.tolist(), y.tolist(),
                ts.long().tolist(), ts.bool().tolist(), ts.clone().tolist(),
                lib.TypedStorage(2, dtype=lib.int64).size(), lib.TypedStorage([1.5], dtype=lib.float64).tolist())
    assert _both(program)[0] == _both(program)[1]


def test_errors_as_torch():
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="Expected a Storage of type float or an UntypedStorage, "
                                               "but got type Double"):
            lib.tensor([]).set_(lib.DoubleStorage([1.0, 2.0]))
        with pytest.raises(IndexError):
            lib.UntypedStorage(2)[5]
        with pytest.raises(RuntimeError):
            lib.FloatStorage(2, dtype=lib.float64)


def test_storage_is_torch_storage_default_and_warns():
    assert ember.Storage is ember.FloatStorage and torch.Storage is torch.FloatStorage
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.ones(2).storage()
        ember.FloatStorage(2)
    assert [str(w.message)[:26] for w in caught] == ["TypedStorage is deprecated"] * 2


def test_share_memory_and_pickle():
    s = ember.UntypedStorage([1, 2, 3])
    assert not s.is_shared()
    s.share_memory_()
    assert s.is_shared() and s.tolist() == [1, 2, 3]
    t = ember.tensor([], dtype=ember.uint8).set_(s)
    t[0] = 5
    assert s[0] == 5
    assert pickle.loads(pickle.dumps(s)).tolist() == [5, 2, 3]
    typed = ember.arange(3.0).storage()
    again = pickle.loads(pickle.dumps(typed))
    assert again.tolist() == [0.0, 1.0, 2.0] and again.dtype == ember.float32
    np.testing.assert_array_equal(ember.tensor([]).set_(again).numpy(), [0.0, 1.0, 2.0])
