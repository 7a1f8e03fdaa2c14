"""The op table: one OpInfo per op, collected from the family modules."""
from .common import OpInfo, Arg, Sample  # noqa: F401
from . import compare, creation_convert, linalg, pointwise, reduce, shape, view

OPS = []
for _module in (pointwise, compare, reduce, view, shape, linalg, creation_convert):
    OPS.extend(_module.OPS)
