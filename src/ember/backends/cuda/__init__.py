"""CUDA switches, as ``torch.backends.cuda``: ``is_built()``, cuBLAS's ``matmul`` precision
switches, the preferred BLAS, linear-algebra and flash-attention libraries, the cuFFT plan
cache and the scaled-dot-product-attention switches. ember's CUDA products run on CuPy and
its attention has one implementation, so the library switches keep torch's defaults and the
values set on them without changing which kernels run; the attention switches decide whether
ember's attention may run at all (see ``_sdp``)."""
import contextlib
import enum
import warnings

from .. import _precision
from .._flags import check_bool
from . import _sdp
from ._sdp import SDPAParams, SDPBackend

__all__ = ["is_built", "cuFFTPlanCacheAttrContextProp", "cuFFTPlanCache", "cuFFTPlanCacheManager",
           "cuBLASModule", "preferred_linalg_library", "preferred_blas_library",
           "cublas_workspace_size", "cublaslt_workspace_size", "blas_workspace_size",
           "preferred_rocm_fa_library", "is_ck_sdpa_available", "cufft_plan_cache", "matmul",
           "SDPAParams", "enable_cudnn_sdp", "cudnn_sdp_enabled", "enable_flash_sdp",
           "flash_sdp_enabled", "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled",
           "math_sdp_enabled", "enable_math_sdp", "allow_fp16_bf16_reduction_math_sdp",
           "fp16_bf16_reduction_math_sdp_allowed", "is_flash_attention_available",
           "can_use_flash_attention", "can_use_efficient_attention", "can_use_cudnn_attention",
           "sdp_kernel"]


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


def _not_built():
    return AssertionError("Torch not compiled with CUDA enabled".replace("Torch", "ember"))


# -- cuFFT's plan cache ------------------------------------------------------------------------
# ember's FFTs on the GPU are CuPy's, which keeps its own plan cache; these objects give
# torch's interface over a size and a capacity per device.

class cuFFTPlanCacheAttrContextProp:
    """Like ``ContextProp``, but passes the owner's ``device_index`` to the getter and setter
    (a str setter is the error message of a read-only attribute)."""

    def __init__(self, getter, setter):
        self.getter = getter
        self.setter = setter

    def __get__(self, obj, objtype):
        return self.getter(obj.device_index)

    def __set__(self, obj, val):
        if isinstance(self.setter, str):
            raise RuntimeError(self.setter)
        self.setter(obj.device_index, val)


_plan_cache_max_size = {}


def _plan_cache_size(device_index):
    if not is_built():
        raise _not_built()
    return 0


def _plan_cache_get_max_size(device_index):
    if not is_built():
        raise _not_built()
    return _plan_cache_max_size.get(device_index, 4096)


def _plan_cache_set_max_size(device_index, value):
    if not is_built():
        raise _not_built()
    _plan_cache_max_size[device_index] = int(value)


class cuFFTPlanCache:
    """A specific plan cache for a specific ``device_index``: ``size``, ``max_size`` and
    ``clear()``."""

    def __init__(self, device_index):
        self.device_index = device_index

    size = cuFFTPlanCacheAttrContextProp(
        _plan_cache_size,
        ".size is a read-only property showing the number of plans currently in the cache. To "
        "change the cache capacity, set cufft_plan_cache.max_size.")
    max_size = cuFFTPlanCacheAttrContextProp(_plan_cache_get_max_size, _plan_cache_set_max_size)

    def clear(self):
        if not is_built():
            raise _not_built()


class cuFFTPlanCacheManager:
    """All cuFFT plan caches: indexing gives a device's ``cuFFTPlanCache``; used directly, it
    is the current device's."""

    __initialized = False

    def __init__(self):
        self.caches = []
        self.__initialized = True

    def __getitem__(self, device):
        from ... import cuda
        index = cuda._index(device)
        count = cuda.device_count()
        if index < 0 or index >= count:
            raise RuntimeError(f"cufft_plan_cache: expected 0 <= device index < {count}, but got "
                               f"device with index {index}")
        if not self.caches:
            self.caches.extend(cuFFTPlanCache(i) for i in range(count))
        return self.caches[index]

    def __getattr__(self, name):
        from ... import cuda
        return getattr(self[cuda.current_device()], name)

    def __setattr__(self, name, value):
        if self.__initialized:
            from ... import cuda
            return setattr(self[cuda.current_device()], name, value)
        return super().__setattr__(name, value)


# -- cuBLAS ----------------------------------------------------------------------------------

