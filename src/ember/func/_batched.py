"""BatchedTensor: a tensor with one mapped dimension per ``vmap`` level.

Inside ``vmap`` a function sees, for each input mapped over, a ``BatchedTensor``: it holds the
tensor it stands for (``value``, a plain Tensor or the BatchedTensor of an outer ``vmap``), the
dimension of ``value`` that is mapped (``bdim``) and the ``level`` of the ``vmap`` call that
maps it. Its shape, dtype and device are those of one sample (the logical tensor). Every
operation on it is handed to the dispatch step (``_dispatch.dispatch``), which runs the
operation's batching rule on ``value``.
"""
from .._tensor import Tensor, Size
from .._torch_function import _disabled_torch_function_impl

__all__ = ["BatchedTensor", "to_front", "from_front", "physical", "broadcast_to_level"]


class _VmapLevel:
    """One running ``vmap`` call: its level, batch size and randomness mode."""

    __slots__ = ("level", "batch_size", "randomness")

    def __init__(self, level, batch_size, randomness):
        self.level = level
        self.batch_size = batch_size
        self.randomness = randomness


# the running vmap calls, outermost first
active_levels = []


def current_level(level):
    for entry in active_levels:
        if entry.level == level:
            return entry
    raise RuntimeError(f"vmap: level {level} is not running (a BatchedTensor escaped its vmap)")


def _item_error(*args, **kwargs):
    raise RuntimeError(
        "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
        "calling .item() on a Tensor, please try to rewrite what you're doing with other "
        "operations. If error is occurring somewhere inside ember internals, please file a bug "
        "report.")


def _control_flow_error(*args, **kwargs):
    raise RuntimeError(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
        "flow. We don't support that yet, please file an issue at "
        "https://github.com/pytorch/pytorch/issues .")


class BatchedTensor(Tensor):
    """A tensor mapped over by ``vmap`` at ``level`` along dimension ``bdim`` of ``value``."""

    __slots__ = ("value", "bdim", "level")
    # vmap reaches its rules through its own dispatch; the protocol stays off for this class
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, value, bdim, level):
        self = object.__new__(cls)
        self.value = value
        self.bdim = bdim
        self.level = level
        self._requires_grad = False
        self._version_counter = [0]
        return self

    def __init__(self, value, bdim, level):
        pass

    # -- what one sample looks like ------------------------------------------------------------
    @property
    def _data(self):
        raise RuntimeError(
            "vmap: an ember function read the array of a tensor being vmapped over; it was "
            "reached without passing through vmap's dispatch (for example a function imported "
            "into a module that vmap does not patch). Call it through its public name "
            "(ember.<name>, ember.nn.functional.<name>, or a Tensor method).")

    @property
    def shape(self):
        s = self.value.shape
        return Size(s[:self.bdim] + s[self.bdim + 1:])

    def size(self, dim=None):
        shape = self.shape
        if dim is None:
            return shape
        n = len(shape)
        if not -max(n, 1) <= dim < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(n, 1)}, {max(n, 1) - 1}], but got {dim})")
        return shape[dim % n]

    @property
    def ndim(self):
        return self.value.ndim - 1

    def dim(self):
        return self.value.ndim - 1

    ndimension = dim

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def device(self):
        return self.value.device

    @property
    def is_cuda(self):
        return self.value.is_cuda

    @property
    def requires_grad(self):
        return self.value.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.value.requires_grad = flag

    @property
    def grad_fn(self):
        return None

    @property
    def is_leaf(self):
        return self.value.is_leaf

    @property
    def grad(self):
        return None

    @property
    def data(self):
        return BatchedTensor(self.value.data, self.bdim, self.level)

    def element_size(self):
        return self.value.element_size()

    def is_floating_point(self):
        return self.value.is_floating_point()

    def is_complex(self):
        return self.value.is_complex()

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    @property
    def real(self):
        return _dispatch_method("real", self, (), {})

    @property
    def imag(self):
        return _dispatch_method("imag", self, (), {})

    # -- what vmap cannot map ------------------------------------------------------------------
    item = _item_error
    tolist = _item_error
    __float__ = _item_error
    __int__ = _item_error
    __index__ = _item_error
    __complex__ = _item_error
    numpy = _item_error
    __array__ = _item_error
    __bool__ = _control_flow_error

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return f"BatchedTensor(lvl={self.level}, bdim={self.bdim}, value=\n{self.value!r}\n)"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)

    def __getattribute__(self, name):
        # Tensor's methods (other than the ones above) run through the dispatch step
        if name in _OWN or name.startswith("__"):
            return object.__getattribute__(self, name)
        attr = _TENSOR_FUNCTIONS(name)
        if attr is not None:
            return _BoundMethod(name, self)
        return object.__getattribute__(self, name)


_OWN = frozenset(k for k in vars(BatchedTensor) if not k.startswith("__")) | {"value", "bdim", "level"}


def _TENSOR_FUNCTIONS(name):
    attr = getattr(Tensor, name, None)
    return attr if callable(attr) and not isinstance(attr, type) else None


class _BoundMethod:
    """``batched.<method>``: calls the dispatch step with the method's name."""

    __slots__ = ("name", "self")

    def __init__(self, name, self_):
        self.name = name
        self.self = self_

    def __call__(self, *args, **kwargs):
        return _dispatch_method(self.name, self.self, args, kwargs)


def _dispatch_method(name, self, args, kwargs):
    from ._dispatch import dispatch_method
    return dispatch_method(name, self, args, kwargs)


def _operator(name):
    def op(self, *args, **kwargs):
        return _dispatch_method(name, self, args, kwargs)
    op.__name__ = name
    return op


# Python looks operators up on the type: each one goes to the dispatch step
for _name in ("__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ "
              "__floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ "
              "__rmatmul__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ __lshift__ "
              "__rshift__ __rlshift__ __rrshift__ __neg__ __pos__ __abs__ __invert__ __lt__ "
              "__le__ __gt__ __ge__ __eq__ __ne__ __getitem__ __setitem__ __iadd__ __isub__ "
              "__imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __iand__ __ior__ __ixor__ "
              "__imatmul__ __ilshift__ __irshift__").split():
    setattr(BatchedTensor, _name, _operator(_name))
del _name


# -- levels ------------------------------------------------------------------------------------
def broadcast_to_level(x, level, size):
    """``x`` mapped at ``level`` too: expanded (no copy) along a new dimension of ``size``."""
    if type(x) is BatchedTensor:
        if x.level == level:
            return x
        if x.level > level:
            return BatchedTensor(broadcast_to_level(x.value, level, size), x.bdim, x.level)
    value = x.unsqueeze(0).expand(size, *x.shape)
    return BatchedTensor(value, 0, level)


def to_front(x, levels):
    """The plain tensor behind ``x`` with one leading dimension per level of ``levels``
    (ascending, outermost first) and the logical shape after them; levels at which ``x`` is not
    mapped are expanded."""
    for entry in reversed(levels):
        level = entry.level
        if type(x) is BatchedTensor and x.level > level:
            raise RuntimeError("vmap: a tensor of an inner vmap reached an outer transform")
        if type(x) is BatchedTensor and x.level == level:
            x = x.value.movedim(x.bdim, 0)
        else:
            x = x.unsqueeze(0).expand(entry.batch_size, *x.shape)
    return x


def from_front(phys, levels):
    """The inverse of ``to_front``: wrap ``phys`` at each level of ``levels`` (dimension 0)."""
    x = phys
    for entry in levels:
        x = BatchedTensor(x, 0, entry.level)
    return x


def physical(x):
    while type(x) is BatchedTensor:
        x = x.value
    return x
