"""Tensor: a backend array plus autograd metadata.

The hot fields are slots; rarely used state (``grad``, hooks, a view's ``_base``) lives in the
instance ``__dict__`` with class-level defaults, so making a tensor costs four assignments.
Operators and most methods are attached by the op modules (``ember.ops``), each next to its
forward and backward.
"""
import numbers
import weakref
from collections import OrderedDict

import numpy as np

from . import _dtype
from ._backend import backend_of, namespace_of
from ._backend.meta import MetaArray as _MetaArray
from ._hooks import add_hook
from ._layout import sparse_coo as _sparse_coo, sparse_csr as _sparse_csr, strided as _strided
from ._backend.sparse_coo import SparseCOOArray as _SparseCOOArray
from ._backend.sparse_csr import SparseCSRArray as _SparseCSRArray
from ._dtype import from_numpy_dtype
from ._torch_function import DisableTorchFunctionSubclass, default_torch_function, on_subclass
from .autograd.grad_mode import state as _grad_state
from .autograd.graph import bump_version, grad_accumulator_of, set_history
from . import autograd as _autograd

__all__ = ["Tensor", "Size"]

_ndarray = np.ndarray
_SPARSE_LAYOUTS = {_SparseCOOArray: _sparse_coo, _SparseCSRArray: _sparse_csr}
_np_generic = np.generic


class Size(tuple):
    """The shape of a tensor: a tuple of ints."""

    def __repr__(self):
        return f"ember.Size([{', '.join(map(str, self))}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        if item.__class__ is int:
            return tuple.__getitem__(self, item)
        out = tuple.__getitem__(self, item)
        return Size(out) if item.__class__ is slice else out

    def __add__(self, other):
        return Size(tuple.__add__(self, other))


def _make(data, requires_grad=False):
    """Wrap a backend array (no copy). NumPy's 0-d results come as scalars: make them arrays."""
    if data.__class__ is not _ndarray and isinstance(data, _np_generic):
        data = np.asarray(data)
    t = _new(Tensor)
    t._data = data
    t._requires_grad = requires_grad
    t.grad_fn = None
    t._version_counter = [0]
    return t


def _make_view(data, base):
    """Wrap ``data``, an array looking into ``base``'s memory: shares its version counter."""
    if data.__class__ is not _ndarray and isinstance(data, _np_generic):
        data = np.asarray(data)
    t = _new(Tensor)
    t._data = data
    t._requires_grad = False
    t.grad_fn = None
    t._version_counter = counter = base._version_counter
    root = base._base
    t._base = base if root is None else root
    t._view_version = counter[0]
    return t


