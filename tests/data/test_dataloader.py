"""DataLoader and collation against torch.utils.data, with real worker processes. Tests
that could hang if the loader misbehaved run under a deadline (SIGALRM)."""
import collections
import ctypes
import errno
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata
from ember.multiprocessing import _shm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
Point = collections.namedtuple("Point", "x y")


@pytest.fixture(autouse=True, scope="module")
def no_leaked_segments():
    yield
    assert _shm.leftover_files() == []


@pytest.fixture
def deadline():
    """Fails the test (instead of hanging the suite) if it runs past ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError("test ran past its deadline")
    previous = signal.signal(signal.SIGALRM, expired)

    def arm(seconds):
        signal.setitimer(signal.ITIMER_REAL, seconds)
    yield arm
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def _plain(x):
    """A comparable description of collated output from either library."""
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return ("dict", type(x).__name__, {k: _plain(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("namedtuple", type(x).__name__, [_plain(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_plain(v) for v in x])
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.tolist())
    return (type(x).__name__, x)


def _samples(lib):
    return {
        "tensors": [lib.tensor([1, 2]), lib.tensor([3, 4])],
        "floats": [1.5, 2.5],
        "ints": [1, 2],
        "bools": [True, False],
        "strings": ["a", "b"],
        "bytes": [b"a", b"b"],
        "numpy": [np.array([1.0, 2.0], dtype=np.float32), np.array([3.0, 4.0], dtype=np.float32)],
        "numpy_scalars": [np.float64(1.0), np.float64(2.0)],
        "numpy_int_scalars": [np.int32(1), np.int32(2)],
        "nested_dict": [{"a": {"b": 1.0, "c": "s"}, "d": [1, 2]}, {"a": {"b": 2.0, "c": "t"}, "d": [3, 4]}],
        "tuples": [(1, 2.0, "x"), (3, 4.0, "y")],
        "namedtuples": [Point(1, np.array([1, 2])), Point(2, np.array([3, 4]))],
        "ordered": [collections.OrderedDict(k=1), collections.OrderedDict(k=2)],
        "lists": [[np.int64(1), 2.0], [np.int64(3), 4.0]],
    }


@pytest.mark.parametrize("kind", list(_samples(ember)))
def test_default_collate_matches_torch(kind):
    assert _plain(edata.default_collate(_samples(ember)[kind])) == _plain(tdata.default_collate(_samples(torch)[kind]))


@pytest.mark.parametrize("kind", list(_samples(ember)))
def test_default_convert_matches_torch(kind):
    for e, t in zip(_samples(ember)[kind], _samples(torch)[kind]):
        assert _plain(edata.default_convert(e)) == _plain(tdata.default_convert(t))


@pytest.mark.parametrize("batch", [[[1, 2], [3]], [np.array(["a"]), np.array(["b"])], [object(), object()]])
def test_default_collate_errors_match_torch(batch):
    with pytest.raises(Exception) as expected:
        tdata.default_collate(batch)
    with pytest.raises(type(expected.value)) as got:
        edata.default_collate(batch)
    assert str(got.value).split("found")[0] == str(expected.value).split("found")[0]


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2}, {"persistent_workers": True},
    {"num_workers": 1, "prefetch_factor": -1}, {"sampler": [0, 1], "shuffle": True},
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_size": None, "drop_last": True},
    {"multiprocessing_context": "fork"}, {"num_workers": 1, "multiprocessing_context": "nope"},
    {"num_workers": 1, "multiprocessing_context": 3},
])
def test_argument_errors_match_torch(kwargs):
    with pytest.raises(Exception) as expected:
        tdata.DataLoader(list(range(4)), **kwargs)
    with pytest.raises(type(expected.value)) as got:
        edata.DataLoader(list(range(4)), **kwargs)
    assert str(got.value) == str(expected.value).replace("torch", "ember")


class ERange(edata.IterableDataset):
    """0..n-1, sharded across workers by stride (each worker yields its own items)."""

    def __init__(self, n, shard=True, report_len=None):
        self.n, self.shard, self.report_len = n, shard, report_len

    def __iter__(self):
        info = edata.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n if self.report_len is None else self.report_len


class TRange(tdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = tdata.get_worker_info()
        return iter(range(self.n) if info is None else range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_iterable_dataset_with_len_and_the_warning():
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        edata.DataLoader(ERange(3), shuffle=True)
    loader = edata.DataLoader(ERange(10, report_len=2), batch_size=3)
    assert len(loader) == 1 == len(tdata.DataLoader(TRange(2), batch_size=3))
    with pytest.warns(UserWarning) as record:  # torch compares batches with the sample count
        batches = list(loader)
    assert [str(w.message).split(" was ")[1] for w in record] == [
        "reported to be 2(when accessing len(dataloader)), but 3 samples have been fetched. ",
        "reported to be 2(when accessing len(dataloader)), but 4 samples have been fetched. "]
    assert [b.tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": None}, {"batch_sampler": [[0, 1], [2]]}])
def test_len_matches_torch(kwargs):
    data = list(range(10))
    assert len(edata.DataLoader(data, **kwargs)) == len(tdata.DataLoader(data, **kwargs))
    for cls_e, cls_t in [(ERange, TRange)]:
        if "batch_sampler" not in kwargs:
            assert len(edata.DataLoader(cls_e(10), **kwargs)) == len(tdata.DataLoader(cls_t(10), **kwargs))


class Squares(edata.Dataset):
    def __len__(self):
        return 11

    def __getitem__(self, i):
        return {"x": np.full((2,), i * i, dtype=np.float32), "i": i, "pid": os.getpid()}


@pytest.mark.parametrize("num_workers", [0, 2])
def test_sequential_batches_match_torch(num_workers, deadline):
    deadline(60)
    kwargs = {"batch_size": 4, "num_workers": num_workers}
    got = [{k: v for k, v in b.items() if k != "pid"} for b in edata.DataLoader(Squares(), **kwargs)]
    want = [{k: v for k, v in b.items() if k != "pid"} for b in tdata.DataLoader(Squares(), batch_size=4)]
    assert [_plain(b) for b in got] == [_plain(b) for b in want]


def test_order_with_seeded_generator_is_the_same_for_any_num_workers(deadline):
    deadline(60)
    orders = []
    for num_workers in [0, 1, 2]:
        loader = edata.DataLoader(Squares(), batch_size=3, shuffle=True, num_workers=num_workers,
                                  generator=ember.Generator().manual_seed(7))
        orders.append([b["i"].tolist() for b in loader])
    assert orders[0] == orders[1] == orders[2]
    assert sorted(sum(orders[0], [])) == list(range(11))


def test_batches_arrive_in_shared_memory_from_workers(deadline):
    deadline(60)
    batches = list(edata.DataLoader(Squares(), batch_size=4, num_workers=2))
    assert all(b["x"].is_shared() for b in batches)
    assert {p for b in batches for p in b["pid"].tolist()}.isdisjoint({os.getpid()})
    assert not next(iter(edata.DataLoader(Squares(), batch_size=4)))["x"].is_shared()


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
@pytest.mark.parametrize("num_workers", [1, 2, 3])
@pytest.mark.parametrize("batch_size", [None, 2])
def test_iterable_dataset_sharding_matches_torch(num_workers, batch_size, deadline):
    deadline(60)
    got = edata.DataLoader(ERange(9), batch_size=batch_size, num_workers=num_workers)
    want = tdata.DataLoader(TRange(9), batch_size=batch_size, num_workers=num_workers)
    assert [_plain(b) for b in got] == [_plain(b) for b in want]


class WorkerReport(edata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = edata.get_worker_info()
        return {"id": info.id, "num": info.num_workers, "seed": info.seed, "pid": os.getpid(),
                "init": os.environ.get("EMBER_TEST_INIT", ""), "np": int(np.random.randint(1 << 30))}


def _init_fn(worker_id):
    os.environ["EMBER_TEST_INIT"] = f"init{worker_id}"


def test_worker_info_init_fn_and_seeds(deadline):
    deadline(60)
    assert edata.get_worker_info() is None
    loader = edata.DataLoader(WorkerReport(), batch_size=None, num_workers=2, worker_init_fn=_init_fn,
                              generator=ember.Generator().manual_seed(0))
    items = list(loader)
    assert [it["id"] for it in items] == [0, 1, 0, 1, 0, 1]
    assert all(it["num"] == 2 and it["init"] == f"init{it['id']}" for it in items)
    assert items[1]["seed"] == items[0]["seed"] + 1
    assert items[0]["np"] != items[1]["np"]
    again = list(edata.DataLoader(WorkerReport(), batch_size=None, num_workers=2, worker_init_fn=_init_fn,
                                  generator=ember.Generator().manual_seed(0)))
    assert [it["seed"] for it in again] == [it["seed"] for it in items]
    assert [it["np"] for it in again] == [it["np"] for it in items]


def test_persistent_workers_are_reused_across_epochs(deadline):
    deadline(60)
    loader = edata.DataLoader(Squares(), batch_size=4, num_workers=2, persistent_workers=True)
    first = [b["pid"].tolist() for b in loader]
    second = [b["pid"].tolist() for b in loader]
    assert first == second and len(first) == 3
    persistent_iterable = edata.DataLoader(ERange(5), num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in persistent_iterable] == [[0], [1], [2], [3], [4]]
    assert [b.tolist() for b in persistent_iterable] == [[0], [1], [2], [3], [4]]
    loader._iterator._shutdown_workers()
    persistent_iterable._iterator._shutdown_workers()


def test_abandoned_iterator_stops_its_workers(deadline):
    deadline(30)
    it = iter(edata.DataLoader(Squares(), batch_size=2, num_workers=2))
    assert next(it)["i"].tolist() == [0, 1]
    workers = list(it._workers)
    del it
    import gc
    gc.collect()
    assert all(w.exitcode is not None for w in workers)


def test_in_order_false_yields_every_batch(deadline):
    deadline(60)
    loader = edata.DataLoader(Squares(), batch_size=2, num_workers=2, in_order=False)
    assert sorted(i for b in loader for i in b["i"].tolist()) == list(range(11))


def test_spawn_context(deadline):
    deadline(120)
    x = ember.arange(20.).reshape(10, 2)
    y = ember.arange(10)
    loader = edata.DataLoader(edata.TensorDataset(x, y), batch_size=4, num_workers=2,
                              multiprocessing_context="spawn")
    batches = list(loader)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[2][0].tolist() == [[16., 17.], [18., 19.]]


def test_pin_memory_warns_and_is_a_no_op():
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator"):
        batch = next(iter(edata.DataLoader([1.0, 2.0], batch_size=2, pin_memory=True)))
    assert batch.tolist() == [1.0, 2.0]


# -- failures ---------------------------------------------------------------------------------
class Failing(edata.Dataset):
    def __init__(self, how, at=3, sleep=0.0):
        self.how, self.at, self.sleep = how, at, sleep

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.at:
            self.fail()
        if self.sleep:
            import time
            time.sleep(self.sleep)
        return i

    def fail(self):
        if self.how == "value":
            raise ValueError("bad sample in fail()")
        if self.how == "key":
            raise KeyError("missing")
        if self.how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.how == "segfault":
            import faulthandler
            faulthandler.disable()  # pytest's handler would print the stack
            ctypes.string_at(0)
        if self.how == "exit":
            os._exit(3)
        if self.how == "unpicklable":
            return lambda: None


def test_worker_exception_reraises_with_worker_id_and_traceback(deadline):
    deadline(60)
    loader = edata.DataLoader(Failing("value"), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process 1." in msg
    assert "Original Traceback" in msg and "in fail" in msg and "bad sample in fail()" in msg
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        list(edata.DataLoader(Failing("key"), batch_size=2, num_workers=2))


def test_worker_exception_in_main_process_is_the_original():
    with pytest.raises(ValueError, match="^bad sample in fail"):
        list(edata.DataLoader(Failing("value"), batch_size=2))


@pytest.mark.parametrize("how,words", [("kill", "is killed by signal: Killed (SIGKILL)"),
                                       ("segfault", "is killed by signal: Segmentation fault (SIGSEGV)"),
                                       ("exit", "exited unexpectedly with exit code 3")])
def test_dead_worker_raises_naming_it(how, words, deadline):
    deadline(30)
    loader = edata.DataLoader(Failing(how, at=2), batch_size=2, num_workers=2)
    with pytest.raises(RuntimeError, match=r"DataLoader worker 1 \(pid \d+\) " + re_escape(words)):
        list(loader)


def re_escape(text):
    import re
    return re.escape(text)


def test_timeout_raises_when_a_batch_is_late(deadline):
    deadline(30)
    loader = edata.DataLoader(Failing("none", at=-1, sleep=1.0), batch_size=2, num_workers=1, timeout=0.3)
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.3 seconds$"):
        next(iter(loader))


def test_unpicklable_sample_raises_instead_of_hanging(deadline):
    deadline(30)
    loader = edata.DataLoader([1, 2], batch_size=None, num_workers=1, collate_fn=lambda x: lambda: x)
    with pytest.raises(Exception, match="DataLoader worker process 0"):
        list(loader)


def test_full_dev_shm_gives_a_clear_error(monkeypatch, deadline):
    deadline(30)

    def no_space(fd, offset, length):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "posix_fallocate", no_space)
    loader = edata.DataLoader(edata.TensorDataset(ember.zeros(4, 3)), batch_size=2, num_workers=1,
                              multiprocessing_context="fork")
    with pytest.raises(RuntimeError) as info:
        list(loader)
    msg = str(info.value)
    assert "Caught RuntimeError in DataLoader worker process 0" in msg
    assert "unable to allocate 24 bytes of shared memory in /dev/shm (No space left on device" in msg
    assert "--shm-size" in msg


CTRL_C_SCRIPT = textwrap.dedent("""
    import os, sys, time
    import ember.utils.data as edata

    class Slow(edata.Dataset):
        def __len__(self):
            return 1000
        def __getitem__(self, i):
            time.sleep(0.05)
            return i

    loader = edata.DataLoader(Slow(), batch_size=2, num_workers=2)
    it = iter(loader)
    next(it)
    print(" ".join(str(w.pid) for w in it._workers), flush=True)
    for _ in it:
        pass
