"""OpInfo entries: index (to be filled)."""
from .common import Arg, OpInfo, Sample  # noqa: F401

A = Arg

OPS = []
