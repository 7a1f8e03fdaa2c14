"""ember.func: composable function transforms, as torch.func.

``vmap`` maps a function over a dimension of its inputs with a batching rule per op family;
``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` and ``hessian`` differentiate functions in
reverse mode, ``jvp``, ``jacfwd`` and ``linearize`` in forward mode (``ember.autograd.forward_ad``);
``functional_call`` runs a module with given parameters and buffers, and ``stack_module_state``
stacks the states of several modules for ensembling with ``vmap``. The transforms compose:
``vmap(grad(f))`` gives per-sample gradients.
"""
from ._vmap import vmap
from ._grad import grad, grad_and_value, vjp, jacrev, hessian
from ._forward_transforms import jvp, jacfwd, linearize
from ._functional_call import functional_call, stack_module_state
from ._batch_norm_replacement import debug_unwrap, replace_all_batch_norm_modules_
from . import _rules_pointwise, _rules_dims, _rules_shape, _rules_linalg, _rules_nn  # noqa: F401
from . import _rules_random  # noqa: F401

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jacrev", "hessian", "jvp", "jacfwd",
           "linearize", "functional_call",
           "stack_module_state", "debug_unwrap", "replace_all_batch_norm_modules_"]
