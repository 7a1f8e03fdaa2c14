"""Graph nodes: the record an op leaves behind so that backward can run.

Each differentiable op that runs with grad enabled on an input that requires grad creates one
``Node`` subclass instance (named as torch names them, ``MulBackward0``), holding

* ``next_functions``: one edge ``(node, output_nr)`` per input, pointing at the node that
  produced that input (or its ``AccumulateGrad`` for a leaf, or ``None`` when the input does
  not require grad), and
* saved tensors with the version each had when saved, checked again when unpacked.

A Node's ``backward(*grads)`` takes one gradient per output and returns one per input, computed
with ember ops, so running it with grad mode on (``create_graph=True``) records a graph of the
backward pass itself and gives higher-order gradients.
"""
import re
import weakref

from .grad_mode import state

__all__ = ["Node", "AccumulateGrad", "set_history"]

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


_NO_EDGE = (None, 0)


def edge_of(tensor):
    """The edge that leads from a node to where ``tensor``'s gradient must go."""
    if tensor is None or not tensor._requires_grad:
        return (None, 0)
    fn = tensor.grad_fn
    if fn is not None:
        return (fn, tensor._output_nr)
    return (tensor._grad_accumulator(), 0)


class Node:
    """A step of the backward graph (torch's ``torch.autograd.graph.Node``)."""

    __slots__ = ("next_functions", "_saved", "_versions", "__dict__", "__weakref__")

    # Rarely used state lives in the instance __dict__, created on first write.
    _saved_outputs = ()        # ((index in _saved, output_nr), ...)
    _pre_hooks = None          # hooks on the node: fn(grad_outputs) -> grad_outputs | None
    _post_hooks = None         # fn(grad_inputs, grad_outputs) -> grad_inputs | None
    _tensor_pre_hooks = None   # {output_nr: [fn(grad) -> grad | None]} from Tensor.register_hook
    _retain_grad_hooks = None  # {output_nr: fn(grad)} from Tensor.retain_grad
    _has_hooks = False         # True once any of the above is set: one check for the engine

    def __init__(self, inputs):
        edges = []
        for t in inputs:
            if t is not None and t._requires_grad:
                fn = t.grad_fn
                edges.append((fn, t._output_nr) if fn is not None else (grad_accumulator_of(t), 0))
            else:
                edges.append(_NO_EDGE)
        self.next_functions = tuple(edges)
        self._saved = ()

    # -- what subclasses write ------------------------------------------------------------
    def backward(self, grad):
        """Gradients with respect to each input, given the gradient of each output."""
        raise NotImplementedError

    # -- saved tensors --------------------------------------------------------------------
    def save(self, *tensors):
        """Keep tensors for backward, with the version each has now. An output of this node is
        kept as an alias without its history (no reference cycle); with ``create_graph`` it is
        unpacked with this node as its ``grad_fn`` again, as torch's SavedVariable does."""
        versions = []
        for t in tensors:
            if t is None:
                versions.append(None)
            elif t.grad_fn is self:
                return self._save_with_outputs(tensors)
            else:
                versions.append(t._version_counter[0])
        self._saved = tensors
        self._versions = versions

    def _save_with_outputs(self, tensors):
        saved = list(tensors)
        outputs = []
        for index, t in enumerate(saved):
            if t is not None and t.grad_fn is self:
                outputs.append((index, t._output_nr))
                saved[index] = t._alias()
        self._saved_outputs = outputs
        self._saved = saved
        self._versions = [None if t is None else t._version_counter[0] for t in saved]

    @property
    def saved_tensors(self):
        """The saved tensors; raises if they were freed or modified in place since."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        if not saved:
            return saved
        for t, version in zip(saved, self._versions):
            if t is not None and t._version_counter[0] != version:
                self._raise_modified()
        if self._saved_outputs and state.grad_enabled:
            saved = list(saved)
            for index, output_nr in self._saved_outputs:
                saved[index] = saved[index]._alias_with_history(self, output_nr)
        return saved

    def _raise_modified(self):
        for index, (t, version) in enumerate(zip(self._saved, self._versions)):
            if t is not None and t._version_counter[0] != version:
                raise RuntimeError(_modified_message(self, index, version))

    def release(self):
        self._saved = None

    # -- torch's Node API -----------------------------------------------------------------
    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        return self.__dict__.setdefault("_metadata", {})

    def register_hook(self, fn):
        """Register a hook ``fn(grad_inputs, grad_outputs)`` that runs after this node; it may
        return new grad_inputs."""
        hooks = self.__dict__.setdefault("_post_hooks", [])
        hooks.append(fn)
        self._has_hooks = True
        return _RemovableHandle(hooks, fn)

    def register_prehook(self, fn):
        """Register a hook ``fn(grad_outputs)`` that runs before this node; it may return new
        grad_outputs."""
        hooks = self.__dict__.setdefault("_pre_hooks", [])
        hooks.append(fn)
        self._has_hooks = True
        return _RemovableHandle(hooks, fn)

    def _register_retain_grad_hook(self, output_nr, fn):
        self.__dict__.setdefault("_retain_grad_hooks", {})[output_nr] = fn
        self._has_hooks = True

    def _register_tensor_hook(self, output_nr, fn):
        hooks = self.__dict__.setdefault("_tensor_pre_hooks", {}).setdefault(output_nr, [])
        hooks.append(fn)
        self._has_hooks = True
        return _RemovableHandle(hooks, fn)

    def __call__(self, *grads):
        return self.backward(*grads)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """Where a leaf's gradient ends: added into ``variable.grad``."""

    __slots__ = ("variable",)
    _has_hooks = True  # the engine treats it apart from other nodes

    def __init__(self, variable):
        self.next_functions = ()
        self._saved = ()
        self.variable = variable

    def backward(self, grad):
        accumulate_into(self.variable, grad, owned=False)
        return ()

    def release(self):
        pass

    def name(self):
        return "ember::autograd::AccumulateGrad"


