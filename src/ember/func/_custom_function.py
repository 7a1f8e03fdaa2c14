"""``autograd.Function`` under vmap: its ``vmap`` staticmethod, or with
``generate_vmap_rule=True`` its forward run on the mapped inputs (its ops have rules).

When gradients are wanted (``vmap(grad(f))``, or a backward after ``vmap``), the Function's
forward runs once on the batch and one node, ``MappedFunctionBackward``, joins the plain tensors
behind the inputs to those behind the outputs (one leading dimension per running vmap level).
Its backward calls the Function's ``backward`` with the gradients mapped over the same levels
(entered again if the vmap has returned), so the user's backward runs once, batched, through
the batching rules, as torch's does.
"""
from ..autograd.function import FunctionCtx, Function, _uses_setup_context
from ..autograd.grad_mode import no_grad
from ..autograd.graph import Node
from ..ops._common import record
from ._batched import (BatchedTensor, active_levels, broadcast_to_level, current_level,
                       from_front, to_front)
from ._rules_common import is_batched

__all__ = ["apply_batched", "VmapInfo", "MappedFunctionBackward"]


class VmapInfo:
    """What a Function's ``vmap`` staticmethod learns about the call: the batch size and the
    randomness mode."""

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness


def _physical_requires_grad(args):
    from ._batched import physical
    from ..autograd.grad_mode import is_grad_enabled
    return is_grad_enabled() and any(
        getattr(physical(a), "requires_grad", False) for a in args if hasattr(a, "shape"))


def apply_batched(cls, level, args, kwargs):
    if not _uses_setup_context(cls):
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html")
    if not cls.generate_vmap_rule and cls.vmap is Function.vmap:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            f"override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            f"more details, please see https://pytorch.org/docs/main/notes/extending.func.html")
    if kwargs:
        from ..autograd.function import _bind
        args = _bind(cls, args, kwargs)
    if _physical_requires_grad(args):
        return _apply_with_node(cls, level, args)
    with no_grad():
        return _forward(cls, level, args)


def _forward(cls, level, args):
    """The Function's outputs on the mapped ``args`` (grad mode off)."""
    if cls.generate_vmap_rule:
        return cls.forward(*args)
    info = VmapInfo(current_level(level).batch_size, current_level(level).randomness)
    in_dims = tuple(a.bdim if is_batched(a, level) else None for a in args)
    values = tuple(a.value if is_batched(a, level) else a for a in args)
    outputs, out_dims = cls.vmap(info, in_dims, *values)
    if isinstance(outputs, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outputs)
        return tuple(o if d is None else BatchedTensor(o, d % o.ndim, level)
                     for o, d in zip(outputs, dims))
    return outputs if out_dims is None else BatchedTensor(outputs, out_dims % outputs.ndim, level)


def _on_levels(x, levels):
    """``x`` mapped at every level of ``levels`` (expanded where it is not)."""
    for entry in levels:
        x = broadcast_to_level(x, entry.level, entry.batch_size)
    return x


def _is_tensor(x):
    return hasattr(x, "shape") and hasattr(x, "_version_counter")


