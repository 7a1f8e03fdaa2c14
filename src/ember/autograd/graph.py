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
import os
import re
import sys
from collections import namedtuple
import threading
import weakref

from .._backend import namespace_of
from .._hooks import add_hook, hooks_in
from .grad_mode import state

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "set_history", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks", "GradientEdge", "get_gradient_edge",
           "increment_version"]

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
        if tensor._base is not None and tensor._view_version != tensor._version_counter[0]:
            fn = refresh_view_history(tensor)
        return (fn, tensor._output_nr)
    return (tensor._grad_accumulator(), 0)


class Node:
    """A step of the backward graph (torch's ``torch.autograd.graph.Node``)."""

    __slots__ = ("next_functions", "_saved", "_versions", "__dict__", "__weakref__")

    # Rarely used state lives in the instance __dict__, created on first write.
    _saved_outputs = ()        # ((index in _saved, output_nr), ...)
    _pre_hooks = None          # hooks on the node: fn(grad_outputs) -> grad_outputs | None
    _post_hooks = None         # fn(grad_inputs, grad_outputs) -> grad_inputs | None
    _tensor_pre_hooks = None   # {output_nr: {id: fn(grad) -> grad | None}} from Tensor.register_hook
    _retain_grad_hooks = None  # {output_nr: fn(grad)} from Tensor.retain_grad
    # True once any of the above is set, and for nodes that run user code: one check for the
    # engine, which takes what such nodes are given and return as seen by the user
    _has_hooks = False
    # True while ``release`` is Node's own: the engine then drops ``_saved`` itself
    _plain_release = True
    # True for an op whose result is a constant (``fill_`` with a number, ``zero_``): its inputs'
    # gradients are zeros, and a write of that result into a view leaves them out of the graph
    constant_result = False

    def __init__(self, inputs):
        edges = []
        for t in inputs:
            if t is None or not t._requires_grad:
                edges.append(_NO_EDGE)
            elif (fn := t.grad_fn) is None:   # a leaf: its AccumulateGrad, while it lives
                ref = t._grad_acc_ref
                edges.append(((ref is not None and ref()) or grad_accumulator_of(t), 0))
            elif t._base is not None and t._view_version != t._version_counter[0]:
                edges.append((refresh_view_history(t), t._output_nr))
            else:
                edges.append((fn, t._output_nr))
        self.next_functions = tuple(edges)
        self._saved = ()

    # -- what subclasses write ------------------------------------------------------------
    def backward(self, grad):
        """Gradients with respect to each input, given the gradient of each output, computed
        with ember ops: always right, and recorded when a graph of the backward is built."""
        raise NotImplementedError

    # Optionally, ``backward_arrays(*grads)``: the same gradients computed on the backend's
    # arrays, which the engine runs instead of ``backward`` when no graph of the backward is
    # being built (``create_graph=False``). It may return None to leave the case to ``backward``.
    backward_arrays = None

    def jvp(self, *tangents):
        """Forward mode: the tangent of each output (a tensor, or a tuple for several outputs;
        None for a zero tangent) given one tangent per input (None where the input has none),
        in ember ops. The op's inputs and outputs are ``self.primals`` and ``self.results``
        while it runs (see ``autograd/_dual.py``)."""
        from ._dual import not_supported_message
        raise NotImplementedError(not_supported_message(type(self)))

    # -- saved tensors --------------------------------------------------------------------
    def save(self, *tensors):
        """Keep tensors for backward, with the version each has now. An output of this node is
        kept as an alias without its history (no reference cycle); with ``create_graph`` it is
        unpacked with this node as its ``grad_fn`` again, as torch's SavedVariable does."""
        n = len(tensors)
        if n == 1 and (t := tensors[0]) is not None:   # the common cases first
            if t.grad_fn is not self:
                self._saved = tensors
                self._versions = (t._version_counter[0],)
                return
            if t._fw_grad is None and not t._output_nr:
                self._save_first_output(t)
                return
        elif n == 2:
            a, b = tensors
            if a is not None and b is not None:
                if a.grad_fn is not self and b.grad_fn is not self:
                    self._saved = tensors
                    self._versions = (a._version_counter[0], b._version_counter[0])
                    return
            elif a is None and b is not None and b.grad_fn is not self:   # (mul by a constant)
                self._saved = tensors
                self._versions = (None, b._version_counter[0])
                return
            elif b is None and a is not None and a.grad_fn is not self:
                self._saved = tensors
                self._versions = (a._version_counter[0], None)
                return
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

    def _save_first_output(self, out):
        """``save(out)`` for this node's output 0 (no tangent): an alias of it."""
        self._saved = (out._alias(),)
        self._versions = (out._version_counter[0],)
        self._saved_outputs = _FIRST_OUTPUT

    def _save_with_outputs(self, tensors):
        saved = []
        versions = []
        outputs = []
        for t in tensors:
            if t is None:
                versions.append(None)
            else:
                versions.append(t._version_counter[0])
                if t.grad_fn is self:
                    outputs.append((len(saved), t._output_nr))
                    tangent = t._fw_grad
                    t = t._alias()
                    if tangent is not None:   # forward over reverse reads it (autograd/_dual.py)
                        from ._dual import set_tangent
                        set_tangent(t, tangent)
            saved.append(t)
        self._saved_outputs = outputs
        self._saved = saved
        self._versions = versions

    @property
    def saved_tensors(self):
        """The saved tensors; raises if they were freed or modified in place since."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        if not saved:
            return saved
        if saved.__class__ is _Packed:
            return saved.unpack(self)
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

    # -- what backward saved, under torch's names ------------------------------------------
    # ``saved_fields`` maps a name of torch's (``self``, ``other``, ``dim``) to where this
    # class keeps the value: an int is the index of a saved tensor, a str the node attribute,
    # a callable computes it from the node. ``node._saved_<name>`` reads it (tensors unpacked,
    # version-checked); ``node._raw_saved_<name>`` gives a saved tensor as a ``SavedTensor``.
    # The table is given in the class body (or the namespace ``type()`` is given): the readers
    # are made when the class is. (Not a ``__getattr__``: Python does not specialise attribute
    # reads on classes that have one, and the engine reads node attributes all the time.)
    saved_fields = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "release" in cls.__dict__:
            cls._plain_release = False
        for name in cls.__dict__.get("saved_fields", ()):
            _add_saved_field_readers(cls, name)

    # -- torch's Node API -----------------------------------------------------------------
    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        return self.__dict__.setdefault("_metadata", {})

    def register_hook(self, fn):
        """Register a hook ``fn(grad_inputs, grad_outputs)`` that runs after this node; it may
        return new grad_inputs."""
        self._has_hooks = True
        return add_hook(hooks_in(self.__dict__, "_post_hooks"), fn)

    def register_prehook(self, fn):
        """Register a hook ``fn(grad_outputs)`` that runs before this node; it may return new
        grad_outputs."""
        self._has_hooks = True
        return add_hook(hooks_in(self.__dict__, "_pre_hooks"), fn)

    def _register_retain_grad_hook(self, output_nr, fn):
        self.__dict__.setdefault("_retain_grad_hooks", {})[output_nr] = fn
        self._has_hooks = True

    def _register_tensor_hook(self, output_nr, fn):
        self._has_hooks = True
        return add_hook(hooks_in(self.__dict__.setdefault("_tensor_pre_hooks", {}), output_nr), fn)

    def __call__(self, *grads):
        return self.backward(*grads)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


# Node's own __init__: anomaly detection swaps Node.__init__ for a recording one and back, and
# the compiled record makes nodes of classes that still have this one.
plain_init = Node.__init__


_NO_FIELD = object()


def _add_saved_field_readers(cls, name):
    """The properties ``_saved_<name>`` and ``_raw_saved_<name>`` on ``cls``; each reads the
    field from the table of the node's own class (a subclass may lack it)."""
    def saved(node):
        spec = type(node).saved_fields.get(name, _NO_FIELD)
        if spec is _NO_FIELD:
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '_saved_{name}'")
        return _saved_value(node, spec)

    def raw_saved(node):
        spec = type(node).saved_fields.get(name, _NO_FIELD)
        if spec.__class__ is not int:
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '_raw_saved_{name}'")
        return SavedTensor(node, spec)

    for attr, reader in (("_saved_" + name, saved), ("_raw_saved_" + name, raw_saved)):
        if attr in Node.__dict__:   # (Node's own state, such as _saved_outputs)
            raise TypeError(f"{cls.__name__}.saved_fields: the field name '{name}' is taken")
        setattr(cls, attr, property(reader))
