"""CUDA switches, as ``torch.backends.cuda``: ``is_built()``, cuBLAS's ``matmul`` precision
switches and the scaled-dot-product-attention kernel switches. ember's CUDA products run on
CuPy and its attention has one implementation, so the switches keep torch's defaults and the
values set on them without changing which kernels run."""
import contextlib
import warnings

from .._flags import check_bool

__all__ = ["is_built", "matmul", "sdp_kernel", "enable_flash_sdp", "flash_sdp_enabled",
           "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled", "enable_math_sdp",
           "math_sdp_enabled", "enable_cudnn_sdp", "cudnn_sdp_enabled"]


def is_built():
    """Return whether ember is built with CUDA support: whether its CUDA backend, CuPy, is
    installed. This doesn't necessarily mean CUDA is available (a GPU and its driver)."""
    from ... import _backend
    if _backend.load_cuda() is not None:
        return True
    try:
        import cupy  # noqa: F401
    except Exception:
        return False
    return True


class cuBLASModule:
    """cuBLAS's precision switches: ``allow_tf32`` (False),
    ``allow_fp16_reduced_precision_reduction`` and ``allow_bf16_reduced_precision_reduction``
    (True; each also takes ``(allow_reduced_precision, allow_splitk)``, whose second part
    reads as ``..._split_k``) and ``allow_fp16_accumulation`` (False)."""

    _REDUCTIONS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        values = {"allow_tf32": False, "allow_fp16_accumulation": False}
        for name in self._REDUCTIONS:
            values[name] = True
            values[name + "_split_k"] = True
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError("Unknown attribute " + name) from None

    def __setattr__(self, name, value):
        if name in self._REDUCTIONS:
            self._values[name], self._values[name + "_split_k"] = _reduction_setting(value, name)
        elif name == "allow_tf32":
            self._values[name] = check_bool(value, "set_allow_tf32_cublas")
        elif name == "allow_fp16_accumulation":
            self._values[name] = check_bool(value, "set_allow_fp16_accumulation_cublas")
        else:
            raise AttributeError("Unknown attribute " + name)


def _reduction_setting(value, name):
    """``value`` as ``(allow_reduced_precision, allow_splitk)``, with torch's TypeErrors."""
    def ensure_bool(obj, which):
        if isinstance(obj, bool):
            return obj
        raise TypeError(f"{name} expects a bool for {which}, but got {type(obj)!r}")

    if isinstance(value, bool):
        return value, True
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{name} expects at most two boolean arguments")
        reduced = ensure_bool(value[0], "allow_reduced_precision")
        splitk = True if len(value) == 1 else ensure_bool(value[1], "allow_splitk")
        if reduced and not splitk:
            raise RuntimeError("allow_splitk=False is not supported when reduced precision "
                               "reductions are enabled")
        return reduced, splitk
    raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


matmul = cuBLASModule()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switch(kind):
    def enable(enabled):
        _sdp[kind] = check_bool(enabled, f"set_sdp_use_{kind}")

    def is_enabled():
        return _sdp[kind]

    name = kind.replace("_", "-")
    enable.__name__, is_enabled.__name__ = f"enable_{kind}_sdp", f"{kind}_sdp_enabled"
    enable.__doc__ = f"Enables or disables {name} scaled dot product attention."
    is_enabled.__doc__ = f"Returns whether {name} scaled dot product attention is enabled or not."
    return enable, is_enabled


enable_flash_sdp, flash_sdp_enabled = _sdp_switch("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _sdp_switch("mem_efficient")
enable_math_sdp, math_sdp_enabled = _sdp_switch("math")
enable_cudnn_sdp, cudnn_sdp_enabled = _sdp_switch("cudnn")


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Within the block, enable exactly the scaled dot product attention backends given (the
    previous state of the flags is restored on exit). Deprecated, as in torch."""
    warnings.warn("`ember.backends.cuda.sdp_kernel()` is deprecated. In the future, this context "
                  "manager will be removed.", FutureWarning, stacklevel=2)
    return _sdp_kernel(enable_flash, enable_math, enable_mem_efficient, enable_cudnn)


@contextlib.contextmanager
def _sdp_kernel(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    wanted = {"flash": enable_flash, "math": enable_math, "mem_efficient": enable_mem_efficient,
              "cudnn": enable_cudnn}
    before = dict(_sdp)
    _sdp.update({k: bool(v) for k, v in wanted.items()})
    try:
        yield {}
    finally:
        _sdp.update(before)
