"""``ember._C``: the few names torch's programs reach through ``torch._C`` for the
``__torch_function__`` protocol."""
from ._torch_function import (
    DisableTorchFunction, DisableTorchFunctionSubclass, _disabled_torch_function_impl,
)

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl"]
