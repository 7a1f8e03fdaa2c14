"""Float32 elementwise math on OpenMP loops, one table line per op: the C expression of one
element ``x``, compiled into a loop over dense float32 arrays that runs on the threads
oneDNN's kernels use (``openmp_kernels``).

Where NumPy computes these ops on one thread, and some (``sin``, ``erf``) without SIMD, torch
runs SLEEF's vector functions on all its threads. Here the C library's vector functions do that
work: glibc's libmvec (``sinf`` on 16 lanes at once with AVX-512), which the compiler calls
from the vectorized loop because the functions are declared ``omp declare simd``. Their
results are within a few ulp of the exact ones, as SLEEF's are (``tests/test_vector_math.py``
measures both against float64). ``sqrt``, division and the selects are the IEEE operations
NumPy runs, so those ops give NumPy's bits.

The source is built apart from ``openmp_kernels``'s, since it also needs libmvec (glibc 2.35
or newer for every function here): where that is missing, only these ops fall back to NumPy.
"""
import ctypes

import numpy as np

from . import openmp_kernels
from .pointers import address

# op name: the C expression of a float32 element ``x``, computed as torch computes the op in
# float32 (deg2rad multiplies by the float32 nearest to pi / 180)
UNARY = {
    "sin": "sinf(x)",
    "cos": "cosf(x)",
    "exp2": "exp2f(x)",
    "log1p": "log1pf(x)",
    "erf": "erff(x)",
    "erfc": "erfcf(x)",
    "sqrt": "sqrtf(x)",
    "rsqrt": "1.0f / sqrtf(x)",
    "sigmoid": "1.0f / (1.0f + expf(-x))",
    "sign": "(float)(x > 0.0f) - (float)(x < 0.0f)",
    "frac": "x - truncf(x)",
    "square": "x * x",
    "deg2rad": "x * (float)0.017453292519943295",
}

# op name: (the saved value the gradient reads, ``x`` the input or ``y`` the result; the C
# expression of it and ``g``, the output's gradient), each operation rounded to float32 in the
# order ember's formula on arrays takes
GRADIENTS = {
    "sigmoid": ("y", "(g * y) * (1.0f - y)"),
}

# op name (or "op backward"): the fewest elements for which the op takes its loop, where the
# loop took less time than NumPy's path at 1 and at 2 threads (``benchmarks/vector_math.py``):
# below, the ctypes call around the loop costs more than it saves. NumPy runs square and
# deg2rad in one vectorized pass as well: only a second thread makes up for the call.
MIN_ELEMENTS = {
    "sin": 1 << 14, "cos": 1 << 14, "exp2": 1 << 14, "log1p": 1 << 18, "erf": 1 << 12,
    "erfc": 1 << 12, "sqrt": 1 << 14, "rsqrt": 1 << 14, "sigmoid": 1 << 12, "sign": 1 << 14,
    "frac": 1 << 15, "square": 1 << 20, "deg2rad": 1 << 20,
    "sigmoid backward": 1 << 15,
}

# the C library's functions the expressions call, which libmvec has vector versions of
VECTOR_FUNCTIONS = ("sinf", "cosf", "exp2f", "log1pf", "erff", "erfcf", "expf")

_LOOP = """
void {name}({parameters}, float *out, int64_t n, int nthreads) {{
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < n; i++) {{
        {elements}
        out[i] = {expression};
    }}
}}
"""


def _loop(name, expression, inputs):
    return _LOOP.format(
        name=name, expression=expression,
        parameters=", ".join(f"const float *{v}s" for v in inputs),
        elements="\n        ".join(f"const float {v} = {v}s[i];" for v in inputs))


def _source():
    declarations = "".join(f"#pragma omp declare simd notinbranch\nfloat {f}(float);\n"
                           for f in VECTOR_FUNCTIONS)
    loops = [_loop(f"{op}_float32", expression, ("x",)) for op, expression in UNARY.items()]
    loops += [_loop(f"{op}_backward_float32", expression, ("g", saved))
              for op, (saved, expression) in GRADIENTS.items()]
    # no fused multiply-adds: each operation rounds as NumPy's passes round it; no traps (the
    # loops do not read the floating-point flags), which lets the compiler vectorize truncf
    return ("#include <math.h>\n#include <stdint.h>\n" + declarations
            + '#pragma GCC optimize("fp-contract=off", "no-trapping-math")\n' + "".join(loops))


SOURCE = _source()

_functions = {}   # name -> ctypes function, or None where it could not be built


def _function(name, n_inputs):
    if name not in _functions:
        from .._inductor import _compiler
        argtypes = (ctypes.c_void_p,) * (n_inputs + 1) + (ctypes.c_int64, ctypes.c_int)
        _functions[name] = _compiler.load(SOURCE, name, quiet=True, libraries=("mvec",),
                                          argtypes=argtypes)
    return _functions[name]


def available():
    """Whether the loops can be built here (a C compiler and libmvec are found)."""
    return _function("sin_float32", 1) is not None


def _run(name, inputs):
    if not openmp_kernels._dense_alike(*inputs, least=1):
        return None
    function = _function(name, len(inputs))
    if function is None:
        return None
    out = np.empty_like(inputs[0])   # the inputs' layout: the same flat order
    function(*[address(a) for a in inputs], address(out), out.size, openmp_kernels._threads())
    return out


def unary(op, x):
    """``op`` (a name in ``UNARY``) of a dense float32 array with elements, in its layout;
    None where the loop does not apply or cannot be built. (Ops ask for arrays of the op's
    ``MIN_ELEMENTS`` or more.)"""
    return _run(f"{op}_float32", (x,))


def gradient(op, grad, saved):
    """The gradient ``GRADIENTS[op]`` from dense float32 arrays of one shape and layout: the
    output's gradient and the saved input or result the formula reads; None where the loop
    does not apply or cannot be built."""
    return _run(f"{op}_backward_float32", (grad, saved))