_FIRST_OUTPUT = ((0, 0),)   # a node's _saved_outputs when it saved its output 0 alone


def _saved_value(node, spec):
    if spec.__class__ is int:
        saved = node.saved_tensors
        return saved[spec] if -len(saved) <= spec < len(saved) else None
    if spec.__class__ is str:
        return _as_torch_value(getattr(node, spec))
    return _as_torch_value(spec(node))


def _as_torch_value(value):
    """Sizes and lists of ints as the tuples torch gives; everything else as it is."""
    if isinstance(value, (tuple, list)) and not hasattr(value, "_data"):
        return tuple(_as_torch_value(v) for v in value)
    if hasattr(value, "item") and not hasattr(value, "_data") and getattr(value, "ndim", 1) == 0:
        return value.item()  # a NumPy scalar
    return value


class SavedTensor:
    """One tensor a node saved for backward (torch's ``torch._C._autograd.SavedTensor``), from
    ``node._raw_saved_<name>``."""

    __slots__ = ("_node", "_index")

    def __init__(self, node, index):
        self._node = node
        self._index = index

    @property
    def data(self):
        """The saved tensor, as backward would unpack it."""
        return self._node.saved_tensors[self._index]

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved tensor now with ``pack_hook(tensor)`` and keep what it returns; when
        backward needs the tensor, ``unpack_hook(packed)`` must give it back. Once per tensor."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("incompatible function arguments: register_hooks expects two callables")
        node = self._node
        saved = node._saved
        if saved is None:
            raise RuntimeError(_FREED)
        index = self._index % len(saved)
        if saved.__class__ is _Packed:
            if saved.unpack_hook is not None or index in saved.hooks:
                raise RuntimeError("SavedTensor hooks have already been set")
            tensor = saved.unpack(node)[index]
        else:
            tensor = node.saved_tensors[index]
            packed = _Packed(saved)
            packed.unpack_hook = None
            packed.output_nrs = dict(node._saved_outputs)
            packed.hooks = {}
            packed.versions = list(node._versions)
            node._saved = saved = packed
        if tensor is None:
            raise RuntimeError("None is forbidden")
        saved[index] = pack_hook(tensor)
        saved.hooks[index] = unpack_hook

    def __repr__(self):
        return f"<SavedTensor of {type(self._node).__name__}>"


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
        elif owned:   # (detached: no history, nor a tangent forward mode gave it, as torch's)
            variable._grad = (grad if grad.grad_fn is None and not grad._requires_grad
                              and grad._fw_grad is None else grad.detach())
        else:
            variable._grad = grad.detach().clone()
    elif state.grad_enabled:
        variable._grad = old + grad
    else:
        old._iadd_grad(grad)


