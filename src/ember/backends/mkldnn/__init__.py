"""oneDNN (formerly MKL-DNN), the CPU kernel library ember's convolutions, normalizations,
pooling, softmax and float32 products run on, as ``torch.backends.mkldnn``:
``is_available()``, the ``enabled`` switch and ``flags``."""
import contextlib
import sys
import types

from ..._backend import choice, onednn

__all__ = ["is_available", "flags", "enabled"]


def is_available():
    """Return whether ember can use oneDNN here (its library ``libdnnl.so.3`` loads)."""
    return onednn.available()


@contextlib.contextmanager
def flags(enabled=False):
    """Within the block, use oneDNN's kernels only if ``enabled``."""
    previous = choice.enabled(choice.ONEDNN)
    choice.set_enabled(choice.ONEDNN, enabled)
    try:
        yield
    finally:
        choice.set_enabled(choice.ONEDNN, previous)


class _Module(types.ModuleType):
    @property
    def enabled(self):
        """Whether ember runs the ops oneDNN has on it (where it is available)."""
        return choice.enabled(choice.ONEDNN)

    @enabled.setter
    def enabled(self, flag):
        choice.set_enabled(choice.ONEDNN, flag)


sys.modules[__name__].__class__ = _Module
