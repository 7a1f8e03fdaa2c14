"""oneDNN's calls on a training step's path through a small compiled shim, at an extension
call's cost (``native_calls``) instead of ctypes': a plan whose arguments are all in the
caller's layout run in one call (each memory object pointed at its array, the primitive
executed, the stream waited on), and ``dnnl_sgemm``.

The shim takes oneDNN's functions by address, so it needs neither oneDNN's headers nor a link
to its library. Where it cannot be built (no C compiler), ``run_plan`` and ``sgemm`` return
None and the callers make the same calls through ctypes.
"""
import ctypes

from . import capi

__all__ = ["run_plan", "plan_functions", "sgemm", "STAGES"]

SOURCE = r"""
#include <stdint.h>

typedef int (*set_handle_t)(void *, void *);
typedef int (*execute_t)(void *, void *, int, const void *);
typedef int (*wait_t)(void *);
typedef int (*sgemm_t)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t,
                       const float *, int64_t, float, float *, int64_t);

/* functions: dnnl_memory_set_data_handle, dnnl_primitive_execute, dnnl_stream_wait. Points
   memories[i] at pointers[i] (count of each), runs the primitive on exec_args (count of them)
   and waits on the stream. Returns 0, or the failing call's status plus 256 times its stage
   (0 pointing a memory object, 1 executing, 2 waiting). */
int run_plan(void **functions, void *primitive, void *stream, void *exec_args, int64_t count,
             void **memories, void **pointers) {
    int status;
    for (int64_t i = 0; i < count; i++)
        if ((status = ((set_handle_t)functions[0])(memories[i], pointers[i]))) return status;
    if ((status = ((execute_t)functions[1])(primitive, stream, (int)count, exec_args)))
        return status + 256;
    if ((status = ((wait_t)functions[2])(stream))) return status + 512;
    return 0;
}

/* dnnl_sgemm at function, with the transpositions as 0 ('N') or 1 ('T'). */
int sgemm(void *function, int64_t transa, int64_t transb, int64_t m, int64_t n, int64_t k,
          float alpha, void *a, int64_t lda, void *b, int64_t ldb, float beta, void *c, int64_t ldc) {
    return ((sgemm_t)function)(transa ? 'T' : 'N', transb ? 'T' : 'N', m, n, k, alpha, a, lda,
                               b, ldb, beta, c, ldc);
}
"""

# run_plan's stages, by the status's multiple of 256
STAGES = ("dnnl_memory_set_data_handle", "dnnl_primitive_execute", "dnnl_stream_wait")

_bound = {}


def _shim(name, kinds):
    if name not in _bound:
        from .. import native_calls
        from ..._inductor import _compiler
        _bound[name] = native_calls.bind(_compiler.load(SOURCE, name, quiet=True, argtypes=None),
                                         kinds, result="i")
    return _bound[name]


def _address(name):
    return ctypes.cast(getattr(capi.lib(), name), ctypes.c_void_p).value


def run_plan():
    """``call(functions, primitive, stream, exec_args, count, memories, arrays)``: the
    primitive (an address) run on the ``dnnl_exec_arg_t`` array at ``exec_args`` after
    pointing each memory object of the tuple ``memories`` at the array (or address) in the
    same place of ``arrays``; ``functions`` is ``plan_functions()``. Returns the shim's status
    (0, or a failure's status plus 256 times its place in ``STAGES``). None where the shim
    cannot be built."""
    return _shim("run_plan", "PpppqPP")


def plan_functions():
    """The addresses ``run_plan`` calls, in its order."""
    return tuple(_address(name) for name in STAGES)


def sgemm():
    """``call(function, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`` for
    ``dnnl_sgemm`` (``function``, its address; the transpositions 0 or 1, the matrices arrays
    or addresses), returning its status; None where the shim cannot be built."""
    return _shim("sgemm", "pqqqqqfpqpqfpq")