def _copy_with_history(grad):
    """A copy of ``grad`` whose history (``CopyBackwards``, as ``copy_`` makes) leads to it."""
    from .._tensor import _make
    if not grad._requires_grad:
        return _make(grad._data.copy())
    return _make(namespace_of(grad._data).empty_like(grad._data)).copy_(grad)


def set_history(out, node, output_nr=0):
    """Make ``out`` the ``output_nr``-th output of ``node``."""
    out._requires_grad = True
    out.grad_fn = node
    if output_nr:
        out._output_nr = output_nr


# ----------------------------------------------------------------------------------------
# Versions: in-place changes, and where they ran

class _ModifierRecording:
    """Whether in-place ops remember which op changed a tensor and where the user's code called
    it. On while anomaly detection is on (``set_detect_anomaly``): walking the stack costs more
    than 2% of an op (``python benchmarks/inplace_provenance.py``), so it is not done always."""
    enabled = False


modifier_recording = _ModifierRecording()
_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def bump_version(tensor):
    """Count an in-place change of ``tensor``'s memory (its views share the counter); saved
    tensors whose version moved since they were saved refuse to be used by backward."""
    counter = tensor._version_counter
    counter[0] += 1
    if modifier_recording.enabled:
        counter[1:] = (_modifier(counter[0]),)


