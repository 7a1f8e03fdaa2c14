"""The meta backend: arrays with a shape, a dtype and strides and no data (torch's ``meta``
device), for building models without allocating their weights and for working out the shapes
and dtypes an op gives.

A ``MetaArray`` is a NumPy array subclass that views a single element through zero strides:
whatever its shape, it holds one element of memory. Its logical strides (what
``Tensor.stride()`` reports) are kept beside it and read through ``strides``/``flags``.

Ops run unchanged on meta arrays. NumPy calls them back through ``__array_ufunc__`` and
``__array_function__``: elementwise ufuncs and ``matmul`` get their result's shape and dtype
from the broadcasting and promotion rules alone (the dtype from a ufunc call on one-element
samples); other functions run NumPy's kernel on the zero-strided view (the inputs cost no
memory; the result is computed, then replaced by a meta array of its shape and dtype). The
namespace ``xp`` makes its factories' results meta without allocating, and its
``lib.stride_tricks.as_strided`` makes meta views. Results that depend on values (``nonzero``,
``unique``, a boolean mask of meta values) raise as torch's meta kernels do; an op's own
checks of values (``bool(array.any())``) read the zero the array views and pass.
"""
import numpy as np

device_type = "meta"


class MetaArray(np.ndarray):
    """A shape, dtype and strides without data (one element viewed through zero strides)."""

    # (element strides, None for row-major ones) live in the instance __dict__ as _logical
    def __array_finalize__(self, obj):
        if "_logical" not in self.__dict__:
            self._logical = None

    # -- what a tensor reads ---------------------------------------------------------------
    @property
    def strides(self):
        item = self.itemsize
        return tuple(s * item for s in self.element_strides())

    def element_strides(self):
        logical = self.__dict__.get("_logical")
        return _row_major(self.shape) if logical is None else logical

    @property
    def flags(self):
        return _Flags(self.shape, self.element_strides())

    # (item(), bool(), int() read the zero the array views: ops' own checks of values pass on
    # meta arrays; Tensor.item() and bool(tensor) refuse meta tensors as torch does)
    def tolist(self):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__

    # -- copies make new meta arrays; views keep their logical strides ----------------------
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return empty(self.shape, dtype, self._kept_strides(order))

    def copy(self, order="C"):
        return empty(self.shape, self.dtype, self._kept_strides(order))

    def _kept_strides(self, order):
        if order == "K" and _dense(self.shape, self.element_strides()):
            return self.element_strides()
        return None

    def transpose(self, *axes):
        return _view(self, np.ndarray.transpose, *axes)

    def swapaxes(self, a, b):
        return _view(self, np.ndarray.swapaxes, a, b)

    def squeeze(self, axis=None):
        return _view(self, np.ndarray.squeeze, axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _view(self, np.ndarray.diagonal, offset, axis1, axis2)

    @property
    def T(self):
        return self.transpose()

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        try:
            return _view(self, lambda a: a.reshape(shape, order=order, copy=False))
        except ValueError:   # no view has that shape: a row-major copy, as NumPy's reshape makes
            return empty(np.ndarray.reshape(_plain(self), shape, order=order).shape, self.dtype)

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)

    def flatten(self, order="C"):
        return empty((self.size,), self.dtype)

    def __getitem__(self, key):
        if _is_basic(key):
            return _view(self, np.ndarray.__getitem__, key)
        key = _plain_key(key)
        return _meta_like(np.ndarray.__getitem__(_plain(self), key))

    def __setitem__(self, key, value):
        _plain_key(key)
        shape = np.ndarray.__getitem__(_plain(self), key if _is_basic(key) else _plain_key(key)).shape
        np.broadcast_shapes(np.shape(value), shape)

    def fill(self, value):
        pass

    # -- NumPy's protocols -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        args = tuple(_plain(x) for x in inputs)
        kwargs = {k: _plain(v) for k, v in kwargs.items()}
        if method == "__call__" and ufunc.signature is None:
            shape = np.broadcast_shapes(*(np.shape(a) for a in args))
            with np.errstate(all="ignore"):
                samples = ufunc(*(_sample(a) for a in args), **{k: _sample(v) for k, v in kwargs.items()})
            results = samples if isinstance(samples, tuple) else (samples,)
            made = tuple(empty(shape, np.asarray(r).dtype) for r in results)
        elif method == "__call__" and ufunc is np.matmul:
            made = (empty(_matmul_shape(args[0], args[1]), np.result_type(*(_sample(a) for a in args))),)
            if kwargs.get("dtype") is not None:
                made = (empty(made[0].shape, kwargs["dtype"]),)
        else:
            with np.errstate(all="ignore"):
                result = getattr(ufunc, method)(*args, **kwargs)
            if method == "at":
                return None
            made = tuple(_meta_like(r) for r in (result if isinstance(result, tuple) else (result,)))
        if out is not None:
            for target, value in zip(out, made):
                if isinstance(target, np.ndarray):
                    np.broadcast_shapes(target.shape, value.shape)
            return out[0] if len(out) == 1 else out
        return made[0] if len(made) == 1 else made

    def __array_function__(self, func, types, args, kwargs):
        rule = _FUNCTIONS.get(func)
        if rule is not None:
            return rule(*args, **kwargs)
        if func in _DATA_DEPENDENT:
            raise NotImplementedError(f"{func.__name__}() depends on the values of its input, which "
                                      "a meta tensor does not have")
        if func in _VIEWS:
            probes = _map(_probe, args)
            view = func(*probes, **_map(_probe, kwargs))
            return _map(lambda v: _from_probe(v) if isinstance(v, np.ndarray) else v, view)
        with np.errstate(all="ignore"):
            result = func(*_map(_plain, args), **_map(_plain, kwargs))
        return _map(_meta_like, result)


