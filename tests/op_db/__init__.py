"""The op table: one OpInfo per op, collected from the family modules."""
from .common import OpInfo, Arg, Sample  # noqa: F401
from . import (compare, creation_convert, distribution_samplers, everyday, index, linalg, linalg_decomp,
               pointwise, reduce, shape, sort, special, view)

OPS = []
for _module in (pointwise, compare, reduce, view, shape, index, sort, linalg, linalg_decomp,
                creation_convert, special, everyday, distribution_samplers):
    OPS.extend(_module.OPS)