def accumulate_into(variable, grad, owned):
    """``variable.grad += grad``: in place unless a graph of the gradient is being built. The
    first gradient is stored without a copy only when it is ``owned`` (no other tensor can see
    its memory) and no graph is being built; else a copy, so ``.grad`` never aliases another
    tensor."""
    if grad._data.dtype != variable._data.dtype:
        grad = grad.to(variable.dtype)
        owned = True
    old = variable._grad
    if old is None:
        if state.grad_enabled:
            variable._grad = _copy_with_history(grad)
        elif owned:
            variable._grad = grad if grad.grad_fn is None and not grad._requires_grad else grad.detach()
        else:
            variable._grad = grad.detach().clone()
    elif state.grad_enabled:
        variable._grad = old + grad
    else:
        old._iadd_grad(grad)


class CopyBackwards(Node):
    """The copy AccumulateGrad makes of a first gradient while building a graph of it."""

    __slots__ = ()

    def backward(self, grad):
        return (grad,)

    def name(self):
        return "ember::autograd::CopyBackwards"


def _copy_with_history(grad):
    from .._tensor import _make
    out = _make(grad._data.copy())
    if grad._requires_grad:
        out._requires_grad = True
        out.grad_fn = CopyBackwards((grad,))
    return out


class _RemovableHandle:
    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self):
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def set_history(out, node, output_nr=0):
    """Make ``out`` the ``output_nr``-th output of ``node``."""
    out._requires_grad = True
    out.grad_fn = node
    if output_nr:
        out._output_nr = output_nr


def _modified_message(node, index, expected):
    from .._tensor_str import type_name
    tensor = node._saved[index]
    desc = f"[{type_name(tensor)} [{', '.join(map(str, tensor._data.shape))}]]"
    producer = {i: nr for i, nr in node._saved_outputs}.get(index)
    if producer is not None:
        desc += f", which is output {producer} of {_op_name(node)},"
    elif tensor.grad_fn is not None:
        desc += f", which is output {tensor._output_nr} of {_op_name(tensor.grad_fn)},"
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: {desc} is at version {tensor._version_counter[0]}; expected version "
            f"{expected} instead. Hint: enable anomaly detection to find the operation that "
            "failed to compute its gradient, with ember.autograd.set_detect_anomaly(True, check_nan=False).")


def _op_name(node):
    """``MulBackward0`` -> ``Mul``: how torch names the op that produced a modified tensor."""
    name = node.name()
    return re.sub(r"Backward\d*$", "", name)


def grad_accumulator_of(tensor):
    """The leaf's AccumulateGrad node, shared by every op that uses the leaf while it lives."""
    ref = tensor._grad_acc_ref
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._grad_acc_ref = weakref.ref(acc)
    return acc
