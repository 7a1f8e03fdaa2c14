"""Float32 elementwise math on OpenMP loops, one table line per op: the C expression of one
element ``x``, compiled into a loop over dense float32 arrays that runs on the threads
oneDNN's kernels use (``openmp_kernels``).

Where NumPy computes these ops on one thread, some as scalar loops (``hypot``) and ember's own
``erf``, ``erfc`` and ``erfinv`` in several passes, torch runs SLEEF's vector functions on all
its threads. Here the C library's vector functions do that
work: glibc's libmvec (``sinf`` on 16 lanes at once with AVX-512), which the compiler calls
from the vectorized loop because the functions are declared ``omp declare simd``. Their
results are within a few ulp of the exact ones, as SLEEF's are (``tests/test_vector_math.py``
measures both against float64). ``sqrt``, division and the selects are the IEEE operations
NumPy runs, so those ops give NumPy's bits.

The source is built apart from ``openmp_kernels``'s, since it also needs libmvec (glibc 2.35
or newer for every function here): where that is missing, only these ops fall back to NumPy.
Conversions between float32 and float16 (NumPy's own take ten times torch's time), and from
float32 to bfloat16 (ml_dtypes' cast, three times), are built apart again, since C's
``_Float16`` needs GCC 12 or newer.
"""
import ctypes

import ml_dtypes
import numpy as np

from . import native_calls, openmp_kernels
from .choice import KernelChoice

# op name: the C expression of a float32 element ``x``, computed as torch computes the op in
# float32 (deg2rad multiplies by the float32 nearest to pi / 180)
UNARY = {
    "exp": "expf(x)",
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
    "erfinv": "erfinv_float(x)",
    # ember's formula: min(x, 0) as (x - |x|) / 2, less log1p(exp(-|x|))
    "logsigmoid": "x * 0.5f - fabsf(x) * 0.5f - log1pf(expf(-fabsf(x)))",
    # ember.special's, with x * pi in float32 as torch takes it
    "sinc": "x == 0.0f ? 1.0f : sinf(x * (float)3.141592653589793) / (x * (float)3.141592653589793)",
    "entr": "entr_float(x)",
}

# op name: the C expression of float32 elements ``x`` and ``y``, as NumPy's ufunc computes it
# (ember's path: NaN propagates through maximum and minimum; a tie of signed zeros gives ``y``).
# (fmax and fmin took as long on the loop as on NumPy's, at 1 and 2 threads.)
BINARY = {
    "maximum": "(x > y || x != x) ? x : y",
    "minimum": "(x < y || x != x) ? x : y",
    "copysign": "copysignf(x, y)",
    "hypot": "hypotf(x, y)",
    "atan2": "atan2f(x, y)",
    "nextafter": "nextafter_float(x, y)",
    # 0 where x is 0 and y is not NaN, as torch's
    "xlogy": "(x == 0.0f && y == y) ? 0.0f : x * logf(y)",
    "xlog1py": "(x == 0.0f && y == y) ? 0.0f : x * log1pf(y)",
    # div(rounding_mode="trunc"): the quotient rounded to float32, then its trunc
    "div_trunc": "truncf(x / y)",
    "logaddexp": "logaddexp_float(x, y, 0)",
    "logaddexp2": "logaddexp_float(x, y, 1)",
}

# op name: the C expression of a float32 element ``x`` and the op's float32 parameters ``p[0]``,
# ``p[1]``, ... (nan_to_num: the values for NaN, +inf and -inf; logit: the bounds its input is
# clamped to, eps and 1 - eps, or -inf and inf)
WITH_PARAMETERS = {
    "nan_to_num": "x != x ? p[0] : x == INFINITY ? p[1] : x == -INFINITY ? p[2] : x",
    "logit": "logit_between(x, p[0], p[1])",
    # elu, selu and celu: alpha, scale, input_scale (the composite's roundings)
    "elu": "(x > 0.0f ? x : expm1f(NONPOSITIVE(x) * p[2]) * p[0]) * p[1]",
    # softplus: beta, threshold (ember's formula, its input scaled by beta)
    "softplus": "(x * p[0]) > p[1] ? x : log1pf(expf(AT_MOST(x * p[0], p[1]))) / p[0]",
    # round(x, decimals): to a multiple of 10^-decimals (p[0] its scale, 10^|decimals|), as ember's passes
    "round_decimals": "rintf(x * p[0]) / p[0]",
    "round_tens": "rintf(x / p[0]) * p[0]",
}

# op name: the C expression of float32 elements ``x``, ``y`` and ``z`` of three arrays and the
# op's float32 parameters ``p[0]``, ...: the operations of ember's formula on arrays, in its
# order (addcmul and addcdiv: input, tensor1, tensor2 and value; lerp: input, end and weight)
TERNARY = {
    "addcmul": "x + (y * p[0]) * z",
    "addcdiv": "x + (y * p[0]) / z",
    "lerp": "fabsf(z) < 0.5f ? x + z * (y - x) : y - (y - x) * (1.0f - z)",
    # clamp to tensor bounds: NumPy's maximum with the lower, then minimum with the upper (a NaN kept)
    "clamp": "clamp_between(x, y, z)",
    # trapezoid's areas: the spacing times the sum of the neighbouring samples, halved
    "trapezoid": "(x * (y + z)) / 2.0f",
}

# op name: the C expression of float32 elements ``x`` and ``y`` of two arrays and the op's
# float32 parameters ``p[0]``, ...: the operations of ember's formula on arrays, in its order
# (lerp with a number weight: input, end; the weight, 1 - weight, and 1 where the weight's
# magnitude is below 0.5, each as NumPy rounds it)
BINARY_WITH_PARAMETERS = {
    "lerp_scalar": "p[2] != 0.0f ? x + (y - x) * p[0] : y - (y - x) * p[1]",
}

# op name: (the C expression of float32 elements ``x`` and ``y`` and of ``q``, their quotient
# in float64, exact wherever ``QUOTIENT_IS_EXACT`` holds; torch's algorithm for an element,
# where it does not). Below 2^22 in magnitude (and for a finite divisor) the float64 quotient of
# two float32 numbers never rounds across an integer, so its trunc and floor are the exact ones,
# and ``x - trunc(q) * y`` is exact in float64 (``ops/_float_division.py`` has the argument);
# huge quotients, infinities, NaN and zero divisors take torch's steps, element by element.
DIVISIONS = {
    "fmod": ("(float)copysign((double)x - trunc(q) * (double)y, (double)x)", "fmodf(x, y)"),
    "remainder": ("(float)remainder_exact(x, y, q)", "remainder_float(x, y)"),
    "floor_divide": ("(float)floor(q)", "div_floor_float(x, y)"),
}
QUOTIENT_IS_EXACT = "(fabs(q) < 0x1p22) & !isinf(y)"

