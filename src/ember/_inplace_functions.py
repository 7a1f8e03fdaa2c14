"""torch's top-level in-place functions (``torch.sin_(x)``, ``torch.clamp_(x, 0, 1)``, ...):
each one is the Tensor's in-place method called on its first argument, so it writes into
``input``, returns ``input`` itself, moves its version on and follows autograd's in-place rules
exactly as the method does."""
import inspect

from ._tensor import Tensor

# The in-place Tensor methods torch also exposes as functions of the ``torch`` namespace.
NAMES = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_",
    "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_", "lcm_", "ldexp_",
    "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
    "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_",
    "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
)

__all__ = list(NAMES)


def _function_of(name):
    """``ember.<name>(input, ...)``: ``input.<name>(...)``, with the method's parameters."""
    bound = getattr(Tensor, name)

    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                            f"not {type(input).__name__}")
        return bound(input, *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__code__ = function.__code__.replace(co_name=name)
    function.__doc__ = f"In-place version of :func:`{name[:-1]}`: ``input.{name}(...)``."
    try:
        parameters = list(inspect.signature(bound).parameters.values())
        function.__signature__ = inspect.Signature(
            [parameters[0].replace(name="input")] + parameters[1:])
    except (TypeError, ValueError):
        pass
    return function


globals().update({name: _function_of(name) for name in NAMES})
