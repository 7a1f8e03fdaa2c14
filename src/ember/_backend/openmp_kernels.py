"""Fused loops on OpenMP's threads, the pool oneDNN's kernels run on, for work between oneDNN's
kernels that oneDNN has only generic loops for: batch norm over row-major (N, C, L) float32
activations (oneDNN's ``ncsp_bnorm:any`` is slower than NumPy's passes; its jit kernels take
blocked and channels-last layouts only).

Each loop runs the channels in parallel, as torch's own batch norm kernels do, and makes the
fewest passes over the activation: the forward sums each channel's ``x`` and ``x * x`` in
double (its squared deviations in a second pass where the mean dwarfs the spread) and writes
``x * scale + shift``; the backward sums ``grad`` and ``grad * (x - mean)``
and writes the input gradient as one multiply-add per element. The arithmetic is that of
NumPy's path (``nn/functional/normalization.py``), so either gives torch's values to float32
rounding.

The C source is compiled once per machine with the machine's C compiler and cached on disk
(``ember._inductor``'s compiler and cache, ``-fopenmp``: the loops join the libgomp that
oneDNN loaded). Where no compiler is found or the build fails, each function returns None and
NumPy's path runs; nothing is warned, since nothing is lost but speed.
"""
import ctypes

import numpy as np

SOURCE = r"""
#include <math.h>
#include <stdint.h>

/* arrays: x, y, mean, var, weight (or NULL), bias (or NULL); sizes: N, C, L, training;
   scalars: eps. Training: mean and var (biased) are written; else they are read. */
void batch_norm_forward(void **arrays, const int64_t *sizes, const double *scalars,
                        int nthreads) {
    const float *x = arrays[0];
    float *y = arrays[1], *mean = arrays[2], *var = arrays[3];
    const float *weight = arrays[4], *bias = arrays[5];
    const int64_t N = sizes[0], C = sizes[1], L = sizes[2], training = sizes[3];
    const double eps = scalars[0], count = (double)(N * L);
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t c = 0; c < C; c++) {
        double m, v;
        if (training) {
            /* one pass: sums of x and x*x in double; where the mean dwarfs the spread
               (mean^2 / var beyond 2^20) the cancellation would cost float32 bits, so the
               squared deviations are summed in a second pass */
            double total = 0, squares = 0;
            for (int64_t n = 0; n < N; n++) {
                const float *xs = x + (n * C + c) * L;
                #pragma omp simd reduction(+:total, squares)
                for (int64_t l = 0; l < L; l++) {
                    total += xs[l];
                    squares += (double)xs[l] * xs[l];
                }
            }
            m = total / count;
            v = squares / count - m * m;
            if (!(m * m <= 1048576.0 * v)) {
                squares = 0;
                for (int64_t n = 0; n < N; n++) {
                    const float *xs = x + (n * C + c) * L;
                    #pragma omp simd reduction(+:squares)
                    for (int64_t l = 0; l < L; l++) {
                        double d = xs[l] - m;
                        squares += d * d;
                    }
                }
                v = squares / count;
            }
            mean[c] = (float)m;
            var[c] = (float)v;
        } else {
            m = mean[c];
            v = var[c];
        }
        const float invstd = (float)(1.0 / sqrt((double)(float)v + eps));
        const float scale = weight ? invstd * weight[c] : invstd;
        const float shift = (bias ? bias[c] : 0.0f) - (float)m * scale;
        for (int64_t n = 0; n < N; n++) {
            const float *xs = x + (n * C + c) * L;
            float *ys = y + (n * C + c) * L;
            #pragma omp simd
            for (int64_t l = 0; l < L; l++) ys[l] = xs[l] * scale + shift;
        }
    }
}

/* arrays: grad, x, mean, invstd, weight (or NULL), grad_x (or NULL), grad_weight, grad_bias;
   sizes: N, C, L, training. grad_weight = sum(grad * (x - mean)) * invstd, grad_bias =
   sum(grad); grad_x as batch norm's input gradient, with the batch's statistics (training) or
   fixed ones. */
void batch_norm_backward(void **arrays, const int64_t *sizes, const double *scalars,
                         int nthreads) {
    const float *grad = arrays[0], *x = arrays[1], *mean = arrays[2], *invstd = arrays[3];
    const float *weight = arrays[4];
    float *grad_x = arrays[5], *grad_weight = arrays[6], *grad_bias = arrays[7];
    const int64_t N = sizes[0], C = sizes[1], L = sizes[2], training = sizes[3];
    const double count = (double)(N * L);
    (void)scalars;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t c = 0; c < C; c++) {
        const double m = mean[c], s = invstd[c];
        double sum_grad = 0, sum_grad_centered = 0;
        for (int64_t n = 0; n < N; n++) {
            const float *gs = grad + (n * C + c) * L, *xs = x + (n * C + c) * L;
            #pragma omp simd reduction(+:sum_grad, sum_grad_centered)
            for (int64_t l = 0; l < L; l++) {
                sum_grad += gs[l];
                sum_grad_centered += gs[l] * (xs[l] - m);
            }
        }
        grad_weight[c] = (float)(sum_grad_centered * s);
        grad_bias[c] = (float)sum_grad;
        if (!grad_x) continue;
        const double k = weight ? s * weight[c] : s;
        float gain = (float)k, slope = 0.0f, offset = 0.0f;
        if (training) {
            const double per_x = s * s * sum_grad_centered / count;
            slope = (float)(-k * per_x);
            offset = (float)(k * (per_x * m - sum_grad / count));
        }
        for (int64_t n = 0; n < N; n++) {
            const float *gs = grad + (n * C + c) * L, *xs = x + (n * C + c) * L;
            float *out = grad_x + (n * C + c) * L;
            #pragma omp simd
            for (int64_t l = 0; l < L; l++) out[l] = gs[l] * gain + xs[l] * slope + offset;
        }
    }
}
"""