class MappedFunctionBackward(FunctionCtx, Node):
    """The node of an autograd.Function applied under vmap, between the plain tensors behind
    its inputs and outputs; it is also the ``ctx`` that ``setup_context`` and ``backward`` see
    (saving tensors of the mapped levels)."""

    __slots__ = ()
    _has_hooks = True   # the Function's backward is user code
    to_save = ()
    non_differentiable = ()
    materialize_grads = True
    needs_input_grad = ()

    _forward_cls = None

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward`` (of the mapped levels)."""
        return tuple(self.to_save)

    def backward(self, *grads):
        levels, cls = self.levels, self.function_cls
        grads = list(grads) + [None] * (len(self.output_shapes) - len(grads))
        with _entered(levels):
            mapped = []
            for g, shape in zip(grads, self.output_shapes):
                if g is None and self.materialize_grads and shape is not None:
                    from ..ops.creation import zeros
                    g = zeros(shape, dtype=self.output_dtypes[len(mapped)])
                mapped.append(None if g is None else from_front(g, levels))
            user_backward = cls.vjp if cls.vjp is not Function.vjp else cls.backward
            result = user_backward(self, *mapped)
            if not isinstance(result, tuple):
                result = (result,)
            physical = []
            for index, (g, arg) in enumerate(zip(result, self.arguments)):
                if not _is_tensor(arg):
                    if g is not None:
                        raise RuntimeError(
                            f"function {self.name()} returned a gradient different than None at "
                            f"position {index + 1}, but the corresponding forward input was not a "
                            "Variable")
                    continue
                if g is None:
                    physical.append(None)
                    continue
                physical.append(self._fit(to_front(_on_levels(g, levels), levels),
                                          tuple(g.shape), tuple(arg.shape), index))
        return tuple(physical)

    def _fit(self, grad, shape, input_shape, index):
        """A physical gradient (``shape`` after the levels' dimensions) summed to its input's
        shape where the Function gave it broadcast; an error where it cannot be."""
        if shape == input_shape:
            return grad
        from ..autograd.function import _expandable
        from ..ops._common import sum_to
        if not _expandable(input_shape, shape):
            raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index "
                               f"{index} - got {list(shape)} but expected shape compatible with "
                               f"{list(input_shape)}")
        lead = tuple(grad.shape[:len(self.levels)])
        padded = (1,) * (len(shape) - len(input_shape)) + input_shape
        return sum_to(grad, lead + padded).reshape(lead + input_shape)

    def release(self):
        self.to_save = ()
        super().release()


class _entered:
    """The vmap levels of ``levels`` running (again, after their vmap returned) with the
    batching rules in place: a Function's backward maps over the levels its forward did."""

    def __init__(self, levels):
        self.levels = levels

    def __enter__(self):
        from ._dispatch import patched
        self.added = [e for e in self.levels if e not in active_levels]
        self.patch = patched(None)
        self.patch.__enter__()
        for entry in self.added:
            active_levels.append(entry)
        active_levels.sort(key=lambda e: e.level)

    def __exit__(self, *exc):
        for entry in self.added:
            active_levels.remove(entry)
        self.patch.__exit__(*exc)


def _node_class(cls):
    """``Vmapped<Function>Backward``, torch's name for the node, made once per Function."""
    made = cls.__dict__.get("_vmapped_backward_cls")
    if made is None:
        made = type(f"Vmapped{cls.__name__}Backward", (MappedFunctionBackward,),
                    {"__slots__": (), "_forward_cls": cls})
        cls._vmapped_backward_cls = made
    return made


class _Context(FunctionCtx):
    """What ``setup_context`` fills before the node exists (its attributes then move to it)."""
    to_save = ()
    non_differentiable = ()


def _apply_with_node(cls, level, args):
    levels = list(active_levels)
    physical_args = [to_front(_on_levels(a, levels), levels) if _is_tensor(a) else None for a in args]
    ctx = _Context()
    ctx.needs_input_grad = tuple(p is not None and p.requires_grad for p in physical_args)
    with no_grad():
        output = _forward(cls, level, args)
        cls.setup_context(ctx, args, output)
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    non_diff = {id(t) for t in ctx.non_differentiable}
    physical_outs = [to_front(_on_levels(out, levels), levels)._alias()
                     if _is_tensor(out) and id(out) not in non_diff else None for out in outputs]
    node = record(_node_class(cls), [p for p in physical_args if p is not None], *physical_outs)
    if node is not None:
        node.__dict__.update(vars(ctx))
        node.function_cls, node.levels, node.arguments = cls, levels, args
        node.output_shapes = [None if p is None else tuple(p.shape) for p in physical_outs]
        node.output_dtypes = [None if p is None else p.dtype for p in physical_outs]
    wrapped = [out if p is None else from_front(p, levels) for out, p in zip(outputs, physical_outs)]
    return wrapped[0] if single else tuple(wrapped)
