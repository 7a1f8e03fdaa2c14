"""What the ``ember.special`` modules share: argument checks, dtype rules, the ``out=`` step."""
from .._backend.precision import HALF_PRECISION
from .._dtype import get_default_dtype
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