# op name: (the saved value the gradient reads, ``x`` the input or ``y`` the result; the C
# expression of it, ``g``, the output's gradient, and the parameters ``p[0]``, ...), each
# operation rounded to float32 in the order ember's formula on arrays takes (logit's bounds are
# eps and 1 - eps rounded to float32, as NumPy compares a float32 array with a number)
GRADIENTS = {
    "sigmoid": ("y", "(g * y) * (1.0f - y)"),
    # alpha, scale, input_scale and their product (ember's formula: the slope times g)
    "elu": ("x", "x > 0.0f ? g * p[1] : g * (expf(NONPOSITIVE(x) * p[2]) * p[3])"),
    # softplus: beta, threshold; logsigmoid: sigmoid(-x) as ember's sigmoid computes it
    "softplus": ("x", "(x * p[0]) > p[1] ? g : g * (1.0f / (1.0f + expf(-(x * p[0]))))"),
    "logsigmoid": ("x", "g * (1.0f / (1.0f + expf(x)))"),
    "abs": ("x", "g * (float)((x > 0.0f) - (x < 0.0f))"),   # (torch's sign: 0 at NaN and at 0)
    "logit": ("x", "(x < p[0] || x > p[1]) ? p[2] : g / (x * (1.0f - x))"),
}

# op name (or "op backward"): the fewest elements for which the op takes its loop, where the
# loop took less time than NumPy's path at 1 and at 2 threads (``benchmarks/vector_math.py``):
# below, the call around the loop costs more than it saves (erf, erfc, erfinv and floor division
# at every size, where NumPy's path computes element by element with Python's ``math``, or is
# several passes whatever the size; at 1, the op's compiled function takes small float32 inputs
# straight to the loop, ``ops._compiled_functions``). NumPy runs square,
# deg2rad, maximum and minimum in one vectorized pass as well: only a second thread makes up
# for the call (atan2's loop, too, gains from 2 threads only, below 1M elements).
MIN_ELEMENTS = {
    "exp": 1 << 15, "sin": 1 << 14, "cos": 1 << 14, "exp2": 1 << 14, "log1p": 1 << 18, "erf": 1,
    "erfc": 1, "sqrt": 1 << 14, "rsqrt": 1, "sigmoid": 1, "sign": 1,
    "frac": 1, "square": 1 << 20, "deg2rad": 1 << 20,
    "erfinv": 1, "sigmoid backward": 1 << 15, "logit backward": 1 << 10, "abs backward": 1 << 13,
    "nan_to_num": 1 << 14, "logit": 1 << 13,
    "maximum": 1 << 21, "minimum": 1 << 21, "copysign": 1 << 14, "hypot": 1 << 11,
    "atan2": 1 << 18, "fmod": 1 << 10, "remainder": 1, "floor_divide": 1, "div_trunc": 1,
    "nextafter": 1 << 12, "elu": 1 << 12, "elu backward": 1 << 12, "softplus": 1 << 12,
    "softplus backward": 1, "logsigmoid": 1 << 12, "logsigmoid backward": 1, "sinc": 1, "entr": 1,
    "xlogy": 1, "xlog1py": 1, "addcmul": 1 << 14, "addcdiv": 1 << 13, "lerp": 1, "lerp_scalar": 1 << 15,
    "clamp": 1 << 17, "logaddexp": 1 << 10, "logaddexp2": 1 << 10, "round_decimals": 1 << 12,
    "round_tens": 1 << 12, "trapezoid": 1 << 10,
}
# (softplus's and logsigmoid's gradients read sigmoid: on the loop wherever sigmoid is, so
# that their arrays' bits are the ember-op formula's)

# the C library's functions the expressions call, which libmvec has vector versions of
VECTOR_FUNCTIONS = ("float sinf(float)", "float cosf(float)", "float exp2f(float)",
                    "float log1pf(float)", "float erff(float)", "float erfcf(float)",
                    "float expf(float)", "float logf(float)", "float expm1f(float)", "float hypotf(float, float)",
                    "float atan2f(float, float)", "double erf(double)", "double exp(double)")

# functions the expressions call besides the C library's. erfinv: Giles' single-precision
# approximation ("Approximating the erfinv function", 2010; within 4 ulp), then one Newton step
# on erf in double, which brings it within half an ulp as torch's is; +-1 give +-inf.
HELPERS = """
/* ember.special.entr: -x log(x) for x > 0, 0 at 0, -inf below, NaN kept (the logarithm of
   1 where x is not positive) */
static inline float entr_float(float x) {
    const float product = -x * logf(x > 0.0f ? x : 1.0f);
    return x > 0.0f ? product : (x == 0.0f ? 0.0f : (x < 0.0f ? -INFINITY : x));
}

/* min(x, 0) and min(x, c), a NaN kept (NumPy's minimum, ember's clamp(max=...)) */
#define NONPOSITIVE(x) (((x) < 0.0f || (x) != (x)) ? (x) : 0.0f)
#define AT_MOST(x, c) (((x) < (c) || (x) != (x)) ? (x) : (c))

/* NumPy's minimum(maximum(x, lo), hi), the NaN it keeps kept (one select a step: gcc does not vectorize
   the second maximum's or minimum's select on the first's result) */
static inline float clamp_between(float x, float lo, float hi) {
    const float above = x > lo ? x : lo;
    const float m = x != x ? x : above;
    const float below = m < hi ? m : hi;
    return m != m ? m : below;
}
#pragma omp declare simd notinbranch
static inline float erfinv_float(float x) {
    float w = -logf((1.0f - x) * (1.0f + x)), p;
    if (w < 5.0f) {
        w = w - 2.5f;
        p = 2.81022636e-08f;
        p = 3.43273939e-07f + p * w; p = -3.5233877e-06f + p * w; p = -4.39150654e-06f + p * w;
        p = 0.00021858087f + p * w; p = -0.00125372503f + p * w; p = -0.00417768164f + p * w;
        p = 0.246640727f + p * w; p = 1.50140941f + p * w;
    } else {
        w = sqrtf(w) - 3.0f;
        p = -0.000200214257f;
        p = 0.000100950558f + p * w; p = 0.00134934322f + p * w; p = -0.00367342844f + p * w;
        p = 0.00573950773f + p * w; p = -0.0076224613f + p * w; p = 0.00943887047f + p * w;
        p = 1.00167406f + p * w; p = 2.83297682f + p * w;
    }
    double r = (double)(p * x);
    r -= (erf(r) - (double)x) / (1.1283791670955126 * exp(-r * r));
    return fabsf(x) == 1.0f ? copysignf(INFINITY, x) : (float)r;
}

/* torch's logaddexp (logaddexp2 where base2): the larger of x and y (NaN kept) plus log1p(exp(-|x - y|))
   (of exp2, scaled by 1 / ln 2), each operation rounded as ember's passes round it; where both are the same
   infinity, that infinity (one select a step: see clamp_between) */
static inline float logaddexp_float(float x, float y, int base2) {
    const float d = -fabsf(x - y);
    float tail = log1pf(base2 ? exp2f(d) : expf(d));
    if (base2) tail = tail * (float)1.4426950408889634;
    const float above = x > y ? x : y;
    const float larger = x != x ? x : above;
    return ((x == y) & (fabsf(x) == INFINITY)) ? x : larger + tail;
}

/* log(c / (1 - c)) of x clamped to [lo, hi] (NaN stays NaN), as ember's formula on arrays */
#pragma omp declare simd notinbranch
static inline float logit_between(float x, float lo, float hi) {
    const float c = x < lo ? lo : x > hi ? hi : x;
    return logf(c / (1.0f - c));
}

/* x - floor(q) y for the exact quotient q: the floor's remainder; a zero has x's sign, as
   torch's (an fmod's) has */
#pragma omp declare simd notinbranch
static inline double remainder_exact(float x, float y, double q) {
    double r = (double)x - floor(q) * (double)y;
    return r != 0.0 ? r : copysign(0.0, (double)x);
}

/* C's nextafterf on the bits: one unit in the last place towards y; from a zero the smallest
   subnormal of y's sign; y itself where the two are equal; NaN where either is */
#pragma omp declare simd notinbranch
static inline float nextafter_float(float x, float y) {
    union { float f; uint32_t u; } v = {x};
    const uint32_t toward = ((x < y) == (x > 0.0f)) ? v.u + 1u : v.u - 1u;
    v.u = x == 0.0f ? (y < 0.0f ? 0x80000001u : 1u) : toward;
    return (x != x || y != y) ? x + y : (x == y ? y : v.f);
}

/* torch's float remainder and floor division, element by element */
static float remainder_float(float x, float y) {
    float mod = fmodf(x, y);
    if (mod != 0.0f && (y < 0.0f) != (mod < 0.0f)) mod += y;
    return mod;
}

static float div_floor_float(float x, float y) {
    if (y == 0.0f) return x / y;
    float mod = fmodf(x, y);
    float div = (x - mod) / y;
    if (mod != 0.0f && (y < 0.0f) != (mod < 0.0f)) div -= 1.0f;
    if (div == 0.0f) return copysignf(0.0f, x / y);
    float floored = floorf(div);
    return div - floored > 0.5f ? floored + 1.0f : floored;
}
"""

