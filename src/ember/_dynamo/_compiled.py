"""``CompiledFunction``: the cache of graphs of one compiled function or module, looked up by
guards on every call; captures on a miss, recompiles up to ``config.recompile_limit``, and runs
eagerly after a graph break or past the limit, logging why on ``ember._dynamo``'s logger."""
import inspect
import itertools
import logging
import weakref

from ..jit._recorder import active as recording
from . import config
from ._stance import _stance
from .. import is_grad_enabled
from ._aot import NoAot, flat_tensors
from ._aot import build as build_aot
from ._capture import NO_ROOT, capture, current
from ._guards import StateGuard, changed_dims, dynamic_pattern, mismatch, signature
from .exc import BackendCompilerFailed

__all__ = ["CompiledFunction", "reset_all"]

log = logging.getLogger("ember._dynamo")

_all = weakref.WeakSet()
_frame_ids = itertools.count()
_disabled = [0]


def reset_all():
    """Forget every compiled function's graphs (``ember.compiler.reset``)."""
    for compiled in list(_all):
        compiled.reset()


class _Entry:
    __slots__ = ("key", "dynamic_positions", "run", "state", "index", "graph_module",
                 "fingerprint", "specialized")

    def __init__(self, key, dynamic_positions, run, state, index, graph_module, fingerprint,
                 specialized):
        self.key = key
        self.dynamic_positions = dynamic_positions
        self.run = run
        self.state = state
        self.index = index
        self.graph_module = graph_module
        self.fingerprint = fingerprint
        self.specialized = specialized


