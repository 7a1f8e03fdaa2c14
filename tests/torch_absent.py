"""A stand-in ``torch`` for Pythons that have no CPU build of torch (the oracle): PyPI's Linux
torch wheels are CUDA builds, and the CPU one is on hand for CPython 3.11 only.

With it, the test modules import as usual. Any use of torch in a test skips that test (at module
level, the module), so the tests that need no oracle still run; ``torch.Tensor`` and
``torch.Size`` are classes nothing is an instance of, so helpers that only ask whether a value
is a torch tensor keep working. The op table (tests/test_ops.py) compares with torch's results
recorded on the default Python instead (tests/op_db/torch_results.py).
"""
import importlib.abc
import importlib.util
import sys
import types

import pytest

ABSENT = importlib.util.find_spec("torch") is None
REASON = (f"torch is not installed for Python {sys.version_info[0]}.{sys.version_info[1]} "
          "(no CPU build of it here)")


class _Absent(types.ModuleType):
    class Tensor:
        pass

    class Size(tuple):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise pytest.skip.Exception(REASON, allow_module_level=True)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``torch`` and any ``torch.x.y`` as stand-ins."""

    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return _Absent(spec.name)

    def exec_module(self, module):
        pass


def install():
    """Let ``import torch`` (and its submodules) give stand-ins when torch is not installed."""
    if ABSENT and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
