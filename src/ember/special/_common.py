"""What the ``ember.special`` modules share: argument checks, dtype rules, the ``out=`` step,
the compiled functions on ``special_loops``."""
import functools

from .._backend.precision import HALF_PRECISION
from .._dtype import get_default_dtype
from ..ops import _compiled_functions
from ..ops._common import Tensor, _type_word, write_out


def check_tensor(x, op, position=1, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(x).__name__}")


def refuse(dtype, kernel, kinds):
    """torch's NotImplementedError for a dtype its kernel ``kernel`` has no loop for: complex
    (``kinds`` "c") and, where ``kinds`` holds "h", float16 and bfloat16."""
    if dtype.kind == "c" and "c" in kinds or "h" in kinds and dtype in HALF_PRECISION:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(dtype)}'")


def refuse_integers(dtype, kernel):
    """torch's NotImplementedError for an integer or bool ``dtype`` its kernel has no loop for."""
    if dtype.kind in "biu":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(dtype)}'")


def float_result(dtype):
    """The dtype a float op computes an input of ``dtype`` in: integers and bool give the
    default float dtype."""
    return get_default_dtype().np if dtype.kind in "biu" else dtype


def finish(result, out):
    return result if out is None else write_out(result, out)


def on_special_loops(form, loops, node_cls=None, taken=None, max_elements=None):
    """A decorator: the function ``fn(a, b, *, out=None)`` with its common case (two positional
    arguments) compiled, of
    ``form`` (``ops._compiled_special``: "tensors", "polygamma" or "polynomial", with what the
    form ``taken``, or a callable that gives it at the first call) on the loops of
    ``special_loops`` named ``loops`` (the float32 tensors' and the float64 tensors'), for at
    most ``max_elements`` elements. ``node_cls`` is the node the function records (None: the
    function of tensors that require grad is the Python op's)."""
    saves = ("self", "other") if form == "tensors" else ("self",)

    def addresses():
        from .._backend import special_loops
        return tuple(special_loops.address(name) for name in loops)

    def compiled(python_op):
        entry = _compiled_functions.register(python_op, node_cls, saves, kind="special", addresses=addresses,
                                             max_elements=max_elements, specifics=(form, taken))

        @functools.wraps(python_op)
        def fn(*args, **kwargs):
            return python_op(*args, **kwargs) if kwargs else entry[0](*args)
        return fn
    return compiled
