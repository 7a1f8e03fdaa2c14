"""ember: tensors, reverse-mode autograd, modules and optimizers with PyTorch's API on NumPy."""
__version__ = "0.1.0"

import warnings as _warnings

# torch computes log(0), 0/0 and overflow silently (inf/nan); NumPy's floating-point warnings
# raised from inside ember's kernels are not the user's concern.
_warnings.filterwarnings("ignore", message=".* encountered in ", category=RuntimeWarning,
                         module=r"ember(\.|$)")

from . import _dtype  # noqa: F401 (ember._dtype)
from ._dtype import (  # noqa: F401
    dtype, float16, half, bfloat16, float32, float, float64, double, uint8, int8, int16, short,
    int32, int, int64, long, bool, complex64, cfloat, complex128, cdouble, get_default_dtype,
    set_default_dtype, promote_types, result_type, can_cast, finfo, iinfo,
)
from ._device import device, get_default_device, set_default_device  # noqa: F401
from ._layout import (layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr,  # noqa: F401
                      sparse_bsc, jagged)
from math import e, inf, nan, pi  # noqa: F401  (torch's constants are Python floats)
newaxis = None
from ._tensor import Tensor, Size  # noqa: F401
from ._tensor_str import set_printoptions  # noqa: F401
from . import autograd  # noqa: F401
from . import return_types  # noqa: F401
from .autograd import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
    is_inference_mode_enabled,
)
from . import ops as _ops  # noqa: F401  (attaches Tensor methods)
from .ops.convert import *  # noqa: F403
from .ops.creation import *  # noqa: F403
from .ops.pointwise import *  # noqa: F403
from .ops.reduce import *  # noqa: F403
from .ops.unary import *  # noqa: F403
from .ops.view import *  # noqa: F403
from .ops.ternary import *  # noqa: F403
from .ops.compare import *  # noqa: F403
from .ops.shape import *  # noqa: F403
from .ops.index import *  # noqa: F403
from .ops.linalg import *  # noqa: F403
from .ops.matrix_decompositions import *  # noqa: F403
from .ops.random import *  # noqa: F403
from .ops.sort import *  # noqa: F403
from .ops.statistics import *  # noqa: F403
from .ops.calculus import *  # noqa: F403
from .ops.matrix_functions import *  # noqa: F403
from .ops.triangular import *  # noqa: F403
from .ops.resize import *  # noqa: F403
from .ops.complex import *  # noqa: F403
from .ops.householder import *  # noqa: F403
from .ops.lu_deprecated import *  # noqa: F403
from .ops.distribution_samplers import *  # noqa: F403
from ._legacy_tensor_types import *  # noqa: F403  (FloatTensor, LongTensor, ...)


def is_tensor(obj):
    """True if ``obj`` is an ember tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


def numel(input):
    return input.numel()
from ._backend.parallel import get_num_threads, set_num_threads  # noqa: F401
from . import nn  # noqa: F401
from . import optim, utils  # noqa: F401
from . import linalg  # noqa: F401
from . import sparse  # noqa: F401  (ember.sparse, as torch.sparse; Tensor.to_sparse, ...)
from .sparse._coo import sparse_coo_tensor  # noqa: F401
from .sparse._csr import sparse_csr_tensor  # noqa: F401
from . import special  # noqa: F401  (ember.special, as torch.special)
from . import fft  # noqa: F401  (ember.fft, as torch.fft)
from ._stft import stft, istft  # noqa: F401  (also Tensor.stft, Tensor.istft)
from . import random  # noqa: F401
from . import cuda  # noqa: F401  (ember.cuda; Tensor.cuda, pin_memory, record_stream)
from . import accelerator  # noqa: F401
from . import multiprocessing  # noqa: F401  (Tensor.share_memory_, pickling across processes)
from . import distributed  # noqa: F401  (imports no MPI: init_process_group starts it)
from .nn.functional import (  # noqa: F401
    relu, relu_, softmax, log_softmax, dropout, selu, celu, prelu, hardshrink, threshold,
)
from ._functional_aliases import *  # noqa: F403  (torch.conv2d, torch.layer_norm, ...)
from ._tensor_functions import *  # noqa: F403  (torch.detach, torch.is_nonzero, torch.range, ...)
from ._window_functions import *  # noqa: F403  (torch.hann_window, ...)
from ._copy_functions import *  # noqa: F403  (torch.t_copy, torch.view_copy, ...)
from ._special_aliases import *  # noqa: F403  (torch.sinc, torch.i0, torch.polygamma, ...)
from ._inplace_functions import *  # noqa: F403  (torch.sin_, torch.clamp_, ...)
from .serialization import save, load  # noqa
from . import storage  # noqa: F401  (ember.storage: UntypedStorage, TypedStorage)
from .storage import UntypedStorage, TypedStorage, is_storage  # noqa: F401
from .storage import LEGACY_STORAGES as _LEGACY_STORAGES
globals().update(_LEGACY_STORAGES)   # FloatStorage, LongStorage, ... (torch's legacy classes)
Storage = _LEGACY_STORAGES["FloatStorage"]   # torch.Storage: the default dtype's legacy class
from .utils.dlpack import from_dlpack  # noqa
from . import profiler  # noqa: F401
from .autograd import profiler as _autograd_profiler  # noqa: F401  (ember.autograd.profiler)
from ._memory_format import (memory_format, contiguous_format, channels_last,  # noqa: F401
                             channels_last_3d, preserve_format)
from . import backends  # noqa: F401  (ember.backends.mkldnn: oneDNN's switch)
from . import testing  # noqa: F401
from . import hub  # noqa: F401  (ember.hub: local repositories and the checkpoint cache)
from . import signal  # noqa: F401  (ember.signal.windows)
from . import types  # noqa: F401  (ember.types: annotation aliases)
from . import overrides, _C  # noqa: F401  (the __torch_function__ protocol, as torch.overrides)
from .amp import autocast, get_autocast_dtype, is_autocast_enabled, set_autocast_enabled  # noqa: F401
# ember.cpu (torch.cpu's device module); the build constants and the legacy memory format are
# in _settings
from . import cpu  # noqa: F401
from . import func  # noqa: F401  (ember.func: vmap, grad, jacrev, functional_call, ...)
from .func import vmap  # noqa: F401  (torch.vmap)
from ._dtype import (  # noqa: F401  (the dtypes beyond the everyday twelve)
    uint16, uint32, uint64, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,
    float8_e8m0fnu, bits16, bits1x8, bits2x4, bits4x2, bits8, bit, int1, int2, int3, int4, int5,
    int6, int7, uint1, uint2, uint3, uint4, uint5, uint6, uint7, qint8, quint8, qint32, quint4x2,
    quint2x4, complex32, chalf, float4_e2m1fn_x2,
)
from ._settings import *  # noqa: F403  (use_deterministic_algorithms, set_default_tensor_type, ...)


def _assert(condition, message):
    """A wrapper around Python's assert which is symbolically traceable (ember.fx records it)."""
    assert condition, message