# An elementwise loop: blocks of whole vectors of ``_LANES`` elements shared among the threads, then
# the last elements computed as one whole vector (the elements before them read again, into a buffer):
# each element takes the vector form of a function wherever it lies and however many threads run (a
# compiler's scalar remainder, or the remainder of each thread's share, would call the scalar form,
# whose last bit may differ).
_LANES = 16
_LOOP = """
void {name}({arguments}, float *out, int64_t n, int nthreads) {{{parameters}
    const int64_t body = n - n % {lanes};
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t start = 0; start < body; start += {block}) {{
        const int64_t end = start + {block} < body ? start + {block} : body;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) {{
            {elements}
            out[i] = {expression};
        }}
    }}
    if (body < n) {{
        float last[{lanes}];
        const int64_t first = n >= {lanes} ? n - {lanes} : 0;
        #pragma omp simd
        for (int64_t j = 0; j < {lanes}; j++) {{
            const int64_t i = first + (j < n ? j : n - 1);
            {elements}
            last[j] = {expression};
        }}
        for (int64_t i = body; i < n; i++) out[i] = last[i - first];
    }}
}}
"""


# a binary op of an array and a row repeated over its rows (each row's elements as ``_LOOP`` takes them)
_ROWS_LOOP = """
void {name}(const float *xs_, const float *ys, float *out_, int64_t rows, int64_t width,
            int nthreads) {{
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {{
        const float *xs = xs_ + r * width;
        float *out = out_ + r * width;{body}
    }}
}}
"""
_ROW = """
        const int64_t body = width - width % {lanes};
        #pragma omp simd
        for (int64_t i = 0; i < body; i++) {{
            {read_i}
            out[i] = {expression};
        }}
        if (body < width && width >= {lanes}) {{   /* (the row's last whole vector: read contiguously) */
            float last[{lanes}];
            const int64_t first = width - {lanes};
            #pragma omp simd
            for (int64_t j = 0; j < {lanes}; j++) {{
                {read_last}
                last[j] = {expression};
            }}
            for (int64_t i = body; i < width; i++) out[i] = last[i - first];
        }} else if (body < width) {{
            float last[{lanes}];
            #pragma omp simd
            for (int64_t j = 0; j < {lanes}; j++) {{
                const int64_t i = j < width ? j : width - 1;
                {read_i}
                last[j] = {expression};
            }}
            for (int64_t i = 0; i < width; i++) out[i] = last[i];
        }}"""


def _row(expression, inputs):
    """``_ROW``'s body of one row for an op's C expression of the elements ``inputs`` (``x``, ``y``, ...)."""
    def read(index):
        return " ".join(f"const float {v} = {v}s[{index}];" for v in inputs)
    return _ROW.format(expression=expression, lanes=_LANES, read_i=read("i"), read_last=read("first + j"))


# a ternary op of arrays each of the output's shape or a row repeated over its rows (the row's size
# ``width``): an input's row r begins ``r * step`` elements in, its step ``width`` or 0
_TERNARY_ROWS_LOOP = """
void {name}(const float *xs_, const float *ys_, const float *zs_, const float *given, float *out_,
            int64_t rows, int64_t width, int64_t x_step, int64_t y_step, int64_t z_step, int nthreads) {{{parameters}
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {{
        const float *xs = xs_ + r * x_step, *ys = ys_ + r * y_step, *zs = zs_ + r * z_step;
        float *out = out_ + r * width;{body}
    }}
}}
"""


# A division's loops: blocks of ``_BLOCK`` elements, each computed on the fast path, then
# (in the rare blocks where the quotient is not exact everywhere) fixed element by element.
_BLOCK = 2048
_DIVISION_BLOCK = """
        int inexact = 0;
        #pragma omp simd reduction(|:inexact)
        for (int64_t i = start; i < end; i++) {{
            const float x = {x}, y = {y};
            const double q = (double)x / (double)y;
            out[i] = {fast};
            inexact |= !({exact});
        }}
        if (inexact)
            for (int64_t i = start; i < end; i++) {{
                const float x = {x}, y = {y};
                const double q = (double)x / (double)y;
                if (!({exact})) out[i] = {slow};
            }}"""
_DIVISION_LOOP = """
void {name}(const float *xs, {y_parameter}, float *out, int64_t n, int nthreads) {{
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t start = 0; start < n; start += {block}) {{
        const int64_t end = start + {block} < n ? start + {block} : n;{body}
    }}
}}
"""
_DIVISION_ROW = """
        for (int64_t start = 0; start < width; start += {block}) {{
            const int64_t end = start + {block} < width ? start + {block} : width;{body}
        }}"""


