"""Field readers for ``Node.saved_fields`` tables: ``grad_fn._saved_<name>`` computed, when it is
read, from what a node keeps anyway (its saved tensors, its attributes, its edges), so that
recording a node does no work for them."""
from .._backend import namespace_of

_INT64_MAX = 2 ** 63 - 1


def constant(value):
    """A field torch keeps with the same value on every node of the class."""
    return lambda node: value


def operand_for(index, needed_by):
    """Saved tensor ``index``, which torch keeps only when input ``needed_by`` (one index or a
    tuple of them) takes a gradient: None otherwise."""
    needs = (needed_by,) if needed_by.__class__ is int else needed_by

    def field(node):
        if all(node.next_functions[i][0] is None for i in needs):
            return None
        return node.saved_tensors[index]
    return field


def saved_size(index):
    """The sizes of saved tensor ``index``."""
    return lambda node: node.saved_tensors[index]._data.shape


def saved_strides(index, needed_by):
    """The strides (in elements) of saved tensor ``index``, which torch keeps only for the
    gradient of input ``needed_by``: () otherwise."""
    def strides(node):
        if node.next_functions[needed_by][0] is None:
            return ()
        data = node.saved_tensors[index]._data
        return tuple(s // data.itemsize for s in data.strides)
    return strides


def array_attribute(name):
    """A node attribute that holds an array, as a tensor."""
    def field(node):
        from .._tensor import _make
        return _make(getattr(node, name))
    return field


def not_kept(what):
    """A field torch keeps and ember's node does not (its backward does without, and keeping it
    would cost every call of the op): reading it raises, naming it."""
    def field(node):
        raise NotImplementedError(
            f"{type(node).__name__}._saved_{what}: ember's {type(node).__name__} does not keep "
            f"{what!r}, which its backward does not need")
    field.not_kept = True
    return field


def _dims_of_key(key, ndim):
    """(dim in the tensor indexed so far, item) for each int or slice of a basic ``key``."""
    items = key if isinstance(key, tuple) else (key,)
    taken = sum(1 for k in items if k is not None and k is not Ellipsis)
    out, dim = [], 0
    for k in items:
        if k is Ellipsis:
            dim += ndim - taken
        elif k is None:
            dim += 1
        elif isinstance(k, slice):
            out.append((dim, k))
            dim += 1
        else:
            out.append((dim, k))
    return out


def _last_step(node):
    """torch indexes one dim at a time; its last step is the node the result has."""
    steps = _dims_of_key(node.key, len(node.in_shape))
    for dim, k in reversed(steps):
        if not isinstance(k, slice) or k != slice(None):
            return dim, k
    return steps[0] if steps else (0, slice(None))


def slice_field(part):
    """``dim``/``start``/``end``/``step``/``index`` of a basic-indexing node, from its key."""
    def field(node):
        dim, k = _last_step(node)
        if part == "dim":
            return dim
        if part == "index":
            return int(k)
        if part == "start":
            return 0 if k.start is None else int(k.start)
        if part == "end":
            return _INT64_MAX if k.stop is None else int(k.stop)
        return 1 if k.step is None else int(k.step)
    return field


def index_key_tensors(node):
    """An advanced-indexing node's key as torch keeps it: a tensor per indexed dim, None for a
    dim taken whole (boolean masks as ember applies them: their nonzero positions)."""
    from .._tensor import _make
    arrays = [k for k in node.key if hasattr(k, "dtype")]
    xp = namespace_of(arrays[0]) if arrays else None
    out = []
    for k in node.key:
        if isinstance(k, slice) or k is None:
            out.append(None)
        elif k is Ellipsis:
            out.extend([None] * (len(node.in_shape) - sum(
                getattr(a, "ndim", 1) if not isinstance(a, slice) and a is not None else
                isinstance(a, slice) for a in node.key if a is not Ellipsis)))
        else:
            out.append(_make(k if hasattr(k, "dtype") else xp.asarray(k)))
    return tuple(out)
