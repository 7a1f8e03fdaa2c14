"""Sorting, selection and scans (to be filled)."""
from ._common import Tensor  # noqa: F401

__all__ = []