""")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


def test_ctrl_c_in_the_main_process_shuts_the_workers_down():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    # Python makes SIGINT a KeyboardInterrupt only where it is not ignored at start, and an
    # ignored disposition is inherited: whatever the test process's (it exited 0 with an empty
    # stderr once in CI), the script starts with the default one
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "KeyboardInterrupt" in err, f"exit status {proc.returncode}, stdout {out!r}"
    assert not any(_alive(p) for p in pids)


# -- further behaviour checked against torch -----------------------------------------------------
class TFailing(tdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            raise ValueError("bad sample")
        return i


def _batches_and_errors(loader):
    """Every batch the loader yields, with "error" where next() raised a ValueError."""
    out, it = [], iter(loader)
    while True:
        try:
            out.append(next(it).tolist())
        except ValueError:
            out.append("error")
        except StopIteration:
            return out


@pytest.mark.parametrize("num_workers", [0, 2])
def test_iteration_continues_after_a_worker_exception_as_in_torch(num_workers, deadline):
    deadline(60)
    got = _batches_and_errors(edata.DataLoader(Failing("value"), batch_size=2, num_workers=num_workers))
    want = _batches_and_errors(tdata.DataLoader(TFailing(), batch_size=2, num_workers=num_workers))
    assert got == want == [[0, 1], "error", [4, 5], [6, 7]]


class UnevenRange(edata.IterableDataset):
    """Worker k yields 3 * (k + 1) items, so the workers run out at different times."""

    def __iter__(self):
        info = edata.get_worker_info()
        k = 0 if info is None else info.id
        return iter(range(100 * k, 100 * k + 3 * (k + 1)))


class TUnevenRange(tdata.IterableDataset):
    def __iter__(self):
        info = tdata.get_worker_info()
        k = 0 if info is None else info.id
        return iter(range(100 * k, 100 * k + 3 * (k + 1)))


@pytest.mark.parametrize("batch_size,drop_last", [(None, False), (2, False), (2, True)])
def test_uneven_iterable_shards_over_persistent_epochs_match_torch(batch_size, drop_last, deadline):
    deadline(60)
    got = edata.DataLoader(UnevenRange(), batch_size=batch_size, drop_last=drop_last,
                           num_workers=2, persistent_workers=True)
    want = tdata.DataLoader(TUnevenRange(), batch_size=batch_size, drop_last=drop_last,
                            num_workers=2, persistent_workers=True)
    expected = [_plain(b) for b in want]
    assert [_plain(b) for b in got] == expected
    assert [_plain(b) for b in got] == expected  # second epoch on the same workers
    got._iterator._shutdown_workers()


def test_abandoned_persistent_epoch_does_not_leak_into_the_next(deadline):
    deadline(60)
    loader = edata.DataLoader(Squares(), batch_size=2, num_workers=2, persistent_workers=True,
                              prefetch_factor=3)
    it = iter(loader)
    assert next(it)["i"].tolist() == [0, 1]
    pids = [w.pid for w in it._workers]
    assert [b["i"].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10]]
    assert [w.pid for w in loader._iterator._workers] == pids
    loader._iterator._shutdown_workers()


def test_worker_init_fn_failure_is_reraised_with_the_worker_id(deadline):
    deadline(60)

    def failing_init(worker_id):
        if worker_id == 1:
            raise OSError("no device in init")
    loader = edata.DataLoader(Squares(), batch_size=2, num_workers=2, worker_init_fn=failing_init)
    with pytest.raises(OSError, match="Caught OSError in DataLoader worker process 1") as info:
        list(loader)
    assert "no device in init" in str(info.value)


class BrokenIter(edata.IterableDataset):
    def __iter__(self):
        raise IndexError("cannot start")


def test_iterable_dataset_failing_to_start_in_a_worker(deadline):
    deadline(60)
    with pytest.raises(IndexError, match="Caught IndexError in DataLoader worker process 0"):
        list(edata.DataLoader(BrokenIter(), num_workers=1))
    with pytest.raises(IndexError, match="^cannot start$"):
        list(edata.DataLoader(BrokenIter()))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # torch's __del__
def test_zero_prefetch_factor_with_workers_fails_like_torch():
    with pytest.raises(Exception) as expected:
        iter(tdata.DataLoader(list(range(4)), num_workers=1, prefetch_factor=0))
    expected_type = type(expected.value)
    del expected  # its traceback holds torch's half-built iterator; collect it under the filter
    import gc
    gc.collect()
    with pytest.raises(expected_type):
        iter(edata.DataLoader(list(range(4)), num_workers=1, prefetch_factor=0))


def test_options_fixed_after_init_like_torch():
    for lib in (tdata, edata):
        loader = lib.DataLoader(list(range(4)))
        for name in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset", "persistent_workers"):
            message = f"^{name} attribute should not be set after DataLoader is initialized$"
            with pytest.raises(ValueError, match=message):
                setattr(loader, name, None)
        loader.collate_fn = lambda batch: len(batch)
        loader.num_workers = 0
        assert next(iter(loader)) == 1


def test_loader_and_iterator_attributes_match_torch():
    for kwargs in [{}, {"batch_size": None}, {"batch_size": 3, "drop_last": True}, {"shuffle": True}]:
        e, t = edata.DataLoader(list(range(7)), **kwargs), tdata.DataLoader(list(range(7)), **kwargs)
        for name in ("batch_size", "drop_last", "num_workers", "prefetch_factor", "timeout"):
            assert getattr(e, name) == getattr(t, name), name
        assert type(e.sampler).__name__ == type(t.sampler).__name__
        assert (e.batch_sampler is None) == (t.batch_sampler is None)
        assert len(iter(e)) == len(iter(t))
        with pytest.raises(NotImplementedError):
            import pickle
            pickle.dumps(iter(e))
    assert edata.DataLoader([1], num_workers=1).prefetch_factor == 2
    assert list(edata.DataLoader(ERange(3), batch_size=None)) == list(range(3))


def test_worker_info_is_frozen_like_torch(deadline):
    deadline(60)
    info = next(iter(edata.DataLoader(InfoDataset(), batch_size=None, num_workers=1)))
    assert (info.id, info.num_workers, info.dataset.__class__.__name__) == (0, 1, "InfoDataset")
    with pytest.raises(AttributeError):
        info.id = 3


class InfoDataset(edata.Dataset):
    def __len__(self):
        return 1

    def __getitem__(self, i):
        return edata.get_worker_info()


def test_new_epoch_after_a_worker_died_starts_fresh_persistent_workers(deadline):
    deadline(60)
    loader = edata.DataLoader(Failing("kill", at=2), batch_size=2, num_workers=2, persistent_workers=True)
    with pytest.raises(RuntimeError, match="is killed by signal"):
        list(loader)
    dead = loader._iterator
    it = iter(loader)
    assert it is not dead and dead.closed
    assert next(it).tolist() == [0, 1]
    loader._iterator._shutdown_workers()


def test_forkserver_context(deadline):
    deadline(120)
    data = edata.TensorDataset(ember.arange(6))
    loader = edata.DataLoader(data, batch_size=4, num_workers=2, multiprocessing_context="forkserver")
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]]


KILLED_MAIN_SCRIPT = textwrap.dedent("""
    import os, signal, time
    import ember.utils.data as edata

    class Slow(edata.Dataset):
        def __len__(self):
            return 1000
        def __getitem__(self, i):
            time.sleep(0.05)
            return i

    it = iter(edata.DataLoader(Slow(), batch_size=2, num_workers=2))
    next(it)
    print(" ".join(str(w.pid) for w in it._workers), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_workers_exit_when_the_main_process_is_killed(deadline):
    deadline(60)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    proc = subprocess.run([sys.executable, "-c", KILLED_MAIN_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == -signal.SIGKILL
    pids = [int(p) for p in proc.stdout.split()]
    assert len(pids) == 2
    import time
    while any(_alive(p) for p in pids):  # they notice within about a second; the deadline guards
        time.sleep(0.1)


def test_exception_of_a_local_class_arrives_as_runtime_error(deadline):
    deadline(60)

    class LocalError(Exception):
        pass

    class Raising(edata.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise LocalError("made locally")
    loader = edata.DataLoader(Raising(), num_workers=1, multiprocessing_context="fork")
    with pytest.raises(RuntimeError, match="Caught LocalError in DataLoader worker process 0") as info:
        list(loader)
    assert "made locally" in str(info.value)


def _add_a_module_only_this_worker_has(worker_id):
    import types
    module = types.ModuleType("made_in_the_worker")
    exec("class WorkerOnlyError(Exception):\n    pass\n", module.__dict__)
    sys.modules[module.__name__] = module


class RaisingWorkerOnlyError(edata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        raise sys.modules["made_in_the_worker"].WorkerOnlyError("made by the worker")


def test_exception_of_a_class_the_main_process_lacks_keeps_its_traceback(deadline):
    # torch's loader raises ModuleNotFoundError here, losing the worker's exception
    deadline(60)
    loader = edata.DataLoader(RaisingWorkerOnlyError(), num_workers=1,
                              worker_init_fn=_add_a_module_only_this_worker_has,
                              multiprocessing_context="fork")
    with pytest.raises(RuntimeError, match="Caught WorkerOnlyError in DataLoader worker process 0") as info:
        list(loader)
    msg = str(info.value)
    assert "Original Traceback" in msg and "in __getitem__" in msg
    assert "made_in_the_worker.WorkerOnlyError: made by the worker" in msg
    assert "made_in_the_worker" not in sys.modules
