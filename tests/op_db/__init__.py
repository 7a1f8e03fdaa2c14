"""The op table: one OpInfo per op, collected from the family modules."""
from .common import OpInfo, Arg, Sample  # noqa: F401
from . import pointwise, reduce, view, creation_convert  # noqa: F401

OPS = []
for _module in (pointwise, reduce, view, creation_convert):
    OPS.extend(_module.OPS)
_extra = []
for _name in ("shape", "linalg", "random_ops", "compare", "inplace"):
    try:
        _module = __import__(f"{__name__}.{_name}", fromlist=["OPS"])
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{_name}":
            raise
        continue
    OPS.extend(_module.OPS)