class Tensor:
    """A multi-dimensional array with autograd: ``ember.Tensor`` as in torch."""

    __slots__ = ("_data", "_requires_grad", "grad_fn", "_version_counter", "__dict__", "__weakref__")

    # class-level defaults for state kept in __dict__
    _grad = None
    _base = None
    _view_version = None   # for a view: the version when it got its history
    _output_nr = 0
    _fw_grad = None        # the tangent at the current dual level (autograd/_dual.py)
    _grad_acc_ref = None
    _leaf_hooks = None
    _post_accumulate_hooks = None
    _retains_grad = False
    _is_param = False
    __array_priority__ = 1000  # NumPy defers to our reflected operators

    def __new__(cls, *args, **kwargs):
        return _legacy_new(cls, *args, **kwargs)

    # -- the __torch_function__ protocol ----------------------------------------------------
    __torch_function__ = classmethod(default_torch_function)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        on_subclass(cls)

    def as_subclass(self, cls):
        """Makes a ``cls`` instance with the same data as ``self``: changes in the output
        mirror changes in ``self``, and the output stays attached to the autograd graph.
        ``cls`` must be a subclass of ``Tensor``."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not {cls!r}")
        with DisableTorchFunctionSubclass():
            view = Tensor.__getitem__(self, Ellipsis)
        out = _new(cls)
        out._data = view._data
        out._requires_grad = view._requires_grad
        out.grad_fn = view.grad_fn
        out._version_counter = view._version_counter
        out.__dict__.update(view.__dict__)
        return out

    # -- basic properties -----------------------------------------------------------------
    @property
    def dtype(self):
        return from_numpy_dtype(self._data.dtype)

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        """The size of the tensor, or of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        if not self._data.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    @property
    def device(self):
        return backend_of(self._data).device_of(self._data)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def is_floating_point(self):
        return self._data.dtype.kind == "f" or self._data.dtype == _dtype.bfloat16.np

    def is_complex(self):
        return self._data.dtype.kind == "c"

    def is_signed(self):
        return self.dtype.is_signed

    @property
    def layout(self):
        return _SPARSE_LAYOUTS.get(self._data.__class__, _strided)

    @property
    def is_sparse(self):
        return self._data.__class__ is _SparseCOOArray

    @property
    def is_sparse_csr(self):
        return self._data.__class__ is _SparseCSRArray

    @property
    def is_quantized(self):
        return False

    @property
    def is_meta(self):
        """True for a tensor on the meta device (a shape, dtype and strides without data)."""
        return self._data.__class__ is _MetaArray

    def is_inference(self):
        return False

    @property
    def _version(self):
        return self._version_counter[0]

    # -- autograd metadata ----------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if not isinstance(value, bool):
            raise RuntimeError("requires_grad must be a bool")
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return
        if value and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = value

    def requires_grad_(self, requires_grad=True):
        """Change if autograd should record operations on this tensor; returns self."""
        if requires_grad and self._data.dtype.kind in "biu":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self):
        """The gradient accumulated by ``backward()`` (None until then)."""
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' "
                                   f"to a tensor of size '{list(self._data.shape)}'. Please ensure that "
                                   "the gradient and the tensor are the same size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(_grad_dtype_message(value.dtype, self.dtype))
            if value.device != self.device:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    def is_view(self):
        return self._base is not None

    def _grad_accumulator(self):
        return grad_accumulator_of(self)

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Enable ``.grad`` for this non-leaf tensor during backward()."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        ref = weakref.ref(self)

        def retain(grad):
            t = ref()
            if t is None:
                return
            if t._grad is None:
                t._grad = grad.detach().clone() if not _grad_state.grad_enabled else grad.clone()
            else:
                t._grad = t._grad + grad
        self.grad_fn._register_retain_grad_hook(self._output_nr, retain)
        self._retains_grad = True

    def register_hook(self, hook):
        """Registers a backward hook ``hook(grad) -> Tensor or None``, called with the gradient
        of this tensor each time it is computed; returns a handle with ``remove()``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._leaf_hooks is None:
            self._leaf_hooks = OrderedDict()
        return add_hook(self._leaf_hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Registers ``hook(tensor)``, called after a gradient was accumulated into this leaf's
        ``.grad``; returns a handle with ``remove()``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = OrderedDict()
        return add_hook(self._post_accumulate_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of this tensor with respect to the graph leaves."""
        _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A new tensor sharing this one's data (and version counter), detached from the graph."""
        return self._alias()

    def detach_(self):
        """Detaches this tensor from the graph that created it, making it a leaf."""
        if self._base is not None and self.grad_fn is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                "function in ember/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        """This tensor's data as a tensor that does not require grad (shares memory)."""
        return self.detach()

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._data = value._data

    def _alias(self):
        """Same data and version counter, no history: how a node keeps its own output."""
        t = _new(Tensor)
        t._data = self._data
        t._requires_grad = False
        t.grad_fn = None
        t._version_counter = self._version_counter
        return t

    def _alias_with_history(self, node, output_nr):
        t = self._alias()
        set_history(t, node, output_nr)
        if self._fw_grad is not None:   # a node's saved output keeps its tangent (forward AD)
            from .autograd._dual import set_tangent
            set_tangent(t, self._fw_grad)
        return t

    def _iadd_grad(self, grad):
        """In-place gradient accumulation (no graph)."""
        data = grad._data
        if data.shape != self._data.shape or data.dtype != self._data.dtype:
            data = namespace_of(self._data).broadcast_to(data, self._data.shape).astype(self._data.dtype)
        self._data += data
        bump_version(self)

    # -- Python protocol --------------------------------------------------------------------
    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def _scalar(self, what):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if self._data.__class__ is _MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._data.reshape(()).item()

    def item(self):
        """The value of this one-element tensor as a Python number."""
        value = self._scalar("item")
        if self._data.dtype == _dtype.bfloat16.np:
            value = float(value)
        return value

    def __bool__(self):
        size = self._data.size
        if size != 1:
            what = "no values" if size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        if self._data.__class__ is _MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return bool(self._data.reshape(()))

    def _python_scalar(self, cpp_type):
        """The single element for float()/int(): complex ones only without an imaginary part."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self.item()
        if isinstance(value, complex):
            if value.imag != 0:
                raise RuntimeError(f"value cannot be converted to type {cpp_type} without overflow")
            value = value.real
        return value

    def __float__(self):
        if self._requires_grad:
            import warnings
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=2)
        return float(self._python_scalar("double"))

    def __int__(self):
        return int(self._python_scalar("int64_t"))

    def __complex__(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1 or self._data.ndim != 0:
            if self._data.dtype.kind in "iu" and self._data.size == 1:
                return int(self.item())
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def tolist(self):
        """The tensor as a (nested) list of Python numbers."""
        data = backend_of(self._data).to_host(self._data)
        if data.dtype == _dtype.bfloat16.np or data.dtype == np.float16:
            data = data.astype(np.float32)
        return data.tolist()

    def numpy(self, *, force=False):
        """The tensor as a NumPy array, sharing memory on the CPU."""
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if force:
            return backend_of(self._data).to_host(self._data)
        if self._data.__class__ in _SPARSE_LAYOUTS:
            raise TypeError(f"can't convert {'Sparse' if self.is_sparse else 'SparseCsr'} layout tensor to "
                            "numpy. Use Tensor.to_dense() first.")
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        data = self.numpy()
        return data if dtype is None else data.astype(dtype, copy=False)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy ufunc's result on this tensor, as a tensor (bool results as uint8, as
        torch's)."""
        if array.dtype == bool:
            array = array.astype("uint8")
        return _make(array)

    def __contains__(self, element):
        """Whether ``element`` (a tensor or a number) is present in the tensor."""
        import numbers
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((element == self).any().item())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")

    def __reversed__(self):
        """Reverses the tensor along dimension 0."""
        return self if self._data.ndim == 0 else self.flip(0)

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        if self._leaf_hooks or self.grad_fn is not None:
            from .utils.hooks import warn_if_has_hooks
            warn_if_has_hooks(self)
        data = backend_of(self._data).to_host(self._data)
        if data.__class__ not in _SPARSE_LAYOUTS:   # (a sparse array pickles itself)
            data = np.array(data)
        return (_rebuild_tensor, (data, str(self.device), self._requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        out = _make(self._data.copy(), self._requires_grad)
        if type(self) is not Tensor:
            out = type(self).__new__(type(self), out, self._requires_grad) if self._is_param else out
        memo[id(self)] = out
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        return out


_new = object.__new__

# C++ element type names (the first dtype in torch's message) and ScalarType names (the second)
_CPP_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>", "uint8": "unsigned char", "int8": "signed char",
             "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool"}
_SCALAR_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint8": "Byte",
                "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}


def _grad_dtype_message(grad_dtype, dtype):
    return (f"attempting to assign a gradient with dtype '{_CPP_TYPE[grad_dtype.name]}' to a tensor "
            f"with grad_dtype '{_SCALAR_TYPE[dtype.name]}'. The gradient must match the tensor's "
            "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
            "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
            "caution. Diverging the dtypes of a tensor and its gradient may break downstream "
            "systems that assume they match.")


def _rebuild_tensor(data, device, requires_grad):
    t = _make(data, requires_grad)
    return t.to(device) if device != "cpu" else t


def _wrap_dim(dim, ndim):
    """A dimension index in [0, ndim), with torch's IndexError for one out of range."""
    if dim.__class__ is int and -ndim <= dim < ndim:   # (the common case, at once)
        return dim + ndim if dim < 0 else dim
    if dim.__class__ is not int:
        dim = _as_dim_index(dim)
    lo = -ndim if ndim else -1
    hi = ndim - 1 if ndim else 0
    if dim < lo or dim > hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def _as_dim_index(dim):
    if isinstance(dim, numbers.Integral) and not isinstance(dim, bool):
        return int(dim)
    if isinstance(dim, Tensor) and dim.ndim == 0 and dim._data.dtype.kind in "iu":
        return int(dim.item())
    raise TypeError(f"dim must be an int, not {type(dim).__name__}")


def _legacy_new(cls, *args, **kwargs):
    """``ember.Tensor(data)`` copies data as float32 (the default dtype); ``ember.Tensor(2, 3)``
    allocates an uninitialised float tensor of that size; ``ember.Tensor()`` is empty."""
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}")
    dtype = _dtype.get_default_dtype()
    if not args:
        return _make(np.empty((0,), dtype=dtype.np))
    if len(args) == 1 and not isinstance(args[0], (numbers.Integral, Size)):
        from .ops.creation import tensor as _tensor_fn
        src = args[0]
        if isinstance(src, Tensor):
            return src
        if isinstance(src, numbers.Number):
            raise TypeError(f"new(): data must be a sequence (got {type(src).__name__})")
        return _tensor_fn(src, dtype=dtype, device=device)
    from .ops.creation import empty as _empty
    return _empty(*args, dtype=dtype, device=device)


# Tensors still held in a oneDNN layout (a subclass of Tensor, so defined after it); the
# autograd engine, imported before this module is complete, finds them here.
from ._blocked_tensor import (BlockedTensor, blocked_array, elementwise_operands,  # noqa: E402, F401
                              wrap_like)
