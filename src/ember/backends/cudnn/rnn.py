"""cuDNN's recurrent-network settings, as ``torch.backends.cudnn.rnn``: the ``fp32_precision``
of cuDNN's RNNs (ember runs its RNNs on its own ops, never cuDNN's)."""
import sys

from .. import PropModule, _precision

_MODES = ("RNN_RELU", "RNN_TANH", "LSTM", "GRU")


def get_cudnn_mode(mode):
    """cuDNN's enum value of an RNN mode: there is none without cuDNN."""
    if mode not in _MODES:
        raise ValueError(f"Unknown mode: {mode}")
    raise RuntimeError("cuDNN is not available: ember's RNNs do not use it")


class Unserializable:
    """A value kept out of pickles (torch keeps it for old models' dropout state)."""

    def __init__(self, inner):
        self.inner = inner

    def get(self):
        return self.inner

    def __getstate__(self):
        return "<unserializable>"

    def __setstate__(self, state):
        self.inner = None


class _Prop:
    """Like ``ContextProp`` but never frozen (as torch's cudnn.rnn's)."""

    def __init__(self, getter, setter):
        self.getter, self.setter = getter, setter

    def __get__(self, obj, objtype):
        return self.getter()

    def __set__(self, obj, val):
        self.setter(val)


class CudnnRNNModule(PropModule):
    fp32_precision = _Prop(_precision.getter("cuda", "rnn"), _precision.setter("cuda", "rnn"))


sys.modules[__name__] = CudnnRNNModule(sys.modules[__name__], __name__)
