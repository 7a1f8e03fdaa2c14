r"""Pruning methods (torch.nn.utils.prune).

Pruning reparametrizes a module's parameter ``name``: the original values move to the
parameter ``name + '_orig'``, a binary mask is kept as the buffer ``name + '_mask'``, and a
forward pre-hook (the pruning method itself) sets the plain attribute ``name`` to
``mask * orig`` before every forward. Pruning the same parameter again combines the masks in
a :class:`PruningContainer`.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ...ops.creation import ones_like, zeros_like
from ...ops.random import rand, rand_like

__all__ = [
    "BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
    "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
    "l1_unstructured", "random_structured", "ln_structured", "global_unstructured",
    "custom_from_mask", "remove", "is_pruned",
]


class BasePruningMethod(ABC):
    r"""Abstract base class for creation of new pruning techniques.

    Provides a skeleton for customization requiring the overriding of methods
    such as :meth:`compute_mask` and :meth:`apply`.
    """

    _tensor_name = None

    def __call__(self, module, inputs):
        r"""Multiply the mask (``module[name + '_mask']``) into the original tensor
        (``module[name + '_orig']``) and store the result into ``module[name]``."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        r"""Compute and return a mask for the input tensor ``t``, on top of ``default_mask``
        (a mask of ones if the tensor has not been pruned yet), of the same dims as ``t``."""

    def apply_mask(self, module):
        r"""The pruned version of the tensor: the mask times the original tensor, both
        fetched from ``module``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        r"""Add pruning on the fly and reparameterization of a tensor.

        Adds the forward pre-hook that enables pruning on the fly and the reparameterization
        of a tensor in terms of the original tensor and the pruning mask.

        Args:
            module (nn.Module): module containing the tensor to prune
            name (str): parameter name within ``module`` on which pruning will act.
            args: arguments passed on to a subclass of :class:`BasePruningMethod`
            importance_scores (Tensor): tensor of importance scores (of same shape as module
                parameter) used to compute mask for pruning. If unspecified or None, the
                parameter will be used in its place.
            kwargs: keyword arguments passed on to a subclass of :class:`BasePruningMethod`
        """
        method = _method_joining_earlier_pruning(cls, module, name, args, kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig

        first_pruning = not isinstance(method, PruningContainer)
        if first_pruning:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_pruning:
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        r"""Compute and return a pruned version of input tensor ``t`` according to the
        pruning rule specified in :meth:`compute_mask`.

        Args:
            t (Tensor): tensor to prune (of same dimensions as ``default_mask``).
            importance_scores (Tensor): tensor of importance scores (of same shape as ``t``)
                used to compute mask for pruning ``t``; ``t`` itself if None.
            default_mask (Tensor, optional): mask from previous pruning iteration, if any.
                If None, default to a mask of ones.
        """
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    "importance_scores should have the same shape as tensor t, "
                    f"got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        r"""Remove the pruning reparameterization from a module.

        The pruned parameter named ``name`` remains permanently pruned, and the parameter
        named ``name+'_orig'`` is removed from the parameter list. Similarly, the buffer named
        ``name+'_mask'`` is removed from the buffers.

        Note:
            Pruning itself is NOT undone or reversed!
        """
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _method_joining_earlier_pruning(cls, module, name, args, kwargs):
    """A new ``cls(*args, **kwargs)`` for ``module.name``, combined in a PruningContainer with
    the pruning hook already on that tensor (which leaves the module's hooks)."""
    earlier = [(key, hook) for key, hook in module._forward_pre_hooks.items()
               if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(earlier) > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
            f"{module}. Use a PruningContainer.")
    for key, _ in earlier:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not earlier:
        return method
    old_method = earlier[0][1]
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        return old_method
    container = PruningContainer(old_method)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """Container holding a sequence of pruning methods for iterative pruning.

    Keeps track of the order in which pruning methods are applied and handles combining
    successive pruning calls.

    Accepts as argument an instance of a BasePruningMethod or an iterable of them.
    """

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        r"""Add a child pruning ``method`` to the container.

        Args:
            method (subclass of BasePruningMethod): child pruning method to be added to the
                container.
        """
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        r"""Apply the latest ``method`` by computing the new partial masks and returning its
        combination with the ``default_mask``.

        The new partial mask is computed on the entries or channels that were not zeroed out
        by the ``default_mask``, as the latest method's ``PRUNING_TYPE`` says:

        * for 'unstructured', the mask will be computed from the raveled list of nonmasked
          entries;
        * for 'structured', the mask will be computed from the nonmasked channels in the
          tensor;
        * for 'global', the mask will be computed across all entries.
        """
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            where = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have '
                                     "the attribute `dim` defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            other_dims = [d for d in range(n_dims) if d != dim]
            keep_channel = default_mask.sum(dim=other_dims) != 0
            where = tuple(keep_channel if d == dim else slice(None) for d in range(n_dims))
        elif kind == "global":
            where = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial_mask = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    r"""Utility pruning method that does not prune any units but generates the pruning
    parametrization with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        r"""Add pruning on the fly and reparameterization of the tensor ``name`` of
        ``module``."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    r"""Prune (currently unpruned) units in a tensor at random.

    Args:
        amount (int or float): quantity of parameters to prune. If ``float``, should be
            between 0.0 and 1.0 and represent the fraction of parameters to prune. If ``int``,
            it represents the absolute number of parameters to prune.
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            prob = rand_like(t)
            topk = prob.view(-1).topk(k=nparams_toprune)
            mask.view(-1)[topk.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        r"""Add pruning on the fly and reparameterization of the tensor ``name`` of
        ``module``, pruning ``amount`` of its (currently unpruned) units at random."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    r"""Prune (currently unpruned) units in a tensor by zeroing out the ones with the lowest
    L1-norm.

    Args:
        amount (int or float): quantity of parameters to prune. If ``float``, should be
            between 0.0 and 1.0 and represent the fraction of parameters to prune. If ``int``,
            it represents the absolute number of parameters to prune.
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            topk = t.abs().view(-1).topk(k=nparams_toprune, largest=False)
            mask.view(-1)[topk.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        r"""Add pruning on the fly and reparameterization of the tensor ``name`` of
        ``module``, pruning the ``amount`` of units with the lowest L1-norm (of
        ``importance_scores`` when given)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    r"""Prune entire (currently unpruned) channels in a tensor at random.

    Args:
        amount (int or float): quantity of parameters to prune. If ``float``, should be
            between 0.0 and 1.0 and represent the fraction of parameters to prune. If ``int``,
            it represents the absolute number of parameters to prune.
        dim (int, optional): index of the dim along which we define channels to prune.
            Default: -1.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        r"""A mask on top of ``default_mask`` that zeroes out channels along ``dim`` at
        random.

        Raises:
            IndexError: if ``self.dim >= len(t.shape)``
        """
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        prob = rand(tensor_size)
        threshold = prob.kthvalue(k=nparams_toprune).values
        mask = _mask_of_channels(t, self.dim, prob > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        r"""Add pruning on the fly and reparameterization of the tensor ``name`` of
        ``module``, pruning ``amount`` of its channels along ``dim`` at random."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    r"""Prune entire (currently unpruned) channels in a tensor based on their L\ ``n``-norm.

    Args:
        amount (int or float): quantity of channels to prune. If ``float``, should be between
            0.0 and 1.0 and represent the fraction of parameters to prune. If ``int``, it
            represents the absolute number of parameters to prune.
        n (int, float, inf, -inf, 'fro', 'nuc'): See documentation of valid entries for
            argument ``p`` in :func:`ember.norm`.
        dim (int, optional): index of the dim along which we define channels to prune.
            Default: -1.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        r"""A mask on top of ``default_mask`` that zeroes out the channels along ``dim`` with
        the lowest L\ ``n``-norm.

        Raises:
            IndexError: if ``self.dim >= len(t.shape)``
        """
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        norm = _compute_norm(t, self.n, self.dim)
        topk = norm.topk(k=nparams_tokeep, largest=True)
        if nparams_toprune == 0:
            return default_mask
        mask = _mask_of_channels(t, self.dim, topk.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        r"""Add pruning on the fly and reparameterization of the tensor ``name`` of
        ``module``, pruning the ``amount`` of channels along ``dim`` with the lowest
        L\ ``n``-norm (of ``importance_scores`` when given)."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a precomputed ``mask``, combined with any earlier mask."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        r"""Add pruning on the fly and reparameterization of the tensor ``name`` of
        ``module``, with ``mask`` as the pruning mask."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    r"""Apply pruning reparameterization without pruning any units.

    Modifies ``module`` in place (and also returns it) by adding a named buffer called
    ``name+'_mask'`` (a mask of ones) and replacing the parameter ``name`` by its pruned
    version, while the original (unpruned) parameter is stored in a new parameter named
    ``name+'_orig'``.
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    r"""Prune tensor by removing random (currently unpruned) units.

    Prunes the tensor of the parameter called ``name`` in ``module`` by removing the
    specified ``amount`` of (currently unpruned) units selected at random. Modifies
    ``module`` in place (and also returns it): adds the buffer ``name+'_mask'``, moves the
    original parameter to ``name+'_orig'`` and makes ``name`` its pruned version.

    Args:
        module (nn.Module): module containing the tensor to prune
        name (str): parameter name within ``module`` on which pruning will act.
        amount (int or float): quantity of parameters to prune. If ``float``, should be
            between 0.0 and 1.0 and represent the fraction of parameters to prune. If ``int``,
            it represents the absolute number of parameters to prune.
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    r"""Prune tensor by removing units with the lowest L1-norm.

    Prunes the tensor of the parameter called ``name`` in ``module`` by removing the
    specified ``amount`` of (currently unpruned) units with the lowest L1-norm (of
    ``importance_scores``, a tensor of the parameter's shape, when given). Modifies
    ``module`` in place (and also returns it): adds the buffer ``name+'_mask'``, moves the
    original parameter to ``name+'_orig'`` and makes ``name`` its pruned version.
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    r"""Prune tensor by removing random channels along the specified dimension.

    Prunes the tensor of the parameter called ``name`` in ``module`` by removing the
    specified ``amount`` of (currently unpruned) channels along ``dim`` selected at random.
    Modifies ``module`` in place (and also returns it): adds the buffer ``name+'_mask'``,
    moves the original parameter to ``name+'_orig'`` and makes ``name`` its pruned version.
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    r"""Prune tensor by removing channels with the lowest L\ ``n``-norm along the specified
    dimension.

    Prunes the tensor of the parameter called ``name`` in ``module`` by removing the
    specified ``amount`` of (currently unpruned) channels along ``dim`` with the lowest
    L\ ``n``-norm (``n`` as ``p`` of :func:`ember.norm`). Modifies ``module`` in place (and
    also returns it): adds the buffer ``name+'_mask'``, moves the original parameter to
    ``name+'_orig'`` and makes ``name`` its pruned version.
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    r"""Globally prunes tensors corresponding to all parameters in ``parameters`` by applying
    the specified ``pruning_method``.

    Args:
        parameters (Iterable of (module, name) tuples): parameters of the model to prune in a
            global fashion, i.e. by aggregating all weights prior to deciding which ones to
            prune.
        pruning_method (function): a valid pruning function from this module, or a custom
            one that has ``PRUNING_TYPE='unstructured'``.
        importance_scores (dict): a dictionary mapping (module, name) tuples to the
            corresponding parameter's importance scores tensor; the parameter itself where
            missing.
        kwargs: other keyword arguments such as ``amount``, the quantity of parameters to
            prune across the specified parameters.

    Raises:
        TypeError: if ``PRUNING_TYPE != 'unstructured'``
    """
    from .convert_parameters import parameters_to_vector

    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    relevant_importance_scores = parameters_to_vector(
        [importance_scores.get((module, name), getattr(module, name))
         for (module, name) in parameters])
    default_mask = parameters_to_vector(
        [getattr(module, name + "_mask", ones_like(getattr(module, name)))
         for (module, name) in parameters])

    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)

    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer:pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module, name, mask):
    r"""Prune tensor corresponding to parameter called ``name`` in ``module`` by applying the
    pre-computed mask in ``mask``.

    Modifies ``module`` in place (and also returns it): adds the buffer ``name+'_mask'``,
    moves the original parameter to ``name+'_orig'`` and makes ``name`` its pruned version.
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    r"""Remove the pruning reparameterization from a module and the pruning method from the
    forward hook.

    The pruned parameter named ``name`` remains permanently pruned, and the parameter named
    ``name+'_orig'`` is removed from the parameter list. Similarly, the buffer named
    ``name+'_mask'`` is removed from the buffers.

    Note:
        Pruning itself is NOT undone or reversed!
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module):
    r"""Check whether ``module`` is pruned by looking for ``forward_pre_hooks`` in its modules
    that inherit from the :class:`BasePruningMethod`."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _mask_of_channels(t, dim, channels):
    """Zeros of ``t``'s shape with ones in the ``channels`` (a boolean mask or indices) along
    ``dim``."""
    mask = zeros_like(t)
    where = [slice(None)] * len(t.shape)
    where[dim] = channels
    mask[tuple(where)] = 1
    return mask


def _validate_pruning_amount_init(amount):
    """Raise TypeError unless ``amount`` is a real number, ValueError unless it is a float in
    [0, 1] or a non-negative integer."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral)
            and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t):
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount, tensor_size):
    """The number of units to prune: ``amount`` itself when an integer, else the fraction
    ``amount`` of ``tensor_size``, rounded."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    """The L_n-norm of ``t`` over all dimensions but ``dim``: one value per channel."""
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return t.norm(p=n, dim=dims)
