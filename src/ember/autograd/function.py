"""``ember.autograd.Function``: user-defined operations with their own backward.

A subclass states ``forward`` and ``backward`` as static methods; ``MyFn.apply(*args)`` runs the
forward with grad mode off and, when an input requires grad, records a node of the class
``MyFnBackward`` (made once per Function subclass). That node is also the ``ctx`` the forward
and backward receive, as in torch: what forward stores on it (``ctx.save_for_backward``, plain
attributes) is there in backward.
"""
import functools
import inspect

from ._dual import forward, no_forward, set_tangent, tangent_of
from .grad_mode import no_grad, state
from .graph import Node, bump_version, set_history

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable"]


def _is_tensor(x):
    # (looked up on the type: a tensor under vmap refuses to give its array)
    return hasattr(type(x), "_data") and hasattr(x, "_version_counter")


class FunctionCtx:
    """What ``forward`` (or ``setup_context``) may tell the node through ``ctx``."""

    __slots__ = ()

    def save_for_backward(self, *tensors):
        """Save tensors for a future call to ``backward``; read them back with
        ``ctx.saved_tensors``, which checks that none was modified in place since."""
        for index, t in enumerate(tensors):
            if t is not None and not _is_tensor(t):
                raise TypeError(f"save_for_backward can only save variables, but argument {index} is "
                                f"of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors for a future call to ``jvp``; within ``jvp`` they are
        ``ctx.saved_tensors``."""
        for index, t in enumerate(tensors):
            if t is not None and not _is_tensor(t):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; but got "
                                f"{type(t).__name__} at position {index}")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark the given input tensors as modified in place by ``forward``; they must be
        returned as outputs."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs as non-differentiable: they will not require grad, and their gradient
        in backward is always zeros (or None without materialized grads)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """Whether backward gets zeros (True, the default) or None for outputs that got no
        gradient."""
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx, Node):
    """The node a Function records; ``MyFnBackward`` subclasses it for each Function."""

    __slots__ = ()
    _has_hooks = True  # the Function's backward is user code
    _forward_cls = None
    to_save = ()
    dirty_tensors = ()
    non_differentiable = ()
    materialize_grads = True
    needs_input_grad = ()

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward`` (checked for in-place changes); within
        ``jvp``, those given to ``save_for_forward``."""
        if self.__dict__.get("_in_jvp"):
            return tuple(self.__dict__.get("saved_for_forward", ()))
        return tuple(Node.saved_tensors.__get__(self))

    def backward(self, *grads):
        """Calls the Function's ``backward`` with one gradient per output; returns one per
        tensor input, checked against the input's shape and dtype."""
        outputs = self._outputs
        grads = list(grads) + [None] * (len(outputs) - len(grads))
        if self.materialize_grads:
            grads = [_zeros(meta) if g is None and meta is not None else g
                     for g, meta in zip(grads, outputs)]
        fwd = self._forward_cls
        user_backward = fwd.vjp if fwd.vjp is not Function.vjp else fwd.backward
        result = user_backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        return self._checked_input_grads(result)

    def _checked_input_grads(self, result):
        inputs = self._inputs
        if len(result) != len(inputs):
            extra = result[len(inputs):]
            if len(result) < len(inputs) or any(g is not None for g in extra):
                raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                                   f"(expected {len(inputs)}, got {len(result)})")
            result = result[:len(inputs)]
        grads = []
        for index, (grad, meta) in enumerate(zip(result, inputs)):
            if meta is None:
                if grad is not None:
                    raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                       f"None at position {index + 1}, but the corresponding forward "
                                       "input was not a Variable")
                continue
            grads.append(None if grad is None else self._fit(grad, meta, len(grads)))
        return tuple(grads)

    def _fit(self, grad, meta, index):
        """A gradient the shape and dtype of its input: summed over broadcast dims if it has
        more, an error if it cannot have come from the input."""
        shape, dtype = meta
        if grad._data.shape != shape:
            if not _expandable(shape, grad._data.shape):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index "
                                   f"{index} - got {list(grad._data.shape)} but expected shape "
                                   f"compatible with {list(shape)}")
            from ..ops._common import sum_to
            grad = sum_to(grad, shape)
        if grad._data.dtype != dtype:
            from .._dtype import from_numpy_dtype
            grad = grad.to(from_numpy_dtype(dtype))
        return grad


def _expandable(shape, to_shape):
    """Whether a tensor of ``shape`` broadcasts to ``to_shape``."""
    if len(shape) > len(to_shape):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to_shape)))


def _zeros(meta):
    from ..ops.creation import zeros
    from .._dtype import from_numpy_dtype
    shape, dtype = meta
    return zeros(shape, dtype=from_numpy_dtype(dtype))


