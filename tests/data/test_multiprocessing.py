"""ember.multiprocessing: tensors crossing processes through shared memory (no copy, writes
visible on both sides), share_memory_/is_shared, spawn, and no leaked /dev/shm segments.
Every cross-process wait has a timeout so that a bug fails the test instead of hanging it."""
import multiprocessing as python_mp
import os
import signal

import numpy as np
import pytest

import ember
import ember.multiprocessing as mp
from ember.multiprocessing import _shm

WAIT = 60  # seconds any cross-process wait may take before the test fails


@pytest.fixture(autouse=True, scope="module")
def no_leaked_segments():
    yield
    assert _shm.leftover_files() == []


def test_reexports_the_standard_api():
    for name in python_mp.__all__:
        assert hasattr(mp, name), name
    assert mp.get_context("fork").Process is python_mp.get_context("fork").Process
    assert {"spawn", "get_sharing_strategy", "set_sharing_strategy"} <= set(mp.__all__)
    assert mp.get_sharing_strategy() == "file_descriptor" in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError, match="not supported"):
        mp.set_sharing_strategy("file_system")


def test_share_memory_in_place_keeps_values_and_layout():
    base = ember.arange(12.)
    view = base[2:].reshape(2, 5).t()
    ident = id(view)
    assert not base.is_shared() and not view.is_shared()
    assert view.share_memory_() is view and id(view) == ident
    assert view.is_shared() and base.is_shared()
    assert view.tolist() == (ember.arange(12.)[2:].reshape(2, 5).t()).tolist()
    assert view.stride() == (1, 5)
    view[0, 0] = 100.0
    assert base[2].item() == 100.0  # the view and its base still share memory
    assert view.share_memory_() is view  # already shared: nothing happens


def test_share_memory_keeps_autograd_state():
    w = ember.ones(3, requires_grad=True)
    w.share_memory_()
    (w * 2).sum().backward()
    assert w.is_shared() and w.requires_grad and w.grad.tolist() == [2.0, 2.0, 2.0]


def _add_one_and_reply(inbox, outbox):
    t = inbox.get(timeout=WAIT)
    t.add_(1)
    outbox.put((t, t.is_shared(), t.stride(), str(t.dtype)))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_shares_memory_both_ways(method):
    ctx = mp.get_context(method)
    inbox, outbox = ctx.Queue(), ctx.Queue()
    x = ember.zeros(2, 3)
    sent = x.t()
    child = ctx.Process(target=_add_one_and_reply, args=(inbox, outbox))
    child.start()
    inbox.put(sent)
    back, shared, stride, dtype = outbox.get(timeout=WAIT)
    child.join(WAIT)
    assert child.exitcode == 0
    assert shared and stride == (1, 3) and dtype == "ember.float32"
    assert x.tolist() == [[1.0] * 3] * 2  # the child's write shows in the parent's tensor
    back.mul_(5)
    assert x.tolist() == [[5.0] * 3] * 2  # and the returned tensor is the same memory


def _echo(conn):
    conn.send(conn.recv())
    conn.close()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64", "bool", "complex64", "uint8"])
def test_pipe_round_trip_dtypes(dtype):
    a, b = mp.Pipe()
    child = mp.get_context("fork").Process(target=_echo, args=(b,))
    child.start()
    t = ember.ones(3, 2, dtype=getattr(ember, dtype))
    a.send(t)
    assert a.poll(WAIT)
    back = a.recv()
    child.join(WAIT)
    assert back.dtype == t.dtype and back.tolist() == t.tolist() and back.is_shared()


def _fill_and_exit(queue):
    queue.put(ember.full((1000,), 7.0))


def test_sender_that_exits_at_once_still_delivers():
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_fill_and_exit, args=(queue,))
    child.start()
    got = queue.get(timeout=WAIT)
    child.join(WAIT)
    assert got.sum().item() == 7000.0 and child.exitcode == 0


def _scale(t):
    return t * 2, t.is_shared()


def test_pool_map_with_tensor_arguments():
    with mp.get_context("fork").Pool(2) as pool:
        results = pool.map_async(_scale, [ember.full((2,), float(i)) for i in range(4)]).get(WAIT)
    assert [r[0].tolist() for r in results] == [[0.0, 0.0], [2.0, 2.0], [4.0, 4.0], [6.0, 6.0]]
    assert all(shared for _, shared in results)


