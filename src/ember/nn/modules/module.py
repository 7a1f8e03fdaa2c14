"""``Module``: the base class of every layer, as torch's ``nn.Module``."""
import functools
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.grad_mode import state as _grad_state
from ..._hooks import RemovableHandle
from ...autograd.graph import Node
from ..parameter import Parameter, is_lazy

__all__ = ["Module", "RemovableHandle"]


def _typename(obj):
    """torch.typename: the qualified name of ``obj``'s type (a tensor's legacy type string)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


# Hooks of every module (torch's ``register_module_forward_pre_hook`` and
# ``register_module_forward_hook``); they run before each module's own.
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    """Register a forward pre-hook ``hook(module, args)`` common to all modules; it may return
    new inputs. Returns a handle that removes it (``handle.remove()``)."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook):
    """Register a forward hook ``hook(module, args, output)`` common to all modules; it may
    return a new output. Returns a handle that removes it (``handle.remove()``)."""
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_, num_spaces):
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
_HOOK_DICTS = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
               "_backward_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
               "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


class Module:
    """Base class for all neural network modules. Models subclass it, assign parameters and
    submodules as attributes in ``__init__`` and compute their output in ``forward``."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        for name in _HOOK_DICTS:
            setattr_(self, name, OrderedDict())

    def forward(self, *input):
        """Defines the computation performed at every call. Should be overridden by all
        subclasses."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_pre_hooks or _global_forward_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    _call_impl = __call__

    def compile(self, *args, **kwargs):
        """Compile this module's ``forward`` in place with ``ember.compile`` (the same
        arguments); hooks keep running around it. Unlike ``ember.compile(module)``, the module
        and its ``state_dict`` keys stay as they are."""
        from ... import compile as _compile
        forward = type(self).forward.__get__(self, type(self))
        self.__dict__["forward"] = _compile(forward, *args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        for hook in list(_global_forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hook = None
        if (self._backward_hooks or self._backward_pre_hooks) and _grad_state.grad_enabled:
            backward_hook = _BackwardHook(self, len(args))
            args = backward_hook.wrap_inputs(args)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            self._call_always_called_hooks(args, kwargs)
            raise
        for hook in list(_global_forward_hooks.values()):
            out = hook(self, args, result)
            if out is not None:
                result = out
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                out = hook(self, args, kwargs, result)
            else:
                out = hook(self, args, result)
            if out is not None:
                result = out
        if backward_hook is not None:
            result = backward_hook.wrap_outputs(result)
        return result

    def _call_always_called_hooks(self, args, kwargs):
        """Forward hooks registered with ``always_call=True`` run even when forward raised
        (with ``None`` as the output); their own errors are turned into warnings."""
        import warnings
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id not in self._forward_hooks_always_called:
                continue
            try:
                if hook_id in self._forward_hooks_with_kwargs:
                    hook(self, args, kwargs, None)
                else:
                    hook(self, args, None)
            except Exception as e:
                warnings.warn("module forward hook with ``always_call=True`` raised an exception "
                              f"that was silenced as another error was raised in forward: {e}",
                              stacklevel=3)

    # -- registration ----------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer to the module: state that is not a parameter (e.g. BatchNorm's
        ``running_mean``); part of ``state_dict`` unless ``persistent`` is False."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(ember Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter to the module, accessible as an attribute under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                                "(ember.nn.Parameter or None required)")
            if param.grad_fn is not None:
                raise ValueError(
                    f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                    f"be created explicitly. To express '{name}' as a function of another Tensor, "
                    "compute the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module, accessible as an attribute under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule given by the dotted path ``target`` (``""`` is the module itself)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Set the submodule given by the dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        *path, last = target.split(".")
        parent = self.get_submodule(".".join(path))
        if strict and not hasattr(parent, last):
            raise AttributeError(parent._get_name() + " has no attribute `" + last + "`")
        if hasattr(parent, last) and not isinstance(getattr(parent, last), Module):
            raise AttributeError("`" + last + "` is not an nn.Module")
        setattr(parent, last, module)

    def get_parameter(self, target):
        """The parameter given by the dotted path ``target``."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer given by the dotted path ``target``."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return getattr(mod, buffer_name)

    def get_extra_state(self):
        """Extra state for ``state_dict``; override together with :meth:`set_extra_state`."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue.")

    def set_extra_state(self, state):
        """Set the extra state held in a loaded ``state_dict``."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue.")

    def _has_extra_state(self):
        return getattr(type(self), "get_extra_state", Module.get_extra_state) is not Module.get_extra_state

    # -- attribute protocol ------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            members = d.get(store)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_member(name, d, self._buffers, self._modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(ember.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                self._remove_member(name, d, self._parameters, self._buffers)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(ember.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if buffers is not None and value.__class__ is Tensor and value.__dict__.get("_is_buffer"):
                    self._remove_member(name, d, self._parameters, self._modules)
                    self.register_buffer(name, value, value.persistent)   # an nn.Buffer
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(ember.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def _remove_member(self, name, *stores):
        for store in stores:
            store.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # -- iteration over members ----------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """An iterator over module parameters (of submodules too when ``recurse``)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over module parameters, yielding both the name and the parameter."""
        return self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """An iterator over module buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over module buffers, yielding both the name and the buffer."""
        return self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def children(self):
        """An iterator over immediate children modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """An iterator over immediate children modules, yielding name and module."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        """An iterator over all modules in the network (this one first)."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """An iterator over all modules in the network, yielding name and module."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            submodule_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # -- modes and gradients -------------------------------------------------------------------
    def train(self, mode=True):
        """Set the module (and its descendants) in training mode (``mode=False``: evaluation)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Set the module in evaluation mode: ``self.train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Change whether autograd records operations on this module's parameters."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters (to None, or to zero)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                grad = p.grad
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def apply(self, fn):
        """Apply ``fn`` to every submodule (children first) and then to self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- conversions ---------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        """Apply ``fn`` to every parameter, gradient and buffer; parameters keep their identity
        (their data is replaced), as torch does."""
        if recurse:
            for module in self.children():
                module._apply(fn, recurse)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param.data = fn(param)
            if param.grad is not None:
                with no_grad():
                    param.grad.data = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast the parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``, ``to(memory_format=ember.channels_last)`` (4-D
        parameters and buffers get NHWC strides). Only floating point and complex tensors change
        dtype. Modifies the module in place."""
        from ...ops.convert import _parse_to_args
        dtype, device, _ = _parse_to_args(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        fmt = kwargs.get("memory_format")

        def convert(t):
            if fmt is not None and t.dim() in (4, 5):
                t = t.contiguous(memory_format=fmt)
            try:
                if t.is_floating_point() or t.is_complex():
                    return t.to(device=device, dtype=dtype)
                return t.to(device=device)
            except NotImplementedError as e:
                if not t.is_meta:
                    raise
                raise NotImplementedError(f"{e} Please use ember.nn.Module.to_empty() instead when "
                                          "moving module from meta to a different device.") from None
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Move the parameters and buffers to ``device`` without copying their values: each
        becomes an uninitialized tensor of its shape and dtype there (the way off the meta
        device; parameters keep their identity)."""
        from ...ops.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        """Move all parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move all parameters and buffers to the GPU."""
        return self._apply(lambda t: t.to("cuda" if device is None else device))

    def type(self, dst_type):
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Cast all floating point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Cast all floating point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Cast all floating point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Cast all floating point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # -- state dict ----------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state():
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """A dictionary of the module's whole state: parameters and persistent buffers, keyed
        by their dotted names."""
        if args:
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {"version": self._version})
            if result is not None:
                destination = result
        return destination

    def _local_state(self):
        persistent = ((k, v) for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set)
        return {k: v for k, v in itertools.chain(self._parameters.items(), persistent)
                if v is not None}

    def _check_state_dict(self, state_dict, prefix, strict, missing_keys, unexpected_keys,
                          error_msgs, copies):
        """Match ``state_dict`` against this module's own members (not its children's); list
        the copies to make and every problem found."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, {}, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = self._local_state()
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected ember.Tensor '
                                  f"or Tensor-like object from checkpoint but received {type(value)}")
                continue
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]
            if not is_lazy(param) and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            copies.append((self, name, param, value, key))
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state():
            if extra_key in state_dict:
                copies.append((self, None, None, state_dict[extra_key], extra_key))
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)
                    if (head[0] not in self._modules) if len(head) > 1 else (head[0] not in local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module and its
        descendants. With ``strict``, the keys must match :meth:`state_dict`'s exactly. Returns
        ``(missing_keys, unexpected_keys)``. Nothing is changed when an error is raised."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs, copies = [], [], [], []
        state_dict = OrderedDict(state_dict)

        def check(module, local_state_dict, prefix=""):
            module._check_state_dict(local_state_dict, prefix, True, missing_keys,
                                     unexpected_keys, error_msgs, copies)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    check(child, {k: v for k, v in local_state_dict.items()
                                  if k.startswith(child_prefix)}, child_prefix)

        check(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        for module, name, param, value, key in copies:
            if name is not None and param.is_meta and not value.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a "
                              "meta parameter in the current model, which is a no-op. (Did you mean "
                              "to pass `assign=True` to assign items in the state dictionary to their "
                              "corresponding key in the module instead of copying them in place?)",
                              stacklevel=2)
            _load_member(module, name, param, value, assign)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for module in self.modules():
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, incompatible)
        return incompatible

    # -- hooks -----------------------------------------------------------------------------------
    def _add_hook(self, store, hook, prepend=False, kwargs_store=None, with_kwargs=False,
                  extra=()):
        handle = RemovableHandle(store, extra_dict=[d for d in ((kwargs_store,) + tuple(extra))
                                                    if d is not None])
        store[handle.id] = hook
        if with_kwargs:
            kwargs_store[handle.id] = True
        if prepend:
            store.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Register ``hook(module, args)`` (or ``hook(module, args, kwargs)`` with
        ``with_kwargs``) to run before ``forward``; it may return new inputs."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend,
                              self._forward_pre_hooks_with_kwargs, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Register ``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``)
        to run after ``forward``; it may return a new output."""
        handle = self._add_hook(self._forward_hooks, hook, prepend, self._forward_hooks_with_kwargs,
                                with_kwargs, extra=(self._forward_hooks_always_called,))
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """Register ``hook(module, grad_input, grad_output)``, called when the gradients with
        respect to the module's inputs are computed; it may return new ``grad_input``."""
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Register ``hook(module, grad_output)``, called when the gradients with respect to the
        module's outputs are computed; it may return new ``grad_output``."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated in torch; here the same as :meth:`register_full_backward_hook`."""
        return self.register_full_backward_hook(hook)

    def register_state_dict_pre_hook(self, hook):
        """Register ``hook(module, prefix, keep_vars)`` to run before ``state_dict``."""
        return self._add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """Register ``hook(module, state_dict, prefix, local_metadata)`` to run after
        ``state_dict``."""
        return self._add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """Register ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` to run before loading this module's state."""
        return self._add_hook(self._load_state_dict_pre_hooks,
                              functools.partial(hook, self))

    def register_load_state_dict_post_hook(self, hook):
        """Register ``hook(module, incompatible_keys)`` to run after ``load_state_dict``."""
        return self._add_hook(self._load_state_dict_post_hooks, hook)

    # -- printing ------------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The module's extra representation: override to print layer options."""
        return ""

    def __repr__(self):
        extra_repr = self.extra_repr()
        extra_lines = extra_repr.split("\n") if extra_repr else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

    def share_memory(self):
        """Moves the parameters, their gradients and the buffers to shared memory (in place);
        returns the module."""
        from ...multiprocessing import _module_share_memory
        return _module_share_memory(self)