# softmax and log_softmax of each row (the last axis) of a row-major float32 array, and their
# gradients: the row's peak, the sum of exp(x - peak) in float32 lanes, then each element, as
# torch's kernels for the last dim compute them. A row holding NaN or +inf, or only -inf,
# comes out NaN whole, as torch's does (its max is NaN, or inf - inf is); attention's "safe"
# softmax gives a row of only -inf zeros.
SOFTMAX_ROWS = r"""
#define LANES 16
#define KEEP(e, i) out[i] = (e)
#define DROP(e, i) (void)(e)
/* the sum of exp(x - peak) over a row, each term stored (KEEP) or not (DROP): the body in
   whole vectors, then the last LANES elements as one vector, of which only the ones past the
   body are added (a scalar remainder would call the scalar exp for each) */
#define EXP_SUM(STORE)                                                                      \
    const int64_t body = width - width % LANES, rest = width - body;                        \
    _Pragma("omp simd reduction(+:total)")                                                  \
    for (int64_t i = 0; i < body; i++) {                                                    \
        const float e = expf(xs[i] - peak);                                                 \
        STORE(e, i);                                                                        \
        total += e;                                                                         \
    }                                                                                       \
    if (rest && width >= LANES) {                                                           \
        const int64_t last = width - LANES;                                                 \
        _Pragma("omp simd reduction(+:total)")                                              \
        for (int64_t j = 0; j < LANES; j++) {                                               \
            const float e = expf(xs[last + j] - peak);                                      \
            STORE(e, last + j);                                                             \
            total += j >= LANES - rest ? e : 0.0f;                                          \
        }                                                                                   \
    } else {                                                                                \
        for (int64_t i = body; i < width; i++) {                                            \
            const float e = expf(xs[i] - peak);                                             \
            STORE(e, i);                                                                    \
            total += e;                                                                     \
        }                                                                                   \
    }

/* the row's largest and smallest elements (peak, low) and whether it holds NaN (nan) */
#define ROW_RANGE                                                                           \
    float peak = -INFINITY, low = INFINITY;                                                 \
    int nan = 0;                                                                            \
    _Pragma("omp simd reduction(max:peak) reduction(min:low) reduction(|:nan)")             \
    for (int64_t i = 0; i < width; i++) {                                                   \
        peak = xs[i] > peak ? xs[i] : peak;                                                 \
        low = xs[i] < low ? xs[i] : low;                                                    \
        nan |= xs[i] != xs[i];                                                              \
    }

void softmax_rows_float32(const float *xs_, float *out_, int64_t rows, int64_t width, int log,
                          int safe, int nthreads) {
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xs = xs_ + r * width;
        float *out = out_ + r * width;
        ROW_RANGE
        if (nan || !(peak < INFINITY) || peak == -INFINITY) {
            /* a ``safe`` softmax's row of -inf only (every key masked) weighs nothing */
            const float fill = safe && !nan && peak == -INFINITY ? 0.0f : NAN;
            for (int64_t i = 0; i < width; i++) out[i] = fill;
            continue;
        }
        float total = 0.0f;
        if (low - peak < -87.0f) {
            /* a row with scores far below its peak (a mask's -inf): exp of such a score is
               under the smallest normal number, and its lane would send libmvec's vector exp
               to its scalar special cases (four times the row's time). The exponents are
               clamped into range in a pass of their own, then those terms taken as 0. */
            for (int64_t i = 0; i < width; i++) {
                const float d = xs[i] - peak;
                out[i] = d > -87.0f ? d : -87.0f;
            }
            #pragma omp simd reduction(+:total)
            for (int64_t i = 0; i < width; i++) {
                const float e = expf(out[i]);
                out[i] = xs[i] - peak < -87.0f ? 0.0f : e;
                total += out[i];
            }
            if (log) {
                const float log_total = logf(total);
                #pragma omp simd
                for (int64_t i = 0; i < width; i++) out[i] = (xs[i] - peak) - log_total;
            } else {
                #pragma omp simd
                for (int64_t i = 0; i < width; i++) out[i] = out[i] / total;
            }
            continue;
        }
        if (log) {
            EXP_SUM(DROP)
            const float log_total = logf(total);
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) out[i] = (xs[i] - peak) - log_total;
        } else {
            EXP_SUM(KEEP)
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) out[i] = out[i] / total;
        }
    }
}

/* log(sum(exp(x))) of each row into out[r], shifted by the row's peak as NumPy's passes shift
   it (an infinite peak by 0: +inf gives +inf, a row of -inf gives -inf), NaN for a row holding
   NaN. A row with terms far below its peak (a mask's -inf) clamps their exponents in chunks of
   its own first, as softmax's rows do; those terms are under the smallest normal number, and
   the peak's own term is 1, so they count for nothing. */
#define LOGSUMEXP_CHUNK 256
void logsumexp_rows_float32(const float *xs_, float *out, int64_t rows, int64_t width, int nthreads) {
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xs = xs_ + r * width;
        ROW_RANGE
        if (nan || peak == INFINITY || peak == -INFINITY) {
            out[r] = nan ? NAN : peak;
            continue;
        }
        float total = 0.0f;
        if (low - peak < -87.0f) {
            float clamped[LOGSUMEXP_CHUNK];
            for (int64_t start = 0; start < width; start += LOGSUMEXP_CHUNK) {
                const int64_t m = width - start < LOGSUMEXP_CHUNK ? width - start : LOGSUMEXP_CHUNK;
                for (int64_t i = 0; i < m; i++) {
                    const float d = xs[start + i] - peak;
                    clamped[i] = d > -87.0f ? d : -87.0f;
                }
                #pragma omp simd reduction(+:total)
                for (int64_t i = 0; i < m; i++) {
                    const float e = expf(clamped[i]);
                    total += xs[start + i] - peak < -87.0f ? 0.0f : e;
                }
            }
        } else {
            EXP_SUM(DROP)
        }
        out[r] = logf(total) + peak;
    }
}

/* cross entropy's exponentials without the shift: out = exp(x), each row's sum into totals,
   then each row scaled by factors[r] / total (factors NULL: not scaled; one factor for every
   row when per_row is 0) */
void exp_rows_scaled_float32(const float *xs_, float *out_, float *totals, const float *factors,
                             int64_t rows, int64_t width, int per_row, int nthreads) {
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xs = xs_ + r * width;
        float *out = out_ + r * width;
        const float peak = 0.0f;
        float total = 0.0f;
        EXP_SUM(KEEP)
        totals[r] = total;
        if (factors) {
            const float scale = factors[per_row ? r : 0] / total;
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) out[i] *= scale;
        }
    }
}

/* cross entropy over class indices without class weights or smoothing, a row at a time: the
   row's peak, the sum of exp(x - peak), and where factor is not 0 softmax(x) * factor written
   to out (what the gradient is made from); the row's loss log(sum) - (x[target] - peak) is
   returned, NAN where the target is out of range or equal to ignore_index, or the row holds
   NaN or an infinity (the caller's general path takes those). */
static double cross_entropy_row(const float *xs, int64_t target, float *out, int64_t width,
                                int64_t ignore_index, float factor) {
    if (target < 0 || target >= width || target == ignore_index) return NAN;
    ROW_RANGE
    if (nan || peak == INFINITY || low == -INFINITY) return NAN;
    float total = 0.0f;
    if (factor != 0.0f) {
        EXP_SUM(KEEP)
        const float scale = factor / total;
        #pragma omp simd
        for (int64_t i = 0; i < width; i++) out[i] *= scale;
    } else {
        EXP_SUM(DROP)
    }
    return log((double)total) - (double)(xs[target] - peak);
}

/* the rows' losses summed in double into *loss_sum (NaN where a row was refused); one thread
   runs the rows without an OpenMP region */
void cross_entropy_rows_float32(const float *xs, const int64_t *targets, float *out,
                                double *loss_sum, int64_t rows, int64_t width,
                                int64_t ignore_index, float factor, int nthreads) {
    double loss = 0.0;
    if (nthreads > 1) {
        #pragma omp parallel for num_threads(nthreads) schedule(static) reduction(+:loss)
        for (int64_t r = 0; r < rows; r++)
            loss += cross_entropy_row(xs + r * width, targets[r], out ? out + r * width : (float *)0,
                                      width, ignore_index, factor);
    } else {
        for (int64_t r = 0; r < rows; r++)
            loss += cross_entropy_row(xs + r * width, targets[r], out ? out + r * width : (float *)0,
                                      width, ignore_index, factor);
    }
    *loss_sum = loss;
}

/* the gradients: softmax's y * (g - sum(g * y)), log_softmax's g - exp(y) * sum(g) (its exp,
   as EXP_SUM's, in whole vectors and a last overlapping one: its elements are written twice
   with the same values) */
void softmax_rows_backward_float32(const float *gs_, const float *ys_, float *out_, int64_t rows,
                                   int64_t width, int log, int nthreads) {
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *gs = gs_ + r * width, *ys = ys_ + r * width;
        float *out = out_ + r * width;
        float total = 0.0f;
        if (!log) {
            #pragma omp simd reduction(+:total)
            for (int64_t i = 0; i < width; i++) total += gs[i] * ys[i];
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) out[i] = ys[i] * (gs[i] - total);
            continue;
        }
        float low = INFINITY;
        #pragma omp simd reduction(+:total) reduction(min:low)
        for (int64_t i = 0; i < width; i++) {
            total += gs[i];
            low = ys[i] < low ? ys[i] : low;
        }
        if (low < -87.0f) {
            /* log-probabilities under -87 (a mask's -inf): their exp is under the smallest
               normal number and taken as 0, its argument clamped in a pass of its own, as the
               forward's masked rows (NaN stays NaN) */
            for (int64_t i = 0; i < width; i++) out[i] = ys[i] < -87.0f ? -87.0f : ys[i];
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) {
                const float e = expf(out[i]);
                out[i] = gs[i] - (ys[i] < -87.0f ? 0.0f : e) * total;
            }
            continue;
        }
        const int64_t body = width >= LANES ? width - width % LANES : 0;
        #pragma omp simd
        for (int64_t i = 0; i < body; i++) out[i] = gs[i] - expf(ys[i]) * total;
        if (body < width && width >= LANES) {
            const int64_t last = width - LANES;
            #pragma omp simd
            for (int64_t j = 0; j < LANES; j++) out[last + j] = gs[last + j] - expf(ys[last + j]) * total;
        } else {
            for (int64_t i = body; i < width; i++) out[i] = gs[i] - expf(ys[i]) * total;
        }
    }
}
"""


