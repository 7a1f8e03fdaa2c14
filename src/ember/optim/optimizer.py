"""``Optimizer``: the base class of all optimizers, and the flat-buffer update path.

Each group's parameters that have a gradient (of one dtype) are laid end to end: the
optimizer's per-element state (``exp_avg``, ``momentum_buffer``, ...) lives in one flat array
per key, and ``self.state[p][key]`` is a view into it, so an update is a few whole-array NumPy
operations however many tensors the group holds. Per-parameter scalar state (``step``, ...) is a
small vector whose elements are 0-d views. The layout is rebuilt whenever the set of parameters
with gradients or the state objects change (``load_state_dict``, a new parameter).

When a group's tensors are few and large, gathering their gradients into one array costs more
than a few whole-array operations per tensor: optimizers whose update never writes into the
gradient then update each parameter in place from its own ``.grad`` and per-parameter state
(``_Flat(direct=True)``). Both paths run the same element-wise operations, so their results are
bit-identical.

A large update (``BLOCKED_MIN_SIZE`` elements or more) runs ``_update`` on cache-sized blocks of
its arrays, so that a block's operands stay in cache between its few element-wise operations,
and splits the blocks over ember's threads (``_backend.parallel``; NumPy releases the GIL inside
whole-array operations). Element-wise operations on disjoint slices give the same bits as on
the whole arrays, so the result is bit-identical to one whole-array update.
"""
import copy
import functools
import itertools
import threading
import warnings
from collections import OrderedDict, defaultdict

import numpy as np

from .._backend import namespace_of, parallel, to_device_of
from .._tensor import Tensor, _make
from ..autograd.grad_mode import no_grad
from .._hooks import add_hook
from ._flat_ops import add_scaled_
from ..autograd.graph import bump_version

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]

# Mean elements per tensor from which a layout updates each parameter in place rather than
# through gathered flat buffers (a gather copy then costs more than the per-tensor calls).
DIRECT_MIN_MEAN_SIZE = 32768
# Elements from which an update runs in blocks of BLOCK_SIZE, split over ember's threads
# (``_backend.parallel``).
BLOCKED_MIN_SIZE = 327680
BLOCK_SIZE = 65536


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register a pre hook common to all optimizers: ``hook(optimizer, args, kwargs)``."""
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Register a post hook common to all optimizers: ``hook(optimizer, args, kwargs)``."""
    return add_hook(_global_step_post_hooks, hook)


def _typename(obj):
    if isinstance(obj, Tensor):
        return "ember.Tensor"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module == "builtins" else f"{module}.{name}"


