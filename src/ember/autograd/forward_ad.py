"""Forward-mode automatic differentiation (torch.autograd.forward_ad).

Inside a ``dual_level``, ``make_dual(primal, tangent)`` gives a tensor that carries ``tangent``;
every op computed from it carries the tangent of its result (a Jacobian-vector product),
whatever the grad mode, and ``unpack_dual`` reads it back. How tangents move through ops is
described in ``autograd/_dual.py``.
"""
from collections import namedtuple

from ._dual import clear_level, forward, no_forward as _suspended, set_tangent, tangent_of

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]


def enter_dual_level():
    """Enter a new forward grad level and return its index. Only one level can exist at a time
    (nested forward mode is not supported, as in torch)."""
    if forward.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    forward.level = 0
    forward.active = True
    return forward.level


def exit_dual_level(*, level=None):
    """Exit the current forward grad level: every tangent made at it is dropped."""
    if level is None:
        level = -1 if forward.level is None else forward.level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != forward.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    clear_level()
    forward.level = None
    forward.active = False


class dual_level:
    """Context manager for forward AD: every forward computation inside it happens at one dual
    level, and the level's tangents are dropped on exit.

    Example::

        >>> with dual_level():
        ...     inp = make_dual(x, v)
        ...     out = f(inp)
        ...     y, jvp = unpack_dual(out)
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _check_level(level, fn):
    if level is None:
        level = forward.level
    if level is None:
        return None
    if level != forward.level:
        raise RuntimeError(f"Invalid level given to {fn}")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A tensor sharing ``tensor``'s memory whose tangent at ``level`` (the current one by
    default) is ``tangent``; ``tangent`` must have ``tensor``'s size. The result is a view of
    ``tensor`` for reverse mode, and ``tensor`` itself is left unchanged."""
    from .._tensor import Size, Tensor
    if forward.level is None and level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make "
                           "sure to enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        bad = tensor if not isinstance(tensor, Tensor) else tangent
        raise TypeError(f"_make_dual(): argument '{'primal' if bad is tensor else 'tangent'}' must be "
                        f"Tensor, not {type(bad).__name__}")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if forward.level is None or (level is not None and level != forward.level):
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(Size(tensor._data.shape))} while "
            f"the given forward gradient is of size {list(Size(tangent._data.shape))}.")
    if tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {forward.level} is not supported.")
    with _suspended():
        dual = tensor.view_as(tensor)
    set_tangent(dual, tangent)
    return dual


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = ("Namedtuple returned by ``unpack_dual``: the primal and the tangent "
                              "(None when there is none) of a dual tensor.")


def unpack_dual(tensor, *, level=None):
    """The primal (a view of ``tensor`` without tangent) and the tangent at ``level`` of
    ``tensor``, as ``UnpackedDualTensor(primal, tangent)``; the tangent is None when ``tensor``
    has none (and when no level is active)."""
    from .._tensor import Tensor
    if forward.level is None:
        return UnpackedDualTensor(tensor, None)
    if level is not None and level != forward.level:
        raise RuntimeError("Invalid level given to _fw_primal")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _suspended():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)
