"""oneDNN's C API through ctypes: finding and loading ``libdnnl.so.3``, the function
prototypes ember calls, the enum values it uses (oneDNN 3.2's ``dnnl_types.h``), and status
codes turned into exceptions.

ctypes rather than cffi: it is in the standard library (no new dependency), every handle in
oneDNN's C API is an opaque pointer, and the calls that matter run for milliseconds, so the
microsecond a ctypes call costs does not show. ctypes releases the GIL around each call, so
oneDNN's OpenMP threads work while other Python threads run.

Nothing is loaded at import: ``lib()`` loads the library on first use.
"""
import ctypes
import os
import sys

# -- enum values (oneDNN 3.2, dnnl_types.h) ------------------------------------------------
SUCCESS = 0
STATUS_NAMES = {1: "out_of_memory", 2: "invalid_arguments", 3: "unimplemented",
                4: "last_impl_reached", 5: "runtime_error", 6: "not_required"}

F16, BF16, F32, S32, U8 = 1, 2, 3, 4, 6
FORMAT_ANY = 1

FORWARD_TRAINING, FORWARD_INFERENCE = 64, 96
BACKWARD, BACKWARD_DATA, BACKWARD_WEIGHTS = 128, 160, 192

CONVOLUTION_DIRECT = 1
POOLING_MAX, POOLING_AVG_INCLUDE_PADDING, POOLING_AVG_EXCLUDE_PADDING = 0x1ff, 0x2ff, 0x3ff
SOFTMAX_ACCURATE, SOFTMAX_LOG = 0x30000, 0x30001
# dnnl_alg_kind_t's eltwise algorithms (dnnl_types.h)
ELTWISE_RELU, ELTWISE_TANH = 0x20, 0x21
ELTWISE_GELU_TANH, ELTWISE_SWISH, ELTWISE_CLIP_V2, ELTWISE_GELU_ERF = 0x2B, 0x2C, 0x2F, 0x31

QUERY_IMPL_INFO_STR = 8
QUERY_SRC_MD, QUERY_DIFF_SRC_MD = 129, 130
QUERY_WEIGHTS_MD, QUERY_DIFF_WEIGHTS_MD = 131, 132
QUERY_DST_MD, QUERY_DIFF_DST_MD = 133, 134
QUERY_WORKSPACE_MD, QUERY_SCRATCHPAD_MD = 135, 136

ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS = 1, 17, 33, 41
ARG_DIFF_SRC, ARG_DIFF_DST, ARG_DIFF_WEIGHTS, ARG_DIFF_BIAS = 129, 145, 161, 169
ARG_SCRATCHPAD, ARG_WORKSPACE = 80, 64
ARG_FROM, ARG_TO = 1, 17
ARG_MEAN, ARG_VARIANCE, ARG_SCALE, ARG_SHIFT = 49, 50, 51, 52
ARG_DIFF_SCALE, ARG_DIFF_SHIFT = 255, 256
# the RNN primitives' arguments: layer input and output, and the states (h, c) in and out
ARG_SRC_LAYER, ARG_SRC_ITER, ARG_SRC_ITER_C = 1, 2, 3
ARG_DST_LAYER, ARG_DST_ITER, ARG_DST_ITER_C = 17, 18, 19
ARG_WEIGHTS_LAYER, ARG_WEIGHTS_ITER = 33, 34
ARG_DIFF_SRC_LAYER, ARG_DIFF_SRC_ITER, ARG_DIFF_SRC_ITER_C = 129, 130, 131
ARG_DIFF_DST_LAYER, ARG_DIFF_DST_ITER, ARG_DIFF_DST_ITER_C = 145, 146, 147
ARG_DIFF_WEIGHTS_LAYER, ARG_DIFF_WEIGHTS_ITER = 161, 162

USE_GLOBAL_STATS, USE_SCALE, USE_SHIFT = 1, 2, 4

SCRATCHPAD_MODE_USER = 1
ENGINE_CPU = 1
STREAM_DEFAULT_FLAGS = 1
MAX_NDIMS = 12

Dims = ctypes.c_int64 * MAX_NDIMS


class ExecArg(ctypes.Structure):
    """``dnnl_exec_arg_t``: an argument index and the memory bound to it."""
    _fields_ = [("arg", ctypes.c_int), ("memory", ctypes.c_void_p)]


class OneDNNError(RuntimeError):
    """A oneDNN call failed; the message names the call, the primitive and the status."""


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_DIMS = ctypes.POINTER(ctypes.c_int64)
_STATUS = ctypes.c_int
_INT = ctypes.c_int