class cuBLASModule:
    """cuBLAS's precision switches: ``allow_tf32`` (False; it reads and writes
    ``fp32_precision``, "tf32" or "ieee"), ``allow_fp16_reduced_precision_reduction`` and
    ``allow_bf16_reduced_precision_reduction`` (True; each also takes
    ``(allow_reduced_precision, allow_splitk)``, whose second part reads as ``..._split_k``),
    ``allow_fp16_accumulation`` (False) and ``fp32_precision``."""

    _REDUCTIONS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        values = {"allow_fp16_accumulation": False}
        for name in self._REDUCTIONS:
            values[name] = True
            values[name + "_split_k"] = True
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _precision.get("cuda", "matmul") == "tf32"
        if name == "fp32_precision":
            return _precision.get("cuda", "matmul")
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError("Unknown attribute " + name) from None

    def __setattr__(self, name, value):
        if name in self._REDUCTIONS:
            self._values[name], self._values[name + "_split_k"] = _reduction_setting(value, name)
        elif name == "allow_tf32":
            tf32 = check_bool(value, "set_allow_tf32_cublas")
            _precision.set("cuda", "matmul", "tf32" if tf32 else "ieee")
        elif name == "fp32_precision":
            _precision.set("cuda", "matmul", value)
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


# -- preferred libraries -----------------------------------------------------------------------

class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2

    def __int__(self):
        return self.value


