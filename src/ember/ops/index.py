"""(to be filled: see the module list in ember/ops/__init__.py)"""
from ._common import Tensor  # noqa: F401

__all__ = []