# name -> (restype, argtypes)
_PROTOTYPES = {
    "dnnl_version": (ctypes.c_void_p, []),
    "dnnl_set_verbose": (_STATUS, [ctypes.c_int]),
    "dnnl_engine_create": (_STATUS, [_PP, ctypes.c_int, ctypes.c_size_t]),
    "dnnl_stream_create": (_STATUS, [_PP, _P, ctypes.c_uint]),
    "dnnl_stream_wait": (_STATUS, [_P]),
    "dnnl_memory_desc_create_with_strides": (_STATUS, [_PP, _INT, _DIMS, _INT, _DIMS]),
    "dnnl_memory_desc_create_with_tag": (_STATUS, [_PP, _INT, _DIMS, _INT, _INT]),
    "dnnl_memory_desc_destroy": (_STATUS, [_P]),
    "dnnl_memory_desc_clone": (_STATUS, [_PP, _P]),
    "dnnl_memory_desc_equal": (ctypes.c_int, [_P, _P]),
    "dnnl_memory_desc_get_size": (ctypes.c_size_t, [_P]),
    "dnnl_memory_create": (_STATUS, [_PP, _P, _P, _P]),
    "dnnl_memory_destroy": (_STATUS, [_P]),
    "dnnl_memory_set_data_handle": (_STATUS, [_P, _P]),
    "dnnl_primitive_attr_create": (_STATUS, [_PP]),
    "dnnl_primitive_attr_destroy": (_STATUS, [_P]),
    "dnnl_primitive_attr_set_scratchpad_mode": (_STATUS, [_P, ctypes.c_int]),
    "dnnl_primitive_desc_query": (_STATUS, [_P, ctypes.c_int, ctypes.c_int, _P]),
    "dnnl_primitive_desc_query_md": (ctypes.c_void_p, [_P, ctypes.c_int, ctypes.c_int]),
    "dnnl_primitive_desc_destroy": (_STATUS, [_P]),
    "dnnl_primitive_create": (_STATUS, [_PP, _P]),
    "dnnl_primitive_destroy": (_STATUS, [_P]),
    "dnnl_primitive_execute": (_STATUS, [_P, _P, ctypes.c_int, ctypes.POINTER(ExecArg)]),
    "dnnl_reorder_primitive_desc_create": (_STATUS, [_PP, _P, _P, _P, _P, _P]),
    "dnnl_convolution_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT, _P, _P, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _P]),
    "dnnl_convolution_backward_data_primitive_desc_create": (
        _STATUS, [_PP, _P, ctypes.c_int, _P, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _P, _P]),
    "dnnl_batch_normalization_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, ctypes.c_int, _P, _P, ctypes.c_float, ctypes.c_uint, _P]),
    "dnnl_batch_normalization_backward_primitive_desc_create": (
        _STATUS, [_PP, _P, ctypes.c_int, _P, _P, _P, ctypes.c_float, ctypes.c_uint, _P, _P]),
    "dnnl_convolution_backward_weights_primitive_desc_create": (
        _STATUS, [_PP, _P, ctypes.c_int, _P, _P, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _P, _P]),
    "dnnl_pooling_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _DIMS, _P]),
    "dnnl_pooling_backward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _DIMS, _P, _P]),
    "dnnl_eltwise_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT, _P, _P, ctypes.c_float, ctypes.c_float, _P]),
    "dnnl_eltwise_backward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _P, _P, _P, ctypes.c_float, ctypes.c_float, _P, _P]),
    "dnnl_softmax_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT, _P, _P, _INT, _P]),
    "dnnl_softmax_backward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _P, _P, _P, _INT, _P, _P]),
    "dnnl_layer_normalization_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _P, _P, _P, ctypes.c_float, ctypes.c_uint, _P]),
    "dnnl_layer_normalization_backward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _P, _P, _P, _P, ctypes.c_float, ctypes.c_uint, _P, _P]),
    "dnnl_matmul_primitive_desc_create": (_STATUS, [_PP, _P, _P, _P, _P, _P, _P]),
    "dnnl_lstm_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT] + [_P] * 11 + [ctypes.c_uint, _P]),
    "dnnl_lstm_backward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT] + [_P] * 22 + [ctypes.c_uint, _P, _P]),
    "dnnl_vanilla_rnn_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT, _INT] + [_P] * 7 + [ctypes.c_uint, ctypes.c_float, ctypes.c_float, _P]),
    "dnnl_vanilla_rnn_backward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT, _INT] + [_P] * 14
        + [ctypes.c_uint, ctypes.c_float, ctypes.c_float, _P, _P]),
    "dnnl_lbr_gru_forward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT] + [_P] * 7 + [ctypes.c_uint, _P]),
    "dnnl_lbr_gru_backward_primitive_desc_create": (
        _STATUS, [_PP, _P, _INT, _INT] + [_P] * 14 + [ctypes.c_uint, _P, _P]),
}


def library_paths():
    """Where the ``onednn-cpu-gomp`` wheel puts ``libdnnl.so.3``: the environment's ``lib/``
    (``sys.prefix``), then the base interpreter's, then the loader's search path."""
    seen = []
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        path = os.path.join(prefix, "lib", "libdnnl.so.3")
        if path not in seen:
            seen.append(path)
    return seen + ["libdnnl.so.3"]


def installed():
    """Whether ``libdnnl.so.3`` is installed where ember looks for it (without loading it)."""
    return any(os.path.exists(path) for path in library_paths() if os.sep in path)


_loaded = []  # [CDLL] once loaded, [None] once looked for and missing
_load_error = []


def lib():
    """The loaded library with its prototypes set, or None when it cannot be loaded here
    (``load_error()`` says why)."""
    if _loaded:
        return _loaded[0]
    handle = None
    errors = []
    for path in library_paths():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            handle = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    if handle is not None:
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(handle, name)
            fn.restype, fn.argtypes = restype, argtypes
    else:
        _load_error.append("libdnnl.so.3 not found (pip install onednn-cpu-gomp==2023.2.0)"
                           + (": " + "; ".join(errors) if errors else ""))
    _loaded.append(handle)
    return handle


def load_error():
    return _load_error[0] if _load_error else None


def check(status, call, what=""):
    """Raise ``OneDNNError`` naming ``call`` (and the primitive ``what``) unless ``status`` is
    success."""
    if status != SUCCESS:
        name = STATUS_NAMES.get(status, f"status {status}")
        raise OneDNNError(f"oneDNN {call} failed{' for ' + what if what else ''}: {name}")


def call(name, *args, what=""):
    """Call ``name`` from the library and check its status."""
    check(getattr(_loaded[0], name)(*args), name, what)


def dims(values):
    """A ``dnnl_dims_t`` holding ``values``."""
    out = Dims()
    for i, v in enumerate(values):
        out[i] = v
    return out