class _Flags:
    """The layout flags a meta array's logical strides give."""
    __slots__ = ("c_contiguous", "f_contiguous")
    writeable = aligned = True
    owndata = False

    def __init__(self, shape, strides):
        self.c_contiguous = _is_row_major(shape, strides)
        self.f_contiguous = _is_row_major(shape[::-1], strides[::-1])

    @property
    def contiguous(self):
        return self.c_contiguous

    def __getitem__(self, name):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "WRITEABLE": "writeable", "OWNDATA": "owndata"}.get(name, name.lower()))


ndarray = MetaArray


def empty(shape, dtype=float, strides=None):
    """A meta array of ``shape`` and ``dtype`` (row-major unless ``strides``, in elements)."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    cell = np.zeros(1, dtype)
    arr = np.ndarray.__new__(MetaArray, shape, dtype, buffer=cell, strides=(0,) * len(shape))
    arr._logical = None if strides is None else tuple(int(s) for s in strides)
    return arr


def _row_major(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _is_row_major(shape, strides):
    step = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def _dense(shape, strides):
    """Whether ``strides`` lay ``shape`` out without gaps or overlaps (some order of dims)."""
    step = 1
    for n, s in sorted(((n, abs(s)) for n, s in zip(shape, strides) if n != 1), key=lambda p: p[1]):
        if s != step:
            return False
        step *= n
    return True


def _plain(x):
    """A meta array as the plain zero-strided NumPy array it views."""
    return np.ndarray.view(x, np.ndarray) if isinstance(x, MetaArray) else x


def _sample(x):
    """A one-element stand-in (same dtype) for an array operand, to find a ufunc's dtype."""
    return np.zeros((), x.dtype) if isinstance(x, np.ndarray) else x


def _map(fn, obj):
    if isinstance(obj, (tuple, list)):
        return type(obj)(_map(fn, o) for o in obj)
    if isinstance(obj, dict):
        return {k: _map(fn, v) for k, v in obj.items()}
    return fn(obj)


def _meta_like(result):
    """A NumPy result as a meta array of its shape and dtype (numbers pass through)."""
    if isinstance(result, np.generic):
        return empty((), result.dtype)
    if isinstance(result, MetaArray) or not isinstance(result, np.ndarray):
        return result
    strides = [s // result.itemsize for s in result.strides]
    return empty(result.shape, result.dtype,
                 tuple(strides) if all(s > 0 for s in strides) and _dense(result.shape, strides) else None)


def _probe(x):
    """A plain array with ``x``'s shape and logical strides over ``x``'s one element: only for
    computing views (it must never be read)."""
    if not isinstance(x, MetaArray):
        return x
    return np.lib.stride_tricks.as_strided(np.ndarray.view(x, np.ndarray), x.shape, x.strides)


def _from_probe(view):
    return empty(view.shape, view.dtype, tuple(s // view.itemsize for s in view.strides))


def _view(x, method, *args):
    return _from_probe(method(_probe(x), *args))


def _is_basic(key):
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice)) and not isinstance(k, bool)
               for k in keys)


def _plain_key(key):
    keys = key if isinstance(key, tuple) else (key,)
    for k in keys:
        if isinstance(k, MetaArray) and k.dtype == np.bool_:
            raise NotImplementedError("indexing with a boolean mask depends on the mask's values, "
                                      "which a meta tensor does not have")
    return _map(_plain, key) if isinstance(key, tuple) else _plain(key)