def _division_loops(op, fast, slow):
    """The three forms of ``binary``'s loops for a ``DIVISIONS`` entry."""
    def body(y):
        return _DIVISION_BLOCK.format(x="xs[i]", y=y, fast=fast, slow=slow, exact=QUOTIENT_IS_EXACT)
    return [_DIVISION_LOOP.format(name=f"{op}_float32", y_parameter="const float *ys",
                                  block=_BLOCK, body=body("ys[i]")),
            _DIVISION_LOOP.format(name=f"{op}_number_float32", y_parameter="float y_",
                                  block=_BLOCK, body=body("y_")),
            _ROWS_LOOP.format(name=f"{op}_rows_float32",
                              body=_DIVISION_ROW.format(block=_BLOCK, body=body("ys[i]")))]


# the length of the parameters' array each loop with parameters is given (zeros after the op's)
PARAMETERS = 4


# the parameters' array copied to the constants ``p[0]``, ... before a loop (read from memory in a
# branch, gcc would not vectorize it)
_PARAMETERS_COPY = (f"\n    const float p[{PARAMETERS}] = {{"
                    + ", ".join(f"given[{k}]" for k in range(PARAMETERS)) + "};")


def _loop(name, expression, inputs, parameters=False):
    """A loop over the arrays ``inputs`` (and a float32 array of the op's parameters)."""
    return _LOOP.format(
        name=name, expression=expression, lanes=_LANES, block=_BLOCK,
        parameters=_PARAMETERS_COPY if parameters else "",
        arguments=", ".join([f"const float *{v}s" for v in inputs] + ["const float *given"] * parameters),
        elements="\n        ".join(f"const float {v} = {v}s[i];" for v in inputs))


def _source():
    declarations = "".join(f"#pragma omp declare simd notinbranch\n{prototype};\n"
                           for prototype in VECTOR_FUNCTIONS)
    loops = [_loop(f"{op}_float32", expression, ("x",)) for op, expression in UNARY.items()]
    loops += [_loop(f"{op}_float32", expression, ("x",), parameters=True)
              for op, expression in WITH_PARAMETERS.items()]
    loops += [_loop(f"{op}_backward_float32", expression, ("g", saved), parameters=True)
              for op, (saved, expression) in GRADIENTS.items()]
    for op, expression in TERNARY.items():
        loops += [_loop(f"{op}_float32", expression, ("x", "y", "z"), parameters=True),
                  _TERNARY_ROWS_LOOP.format(name=f"{op}_rows_float32", parameters=_PARAMETERS_COPY,
                                            body=_row(expression, ("x", "y", "z")))]
    loops += [_loop(f"{op}_float32", expression, ("x", "y"), parameters=True)
              for op, expression in BINARY_WITH_PARAMETERS.items()]
    for op, expression in BINARY.items():
        loops += [_loop(f"{op}_float32", expression, ("x", "y")),
                  _LOOP.format(name=f"{op}_number_float32", expression=expression, lanes=_LANES, block=_BLOCK,
                               parameters="", arguments="const float *xs, float y",
                               elements="const float x = xs[i];"),
                  _ROWS_LOOP.format(name=f"{op}_rows_float32", body=_row(expression, ("x", "y")))]
    for op, (fast, slow) in DIVISIONS.items():
        loops += _division_loops(op, fast, slow)
    # no fused multiply-adds: each operation rounds as NumPy's passes round it; no traps (the
    # loops do not read the floating-point flags), which lets the compiler vectorize truncf
    return ("#include <math.h>\n#include <stdint.h>\n" + declarations
            + '#pragma GCC optimize("fp-contract=off", "no-trapping-math")\n' + HELPERS
            + "".join(loops) + SOFTMAX_ROWS)


SOURCE = _source()

_functions = {}   # name -> the loop (``native_calls.bind``), or None where it could not be built


_ARRAYS_ARGUMENTS = {n: (ctypes.c_void_p,) * (n + 1) + (ctypes.c_int64, ctypes.c_int)
                     for n in (1, 2, 3, 4)}   # (n: the input arrays, and the parameters' array)
_NUMBER_ARGUMENTS = (ctypes.c_void_p, ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int)
_ROWS_ARGUMENTS = (ctypes.c_void_p,) * 3 + (ctypes.c_int64, ctypes.c_int64, ctypes.c_int)


def _function(name, argtypes):
    if name not in _functions:
        from .._inductor import _compiler
        _functions[name] = native_calls.bind(
            _compiler.load(SOURCE, name, quiet=True, libraries=("mvec",), argtypes=argtypes),
            native_calls.kinds_of(argtypes))
    return _functions[name]


_FLOAT32 = np.dtype(np.float32)