def _modifier(version):
    """(version, op, file, line): the ember function the user's code called (the outermost ember
    frame) to make this version, and the user's file:line that called it."""
    frame = sys._getframe(2)
    op = None
    while frame is not None and frame.f_code.co_filename.startswith(_EMBER_DIR):
        op = frame.f_code.co_name
        frame = frame.f_back
    if frame is None:
        return (version, op, None, None)
    return (version, op, frame.f_code.co_filename, frame.f_lineno)


def _modified_message(node, index, expected):
    from .._tensor_str import type_name
    tensor = node._saved[index]
    desc = f"[{type_name(tensor)} [{', '.join(map(str, tensor._data.shape))}]]"
    producer = {i: nr for i, nr in node._saved_outputs}.get(index)
    if producer is not None:
        desc += f", which is output {producer} of {_op_name(node)},"
    elif tensor.grad_fn is not None:
        desc += f", which is output {tensor._output_nr} of {_op_name(tensor.grad_fn)},"
    counter = tensor._version_counter
    message = ("one of the variables needed for gradient computation has been modified by an inplace "
               f"operation: {desc} is at version {counter[0]}; expected version {expected} instead. "
               "Hint: enable anomaly detection to find the operation that failed to compute its "
               "gradient, with ember.autograd.set_detect_anomaly(True, check_nan=False). "
               f"It was saved for the backward of {node.name()}")
    if len(counter) > 1 and counter[1][0] == counter[0]:
        _, op, filename, line = counter[1]
        where = f" at {filename}:{line}" if filename else ""
        message += f"; it was last modified in place by {op}(){where}."
        source = _source_line(filename, line)
        return message + (f"\n    {source}" if source else "")
    return message + ("; with anomaly detection on, this message also names the in-place "
                      "operation that modified it and the line that ran it.")


def _source_line(filename, line):
    if not filename:
        return ""
    import linecache
    return linecache.getline(filename, line).strip()


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


# ----------------------------------------------------------------------------------------
# Hooks for saved tensors

class _Packed(list):
    """What a node saved while ``saved_tensors_hooks`` were active: per tensor, what its
    pack hook returned (None for None) and, for the node's own outputs, their output_nr."""

    __slots__ = ("unpack_hook", "output_nrs", "hooks", "versions")

    def unpack(self, node):
        """The saved tensors, each passed through the unpack hook (its own, for one given hooks
        through ``SavedTensor.register_hooks``). As in torch, tensors saved through hooks are
        not version-checked; the others (``unpack_hook`` None) are."""
        unpack_hook, output_nrs, hooks = self.unpack_hook, self.output_nrs, self.hooks
        tensors = []
        for index, packed in enumerate(self):
            if packed is None:
                tensors.append(None)
                continue
            hook = hooks.get(index, unpack_hook) if hooks else unpack_hook
            if hook is None:
                if packed._version_counter[0] != self.versions[index]:
                    raise RuntimeError(_modified_message(node, index, self.versions[index]))
                tensor = packed
            else:
                tensor = hook(packed)
            if not hasattr(tensor, "_data"):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                                f"result of type {type(tensor).__name__}")
            output_nr = output_nrs.get(index)
            if output_nr is not None and state.grad_enabled:
                tensor = tensor._alias_with_history(node, output_nr)
            tensors.append(tensor)
        return tensors