def _load_member(module, name, param, value, assign):
    """Copy (or with ``assign``, set) one checked value of a loaded state dict."""
    if name is None:
        module.set_extra_state(value)
        return
    with no_grad():
        if assign:
            if isinstance(param, Parameter):
                value = (value.requires_grad_(param.requires_grad) if isinstance(value, Parameter)
                         else Parameter(value, requires_grad=param.requires_grad))
            setattr(module, name, value)
        else:
            param.copy_(value)


# ----------------------------------------------------------------------------------------------
# Full backward hooks: identity nodes around the module's inputs and outputs


class BackwardHookFunctionBackward(Node):
    """An identity node whose backward calls a module's backward (pre-)hooks."""

    _has_hooks = True  # the module's hooks are user code

    def backward(self, *grads):
        return self.on_grads(grads)


class _BackwardHook:
    """Puts an identity node on the module's tensor inputs and outputs: the output node sees
    ``grad_output`` (backward pre-hooks run there), the input node sees ``grad_input`` (full
    backward hooks run there)."""

    def __init__(self, module, n_inputs):
        self.module = module
        self.n_inputs = n_inputs
        self.input_positions = None
        self.grad_output = None

    def wrap_inputs(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in positions]
        if not any(t._requires_grad for t in tensors):
            return args
        self.input_positions = positions
        self.input_tensors = [t.detach() for t in tensors]  # for zeros where no grad comes
        wrapped = _identity(tensors, self._on_grad_input)
        args = list(args)
        for i, t in zip(positions, wrapped):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, result):
        single = isinstance(result, Tensor)
        outputs = (result,) if single else result
        if not isinstance(outputs, (tuple, list)):
            return result
        positions = [i for i, a in enumerate(outputs) if isinstance(a, Tensor)]
        tensors = [outputs[i] for i in positions]
        if not any(t._requires_grad for t in tensors):
            return result
        self.n_outputs = len(tensors)
        wrapped = _identity(tensors, self._on_grad_output)
        outputs = list(outputs)
        for i, t in zip(positions, wrapped):
            outputs[i] = t
        if single:
            return outputs[0]
        if type(result) is tuple or type(result) is list:
            return type(result)(outputs)
        return type(result)(*outputs)  # a named tuple

    def _on_grad_output(self, grads):
        module = self.module
        grads = tuple(grads) + (None,) * (self.n_outputs - len(grads))
        for hook in list(module._backward_pre_hooks.values()):
            result = hook(module, grads)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grads):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, "
                                       f"got {len(result)}, but expected {len(grads)}")
                grads = result
        self.grad_output = grads
        if self.input_positions is None:
            grad_input = (None,) * self.n_inputs
            for hook in list(module._backward_hooks.values()):
                if hook(module, grad_input, grads) is not None:
                    raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                       "should always return None or None for all gradients.")
        return grads

    def _on_grad_input(self, grads):
        module = self.module
        from ...ops.creation import zeros_like
        grad_input = [None] * self.n_inputs
        for k, (i, t) in enumerate(zip(self.input_positions, self.input_tensors)):
            g = grads[k] if k < len(grads) else None
            grad_input[i] = zeros_like(t) if g is None else g  # torch materializes zeros
        grad_input = tuple(grad_input)
        for hook in list(module._backward_hooks.values()):
            result = hook(module, grad_input, self.grad_output)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(result)}, but expected {len(grad_input)}")
                grad_input = result
        return tuple(grad_input[i] for i in self.input_positions)


def _identity(tensors, on_grads):
    """New aliases of ``tensors`` produced by one identity node that calls ``on_grads``."""
    from ...ops._common import record
    out = [t._alias() for t in tensors]
    node = record(BackwardHookFunctionBackward, tensors,
                  *(alias if t._requires_grad else None for t, alias in zip(tensors, out)))
    if node is not None:
        node.on_grads = on_grads
    return out

