"""The backends of ``ember.compile``: what turns a captured ``ember.fx.GraphModule`` into the
callable that runs on later calls.

ember runs a graph by replaying it op by op (the GraphModule's own ``forward``). ``"eager"`` is
that, with autograd recording every op as in eager mode, as torch's debugging backend is.
``"aot_eager"`` adds an ahead-of-time backward (``_aot.py``): the forward graph runs without
autograd and one ``CompiledFunctionBackward`` node runs a captured backward graph, op by op.
``"inductor"`` (the default) is ember's compiler (``ember._inductor``): calls with grad mode off
run the graph with its pointwise chains as generated C kernels; training calls take the
ahead-of-time backward with its forward and backward graphs fused too, unless the
``aot_backward`` option is False (then they replay with eager autograd). A callable
``backend(gm, example_inputs)`` receives the GraphModule and the example inputs and returns the
callable to run, as torch's custom backends do."""
from .exc import InvalidBackend

__all__ = ["lookup_backend", "list_backends"]


def _replay(gm, example_inputs):
    return gm.forward


class _Inductor:
    """ember's own compiler (``ember._inductor``): with grad mode off the graph runs with its
    pointwise chains as generated kernels; training calls take the ahead-of-time backward with
    both graphs fused, or with the ``aot_backward`` option False replay with eager autograd.
    ``options``: ``ember.compile``'s, overriding ``ember._inductor.config``."""

    __name__ = "inductor"

    def __init__(self, options=None):
        self.options = dict(options or {})

    def __call__(self, gm, example_inputs):
        from .._inductor import compile_fx
        return compile_fx(gm, example_inputs, self.options)

    @property
    def aot_autograd(self):
        from .._inductor import _option
        return _option(self.options, "aot_backward")

    def fuse_aot(self, aot_function):
        from .._inductor import fuse_aot
        fuse_aot(aot_function, self.options)

    def with_options(self, options):
        """This backend with ``ember.compile``'s ``options`` (the keys of
        ``ember._inductor.OPTIONS``; torch's other inductor options have no effect)."""
        from .._inductor import OPTIONS
        return _Inductor({**self.options, **{k: v for k, v in options.items() if k in OPTIONS}})


_inductor = _Inductor()


def _aot_replay(gm, example_inputs):
    return gm.forward


_aot_replay.aot_autograd = True   # CompiledFunction builds the backward graph at capture time

_BACKENDS = {"eager": _replay, "aot_eager": _aot_replay, "inductor": _inductor}
_DEBUG = ("eager", "aot_eager")

# torch's registered backend names that ember does not have
_TORCH_ONLY = ("cudagraphs", "onnxrt", "openxla", "tvm", "tensorrt", "torch_tensorrt", "ipex",
               "aot_eager_decomp_partition", "aot_ts", "aot_inductor", "nvprims_nvfuser",
               "tensorrt", "aot_eager_decomp_partition_crossref")


def list_backends(exclude_tags=("debug", "experimental")):
    """The names of ember.compile's backends; those tagged ``debug`` (``eager``,
    ``aot_eager``) are left out unless ``exclude_tags`` allows them, as torch lists them."""
    exclude = set(exclude_tags or ())
    return sorted(name for name in _BACKENDS if not (name in _DEBUG and "debug" in exclude))


def lookup_backend(backend):
    """The compiler function of ``backend`` (a name or a callable)."""
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"ember.compile: backend must be a name or a callable, got "
                        f"{type(backend).__name__}")
    hit = _BACKENDS.get(backend)
    if hit is None:
        known = list_backends(exclude_tags=())
        note = " (a torch backend that ember does not have)" if backend in _TORCH_ONLY else ""
        raise InvalidBackend(backend, known, note)
    return hit
