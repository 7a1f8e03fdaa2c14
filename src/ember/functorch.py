"""functorch's names, over ember.func (``import ember.functorch as functorch``).

``vmap``, ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``, ``jvp``, ``jacfwd``, ``hessian`` and
``functional_call`` are ember.func's; ``make_functional``, ``make_functional_with_buffers`` and
``combine_state_for_ensemble`` are functorch's older way to run a module as a function of its
parameters (a ``FunctionalModule`` called as ``fmodel(params, *args)``).
"""
import copy

from .func import (vmap, grad, grad_and_value, vjp, jacrev, jvp, jacfwd, hessian,
                   functional_call, stack_module_state)
from .nn.modules.module import Module

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "hessian",
           "functional_call",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "FunctionalModule", "FunctionalModuleWithBuffers"]


def _stateless_copy(model):
    """A copy of ``model`` that shares nothing with it (its tensors are replaced at each call)."""
    return copy.deepcopy(model)


class FunctionalModule(Module):
    """``model`` as a function of its parameters: ``fmodel(params, *args, **kwargs)``."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        names = tuple(name for name, _ in model.named_parameters())
        params = tuple(p for _, p in model.named_parameters())
        if disable_autograd_tracking:
            params = tuple(p.detach() for p in params)
        return FunctionalModule(_stateless_copy(model), names), params

    def forward(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)),
                               args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """``model`` as a function of its parameters and buffers:
    ``fmodel(params, buffers, *args, **kwargs)``."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        names = tuple(name for name, _ in model.named_parameters())
        params = tuple(p for _, p in model.named_parameters())
        buffer_names = tuple(name for name, _ in model.named_buffers())
        buffers = tuple(b for _, b in model.named_buffers())
        if disable_autograd_tracking:
            params = tuple(p.detach() for p in params)
        return (FunctionalModuleWithBuffers(_stateless_copy(model), names, buffer_names),
                params, buffers)

    def forward(self, params, buffers, *args, **kwargs):
        tensors = dict(zip(self.param_names, params))
        tensors.update(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, tensors, args, kwargs)


def make_functional(model, disable_autograd_tracking=False):
    """``(fmodel, params)``: ``fmodel(params, *args)`` runs ``model`` with ``params`` (a tuple
    in ``named_parameters`` order). A model with buffers needs
    ``make_functional_with_buffers``."""
    if list(model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """``(fmodel, params, buffers)``: ``fmodel(params, buffers, *args)`` runs ``model``."""
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(models):
    """``(fmodel, params, buffers)`` for an ensemble of identically built ``models``: their
    parameters and buffers stacked along a new dimension 0, to be used with ``vmap``."""
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    fmodel, _, _ = make_functional_with_buffers(models[0])
    params, buffers = stack_module_state(models)
    return fmodel, tuple(params.values()), tuple(buffers.values())