class _HookStack(threading.local):
    """The ``(pack_hook, unpack_hook)`` pairs active in this thread, innermost last, and the
    message of an active ``disable_saved_tensors_hooks`` (None when hooks are allowed)."""

    def __init__(self):
        self.pairs = []
        self.disabled_message = None


_hooks = _HookStack()
_save_plain = Node.save
_active_contexts = [0]  # in all threads: while 0, Node.save is the plain one (no cost)
_active_lock = threading.Lock()


def _save_through_hooks(self, *tensors):
    """``Node.save`` while some thread has saved-tensor hooks active."""
    pairs = _hooks.pairs
    if not pairs:
        return _save_plain(self, *tensors)
    pack_hook, unpack_hook = pairs[-1]
    packed = _Packed()
    packed.unpack_hook = unpack_hook
    packed.output_nrs = {}
    packed.hooks = None
    for index, t in enumerate(tensors):
        if t is None:
            packed.append(None)
            continue
        if t.grad_fn is self:
            packed.output_nrs[index] = t._output_nr
        packed.append(pack_hook(t))
    self._saved = packed
    self._versions = ()


def _activate(delta):
    with _active_lock:
        _active_contexts[0] += delta
        Node.save = _save_through_hooks if _active_contexts[0] else _save_plain


class saved_tensors_hooks:
    """Context-manager that sets a pair of pack / unpack hooks for saved tensors.

    Every tensor an operation saves for backward is passed to ``pack_hook(tensor)``; what it
    returns is stored instead of the tensor. When backward (or an access to the saved tensors)
    needs it, ``unpack_hook(packed)`` must return a tensor with the same content as the original.
    The hooks apply in the current thread; nested contexts use the innermost pair.
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks.disabled_message is not None:
            raise RuntimeError(_hooks.disabled_message)
        _hooks.pairs.append((self.pack_hook, self.unpack_hook))
        _activate(1)
        return self

    def __exit__(self, *exc):
        _hooks.pairs.pop()
        _activate(-1)


class save_on_cpu(saved_tensors_hooks):
    """Context manager under which tensors saved by the forward pass are stored on the CPU,
    then copied back to their device for backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context-manager under which entering ``saved_tensors_hooks`` raises ``RuntimeError`` with
    ``error_message`` (as does entering this one while such hooks are active)."""

    def __init__(self, error_message):
        self.error_message = error_message
        self.prev = None

    def __enter__(self):
        if _hooks.pairs:
            raise RuntimeError(self.error_message)
        self.prev = _hooks.disabled_message
        _hooks.disabled_message = self.error_message
        return self

    def __exit__(self, *exc):
        _hooks.disabled_message = self.prev


def refresh_view_history(view):
    """A view whose base was modified in place since the view got its history: re-derive the
    view's history from the base's current one (torch regenerates it the same way)."""
    from ..ops._common import derive_view_history
    return derive_view_history(view)


class GradientEdge(namedtuple("GradientEdge", ("node", "output_nr", "ownership_token"),
                              defaults=(None,))):
    """An edge of the autograd graph: output ``output_nr`` of ``node``."""
    __slots__ = ()


def get_gradient_edge(tensor):
    """The edge of the graph that ``tensor``'s gradient flows into: its ``grad_fn`` and output
    number, or its ``AccumulateGrad`` for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not "
                           "require gradients")
    node, output_nr = edge_of(tensor)
    return GradientEdge(node, output_nr)


def increment_version(tensor):
    """Count an in-place change of ``tensor`` (or of each tensor of an iterable) that autograd
    did not see, so that backward refuses the values saved before it."""
    from .._tensor import Tensor
    for t in ([tensor] if isinstance(tensor, Tensor) else tensor):
        bump_version(t)
