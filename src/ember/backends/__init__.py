"""Switches and queries for the kernel libraries behind ember's devices, as ``torch.backends``.

Each submodule that holds switches replaces itself in ``sys.modules`` with a ``PropModule``
whose class carries them as ``ContextProp``s, as torch's do, so that ``module.flag = value``
goes through a setter; after ``disable_global_flags()`` such assignments raise and only the
``flags()`` context managers may change them.
"""
import contextlib
import sys
import types

from . import _precision

_state = {"allow_nonbracketed_mutation": True}


def disable_global_flags():
    """Forbid bare assignment of the backends' switches (``cudnn.enabled = ...``): from now on
    only their ``flags()`` context managers may change them (torch's test suite does this)."""
    _state["allow_nonbracketed_mutation"] = False


def flags_frozen():
    """Whether ``disable_global_flags()`` has been called."""
    return not _state["allow_nonbracketed_mutation"]


@contextlib.contextmanager
def _allow_nonbracketed_mutation():
    old = _state["allow_nonbracketed_mutation"]
    _state["allow_nonbracketed_mutation"] = True
    try:
        yield
    finally:
        _state["allow_nonbracketed_mutation"] = old


class ContextProp:
    """A module switch: reading it calls ``getter()``; assigning it calls ``setter(value)``,
    unless the flags are frozen (``disable_global_flags``)."""

    def __init__(self, getter, setter):
        self.getter = getter
        self.setter = setter

    def __get__(self, obj, objtype):
        return self.getter()

    def __set__(self, obj, val):
        if not flags_frozen():
            self.setter(val)
        else:
            raise RuntimeError(
                f"not allowed to set {obj.__name__} flags after disable_global_flags; please "
                "use flags() context manager instead")


class PropModule(types.ModuleType):
    """A module standing in for module ``m`` in ``sys.modules``: its class holds the
    switches; every other attribute is ``m``'s."""

    def __init__(self, m, name):
        super().__init__(name)
        self.m = m

    def __getattr__(self, attr):
        return self.m.__getattribute__(attr)


def set_flags(_fp32_precision="none"):
    """Set the generic float32 precision (None leaves it); returns the previous settings."""
    orig_flags = (_precision.get("generic", "all"),)
    if _fp32_precision is not None:
        _precision.set("generic", "all", _fp32_precision)
    return orig_flags


@contextlib.contextmanager
def flags(fp32_precision="none"):
    """Within the block, the generic float32 precision is ``fp32_precision``."""
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(fp32_precision)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)


class GenericModule(PropModule):
    fp32_precision = ContextProp(_precision.getter("generic", "all"),
                                 _precision.setter("generic", "all"))


sys.modules[__name__] = GenericModule(sys.modules[__name__], __name__)

from . import (cpu, cuda, cudnn, cusparselt, kleidiai, mha, miopen, mkl,  # noqa: E402,F401
               mkldnn, mps, nnpack, openmp, opt_einsum, python_native, quantized)
