import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


# -- the device the op table runs on: `pytest --device cuda` (a real GPU through CuPy) or
# `--device fake-cuda` (tests/cuda/fake_cupy.py, NumPy posing as CuPy); cpu by default.
def pytest_addoption(parser):
    parser.addoption("--device", default="cpu", choices=("cpu", "cuda", "fake-cuda"),
                     help="device for the op-table tests (default cpu)")


def pytest_configure(config):
    if config.getoption("--device") == "fake-cuda":
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "cuda"))
        import fake_cupy
        fake_cupy.install()


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def device(pytestconfig):
    """The device the op-table tests build ember's inputs on ('cpu' or 'cuda')."""
    name = pytestconfig.getoption("--device")
    if name == "cuda":
        import ember
        if not ember.cuda.is_available():
            pytest.skip("--device cuda: ember.cuda.is_available() is False (no GPU or no CuPy)")
    return "cpu" if name == "cpu" else "cuda"


@pytest.fixture
def ember_threads():
    """``ember_threads(n)`` sets ember's intra-op thread count for the test; the count before
    is restored afterwards."""
    import ember
    from ember._backend import cblas, parallel
    before = parallel._num_threads, parallel._splits, cblas.num_threads()
    yield ember.set_num_threads
    parallel._num_threads, parallel._splits = before[:2]
    if before[2] is not None:
        cblas.set_num_threads(before[2])