def loop_address(op):
    """The address of the compiled loop of ``op`` (a name in ``UNARY`` or ``BINARY``) over float32
    arrays, a C function ``loop(x, out, n, threads)`` (``loop(x, y, out, n, threads)`` for a binary
    op, on arrays of one shape); None where it cannot be built. Ops whose loop runs at every size
    (``MIN_ELEMENTS`` 1) hand it to their compiled function (``ops._compiled_functions``)."""
    from .._inductor import _compiler
    function = _compiler.load(SOURCE, f"{op}_float32", quiet=True, libraries=("mvec",),
                              argtypes=_ARRAYS_ARGUMENTS[2 if op in BINARY else 1])
    return None if function is None else ctypes.cast(function, ctypes.c_void_p).value


def when_large(rule, loop, fallback, at=0):
    """``fallback(*args)`` with a float32 array ``args[at]`` of ``MIN_ELEMENTS[rule]`` elements
    or more given to the kernel choice between ``loop(*args)`` (None where it declines) and
    ``fallback`` itself: how an op asks for one of these loops."""
    choice = KernelChoice(rule, onednn=loop, numpy=fallback)
    least = MIN_ELEMENTS

    def loop_or_fallback(*args):
        x = args[at]
        if x.dtype == _FLOAT32 and x.size >= least[rule]:
            return choice(*args)
        return fallback(*args)
    return loop_or_fallback


# The binary loops' rows form (a row repeated over a matrix's rows) from this many elements,
# whatever the op's own rule: NumPy broadcasts a row with an inner loop's call per row
ROWS_MIN_ELEMENTS = 1 << 15


def binary_when_large(op, fallback):
    """``fallback(x, y)`` with a float32 array ``x`` of ``MIN_ELEMENTS[op]`` elements or more,
    or of ``ROWS_MIN_ELEMENTS`` where ``y`` is an array of another shape (a row), given to the
    kernel choice between ``binary(op, x, y)`` (None where it declines) and ``fallback``."""
    choice = KernelChoice(op, onednn=lambda x, y: binary(op, x, y), numpy=fallback)
    least = MIN_ELEMENTS

    def loop_or_fallback(x, y):
        # (a 0-d x with a larger y: a number first, which the loop does not spread)
        if x.dtype == _FLOAT32 and (x.ndim or y.__class__ is not np.ndarray or not y.ndim):
            size = x.size
            if size >= least[op] or (size >= ROWS_MIN_ELEMENTS and y.__class__ is np.ndarray
                                     and y.shape != x.shape):
                return choice(x, y)
        return fallback(x, y)
    return loop_or_fallback


def available():
    """Whether the loops can be built here (a C compiler and libmvec are found)."""
    return _function("sin_float32", _ARRAYS_ARGUMENTS[1]) is not None


# Up to this many elements a loop runs on the calling thread alone: starting OpenMP's team
# costs more than the loop.
SERIAL_MAX_ELEMENTS = 256


def _run(name, inputs, parameters=None):
    x = inputs[0]
    if len(inputs) == 1 and x.__class__ is np.ndarray and x.flags.c_contiguous:   # (the common case)
        if x.dtype != _FLOAT32 or not x.size:
            return None
    elif not openmp_kernels._dense_alike(*inputs, least=1):
        return None
    if parameters is not None:
        given = np.zeros(PARAMETERS, np.float32)
        given[:len(parameters)] = parameters
        inputs = (*inputs, given)
    function = _function(name, _ARRAYS_ARGUMENTS[len(inputs)])
    if function is None:
        return None
    out = np.empty_like(x)   # the inputs' layout: the same flat order
    size = out.size
    function(*inputs, out, size, openmp_kernels.thread_count() if size > SERIAL_MAX_ELEMENTS else 1)
    return out


def unary(op, x):
    """``op`` (a name in ``UNARY``) of a dense float32 array with elements, in its layout;
    None where the loop does not apply or cannot be built. (Ops ask for arrays of the op's
    ``MIN_ELEMENTS`` or more.)"""
    return _run(f"{op}_float32", (x,))


def with_parameters(op, x, parameters):
    """``op`` (a name in ``WITH_PARAMETERS``) of a dense float32 array with elements, given its
    parameters (numbers, rounded to float32 as NumPy rounds them), in its layout; None where the
    loop does not apply or cannot be built."""
    return _run(f"{op}_float32", (x,), parameters)


def gradient(op, grad, saved, parameters=(0.0,)):
    """The gradient ``GRADIENTS[op]`` from dense float32 arrays of one shape and layout: the
    output's gradient and the saved input or result the formula reads (and its parameters);
    None where the loop does not apply or cannot be built."""
    return _run(f"{op}_backward_float32", (grad, saved), parameters)


def binary_with_parameters(op, x, y, parameters):
    """``op`` (a name in ``BINARY_WITH_PARAMETERS``) of two dense float32 arrays of one shape
    and layout, given its parameters; None where the loop does not apply or cannot be built."""
    if x.shape != getattr(y, "shape", None):
        return None
    return _run(f"{op}_float32", (x, y), parameters)


def ternary(op, x, y, z, parameters=(0.0,)):
    """``op`` (a name in ``TERNARY``) of three float32 arrays, given its parameters: dense arrays of
    one shape and layout, or row-major arrays each of their broadcast shape or of its trailing
    shape (one row, of one size for all of them, repeated over the leading dimensions); in the
    first's layout or row-major, or None where the loop does not apply or cannot be built."""
    if x.shape == y.shape and x.shape == z.shape:
        return _run(f"{op}_float32", (x, y, z), parameters)
    return _ternary_rows(op, (x, y, z), parameters)


_TERNARY_ROWS_ARGUMENTS = (ctypes.c_void_p,) * 5 + (ctypes.c_int64,) * 5 + (ctypes.c_int,)


def _ternary_rows(op, inputs, parameters):
    for a in inputs:
        if type(a) is not np.ndarray or a.dtype != _FLOAT32 or not a.flags.c_contiguous:
            return None
    full = max(inputs, key=lambda a: a.size)
    width = None
    for a in inputs:
        trailing = a.shape[next((i for i, n in enumerate(a.shape) if n != 1), a.ndim):]
        if not trailing or len(trailing) > full.ndim or full.shape[full.ndim - len(trailing):] != trailing:
            return None
        if a.size != full.size:
            if width not in (None, a.size):
                return None
            width = a.size
    if width is None or not full.size:
        return None
    function = _function(f"{op}_rows_float32", _TERNARY_ROWS_ARGUMENTS)
    if function is None:
        return None
    given = np.zeros(PARAMETERS, np.float32)
    given[:len(parameters)] = parameters
    ndim = max(a.ndim for a in inputs)
    out = np.empty((1,) * (ndim - full.ndim) + full.shape, np.float32)
    rows = full.size // width
    function(*inputs, given, out, rows, width, *(width if a.size == full.size else 0 for a in inputs),
             openmp_kernels.thread_count() if full.size > SERIAL_MAX_ELEMENTS else 1)
    return out


