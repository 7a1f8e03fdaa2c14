"""NumPy arrays on 64-byte boundaries, as torch's CPU allocator places its tensors.

NumPy's allocator returns what ``malloc`` returns: 16 bytes past a 64-byte boundary for the
blocks of a training step. A vectorized kernel then reads and writes every other 64-byte
vector across two cache lines, and oneDNN's convolutions (the same primitives torch runs) take
longer on such arrays than on aligned ones (BENCHMARKS.md, "Arrays on 64-byte boundaries").
NumPy lets a library replace its data
allocator (NEP 49, ``PyDataMem_SetHandler``); ``install`` sets one whose blocks start on a
64-byte boundary: ``malloc``/``calloc``/``realloc`` of 72 bytes more, the block's start stored
just before the aligned address (``calloc`` keeps large zeroed blocks lazily mapped).

The handler's C functions are compiled with the machine's C compiler and cached as ember's other
loops are; NumPy's C-API function is found in its C-API table (the ``_ARRAY_API`` capsule that
every C extension imports NumPy through), at the index NumPy's API numbering fixes, after
checking that the neighbouring getter there returns NumPy's current handler. Each array keeps
the handler that allocated it, so arrays made before or after ``install`` (or ``uninstall``)
are freed correctly. The handler is set in the calling thread's context, as NumPy's API does:
threads started later (their contexts start empty) allocate with NumPy's default.

Installed once when ember is imported; ``EMBER_ALIGNED_MEMORY=0`` leaves NumPy's allocator
alone. Where no compiler is found, nothing changes but speed.
"""
import ctypes
import os

NAME = "ember_aligned_64"
ALIGNMENT = 64

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ALIGNMENT 64
#define EXTRA (ALIGNMENT + sizeof(void *))

/* the block's start is kept in the pointer-sized slot before the aligned address */
static void *aligned_within(char *raw) {
    char *p = (char *)(((uintptr_t)raw + EXTRA - 1) & ~(uintptr_t)(ALIGNMENT - 1));
    ((void **)p)[-1] = raw;
    return p;
}

static void *aligned_malloc(void *ctx, size_t size) {
    (void)ctx;
    if (size > SIZE_MAX - EXTRA) return NULL;
    char *raw = malloc(size + EXTRA);
    return raw ? aligned_within(raw) : NULL;
}

static void *aligned_calloc(void *ctx, size_t count, size_t size) {
    (void)ctx;
    size_t total;
    if (__builtin_mul_overflow(count, size, &total) || total > SIZE_MAX - EXTRA) return NULL;
    char *raw = calloc(1, total + EXTRA);
    return raw ? aligned_within(raw) : NULL;
}

static void *aligned_realloc(void *ctx, void *p, size_t size) {
    if (p == NULL) return aligned_malloc(ctx, size);
    if (size > SIZE_MAX - EXTRA) return NULL;
    char *raw = ((void **)p)[-1];
    size_t offset = (char *)p - raw;
    char *moved = realloc(raw, size + EXTRA);
    if (moved == NULL) return NULL;
    char *q = (char *)(((uintptr_t)moved + EXTRA - 1) & ~(uintptr_t)(ALIGNMENT - 1));
    if ((size_t)(q - moved) != offset) memmove(q, moved + offset, size);
    ((void **)q)[-1] = moved;
    return q;
}

static void aligned_free(void *ctx, void *p, size_t size) {
    (void)ctx; (void)size;
    if (p != NULL) free(((void **)p)[-1]);
}

/* NumPy's PyDataMem_Handler (numpy/ndarraytypes.h), version 1 */
typedef struct {
    void *ctx;
    void *(*malloc)(void *, size_t);
    void *(*calloc)(void *, size_t, size_t);
    void *(*realloc)(void *, void *, size_t);
    void (*free)(void *, void *, size_t);
} Allocator;

typedef struct {
    char name[127];
    uint8_t version;
    Allocator allocator;
} Handler;

static Handler handler = {
    "ember_aligned_64", 1,
    {NULL, aligned_malloc, aligned_calloc, aligned_realloc, aligned_free}};

void *ember_aligned_handler(void) { return &handler; }
"""

# PyDataMem_SetHandler and PyDataMem_GetHandler in NumPy's C-API table (numpy_api.py's
# numbering, fixed since NumPy 1.22)
_SET_HANDLER, _GET_HANDLER = 304, 305

_state = {"previous": None}
_CAPSULE_NAME = ctypes.create_string_buffer(b"mem_handler")   # a capsule keeps the pointer


def _python_api(name, restype, *argtypes):
    """A function of Python's C API with a prototype of its own (``ctypes.pythonapi``'s shared
    function objects are left as other code set them)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_pointer = _python_api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object,
                               ctypes.c_char_p)
_capsule_is_valid = _python_api("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object,
                                ctypes.c_char_p)
_new_capsule = _python_api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p)


def _api_table():
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:   # NumPy 1.x
        from numpy.core import _multiarray_umath as umath
    return ctypes.cast(_capsule_pointer(umath._ARRAY_API, None), ctypes.POINTER(ctypes.c_void_p))


def _handler_name(capsule):
    """The name in a ``mem_handler`` capsule's handler, or None for another object."""
    if not _capsule_is_valid(capsule, b"mem_handler"):
        return None
    return ctypes.string_at(_capsule_pointer(capsule, b"mem_handler")).decode()


def handler_name(array=None):
    """The name of the handler that allocated ``array``'s data, or without ``array`` of the one
    NumPy allocates with now in this thread (NumPy's ``get_handler_name``)."""
    try:
        from numpy._core.multiarray import get_handler_name
    except ImportError:   # NumPy 1.x
        from numpy.core.multiarray import get_handler_name
    return get_handler_name() if array is None else get_handler_name(array)


def _set_handler(capsule):
    """NumPy's ``PyDataMem_SetHandler(capsule)``: returns the handler it replaced."""
    table = _api_table()
    getter = ctypes.PYFUNCTYPE(ctypes.py_object)(table[_GET_HANDLER])
    if _handler_name(getter()) != handler_name():
        return None     # not the table layout this module knows: leave NumPy alone
    setter = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(table[_SET_HANDLER])
    return setter(capsule)


def installed():
    """Whether NumPy allocates with ember's aligned handler in this thread."""
    return handler_name() == NAME


def install():
    """Make NumPy allocate arrays on 64-byte boundaries (in the calling thread's context);
    returns whether it does."""
    if installed():
        return True
    if os.environ.get("EMBER_ALIGNED_MEMORY", "1") == "0":
        return False
    from .._inductor import _compiler
    function = _compiler.load(SOURCE, "ember_aligned_handler", quiet=True, argtypes=())
    if function is None:
        return False
    function.restype = ctypes.c_void_p
    previous = _set_handler(_new_capsule(function(), ctypes.addressof(_CAPSULE_NAME), None))
    if previous is None:
        return False
    if _state["previous"] is None:
        _state["previous"] = previous
    return installed()


def uninstall():
    """Give NumPy back the handler ``install`` replaced (in the calling thread's context)."""
    if installed() and _state["previous"] is not None:
        _set_handler(_state["previous"])
    return not installed()


def is_aligned(array):
    """Whether ``array``'s data starts on a 64-byte boundary."""
    return array.__array_interface__["data"][0] % ALIGNMENT == 0

