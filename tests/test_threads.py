"""``ember.set_num_threads`` / ``get_num_threads``: argument checks as torch's, NumPy's OpenBLAS
count that follows (ember's count without oneDNN, one thread beside oneDNN's OpenMP pool), and
an import that changes neither the environment nor another library's threads."""
import os
import subprocess
import sys

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
def test_thread_count_sets_openblas_without_onednn(threads, ember_threads):
    ember_threads(threads)
    assert ember.get_num_threads() == threads
    assert cblas.num_threads() == threads
    a = np.random.default_rng(0).standard_normal((300, 300))
    np.testing.assert_allclose(a @ a.T, np.einsum("ik,jk->ij", a, a), rtol=1e-10, atol=1e-10)


@needs_thread_control
def test_openblas_keeps_to_one_thread_beside_onednn(ember_threads):
    """oneDNN's OpenMP threads are the one pool: OpenBLAS's idle workers would spin on their
    cores. Switching oneDNN off gives OpenBLAS ember's count back."""
    if not ember.backends.mkldnn.is_available():
        pytest.skip("oneDNN is not installed here")
    ember_threads(2)
    with ember.backends.mkldnn.flags(enabled=True):
        assert cblas.num_threads() == 1 and ember.get_num_threads() == 2
        ember.set_num_threads(3)
        assert cblas.num_threads() == 1 and ember.get_num_threads() == 3
    assert cblas.num_threads() == 3


def test_thread_count_kept_without_blas_thread_control(monkeypatch, ember_threads):
    monkeypatch.setattr(cblas, "_THREAD_CONTROL", None)
    ember_threads(4)
    assert ember.get_num_threads() == 4 and parallel.get_num_threads() == 4


def test_importing_ember_changes_no_environment_and_no_blas_threads():
    code = ("import os, numpy; from threadpoolctl import threadpool_info; "
            "before = dict(os.environ); "
            "threads = [p['num_threads'] for p in threadpool_info()]; import ember; "
            "print(dict(os.environ) == before, "
            "[p['num_threads'] for p in threadpool_info()][:len(threads)] == threads, "
            "ember.get_num_threads() == min(threads[0], os.cpu_count()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "True", "True"]


def test_training_changes_no_environment():
    """No kernel writes the process's environment (OpenBLAS's spin timeout once was)."""
    code = ("import os; before = dict(os.environ); import ember; ember.set_num_threads(2); "
            "m = ember.nn.Sequential(ember.nn.Conv2d(3, 8, 3), ember.nn.BatchNorm2d(8), "
            "ember.nn.ReLU(), ember.nn.Flatten(), ember.nn.Linear(8 * 30 * 30, 10)); "
            "opt = ember.optim.Adam(m.parameters()); "
            "[ (m(ember.randn(16, 3, 32, 32)).sum().backward(), opt.step()) for _ in range(2)]; "
            "print(dict(os.environ) == before)")
    for onednn in ("1", "0"):
        env = {**os.environ, "EMBER_ONEDNN": onednn}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env=env).stdout.split()
        assert out == ["True"]