def _with_hooks(step):
    """Wraps an optimizer's ``step`` so that step pre/post hooks run around it."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in itertools.chain(_global_step_pre_hooks.values(),
                                    self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but got "
                        f"{result}.")
                args, kwargs = result
        out = step(self, *args, **kwargs)
        self._opt_called = True
        for hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                    _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Base class for all optimizers.

    Args:
        params (iterable): an iterable of Tensors or dicts. Specifies what Tensors should be
            optimized.
        defaults (dict): a dict containing default values of optimization options (used when a
            parameter group doesn't specify them).
    """

    # Per-element state keys kept in flat buffers, and per-parameter scalar state keys.
    _flat_keys = ()
    _scalar_keys = ()

    def __init_subclass__(cls, **kwargs):  # every step() runs the step hooks
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._flat_cache = {}
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._flat_cache = {}
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        text += ")"
        return text

    # -- hooks ---------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """Register an optimizer step pre hook ``hook(optimizer, args, kwargs) -> None or
        modified args and kwargs``, called before each ``step()``; returns a handle."""
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """Register an optimizer step post hook ``hook(optimizer, args, kwargs) -> None``,
        called after each ``step()``; returns a handle."""
        return add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._add_ordered_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._add_ordered_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._add_ordered_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._add_ordered_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _add_ordered_hook(store, hook, prepend):
        handle = add_hook(store, hook)
        if prepend:
            store.move_to_end(handle.id, last=False)
        return handle

    # -- parameter groups ----------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a param group to the Optimizer's ``param_groups``: useful when fine tuning a
        pre-trained network, as frozen layers can be made trainable and added as training
        progresses."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use a "
                            "list instead.")
        else:
            param_group["params"] = list(params)
        _extract_names(param_group)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization "
                                 f"parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all optimized tensors (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        """Perform a single optimization step to update parameters (re-evaluating the loss
        with ``closure`` first, if given, and returning it)."""
        if type(self)._update is Optimizer._update:
            raise NotImplementedError
        loss = _call_closure(closure)
        self._step_flat()
        return loss

    # -- state dict ----------------------------------------------------------------------
    def state_dict(self):
        """The state of the optimizer as a dict: ``state`` (per-parameter state keyed by the
        parameter's index) and ``param_groups`` (each group's options, with ``params`` as
        indices)."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Loads the optimizer state from ``state_dict`` (as returned by ``state_dict()``)."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the "
                             "size of optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = _cast(param, value, key, saved_groups)
            else:
                state[key] = value

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # -- the flat update path ------------------------------------------------------------
    def _init_state(self, group, p, state):
        """Fill ``state`` (empty) for parameter ``p`` as torch does on its first step."""

    def _needs_init(self, state):
        return len(state) == 0

    def _update(self, group, seg):
        """Apply one step to a segment (a whole flat group or one parameter)."""
        raise NotImplementedError

    def _step_flat(self):
        """Run ``_update`` on every group's flat layout (or per parameter where their scalar
        state differs) and bump the parameters' versions."""
        with no_grad():
            for group in self.param_groups:
                for flat in self._flats_for(group):
                    if flat.direct:
                        for seg in flat.param_segments():
                            self._run_update(group, seg)
                    else:
                        self._update_gathered(group, flat)
                    flat.fresh = ()
                    for p in flat.params:
                        bump_version(p)

    def _update_gathered(self, group, flat):
        flat.gather_grads(group.get("maximize", False))
        if flat.scalars_uniform():
            seg = _FlatSegment(flat)
            self._run_update(group, seg)
            seg.finish()
        else:
            for seg in flat.param_segments():
                self._run_update(group, seg)

    def _run_update(self, group, seg):
        """``_update`` on ``seg``: in cache-sized blocks (split over ember's threads) when it is
        large."""
        if (seg.size < BLOCKED_MIN_SIZE or not seg.blockable()
                or not self._blocking_pays(group, seg)):
            self._update(group, seg)
            return
        threads = parallel.get_num_threads() if parallel.available() else 1
        blocks = [_BlockSegment(seg, start, stop)
                  for start, stop in _thread_ranges(seg.size, threads)]
        parallel.run_parts([functools.partial(self._update_blocks, group, block)
                            for block in blocks])
        for key, value in blocks[0].scalar.items():
            seg.scalar[key][...] = value

    def _blocking_pays(self, group, seg):
        """Whether running ``_update`` block by block (to keep its operands in cache between
        its element-wise passes) is worth the extra calls for this segment."""
        return True

    def _update_blocks(self, group, seg):
        for block in seg.blocks():
            self._update(group, block)
            block.finish()

    def _flats_for(self, group):
        """The group's flat layouts for its parameters that have gradients (one per dtype),
        rebuilt when they no longer match."""
        with_grad = [p for p in group["params"] if p._grad is not None]
        cached = self._flat_cache.get(id(group))
        if (cached is not None and cached[0] is group
                and _layouts_match(cached[1], with_grad, self.state)
                and not (any(f.direct for f in cached[1])
                         and not self._update_reads_grad_only(group))):
            return cached[1]
        for p in with_grad:
            if getattr(p._grad, "is_sparse", False):
                raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
        fresh_ids = set()
        for p in with_grad:
            state = self.state[p]
            if self._needs_init(state):
                self._init_state(group, p, state)
                fresh_ids.add(id(p))
        by_dtype = {}
        for p in with_grad:
            by_dtype.setdefault(p._data.dtype, []).append(p)
        reads_grad_only = self._update_reads_grad_only(group)
        flats = [_Flat(ps, [self.state[p] for p in ps], self._flat_keys_for(group),
                       self._scalar_keys, fresh_ids,
                       direct=reads_grad_only and _few_large(ps)) for ps in by_dtype.values()]
        self._flat_cache[id(group)] = (group, flats)
        return flats

    def _flat_keys_for(self, group):
        return self._flat_keys

    def _update_reads_grad_only(self, group):
        """Whether ``_update`` leaves ``seg.grad`` unwritten for this group (so it may be the
        parameter's own ``.grad``); optimizers that know so override this."""
        return False


