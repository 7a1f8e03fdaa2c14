"""The scaled-dot-product-attention backends and their switches, shared by
``ember.backends.cuda`` and ``ember.nn.attention``. ember's attention has one CPU
implementation; torch's CPU build runs with the math or the flash switch on (its CPU flash
kernel) and finds no backend without both, and so does ember's
``F.scaled_dot_product_attention``. The efficient, cuDNN and overrideable backends are
CUDA's (or an extension's): never usable here."""
import enum

from .._flags import check_bool

__all__ = ["SDPBackend", "SDPAParams", "enabled", "usable", "NO_BACKEND"]


class SDPBackend(enum.Enum):
    """An enum-like class that contains the different backends for scaled dot product
    attention, for the ``sdpa_kernel`` context manager: ERROR, MATH, FLASH_ATTENTION,
    EFFICIENT_ATTENTION, CUDNN_ATTENTION, OVERRIDEABLE."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__


SDPBackend.__module__ = "ember.nn.attention"

# switch name -> backend, in the order torch lists them
BACKEND_OF = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
              "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
              "overrideable": SDPBackend.OVERRIDEABLE}
enabled = dict.fromkeys(BACKEND_OF, True)
priority = [1, 2, 0, 3, 4]  # torch's default order of the backends (their int values)
math_allows_reduced_precision = [False]

NO_BACKEND = ("No viable backend for scaled_dot_product_attention was found. This is likely due "
              "to turning off both the math kernel and the fused kernels.")


def usable():
    """Whether ember's attention may run under the switches: the math or flash backend is on."""
    return enabled["math"] or enabled["flash"]


def switch(kind):
    """``(enable_<kind>_sdp, <kind>_sdp_enabled)`` for one backend's switch."""
    def enable(enabled_):
        enabled[kind] = check_bool(enabled_, f"set_sdp_use_{kind}")

    def is_enabled():
        return enabled[kind]

    words = {"mem_efficient": "memory efficient", "cudnn": "cuDNN"}.get(kind, kind)
    enable.__name__, is_enabled.__name__ = f"enable_{kind}_sdp", f"{kind}_sdp_enabled"
    enable.__doc__ = f"Enables or disables {words} scaled dot product attention."
    is_enabled.__doc__ = f"Returns whether {words} scaled dot product attention is enabled or not."
    return enable, is_enabled


class SDPAParams:
    """The arguments of one scaled_dot_product_attention call, for the ``can_use_*`` checks:
    ``SDPAParams(query, key, value, attn_mask, dropout, is_causal, enable_gqa)``."""
    __slots__ = ("query", "key", "value", "attn_mask", "dropout", "is_causal", "enable_gqa")

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa, /):
        from ..._tensor import Tensor
        if not (isinstance(query, Tensor) and isinstance(key, Tensor)
                and isinstance(value, Tensor) and (attn_mask is None or isinstance(attn_mask, Tensor))
                and isinstance(dropout, (int, float)) and isinstance(is_causal, bool)
                and isinstance(enable_gqa, bool)):
            raise TypeError(
                "__init__(): incompatible constructor arguments. The following argument types "
                "are supported:\n    1. ember.backends.cuda.SDPAParams(arg0: ember.Tensor, arg1: "
                "ember.Tensor, arg2: ember.Tensor, arg3: ember.Tensor | None, arg4: float, "
                "arg5: bool, arg6: bool)")
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = float(dropout), is_causal, enable_gqa


SDPAParams.__module__ = "ember.backends.cuda"
