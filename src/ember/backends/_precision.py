"""The float32 precision settings (``fp32_precision``) of torch's backends: one value per
backend ("generic", "mkldnn", "cuda") and operation ("all", "matmul", "conv", "rnn").

Reading an operation's value falls back, while it is "none", to its backend's "all" and then
to the generic one; a value the backend does not support (bf16 on CUDA) reads as "none".
ember keeps the settings as torch does; its kernels compute float32 in float32 whatever they
say (oneDNN and NumPy here; CuPy's products on the GPU)."""
__all__ = ["get", "set", "getter", "setter", "PRECISIONS"]

PRECISIONS = ("none", "ieee", "tf32", "bf16")
_SUPPORTED = {"generic": PRECISIONS, "mkldnn": PRECISIONS, "cuda": ("none", "ieee", "tf32")}
_DEFAULTS = {
    ("generic", "all"): "none",
    ("mkldnn", "all"): "none", ("mkldnn", "matmul"): "none", ("mkldnn", "conv"): "none",
    ("mkldnn", "rnn"): "none",
    ("cuda", "all"): "none", ("cuda", "matmul"): "none", ("cuda", "conv"): "tf32",
    ("cuda", "rnn"): "tf32",
}
_values = dict(_DEFAULTS)


def get(backend, op):
    """The precision ``backend`` uses for ``op``, after the fallbacks."""
    value = _values[(backend, op)]
    if value == "none":
        value = _values[(backend, "all")]
    if value == "none":
        value = _values[("generic", "all")]
    return value if value in _SUPPORTED[backend] else "none"


def set(backend, op, precision):
    """Set the precision ``backend`` uses for ``op`` (torch's RuntimeErrors for values it
    does not know or the backend does not support)."""
    if precision not in PRECISIONS:
        raise RuntimeError(f"Unknown precision: {precision}")
    if precision not in _SUPPORTED[backend]:
        raise RuntimeError(f"backend '{backend}' does not support precision '{precision}'")
    _values[(backend, op)] = precision


def getter(backend, op):
    def inner():
        return get(backend, op)
    return inner


def setter(backend, op):
    def inner(precision):
        return set(backend, op, precision)
    return inner


class FP32Precision:
    """One backend operation's settings object (``cudnn.conv``, ``mkldnn.matmul``, ...): its
    only attribute is ``fp32_precision``."""

    def __init__(self, backend, op):
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "op", op)

    def __setattr__(self, name, value):
        if name == "fp32_precision":
            set(self.backend, self.op, value)
        elif name in ("backend", "op"):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError("Unknown attribute " + name)

    def __getattr__(self, name):
        if name == "fp32_precision":
            return get(self.backend, self.op)
        raise AttributeError("Unknown attribute " + name)