def ternary_row_views(op, x, y, z, parameters=(0.0,)):
    """``op`` (a name in ``TERNARY``) of three float32 NumPy arrays of one 2-d shape (rows, width)
    or a row (1, width), each row contiguous and the rows any whole number of elements apart
    (views of a matrix's neighbouring columns, say): row-major, or None where the loop does not
    apply or cannot be built."""
    inputs = (x, y, z)
    if any(type(a) is not np.ndarray or a.dtype != _FLOAT32 or a.ndim != 2 for a in inputs):
        return None
    rows, width = max(a.shape for a in inputs)
    steps = []
    for a in inputs:
        if a.shape[1] != width or a.shape[0] not in (1, rows) or (width > 1 and a.strides[1] != 4) or a.strides[0] % 4:
            return None
        steps.append(a.strides[0] // 4 if a.shape[0] == rows and rows > 1 else 0)
    function = _function(f"{op}_rows_float32", _TERNARY_ROWS_ARGUMENTS) if rows * width else None
    if function is None:
        return None
    given = np.zeros(PARAMETERS, np.float32)
    given[:len(parameters)] = parameters
    out = np.empty((rows, width), np.float32)
    function(*inputs, given, out, rows, width, *steps,
             openmp_kernels.thread_count() if out.size > SERIAL_MAX_ELEMENTS else 1)
    return out


def binary(op, x, y):
    """``op`` (a name in ``BINARY`` or ``DIVISIONS``) of a dense float32 array ``x`` with elements and ``y``: a
    float32 array of ``x``'s shape and layout, a number (a Python float or int, or a float32
    0-d array), or a row-major float32 array of ``x``'s trailing shape repeated over its
    leading dimensions (``x`` row-major); in ``x``'s layout, or None where the loop does not
    apply or cannot be built."""
    if not openmp_kernels._dense_alike(x, least=1):
        return None
    if type(y) is float or type(y) is int or (type(y) in (np.ndarray, np.float32)
                                              and y.dtype == np.float32 and y.ndim == 0):
        function = _function(f"{op}_number_float32", _NUMBER_ARGUMENTS)
        if function is None:
            return None
        out = np.empty_like(x)
        function(x, float(y), out, out.size, openmp_kernels.thread_count())
        return out
    if type(y) is not np.ndarray or y.dtype != np.float32:
        return None
    if y.shape == x.shape:
        return _run(f"{op}_float32", (x, y))
    trailing = y.shape[next((i for i, n in enumerate(y.shape) if n != 1), y.ndim):]
    if (not trailing or not x.flags.c_contiguous or not y.flags.c_contiguous
            or len(trailing) > x.ndim or x.shape[x.ndim - len(trailing):] != trailing):
        return None
    function = _function(f"{op}_rows_float32", _ROWS_ARGUMENTS)
    if function is None:
        return None
    out = np.empty_like(x)
    width = y.size
    function(x, y, out, x.size // width, width,
             openmp_kernels.thread_count())
    return out


# conversions of dense arrays: (from, to) NumPy dtype names -> their C types and the C
# expression of an element ``x``. C's casts round as NumPy's astype does (to nearest, ties to
# even; F16C's instructions where the CPU has them); bfloat16 is float32's upper half, rounded
# to nearest even on its bits, a NaN made the quiet NaN of its sign as ml_dtypes makes it.
CONVERSIONS = {("float32", "float16"): ("float", "_Float16", "(_Float16)x"),
               ("float16", "float32"): ("_Float16", "float", "(float)x"),
               ("float32", "bfloat16"): ("float", "uint16_t", "bfloat16_bits(x)")}

_CONVERSION_HELPERS = """
#include <stdint.h>
#include <string.h>
static inline uint16_t bfloat16_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return x != x ? (uint16_t)(((u >> 16) & 0x8000u) | 0x7FC0u)
                  : (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
"""

# from this many elements a conversion takes its loop (``benchmarks/vector_math.py
# --conversions``)
CONVERSION_MIN_ELEMENTS = 1 << 13

# the half conversions eight elements at a time through F16C's instructions where the CPU has
# them (GCC converts _Float16 an element at a time): the same instructions, the same bits
_F16C_BLOCKS = {
    ("float32", "float16"): "_mm_storeu_si128((__m128i *)(out + i), "
                            "_mm256_cvtps_ph(_mm256_loadu_ps(xs + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));",
    ("float16", "float32"): "_mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(xs + i))));",
}


def _conversion_source(source, target, c_source, c_target, expression):
    elementwise = f"""
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < n; i++) {{
        const {c_source} x = xs[i];
        out[i] = {expression};
    }}"""
    block = _F16C_BLOCKS.get((source, target))
    if block is not None:
        elementwise = f"""
#ifdef __F16C__
    const int64_t whole = n - n % 8;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t i = 0; i < whole; i += 8) {{
        {block}
    }}
    for (int64_t i = whole; i < n; i++) {{
        const {c_source} x = xs[i];
        out[i] = {expression};
    }}
#else{elementwise}
#endif"""
    return f"""
void {source}_to_{target}(const {c_source} *xs, {c_target} *out, int64_t n, int nthreads) {{{elementwise}
}}
"""


CONVERSIONS_SOURCE = ('#pragma GCC optimize("no-trapping-math")\n#ifdef __F16C__\n#include <immintrin.h>\n#endif\n'
                      + _CONVERSION_HELPERS
                      + "".join(_conversion_source(source, target, *types)
                                for (source, target), types in CONVERSIONS.items()))

_conversions = {}   # (from, to) -> the loop (``native_calls.bind``), or None where it could not be built
# CONVERSIONS' pairs by their NumPy dtypes (a dtype's ``name`` takes microseconds to make)
_CONVERSION_PAIRS = {tuple(np.dtype(getattr(ml_dtypes, name, name)) for name in pair): pair
                     for pair in CONVERSIONS}


def converts(source, target):
    """Whether a loop converts arrays of NumPy dtype ``source`` to ``target``."""
    return (source, target) in _CONVERSION_PAIRS


def convert(x, dtype):
    """A dense NumPy array ``x`` as an array of NumPy dtype ``dtype`` in its layout, for the
    pairs in ``CONVERSIONS``; None where the loop does not apply or cannot be built."""
    pair = _CONVERSION_PAIRS.get((x.dtype, np.dtype(dtype)))
    if (pair is None or type(x) is not np.ndarray or not x.size
            or not openmp_kernels.fills_its_memory(x)):
        return None
    if pair not in _conversions:
        from .._inductor import _compiler
        _conversions[pair] = native_calls.bind(
            _compiler.load(CONVERSIONS_SOURCE, "_to_".join(pair), quiet=True, argtypes=_ARRAYS_ARGUMENTS[1]),
            native_calls.kinds_of(_ARRAYS_ARGUMENTS[1]))
    function = _conversions[pair]
    if function is None:
        return None
    out = np.empty_like(x, dtype=dtype)   # (the same layout)
    function(x, out, out.size, openmp_kernels.thread_count())
    return out



_SOFTMAX_ROWS_ARGUMENTS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int,
                           ctypes.c_int, ctypes.c_int)


_SOFTMAX_BACKWARD_ARGUMENTS = (ctypes.c_void_p,) * 3 + (ctypes.c_int64, ctypes.c_int64, ctypes.c_int,
                                                       ctypes.c_int)

