"""OpInfo entries: linalg_decomp (to be filled)."""
from .common import Arg, OpInfo, Sample  # noqa: F401

A = Arg

OPS = []