_functions = {}   # name -> ctypes function, or None where it could not be built


def _function(name):
    if name not in _functions:
        from .._inductor import _compiler
        _functions[name] = _compiler.load(SOURCE, name, quiet=True)
    return _functions[name]


def _threads():
    from .onednn import threads
    return threads.applied_count() or 1


def _rows(x):
    """Whether ``x`` is a row-major (N, C, L) float32 NumPy array with elements."""
    return (type(x) is np.ndarray and x.ndim == 3 and x.dtype == np.float32 and x.size
            and x.flags.c_contiguous)


def _vector(values):
    return None if values is None else np.ascontiguousarray(values, np.float32)


def _pointers(*arrays):
    return (ctypes.c_void_p * len(arrays))(*(None if a is None else a.ctypes.data
                                             for a in arrays))


def _call(function, arrays, sizes, scalars):
    function(_pointers(*arrays), (ctypes.c_int64 * len(sizes))(*sizes),
             (ctypes.c_double * len(scalars))(*scalars), _threads())


def batch_norm_forward(x, mean, var, weight, bias, eps):
    """``(y, mean, var)`` for a row-major (N, C, L) float32 ``x``: normalized by the batch's
    statistics (``mean`` and ``var`` None, returned as the batch's mean and biased variance)
    or by the given ones, then scaled by ``weight`` and shifted by ``bias`` (None: 1 and 0);
    None where the loop does not apply or cannot be built."""
    if not _rows(x):
        return None
    function = _function("batch_norm_forward")
    if function is None:
        return None
    channels = x.shape[1]
    training = mean is None
    if training:
        mean, var = np.empty(channels, np.float32), np.empty(channels, np.float32)
    else:
        mean, var = _vector(mean), _vector(var)
    y = np.empty_like(x)
    _call(function, (x, y, mean, var, _vector(weight), _vector(bias)),
          (*x.shape, int(training)), (float(eps),))
    return y, mean, var


def batch_norm_backward(grad, x, mean, invstd, weight, training, need_input):
    """``(grad_input, grad_weight, grad_bias)`` of batch norm for row-major (N, C, L) float32
    ``grad`` and ``x`` (``grad_input`` None unless ``need_input``), whose statistics ``mean``
    and ``invstd`` were the batch's (``training``) or fixed; None where the loop does not apply
    or cannot be built."""
    if not _rows(x) or type(grad) is not np.ndarray or grad.shape != x.shape:
        return None
    function = _function("batch_norm_backward")
    if function is None:
        return None
    grad = np.ascontiguousarray(grad, np.float32)
    channels = x.shape[1]
    grad_x = np.empty_like(x) if need_input else None
    grad_weight, grad_bias = np.empty(channels, np.float32), np.empty(channels, np.float32)
    _call(function, (grad, x, _vector(mean), _vector(invstd), _vector(weight), grad_x,
                     grad_weight, grad_bias), (*x.shape, int(training)), ())
    return grad_x, grad_weight, grad_bias