class CompiledFunction:
    """Runs ``fn`` through captured graphs. ``root``: the module whose parameters the graphs
    fetch (``NO_ROOT`` for a plain function)."""

    def __init__(self, fn, root=NO_ROOT, *, backend, fullgraph=False, dynamic=None):
        self.fn = fn
        self.root = root
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.frame_id = next(_frame_ids)
        self.reset()
        _all.add(self)

    def reset(self):
        self.static = {}            # signature -> entries (differing in module state)
        self.dynamic_entries = []   # (pattern, entry)
        self.entries = []
        self.graph_break = None     # the break that makes every call run eagerly
        self.graph_breaks = 0       # calls run eagerly because of a graph break
        self.opaque = set()         # ids of submodules that broke: called eagerly from graphs
        self.limit_hit = False
        self.last_reason = None
        self.aot_off = False        # a capture with ember's layers inlined broke

    # -- calls -----------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _disabled[0] or current() is not None or self.graph_break is not None or \
                _stance[0] == "force_eager":
            if self.graph_break is not None and current() is None:
                self.graph_breaks += 1
            return self.fn(*args, **kwargs)
        if recording() is not None:     # inside ember.jit.trace or ember.export: record through
            return self.fn(*args, **kwargs)
        key = signature(args, kwargs)
        for entry in self.static.get(key, ()):
            if entry.state.failure() is None:
                return entry.run(*args, *kwargs.values())
        for pattern, entry in self.dynamic_entries:
            if dynamic_pattern(key, entry.dynamic_positions) == pattern and \
                    entry.state.failure() is None:
                return entry.run(*args, *kwargs.values())
        return self._miss(key, args, kwargs)

    def _names(self, args, kwargs):
        from ..jit._trace import _parameter_names
        target = self.fn.forward if self.root is self.fn else self.fn
        return _parameter_names(target, len(args), kwargs)

    def _reasons(self, key, args, kwargs):
        names = self._names(args, kwargs)
        reasons = []
        for entry in self.entries:
            reason = entry.state.failure() if _matches(entry, key) else (
                mismatch(entry.key if not entry.dynamic_positions else
                         dynamic_pattern(entry.key, entry.dynamic_positions) or entry.key,
                         key, names))
            reasons.append(f"{self.frame_id}/{entry.index}: {reason}")
        return reasons

    def _where(self):
        fn = getattr(self.fn, "forward", self.fn) if self.root is self.fn else self.fn
        fn = inspect.unwrap(getattr(fn, "__func__", fn))
        code = getattr(fn, "__code__", None)
        name = getattr(fn, "__name__", type(fn).__name__)
        if code is None:
            return name, "<unknown>"
        return name, f"{code.co_filename}:{code.co_firstlineno}"

    def _miss(self, key, args, kwargs):
        if self.limit_hit and _stance[0] == "default":
            return self.fn(*args, **kwargs)
        reasons = self._reasons(key, args, kwargs) if self.entries else []
        name, where = self._where()
        if reasons:
            self.last_reason = reasons[-1]
        if reasons and _stance[0] == "eager_on_recompile":
            return self.fn(*args, **kwargs)
        if reasons and _stance[0] == "fail_on_recompile":
            raise RuntimeError(
                f"Detected recompile when ember.compile stance is 'fail_on_recompile'. "
                f"function: {name!r} ({where})\n    triggered by the following guard "
                f"failure(s):\n" + "\n".join(f"    - {r}" for r in reasons))
        if len(self.entries) >= config.recompile_limit:
            if not self.limit_hit:
                self.limit_hit = True
                log.warning("ember._dynamo hit config.recompile_limit (%d)\n   function: %r "
                            "(%s)\n   last reason: %s\nTo log all recompilation reasons, "
                            "set logging.getLogger(\"ember._dynamo\") to INFO.",
                            config.recompile_limit, name, where, self.last_reason)
            return self.fn(*args, **kwargs)
        if reasons:
            log.info("Recompiling function %s in %s\n    triggered by the following guard "
                     "failure(s):\n%s", name, where, "\n".join(f"    - {r}" for r in reasons))
        sibling, positions = self._dynamic_candidate(key)
        aot = self._wants_aot(args, kwargs) and not positions
        versions = _versions(args, kwargs, self.root) if aot else None
        result, cap = capture(self.fn, self.root, args, kwargs,
                              fullgraph=self.fullgraph and not aot, name=name,
                              opaque=self.opaque, inline_layers=aot)
        if aot and cap.breaks:
            # the next call captures again, without ember's layers inlined
            self.aot_off = True
            log.info("%r (%s) gets no ahead-of-time backward: %s", name, where, cap.breaks[0])
            return result
        if cap.breaks and all(b.module is not None for b in cap.breaks):
            # the graph calls the submodules that broke, which run their Python eagerly
            self.graph_breaks += 1
            for brk in cap.breaks:
                self.opaque.add(id(brk.module))
                log.info("%s\nThe submodule %s runs eagerly, called from the graphs of %r "
                         "(%s).", brk, type(brk.module).__name__, name, where)
            return result
        if cap.breaks:
            self.graph_break = cap.breaks[0]
            self.graph_breaks += 1
            log.info("%s\nThe function %r (%s) runs eagerly from now on.", cap.breaks[0],
                     name, where)
            return result
        fingerprint = _fingerprint(cap.graph_module)
        if positions:
            if cap.specialized is not None:
                log.info("%r (%s) specializes on a size at %s (%s): its graph is not dynamic",
                         name, where, cap.specialized.location(), cap.specialized.reason)
                positions = None
            elif fingerprint != sibling.fingerprint:
                log.info("%r (%s) records a different graph at another size: its graph is "
                         "not dynamic", name, where)
                positions = None
        if positions and self.dynamic is True:
            # the graph of the first size holds for this one too: it becomes the dynamic one
            self._make_dynamic(sibling, positions)
            return result
        example_inputs = [*args, *kwargs.values()]
        try:
            run = self.backend(cap.graph_module, example_inputs)
        except Exception as e:
            raise BackendCompilerFailed(self.backend, e) from e
        if aot:
            try:
                run = build_aot(cap, run, example_inputs, result, versions)
                fuse_aot = getattr(self.backend, "fuse_aot", None)
                if fuse_aot is not None:
                    fuse_aot(run)
            except NoAot as e:
                log.info("%r (%s) gets no ahead-of-time backward, its graph replays with "
                         "eager autograd: %s", name, where, e)
        entry = _Entry(key, (), run, StateGuard(cap), len(self.entries), cap.graph_module,
                       fingerprint, cap.specialized is not None)
        self.entries.append(entry)
        if positions:
            self._make_dynamic(entry, positions)
        else:
            self.static.setdefault(key, []).append(entry)
        return result

    def _wants_aot(self, args, kwargs):
        """Whether this call's capture builds an ahead-of-time backward: the backend asks for
        one, grad mode is on and an input or a parameter of the root requires grad."""
        if not getattr(self.backend, "aot_autograd", False) or self.aot_off or \
                not is_grad_enabled():
            return False
        return any(t.requires_grad for t in flat_tensors((args, kwargs))) or any(
            p.requires_grad for p in self.root.parameters())

    def _make_dynamic(self, entry, positions):
        if getattr(entry.run, "aot", False):
            entry.run = entry.run.replay    # the backward graph holds the captured sizes
        listed = self.static.get(entry.key, [])
        if entry in listed:
            listed.remove(entry)
        entry.dynamic_positions = tuple(positions)
        self.dynamic_entries.append((dynamic_pattern(entry.key, positions), entry))

    def _dynamic_candidate(self, key):
        """(an entry whose signature differs from ``key`` only in sizes, those
        positions), or (None, None). A graph becomes dynamic only where a capture at another
        size records the same graph and nothing used a size as a Python value: sizes baked
        into a graph (an unrolled ``range(x.size(0))``, ``1 / x.shape[0]``) differ between the
        two captures."""
        if self.dynamic is False or (self.dynamic is None and
                                     not config.automatic_dynamic_shapes):
            return None, None
        for entry in self.entries:
            if entry.dynamic_positions or entry.specialized:
                continue
            positions = changed_dims(entry.key, key)
            if positions and dynamic_pattern(key, positions) is not None and \
                    dynamic_pattern(entry.key, positions) is not None:
                return entry, positions
        return None, None

    @property
    def graphs(self):
        """The graph modules captured so far."""
        return [e.graph_module for e in self.entries]


def _versions(args, kwargs, root):
    """(tensor, version) of the inputs and of the root's parameters and buffers."""
    tensors = flat_tensors((args, kwargs)) + list(root.parameters()) + list(root.buffers())
    return [(t, t._version_counter[0]) for t in tensors]


def _matches(entry, key):
    if entry.dynamic_positions:
        return dynamic_pattern(key, entry.dynamic_positions) == dynamic_pattern(
            entry.key, entry.dynamic_positions)
    return entry.key == key


def _fingerprint(gm):
    """What must agree between two captures at different sizes for one graph to stand for
    both: the code, and the constants' shapes, dtypes and (small ones') values."""
    constants = []
    for name, value in sorted(vars(gm).items()):
        if name.startswith("_tensor_constant"):
            summary = (name, tuple(value.shape), value.dtype)
            if value.numel() <= 64:
                summary += (tuple(value.detach().reshape(-1).tolist()),)
            constants.append(summary)
    return gm.code, tuple(constants)
