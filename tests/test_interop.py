"""safetensors files and DLPack exchange with NumPy and torch."""
import numpy as np
import pytest
import torch

import ember
from ember.utils import safetensors as ember_st

st_numpy = pytest.importorskip("safetensors.numpy", reason="the safetensors package is not installed")
st_torch = pytest.importorskip("safetensors.torch", reason="safetensors.torch needs torch")

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def values(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return t.to(torch.float64).numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.numpy()
    return t.to(ember.float64).numpy() if t.dtype in (ember.bfloat16, ember.float16) else t.numpy()


def sample(lib, dtype_name):
    return (lib.arange(12) % 5 - 2).to(getattr(lib, dtype_name)).reshape(3, 4)


# --- safetensors ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_safetensors_file_round_trip_with_torch(tmp_path, dtype_name):
    ember_st.save_file({"x": sample(ember, dtype_name)}, tmp_path / "e.safetensors")
    theirs = st_torch.load_file(str(tmp_path / "e.safetensors"))["x"]
    assert theirs.dtype == getattr(torch, dtype_name)
    np.testing.assert_array_equal(values(theirs), values(sample(torch, dtype_name)))
    st_torch.save_file({"x": sample(torch, dtype_name)}, str(tmp_path / "t.safetensors"))
    ours = ember_st.load_file(tmp_path / "t.safetensors")["x"]
    assert ours.dtype == getattr(ember, dtype_name)
    np.testing.assert_array_equal(values(ours), values(sample(torch, dtype_name)))


def test_transposed_and_strided_tensors_are_written_by_value(tmp_path):
    base = ember.arange(12.0).reshape(3, 4)
    tensors = {"t": base.t(), "every_other": base[:, ::2], "row": base[1]}
    ember_st.save_file(tensors, tmp_path / "s.safetensors")
    theirs = st_torch.load_file(str(tmp_path / "s.safetensors"))
    reference = torch.arange(12.0).reshape(3, 4)
    assert torch.equal(theirs["t"], reference.t().contiguous())
    assert torch.equal(theirs["every_other"], reference[:, ::2].contiguous())
    assert torch.equal(theirs["row"], reference[1])
    ours = ember_st.load_file(tmp_path / "s.safetensors")
    np.testing.assert_array_equal(ours["t"].numpy(), base.t().numpy())


def test_bytes_round_trip_and_metadata(tmp_path):
    data = ember_st.save({"a": ember.ones(2, 2), "b": ember.arange(3)}, metadata={"format": "pt"})
    assert isinstance(data, bytes)
    loaded = ember_st.load(data)
    assert loaded["a"].tolist() == [[1, 1], [1, 1]] and loaded["b"].dtype == ember.int64
    loaded["a"].add_(1)   # loaded tensors are writable
    ember_st.save_file({"w": ember.ones(1)}, tmp_path / "m.safetensors", metadata={"k": "v"})
    from safetensors import safe_open
    with safe_open(str(tmp_path / "m.safetensors"), framework="np") as f:
        assert f.metadata() == {"k": "v"}


def test_agrees_with_safetensors_numpy():
    arrays = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    loaded = ember_st.load(st_numpy.save(arrays))
    np.testing.assert_array_equal(loaded["x"].numpy(), arrays["x"])
    back = st_numpy.load(ember_st.save(loaded))
    np.testing.assert_array_equal(back["x"], arrays["x"])


def test_safetensors_rejects_non_tensors():
    with pytest.raises(TypeError, match="Key `x` is invalid"):
        ember_st.save({"x": [1, 2]})


# --- DLPack -----------------------------------------------------------------------------------
def test_ember_to_numpy_shares_memory():
    x = ember.arange(6.0).reshape(2, 3)
    array = np.from_dlpack(x)
    array[0, 1] = 42
    assert x[0, 1].item() == 42
    x.add_(1)
    assert array[1, 2] == 6


def test_numpy_to_ember_shares_memory():
    array = np.arange(4, dtype=np.int32)
    x = ember.from_dlpack(array)
    assert x.dtype == ember.int32
    array[2] = -5
    assert x.tolist() == [0, 1, -5, 3]


def test_ember_to_torch_shares_memory_and_strides():
    x = ember.arange(6.0).reshape(2, 3).t()
    t = torch.from_dlpack(x)
    assert t.stride() == (1, 3) and t.shape == (3, 2)
    t[0, 1] = -1
    assert x[0, 1].item() == -1
    assert x.__dlpack_device__() == (1, 0)


def test_torch_to_ember_shares_memory():
    t = torch.arange(5.0)
    x = ember.from_dlpack(t)
    x.mul_(2)
    assert t.tolist() == [0, 2, 4, 6, 8]
    capsule = torch.utils.dlpack.to_dlpack(t)
    y = ember.from_dlpack(capsule)
    y[0] = 7
    assert t[0].item() == 7


def test_from_dlpack_of_ember_tensor_is_itself():
    x = ember.ones(2)
    assert ember.from_dlpack(x) is x


def test_tensor_requiring_grad_cannot_be_exported():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        x.__dlpack__()
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1, 1]


def test_torch_tensors_are_data_while_ember_dispatches_overrides():
    """A torch tensor given to an ember function is data, also once ember's
    ``__torch_function__`` dispatch is on (torch's own default handler would call the ember
    function again without end)."""
    class Logged(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    ember.ones(2).as_subclass(Logged)
    t = torch.arange(4.0)
    e = ember.from_dlpack(t)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert type(e) is ember.Tensor
