"""``KernelChoice``: oneDNN's kernel first where it is enabled and takes the case, NumPy's
otherwise; a thread that has checked the settings once skips the check until a setting changes
(a library's switch, ember's thread count, ``only``), and then follows the change."""
import threading

import pytest

import ember
from ember._backend import choice
from ember._backend.onednn import threads

needs_onednn = pytest.mark.skipif(not choice.enabled(choice.ONEDNN),
                                  reason="oneDNN is off (EMBER_ONEDNN=0)")


def _choice(calls):
    return choice.KernelChoice(
        "probe", onednn=lambda x: calls.append("onednn") or (None if x < 0 else x + 1),
        numpy=lambda x: calls.append("numpy") or x + 2)


@needs_onednn
def test_onednn_first_then_numpy_where_it_declines():
    calls = []
    probe = _choice(calls)
    assert [probe(1), probe(1), probe(-1)] == [2, 2, 1]
    assert calls == ["onednn", "onednn", "onednn", "numpy"]


def test_a_disabled_library_is_skipped_at_once():
    calls = []
    probe = _choice(calls)
    probe(1)
    with ember.backends.mkldnn.flags(enabled=False):
        calls.clear()
        assert probe(1) == 3 and calls == ["numpy"]


@needs_onednn
def test_only_forces_a_library_after_the_fast_path_was_taken():
    calls = []
    probe = _choice(calls)
    probe(1)
    with choice.only(choice.NUMPY):
        calls.clear()
        assert probe(1) == 3 and calls == ["numpy"]
    with choice.only(choice.ONEDNN):
        with pytest.raises(choice.KernelNotApplicable, match="probe has no onednn kernel"):
            probe(-1)
    calls.clear()
    assert probe(1) == 2 and calls == ["onednn"]


@needs_onednn
def test_the_openmp_count_follows_set_num_threads_on_every_thread():
    probe = _choice([])
    before = ember.get_num_threads()
    try:
        probe(1)
        ember.set_num_threads(3)
        probe(1)
        assert threads.applied_count() == 3
        seen = []
        worker = threading.Thread(target=lambda: (probe(1), seen.append(threads.applied_count())))
        worker.start()
        worker.join()
        assert seen == [3]
        ember.set_num_threads(2)
        probe(1)
        assert threads.applied_count() == 2
    finally:
        ember.set_num_threads(before)


@needs_onednn
def test_the_calling_thread_s_openmp_count_follows_at_once():
    """The compiled loops read this thread's count (``openmp_kernels.thread_count``), some
    without a kernel choice first: set_num_threads applies it to the calling thread itself."""
    from ember._backend import openmp_kernels
    before = ember.get_num_threads()
    try:
        for count in (3, 1):
            ember.set_num_threads(count)
            assert threads.applied_count() == count
            assert openmp_kernels.thread_count() == count
    finally:
        ember.set_num_threads(before)


def test_kernels_can_be_replaced_and_read_back():
    probe = _choice([])
    numpy_only = (("numpy", lambda x: x * 10),)
    probe.kernels = numpy_only
    assert probe.kernels == numpy_only and probe.libraries() == ("numpy",) and probe(2) == 20
    with pytest.raises(ValueError, match="must be among"):
        choice.KernelChoice("bad", torch=lambda x: x, numpy=lambda x: x)
