"""Named tuples that ops with several outputs return, as ``torch.return_types`` does:
``ember.max(x, 1)`` gives ``ember.return_types.max(values=..., indices=...)``, which unpacks
like a tuple and names its fields."""
from collections import namedtuple

__all__ = []


def _return_type(name, fields):
    """A tuple subclass ``name`` with named ``fields``, printed as torch prints its own."""
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"ember.return_types.{name}(\n{body})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})
    globals()[name] = cls
    __all__.append(name)
    return cls


for _name, _fields in (
    ("max", ("values", "indices")),
    ("min", ("values", "indices")),
    ("sort", ("values", "indices")),
    ("topk", ("values", "indices")),
    ("kthvalue", ("values", "indices")),
    ("median", ("values", "indices")),
    ("nanmedian", ("values", "indices")),
    ("mode", ("values", "indices")),
    ("cummax", ("values", "indices")),
    ("cummin", ("values", "indices")),
    ("aminmax", ("min", "max")),
    ("frexp", ("mantissa", "exponent")),
    ("histogram", ("hist", "bin_edges")),
    ("histogramdd", ("hist", "bin_edges")),
    ("lu_unpack", ("P", "L", "U")),
    ("triangular_solve", ("solution", "cloned_coefficient")),
):
    _return_type(_name, _fields)