def _report_param(queue, reply):
    p = queue.get(timeout=WAIT)
    reply.put((type(p).__name__, p.requires_grad, p.is_leaf))


def test_parameter_and_requires_grad_survive():
    ctx = mp.get_context("fork")
    queue, reply = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_report_param, args=(queue, reply))
    child.start()
    queue.put(ember.nn.Parameter(ember.zeros(2)))
    assert reply.get(timeout=WAIT) == ("Parameter", True, True)
    child.join(WAIT)


def test_non_leaf_requiring_grad_is_refused():
    y = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        mp.reductions.ForkingPickler.dumps(y)


def test_plain_pickle_still_copies():
    import pickle
    t = ember.arange(3.)
    assert pickle.loads(pickle.dumps(t)).tolist() == [0.0, 1.0, 2.0] and not t.is_shared()


def _hold_then_die(queue, ready):
    t = queue.get(timeout=WAIT)
    ready.put(t.sum().item())
    signal.pause()


def test_killed_receiver_leaks_nothing():
    ctx = mp.get_context("fork")
    queue, ready = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_hold_then_die, args=(queue, ready))
    child.start()
    queue.put(ember.ones(4))
    assert ready.get(timeout=WAIT) == 4.0
    os.kill(child.pid, signal.SIGKILL)
    child.join(WAIT)
    assert child.exitcode == -signal.SIGKILL
    assert _shm.leftover_files() == []


def test_segments_are_unlinked_at_once():
    t = ember.zeros(1000).share_memory_()
    segment = _shm.segment_of(t._data)
    assert os.fstat(segment.fd).st_nlink == 0 and _shm.leftover_files() == []


def test_full_dev_shm_gives_a_clear_error(monkeypatch):
    def no_space(fd, offset, length):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "posix_fallocate", no_space)
    with pytest.raises(RuntimeError, match=r"unable to allocate 40 bytes of shared memory in /dev/shm"):
        ember.zeros(10).share_memory_()


def _spawn_target(i, queue):
    queue.put(i * 10)


def _spawn_fails(i):
    if i == 1:
        raise ValueError("process one failed")


def _spawn_killed(i):
    if i == 0:
        os.kill(os.getpid(), signal.SIGKILL)


def test_spawn_runs_and_reports_failures():
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    mp.spawn(_spawn_target, args=(queue,), nprocs=2, start_method="fork")
    assert sorted(queue.get(timeout=WAIT) for _ in range(2)) == [0, 10]
    with pytest.raises(mp.ProcessRaisedException, match="process one failed") as info:
        mp.spawn(_spawn_fails, nprocs=2, start_method="fork")
    assert "-- Process 1 terminated with the following error:" in str(info.value)
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with signal SIGKILL"):
        mp.spawn(_spawn_killed, nprocs=2, start_method="fork")


def _hogwild_step(i, weight, steps):
    with ember.no_grad():
        for _ in range(steps):
            weight.add_(1.0)  # racy by design (Hogwild); each process sees the others' updates


def test_module_share_memory_and_hogwild_updates_are_seen():
    model = ember.nn.Linear(3, 1)
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())
    counter = ember.zeros(1).share_memory_()
    mp.spawn(_hogwild_step, args=(counter, 50), nprocs=2, start_method="fork")
    assert counter.item() > 50  # both processes wrote into the same memory
    weights_before = model.weight.clone()
    mp.spawn(_hogwild_step, args=(model.weight, 1), nprocs=1, start_method="spawn")
    np.testing.assert_allclose(model.weight.detach().numpy(), weights_before.detach().numpy() + 1)


def test_hogwild_example_trains_the_parents_model():
    import re
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "src"))
    out = subprocess.run([sys.executable, os.path.join(root, "examples", "hogwild.py"), "--epochs", "2",
                          "--start-method", "spawn"], env=env, capture_output=True, text=True,
                         timeout=180, check=True).stdout
    before, after = map(float, re.search(r"loss fell from ([\d.]+) to ([\d.]+)", out).groups())
    assert after < before / 10  # the parent never trained: the children's updates are in its memory
