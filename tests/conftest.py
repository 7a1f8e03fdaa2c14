import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import torch_absent

torch_absent.install()


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
    """``ember_threads(n)`` sets ember's intra-op thread count for the test, with oneDNN off
    (NumPy's OpenBLAS then takes the same count); the count and the switch before are restored
    afterwards."""
    import ember
    from ember._backend import cblas, choice, parallel
    before = parallel._num_threads, cblas.num_threads()
    onednn_before = choice.enabled(choice.ONEDNN)
    choice.set_enabled(choice.ONEDNN, False)
    try:
        yield ember.set_num_threads
    finally:
        choice.set_enabled(choice.ONEDNN, onednn_before)
        parallel._num_threads = before[0]
        choice.settings_changed()
        if before[1] is not None:
            cblas.set_num_threads(before[1])


@pytest.fixture
def numpy_kernels():
    """Run ember's ops on NumPy's reference kernels alone (tests of those kernels' internals:
    their blocks and fused paths)."""
    from ember._backend import choice
    with choice.only(choice.NUMPY):
        yield


@pytest.fixture
def spy(monkeypatch):
    """``spy(module, function, which=0)``: from now on, argument ``which`` of each call of
    ``module.function`` (which still runs) is appended to the list this returns."""
    def watch(module, function, which=0):
        calls = []
        real = getattr(module, function)

        def recorded(*args):
            calls.append(args[which])
            return real(*args)
        monkeypatch.setattr(module, function, recorded)
        return calls
    return watch


@pytest.fixture
def python_functions():
    """The compiled functions' Python paths in place for the test (``ops._compiled_functions``): a test
    of what those paths call (a loop, a kernel choice) sees the calls whether the compiled functions
    are built and taking their cases, or left to Python (dispatch switched on in the process)."""
    from ember.ops import _compiled_functions, _compiled_methods
    _compiled_methods.install()   # (built first: a build during the test would fill the entries again)
    functions = _compiled_functions.python_functions()
    compiled = [entry[0] for entry, _ in functions]
    for entry, python_op in functions:
        entry[0] = python_op
    yield
    for (entry, _), function in zip(functions, compiled):
        entry[0] = function


@pytest.fixture(scope="module")
def dispatch_switched_off():
    """The reasons for ``__torch_function__`` dispatch (a subclass switches it on for good in its
    process) switched off while a module's tests run (``dispatch_off``), and on again after it."""
    from ember import _torch_function
    reasons = set()
    yield reasons
    for reason in reasons:
        _torch_function.switch_on(reason)


@pytest.fixture
def dispatch_off(dispatch_switched_off):
    """``__torch_function__`` dispatch switched off for the test (and the rest of its module): the
    compiled methods and functions, which leave everything to the Python ops while it is on, run."""
    from ember import _torch_function
    for reason in set(_torch_function._switch.reasons):
        _torch_function.switch_off(reason)
        dispatch_switched_off.add(reason)


@pytest.fixture(params=["compiled", "python"])
def autograd_paths(request, monkeypatch):
    """Run the test with autograd's compiled record and engine loop (``autograd._compiled``),
    then with their Python steps."""
    from ember.autograd import _compiled, engine
    import ember
    from ember.ops import _common, _compiled_functions, _compiled_methods
    if request.param == "python":
        monkeypatch.setattr(engine, "_compiled", [None])
        monkeypatch.setattr(_common, "_compiled_record", _common._record_in_python)
        for name, python_op in _compiled_methods.python_methods().items():   # (they record in C)
            monkeypatch.setattr(ember.Tensor, name, python_op)
        functions = _compiled_functions.python_functions()   # (so do these)
        compiled = [entry[0] for entry, _ in functions]
        for entry, python_op in functions:
            entry[0] = python_op
        request.addfinalizer(lambda: [entry.__setitem__(0, f) for (entry, _), f in zip(functions, compiled)])
        for node_cls, python_gradient in _compiled_methods.python_gradients().items():
            monkeypatch.setattr(node_cls, "backward_arrays", python_gradient)
    elif _compiled._built() is None:
        pytest.skip("autograd's compiled paths cannot be built here (no C compiler or headers)")
    return request.param
