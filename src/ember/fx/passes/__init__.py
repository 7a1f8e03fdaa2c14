"""Passes over GraphModules: ``shape_prop``."""
from . import shape_prop  # noqa: F401