def _extract_names(param_group):
    tensors, names = [], []
    for param in param_group["params"]:
        if isinstance(param, tuple):
            names.append(param[0])
            tensors.append(param[1])
        else:
            tensors.append(param)
    param_group["params"] = tensors
    if names:
        if len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param names "
                             "are missing")
        param_group["param_names"] = names


def _cast(param, value, param_id, param_groups, key=None):
    """A deep copy of ``value`` with tensors on ``param``'s device; floating tensors other than
    ``step`` take the parameter's dtype."""
    if isinstance(value, Tensor):
        if key == "step":
            group = next((g for g in param_groups if param_id in g["params"]), {})
            if group.get("capturable", False) or group.get("fused", False):
                return value.to(dtype=_float32())
            return value
        if param.is_floating_point() and value.dtype != param.dtype:
            return value.to(dtype=param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast(param, v, param_id, param_groups, key=k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v, param_id, param_groups) for v in value)
    return value


def _float32():
    from .. import _dtype
    return _dtype.float32


_scratch_lock = threading.Lock()


def _thread_ranges(size, threads):
    """Contiguous (start, stop) ranges of ``size`` elements, one per thread, each a whole
    number of blocks."""
    blocks = -(-size // BLOCK_SIZE)
    per_thread = -(-blocks // min(threads, blocks))
    step = per_thread * BLOCK_SIZE
    return [(start, min(start + step, size)) for start in range(0, size, step)]


def _flat_view(array):
    """``array`` as a 1-D view, or None when it is not a contiguous NumPy array."""
    if isinstance(array, np.ndarray) and array.flags.c_contiguous:
        return array.reshape(-1)
    return None


def _few_large(params):
    """Whether ``params`` are large enough on average to update one by one."""
    total = sum(p._data.size for p in params)
    return total >= DIRECT_MIN_MEAN_SIZE * len(params)


def _layouts_match(flats, with_grad, state):
    if sum(len(f.params) for f in flats) != len(with_grad):
        return False
    ids = {id(p) for p in with_grad}
    for flat in flats:
        if not flat.still_valid(ids, state):
            return False
    return True


class _Flat:
    """One group's parameters (of one dtype) laid end to end, with their state."""

    def __init__(self, params, states, keys, scalar_keys, fresh_ids, direct=False):
        self.params = params
        self.direct = direct
        self.states = states
        self.shapes = [p._data.shape for p in params]
        self.sizes = [p._data.size for p in params]
        self.offsets = list(itertools.accumulate([0] + self.sizes))
        first = params[0]._data
        self.xp = xp = namespace_of(first)
        self.dtype = first.dtype
        total = self.offsets[-1]
        self.param = None
        self._scratch = []
        if direct:  # per-parameter state stays where it is; scratch per parameter
            self.grad = None
            self.buf = {key: None for key in keys}
            self._param_scratch = [[] for _ in params]
        else:
            self.grad = xp.empty(total, dtype=self.dtype)
            self.buf = {key: self._adopt_buffer(key, total) for key in keys}
        self.scalar = {key: self._adopt_scalars(key) for key in scalar_keys}
        self.fresh = [i for i, p in enumerate(params) if id(p) in fresh_ids]
        self._owned = [(st, key, st[key]) for st in states for key in (*keys, *scalar_keys)]

    def views(self, flat):
        return [flat[o:o + n].reshape(s) for o, n, s in zip(self.offsets, self.sizes, self.shapes)]

    def _adopt_buffer(self, key, total):
        flat = self.xp.empty(total, dtype=self.dtype)
        for st, view in zip(self.states, self.views(flat)):
            view[...] = st[key]._data
            st[key] = _make(view)
        return flat

    def _adopt_scalars(self, key):
        like = self.params[0]._data  # scalars (``step``) live with the parameters' data
        values = [to_device_of(st[key]._data, like) for st in self.states]
        vec = self.xp.asarray(self.xp.stack(values)).reshape(-1).copy()
        for i, st in enumerate(self.states):
            st[key] = _make(vec[i:i + 1].reshape(()))
        return vec

    def still_valid(self, ids, state):
        for p, st in zip(self.params, self.states):
            if id(p) not in ids or state.get(p) is not st:
                return False
        for st, key, t in self._owned:
            if st.get(key) is not t:
                return False
        return True

    def scalars_uniform(self):
        if len(self.params) == 1:
            return True
        for vec in self.scalar.values():
            if vec.min() != vec.max() and not self.xp.isnan(vec).any():
                return False
        return True

    def gather_grads(self, maximize):
        xp = self.xp
        xp.concatenate([p._grad._data.reshape(-1) for p in self.params], out=self.grad,
                       casting="same_kind")
        if maximize:
            xp.negative(self.grad, out=self.grad)

    def gather_params(self):
        if self.param is None:
            self.param = self.xp.empty_like(self.grad)
        self.xp.concatenate([p._data.reshape(-1) for p in self.params], out=self.param)
        return self.param

    def scratch(self, i):
        while len(self._scratch) <= i:
            self._scratch.append(self.xp.empty_like(self.grad))
        return self._scratch[i]

    def param_segments(self):
        if self.direct:
            grads = [p._grad._data for p in self.params]
            bufs = {k: [st[k]._data for st in self.states] for k in self.buf}
            scratch = self._param_scratch
        else:
            grads = self.views(self.grad)
            bufs = {k: self.views(v) for k, v in self.buf.items()}
            scratch = [[] for _ in self.params]
        for i, p in enumerate(self.params):
            yield _ParamSegment(self, p, grads[i], {k: v[i] for k, v in bufs.items()},
                                {k: v[i:i + 1] for k, v in self.scalar.items()}, i in self.fresh,
                                scratch[i])


class _FlatSegment:
    """A whole flat layout, seen by an optimizer's ``_update``."""

    def __init__(self, flat):
        self.flat = flat
        self.xp = flat.xp
        self.grad = flat.grad
        self.buf = flat.buf
        self.scalar = {k: v[:1] for k, v in flat.scalar.items()}
        self.size = flat.offsets[-1]
        self._gathered = False

    def blockable(self):
        return all(_flat_view(p._data) is not None for p in self.flat.params)

    def param_pieces(self, start, stop):
        """(start, stop, 1-D parameter view) of the parameters overlapping [start, stop),
        with positions relative to ``start``."""
        f = self.flat
        pieces = []
        for p, lo, hi in zip(f.params, f.offsets, f.offsets[1:]):
            a, b = max(lo, start), min(hi, stop)
            if a < b:
                pieces.append((a - start, b - start, p._data.reshape(-1)[a - lo:b - lo]))
        return pieces

    def fresh_ranges(self):
        f = self.flat
        return [(f.offsets[i], f.offsets[i + 1]) for i in f.fresh]

    def param(self):
        """The parameters as one array, to read and update in place."""
        if not self._gathered:
            self.flat.gather_params()
            self._gathered = True
        return self.flat.param

    def sub_param(self, update):
        """Parameters -= update."""
        if self._gathered:
            self.flat.param -= update
            return
        for p, view in zip(self.flat.params, self.flat.views(update)):
            p._data -= view

    def add_to_param(self, update, alpha):
        """Parameters += alpha * update (``add_(update, alpha=alpha)``)."""
        if self._gathered:
            add_scaled_(self.xp, self.flat.param, alpha, update)
            return
        for p, view in zip(self.flat.params, self.flat.views(update)):
            add_scaled_(self.xp, p._data, alpha, view)

    def scratch(self, i):
        return self.flat.scratch(i)

    def fresh_views(self, key):
        """(state view, grad view) pairs of the parameters whose state was just created."""
        f = self.flat
        return [(f.buf[key][f.offsets[i]:f.offsets[i + 1]], self.grad[f.offsets[i]:f.offsets[i + 1]])
                for i in f.fresh]

    def finish(self):
        f = self.flat
        for vec in f.scalar.values():
            vec[1:] = vec[0]
        if self._gathered:
            for p, view in zip(f.params, f.views(f.param)):
                p._data[...] = view


class _ParamSegment:
    """One parameter of a flat layout, used when per-parameter scalar state differs."""

    def __init__(self, flat, p, grad, buf, scalar, fresh, scratch):
        self.xp = flat.xp
        self.p = p
        self.grad = grad
        self.buf = buf
        self.scalar = scalar
        self.size = p._data.size
        self._fresh = fresh
        self._scratch = scratch

    def blockable(self):
        return all(_flat_view(a) is not None
                   for a in (self.p._data, self.grad, *self.buf.values()))

    def param_pieces(self, start, stop):
        return [(0, stop - start, self.p._data.reshape(-1)[start:stop])]

    def fresh_ranges(self):
        return [(0, self.size)] if self._fresh else []

    def param(self):
        return self.p._data

    def sub_param(self, update):
        self.p._data -= update

    def add_to_param(self, update, alpha):
        add_scaled_(self.xp, self.p._data, alpha, update)

    def scratch(self, i):
        while len(self._scratch) <= i:
            self._scratch.append(self.xp.empty(self.p._data.shape, dtype=self.p._data.dtype))
        return self._scratch[i]

    def fresh_views(self, key):
        return [(self.buf[key], self.grad)] if self._fresh else []


class _BlockSegment:
    """Elements [start, stop) of a segment, updated by one thread; its scalar state is a private
    copy (every block computes the same), written back once all blocks are done."""

    def __init__(self, seg, start, stop, scalar=None):
        self.xp = seg.xp
        self.seg = seg
        self.start, self.stop = start, stop
        self.grad = _flat_view(seg.grad)[start:stop]
        self.buf = {k: _flat_view(v)[start:stop] for k, v in seg.buf.items()}
        self.scalar = {k: v.copy() for k, v in seg.scalar.items()} if scalar is None else scalar
        self._param = None

    def blocks(self):
        """This range in BLOCK_SIZE pieces, sharing this block's scalar state."""
        for start in range(self.start, self.stop, BLOCK_SIZE):
            block = _BlockSegment(self.seg, start, min(start + BLOCK_SIZE, self.stop),
                                  {k: v.copy() for k, v in self.scalar.items()})
            yield block
        for key, value in block.scalar.items():
            self.scalar[key][...] = value

    def _pieces(self):
        return self.seg.param_pieces(self.start, self.stop)

    def param(self):
        """The block's parameters as one array, to read and update in place."""
        if self._param is None:
            pieces = self._pieces()
            if len(pieces) == 1:
                self._param = pieces[0][2]
            else:
                self._param = self.xp.concatenate([view for _, _, view in pieces])
        return self._param

    def sub_param(self, update):
        if self._param is not None:
            self._param -= update
            return
        for lo, hi, view in self._pieces():
            view -= update[lo:hi]

    def add_to_param(self, update, alpha):
        if self._param is not None:
            add_scaled_(self.xp, self._param, alpha, update)
            return
        for lo, hi, view in self._pieces():
            add_scaled_(self.xp, view, alpha, update[lo:hi])

    def scratch(self, i):
        with _scratch_lock:
            whole = self.seg.scratch(i)
        return _flat_view(whole)[self.start:self.stop]

    def fresh_views(self, key):
        views = []
        for lo, hi in self.seg.fresh_ranges():
            a, b = max(lo, self.start) - self.start, min(hi, self.stop) - self.start
            if a < b:
                views.append((self.buf[key][a:b], self.grad[a:b]))
        return views

    def finish(self):
        """Write a gathered copy of the parameters back."""
        if self._param is not None and len(self._pieces()) > 1:
            for lo, hi, view in self._pieces():
                view[...] = self._param[lo:hi]


def _to_scalar(x):
    """A Python number from a number or a one-element tensor."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def _call_closure(closure):
    """Re-evaluate the model through ``closure`` with grad enabled; its loss, or None."""
    if closure is None:
        return None
    from ..autograd.grad_mode import enable_grad
    with enable_grad():
        return closure()


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check(ok, message):
    if not ok:
        raise ValueError(message)


def _check_betas(betas):
    _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")


def _zeros_like(p):
    return _make(namespace_of(p._data).zeros_like(p._data))


def _step_tensor(value=0.0):
    return _make(np.array(value, dtype=np.float32))


Optimizer.step = _with_hooks(Optimizer.step)