# Rows narrower than ``SOFTMAX_MIN_WIDTH`` stay on NumPy's passes over the whole array (the
# loop's cost per row outweighs the work: log_softmax on thousands of rows of 2 or 5), or on
# oneDNN's softmax from its size rule, unless the array has ``SOFTMAX_NARROW_MAX_ELEMENTS``
# elements or fewer, where the call costs less than NumPy's passes
# (``benchmarks/softmax_rows.py``). Arrays of fewer than ``SOFTMAX_THREADS_MIN_ELEMENTS``
# elements run on one thread.
SOFTMAX_MIN_WIDTH = 16
SOFTMAX_NARROW_MAX_ELEMENTS = 1024
SOFTMAX_THREADS_MIN_ELEMENTS = 1 << 15


def _softmax_rows_apply(*arrays):
    """Whether the softmax loops take arrays of this kind: row-major float32 NumPy arrays of one
    shape with elements, in rows of at least ``SOFTMAX_MIN_WIDTH`` or of any width in arrays of
    at most ``SOFTMAX_NARROW_MAX_ELEMENTS``."""
    first = arrays[0]
    if not (type(first) is np.ndarray and first.dtype == _FLOAT32 and first.ndim and first.size
            and (first.shape[-1] >= SOFTMAX_MIN_WIDTH or first.size <= SOFTMAX_NARROW_MAX_ELEMENTS)
            and first.flags.c_contiguous):
        return False
    for a in arrays[1:]:
        if not (type(a) is np.ndarray and a.dtype == _FLOAT32 and a.shape == first.shape and a.flags.c_contiguous):
            return False
    return True


def _softmax_threads(x):
    return openmp_kernels.thread_count() if x.size >= SOFTMAX_THREADS_MIN_ELEMENTS else 1


def softmax_rows_address():
    """The address of ``softmax_rows``' loop, a C function ``loop(x, out, rows, width, log, safe,
    threads)`` over row-major float32 arrays; None where it cannot be built (what the compiled
    functions of softmax and log_softmax call: ``ops._compiled_functions``)."""
    from .._inductor import _compiler
    function = _compiler.load(SOURCE, "softmax_rows_float32", quiet=True, libraries=("mvec",),
                              argtypes=_SOFTMAX_ROWS_ARGUMENTS)
    return None if function is None else ctypes.cast(function, ctypes.c_void_p).value


def softmax_rows(x, log, safe=False):
    """softmax (``log``: log_softmax) along the last axis of a row-major float32 NumPy array,
    or None where that does not apply. ``safe``: a row of only -inf gives zeros (attention's
    fully masked rows), not NaN."""
    if not _softmax_rows_apply(x):
        return None
    function = _function("softmax_rows_float32", _SOFTMAX_ROWS_ARGUMENTS)
    if function is None:
        return None
    shape = x.shape
    out = np.empty(shape, _FLOAT32)
    width, size = shape[-1], x.size
    function(x, out, size // width, width, int(log), int(safe),
             1 if size < SOFTMAX_THREADS_MIN_ELEMENTS else openmp_kernels.thread_count())
    return out


_LOGSUMEXP_ROWS_ARGUMENTS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int)


def logsumexp_rows(x):
    """``log(sum(exp(x)))`` along the last axis of a row-major float32 NumPy array with
    elements, shifted by each row's peak (an array of ``x``'s leading shape), or None where that
    does not apply."""
    if not (type(x) is np.ndarray and x.dtype == _FLOAT32 and x.ndim and x.size and x.flags.c_contiguous):
        return None
    function = _function("logsumexp_rows_float32", _LOGSUMEXP_ROWS_ARGUMENTS)
    if function is None:
        return None
    width = x.shape[-1]
    out = np.empty(x.shape[:-1], np.float32)
    function(x, out, x.size // width, width, _softmax_threads(x))
    return out


_EXP_ROWS_ARGUMENTS = (ctypes.c_void_p,) * 4 + (ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_int)


def exp_rows_scaled(x, factors):
    """``(exp(x) * (factors / totals)[:, None], totals)`` for a row-major (M, C) float32 NumPy
    array ``x``, ``totals`` the row sums of ``exp(x)`` and ``factors`` a float32 array of M row
    factors, one number, or None (``exp(x)`` not scaled): cross entropy's exponentials without
    the shift by the rows' peaks, on the threads. None where that does not apply."""
    if not (_softmax_rows_apply(x) and x.ndim == 2):
        return None
    per_row = type(factors) is np.ndarray
    if per_row and (factors.dtype.kind != "f" or factors.shape != x.shape[:1]):
        return None
    function = _function("exp_rows_scaled_float32", _EXP_ROWS_ARGUMENTS)
    if function is None:
        return None
    out = np.empty_like(x)
    totals = np.empty(x.shape[0], np.float32)
    given = (None if factors is None else np.ascontiguousarray(factors, np.float32) if per_row
             else np.array([factors], np.float32))
    function(x, out, totals, given,
             x.shape[0], x.shape[1], int(per_row), _softmax_threads(x))
    return out, totals


_CROSS_ENTROPY_ARGUMENTS = (ctypes.c_void_p,) * 4 + (ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                            ctypes.c_float, ctypes.c_int)
_INT64 = np.dtype(np.int64)


def cross_entropy_rows(logits, targets, ignore_index, factor):
    """Cross entropy of row-major (M, C) float32 logits against int64 class ``targets`` (M,),
    without class weights or smoothing: ``(loss_sum, weighted)``, the sum over rows of
    ``logsumexp(row) - row[target]`` (a Python float) and ``softmax(logits) * factor`` (None
    when ``factor`` is 0: no gradient wanted). None where that does not apply: other arrays, a
    target out of range or equal to ``ignore_index``, a row holding NaN or an infinity."""
    if (type(logits) is not np.ndarray or logits.dtype != _FLOAT32 or logits.ndim != 2
            or not logits.flags.c_contiguous or not logits.size or type(targets) is not np.ndarray
            or targets.dtype != _INT64 or targets.shape != logits.shape[:1]
            or not targets.flags.c_contiguous):
        return None
    function = _function("cross_entropy_rows_float32", _CROSS_ENTROPY_ARGUMENTS)
    if function is None:
        return None
    weighted = np.empty_like(logits) if factor else None
    loss_sum = np.empty(1)   # (float64: the loop's double)
    rows, width = logits.shape
    function(logits, targets, weighted, loss_sum, rows, width, ignore_index, factor, _softmax_threads(logits))
    loss = float(loss_sum[0])
    return None if loss != loss else (loss, weighted)   # NaN: a row was refused


def softmax_rows_backward(grad, result, log):
    """The gradient of softmax (``log``: log_softmax) along the last axis from the gradient of
    its ``result``, for row-major float32 NumPy arrays of one shape; None where that does not
    apply."""
    if not _softmax_rows_apply(result, grad):
        return None
    function = _function("softmax_rows_backward_float32", _SOFTMAX_BACKWARD_ARGUMENTS)
    if function is None:
        return None
    out = np.empty_like(result)
    width = result.shape[-1]
    function(grad, result, out, result.size // width, width, int(log),
             _softmax_threads(result))
    return out
