"""``ember.utils.checkpoint``: activation checkpointing, as ``torch.utils.checkpoint``.

A checkpointed function keeps none of the tensors its operations save for backward; backward
runs the function again to get them back. Two variants, as in torch:

* non-reentrant (``use_reentrant=False``, recommended): the forward runs under
  ``saved_tensors_hooks`` whose pack hook stores a handle only; the first unpack during
  backward reruns the function once (grad enabled, RNG state of the forward restored) and the
  recomputed tensors are handed out, each freed once unpacked.
* reentrant (``use_reentrant=True``, torch's default when ``use_reentrant`` is not passed): an
  ``autograd.Function`` that runs the function without grad, then in its backward reruns it
  with grad and calls ``ember.autograd.backward`` on the result.
"""
import contextlib
import warnings
import weakref

from .. import autograd
from ..autograd.graph import saved_tensors_hooks
from ..random import fork_rng, get_rng_state, set_rng_state

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "noop_context_fn", "detach_variable", "check_backward_validity", "DefaultDeviceType",
           "get_device_states", "set_device_states"]

_DEFAULT_DETERMINISM_MODE = "default"

_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.
""".replace("torch.", "ember.")


class CheckpointError(RuntimeError):
    pass


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _is_tensor(x):
    return hasattr(x, "_data") and hasattr(x, "grad_fn")


def detach_variable(inputs):
    """Detached copies of the tensors in the tuple ``inputs``, each requiring grad as the
    original did."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad) if _is_tensor(x) else x for x in inputs)


