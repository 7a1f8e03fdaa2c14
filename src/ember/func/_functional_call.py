"""``functional_call`` (a module run with given parameters and buffers) and
``stack_module_state`` (the states of several modules stacked, for ensembles under vmap)."""
import contextlib

from .._tensor import Tensor

__all__ = ["functional_call", "stack_module_state"]


def _owner(module, name):
    parts = name.split(".")
    for part in parts[:-1]:
        module = getattr(module, part)
    return module, parts[-1]


@contextlib.contextmanager
def _reparametrize(module, tensors, tie_weights, strict):
    """Swap ``tensors`` (name -> tensor) into ``module`` for the duration of the block."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    if strict:
        unexpected = sorted(k for k in tensors if k not in named)
        missing = sorted(k for k in named if k not in tensors)
        if tie_weights:
            given = {id(named[k]) for k in tensors if k in named}
            missing = [k for k in missing if id(named[k]) not in given]
        if unexpected or missing:
            lines = []
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n"
                               + "\n".join(lines))
    values = dict(tensors)
    if tie_weights:
        by_id = {id(named[k]): v for k, v in tensors.items() if k in named}
        for k, t in named.items():
            if k not in values and id(t) in by_id:
                values[k] = by_id[id(t)]
    saved = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            for store in ("_parameters", "_buffers"):
                d = owner.__dict__.get(store)
                if d is not None and attr in d:
                    saved.append((d, attr, d[attr]))
                    d[attr] = value
                    break
            else:
                saved.append((owner.__dict__, attr, owner.__dict__.get(attr, _ABSENT)))
                owner.__dict__[attr] = value
        yield
    finally:
        for d, attr, old in reversed(saved):
            if old is _ABSENT:
                d.pop(attr, None)
            else:
                d[attr] = old


_ABSENT = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Calls ``module`` with its parameters and buffers replaced by the tensors of
    ``parameter_and_buffer_dicts`` (a dict from names as in ``named_parameters`` to tensors,
    or a tuple of such dicts), then restores them. ``args`` (a tuple, or one argument) and
    ``kwargs`` are passed to the module. With ``tie_weights`` a tensor given for one of tied
    names is used for all of them; ``strict`` requires exactly the module's names."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        tensors, seen = {}, set()
        repeated = []
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in seen:
                    repeated.append(k)
                seen.add(k)
                tensors[k] = v
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, tensors, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def _stacked(tensors, name):
    from ..ops.shape import stack
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack([t.detach() if isinstance(t, Tensor) else t for t in tensors])
    if flags == {True}:
        result.requires_grad_()
    return result


def stack_module_state(models):
    """``(params, buffers)``: for each parameter and buffer name of the (identically built)
    ``models``, their tensors stacked along a new dimension 0; stacked parameters are new
    leaves that require grad when the models' parameters do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {name: _stacked([dict(m.named_parameters())[name] for m in models], name)
              for name, _ in models[0].named_parameters()}
    buffers = {name: _stacked([dict(m.named_buffers())[name] for m in models], name)
               for name, _ in models[0].named_buffers()}
    return params, buffers
