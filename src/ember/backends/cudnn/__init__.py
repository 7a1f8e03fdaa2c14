"""cuDNN's switches, as ``torch.backends.cudnn``. ember's CUDA kernels are CuPy's (cuBLAS and
CuPy's own); none of them calls cuDNN, so ``is_available()`` is False and ``version()`` None
everywhere. The switches keep torch's defaults and the values set on them, so that programs
which set them run unchanged."""
import contextlib
import sys

from .._flags import BoolFlag, check_bool, install

__all__ = ["is_available", "version", "flags", "enabled", "benchmark", "deterministic",
           "allow_tf32", "benchmark_limit"]

benchmark_limit = None


def is_available():
    """Return a bool indicating if cuDNN is currently available (ember never uses it)."""
    return False


def version():
    """Return the version of cuDNN (None: ember does not use cuDNN)."""
    return None


_SWITCHES = ("enabled", "benchmark", "deterministic", "allow_tf32")


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Within the block, set the four switches to the given values (``benchmark_limit`` only
    applies where cuDNN is available); they are restored afterwards."""
    module = sys.modules[__name__]
    values = (enabled, benchmark, deterministic, allow_tf32)
    for name, value in zip(_SWITCHES, values):
        check_bool(value, _FLAGS[name].setter)
    before = [getattr(module, name) for name in _SWITCHES]
    for name, value in zip(_SWITCHES, values):
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in zip(_SWITCHES, before):
            setattr(module, name, value)


_FLAGS = {
    "enabled": BoolFlag(True, "set_enabled_cudnn"),
    "benchmark": BoolFlag(False, "set_benchmark_cudnn"),
    "deterministic": BoolFlag(False, "set_deterministic_cudnn"),
    "allow_tf32": BoolFlag(True, "set_allow_tf32_cudnn"),
}


install(__name__, _FLAGS)
