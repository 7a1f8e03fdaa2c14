"""oneDNN (formerly MKL-DNN), the CPU kernel library ember's convolutions, normalizations,
pooling, softmax and float32 products run on, as ``torch.backends.mkldnn``: ``is_available()``,
the ``enabled`` switch (it switches ember's oneDNN kernels on and off), ``flags``, ``verbose``
(oneDNN's own verbose mode, through its C API) and torch's other switches, which ember keeps
without acting on them (``deterministic``: oneDNN's kernels that ember runs are deterministic
already; ``allow_tf32`` and ``fp32_precision``: ember computes float32 in float32)."""
import contextlib
import sys

from .. import ContextProp, PropModule, _allow_nonbracketed_mutation, _precision
from .._flags import check_bool
from ..._backend import choice, onednn

__all__ = ["is_available", "is_acl_available", "verbose", "VERBOSE_OFF", "VERBOSE_ON",
           "VERBOSE_ON_CREATION", "set_flags", "flags", "MkldnnModule", "enabled",
           "deterministic", "allow_tf32", "matmul", "conv", "rnn", "fp32_precision"]

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2


def is_available():
    """Return whether ember can use oneDNN here (its library ``libdnnl.so.3`` loads)."""
    return onednn.available()


def is_acl_available():
    """Return whether oneDNN is built with the Arm Compute Library (not the x86 build ember
    loads)."""
    return False


class verbose:
    """On-demand oneDNN verbosing: within the block, oneDNN prints a line per primitive it runs
    (``VERBOSE_ON``), and per primitive it creates too (``VERBOSE_ON_CREATION``).

        with ember.backends.mkldnn.verbose(ember.backends.mkldnn.VERBOSE_ON):
            model(data)
    """

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        if self.level == VERBOSE_OFF:
            return
        if not onednn.set_verbose(self.level):
            raise AssertionError("Failed to set MKLDNN into verbose mode. Please consider to "
                                 "disable this verbose scope.")
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        onednn.set_verbose(VERBOSE_OFF)
        return False


_switches = {"deterministic": False, "allow_tf32": False}


def _get_enabled():
    return choice.enabled(choice.ONEDNN)


def _set_enabled(value):
    choice.set_enabled(choice.ONEDNN, check_bool(value, "set_enabled_mkldnn"))


def _get_deterministic():
    return _switches["deterministic"]


def _set_deterministic(value):
    _switches["deterministic"] = check_bool(value, "set_deterministic_mkldnn")


def _get_allow_tf32():
    return _switches["allow_tf32"]


def _set_allow_tf32(value):
    _switches["allow_tf32"] = check_bool(value, "_set_onednn_allow_tf32")


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Set the switches given (None leaves one as it is); returns the previous settings."""
    orig_flags = (_get_enabled(), _get_deterministic(), _get_allow_tf32(),
                  _precision.get("mkldnn", "all"))
    if _enabled is not None:
        _set_enabled(_enabled)
    if _deterministic is not None:
        _set_deterministic(_deterministic)
    if _allow_tf32 is not None:
        _set_allow_tf32(_allow_tf32)
    if _fp32_precision is not None:
        _precision.set("mkldnn", "all", _fp32_precision)
    return orig_flags


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Within the block, use oneDNN's kernels only if ``enabled`` (and set the other
    switches); everything is restored afterwards."""
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)


class MkldnnModule(PropModule):
    def is_available(self):
        return is_available()

    enabled = ContextProp(_get_enabled, _set_enabled)
    deterministic = ContextProp(_get_deterministic, _set_deterministic)
    allow_tf32 = ContextProp(_get_allow_tf32, _set_allow_tf32)
    matmul = _precision.FP32Precision("mkldnn", "matmul")
    conv = _precision.FP32Precision("mkldnn", "conv")
    rnn = _precision.FP32Precision("mkldnn", "rnn")
    # torch reads oneDNN's own setting and writes the generic one
    fp32_precision = ContextProp(_precision.getter("mkldnn", "all"),
                                 _precision.setter("generic", "all"))


sys.modules[__name__] = MkldnnModule(sys.modules[__name__], __name__)
