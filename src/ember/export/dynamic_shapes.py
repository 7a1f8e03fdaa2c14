"""``Dim`` and the shape guards of an exported program: which dimensions of the user inputs may
vary (and between which bounds), and the check ``module()`` makes on every call."""
import enum

from ._errors import UserError

__all__ = ["Dim", "DimHint", "dims", "ShapeGuards"]

_INT_OO = float("inf")


class DimHint(enum.Enum):
    """``Dim.AUTO`` / ``Dim.DYNAMIC`` (the dimension may vary, without bounds) and
    ``Dim.STATIC`` (fixed to the example's size)."""
    AUTO = "AUTO"
    DYNAMIC = "DYNAMIC"
    STATIC = "STATIC"

    def __repr__(self):
        return f"DimHint({self.value})"


class Dim:
    """A symbolic dimension: ``Dim("batch", min=2, max=64)`` marks the dimensions given it in
    ``dynamic_shapes`` as free to take any size in ``[min, max]`` (``min`` 0 and ``max``
    unbounded by default). The same ``Dim`` on two dimensions says they are equal."""
    AUTO = DimHint.AUTO
    DYNAMIC = DimHint.DYNAMIC
    STATIC = DimHint.STATIC

    def __init__(self, name, *, min=None, max=None):
        low = 0 if min is None else min
        high = _INT_OO if max is None else max
        if not isinstance(name, str) or not name.isidentifier():
            raise UserError(f"Dim name must be a valid identifier, got {name!r}")
        if low < 0:
            raise UserError(f"Cannot create Dim with min={low} < 0")
        if high < low:
            raise AssertionError(f"Cannot create Dim with inconsistent min={low}, max={high}")
        self.__name__ = name
        self.min = low
        self.max = high

    def __repr__(self):
        if self.max == _INT_OO:
            return f"Dim({self.__name__!r}, min={self.min})"
        return f"Dim({self.__name__!r}, min={self.min}, max={self.max})"


def dims(*names, min=None, max=None):
    """One ``Dim`` per name, sharing the bounds."""
    return tuple(Dim(name, min=min, max=max) for name in names)


class ShapeGuards:
    """What the shapes of the user inputs must be: per input name, per dimension, either a fixed
    size or a (name, min, max) range. ``check`` raises torch's ``Guard failed`` error."""

    def __init__(self, fixed, ranges):
        self.fixed = fixed      # [(input name, dim, size)]
        self.ranges = ranges    # [(input name, dim, Dim name, min, max)]

    @property
    def range_constraints(self):
        """Dim name -> (min, max) of each dynamic dimension."""
        return {name: (low, high) for _, _, name, low, high in self.ranges}

    def check(self, tensors):
        """``tensors``: input name -> tensor, the user inputs of a call."""
        for name, dim, size in self.fixed:
            actual = tensors[name].shape[dim]
            if actual != size:
                raise AssertionError(f"Guard failed: {name}.size()[{dim}] == {size}")
        seen = {}
        for name, dim, dim_name, low, high in self.ranges:
            actual = tensors[name].shape[dim]
            if actual < low:
                raise AssertionError(f"Guard failed: {name}.size()[{dim}] >= {low}")
            if actual > high:
                raise AssertionError(f"Guard failed: {name}.size()[{dim}] <= {high}")
            if dim_name in seen and seen[dim_name][0] != actual:
                other, other_dim = seen[dim_name][1]
                raise AssertionError(f"Guard failed: {name}.size()[{dim}] == "
                                     f"{other}.size()[{other_dim}]")
            seen.setdefault(dim_name, (actual, (name, dim)))

    def to_json(self):
        return {"fixed": [list(f) for f in self.fixed],
                "ranges": [[n, d, dn, lo, None if hi == _INT_OO else hi]
                           for n, d, dn, lo, hi in self.ranges]}

    @classmethod
    def from_json(cls, spec):
        return cls([tuple(f) for f in spec["fixed"]],
                   [(n, d, dn, lo, _INT_OO if hi is None else hi)
                    for n, d, dn, lo, hi in spec["ranges"]])


def _per_input(dynamic_shapes, names):
    """``dynamic_shapes`` as a list aligned with the input names."""
    if dynamic_shapes is None:
        return [None] * len(names)
    if isinstance(dynamic_shapes, dict):
        unknown = [k for k in dynamic_shapes if k not in names]
        if unknown:
            raise UserError(
                f"When `dynamic_shapes` is specified as a dict, its top-level keys must be the "
                f"arg names {names} of `inputs`, but here they are {list(dynamic_shapes)}. "
                f"Alternatively, you could also ignore arg names entirely and specify "
                f"`dynamic_shapes` as a list/tuple matching `inputs`.")
        return [dynamic_shapes.get(n) for n in names]
    if isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(names):
            raise UserError(f"`dynamic_shapes` has {len(dynamic_shapes)} entries but `inputs` "
                            f"has {len(names)}: {names}")
        return list(dynamic_shapes)
    raise UserError(f"`dynamic_shapes` must be a dict, a tuple or a list, got "
                    f"{type(dynamic_shapes).__name__}")


def shape_guards(dynamic_shapes, inputs):
    """The guards of ``inputs`` (input name -> example value) under ``dynamic_shapes``: every
    tensor dimension is fixed to its example size unless given a Dim or a DimHint."""
    from .. import Tensor
    names = list(inputs)
    specs = _per_input(dynamic_shapes, names)
    fixed, ranges = [], []
    sizes_of_dim = {}
    for name, spec in zip(names, specs):
        value = inputs[name]
        if not isinstance(value, Tensor):
            if spec is not None:
                raise UserError(f"dynamic_shapes given for {name!r}, which is not a tensor")
            continue
        shape = tuple(value.shape)
        if spec is None:
            spec = {}
        elif isinstance(spec, (tuple, list)):
            if len(spec) != len(shape):
                raise UserError(f"Expected dynamic shape spec {spec} at inputs['{name}'] to have "
                                f"{len(shape)} dimensions (the tensor's), got {len(spec)}")
            spec = dict(enumerate(spec))
        elif not isinstance(spec, dict):
            raise UserError(f"Unexpected dynamic_shapes entry for {name!r}: {spec!r} (expected a "
                            f"dict dim -> Dim, a tuple or None)")
        for dim in spec:
            if not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
                raise UserError(f"Dimension {dim} in dynamic_shapes of {name!r} is out of range "
                                f"for a tensor of {len(shape)} dimensions")
        spec = {d % len(shape): v for d, v in spec.items()}
        for dim, size in enumerate(shape):
            hint = spec.get(dim)
            if hint is None or hint is DimHint.STATIC:
                fixed.append((name, dim, size))
                continue
            if isinstance(hint, DimHint):
                hint = Dim(f"{name}_dim{dim}")
            if not isinstance(hint, Dim):
                raise UserError(f"Unexpected dynamic_shapes entry for {name!r} dimension {dim}: "
                                f"{hint!r} (expected a Dim, Dim.AUTO/DYNAMIC/STATIC or None)")
            if not hint.min <= size <= hint.max:
                raise UserError(f"The example size {size} of {name}.size()[{dim}] is outside "
                                f"the range [{hint.min}, {hint.max}] of {hint!r}")
            earlier = sizes_of_dim.setdefault(hint.__name__, (size, name, dim))
            if earlier[0] != size:
                raise UserError(f"{name}.size()[{dim}] = {size} is not equal to "
                                f"{earlier[1]}.size()[{earlier[2]}] = {earlier[0]}")
            ranges.append((name, dim, hint.__name__, hint.min, hint.max))
    return ShapeGuards(fixed, ranges)
