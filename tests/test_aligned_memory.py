"""NumPy's arrays on 64-byte boundaries (ember._backend.aligned_memory): what torch's CPU
allocator guarantees its tensors, which torch does not expose to compare against; plain tests."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import ember
from ember._backend import aligned_memory
from ember._inductor import compiler_available

pytestmark = pytest.mark.skipif(not compiler_available(), reason="no C compiler to build the handler")


def test_installed_at_import():
    assert aligned_memory.installed()
    assert aligned_memory.handler_name() == aligned_memory.NAME
    assert aligned_memory.handler_name(ember.zeros(3).numpy()) == aligned_memory.NAME


@pytest.mark.parametrize("size", [0, 1, 3, 16, 1000, 1 << 16, 1 << 22])
def test_arrays_of_every_size_are_aligned(size):
    arrays = [np.empty(size, np.float32), np.zeros(size, np.float64), np.ones(size, np.int8),
              np.arange(size, dtype=np.float32) * 2, ember.randn(size).numpy(),
              (ember.ones(size) + 1).numpy()]
    for a in arrays:
        assert aligned_memory.is_aligned(a), (a.dtype, size)
    assert not np.zeros(size).any()
    assert (arrays[3] == np.arange(size) * 2).all()


def test_resize_keeps_the_values_and_the_alignment():
    a = np.arange(5, dtype=np.float64)
    for size in (7, 100_000, 3, 1 << 20, 2):
        a.resize(size, refcheck=False)
        assert aligned_memory.is_aligned(a)
        assert (a[:min(size, 3)] == np.arange(min(size, 3))).all()


def test_growing_fromiter_keeps_its_values():
    values = np.fromiter(range(100_000), np.int64)   # grown by realloc as it reads
    assert aligned_memory.is_aligned(values)
    assert (values == np.arange(100_000)).all()


def test_arrays_outlive_a_change_of_handler():
    """Each array is freed by the handler that allocated it."""
    before = np.full(1 << 16, 3.0)
    assert aligned_memory.uninstall()
    try:
        plain = np.full(1 << 16, 4.0)
        assert aligned_memory.handler_name(plain) != aligned_memory.NAME
        assert aligned_memory.handler_name(before) == aligned_memory.NAME
    finally:
        assert aligned_memory.install()
    after = before + plain
    del before, plain
    assert (after == 7.0).all() and aligned_memory.is_aligned(after)


def test_other_threads_allocate_with_numpy_default():
    names = []
    thread = threading.Thread(target=lambda: names.append(aligned_memory.handler_name()))
    thread.start()
    thread.join()
    assert names == ["default_allocator"]


def test_switched_off_by_the_environment():
    code = ("import ember; from ember._backend import aligned_memory as m; "
            "print(m.installed(), m.handler_name())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "EMBER_ALIGNED_MEMORY": "0"}).stdout
    assert out.split() == ["False", "default_allocator"]


def test_training_step_gives_torch_ordinary_arrays():
    """Arrays from the handler reach torch and back unchanged (shared memory, no copies)."""
    torch = pytest.importorskip("torch")
    x = ember.randn(4, 8, requires_grad=True)
    (x * x).sum().backward()
    shared = torch.from_numpy(x.grad.numpy())
    assert shared.data_ptr() % 64 == 0
    np.testing.assert_array_equal(shared.numpy(), 2 * x.detach().numpy())


def test_leaves_ctypes_pythonapi_prototypes_alone():
    """Other code's prototypes on ``ctypes.pythonapi``'s shared function objects stay theirs."""
    import ctypes
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    before = (get_pointer.restype, get_pointer.argtypes)
    assert aligned_memory.uninstall() and aligned_memory.install()
    assert (get_pointer.restype, get_pointer.argtypes) == before
