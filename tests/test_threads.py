"""``ember.set_num_threads`` / ``get_num_threads`` (argument checks as torch's, the OpenBLAS
count and idle spin that follow) and the intra-op parts of ``_backend.parallel``: n-way
splits on distinct threads, every part awaited when one raises, new workers in a forked
child, and no splits where oneDNN's threads do the parallel work."""
import os
import threading
import weakref

import numpy as np
import pytest
import torch

import ember
from ember._backend import cblas, parallel

needs_thread_control = pytest.mark.skipif(cblas.num_threads() is None,
                                          reason="OpenBLAS's thread count cannot be set")


@pytest.mark.parametrize("value", [0, -1, 2.5, "2", True, None])
def test_bad_thread_counts_raise_as_torch(value, ember_threads):
    before = ember.get_num_threads()
    with pytest.raises(RuntimeError) as torch_error:
        torch.set_num_threads(value)
    with pytest.raises(RuntimeError) as ember_error:
        ember.set_num_threads(value)
    assert str(ember_error.value) == str(torch_error.value)
    assert ember.get_num_threads() == before


@needs_thread_control
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_thread_count_sets_openblas_and_splits(threads, ember_threads):
    ember_threads(threads)
    assert ember.get_num_threads() == threads
    assert cblas.num_threads() == threads
    assert parallel.available() == (threads >= 2)
    parallel.run_parts([lambda: None, lambda: None])   # the first split shortens the spin
    if threads >= 2:
        assert cblas._SPIN_CONTROL is None or \
            cblas._SPIN_CONTROL[2]() == parallel.WORKER_SPIN_EXPONENT
    a = np.random.default_rng(0).standard_normal((300, 300))
    np.testing.assert_allclose(a @ a.T, np.einsum("ik,jk->ij", a, a), rtol=1e-10, atol=1e-10)


@needs_thread_control
def test_parts_run_on_as_many_threads_and_cover_the_range(ember_threads):
    ember_threads(3)
    assert [(p.start, p.stop) for p in parallel.parts(10)] == [(0, 3), (3, 6), (6, 10)]
    assert [(p.start, p.stop) for p in parallel.parts(2)] == [(0, 1), (1, 2)]
    barrier = threading.Barrier(3, timeout=10)  # all three parts must run at once

    def part(samples):
        barrier.wait()
        return samples, threading.get_ident()
    results = parallel.over_parts(9, part)
    assert [r[0] for r in results] == parallel.parts(9)
    assert results[0][1] == threading.get_ident() and len({r[1] for r in results}) == 3


@needs_thread_control
def test_every_part_is_awaited_when_one_raises(ember_threads):
    ember_threads(3)
    finished = []

    def slow():
        threading.Event().wait(0.05)
        finished.append("slow")

    def failing():
        raise ValueError("part failed")
    with pytest.raises(ValueError, match="part failed"):
        parallel.run_parts([failing, slow, slow])
    assert finished == ["slow", "slow"]
    assert not parallel._region_lock.locked()


def test_one_thread_runs_parts_in_order_on_the_caller(ember_threads):
    ember_threads(1)
    assert not parallel.available()
    assert parallel.parts(5) == [slice(0, 5)]
    assert parallel.run_parts([threading.get_ident, lambda: 7]) == [threading.get_ident(), 7]


def test_no_split_without_blas_thread_control(monkeypatch, ember_threads):
    monkeypatch.setattr(cblas, "_THREAD_CONTROL", None)
    ember_threads(4)
    assert ember.get_num_threads() == 4 and not parallel.available()


@needs_thread_control
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_starts_its_own_workers(ember_threads):
    ember_threads(2)
    parallel.run_parts([lambda: 1, lambda: 2])  # the parent's worker is started
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its parts must not wait on the parent's worker thread
        try:
            ok = parallel._workers == [] and parallel.run_parts(
                [threading.get_ident, threading.get_ident])[1] != threading.get_ident()
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    os.close(read)
    assert answer == b"1"


@needs_thread_control
def test_workers_keep_no_reference_to_finished_tasks(ember_threads):
    """A finished part's closure (and the arrays it holds) is not kept alive by the worker
    until its next task: cross-entropy's 28 MB buffer once outlived its node that way."""
    ember_threads(2)
    payload = np.ones(4)
    ref = weakref.ref(payload)
    parallel.run_parts([lambda: None, lambda held=payload: held.sum()])
    del payload
    assert ref() is None


def test_importing_ember_changes_no_environment_and_no_blas_threads():
    import subprocess
    import sys
    code = ("import os, numpy; from threadpoolctl import threadpool_info; "
            "before = dict(os.environ); "
            "threads = [p['num_threads'] for p in threadpool_info()]; import ember; "
            "print(dict(os.environ) == before, "
            "[p['num_threads'] for p in threadpool_info()][:len(threads)] == threads, "
            "ember.get_num_threads() == min(threads[0], os.cpu_count()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "True", "True"]


@needs_thread_control
def test_no_splits_where_onednn_is_in_use(ember_threads):
    """oneDNN's OpenMP threads are then the one pool: ember's own would contend with them."""
    from ember._backend import choice
    ember_threads(2)
    assert parallel.available()
    if not choice.enabled(choice.ONEDNN) and not ember.backends.mkldnn.is_available():
        pytest.skip("oneDNN is not installed here")
    with ember.backends.mkldnn.flags(enabled=True):
        assert not parallel.available()
        assert not parallel.big(np.zeros(1 << 20))
        assert [threading.get_ident()] * 2 == parallel.run_parts([threading.get_ident] * 2)
    assert parallel.available()
