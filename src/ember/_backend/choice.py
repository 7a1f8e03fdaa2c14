"""The kernel choice: which library runs an array-level op.

An op with more than one kernel declares them once, as a ``KernelChoice`` naming each
library's kernel in order of preference, NumPy's (or CuPy's: the same code over ``xp``)
last, as the reference. A kernel that cannot run a case (an array type, dtype or geometry its
library does not take) returns None and the next one runs; what NumPy's returns is the
choice's answer (None only for choices whose callers have a general path, such as a product
added in place). Ops call the
choice, never a library directly, so the choice is made here and nowhere else.

Libraries are switched by ``set_enabled`` (``ember.backends.mkldnn.enabled`` is oneDNN's
switch, as in torch), by the environment variable ``EMBER_ONEDNN=0`` (read when oneDNN is
first asked for), and, in tests, by ``only(library)``, which runs every choice on that one
library's kernel and fails where it does not apply.
"""
import contextlib
import os
import threading

from . import onednn

NUMPY, ONEDNN = "numpy", "onednn"
LIBRARIES = (ONEDNN, NUMPY)

_switches = {}  # library -> bool, set by set_enabled or read from the environment
# Bumped whenever a setting a choice reads changes (a library's switch, ember's thread count),
# so that each thread checks the settings again on its next choice.
_generation = 0


class _ThreadState(threading.local):
    library = None   # set by ``only``
    # The ``_generation`` at which this thread last found oneDNN usable, nothing forced and its
    # OpenMP thread count applied: until the settings change, a choice runs without checking.
    ready = -1


_thread = _ThreadState()


def settings_changed():
    """Every thread checks the settings again (a switch or the thread count changed)."""
    global _generation
    _generation += 1


def settled():
    """Whether this thread's choices run without checking the settings (nothing forced, the
    settings unchanged since it last checked them): what compiled ops that call a choice's
    first kernel directly ask first (``ops._compiled_functions``)."""
    return _thread.ready == _generation


def _onednn_usable():
    switch = _switches.get(ONEDNN)
    if switch is None:
        switch = _switches[ONEDNN] = (os.environ.get("EMBER_ONEDNN", "1") != "0"
                                      and onednn.available())
    if switch:
        onednn.threads.follow_ember()
        if _thread.library is None:
            _thread.ready = _generation
    return switch


def enabled(library):
    """Whether ``library``'s kernels are used where they apply."""
    if library == NUMPY:
        return True
    if library == ONEDNN:
        return _onednn_usable()
    raise ValueError(f"unknown kernel library {library!r}; expected one of {LIBRARIES}")


def set_enabled(library, flag):
    """Use (or stop using) ``library``'s kernels. NumPy's reference kernels cannot be turned
    off: they are the fallback of every choice."""
    if library == NUMPY:
        if not flag:
            raise ValueError("NumPy's kernels are the reference and fallback; they cannot be "
                             "disabled")
        return
    if library not in LIBRARIES:
        raise ValueError(f"unknown kernel library {library!r}; expected one of {LIBRARIES}")
    _switches[library] = bool(flag) and (library != ONEDNN or onednn.available())
    settings_changed()
    from . import parallel
    parallel.follow_onednn()


@contextlib.contextmanager
def only(library):
    """Within the block, every choice runs ``library``'s kernel, raising ``KernelNotApplicable``
    where it has none or declines the case (tests compare each library with torch)."""
    if library != NUMPY and not enabled(library):
        raise RuntimeError(f"kernel library {library!r} is not available here")
    previous = _thread.library
    _thread.library, _thread.ready = library, -1
    try:
        yield
    finally:
        _thread.library, _thread.ready = previous, -1


class KernelNotApplicable(RuntimeError):
    """Under ``only(library)``, the forced library has no kernel for the case."""


class KernelChoice:
    """One array-level op's kernels by library, in order of preference; calling it runs the
    first enabled kernel that takes the case."""
    __slots__ = ("name", "_kernels", "_onednn", "_numpy")

    def __init__(self, name, **kernels):
        unknown = set(kernels) - set(LIBRARIES)
        if unknown or NUMPY not in kernels:
            raise ValueError(f"{name}: kernels must be among {LIBRARIES} and include {NUMPY!r}")
        self.name = name
        self.kernels = tuple((lib, kernels[lib]) for lib in LIBRARIES if lib in kernels)

    @property
    def kernels(self):
        """``((library, kernel), ...)`` in order of preference, NumPy's last."""
        return self._kernels

    @kernels.setter
    def kernels(self, kernels):
        self._kernels = tuple(kernels)
        found = dict(self._kernels)
        self._onednn, self._numpy = found.get(ONEDNN), found[NUMPY]

    def __call__(self, *args):
        if _thread.ready != _generation:   # the settings changed, or something is forced
            return self._call_checked(args)
        kernel = self._onednn
        if kernel is not None:
            out = kernel(*args)
            if out is not None:
                return out
        return self._numpy(*args)

    def _call_checked(self, args):
        forced = _thread.library
        if forced is not None:
            return self._forced(forced, args)
        kernel = self._onednn
        if kernel is not None and _onednn_usable():
            out = kernel(*args)
            if out is not None:
                return out
        return self._numpy(*args)

    def _forced(self, library, args):
        for lib, kernel in self.kernels:
            if lib == library:
                out = kernel(*args)
                if out is not None:
                    return out
        raise KernelNotApplicable(f"{self.name} has no {library} kernel for this case")

    def libraries(self):
        return tuple(lib for lib, _ in self.kernels)
