"""``Optimizer``: the base class of all optimizers. Its step runs ``_update`` over the flat
buffers of ``optim/_flat_buffers.py`` (each group's parameters and state laid end to end)."""
import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict

import numpy as np

from .._backend import namespace_of
from .._backend.sparse_coo import SparseCOOArray
from .._tensor import Tensor, _make
from ..autograd.grad_mode import no_grad
from .._hooks import add_hook
from . import _flat_buffers
from ..autograd.graph import bump_version

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]

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
        state differs) and bump the parameters' versions; parameters with sparse gradients
        step one by one through ``_sparse_update``."""
        with no_grad():
            for group in self.param_groups:
                held = [(p, p._grad) for p in group["params"]
                        if p._grad is not None and p._grad._data.__class__ is SparseCOOArray
                        ] if SparseCOOArray.made else ()
                if held:
                    self._refuse_sparse_grads(group)
                    for p, _ in held:   # out of the flat layouts for this step
                        p._grad = None
                try:
                    self._step_flats(group)
                finally:
                    for p, grad in held:
                        p._grad = grad
                for p, grad in held:
                    self._sparse_update(group, p, grad._data)
                    bump_version(p)

    def _step_flats(self, group):
        for flat in self._flats_for(group):
            if flat.direct:
                for seg in flat.param_segments():
                    self._run_update(group, seg)
            else:
                self._update_gathered(group, flat)
            flat.fresh = ()
            for p in flat.params:
                bump_version(p)

    # torch's message when this optimizer refuses sparse gradients (None: it takes them)
    _sparse_refusal = "{name} does not support sparse gradients"

    def _refuse_sparse_grads(self, group):
        """Raise torch's error, before any parameter changes, where the optimizer (or this
        group's options) does not take sparse gradients."""
        if self._sparse_refusal is not None:
            raise RuntimeError(self._sparse_refusal.format(name=type(self).__name__))

    def _sparse_update(self, group, p, grad):
        """One step of parameter ``p`` from its sparse gradient ``grad`` (a ``SparseCOOArray``)."""
        raise NotImplementedError(f"{type(self).__name__} has no step for sparse gradients")

    def _update_gathered(self, group, flat):
        flat.gather_grads(group.get("maximize", False))
        if flat.scalars_uniform():
            seg = _flat_buffers.FlatSegment(flat)
            self._run_update(group, seg)
            seg.finish()
        else:
            for seg in flat.param_segments():
                self._run_update(group, seg)

    def _run_update(self, group, seg):
        """``_update`` on ``seg``: in cache-sized blocks when it is large."""
        if (seg.size < _flat_buffers.BLOCKED_MIN_SIZE or not seg.blockable()
                or not self._blocking_pays(group, seg)):
            self._update(group, seg)
            return
        whole = _flat_buffers.BlockSegment(seg, 0, seg.size)
        for block in whole.blocks():
            self._update(group, block)
            block.finish()
        for key, value in whole.scalar.items():
            seg.scalar[key][...] = value

    def _blocking_pays(self, group, seg):
        """Whether running ``_update`` block by block (to keep its operands in cache between
        its element-wise passes) is worth the extra calls for this segment."""
        return True

    def _flats_for(self, group):
        """The group's flat layouts for its parameters that have gradients (one per dtype),
        rebuilt when they no longer match."""
        with_grad = [p for p in group["params"] if p._grad is not None]
        cached = self._flat_cache.get(id(group))
        if (cached is not None and cached[0] is group
                and _flat_buffers.layouts_match(cached[1], with_grad, self.state)
                and not (any(f.direct for f in cached[1])
                         and not self._update_reads_grad_only(group))):
            return cached[1]
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
        flats = [_flat_buffers.Flat(ps, [self.state[p] for p in ps], self._flat_keys_for(group),
                                    self._scalar_keys, fresh_ids,
                                    direct=reads_grad_only and _flat_buffers.few_large(ps))
                 for ps in by_dtype.values()]
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