def _matmul_shape(a, b):
    sa, sb = np.shape(a), np.shape(b)
    if not sa or not sb:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + sa if len(sa) == 1 else sa
    b2 = sb + (1,) if len(sb) == 1 else sb
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b2[-2]} is different from {a2[-1]})")
    shape = np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(sb) == 1:
        shape = shape[:-1]
    return shape


def _copyto(dst, src, casting="same_kind", where=True):
    np.broadcast_shapes(np.shape(src), dst.shape)


_DATA_DEPENDENT = {np.nonzero, np.flatnonzero, np.argwhere, np.unique, np.extract,
                   np.unique_values, np.unique_counts, np.unique_inverse, np.unique_all}
_VIEWS = {np.transpose, np.swapaxes, np.moveaxis, np.squeeze, np.expand_dims, np.broadcast_to,
          np.diagonal, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.broadcast_arrays,
          np.lib.stride_tricks.sliding_window_view}
_FUNCTIONS = {np.copyto: _copyto}


# -- the namespace ops compute with ----------------------------------------------------------

class _StrideTricks:
    @staticmethod
    def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
        shape = x.shape if shape is None else shape
        strides = x.strides if strides is None else strides
        return empty(shape, x.dtype, tuple(s // x.itemsize for s in strides))

    def __getattr__(self, name):
        return getattr(np.lib.stride_tricks, name)


class _Lib:
    stride_tricks = _StrideTricks()

    def __getattr__(self, name):
        return getattr(np.lib, name)


def _made_meta(function):
    def call(*args, **kwargs):
        kwargs.pop("like", None)
        with np.errstate(all="ignore"):
            return _meta_like(function(*_map(_plain, args), **_map(_plain, kwargs)))
    call.__name__ = function.__name__
    return call


class _Namespace:
    """NumPy's namespace, with factories that make meta arrays (the CPU backend's ``xp`` is
    NumPy itself; this is the meta backend's)."""
    lib = _Lib()

    @staticmethod
    def empty(shape, dtype=float, order="C", **kwargs):
        return empty(shape, dtype if dtype is not None else float, None if order == "C" else
                     _row_major(tuple(reversed(_shape_tuple(shape))))[::-1])

    zeros = ones = empty

    @staticmethod
    def full(shape, fill_value, dtype=None, order="C", **kwargs):
        return empty(shape, np.asarray(fill_value).dtype if dtype is None else dtype)

    @staticmethod
    def empty_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        return empty(np.shape(a) if shape is None else shape, a.dtype if dtype is None else dtype)

    zeros_like = ones_like = empty_like

    @staticmethod
    def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
        return empty(np.shape(a) if shape is None else shape, a.dtype if dtype is None else dtype)

    @staticmethod
    def asarray(obj, dtype=None, order=None, **kwargs):
        if isinstance(obj, MetaArray):
            return obj if dtype is None else obj.astype(dtype, copy=False)
        return _meta_like(np.asarray(obj, dtype=dtype))

    @staticmethod
    def array(obj, dtype=None, copy=True, order="K", **kwargs):
        if isinstance(obj, MetaArray):
            return obj.astype(obj.dtype if dtype is None else dtype, order=order)
        return _meta_like(np.array(obj, dtype=dtype))

    ascontiguousarray = staticmethod(lambda a, dtype=None, **kwargs: empty(
        np.shape(a), np.asarray(a).dtype if dtype is None else dtype))

    copyto = staticmethod(_copyto)

    def __getattr__(self, name):
        attr = getattr(np, name)
        if name in _MADE:
            return _made_meta(attr)
        return attr


def _shape_tuple(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)


_MADE = {"arange", "linspace", "logspace", "geomspace", "eye", "identity", "tri", "indices",
         "frombuffer", "fromiter", "meshgrid"}

xp = _Namespace()


# -- the backend's interface -----------------------------------------------------------------

def asarray(obj, dtype=None):
    return xp.asarray(obj, dtype=dtype)


def from_array(array, index=None, non_blocking=False):
    """A meta array with the shape, dtype and (dense) strides of ``array``, of any backend."""
    if isinstance(array, MetaArray):
        return array
    return _meta_like(array) if all(array.strides) else empty(array.shape, array.dtype)


def to_host(array, non_blocking=False):
    raise NotImplementedError("Cannot copy out of meta tensor; no data!")


def data_ptr(array):
    return 0


def base_allocation(array):
    return array


def device_of(array):
    return META


from .._device import device as _device  # noqa: E402

META = _device("meta")