class FunctionMeta(type):
    """Gives each Function subclass its node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"__slots__": (), "_forward_cls": cls,
                                  "__module__": BackwardCFunction.__module__})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class to create custom autograd operations.

    Subclass it and implement ``forward`` and ``backward`` as static methods, then call
    ``MyFn.apply(*args)``. ``forward(ctx, *args)`` computes the outputs (with grad mode off);
    alternatively ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``.
    ``backward(ctx, *grad_outputs)`` returns one gradient (or None) per forward argument.
    """

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        """Performs the operation; with ``setup_context`` it takes the inputs only."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Stores what backward needs; ``inputs`` is the tuple of ``apply``'s arguments."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Gradient formula: one gradient (or None) per input of forward."""
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    # with True, vmap runs ``forward`` itself on the mapped inputs (its ops have batching rules)
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """The batching rule of the Function: receives ``info`` (``batch_size``,
        ``randomness``), the mapped dimension of each input (None for unmapped ones) and the
        whole-batch inputs; returns ``(outputs, out_dims)``."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function "
                                  "to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs the Function on ``args`` and records its node when an input requires grad."""
        if _batched_apply is not None:
            output = _batched_apply(cls, args, kwargs)
            if output is not None:
                return output
        if kwargs:
            args = _bind(cls, args, kwargs)
        tensors = [a for a in args if _is_tensor(a)]
        records = state.grad_enabled and any(t._requires_grad for t in tensors)
        ctx = cls._backward_cls(tensors)
        ctx.needs_input_grad = tuple(records and _is_tensor(a) and a._requires_grad for a in args)
        tangents = _input_tangents(args) if forward.active else None
        with no_grad(), no_forward():   # the forward's own ops carry no tangents (jvp gives them)
            if _uses_setup_context(cls):
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        if records:
            ctx._inputs = [(a._data.shape, a._data.dtype) if _is_tensor(a) else None for a in args]
            output = _attach_outputs(ctx, output, tensors)
        if tangents is not None:
            _set_output_tangents(cls, ctx, output, tangents)
        return output


def _input_tangents(args):
    """One tangent per argument for ``jvp`` (zeros for a tensor without one, None for what is no
    tensor), or None when no argument has a tangent."""
    tangents = [tangent_of(a) if _is_tensor(a) else None for a in args]
    if all(t is None for t in tangents):
        return None
    from ..ops.creation import zeros_like
    with no_forward():
        return [zeros_like(a) if t is None and _is_tensor(a) else t for a, t in zip(args, tangents)]


def _set_output_tangents(cls, ctx, output, tangents):
    """Forward mode through a Function: its ``jvp`` gives one tangent per output."""
    ctx._in_jvp = True
    try:
        with no_forward():
            result = cls.jvp(ctx, *tangents)
    finally:
        del ctx._in_jvp
    outputs = output if isinstance(output, tuple) else (output,)
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outputs):
        raise RuntimeError(f"{cls.__name__}.jvp returned an incorrect number of tangents "
                           f"(expected {len(outputs)}, got {len(result)})")
    for out, tangent in zip(outputs, result):
        if tangent is None or not _is_tensor(out):
            continue
        if tangent._data.shape != out._data.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(out._data.shape)} "
                f"while the given forward gradient is of size {list(tangent._data.shape)}.")
        set_tangent(out, tangent)


# set by ember.func while vmap runs: runs a Function on mapped inputs (None otherwise)
_batched_apply = None


def _uses_setup_context(cls):
    return cls.setup_context is not Function.setup_context


def _bind(cls, args, kwargs):
    """Keyword arguments of ``apply`` as positional ones, by the signature of ``forward``."""
    takes_ctx = not _uses_setup_context(cls)
    bound = inspect.signature(cls.forward).bind(*((None,) if takes_ctx else ()), *args, **kwargs)
    bound.apply_defaults()
    values = tuple(bound.arguments.values())
    return values[1:] if takes_ctx else values


def _attach_outputs(ctx, output, inputs):
    """Make the tensor outputs outputs of ``ctx`` (the node), then save what it asked for."""
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    dirty = {id(t) for t in ctx.dirty_tensors}
    non_diff = {id(t) for t in ctx.non_differentiable}
    input_ids = {id(t) for t in inputs}
    wrapped, metas = [], []
    for output_nr, out in enumerate(outputs):
        if not _is_tensor(out):
            wrapped.append(out)
            metas.append(None)
            continue
        if id(out) in dirty:
            _mark_modified(out)
            set_history(out, ctx, output_nr)
            out._output_nr = output_nr
        elif id(out) in non_diff:
            pass
        else:
            if id(out) in input_ids:
                out = _view_of(out)
            set_history(out, ctx, output_nr)
        wrapped.append(out)
        metas.append((out._data.shape, out._data.dtype))
    ctx._outputs = metas
    if ctx.to_save:
        ctx.save(*ctx.to_save)
        del ctx.to_save
    return wrapped[0] if single else tuple(wrapped)


def _mark_modified(tensor):
    if tensor.grad_fn is None and tensor._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    bump_version(tensor)


def _view_of(tensor):
    """An input returned as it is becomes a view of it (torch's ``view_as``)."""
    from .._tensor import _make_view
    return _make_view(tensor._data, tensor)


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (kept for compatibility)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class Error(Node):
    """Stands for the backward of a ``once_differentiable`` backward: differentiating it raises
    (torch's DelayedError node, named ``Error``)."""

    __slots__ = ()

    def backward(self, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")

    def name(self):
        return "ember::autograd::Error"


def once_differentiable(fn):
    """Decorator for a Function's ``backward`` that does not support double backward: it runs
    with grad mode off, and differentiating its results raises an error."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not state.grad_enabled:
            return outputs
        if not any(_is_tensor(a) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        error_node = Error([None] * len(outputs))
        delayed = []
        for output_nr, out in enumerate(outputs):
            if out is not None:
                out = out._alias()
                set_history(out, error_node, output_nr)
            delayed.append(out)
        return delayed[0] if single else tuple(delayed)
    return wrapper