def check_backward_validity(inputs):
    if not any(x.requires_grad for x in inputs if _is_tensor(x)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


# ----------------------------------------------------------------------------------------
# Reentrant variant

class CheckpointFunction(autograd.Function):
    """The reentrant checkpoint: forward without grad, recompute with grad in backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.tensor_indices = [i for i, a in enumerate(args) if _is_tensor(a)]
        ctx.inputs = [None if _is_tensor(a) else a for a in args]
        ctx.save_for_backward(*[a for a in args if _is_tensor(a)])
        with autograd.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        inputs = list(ctx.inputs)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[index] = tensor
        detached = detach_variable(tuple(inputs))
        with fork_rng(enabled=ctx.rng_state is not None):
            if ctx.rng_state is not None:
                set_rng_state(ctx.rng_state)
            with autograd.enable_grad():
                outputs = ctx.run_function(*detached)
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        pairs = [(out, grad) for out, grad in zip(outputs, grad_outputs)
                 if _is_tensor(out) and out.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd.backward([out for out, _ in pairs], [grad for _, grad in pairs])
        grads = tuple(x.grad if _is_tensor(x) else None for x in detached)
        return (None, None) + grads


# ----------------------------------------------------------------------------------------
# Non-reentrant variant

class _Holder:
    """What the pack hook stores in place of a saved tensor: its position in the forward."""

    __slots__ = ("index", "__weakref__")

    def __init__(self, index):
        self.index = index


class _StopRecomputation(Exception):
    """Raised inside the recomputation once every tensor still needed has been recomputed."""


def _metadata(tensor):
    return {"shape": tuple(tensor.shape), "dtype": tensor.dtype, "device": tensor.device}


class _CheckpointFrame:
    """The state of one checkpointed call: how to rerun it, and the handles it gave out."""

    def __init__(self, recompute_fn, metadata_fn, early_stop):
        self.recompute_fn = recompute_fn
        self.metadata_fn = metadata_fn
        self.early_stop = early_stop
        self.weak_holders = []
        self.metadata = []
        self.recomputed = weakref.WeakKeyDictionary()  # holder -> recomputed tensor

    def pack(self, tensor):
        holder = _Holder(len(self.weak_holders))
        self.weak_holders.append(weakref.ref(holder))
        self.metadata.append(self.metadata_fn(tensor))
        return holder

    def unpack(self, holder):
        if holder not in self.recomputed:
            self.recompute()
        return self.recomputed.pop(holder)

    def recompute(self):
        """Rerun the function, keeping the tensors saved at the positions whose handle is still
        alive and not yet filled."""
        wanted = self._missing_holders()
        counter = [0]

        def pack_recomputed(tensor):
            index = counter[0]
            counter[0] += 1
            if index >= len(self.weak_holders):
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation than "
                    "during the original forward pass.".replace("torch.", "ember."))
            self._check_metadata(index, tensor)
            holder = wanted.pop(index, None)
            if holder is not None:
                self.recomputed[holder] = tensor.detach()
                if not wanted and self.early_stop:
                    raise _StopRecomputation
            return None

        try:
            with saved_tensors_hooks(pack_recomputed, _unpack_during_recomputation):
                self.recompute_fn()
        except _StopRecomputation:
            return
        if wanted:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {counter[0]}.\n{_DEBUG_TIP}")

    def _missing_holders(self):
        wanted = {}
        for index, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is not None and holder not in self.recomputed:
                wanted[index] = holder
        return wanted

    def _check_metadata(self, index, tensor):
        expected = self.metadata[index]
        recomputed = self.metadata_fn(tensor)
        if expected != recomputed:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different "
                "metadata than during the forward pass.\n"
                f"tensor at position {index}:\nsaved metadata: {expected}\n"
                f"recomputed metadata: {recomputed}\n.\n{_DEBUG_TIP}")


def _unpack_during_recomputation(_):
    raise AssertionError("ember.utils.checkpoint: a saved tensor was unpacked during recomputation")


_determinism_checks = {_DEFAULT_DETERMINISM_MODE: _metadata, "none": lambda _: None}


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check,
                                  early_stop, args, kwargs):
    if determinism_check not in _determinism_checks:
        raise ValueError(f"determinism_check should be one of {list(_determinism_checks)}, "
                         f"but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    rng_state = get_rng_state() if preserve_rng_state else None

    def recompute():
        with fork_rng(enabled=preserve_rng_state), autograd.enable_grad(), recompute_context:
            if preserve_rng_state:
                set_rng_state(rng_state)
            function(*args, **kwargs)

    frame = _CheckpointFrame(recompute, _determinism_checks[determinism_check], early_stop)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


# ----------------------------------------------------------------------------------------
# Public API

def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True, **kwargs):
    r"""Checkpoint a model or part of the model.

    Activation checkpointing trades compute for memory: instead of keeping the tensors needed
    for backward until they are used in gradient computation, ``function`` is run without
    keeping them, and is run again during backward to recompute them.

    Args:
        function: describes what to run in the forward pass of the model or part of the model.
        args: tuple containing inputs to the :attr:`function`.
        preserve_rng_state (bool, optional): Omit stashing and restoring the RNG state during
            each checkpoint. Default: ``True``.
        use_reentrant (bool): specify whether to use the activation checkpoint variant that
            requires reentrant autograd. Should be passed explicitly; when it is not, a warning
            is raised and the reentrant variant is used, as in torch.
        context_fn (Callable, optional): A callable returning a tuple of two context managers.
            The function and its recomputation will be run under the first and second context
            managers respectively. Only supported with ``use_reentrant=False``.
        determinism_check (str, optional): ``"default"`` compares the shapes, dtypes and devices
            of the recomputed tensors against those of the forward; ``"none"`` disables it.
        debug (bool, optional): accepted for compatibility; error messages are not extended.
        early_stop (bool, optional): if ``True``, the recomputation stops as soon as it has
            computed all needed tensors. Default: ``True``.

    Returns:
        Output of running :attr:`function` on :attr:`*args`
    """
    if use_reentrant is None:
        warnings.warn(
            "ember.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    r"""Checkpoint a sequential model to save memory.

    The list of modules/functions (or ``nn.Sequential``) is divided into ``segments`` chunks,
    run in order; every chunk but the last is checkpointed.

    Returns:
        Output of running :attr:`functions` sequentially on :attr:`*inputs`
    """
    if use_reentrant is None:
        warnings.warn(
            "ember.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(_run_range(functions, start, end), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return _run_range(functions, end + 1, len(functions) - 1)(input)


def _run_range(functions, start, end):
    def forward(input):
        for j in range(start, end + 1):
            input = functions[j](input)
        return input
    return forward


class DefaultDeviceType:
    """The device type whose random state checkpointing stashes when no argument is on an
    accelerator: the current accelerator's type, else ``'cpu'``, unless set."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        """Set the default device type for checkpointing."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        """The default device type for checkpointing."""
        if not DefaultDeviceType._default_device_type:
            from .. import accelerator
            current = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = current.type if current else "cpu"
        return DefaultDeviceType._default_device_type


def _accelerator_devices(args):
    from .._tensor import Tensor
    found = []

    def visit(x):
        if isinstance(x, Tensor):
            if x.device.type != "cpu" and x.device.index not in found:
                found.append(x.device.index)
        elif isinstance(x, (list, tuple)):
            for item in x:
                visit(item)
        elif isinstance(x, dict):
            for item in x.values():
                visit(item)
    visit(args)
    return found


def get_device_states(*args):
    """The indices of the accelerator devices the tensors among ``args`` (nested in lists,
    tuples and dicts too) are on, and each device's random state: ``([], [])`` when all are on
    the CPU."""
    devices = _accelerator_devices(args)
    if devices:
        raise NotImplementedError("get_device_states of accelerator tensors: ember.cuda has no "
                                  "per-device random state to stash yet")
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Restore the random states ``get_device_states`` returned (nothing to do for none)."""
    if list(devices) or list(states):
        raise NotImplementedError("set_device_states of accelerator devices: ember.cuda has no "
                                  "per-device random state to restore yet")