# Subpackages that `import torch` imports but `import ember` imports on first attribute access
# (`ember.fx`), so that `import ember` does not pay for them.
_LAZY_SUBMODULES = ("fx",)
# ember.jit (tracing) and ember.onnx (export; imports the onnx package only when exporting)
_LAZY_SUBMODULES += ("jit", "onnx")
# ember.export (whole programs as graphs with lifted parameters)
_LAZY_SUBMODULES += ("export",)
# ember.compile's machinery (capture, guards, backends) and its controls
_LAZY_SUBMODULES += ("compiler", "_dynamo")
# ember.distributions (the distributions, constraints, transforms and KL registry)
_LAZY_SUBMODULES += ("distributions",)
# functorch's old names over ember.func (not a top-level package: torch ships its own functorch)
_LAZY_SUBMODULES += ("functorch",)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Optimize ``model`` (a function or an ``nn.Module``) by capturing the ember operations it
    runs into graphs and replaying them.

    On the first call with a given input signature (shapes, dtypes, devices, requires_grad,
    grad mode, the ``training`` flags of the modules it calls) the function runs once while its
    operations are recorded into an ``ember.fx`` graph; later calls whose guards hold replay the
    graph. A changed signature captures again, up to ``ember._dynamo.config.recompile_limit``
    (8) graphs, after which unmatched calls run eagerly (logged on ``ember._dynamo``).
    A second size of an input's dimension (the batch, a sequence length) makes that dimension
    dynamic where the graph allows it: one graph replays for every size. ``dynamic=True``
    does so at the first change without another call of the backend; ``dynamic=False``
    never does.

    Python code that uses a tensor's value (``if x.sum() > 0``, ``.item()``, ``.tolist()``,
    printing) is a graph break: ember runs that function eagerly from then on (logged with the
    file and line), so results stay correct; ``fullgraph=True`` raises
    ``ember._dynamo.exc.Unsupported`` instead, naming the line.

    ``backend``: ``"inductor"`` (the default, ember's compiler: with grad mode off the graph
    runs with its pointwise chains as generated C kernels; with grad mode on it takes an
    ahead-of-time backward whose graphs are fused too, or with
    ``options={"aot_backward": False}`` replays op by op with eager autograd), ``"eager"``
    (replay with eager autograd),
    ``"aot_eager"`` (the ahead-of-time backward, op by op), or a callable
    ``backend(gm, example_inputs)`` that receives the ``ember.fx.GraphModule`` and returns the
    callable to run. ``options``: ``aot_backward`` and ``fuse`` for the default backend;
    torch's other inductor options and ``mode`` are checked and accepted for torch's API.
    ``disable=True`` returns ``model`` unchanged.

    A module gives an ``OptimizedModule`` (``_orig_mod`` is the module; state_dict keys
    carry the ``_orig_mod.`` prefix); a function gives a function. With ``model=None`` the
    result is a decorator."""
    from ._dynamo._api import compile as _compile
    return _compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=options, disable=disable)


from ._backend import aligned_memory as _aligned_memory
_aligned_memory.install()   # NumPy's arrays on 64-byte boundaries, as torch's (see the module)


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
