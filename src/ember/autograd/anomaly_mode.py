"""Anomaly detection: ``detect_anomaly``, ``set_detect_anomaly``.

While anomaly detection is on (a process-wide setting, as in torch), every node records the
Python stack of the forward call that created it (in ``node.metadata["traceback_"]``), and the
engine checks each node's backward: when it raises, or (with ``check_nan``) returns a gradient
holding NaN, the forward stack is shown in a warning and the error is raised.

Recording is done by swapping ``Node.__init__`` for a recording one while the mode is on, so
that making a node costs nothing extra when it is off.
"""
import os
import traceback
import warnings

from .grad_mode import _DecoratorContextManager
from .graph import Node, modifier_recording, plain_init

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _AnomalyState:
    enabled = False
    check_nan = True


anomaly = _AnomalyState()

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _init_recording_stack(self, inputs):
    plain_init(self, inputs)
    self.metadata["traceback_"] = _forward_stack()


def _forward_stack():
    """The caller's stack as ``traceback.format_stack`` gives it, without ember's own frames
    at its end (the op that made the node)."""
    frames = traceback.extract_stack()
    end = len(frames)
    while end and frames[end - 1].filename.startswith(_EMBER_DIR):
        end -= 1
    return traceback.format_list(frames[:end or len(frames)])


def is_anomaly_enabled():
    """Returns True if anomaly detection is enabled."""
    return anomaly.enabled


def is_anomaly_check_nan_enabled():
    """Returns True if anomaly detection checks backward results for NaN."""
    return anomaly.check_nan


def set_anomaly_enabled(mode, check_nan=True):
    """Turn anomaly detection on or off (and its NaN check)."""
    anomaly.enabled = bool(mode)
    anomaly.check_nan = bool(check_nan)
    Node.__init__ = _init_recording_stack if mode else plain_init
    modifier_recording.enabled = anomaly.enabled


class detect_anomaly(_DecoratorContextManager):
    """Context-manager that enables anomaly detection for the autograd engine.

    Running the forward pass inside it makes every node remember the traceback of the forward
    operation that created it; any backward computation that raises an error (or, with
    ``check_nan``, produces NaN values) then shows that traceback.

    .. warning:: This mode should be enabled only for debugging: it slows down execution.
    """

    def __init__(self, check_nan=True):
        self.prev = anomaly.enabled
        self.check_nan = check_nan
        self.prev_check_nan = anomaly.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
                      "should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def clone(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.__class__(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """Context-manager that sets anomaly detection for the autograd engine on or off, according
    to ``mode``. It can be used as a context-manager or as a function."""

    def __init__(self, mode, check_nan=True):
        self.prev = anomaly.enabled
        self.prev_check_nan = anomaly.check_nan
        self.mode, self.check_nan = mode, check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def clone(self):
        return self.__class__(self.mode, self.check_nan)

    def __call__(self, func):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
        return super().__call__(func)


def checked_backward(node, grads):
    """``node.backward(*grads)`` under anomaly detection: on an error (or a NaN gradient with
    ``check_nan``), warn with the traceback of the forward call that created the node."""
    try:
        input_grads = node.backward(*grads)
        if anomaly.check_nan:
            _check_nan(node, input_grads)
    except Exception:
        _warn_forward_stack(node)
        raise
    return input_grads


def _check_nan(node, input_grads):
    if input_grads is None or hasattr(input_grads, "_data"):
        input_grads = (input_grads,)
    for index, grad in enumerate(input_grads):
        inexact = grad is not None and (grad.is_floating_point() or grad.is_complex())
        if inexact and grad.isnan().any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {index}th output.")


def _warn_forward_stack(node):
    stack = node.__dict__.get("_metadata", {}).get("traceback_")
    if stack is None:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information available. "
                      "Enable detect anomaly during forward pass for more information.",
                      stacklevel=2)
        return
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                  f"error:\n{''.join(stack)}", stacklevel=2)