class _BlasBackend(enum.Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3

    def __int__(self):
        return self.value


class _ROCmFABackend(enum.Enum):
    Default = 0
    AOTriton = 1
    Ck = 2

    def __int__(self):
        return self.value


_LinalgBackends = {"default": _LinalgBackend.Default, "cusolver": _LinalgBackend.Cusolver,
                   "magma": _LinalgBackend.Magma}
_BlasBackends = {"default": _BlasBackend.Cublas, "cublas": _BlasBackend.Cublas,
                 "hipblas": _BlasBackend.Cublas, "cublaslt": _BlasBackend.Cublaslt,
                 "hipblaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}
_ROCmFABackends = {"default": _ROCmFABackend.Default, "aotriton": _ROCmFABackend.AOTriton,
                   "ck": _ROCmFABackend.Ck}
# What a build without CUDA libraries refuses (torch's CPU build's messages).
_NOT_COMPILED = {_LinalgBackend.Cusolver: "cuSOLVER", _LinalgBackend.Magma: "MAGMA",
                 _BlasBackend.Cublaslt: "cuBLASLt"}
_preferred = {"linalg": _LinalgBackend.Default, "blas": _BlasBackend.Cublas,
              "rocm_fa": _ROCmFABackend.Default, "cublas_workspace": 0, "cublaslt_workspace": 0}


def _choose(kind, backend, table, enum_type, bad_value_error=RuntimeError):
    """Set (unless None) and return the preferred library ``kind``; ``bad_value_error`` is
    the type of torch's error for a value neither a str nor an ``enum_type``."""
    if backend is None:
        return _preferred[kind]
    if isinstance(backend, str):
        if backend not in table:
            raise RuntimeError("Unknown input value. Choose from: " + ", ".join(table) + ".")
        backend = table[backend]
    elif not isinstance(backend, enum_type):
        if bad_value_error is not RuntimeError:
            raise bad_value_error("Unknown input value. Choose from: " + ", ".join(table) + ".")
        raise RuntimeError("Unknown input value type.")
    library = _NOT_COMPILED.get(backend)
    if library is not None and not is_built():
        raise RuntimeError(f"Cannot set preferred backend to {library} if ember has not been "
                           f"compiled with {library}.")
    _preferred[kind] = backend
    return backend


def preferred_linalg_library(backend=None):
    """Override the heuristic choosing between cuSOLVER and MAGMA for CUDA linear algebra
    ("cusolver", "magma" or "default"); with no input, return the currently preferred
    library. ember's CUDA linear algebra is CuPy's (cuSOLVER): the setting is kept only."""
    return _choose("linalg", backend, _LinalgBackends, _LinalgBackend)


def preferred_blas_library(backend=None):
    """Override the library used for BLAS operations ("cublas", "cublaslt", "ck" or
    "default"); with no input, return the currently preferred library. ember's CUDA products
    are CuPy's (cuBLAS): the setting is kept only."""
    return _choose("blas", backend, _BlasBackends, _BlasBackend)


def preferred_rocm_fa_library(backend=None):
    """[ROCm-only] Override the flash-attention backend ("aotriton", "ck" or "default"); with
    no input, return the current one."""
    return _choose("rocm_fa", backend, _ROCmFABackends, _ROCmFABackend, ValueError)


def _workspace_size(kind, size):
    if not is_built():
        raise _not_built()
    if size is not None:
        if size < 0:
            raise RuntimeError(f"workspace size must be non-negative, got {size}")
        _preferred[kind] = int(size)
    return _preferred[kind]


def cublas_workspace_size(size=None):
    """Query or set the cuBLAS workspace size in bytes (kept only: CuPy sizes its own)."""
    return _workspace_size("cublas_workspace", size)


def cublaslt_workspace_size(size=None):
    """Query or set the cuBLASLt workspace size in bytes (kept only: CuPy sizes its own)."""
    return _workspace_size("cublaslt_workspace", size)


def blas_workspace_size(size=None, backend=None):
    """Query or set the BLAS workspace size of ``backend`` (by default the preferred one)."""
    resolved = _preferred["blas"] if backend is None else None
    if isinstance(backend, str):
        if backend not in _BlasBackends:
            raise RuntimeError("Unknown backend string. Choose from: " + ", ".join(_BlasBackends) + ".")
        resolved = _BlasBackends[backend]
    elif isinstance(backend, _BlasBackend):
        resolved = backend
    elif backend is not None:
        raise RuntimeError("Unknown backend type.")
    if resolved is _BlasBackend.Default:
        resolved = _BlasBackend.Cublas
    if resolved is _BlasBackend.Ck:
        raise RuntimeError("CK backend does not use a workspace.")
    if resolved is _BlasBackend.Cublaslt:
        return cublaslt_workspace_size(size)
    return cublas_workspace_size(size)


# -- scaled dot product attention ----------------------------------------------------------

def is_ck_sdpa_available():
    """Returns whether composable_kernel may be used as the backend for
    scaled-dot-product-attention (ROCm only: never, in ember)."""
    return False


enable_flash_sdp, flash_sdp_enabled = _sdp.switch("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _sdp.switch("mem_efficient")
enable_math_sdp, math_sdp_enabled = _sdp.switch("math")
enable_cudnn_sdp, cudnn_sdp_enabled = _sdp.switch("cudnn")


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Enables or disables fp16/bf16 reduction in math scaled dot product attention."""
    _sdp.math_allows_reduced_precision[0] = check_bool(enabled, "set_sdp_use_math")


def fp16_bf16_reduction_math_sdp_allowed():
    """Returns whether fp16/bf16 reduction in math scaled dot product attention is enabled."""
    return _sdp.math_allows_reduced_precision[0]


def is_flash_attention_available():
    """Check if ember was built with FlashAttention (CUDA's) for scaled_dot_product_attention:
    it was not."""
    return False


def _can_use(params, debug, what):
    if not isinstance(params, SDPAParams):
        raise TypeError(f"can_use_{what}(): expected an SDPAParams, got {type(params).__name__}")
    if debug:
        warnings.warn(f"ember has no CUDA {what.replace('_', ' ')} kernel for "
                      "scaled_dot_product_attention", stacklevel=3)
    return False


def can_use_flash_attention(params, debug=False):
    """Check if FlashAttention (CUDA's) can be utilized in scaled_dot_product_attention:
    never, in ember. With ``debug``, warn why."""
    return _can_use(params, debug, "flash_attention")


def can_use_efficient_attention(params, debug=False):
    """Check if efficient_attention (CUDA's) can be utilized in scaled_dot_product_attention:
    never, in ember. With ``debug``, warn why."""
    return _can_use(params, debug, "efficient_attention")


def can_use_cudnn_attention(params, debug=False):
    """Check if cuDNN attention can be utilized in scaled_dot_product_attention: never, in
    ember. With ``debug``, warn why."""
    return _can_use(params, debug, "cudnn_attention")


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Within the block, enable exactly the scaled dot product attention backends given (the
    previous state of the flags is restored on exit). Deprecated: use
    ``ember.nn.attention.sdpa_kernel``."""
    warnings.warn("`ember.backends.cuda.sdp_kernel()` is deprecated. In the future, this context "
                  "manager will be removed. Please see `ember.nn.attention.sdpa_kernel()` for the "
                  "new context manager, with updated signature.", FutureWarning, stacklevel=2)
    backends = []
    if enable_flash:
        backends.append(SDPBackend.FLASH_ATTENTION)
    if enable_mem_efficient:
        backends.append(SDPBackend.EFFICIENT_ATTENTION)
    if enable_math:
        backends.append(SDPBackend.MATH)
    if enable_cudnn:
        backends.append(SDPBackend.CUDNN_ATTENTION)
    return _sdp_kernel(backends)


@contextlib.contextmanager
def _sdp_kernel(backends):
    from ...nn.attention import sdpa_kernel
    with sdpa_kernel(backends) as context:
        yield context


cufft_plan_cache = cuFFTPlanCacheManager()
matmul = cuBLASModule()
