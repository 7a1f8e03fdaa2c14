"""Fused loops on OpenMP's threads, the pool oneDNN's kernels run on, for the work between
oneDNN's kernels that would otherwise be NumPy's passes on one thread:

- batch norm over row-major (N, C, L) float32 activations, forward and backward (oneDNN has
  only a generic loop for that layout, ``ncsp_bnorm:any``, slower than NumPy's passes; its jit
  kernels take blocked and channels-last layouts, and run there);
- layer norm's backward over (R, D) float32 rows, in one pass per row where oneDNN's
  takes longer than torch's kernel;
- ReLU, LeakyReLU and Hardtanh forward and backward over dense float32 arrays of any layout
  (oneDNN's eltwise ReLU and clip turn NaN into 0 or the bound, where torch keeps it);
- Adam's moments and step in one pass (NumPy makes a dozen), rounded as NumPy's path;
- addition, subtraction and multiplication of large float32 arrays of one layout (or an array
  and a number): the residual additions and the gates of the models;
- the sum of all elements of a large float32 array (``sum`` and ``mean`` without ``dim``; of
  their squares for the 2-norm; with NaN as 0 for ``nansum``), its largest and smallest
  elements (``amax``, ``amin``, ``max`` and ``min`` without ``dim``), and running sums and
  products (``cumsum`` and its gradient, ``cumprod``) in float64, as torch accumulates them,
  and running extremes with their indices (``cummax``, ``cummin``);
  ``gather`` along any dimension of an array of 4- or 8-byte numbers (an index of the input's
  shape but along that dimension), its gradient (float32), and ``scatter`` into a copy with
  such an index (of a float32 number, or of an array of 4- or 8-byte numbers);
  ``index_select`` along any dimension, and its gradient (``index_add``).
- LU's panels (``ops/lu.py``'s getrf, float32 and float64, with its arithmetic) and the row
  order from LAPACK's sequential pivots, where NumPy takes several calls a column or a swap.

The batch norm loops run the channels in parallel, as torch's own kernels do, with the fewest
passes over the activation: the forward sums each channel's ``x`` and ``x * x`` in double
(its squared deviations in a second pass where the mean dwarfs the spread) and writes
``x * scale + shift``; the backward sums ``grad`` and ``grad * (x - mean)`` and writes the
input gradient as one multiply-add per element, the arithmetic of NumPy's path
(``nn/functional/normalization.py``). The activations are selects with torch's rules.

The C source is compiled once per machine with the machine's C compiler and cached on disk
(``ember._inductor``'s compiler and cache, ``-fopenmp``: the loops join the libgomp that
oneDNN loaded). Where no compiler is found or the build fails, each function returns None and
NumPy's path runs; nothing is warned, since nothing is lost but speed.
"""
import ctypes
import math

import numpy as np

from . import cblas, native_calls
from .pointers import address

SOURCE = r"""
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Layer norm's forward over R rows of D float32 elements. arrays: x, weight (D, or NULL),
   bias (D, or NULL), y, mean (R), invstd (R). sizes: R, D. scalars: eps. Each row's mean, then
   its variance about the mean, summed in double (two passes, the second from cache);
   invstd = 1 / sqrt(var + eps) and y = (x - mean) * invstd * weight + bias. */
void layer_norm_forward(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *x = arrays[0], *weight = arrays[1], *bias = arrays[2];
    float *y = arrays[3], *mean = arrays[4], *invstd = arrays[5];
    const int64_t R = sizes[0], D = sizes[1];
    const double eps = scalars[0];
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < R; r++) {
        const float *xs = x + r * D;
        float *ys = y + r * D;
        double sum = 0, squares = 0;
        #pragma omp simd reduction(+:sum)
        for (int64_t d = 0; d < D; d++) sum += xs[d];
        const double centre = sum / D;
        #pragma omp simd reduction(+:squares)
        for (int64_t d = 0; d < D; d++) {
            const double c = xs[d] - centre;
            squares += c * c;
        }
        const float m = (float)centre, s = (float)(1.0 / sqrt(squares / D + eps));
        mean[r] = m;
        invstd[r] = s;
        if (weight && bias) {
            #pragma omp simd
            for (int64_t d = 0; d < D; d++) ys[d] = (xs[d] - m) * s * weight[d] + bias[d];
        } else if (weight) {
            #pragma omp simd
            for (int64_t d = 0; d < D; d++) ys[d] = (xs[d] - m) * s * weight[d];
        } else if (bias) {
            #pragma omp simd
            for (int64_t d = 0; d < D; d++) ys[d] = (xs[d] - m) * s + bias[d];
        } else {
            #pragma omp simd
            for (int64_t d = 0; d < D; d++) ys[d] = (xs[d] - m) * s;
        }
    }
}

/* Layer norm's backward over R rows of D float32 elements. arrays: grad, x, mean (R),
   invstd (R), weight (D), grad_x (or NULL), partial (or NULL): nthreads blocks of 2D doubles,
   zeroed, in which each thread's rows add sum(grad * xhat) and sum(grad) per column (the
   caller adds the blocks up). sizes: R, D. With h = grad * weight and
   xhat = (x - mean) * invstd, grad_x = invstd * (h - mean(h) - xhat * mean(h * xhat)), the
   row means summed in double: torch's formula, reading each row twice (the second time from
   cache). */
void layer_norm_backward(void **arrays, const int64_t *sizes, const double *scalars,
                         int nthreads) {
    const float *grad = arrays[0], *x = arrays[1], *mean = arrays[2], *invstd = arrays[3];
    const float *weight = arrays[4];
    float *grad_x = arrays[5];
    double *partial = arrays[6];
    const int64_t R = sizes[0], D = sizes[1];
    (void)scalars;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static, 1)
    for (int64_t t = 0; t < nthreads; t++) {
        double *sum_gx = partial ? partial + 2 * D * t : 0, *sum_g = sum_gx ? sum_gx + D : 0;
        for (int64_t r = R * t / nthreads; r < R * (t + 1) / nthreads; r++) {
            const float *gs = grad + r * D, *xs = x + r * D;
            const float m = mean[r], s = invstd[r];
            double sum_h = 0, sum_h_xhat = 0;
            if (sum_gx) {
                #pragma omp simd reduction(+:sum_h, sum_h_xhat)
                for (int64_t d = 0; d < D; d++) {
                    const float xhat = (xs[d] - m) * s, h = gs[d] * weight[d];
                    sum_h += h;
                    sum_h_xhat += (double)h * xhat;
                    sum_gx[d] += (double)gs[d] * xhat;
                    sum_g[d] += gs[d];
                }
            } else {
                #pragma omp simd reduction(+:sum_h, sum_h_xhat)
                for (int64_t d = 0; d < D; d++) {
                    const float xhat = (xs[d] - m) * s, h = gs[d] * weight[d];
                    sum_h += h;
                    sum_h_xhat += (double)h * xhat;
                }
            }
            if (!grad_x) continue;
            const float mean_h = (float)(sum_h / D), mean_h_xhat = (float)(sum_h_xhat / D);
            float *out = grad_x + r * D;
            #pragma omp simd
            for (int64_t d = 0; d < D; d++)
                out[d] = s * (gs[d] * weight[d] - mean_h - (xs[d] - m) * s * mean_h_xhat);
        }
    }
}

/* Elementwise loops over n dense float32 elements (sizes[0]), as selects the compiler
   vectorizes, with torch's rules: ReLU keeps NaN and -0.0 (x < 0 ? 0 : x), its gradient is 0
   where the result is <= 0 (NaN lets it through); Hardtanh keeps NaN and its gradient is 0 at
   the bounds and beyond (NaN lets it through). The if clause names the parallel construct:
   unqualified, it applies to simd as well and a one-thread call would run unvectorized. */
void relu_forward(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *x = arrays[0];
    float *y = arrays[1];
    (void)scalars;
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

void relu_backward(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *grad = arrays[0], *result = arrays[1];
    float *out = arrays[2];
    (void)scalars;
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) out[i] = result[i] <= 0.0f ? 0.0f : grad[i];
}

void hardtanh_forward(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *x = arrays[0];
    float *y = arrays[1];
    const float lo = (float)scalars[0], hi = (float)scalars[1];
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) {
        const float v = x[i] < lo ? lo : x[i];
        y[i] = x[i] > hi ? hi : v;
    }
}

/* scalars[2] nonzero: the gradient is 0 at NaN as well (torch's vectorised kernel for large
   row-major tensors), else NaN lets it through (torch's other loops). */
void hardtanh_backward(void **arrays, const int64_t *sizes, const double *scalars,
                       int nthreads) {
    const float *grad = arrays[0], *x = arrays[1];
    float *out = arrays[2];
    const float lo = (float)scalars[0], hi = (float)scalars[1];
    if (scalars[2] != 0.0) {
        #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
        for (int64_t i = 0; i < sizes[0]; i++) out[i] = (x[i] > lo && x[i] < hi) ? grad[i] : 0.0f;
    } else {
        #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
        for (int64_t i = 0; i < sizes[0]; i++) out[i] = (x[i] <= lo || x[i] >= hi) ? 0.0f : grad[i];
    }
}

/* clamp to number bounds, as NumPy's clip: min(max(x, lo), hi), a NaN x kept, hi where
   lo > hi, x itself where it equals a bound (-0 kept against a bound of +0); integers with
   both bounds within their range */
#define CLAMP(name, T) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *x = arrays[0]; \
    T *y = arrays[1]; \
    const T lo = (T)scalars[0], hi = (T)scalars[1]; \
    _Pragma("omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)") \
    for (int64_t i = 0; i < sizes[0]; i++) { \
        const T v = x[i] < lo ? lo : x[i]; \
        y[i] = v > hi ? hi : v; \
    } \
}
CLAMP(clamp_float32, float)
CLAMP(clamp_int64, int64_t)

void leaky_relu_forward(void **arrays, const int64_t *sizes, const double *scalars,
                        int nthreads) {
    const float *x = arrays[0];
    float *y = arrays[1];
    const float slope = (float)scalars[0];
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) y[i] = x[i] > 0.0f ? x[i] : x[i] * slope;
}

void leaky_relu_backward(void **arrays, const int64_t *sizes, const double *scalars,
                         int nthreads) {
    const float *grad = arrays[0], *x = arrays[1];
    float *out = arrays[2];
    const float slope = (float)scalars[0];
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) out[i] = x[i] > 0.0f ? grad[i] : grad[i] * slope;
}

/* Hardshrink: x where it is not within [-lambda, lambda] (NaN kept), else +0; its gradient
   grad where |x| > lambda, else 0 (0 at NaN, as torch's vectorized loop gives). */
void hardshrink_forward(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *x = arrays[0];
    float *y = arrays[1];
    const float lambd = (float)scalars[0];
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) y[i] = (x[i] >= -lambd && x[i] <= lambd) ? 0.0f : x[i];
}

void hardshrink_backward(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *grad = arrays[0], *x = arrays[1];
    float *out = arrays[2];
    const float lambd = (float)scalars[0];
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) out[i] = fabsf(x[i]) > lambd ? grad[i] : 0.0f;
}

/* PReLU over a row-major (N, C, L) float32 x with one weight per channel (C = 1: one for
   all): y = x where x > 0, else weight[c] * x (torch's rules: NaN takes the product). The
   gradients: to the input grad or weight[c] * grad, to the weight (if asked) the sum of x * grad
   where x is not positive over each channel: each row's in float32 lanes, the rows' in
   float64. */
void prelu_forward(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *x = arrays[0], *weight = arrays[1];
    float *y = arrays[2];
    const int64_t N = sizes[0], C = sizes[1], L = sizes[2];
    (void)scalars;
    #pragma omp parallel for collapse(2) num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float w = weight[c], *xs = x + (n * C + c) * L;
            float *ys = y + (n * C + c) * L;
            #pragma omp simd
            for (int64_t l = 0; l < L; l++) ys[l] = xs[l] > 0.0f ? xs[l] : w * xs[l];
        }
}

void prelu_backward(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *grad = arrays[0], *x = arrays[1], *weight = arrays[2];
    float *grad_x = arrays[3], *grad_weight = arrays[4];
    const int64_t N = sizes[0], C = sizes[1], L = sizes[2];
    (void)scalars;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t c = 0; c < C; c++) {
        const float w = weight[c];
        double total = 0.0;
        for (int64_t n = 0; n < N; n++) {
            const float *xs = x + (n * C + c) * L, *gs = grad + (n * C + c) * L;
            if (grad_x) {
                float *out = grad_x + (n * C + c) * L;
                #pragma omp simd
                for (int64_t l = 0; l < L; l++) out[l] = xs[l] > 0.0f ? gs[l] : w * gs[l];
            }
            if (grad_weight) {
                float row = 0.0f;
                #pragma omp simd reduction(+:row)
                for (int64_t l = 0; l < L; l++) row += xs[l] > 0.0f ? 0.0f : xs[l] * gs[l];
                total += row;
            }
        }
        if (grad_weight) grad_weight[c] = (float)total;
    }
}

/* Adam's moments and step over n float32 elements: exp_avg.lerp_(grad, w) (torch's two-sided
   formula), exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2), and into out
   exp_avg / (sqrt(exp_avg_sq) / bias_correction2_sqrt + eps) * step_size, each operation
   rounded to float32 in the order NumPy's passes take (no contraction into fused
   multiply-adds), so that either path gives the same bits. scalars: w, 1 - w, beta2,
   1 - beta2, bias_correction2_sqrt, eps, step_size. */
__attribute__((optimize("fp-contract=off")))
void adam_update(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *grad = arrays[0];
    float *exp_avg = arrays[1], *exp_avg_sq = arrays[2], *out = arrays[3];
    const float w = (float)scalars[0], rest = (float)scalars[1], beta2 = (float)scalars[2];
    const float value = (float)scalars[3], correction = (float)scalars[4];
    const float eps = (float)scalars[5], step_size = (float)scalars[6];
    const int low_weight = scalars[0] < 0.5;
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) {
        const float g = grad[i];
        float m = exp_avg[i];
        const float diff = g - m;
        m = low_weight ? m + diff * w : g - diff * rest;
        float v = exp_avg_sq[i] * beta2;
        const float square = (g * value) * g;
        v = v + square;
        exp_avg[i] = m;
        exp_avg_sq[i] = v;
        const float denom = sqrtf(v) / correction + eps;
        out[i] = (m / denom) * step_size;
    }
}

/* The optimizers' in-place updates of n float32 elements: state = state * decay + x, rounded
   twice as state.mul_(decay).add_(x) (decay_add); target = target + alpha * x, rounded once as
   torch's fused target.add_(x, alpha=alpha) (add_scaled). */
void decay_add(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    float *state = arrays[0];
    const float *x = arrays[1];
    const float decay = (float)scalars[0];
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) state[i] = state[i] * decay + x[i];
}

void add_scaled(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    float *target = arrays[0];
    const float *x = arrays[1];
    const float alpha = (float)scalars[0];
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)
    for (int64_t i = 0; i < sizes[0]; i++) target[i] = fmaf(alpha, x[i], target[i]);
}

/* out (rows, width) = a (rows, width) (op) b (width), row-major float32: b repeated over a's
   rows, as NumPy broadcasts a trailing-shape operand; op (scalars[0]) 0 add, 1 subtract,
   2 multiply, 3 divide. */
#define ROWS_LOOP(expr) \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
    for (int64_t r = 0; r < rows; r++) { \
        const float *x = a + r * width; \
        float *o = out + r * width; \
        for (int64_t i = 0; i < width; i++) o[i] = (expr); \
    }
void binary_rows(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *a = arrays[0], *b = arrays[1];
    float *out = arrays[2];
    const int64_t rows = sizes[0], width = sizes[1];
    switch ((int)scalars[0]) {
    case 0: ROWS_LOOP(x[i] + b[i]) break;
    case 1: ROWS_LOOP(x[i] - b[i]) break;
    case 2: ROWS_LOOP(x[i] * b[i]) break;
    default: ROWS_LOOP(x[i] / b[i]) break;
    }
}

/* out (m p, n q) row-major: the Kronecker product of a (m, n) and b (p, q), row-major: out row i p + k is
   a[i, j] b[k, :] for j = 0.. side by side; the output rows shared among the threads */
#define KRON(name, T) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *a = arrays[0], *b = arrays[1]; \
    T *out = arrays[2]; \
    const int64_t m = sizes[0], n = sizes[1], p = sizes[2], q = sizes[3]; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
    for (int64_t row = 0; row < m * p; row++) { \
        const T *x = a + (row / p) * n, *y = b + (row % p) * q; \
        T *o = out + row * n * q; \
        for (int64_t j = 0; j < n; j++) { \
            const T s = x[j]; \
            _Pragma("omp simd") \
            for (int64_t l = 0; l < q; l++) o[j * q + l] = s * y[l]; \
        } \
    } \
}
KRON(kron_float32, float)
KRON(kron_float64, double)

/* out (rows, width) int64 row-major: the larger (scalars[0] 1; the smaller: 0) of each element of a (rows,
   width) and of the row b (width) beside it, elementwise; the rows shared among the threads */
void extreme_rows_int64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const int64_t *a = arrays[0], *b = arrays[1];
    int64_t *out = arrays[2];
    const int64_t rows = sizes[0], width = sizes[1];
    const int larger = scalars[0] != 0.0;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t *x = a + r * width;
        int64_t *o = out + r * width;
        if (larger) {
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) o[i] = x[i] > b[i] ? x[i] : b[i];
        } else {
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) o[i] = x[i] < b[i] ? x[i] : b[i];
        }
    }
}

/* out (rows, width) int64 row-major: the floor of each element of a (rows, width) divided by the element of
   the row b (width, no zeros) beside it; with scalars[0] 1 the remainder of that floor division (the
   divisor's sign), with 2 the remainder of the truncated division (fmod's: the dividend's sign). Where every
   divisor and a whole row of dividends are under 2^52 in magnitude, by float64 division, vectorized: the
   rounded quotient of such integers lies strictly between the same two integers as the exact one, so it
   truncates to the exact one's truncation. Other rows by integer division (x / -1 as a negation that
   wraps). The floor is the truncation less one where it is inexact and the signs differ. */
void floor_divide_rows_int64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const int64_t *a = arrays[0], *b = arrays[1];
    int64_t *out = arrays[2];
    const int64_t rows = sizes[0], width = sizes[1], exact = (int64_t)1 << 52;
    const int remainder = scalars[0] != 0.0, floored = scalars[0] != 2.0;
    int64_t wide = 0;
    #pragma omp simd reduction(|: wide)
    for (int64_t i = 0; i < width; i++) wide |= (b[i] >= exact) | (b[i] <= -exact);
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t *x = a + r * width;
        int64_t *o = out + r * width;
        int64_t far = wide;
        #pragma omp simd reduction(|: far)
        for (int64_t i = 0; i < width; i++) far |= (x[i] >= exact) | (x[i] <= -exact);
        if (!far && remainder) {
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) {
                const int64_t t = (int64_t)((double)x[i] / (double)b[i]), rest = x[i] - t * b[i];
                o[i] = rest + (floored & (rest != 0) & ((x[i] < 0) != (b[i] < 0))) * b[i];
            }
        } else if (!far) {
            #pragma omp simd
            for (int64_t i = 0; i < width; i++) {
                const int64_t t = (int64_t)((double)x[i] / (double)b[i]);
                o[i] = t - ((t * b[i] != x[i]) & ((x[i] < 0) != (b[i] < 0)));
            }
        } else {
            for (int64_t i = 0; i < width; i++) {
                const int64_t t = b[i] == -1 ? (int64_t)(0 - (uint64_t)x[i]) : x[i] / b[i];
                const int64_t q = t - (floored & ((uint64_t)t * (uint64_t)b[i] != (uint64_t)x[i])
                                       & ((x[i] < 0) != (b[i] < 0)));
                o[i] = remainder ? (int64_t)((uint64_t)x[i] - (uint64_t)q * (uint64_t)b[i]) : q;
            }
        }
    }
}

/* out (rows, width) row-major = a (op) b, where a and b are float32 rows of unit stride, row r
   of a at a + r * sizes[2] and of b at b + r * sizes[3] (elements): slices along the last
   dimension, which NumPy runs with an inner loop's call per row; b NULL: the number
   scalars[1]; op (scalars[0]) 0 add, 1 subtract, 2 multiply, 3 divide. */
#define STRIDED_LOOP(expr) \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
    for (int64_t r = 0; r < rows; r++) { \
        const float *x = a + r * a_stride; \
        const float *y = b == NULL ? NULL : b + r * b_stride; \
        float *o = out + r * width; \
        for (int64_t i = 0; i < width; i++) o[i] = (expr); \
    }
void binary_row_slices(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *a = arrays[0], *b = arrays[1];
    float *out = arrays[2];
    const int64_t rows = sizes[0], width = sizes[1], a_stride = sizes[2], b_stride = sizes[3];
    const float s = (float)scalars[1];
    if (b == NULL) {
        switch ((int)scalars[0]) {
        case 0: STRIDED_LOOP(x[i] + s) break;
        case 1: STRIDED_LOOP(x[i] - s) break;
        case 2: STRIDED_LOOP(x[i] * s) break;
        default: STRIDED_LOOP(x[i] / s) break;
        }
        return;
    }
    switch ((int)scalars[0]) {
    case 0: STRIDED_LOOP(x[i] + y[i]) break;
    case 1: STRIDED_LOOP(x[i] - y[i]) break;
    case 2: STRIDED_LOOP(x[i] * y[i]) break;
    default: STRIDED_LOOP(x[i] / y[i]) break;
    }
}

/* out (width) = the sum of the rows of a row-major float32 x (rows, width), added one row
   after another in order, as NumPy's reduction over a leading axis adds them (the same bits):
   COLUMN_BLOCK columns at a time, their running sums kept in registers down all the rows. */
#define COLUMN_BLOCK 64
void column_sums_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *x = arrays[0];
    float *out = arrays[1];
    const int64_t rows = sizes[0], width = sizes[1];
    const int64_t full = width / COLUMN_BLOCK;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t block = 0; block <= full; block++) {
        const int64_t start = block * COLUMN_BLOCK;
        if (block < full) {
            float sums[COLUMN_BLOCK];
            for (int j = 0; j < COLUMN_BLOCK; j++) sums[j] = x[start + j];
            for (int64_t r = 1; r < rows; r++) {
                const float *row = x + r * width + start;
                #pragma GCC unroll 64
                for (int j = 0; j < COLUMN_BLOCK; j++) sums[j] += row[j];
            }
            for (int j = 0; j < COLUMN_BLOCK; j++) out[start + j] = sums[j];
        } else {   /* the last columns, fewer than a block */
            for (int64_t j = start; j < width; j++) out[j] = x[j];
            for (int64_t r = 1; r < rows; r++)
                for (int64_t j = start; j < width; j++) out[j] += x[r * width + j];
        }
    }
}

/* The rank-one update of addr and outer, out (n, m) row-major = outer(a, b), times alpha where
   alpha (scalars[0]) is not 1, plus d times beta (scalars[1]; d alone where beta is 1) where d
   is given, each operation rounded in that order (the composite's NumPy passes): d[i, j] read
   at d[i * sizes[2] + j * sizes[3]] (0 for a dimension broadcast). */
#define RANK_ONE(T, name) \
__attribute__((optimize("fp-contract=off"))) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *a = arrays[0], *b = arrays[1], *d = arrays[2]; \
    T *out = arrays[3]; \
    const int64_t n = sizes[0], m = sizes[1], row_stride = sizes[2], column_stride = sizes[3]; \
    const T alpha = (T)scalars[0], beta = (T)scalars[1]; \
    const int scaled = scalars[0] != 1.0, times_beta = scalars[1] != 1.0; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
    for (int64_t i = 0; i < n; i++) { \
        const T x = a[i]; \
        T *row = out + i * m; \
        const T *terms = d == NULL ? NULL : d + i * row_stride; \
        if (d == NULL || column_stride == 1) { \
            for (int64_t j = 0; j < m; j++) { \
                T p = x * b[j]; \
                if (scaled) p = p * alpha; \
                if (d != NULL) p = (times_beta ? terms[j] * beta : terms[j]) + p; \
                row[j] = p; \
            } \
        } else { \
            for (int64_t j = 0; j < m; j++) { \
                T p = x * b[j]; \
                if (scaled) p = p * alpha; \
                const T term = terms[j * column_stride]; \
                row[j] = (times_beta ? term * beta : term) + p; \
            } \
        } \
    } \
}
RANK_ONE(float, rank_one_float32)
RANK_ONE(double, rank_one_float64)

/* out = a (op) b over n float32 elements, b an array of a's layout (binary_arrays) or the
   float32 number scalars[1] (binary_number); op (scalars[0]) 0 add, 1 subtract, 2 multiply. */
#define BINARY_LOOP(expr) \
    _Pragma("omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) schedule(static)") \
    for (int64_t i = 0; i < n; i++) out[i] = (expr);
void binary_arrays(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *a = arrays[0], *b = arrays[1];
    float *out = arrays[2];
    const int64_t n = sizes[0];
    switch ((int)scalars[0]) {
    case 0: BINARY_LOOP(a[i] + b[i]) break;
    case 1: BINARY_LOOP(a[i] - b[i]) break;
    default: BINARY_LOOP(a[i] * b[i]) break;
    }
}

void binary_number(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *a = arrays[0];
    float *out = arrays[1];
    const int64_t n = sizes[0];
    const float s = (float)scalars[1];
    switch ((int)scalars[0]) {
    case 0: BINARY_LOOP(a[i] + s) break;
    case 1: BINARY_LOOP(a[i] - s) break;
    default: BINARY_LOOP(a[i] * s) break;
    }
}

/* The running sums (products) of float32 x along the middle axis of its (outer, n, inner)
   row-major shape into out, accumulated in float64 (as torch's float32 cumsum and cumprod),
   from the end backwards where sizes[3] (an op's reversed scan: cumsum's gradient). Tasks:
   each outer index and chunk of SCAN_CHUNK inner positions, whose running totals stay in a
   float64 array. */
#define SCAN_CHUNK 512
#define RUNNING(name, START, OP) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const float *x = arrays[0]; \
    float *out = arrays[1]; \
    const int64_t outer = sizes[0], n = sizes[1], inner = sizes[2], reverse = sizes[3]; \
    (void)scalars; \
    if (inner == 1) {   /* along the last axis: one running total per row */ \
        _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
        for (int64_t o = 0; o < outer; o++) { \
            const float *xs = x + o * n; \
            float *ys = out + o * n; \
            double total = START; \
            if (reverse) { \
                for (int64_t i = n - 1; i >= 0; i--) { \
                    total OP xs[i]; \
                    ys[i] = (float)total; \
                } \
            } else { \
                for (int64_t i = 0; i < n; i++) { \
                    total OP xs[i]; \
                    ys[i] = (float)total; \
                } \
            } \
        } \
        return; \
    } \
    const int64_t chunks = (inner + SCAN_CHUNK - 1) / SCAN_CHUNK; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
    for (int64_t task = 0; task < outer * chunks; task++) { \
        const int64_t o = task / chunks, first = (task % chunks) * SCAN_CHUNK; \
        const int64_t width = inner - first < SCAN_CHUNK ? inner - first : SCAN_CHUNK; \
        double totals[SCAN_CHUNK]; \
        for (int64_t j = 0; j < width; j++) totals[j] = START; \
        for (int64_t step = 0; step < n; step++) { \
            const int64_t at = (o * n + (reverse ? n - 1 - step : step)) * inner + first; \
            const float *xs = x + at; \
            float *ys = out + at; \
            _Pragma("omp simd") \
            for (int64_t j = 0; j < width; j++) { \
                totals[j] OP xs[j]; \
                ys[j] = (float)totals[j]; \
            } \
        } \
    } \
}
RUNNING(cumsum_float32, 0.0, +=)
RUNNING(cumprod_float32, 1.0, *=)

/* The running maximum (MORE: >=) or minimum (<=) of float32 x along the middle axis of its
   (outer, n, inner) row-major shape into out, and into indices (int64) the last position where
   it was reached, as torch's cummax and cummin: a tie moves the index on, and NaN, once met,
   stays the value, its index the latest NaN's. Tasks as the running totals'. */
#define RUNNING_EXTREME(name, MORE) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const float *x = arrays[0]; \
    float *out = arrays[1]; \
    int64_t *indices = arrays[2]; \
    const int64_t outer = sizes[0], n = sizes[1], inner = sizes[2]; \
    const int64_t chunks = (inner + SCAN_CHUNK - 1) / SCAN_CHUNK; \
    (void)scalars; \
    if (inner == 1) {   /* along the last axis: a row per task */ \
        _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
        for (int64_t o = 0; o < outer; o++) { \
            const float *xs = x + o * n; \
            float *ys = out + o * n; \
            int64_t *is = indices + o * n; \
            float best = xs[0]; \
            int64_t at_best = 0; \
            for (int64_t i = 0; i < n; i++) {   /* (selects: a branch here mispredicts) */ \
                const float v = xs[i]; \
                const int take = (v != v) | ((best == best) & (v MORE best)); \
                best = take ? v : best; \
                at_best = take ? i : at_best; \
                ys[i] = best; \
                is[i] = at_best; \
            } \
        } \
        return; \
    } \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
    for (int64_t task = 0; task < outer * chunks; task++) { \
        const int64_t o = task / chunks, first = (task % chunks) * SCAN_CHUNK; \
        const int64_t width = inner - first < SCAN_CHUNK ? inner - first : SCAN_CHUNK; \
        float best[SCAN_CHUNK]; \
        int64_t at_best[SCAN_CHUNK]; \
        for (int64_t step = 0; step < n; step++) { \
            const int64_t at = (o * n + step) * inner + first; \
            const float *xs = x + at; \
            float *ys = out + at; \
            int64_t *is = indices + at; \
            for (int64_t j = 0; j < width; j++) { \
                const float v = xs[j]; \
                if (step == 0 || v != v || (best[j] == best[j] && v MORE best[j])) { \
                    best[j] = v; \
                    at_best[j] = step; \
                } \
                ys[j] = best[j]; \
                is[j] = at_best[j]; \
            } \
        } \
    } \
}
RUNNING_EXTREME(cummax_float32, >=)
RUNNING_EXTREME(cummin_float32, <=)

/* out[o, i, j] = x[o, index[o, i, j], j] for row-major x (outer, nx, inner), index and out
   (outer, ni, inner), of elements of T's size (copied as they are); *arrays[3] (an int32) set
   to 1, the rows stopped short, where an index is outside [0, nx), for the caller to raise
   torch's error. */
#define GATHER(name, T) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *x = arrays[0]; \
    const int64_t *index = arrays[1]; \
    T *out = arrays[2]; \
    int32_t *status = arrays[3]; \
    const int64_t outer = sizes[0], nx = sizes[1], ni = sizes[2], inner = sizes[3]; \
    int bad = 0; \
    (void)scalars; \
    if (inner == 1) {   /* along the last axis: a row of picks per outer index */ \
        _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static) reduction(|:bad)") \
        for (int64_t o = 0; o < outer; o++) { \
            const int64_t *ix = index + o * ni; \
            const T *xs = x + o * nx; \
            T *ys = out + o * ni; \
            for (int64_t i = 0; i < ni; i++) { \
                const int64_t k = ix[i]; \
                if (k < 0 || k >= nx) { bad = 1; break; } \
                ys[i] = xs[k]; \
            } \
        } \
        *status = bad; \
        return; \
    } \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static) reduction(|:bad)") \
    for (int64_t row = 0; row < outer * ni; row++) { \
        const int64_t *ix = index + row * inner; \
        const T *xs = x + (row / ni) * nx * inner; \
        T *ys = out + row * inner; \
        for (int64_t j = 0; j < inner; j++) { \
            const int64_t k = ix[j]; \
            if (k < 0 || k >= nx) { bad = 1; break; } \
            ys[j] = xs[k * inner + j]; \
        } \
    } \
    *status = bad; \
}
GATHER(gather_4, uint32_t)
GATHER(gather_8, uint64_t)

/* out[o, index[o, i, j], j] (op)= src[o, i, j] (the number scalars[0] where src is NULL) for
   row-major out (outer, nx, inner) and index and src (outer, ni, inner): scatter (ASSIGN) and
   scatter_add, gather's gradient (ADD), into out. Each (o, j) takes its terms in i order: the
   last of repeated positions stays, as with NumPy's assignment, or they add up in add.at's
   order; the tasks (an outer index, and a chunk of inner positions) write apart. T: the
   element type.
   *arrays[3] (an int32) set to 1 where an index is outside [0, nx). */
#define ASSIGN(y, v) ((y) = (v))
#define ADD(y, v) ((y) += (v))
#define SCATTER(name, T, COMBINE) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *src = arrays[0]; \
    const int64_t *index = arrays[1]; \
    T *out = arrays[2]; \
    int32_t *status = arrays[3]; \
    const int64_t outer = sizes[0], nx = sizes[1], ni = sizes[2], inner = sizes[3]; \
    const int64_t chunks = (inner + SCAN_CHUNK - 1) / SCAN_CHUNK; \
    const T value = (T)scalars[0]; \
    int bad = 0; \
    if (inner == 1) {   /* along the last axis: a row of picks per outer index */ \
        _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static) reduction(|:bad)") \
        for (int64_t o = 0; o < outer; o++) { \
            const int64_t *ks = index + o * ni; \
            T *ys = out + o * nx; \
            int row_bad = 0; \
            for (int64_t i = 0; i < ni; i++) row_bad |= ks[i] < 0 || ks[i] >= nx; \
            if (row_bad) { bad = 1; continue; } \
            if (src) { \
                const T *vs = src + o * ni; \
                for (int64_t i = 0; i < ni; i++) COMBINE(ys[ks[i]], vs[i]); \
            } else { \
                for (int64_t i = 0; i < ni; i++) COMBINE(ys[ks[i]], value); \
            } \
        } \
        *status = bad; \
        return; \
    } \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static) reduction(|:bad)") \
    for (int64_t task = 0; task < outer * chunks; task++) { \
        const int64_t o = task / chunks, first = (task % chunks) * SCAN_CHUNK; \
        const int64_t width = inner - first < SCAN_CHUNK ? inner - first : SCAN_CHUNK; \
        T *ys = out + o * nx * inner + first; \
        for (int64_t i = 0; i < ni && !bad; i++) { \
            const int64_t at = (o * ni + i) * inner + first; \
            for (int64_t j = 0; j < width; j++) { \
                const int64_t k = index[at + j]; \
                if (k < 0 || k >= nx) { bad = 1; break; } \
                COMBINE(ys[k * inner + j], src ? src[at + j] : value); \
            } \
        } \
    } \
    *status = bad; \
}
SCATTER(scatter_float32, float, ASSIGN)
SCATTER(scatter_add_float32, float, ADD)
/* scatter of a src array of elements of 4 or 8 bytes, copied as they are (no number: src is
   never NULL) */
SCATTER(scatter_4, uint32_t, ASSIGN)
SCATTER(scatter_8, uint64_t, ASSIGN)
/* scatter_add of other dtypes: integers added as unsigned numbers, which wrap as NumPy's do */
SCATTER(scatter_add_float64, double, ADD)
SCATTER(scatter_add_int64, uint64_t, ADD)
SCATTER(scatter_add_int32, uint32_t, ADD)

/* out[o, i, :] = x[o, index[i], :] for row-major x (outer, nx, inner) and out (outer, ni,
   inner), index (ni) within [0, nx) (the caller checks): index_select, a row copied per task
   (a row of picks per outer index along the last axis). */
void index_select_float32(void **arrays, const int64_t *sizes, const double *scalars,
                          int nthreads) {
    const float *x = arrays[0];
    const int64_t *index = arrays[1];
    float *out = arrays[2];
    const int64_t outer = sizes[0], nx = sizes[1], ni = sizes[2], inner = sizes[3];
    (void)scalars;
    if (inner == 1) {
        #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
        for (int64_t o = 0; o < outer; o++) {
            const float *xs = x + o * nx;
            float *ys = out + o * ni;
            for (int64_t i = 0; i < ni; i++) ys[i] = xs[index[i]];
        }
        return;
    }
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t row = 0; row < outer * ni; row++) {
        const int64_t o = row / ni, i = row % ni;
        memcpy(out + row * inner, x + (o * nx + index[i]) * inner, (size_t)inner * sizeof(float));
    }
}

/* out[o, index[i], j] = COMBINE(out[o, index[i], j], values[o, i, j]) for row-major out (outer,
   nx, inner) and values (outer, ni, inner), index (ni) within [0, nx): index_add (index_select's
   gradient into zeros) and index_reduce. Each (o, j) combines its terms in i order, as NumPy's
   ufunc.at does; the tasks (an outer index and a chunk of inner positions) write apart. The
   maximum and minimum are NumPy's (a NaN on either side wins; of equal values the first) */
#define INDEX_REDUCE(name, COMBINE) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const float *values = arrays[0]; \
    const int64_t *index = arrays[1]; \
    float *out = arrays[2]; \
    const int64_t outer = sizes[0], nx = sizes[1], ni = sizes[2], inner = sizes[3]; \
    const int64_t chunks = (inner + SCAN_CHUNK - 1) / SCAN_CHUNK; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
    for (int64_t task = 0; task < outer * chunks; task++) { \
        const int64_t o = task / chunks, first = (task % chunks) * SCAN_CHUNK; \
        const int64_t width = inner - first < SCAN_CHUNK ? inner - first : SCAN_CHUNK; \
        float *ys = out + o * nx * inner + first; \
        const float *vs = values + o * ni * inner + first; \
        for (int64_t i = 0; i < ni; i++) { \
            float *y = ys + index[i] * inner; \
            const float *v = vs + i * inner; \
            _Pragma("omp simd") \
            for (int64_t j = 0; j < width; j++) y[j] = COMBINE(y[j], v[j]); \
        } \
    } \
}
#define ADD(y, v) ((y) + (v))
#define MULTIPLY(y, v) ((y) * (v))
#define MAXIMUM(y, v) ((((y) >= (v)) | ((y) != (y))) ? (y) : (v))
#define MINIMUM(y, v) ((((y) <= (v)) | ((y) != (y))) ? (y) : (v))
INDEX_REDUCE(index_add_float32, ADD)
INDEX_REDUCE(index_multiply_float32, MULTIPLY)
INDEX_REDUCE(index_maximum_float32, MAXIMUM)
INDEX_REDUCE(index_minimum_float32, MINIMUM)

/* Reductions of all n float32 elements: each thread's share in blocks of SUM_LANES elements,
   one partial result per lane (independent SIMD accumulators), then the lanes, the threads'
   shares and the last partial block. The largest and smallest elements go to out[0], NaN where
   any element is NaN. Sums (of the elements, of their squares, of the elements with NaN as 0)
   go to out[0] rounded once from float64: each lane adds SUM_DEPTH elements in float32 (a
   rounding error of at most SUM_DEPTH float32 ulps of its partial sum, as torch's vectorized
   float32 sum has), then adds that partial sum in float64. On one thread a sum runs outside
   OpenMP (a region with a reduction is entered even when its if() is false). */
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")   /* (nansum's select is not vectorized otherwise) */
#define SUM_LANES 32
#define SUM_WIDE_LANES 64
#define SUM_DEPTH 16
#define PLAIN(v) (v)
#define SQUARED(v) ((v) * (v))
#define NAN_AS_ZERO(v) ((v) == (v) ? (v) : 0.0f)
#define WHOLE_SUM(name, TERM) \
static double name##_blocks(const float *x, int64_t first, int64_t last) { \
    const int64_t span = SUM_WIDE_LANES * SUM_DEPTH; \
    double wide[SUM_WIDE_LANES] = {0}, total = 0.0; \
    for (int64_t b = first; b < last; b++) { \
        const float *xs = x + b * span; \
        float lanes[SUM_WIDE_LANES] = {0}; \
        for (int k = 0; k < SUM_DEPTH; k++) { \
            _Pragma("omp simd") \
            for (int j = 0; j < SUM_WIDE_LANES; j++) lanes[j] += TERM(xs[k * SUM_WIDE_LANES + j]); \
        } \
        _Pragma("omp simd") \
        for (int j = 0; j < SUM_WIDE_LANES; j++) wide[j] += lanes[j]; \
    } \
    for (int j = 0; j < SUM_WIDE_LANES; j++) total += wide[j]; \
    return total; \
} \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const float *x = arrays[0]; \
    float *out = arrays[1]; \
    const int64_t n = sizes[0], blocks = n / (SUM_WIDE_LANES * SUM_DEPTH); \
    double total = 0.0; \
    (void)scalars; \
    if (nthreads > 1) { \
        _Pragma("omp parallel num_threads(nthreads) reduction(+:total)") \
        { \
            const int64_t parts = omp_get_num_threads(), part = omp_get_thread_num(); \
            total += name##_blocks(x, blocks * part / parts, blocks * (part + 1) / parts); \
        } \
    } else { \
        total = name##_blocks(x, 0, blocks); \
    } \
    for (int64_t i = blocks * SUM_WIDE_LANES * SUM_DEPTH; i < n; i++) total += (double)TERM(x[i]); \
    out[0] = (float)total; \
}
WHOLE_SUM(sum_float32, PLAIN)
WHOLE_SUM(sum_squares_float32, SQUARED)
WHOLE_SUM(nansum_float32, NAN_AS_ZERO)

/* arrays: x (rows x width float32, row-major), out (rows float32); sizes: rows, width. Each row's sum (of
   its elements, or of their squares) by chunks of ROW_CHUNK elements: a chunk's in SUM_LANES (32) float32
   lanes, the lanes added pairwise (the row's last elements, fewer than SUM_LANES, added to the last chunk's
   first lanes); the chunks' sums added in float64 (a row of up to ROW_CHUNK elements is its one chunk's
   sum); the rows shared among the threads. */
#define ROW_CHUNK 1024
/* the sum of SUM_LANES lanes, each with the element of ``last`` beside it, added pairwise */
static inline float lanes_sum(const float *lanes, const float *last) {
    float eighths[8];
    #pragma omp simd
    for (int j = 0; j < 8; j++)
        eighths[j] = ((lanes[j] + last[j]) + (lanes[j + 8] + last[j + 8]))
                     + ((lanes[j + 16] + last[j + 16]) + (lanes[j + 24] + last[j + 24]));
    return ((eighths[0] + eighths[1]) + (eighths[2] + eighths[3]))
           + ((eighths[4] + eighths[5]) + (eighths[6] + eighths[7]));
}
#define ROW_SUMS(name, TERM) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const float *x = arrays[0]; \
    float *out = arrays[1]; \
    const int64_t rows = sizes[0], width = sizes[1], body = width - width % SUM_LANES; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)") \
    for (int64_t r = 0; r < rows; r++) { \
        const float *row = x + r * width; \
        const float none[SUM_LANES] = {0}; \
        double chunks = 0.0; \
        int64_t start = 0; \
        for (; start + ROW_CHUNK < body; start += ROW_CHUNK) { \
            float lanes[SUM_LANES] = {0}; \
            for (int64_t i = start; i < start + ROW_CHUNK; i += SUM_LANES) { \
                _Pragma("omp simd") \
                for (int j = 0; j < SUM_LANES; j++) lanes[j] += TERM(row[i + j]); \
            } \
            chunks += (double)lanes_sum(lanes, none); \
        } \
        float lanes[SUM_LANES] = {0}, last[SUM_LANES] = {0}; \
        for (int64_t i = start; i < body; i += SUM_LANES) { \
            _Pragma("omp simd") \
            for (int j = 0; j < SUM_LANES; j++) lanes[j] += TERM(row[i + j]); \
        } \
        for (int64_t i = body; i < width; i++) last[i - body] = TERM(row[i]); \
        const float final = lanes_sum(lanes, last); \
        out[r] = start ? (float)(chunks + (double)final) : final; \
    } \
}
ROW_SUMS(row_sums_float32, PLAIN)
ROW_SUMS(row_sums_squares_float32, SQUARED)
#pragma GCC pop_options

/* v replaces best where it is further along MORE (> or <), or NaN */
#define TAKES(v, MORE, best) ((v) MORE (best) || (v) != (v))
#define WHOLE_EXTREME(name, MORE, START) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const float *x = arrays[0]; \
    float *out = arrays[1]; \
    const int64_t n = sizes[0], blocks = n / SUM_LANES; \
    float shares[nthreads]; \
    (void)scalars; \
    for (int t = 0; t < nthreads; t++) shares[t] = START; \
    _Pragma("omp parallel num_threads(nthreads) if(nthreads > 1)") \
    { \
        float lanes[SUM_LANES]; \
        for (int j = 0; j < SUM_LANES; j++) lanes[j] = START; \
        _Pragma("omp for schedule(static)") \
        for (int64_t b = 0; b < blocks; b++) { \
            const float *xs = x + b * SUM_LANES; \
            _Pragma("omp simd") \
            for (int j = 0; j < SUM_LANES; j++) \
                lanes[j] = TAKES(xs[j], MORE, lanes[j]) ? xs[j] : lanes[j]; \
        } \
        float best = START; \
        for (int j = 0; j < SUM_LANES; j++) best = TAKES(lanes[j], MORE, best) ? lanes[j] : best; \
        shares[omp_get_thread_num()] = best; \
    } \
    float best = START; \
    for (int t = 0; t < nthreads; t++) best = TAKES(shares[t], MORE, best) ? shares[t] : best; \
    for (int64_t i = blocks * SUM_LANES; i < n; i++) best = TAKES(x[i], MORE, best) ? x[i] : best; \
    out[0] = best; \
}
WHOLE_EXTREME(max_float32, >, -INFINITY)
WHOLE_EXTREME(min_float32, <, INFINITY)

/* The product of all n float32 elements, multiplied in float32 lanes as torch's vectorized
   loop multiplies (the lanes, the threads' shares and the last partial block after); twice the
   sums' lanes, so that eight vectors' chains of multiplications run side by side */
#define PRODUCT_LANES 64
void prod_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *x = arrays[0];
    float *out = arrays[1];
    const int64_t n = sizes[0], blocks = n / PRODUCT_LANES;
    float shares[nthreads];
    (void)scalars;
    for (int t = 0; t < nthreads; t++) shares[t] = 1.0f;
    #pragma omp parallel num_threads(nthreads) if(nthreads > 1)
    {
        float lanes[PRODUCT_LANES];
        for (int j = 0; j < PRODUCT_LANES; j++) lanes[j] = 1.0f;
        #pragma omp for schedule(static)
        for (int64_t b = 0; b < blocks; b++) {
            const float *xs = x + b * PRODUCT_LANES;
            #pragma omp simd
            for (int j = 0; j < PRODUCT_LANES; j++) lanes[j] *= xs[j];
        }
        float share = 1.0f;
        for (int j = 0; j < PRODUCT_LANES; j++) share *= lanes[j];
        shares[omp_get_thread_num()] = share;
    }
    float product = 1.0f;
    for (int t = 0; t < nthreads; t++) product *= shares[t];
    for (int64_t i = blocks * PRODUCT_LANES; i < n; i++) product *= x[i];
    out[0] = product;
}

/* arrays: src (its element [0, ..., 0]), dst (row-major); sizes: ndim (at most 64), the
   shape, src's strides in bytes (any sign). Copies src into dst row by row, each thread its
   share of the rows, stepping through src's outer indices as an odometer: NumPy's copy of a
   view whose last axis runs backwards (a flip) goes element by element on one thread. */
#define STRIDED_ROWS(name, T) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const char *src = arrays[0]; \
    T *dst = arrays[1]; \
    const int64_t ndim = sizes[0], *shape = sizes + 1, *strides = sizes + 1 + ndim; \
    const int64_t width = shape[ndim - 1], step = strides[ndim - 1] / (int64_t)sizeof(T); \
    int64_t rows = 1; \
    for (int64_t d = 0; d < ndim - 1; d++) rows *= shape[d]; \
    (void)scalars; \
    _Pragma("omp parallel num_threads(nthreads) if(nthreads > 1)") \
    { \
        const int64_t parts = omp_get_num_threads(), part = omp_get_thread_num(); \
        const int64_t first = rows * part / parts, last = rows * (part + 1) / parts; \
        int64_t index[64], offset = 0, rest = first; \
        for (int64_t d = ndim - 2; d >= 0; d--) { \
            index[d] = rest % shape[d]; \
            offset += index[d] * strides[d]; \
            rest /= shape[d]; \
        } \
        for (int64_t r = first; r < last; r++) { \
            const T *from = (const T *)(src + offset); \
            T *to = dst + r * width; \
            if (step == -1) { \
                _Pragma("omp simd") \
                for (int64_t j = 0; j < width; j++) to[j] = from[-j]; \
            } else if (step == 1) { \
                memcpy(to, from, width * sizeof(T)); \
            } else { \
                for (int64_t j = 0; j < width; j++) to[j] = from[j * step]; \
            } \
            for (int64_t d = ndim - 2; d >= 0; d--) { \
                offset += strides[d]; \
                if (++index[d] < shape[d]) break; \
                offset -= shape[d] * strides[d]; \
                index[d] = 0; \
            } \
        } \
    } \
}
STRIDED_ROWS(strided_rows_1, uint8_t)
STRIDED_ROWS(strided_rows_2, uint16_t)
STRIDED_ROWS(strided_rows_4, uint32_t)
STRIDED_ROWS(strided_rows_8, uint64_t)

/* arrays: x, out (count matrices of rows x cols elements of `size` bytes, row-major; out may be x); sizes:
   count, rows, cols, size, diagonal (within -rows - 1 to cols + 1), upper. tril (triu where upper) of each
   matrix: a row's elements kept copied (where out is not x), the others' bytes zeroed; the rows shared among
   the threads. */
void triangle(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const char *x = arrays[0];
    char *out = arrays[1];
    const int64_t count = sizes[0], rows = sizes[1], cols = sizes[2], size = sizes[3], diagonal = sizes[4];
    const int upper = (int)sizes[5];
    (void)scalars;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t k = 0; k < count * rows; k++) {
        int64_t edge = k % rows + diagonal + !upper;   /* tril keeps the columns before it, triu those from it */
        edge = edge < 0 ? 0 : (edge > cols ? cols : edge);
        const int64_t first = upper ? edge : 0, last = upper ? cols : edge;
        const char *from = x + k * cols * size;
        char *to = out + k * cols * size;
        if (to != from) memcpy(to + first * size, from + first * size, (size_t)((last - first) * size));
        if (upper) memset(to, 0, (size_t)(edge * size));
        else memset(to + edge * size, 0, (size_t)((cols - edge) * size));
    }
}

/* LAPACK's unblocked getrf on columns first..last-1 (last <= m) of the row-major m x n matrix
   a, in place, as ops/lu.py's getrf computes a panel: the pivot is the first entry of largest
   magnitude (NaN never wins), the whole rows swap, the column below is divided by the pivot (by
   1 where it is zero: *info keeps the first such column + 1) and the panel's columns to the
   right take the rank-1 update, each product rounded before its subtraction. pivots[j] gets
   column j's 1-based pivot row. The panel's rows from `first` down are copied column by column
   into a buffer, where the search, the division and the updates run along contiguous columns,
   and copied back; the rows outside the panel's columns then swap in the pivots' order. */
#define LU_PANEL(name, T, ABS) \
static void name(T *a, int64_t m, int64_t n, int64_t first, int64_t last, int32_t *pivots, \
                 int32_t *info) { \
    const int64_t width = last - first, rows = m - first; \
    T *panel = malloc((size_t)(width * rows) * sizeof(T)); \
    if (panel == NULL) abort(); \
    for (int64_t r = 0; r < rows; r++) \
        for (int64_t c = 0; c < width; c++) panel[c * rows + r] = a[(first + r) * n + first + c]; \
    for (int64_t j = 0; j < width; j++) { \
        T *column = panel + j * rows; \
        int64_t p = j; \
        T best = -INFINITY; \
        for (int64_t r = j; r < rows; r++) { \
            T size = ABS(column[r]); \
            if (size > best) { best = size; p = r; } \
        } \
        pivots[first + j] = (int32_t)(first + p + 1); \
        if (p != j) \
            for (int64_t c = 0; c < width; c++) { \
                T t = panel[c * rows + p]; panel[c * rows + p] = panel[c * rows + j]; \
                panel[c * rows + j] = t; \
            } \
        T pivot = column[j]; \
        if (pivot == 0) { \
            if (*info == 0) *info = (int32_t)(first + j + 1); \
            pivot = 1; \
        } \
        _Pragma("omp simd") \
        for (int64_t r = j + 1; r < rows; r++) column[r] /= pivot; \
        for (int64_t c = j + 1; c < width; c++) { \
            T *target = panel + c * rows; \
            const T above = target[j]; \
            _Pragma("omp simd") \
            for (int64_t r = j + 1; r < rows; r++) { \
                T product = column[r] * above; \
                target[r] -= product; \
            } \
        } \
    } \
    for (int64_t r = 0; r < rows; r++) \
        for (int64_t c = 0; c < width; c++) a[(first + r) * n + first + c] = panel[c * rows + r]; \
    free(panel); \
    for (int64_t j = first; j < last; j++) { \
        const int64_t p = pivots[j] - 1; \
        if (p == j) continue; \
        T *row = a + j * n, *other = a + p * n; \
        for (int64_t c = 0; c < first; c++) { T t = other[c]; other[c] = row[c]; row[c] = t; } \
        for (int64_t c = last; c < n; c++) { T t = other[c]; other[c] = row[c]; row[c] = t; } \
    } \
}

LU_PANEL(lu_panel_float32, float, fabsf)
LU_PANEL(lu_panel_float64, double, fabs)

/* arrays: a (count row-major m x n matrices, factored in place), pivots (int32, count x
   min(m, n): this panel's entries written), info (int32, count: set where still 0); sizes:
   count, m, n, first, last (the panel's columns, last <= m): lu_panel on each matrix. */
#define GETRF_PANEL(name, T, PANEL) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    T *all = arrays[0]; \
    int32_t *pivots = arrays[1], *info = arrays[2]; \
    const int64_t count = sizes[0], m = sizes[1], n = sizes[2], first = sizes[3], last = sizes[4]; \
    const int64_t k = m < n ? m : n; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 1) schedule(static)") \
    for (int64_t b = 0; b < count; b++) \
        PANEL(all + b * m * n, m, n, first, last, pivots + b * k, info + b); \
}

GETRF_PANEL(getrf_panel_float32, float, lu_panel_float32)
GETRF_PANEL(getrf_panel_float64, double, lu_panel_float64)

/* Recursive factorizations and triangular solves on row-major blocks (each block a pointer and
   its leading dimension), with the matrix products by the CBLAS gemm whose address the caller
   gives (OpenBLAS's, NumPy's own): its sizes are int64 where ilp64, else int. The recursions
   halve the rows or columns down to RECURSIVE_BASE, where loops finish the work. */
#define RECURSIVE_BASE 32
typedef void (*sgemm64_t)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                          const float *, int64_t, float, float *, int64_t);
typedef void (*sgemm32_t)(int, int, int, int, int, int, float, const float *, int, const float *,
                          int, float, float *, int);
typedef void (*dgemm64_t)(int, int, int, int64_t, int64_t, int64_t, double, const double *,
                          int64_t, const double *, int64_t, double, double *, int64_t);
typedef void (*dgemm32_t)(int, int, int, int, int, int, double, const double *, int,
                          const double *, int, double, double *, int);

/* c -= op(a) op(b): op(a) m x k, op(b) k x n, c m x n; op transposes where trans_a, trans_b */
#define GEMM_MINUS(suffix, T, GEMM64, GEMM32) \
static void gemm_minus_##suffix(void *gemm, int ilp64, int trans_a, int trans_b, int64_t m, \
                                int64_t n, int64_t k, const T *a, int64_t lda, const T *b, \
                                int64_t ldb, T *c, int64_t ldc) { \
    const int op_a = trans_a ? 112 : 111, op_b = trans_b ? 112 : 111; \
    if (ilp64) \
        ((GEMM64)gemm)(101, op_a, op_b, m, n, k, -1, a, lda, b, ldb, 1, c, ldc); \
    else \
        ((GEMM32)gemm)(101, op_a, op_b, (int)m, (int)n, (int)k, -1, a, (int)lda, b, (int)ldb, 1, \
                       c, (int)ldc); \
}

GEMM_MINUS(float32, float, sgemm64_t, sgemm32_t)
GEMM_MINUS(float64, double, dgemm64_t, dgemm32_t)

/* The triangular solve op(T) X = B of BLAS's trsm (on the left): the rows split in halves, one
   half solved, the other half less its product by the solved rows, then solved; up to
   RECURSIVE_BASE rows by substitution, a row less each solved row times its entry, then
   divided by the diagonal (kept where unit). op(T)[i][j] is a[i * lda + j], or a[j * lda + i]
   where transposed; its lower triangle is the one used where `lower`. */
#define RECURSIVE_TRSM(suffix, T) \
static void solve_triangle_##suffix(void *gemm, int ilp64, int lower, int transposed, int unit, \
                                    int64_t rows, int64_t cols, const T *a, int64_t lda, T *b, \
                                    int64_t ldb) { \
    if (rows > RECURSIVE_BASE) { \
        const int64_t half = rows / 2, rest = rows - half; \
        const T *a22 = a + half * lda + half; \
        /* op(T)'s block below the diagonal (rows half.., columns ..half) and above it */ \
        const T *below = transposed ? a + half : a + half * lda; \
        const T *above = transposed ? a + half * lda : a + half; \
        if (lower) { \
            solve_triangle_##suffix(gemm, ilp64, lower, transposed, unit, half, cols, a, lda, b, ldb); \
            gemm_minus_##suffix(gemm, ilp64, transposed, 0, rest, cols, half, below, lda, b, ldb, \
                                b + half * ldb, ldb); \
            solve_triangle_##suffix(gemm, ilp64, lower, transposed, unit, rest, cols, a22, lda, \
                                    b + half * ldb, ldb); \
        } else { \
            solve_triangle_##suffix(gemm, ilp64, lower, transposed, unit, rest, cols, a22, lda, \
                                    b + half * ldb, ldb); \
            gemm_minus_##suffix(gemm, ilp64, transposed, 0, half, cols, rest, above, lda, \
                                b + half * ldb, ldb, b, ldb); \
            solve_triangle_##suffix(gemm, ilp64, lower, transposed, unit, half, cols, a, lda, b, ldb); \
        } \
        return; \
    } \
    for (int64_t step = 0; step < rows; step++) { \
        const int64_t i = lower ? step : rows - 1 - step; \
        T *target = b + i * ldb; \
        const int64_t from = lower ? 0 : i + 1, to = lower ? i : rows; \
        for (int64_t q = from; q < to; q++) { \
            const T factor = transposed ? a[q * lda + i] : a[i * lda + q]; \
            const T *source = b + q * ldb; \
            _Pragma("omp simd") \
            for (int64_t c = 0; c < cols; c++) { \
                T product = factor * source[c]; \
                target[c] -= product; \
            } \
        } \
        if (!unit) { \
            const T diagonal = a[i * lda + i]; \
            _Pragma("omp simd") \
            for (int64_t c = 0; c < cols; c++) target[c] /= diagonal; \
        } \
    } \
} \
/* arrays: a (row-major n x n matrices, `a_step` elements apart: 0 for one matrix for all), \
   b (count row-major n x k matrices, solved in place), gemm (the CBLAS gemm's address); \
   sizes: count, n, k, a_step, lower, transposed, unit, ilp64. */ \
void trsm_recursive_##suffix(void **arrays, const int64_t *sizes, const double *scalars, \
                             int nthreads) { \
    const T *all_a = arrays[0]; \
    T *all_b = arrays[1]; \
    void *gemm = arrays[2]; \
    const int64_t count = sizes[0], n = sizes[1], k = sizes[2], a_step = sizes[3]; \
    const int lower = (int)sizes[4], transposed = (int)sizes[5], unit = (int)sizes[6]; \
    const int ilp64 = (int)sizes[7]; \
    const int no_gemm = n <= RECURSIVE_BASE; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 1 && no_gemm) schedule(static)") \
    for (int64_t b = 0; b < count; b++) \
        solve_triangle_##suffix(gemm, ilp64, lower, transposed, unit, n, k, all_a + b * a_step, n, \
                                all_b + b * n * k, k); \
}

RECURSIVE_TRSM(float32, float)
RECURSIVE_TRSM(float64, double)

/* arrays: lu (row-major n x n factors of getrf, `lu_step` elements apart: 0 for one for all), pivots
   (int32, n per factor, each in 1..n), b (count row-major n x k matrices), x (the same: the
   solutions), order (int64, count x n: scratch), gemm; sizes: count, n, k, lu_step, transpose,
   ilp64. getrs on each system as ops/lu.py's lu_solve_arrays solves it: P L U X = B by B's rows
   in P^T's order, then L's and U's substitutions in place; A^T X = B (transpose) by U^T's and
   L^T's substitutions on a copy of B, whose rows then go back to P's order. */
#define RECURSIVE_GETRS(suffix, T) \
void getrs_recursive_##suffix(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *all_lu = arrays[0], *all_b = arrays[2]; \
    const int32_t *all_pivots = arrays[1]; \
    T *all_x = arrays[3]; \
    int64_t *orders = arrays[4]; \
    void *gemm = arrays[5]; \
    const int64_t count = sizes[0], n = sizes[1], k = sizes[2], lu_step = sizes[3]; \
    const int transpose = (int)sizes[4], ilp64 = (int)sizes[5]; \
    const int no_gemm = n <= RECURSIVE_BASE; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 1 && no_gemm) schedule(static)") \
    for (int64_t m = 0; m < count; m++) { \
        const T *lu = all_lu + m * lu_step, *b = all_b + m * n * k; \
        const int32_t *pivots = all_pivots + (lu_step ? m * n : 0); \
        T *x = all_x + m * n * k; \
        int64_t *order = orders + m * n; \
        for (int64_t r = 0; r < n; r++) order[r] = r; \
        for (int64_t i = 0; i < n; i++) { \
            const int64_t j = pivots[i] - 1; \
            const int64_t t = order[j]; order[j] = order[i]; order[i] = t; \
        } \
        if (!transpose) { \
            for (int64_t i = 0; i < n; i++) memcpy(x + i * k, b + order[i] * k, (size_t)k * sizeof(T)); \
            solve_triangle_##suffix(gemm, ilp64, 1, 0, 1, n, k, lu, n, x, k); \
            solve_triangle_##suffix(gemm, ilp64, 0, 0, 0, n, k, lu, n, x, k); \
        } else { \
            T *y = (T *)b; /* (the caller's copy of B, solved in place) */ \
            solve_triangle_##suffix(gemm, ilp64, 1, 1, 0, n, k, lu, n, y, k); \
            solve_triangle_##suffix(gemm, ilp64, 0, 1, 1, n, k, lu, n, y, k); \
            for (int64_t i = 0; i < n; i++) memcpy(x + order[i] * k, y + i * k, (size_t)k * sizeof(T)); \
        } \
    } \
}

RECURSIVE_GETRS(float32, float)
RECURSIVE_GETRS(float64, double)

/* LAPACK's geqrf and orgqr (their Fortran interfaces: every argument by reference), their
   addresses given, on each of count row-major m x n matrices, as _backend/lapack.py's qr calls
   them: the matrix in column-major order (a complete Q of a tall matrix: m columns, the last m - n
   zero), geqrf (its workspace's length asked once), R the upper triangle of its first `rows` rows
   (row-major rows x n), then orgqr (its workspace asked once) on the first `width` columns, Q
   row-major m x width; no orgqr where q is NULL (mode "r"). status[0] 1 where memory ran out.
   arrays: a, r, q, geqrf, orgqr, status (int64); sizes: count, m, n, rows, width, ilp64. */
#define SMALL_QR_BODY(T, I) { \
    typedef void (*geqrf_t)(const I *, const I *, T *, const I *, T *, T *, const I *, I *); \
    typedef void (*orgqr_t)(const I *, const I *, const I *, T *, const I *, const T *, T *, const I *, I *); \
    geqrf_t geqrf = (geqrf_t)arrays[3]; \
    orgqr_t orgqr = (orgqr_t)arrays[4]; \
    const T *all_a = arrays[0]; \
    T *all_r = arrays[1], *all_q = arrays[2]; \
    int64_t *status = arrays[5]; \
    const int64_t count = sizes[0], m = sizes[1], n = sizes[2], rows = sizes[3], width = sizes[4]; \
    const int64_t k = m < n ? m : n, cols = width > n ? width : n; \
    const I M = (I)m, N = (I)n, LDA = (I)(m > 1 ? m : 1), W = (I)width, K = (I)k; \
    T *col = malloc(sizeof(T) * (size_t)(m * cols)), *tau = malloc(sizeof(T) * (size_t)(k > 0 ? k : 1)); \
    T *work = NULL, *qwork = NULL, optimal = 0; \
    I lwork = -1, qlwork = -1, info = 0; \
    status[0] = 1; \
    if (col != NULL && tau != NULL) { \
        geqrf(&M, &N, col, &LDA, tau, &optimal, &lwork, &info); \
        lwork = (I)optimal > 1 ? (I)optimal : 1; \
        work = malloc(sizeof(T) * (size_t)lwork); \
        if (all_q != NULL) { \
            optimal = 0; \
            orgqr(&M, &W, &K, col, &LDA, tau, &optimal, &qlwork, &info); \
            qlwork = (I)optimal > 1 ? (I)optimal : 1; \
            qwork = malloc(sizeof(T) * (size_t)qlwork); \
        } \
    } \
    if (work != NULL && (all_q == NULL || qwork != NULL)) { \
        status[0] = 0; \
        for (int64_t b = 0; b < count; b++) { \
            const T *a = all_a + b * m * n; \
            for (int64_t j = 0; j < n; j++) \
                for (int64_t i = 0; i < m; i++) col[j * m + i] = a[i * n + j]; \
            for (int64_t j = n; j < cols; j++) \
                for (int64_t i = 0; i < m; i++) col[j * m + i] = 0; \
            geqrf(&M, &N, col, &LDA, tau, work, &lwork, &info); \
            T *r = all_r + b * rows * n; \
            for (int64_t i = 0; i < rows; i++) \
                for (int64_t j = 0; j < n; j++) r[i * n + j] = j >= i ? col[j * m + i] : (T)0; \
            if (all_q == NULL) continue; \
            orgqr(&M, &W, &K, col, &LDA, tau, qwork, &qlwork, &info); \
            T *q = all_q + b * m * width; \
            for (int64_t i = 0; i < m; i++) \
                for (int64_t j = 0; j < width; j++) q[i * width + j] = col[j * m + i]; \
        } \
    } \
    free(col); free(tau); free(work); free(qwork); \
}

void small_qr_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[5]) SMALL_QR_BODY(float, int64_t) else SMALL_QR_BODY(float, int32_t)
}

void small_qr_float64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[5]) SMALL_QR_BODY(double, int64_t) else SMALL_QR_BODY(double, int32_t)
}

/* LAPACK's orgqr (its Fortran interface), its address given, on each of count row-major m x n
   matrices of reflectors with k scales each, as _backend/lapack.py's orgqr calls it: the matrix in
   column-major order, orgqr (its workspace's length asked once), Q's n columns row-major.
   status[0] 1 where memory ran out. arrays: a, tau, q, orgqr, status (int64); sizes: count, m, n,
   k, ilp64. */
#define SMALL_ORGQR_BODY(T, I) { \
    typedef void (*orgqr_t)(const I *, const I *, const I *, T *, const I *, const T *, T *, const I *, I *); \
    orgqr_t orgqr = (orgqr_t)arrays[3]; \
    const T *all_a = arrays[0], *all_tau = arrays[1]; \
    T *all_q = arrays[2]; \
    int64_t *status = arrays[4]; \
    const int64_t count = sizes[0], m = sizes[1], n = sizes[2], k = sizes[3]; \
    const I M = (I)m, N = (I)n, K = (I)k, LDA = (I)(m > 1 ? m : 1); \
    T *col = malloc(sizeof(T) * (size_t)(m * n)), *work = NULL, optimal = 0; \
    I lwork = -1, info = 0; \
    status[0] = 1; \
    if (col != NULL) { \
        orgqr(&M, &N, &K, col, &LDA, all_tau, &optimal, &lwork, &info); \
        lwork = (I)optimal > 1 ? (I)optimal : 1; \
        work = malloc(sizeof(T) * (size_t)lwork); \
    } \
    if (work != NULL) { \
        status[0] = 0; \
        for (int64_t b = 0; b < count; b++) { \
            const T *a = all_a + b * m * n; \
            for (int64_t j = 0; j < n; j++) \
                for (int64_t i = 0; i < m; i++) col[j * m + i] = a[i * n + j]; \
            orgqr(&M, &N, &K, col, &LDA, all_tau + b * k, work, &lwork, &info); \
            T *q = all_q + b * m * n; \
            for (int64_t i = 0; i < m; i++) \
                for (int64_t j = 0; j < n; j++) q[i * n + j] = col[j * m + i]; \
        } \
    } \
    free(col); free(work); \
}

void small_orgqr_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[4]) SMALL_ORGQR_BODY(float, int64_t) else SMALL_ORGQR_BODY(float, int32_t)
}

void small_orgqr_float64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[4]) SMALL_ORGQR_BODY(double, int64_t) else SMALL_ORGQR_BODY(double, int32_t)
}

/* LAPACK's gesdd (its Fortran interface, jobz's length the hidden last argument), its address given, on
   each of count row-major m x n matrices of finite numbers, as torch calls it: the matrix copied to
   column-major order, the workspace's length asked once, then the singular values (count x k, k = min(m,
   n)) and, for job 1 ("S") or 2 ("A"), U (row-major m x k, or m x m) and Vh (row-major k x n, or n x n)
   copied from gesdd's column-major factors; job 0 ("N") the values alone. status[0] 1 where memory ran
   out, status[1] b + 1 where matrix b did not converge (the loop stops there). arrays: a, s, u, vh, gesdd,
   status (int64); sizes: count, m, n, job, ilp64. */
#define SMALL_GESDD_BODY(T, I) { \
    typedef void (*gesdd_t)(const char *, const I *, const I *, T *, const I *, T *, T *, const I *, T *, \
                            const I *, T *, const I *, I *, I *, size_t); \
    gesdd_t gesdd = (gesdd_t)arrays[4]; \
    const T *all_a = arrays[0]; \
    T *all_s = arrays[1], *all_u = arrays[2], *all_vh = arrays[3]; \
    int64_t *status = arrays[5]; \
    const int64_t count = sizes[0], m = sizes[1], n = sizes[2], job = sizes[3]; \
    const int64_t k = m < n ? m : n; \
    const int64_t u_columns = job == 2 ? m : job == 1 ? k : 1, vh_rows = job == 2 ? n : job == 1 ? k : 1; \
    const char jobz = job == 2 ? 'A' : job == 1 ? 'S' : 'N'; \
    const I M = (I)m, N = (I)n, LDA = (I)(m > 1 ? m : 1), LDU = (I)(job ? m : 1), LDVT = (I)vh_rows; \
    T *col = malloc(sizeof(T) * (size_t)(m * n)); \
    T *cu = malloc(sizeof(T) * (size_t)(job ? m * u_columns : 1)); \
    T *cvh = malloc(sizeof(T) * (size_t)(job ? vh_rows * n : 1)); \
    I *iwork = malloc(sizeof(I) * (size_t)(8 * (k > 1 ? k : 1))); \
    T *work = NULL, optimal = 0; \
    I lwork = -1, info = 0; \
    status[0] = 1; \
    status[1] = 0; \
    if (col != NULL && cu != NULL && cvh != NULL && iwork != NULL) { \
        gesdd(&jobz, &M, &N, col, &LDA, all_s, cu, &LDU, cvh, &LDVT, &optimal, &lwork, iwork, &info, 1); \
        lwork = (I)optimal > 1 ? (I)optimal : 1; \
        work = malloc(sizeof(T) * (size_t)lwork); \
    } \
    if (work != NULL) { \
        status[0] = 0; \
        for (int64_t b = 0; b < count; b++) { \
            const T *a = all_a + b * m * n; \
            for (int64_t j = 0; j < n; j++) \
                for (int64_t i = 0; i < m; i++) col[j * m + i] = a[i * n + j]; \
            gesdd(&jobz, &M, &N, col, &LDA, all_s + b * k, cu, &LDU, cvh, &LDVT, work, &lwork, iwork, &info, 1); \
            if (info != 0) { \
                status[1] = b + 1; \
                break; \
            } \
            if (!job) continue; \
            T *u = all_u + b * m * u_columns, *vh = all_vh + b * vh_rows * n; \
            for (int64_t i = 0; i < m; i++) \
                for (int64_t j = 0; j < u_columns; j++) u[i * u_columns + j] = cu[j * m + i]; \
            for (int64_t i = 0; i < vh_rows; i++) \
                for (int64_t j = 0; j < n; j++) vh[i * n + j] = cvh[j * vh_rows + i]; \
        } \
    } \
    free(col); free(cu); free(cvh); free(iwork); free(work); \
}

void small_gesdd_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[4]) SMALL_GESDD_BODY(float, int64_t) else SMALL_GESDD_BODY(float, int32_t)
}

void small_gesdd_float64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[4]) SMALL_GESDD_BODY(double, int64_t) else SMALL_GESDD_BODY(double, int32_t)
}

/* LAPACK's syevd (its Fortran interface, the lengths of jobz and uplo the hidden last arguments), its
   address given, on each of count row-major n x n matrices, as torch calls it: the matrix copied to
   column-major order, the workspaces' lengths asked once, syevd reading the lower triangle (`lower`) or
   the upper one, the eigenvalues (count x n, ascending) and, with `vectors`, the eigenvectors (row-major
   n x n, column j the j-th) copied from syevd's column-major ones. status[0] 1 where memory ran out,
   status[1] b + 1 where matrix b did not converge (the loop stops there). arrays: a, w, v, syevd, status
   (int64); sizes: count, n, vectors, lower, ilp64. */
#define SMALL_SYEVD_BODY(T, I) { \
    typedef void (*syevd_t)(const char *, const char *, const I *, T *, const I *, T *, T *, const I *, I *, \
                            const I *, I *, size_t, size_t); \
    syevd_t syevd = (syevd_t)arrays[3]; \
    const T *all_a = arrays[0]; \
    T *all_w = arrays[1], *all_v = arrays[2]; \
    int64_t *status = arrays[4]; \
    const int64_t count = sizes[0], n = sizes[1], vectors = sizes[2]; \
    const char jobz = vectors ? 'V' : 'N', uplo = sizes[3] ? 'L' : 'U'; \
    const I N = (I)n, LDA = (I)(n > 1 ? n : 1); \
    T *col = malloc(sizeof(T) * (size_t)(n * n)), *work = NULL, optimal = 0; \
    I *iwork = NULL, optimal_integer = 0, lwork = -1, liwork = -1, info = 0; \
    status[0] = 1; \
    status[1] = 0; \
    if (col != NULL) { \
        syevd(&jobz, &uplo, &N, col, &LDA, all_w, &optimal, &lwork, &optimal_integer, &liwork, &info, 1, 1); \
        lwork = (I)optimal > 1 ? (I)optimal : 1; \
        liwork = optimal_integer > 1 ? optimal_integer : 1; \
        work = malloc(sizeof(T) * (size_t)lwork); \
        iwork = malloc(sizeof(I) * (size_t)liwork); \
    } \
    if (work != NULL && iwork != NULL) { \
        status[0] = 0; \
        for (int64_t b = 0; b < count; b++) { \
            const T *a = all_a + b * n * n; \
            for (int64_t j = 0; j < n; j++) \
                for (int64_t i = 0; i < n; i++) col[j * n + i] = a[i * n + j]; \
            syevd(&jobz, &uplo, &N, col, &LDA, all_w + b * n, work, &lwork, iwork, &liwork, &info, 1, 1); \
            if (info != 0) { \
                status[1] = b + 1; \
                break; \
            } \
            if (!vectors) continue; \
            T *v = all_v + b * n * n; \
            for (int64_t i = 0; i < n; i++) \
                for (int64_t j = 0; j < n; j++) v[i * n + j] = col[j * n + i]; \
        } \
    } \
    free(col); free(work); free(iwork); \
}

void small_syevd_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[4]) SMALL_SYEVD_BODY(float, int64_t) else SMALL_SYEVD_BODY(float, int32_t)
}

void small_syevd_float64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[4]) SMALL_SYEVD_BODY(double, int64_t) else SMALL_SYEVD_BODY(double, int32_t)
}

/* LAPACK's geev (its Fortran interface, the lengths of the jobs the hidden last arguments), its address
   given, on each of count row-major n x n matrices of finite numbers, as torch calls it (right vectors
   alone): the matrix copied to column-major order, the workspace's length asked once, the eigenvalues
   (count x n complex: pairs of T) and, with `vectors`, the eigenvectors (row-major n x n complex, column j
   the j-th). geev gives a complex pair's vectors as the real and the imaginary part in two columns: the
   first eigenvalue's (positive imaginary part) is re + i im, the second's its conjugate. Each complex
   eigenvalue's vector is then turned (times conj(c) / |c|, c its first component of largest magnitude) so
   that c becomes real and positive, geev's own normalization; the vectors of real eigenvalues stay as
   they come. status[0] 1 where memory ran out, status[1] b + 1 where matrix b did not converge (the loop
   stops there). arrays: a, values, v, geev, status (int64); sizes: count, n, vectors, ilp64. */
#define SMALL_GEEV_BODY(T, I) { \
    typedef void (*geev_t)(const char *, const char *, const I *, T *, const I *, T *, T *, T *, const I *, \
                           T *, const I *, T *, const I *, I *, size_t, size_t); \
    geev_t geev = (geev_t)arrays[3]; \
    const T *all_a = arrays[0]; \
    T *all_values = arrays[1], *all_v = arrays[2]; \
    int64_t *status = arrays[4]; \
    const int64_t count = sizes[0], n = sizes[1], vectors = sizes[2]; \
    const char no = 'N', jobvr = vectors ? 'V' : 'N'; \
    const I N = (I)n, LDA = (I)(n > 1 ? n : 1), LDVR = (I)(vectors ? n : 1), ONE = 1; \
    T *col = malloc(sizeof(T) * (size_t)(n * n)), *wr = malloc(sizeof(T) * (size_t)(n > 0 ? n : 1)); \
    T *wi = malloc(sizeof(T) * (size_t)(n > 0 ? n : 1)), *cv = malloc(sizeof(T) * (size_t)(vectors ? n * n : 1)); \
    T *work = NULL, optimal = 0, unused = 0; \
    I lwork = -1, info = 0; \
    status[0] = 1; \
    status[1] = 0; \
    if (col != NULL && wr != NULL && wi != NULL && cv != NULL) { \
        geev(&no, &jobvr, &N, col, &LDA, wr, wi, &unused, &ONE, cv, &LDVR, &optimal, &lwork, &info, 1, 1); \
        lwork = (I)optimal > 1 ? (I)optimal : 1; \
        work = malloc(sizeof(T) * (size_t)lwork); \
    } \
    if (work != NULL) { \
        status[0] = 0; \
        for (int64_t b = 0; b < count; b++) { \
            const T *a = all_a + b * n * n; \
            for (int64_t j = 0; j < n; j++) \
                for (int64_t i = 0; i < n; i++) col[j * n + i] = a[i * n + j]; \
            geev(&no, &jobvr, &N, col, &LDA, wr, wi, &unused, &ONE, cv, &LDVR, work, &lwork, &info, 1, 1); \
            if (info != 0) { \
                status[1] = b + 1; \
                break; \
            } \
            T *values = all_values + b * n * 2; \
            for (int64_t j = 0; j < n; j++) { \
                values[2 * j] = wr[j]; \
                values[2 * j + 1] = wi[j]; \
            } \
            if (!vectors) continue; \
            T *v = all_v + b * n * n * 2; \
            for (int64_t j = 0; j < n; j++) { \
                if (wi[j] == 0 || j + 1 == n) { \
                    for (int64_t i = 0; i < n; i++) { \
                        v[(i * n + j) * 2] = cv[j * n + i]; \
                        v[(i * n + j) * 2 + 1] = 0; \
                    } \
                    continue; \
                } \
                const T *re = cv + j * n, *im = cv + (j + 1) * n; \
                int64_t largest = 0; \
                T size = re[0] * re[0] + im[0] * im[0]; \
                for (int64_t i = 1; i < n; i++) { \
                    const T s = re[i] * re[i] + im[i] * im[i]; \
                    if (s > size) { \
                        size = s; \
                        largest = i; \
                    } \
                } \
                const T magnitude = (T)hypot(re[largest], im[largest]); \
                const T scale = magnitude > 0 ? 1 / magnitude : 1; \
                const T turn_re = re[largest] * scale, turn_im = -im[largest] * scale; \
                for (int64_t i = 0; i < n; i++) { \
                    const T x = re[i] * turn_re - im[i] * turn_im, y = re[i] * turn_im + im[i] * turn_re; \
                    v[(i * n + j) * 2] = x; \
                    v[(i * n + j) * 2 + 1] = y; \
                    v[(i * n + j + 1) * 2] = x; \
                    v[(i * n + j + 1) * 2 + 1] = -y; \
                } \
                j++; \
            } \
        } \
    } \
    free(col); free(wr); free(wi); free(cv); free(work); \
}

void small_geev_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[3]) SMALL_GEEV_BODY(float, int64_t) else SMALL_GEEV_BODY(float, int32_t)
}

void small_geev_float64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[3]) SMALL_GEEV_BODY(double, int64_t) else SMALL_GEEV_BODY(double, int32_t)
}

/* LAPACK's potri (its Fortran interface, uplo's length the hidden last argument), its address given,
   on each of count row-major n x n Cholesky factors, as _backend/lapack.py's potri calls it: the factor
   copied to `out`, read by potri as the column-major transpose (a row-major lower factor L is the
   column-major upper L^T, and A = L L^T = (L^T)^T L^T: uplo "U"; an upper one "L"), the inverse's
   triangle potri writes then mirrored into the other. info[b] potri's info (k > 0: the k-th diagonal
   element is zero, the matrix left as potri left it). arrays: a, out, potri, info (int64); sizes:
   count, n, upper, ilp64. */
#define SMALL_POTRI_BODY(T, I) { \
    typedef void (*potri_t)(const char *, const I *, T *, const I *, I *, size_t); \
    potri_t potri = (potri_t)arrays[2]; \
    const T *all_a = arrays[0]; \
    T *all_out = arrays[1]; \
    int64_t *all_info = arrays[3]; \
    const int64_t count = sizes[0], n = sizes[1]; \
    const char uplo = sizes[2] ? 'L' : 'U'; \
    const I N = (I)n, LDA = (I)(n > 1 ? n : 1); \
    for (int64_t b = 0; b < count; b++) { \
        T *out = all_out + b * n * n; \
        memcpy(out, all_a + b * n * n, sizeof(T) * (size_t)(n * n)); \
        I info = 0; \
        potri(&uplo, &N, out, &LDA, &info, 1); \
        all_info[b] = (int64_t)info; \
        if (info != 0) continue; \
        for (int64_t i = 0; i < n; i++) \
            for (int64_t j = i + 1; j < n; j++) { \
                if (sizes[2]) out[j * n + i] = out[i * n + j]; \
                else out[i * n + j] = out[j * n + i]; \
            } \
    } \
}

void small_potri_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[3]) SMALL_POTRI_BODY(float, int64_t) else SMALL_POTRI_BODY(float, int32_t)
}

void small_potri_float64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    (void)scalars; (void)nthreads;
    if (sizes[3]) SMALL_POTRI_BODY(double, int64_t) else SMALL_POTRI_BODY(double, int32_t)
}

/* The recursive LU (Toledo's): the left half of the columns factored, the rows above the right
   half solved against its unit lower triangle, the rest of the right half less one product,
   the right half factored; panels of RECURSIVE_BASE columns or fewer by lu_panel. */
#define RECURSIVE_LU(suffix, T, PANEL) \
static void factor_columns_##suffix(void *gemm, int ilp64, T *a, int64_t m, int64_t n, \
                                    int64_t first, int64_t last, int32_t *pivots, int32_t *info) { \
    if (last - first <= RECURSIVE_BASE) { \
        PANEL(a, m, n, first, last, pivots, info); \
        return; \
    } \
    int64_t half = (last - first) / 2 / RECURSIVE_BASE * RECURSIVE_BASE; \
    const int64_t middle = first + (half ? half : RECURSIVE_BASE); \
    factor_columns_##suffix(gemm, ilp64, a, m, n, first, middle, pivots, info); \
    solve_triangle_##suffix(gemm, ilp64, 1, 0, 1, middle - first, last - middle, \
                            a + first * n + first, n, a + first * n + middle, n); \
    if (middle < m) \
        gemm_minus_##suffix(gemm, ilp64, 0, 0, m - middle, last - middle, middle - first, \
                            a + middle * n + first, n, a + first * n + middle, n, \
                            a + middle * n + middle, n); \
    factor_columns_##suffix(gemm, ilp64, a, m, n, middle, last, pivots, info); \
} \
/* arrays: a (count row-major m x n matrices, factored in place), pivots (int32, count x \
   min(m, n)), info (int32, count, zeros), gemm (the CBLAS gemm's address); sizes: count, m, \
   n, ilp64. LAPACK's getrf on each matrix, as the recursion above computes it; the columns \
   past min(m, n) of a wide matrix are solved against its unit lower triangle at the end. \
   Matrices of at most RECURSIVE_BASE rows or columns call no gemm: they run in parallel. */ \
void getrf_recursive_##suffix(void **arrays, const int64_t *sizes, const double *scalars, \
                              int nthreads) { \
    T *all = arrays[0]; \
    int32_t *pivots = arrays[1], *info = arrays[2]; \
    void *gemm = arrays[3]; \
    const int64_t count = sizes[0], m = sizes[1], n = sizes[2]; \
    const int ilp64 = (int)sizes[3]; \
    const int64_t k = m < n ? m : n; \
    const int no_gemm = k <= RECURSIVE_BASE; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 1 && no_gemm) schedule(static)") \
    for (int64_t b = 0; b < count; b++) { \
        T *a = all + b * m * n; \
        factor_columns_##suffix(gemm, ilp64, a, m, n, 0, k, pivots + b * k, info + b); \
        if (n > k) \
            solve_triangle_##suffix(gemm, ilp64, 1, 0, 1, k, n - k, a, n, a + k, n); \
    } \
}

RECURSIVE_LU(float32, float, lu_panel_float32)
RECURSIVE_LU(float64, double, lu_panel_float64)

/* The recursive Cholesky factorization of LAPACK's potrf, as A = U^T U on A's transpose (its
   rows hold A's lower triangle, which is all potrf reads; L = U^T): the leading half factored,
   the rows to its right solved against its factor's transpose (a solve along rows, which
   vectorizes), the trailing block less their transposed product, then factored; up to
   RECURSIVE_BASE rows by rows (the diagonal's square root, the row divided by it, the rows
   below less their rank-1 update). Returns 0, or 1 + the row whose diagonal was not positive
   (or NaN), as potrf's info. */
#define RECURSIVE_CHOLESKY(suffix, T, SQRT) \
static int64_t cholesky_upper_##suffix(void *gemm, int ilp64, T *a, int64_t n, int64_t lda) { \
    if (n > RECURSIVE_BASE) { \
        const int64_t half = n / 2, rest = n - half; \
        int64_t info = cholesky_upper_##suffix(gemm, ilp64, a, half, lda); \
        if (info) return info; \
        solve_triangle_##suffix(gemm, ilp64, 1, 1, 0, half, rest, a, lda, a + half, lda); \
        gemm_minus_##suffix(gemm, ilp64, 1, 0, rest, rest, half, a + half, lda, a + half, lda, \
                            a + half * lda + half, lda); \
        info = cholesky_upper_##suffix(gemm, ilp64, a + half * lda + half, rest, lda); \
        return info ? half + info : 0; \
    } \
    for (int64_t i = 0; i < n; i++) { \
        T *row = a + i * lda; \
        if (!(row[i] > 0)) return i + 1; \
        const T diagonal = SQRT(row[i]); \
        row[i] = diagonal; \
        _Pragma("omp simd") \
        for (int64_t c = i + 1; c < n; c++) row[c] /= diagonal; \
        for (int64_t r = i + 1; r < n; r++) { \
            T *target = a + r * lda; \
            const T factor = row[r]; \
            _Pragma("omp simd") \
            for (int64_t c = r; c < n; c++) { \
                T product = factor * row[c]; \
                target[c] -= product; \
            } \
        } \
    } \
    return 0; \
} \
/* arrays: a (count row-major n x n matrices: each replaced by its factor L, zeros above the \
   diagonal), info (int32, count), gemm (the CBLAS gemm's address); sizes: count, n, ilp64. */ \
void potrf_recursive_##suffix(void **arrays, const int64_t *sizes, const double *scalars, \
                              int nthreads) { \
    T *all = arrays[0]; \
    int32_t *info = arrays[1]; \
    void *gemm = arrays[2]; \
    const int64_t count = sizes[0], n = sizes[1]; \
    const int ilp64 = (int)sizes[2]; \
    const int no_gemm = n <= RECURSIVE_BASE; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 1 && no_gemm) schedule(static)") \
    for (int64_t b = 0; b < count; b++) { \
        T *a = all + b * n * n; \
        T *work = malloc((size_t)(n * n) * sizeof(T)); \
        if (work == NULL) abort(); \
        for (int64_t i = 0; i < n; i++) \
            for (int64_t j = 0; j <= i; j++) work[j * n + i] = a[i * n + j]; \
        info[b] = (int32_t)cholesky_upper_##suffix(gemm, ilp64, work, n, n); \
        for (int64_t i = 0; i < n; i++) { \
            for (int64_t j = 0; j <= i; j++) a[i * n + j] = work[j * n + i]; \
            for (int64_t j = i + 1; j < n; j++) a[i * n + j] = 0; \
        } \
        free(work); \
    } \
}

/* arrays: points (count x dims, row-major), edges (each dimension's edges one after the other,
   each ascending), flat (int64, count: written); sizes: count, dims, local, then each
   dimension's edge count (at most 64 dimensions). Each point's bin as torch's histogram kernel
   finds it, as one index into the row-major histogram, or -1 for a point outside the edges (or
   NaN): per dimension, for equal-width bins (`local`) the position interpolated between the
   outer edges in T's arithmetic, then the neighbouring edges compared; for given edges a binary
   search; a value on the last edge goes to the last bin. ops/statistics.py's `_bins_of`
   computes the same on arrays. */
#define HISTOGRAM_BINS(name, T) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *points = arrays[0], *all_edges = arrays[1]; \
    int64_t *flat = arrays[2]; \
    const int64_t count = sizes[0], dims = sizes[1], local = sizes[2]; \
    const int64_t *edge_counts = sizes + 3; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 65536) schedule(static)") \
    for (int64_t p = 0; p < count; p++) { \
        int64_t index = 0; \
        const T *edges = all_edges; \
        for (int64_t d = 0; d < dims; d++) { \
            const int64_t last = edge_counts[d] - 1; \
            const T x = points[p * dims + d]; \
            if (!(x >= edges[0] && x <= edges[last])) { index = -1; break; } \
            int64_t pos; \
            if (local) { \
                const T scaled = (x - edges[0]) * (T)last / (edges[last] - edges[0]); \
                const int64_t guess = (int64_t)scaled; \
                int64_t low = guess - 1 < 0 ? 0 : (guess - 1 > last ? last : guess - 1); \
                const int64_t top = guess + 1 < last ? guess + 1 : last; \
                pos = low - 1; \
                for (int64_t step = 0; step < 3; step++) { \
                    const int64_t at = low + step < last ? low + step : last; \
                    pos += (low + step <= top) && (edges[at] <= x); \
                } \
            } else { \
                int64_t lo = 0, hi = last + 1;   /* the first edge above x: searchsorted right */ \
                while (lo < hi) { \
                    const int64_t mid = (lo + hi) / 2; \
                    if (edges[mid] <= x) lo = mid + 1; else hi = mid; \
                } \
                pos = lo - 1; \
            } \
            if (pos == last) pos = last - 1; \
            index = index * last + (pos > 0 ? pos : 0); \
            edges += last + 1; \
        } \
        flat[p] = index; \
    } \
}

HISTOGRAM_BINS(histogram_bins_float32, float)
HISTOGRAM_BINS(histogram_bins_float64, double)

RECURSIVE_CHOLESKY(float32, float, sqrtf)
RECURSIVE_CHOLESKY(float64, double, sqrt)

/* arrays: out (steps values); sizes: steps (>= 2); scalars: start, end (each already of the
   dtype). torch's linspace of a float dtype: the step (end - start) / (steps - 1) in the dtype,
   the first half start + step * i and the second end - step * (steps - 1 - i), each one fused
   multiply-add rounded to the dtype (float32's product is exact in double: it is rounded in
   double, then to float, as ops/creation.py's _linspace_float rounds it). */
void linspace_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    float *out = arrays[0];
    const int64_t steps = sizes[0], half = steps / 2;
    const float start = (float)scalars[0], end = (float)scalars[1];
    const double step = (double)((end - start) / (float)(steps - 1));
    (void)nthreads;
    for (int64_t i = 0; i < steps; i++)
        out[i] = i < half ? (float)(step * (double)i + (double)start)
                          : (float)(-step * (double)(steps - 1 - i) + (double)end);
}

void linspace_float64(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    double *out = arrays[0];
    const int64_t steps = sizes[0], half = steps / 2;
    const double start = scalars[0], end = scalars[1], step = (end - start) / (double)(steps - 1);
    (void)nthreads;
    for (int64_t i = 0; i < steps; i++)
        out[i] = i < half ? fma(step, (double)i, start) : fma(-step, (double)(steps - 1 - i), end);
}

/* arrays: x (float32, rows x width), exponents (int64: rows x width, or one row of width repeated where
   the step is 0), out (float32, rows x width); sizes: rows, width, the exponents' step between rows. torch's
   ldexp of a float32 tensor and integer exponents: x * 2^e rounded once to float32. The product is exact
   in double for |e| <= 400 (2^e a normal double, x 24 bits); past that the float32 result is 0 or infinite
   (or x's 0, infinity or NaN) as at 400, so e is clamped there and 2^e built from its bits. */
void ldexp_float32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const float *xs = arrays[0];
    const int64_t *all_exponents = arrays[1];
    float *all_out = arrays[2];
    const int64_t rows = sizes[0], width = sizes[1], step = sizes[2];
    (void)scalars;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *x = xs + r * width;
        const int64_t *exponents = all_exponents + r * step;
        float *out = all_out + r * width;
        #pragma omp simd
        for (int64_t i = 0; i < width; i++) {
            const int64_t k = exponents[i] < -400 ? -400 : exponents[i] > 400 ? 400 : exponents[i];
            const int64_t bits = (k + 1023) << 52;
            double power;
            memcpy(&power, &bits, sizeof(power));
            out[i] = (float)((double)x[i] * power);
        }
    }
}

/* arrays: x, out (outer x size x inner, row-major), totals (size doubles, scratch); sizes: outer, size,
   inner; scalars: p (> 0), maxnorm. torch's renorm: each slice i of the middle dimension scaled by
   maxnorm / (norm + 1e-7) where its p-norm (accumulated in double) exceeds maxnorm, the factor
   computed in double and rounded to the dtype (as torch's CPU kernel has it); a NaN in a slice
   makes its norm NaN. Each thread takes a share of the slices; the norms of 1- and 2-norms add in SIMD lanes (along
   each row of a slice, or across the slices where the rows are single elements). */
#define RENORM_TERMS(T, TERM) \
    if (inner == 1) { \
        for (int64_t o = 0; o < outer; o++) { \
            const T *row = x + o * size; \
            _Pragma("omp simd") \
            for (int64_t i = first; i < last; i++) totals[i - first] += TERM((double)row[i]); \
        } \
    } else { \
        for (int64_t i = first; i < last; i++) \
            for (int64_t o = 0; o < outer; o++) { \
                const T *row = x + (o * size + i) * inner; \
                double total = 0; \
                _Pragma("omp simd reduction(+:total)") \
                for (int64_t j = 0; j < inner; j++) total += TERM((double)row[j]); \
                totals[i - first] += total; \
            } \
    }
#define RENORM_SQUARE(v) ((v) * (v))
#define RENORM(name, T) \
static void name##_slices(const T *x, T *out, int64_t outer, int64_t size, int64_t inner, double p, \
                          double maxnorm, int64_t first, int64_t last, double *totals) { \
    for (int64_t i = first; i < last; i++) totals[i - first] = 0; \
    if (p == 2) { \
        RENORM_TERMS(T, RENORM_SQUARE) \
    } else if (p == 1) { \
        RENORM_TERMS(T, fabs) \
    } else { \
        for (int64_t i = first; i < last; i++) { \
            double total = 0; \
            for (int64_t o = 0; o < outer; o++) { \
                const T *row = x + (o * size + i) * inner; \
                for (int64_t j = 0; j < inner; j++) { \
                    const double v = fabs((double)row[j]); \
                    if (isinf(p)) { if (v > total || v != v) total = v; } \
                    else total += pow(v, p); \
                } \
            } \
            totals[i - first] = total; \
        } \
    } \
    for (int64_t i = first; i < last; i++) { \
        const double total = totals[i - first]; \
        const double norm = p == 2 ? sqrt(total) : (p == 1 || isinf(p)) ? total : pow(total, 1.0 / p); \
        const T factor = (T)(norm > maxnorm ? maxnorm / (norm + 1e-7) : 1.0); \
        for (int64_t o = 0; o < outer; o++) { \
            const T *row = x + (o * size + i) * inner; \
            T *to = out + (o * size + i) * inner; \
            _Pragma("omp simd") \
            for (int64_t j = 0; j < inner; j++) to[j] = row[j] * factor; \
        } \
    } \
} \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *x = arrays[0]; \
    T *out = arrays[1]; \
    const int64_t outer = sizes[0], size = sizes[1], inner = sizes[2]; \
    const double p = scalars[0], maxnorm = scalars[1]; \
    _Pragma("omp parallel num_threads(nthreads) if(nthreads > 1)") \
    { \
        const int64_t parts = omp_get_num_threads(), part = omp_get_thread_num(); \
        const int64_t first = size * part / parts, last = size * (part + 1) / parts; \
        name##_slices(x, out, outer, size, inner, p, maxnorm, first, last, (double *)arrays[2] + first); \
    } \
}

RENORM(renorm_float32, float)
RENORM(renorm_float64, double)

/* arrays: x (n elements, read), scratch (2n elements, written), out (one element); sizes: n, k (< n; -1:
   the lower median's, NaN where x holds one; -2: the lower median's of the elements that are not NaN), the
   steps before the heap select. The element a sort in ascending order (NaN last, where the type has NaN)
   puts at position k: the elements that are not NaN (where there are NaN) copied to the scratch, then a
   quickselect on them, each step one pass from one half of the scratch to the other about the median of
   three: the elements below it from the range's start, those above it from its end, those equal to it
   (their count) between; after the steps given, a heap select on the range left. Position k past the
   elements that are not NaN: the first NaN of x. */
#define SELECT_SWAP(T, a, i, j) do { T swapped_ = a[i]; a[i] = a[j]; a[j] = swapped_; } while (0)
#define SELECT(name, T, IS_NAN) \
static void name##_sift(T *a, int64_t start, int64_t n) { \
    for (int64_t i = start, child; (child = 2 * i + 1) < n; i = child) { \
        if (child + 1 < n && a[child + 1] > a[child]) child++; \
        if (!(a[child] > a[i])) break; \
        SELECT_SWAP(T, a, i, child); \
    } \
} \
/* (the k-th smallest of a[0..n) by a max-heap of the k + 1 smallest) */ \
static T name##_heap_select(T *a, int64_t n, int64_t k) { \
    for (int64_t i = k / 2; i >= 0; i--) name##_sift(a, i, k + 1); \
    for (int64_t i = k + 1; i < n; i++) \
        if (a[i] < a[0]) { a[0] = a[i]; name##_sift(a, 0, k + 1); } \
    return a[0]; \
} \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *x = arrays[0]; \
    T *halves[2] = {arrays[1], (T *)arrays[1] + sizes[0]}, *out = arrays[2]; \
    const int64_t n = sizes[0]; \
    int64_t m = 0, nans = 0, first_nan = -1; \
    (void)scalars; (void)nthreads; \
    _Pragma("omp simd reduction(+:nans)") \
    for (int64_t i = 0; i < n; i++) nans += IS_NAN(x[i]); \
    const int64_t k = sizes[1] >= 0 ? sizes[1] : sizes[1] == -1 ? (nans ? n - nans : (n - 1) / 2) \
                      : (n - nans > 0 ? (n - nans - 1) / 2 : 0); \
    const T *from = x;   /* (without NaN: the first step reads x itself) */ \
    if (nans) { \
        for (int64_t i = 0; i < n; i++) { \
            if (IS_NAN(x[i])) { if (first_nan < 0) first_nan = i; } \
            else halves[1][m++] = x[i]; \
        } \
        if (k >= m) { *out = x[first_nan]; return; } \
        from = halves[1]; \
    } else { \
        m = n; \
    } \
    int64_t lo = 0, hi = m, budget = sizes[2], step = 0; \
    while (hi - lo > 16) { \
        T *to = halves[step++ % 2]; \
        if (--budget == 0) { \
            memcpy(to + lo, from + lo, (hi - lo) * sizeof(T)); \
            *out = name##_heap_select(to + lo, hi - lo, k - lo); \
            return; \
        } \
        T p0 = from[lo], p1 = from[lo + (hi - lo) / 2], p2 = from[hi - 1]; \
        if (p0 > p1) { T t = p0; p0 = p1; p1 = t; } \
        if (p1 > p2) p1 = p2; \
        const T pivot = p0 > p1 ? p0 : p1; \
        int64_t below = lo, above = hi - 1; \
        for (int64_t i = lo; i < hi; i++) { \
            const T v = from[i]; \
            to[below] = v; \
            to[above] = v; \
            below += v < pivot; \
            above -= v > pivot; \
        } \
        if (k >= below && k <= above) { *out = pivot; return; } \
        if (k < below) hi = below; \
        else lo = above + 1; \
        from = to; \
    } \
    T *last = halves[step % 2]; \
    memcpy(last + lo, from + lo, (hi - lo) * sizeof(T)); \
    for (int64_t i = lo + 1; i < hi; i++) \
        for (int64_t j = i; j > lo && last[j] < last[j - 1]; j--) SELECT_SWAP(T, last, j, j - 1); \
    *out = last[k]; \
}
#define SELECT_FLOAT_NAN(v) ((v) != (v))
#define SELECT_NO_NAN(v) 0
SELECT(select_float32, float, SELECT_FLOAT_NAN)
SELECT(select_float64, double, SELECT_FLOAT_NAN)
SELECT(select_int64, int64_t, SELECT_NO_NAN)

/* arrays: x (n elements, n >= 1), values (n elements, written), index (n int64, or NULL), firsts (n int64,
   written), runs (one int64, written); sizes: n. The runs of equal consecutive elements of x (compared as
   T: NaN unequal to everything, -0.0 equal to 0.0): each run's first element into values and its position
   into firsts, each element's run into index, the number of runs into runs; branchless (a run's slot
   is written again with its own first element while it lasts). */
#define RUNS(name, T) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *x = arrays[0]; \
    T *values = arrays[1]; \
    int64_t *index = arrays[2], *firsts = arrays[3], *runs = arrays[4]; \
    const int64_t n = sizes[0]; \
    int64_t k = 0, first = 0; \
    (void)scalars; (void)nthreads; \
    values[0] = x[0]; \
    firsts[0] = 0; \
    if (index != NULL) index[0] = 0; \
    for (int64_t i = 1; i < n; i++) { \
        const int64_t starts = x[i] != x[i - 1]; \
        k += starts; \
        first = starts ? i : first; \
        values[k] = x[first]; \
        firsts[k] = first; \
        if (index != NULL) index[i] = k; \
    } \
    runs[0] = k + 1; \
}
RUNS(runs_float32, float)
RUNS(runs_float64, double)
RUNS(runs_1, uint8_t)
RUNS(runs_2, uint16_t)
RUNS(runs_4, uint32_t)
RUNS(runs_8, uint64_t)

/* arrays: out (n elements of `item` bytes each, written), index (count int64), values (count elements of
   out's size), status (int64: the position of the first index outside [-n, n), or -1); sizes: n, count,
   item. put's writes: every index checked first (nothing written where one is out of range), then
   values[k] into out[index[k]] (a negative index counted from the end), in order, so that a repeated
   index keeps its last value, as NumPy's assignment does. */
void put_elements(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    char *out = arrays[0];
    const int64_t *index = arrays[1];
    const char *values = arrays[2];
    int64_t *status = arrays[3];
    const int64_t n = sizes[0], count = sizes[1], item = sizes[2];
    (void)scalars; (void)nthreads;
    for (int64_t k = 0; k < count; k++)
        if (index[k] < -n || index[k] >= n) {
            status[0] = k;
            return;
        }
    status[0] = -1;
    for (int64_t k = 0; k < count; k++) {
        const int64_t i = index[k] < 0 ? index[k] + n : index[k];
        memcpy(out + i * item, values + k * item, (size_t)item);
    }
}

/* arrays: pivots (int32, count x k, 1-based, each in 1..m), order (int64, count x m);
   sizes: count, k, m. The rows of P^T A as indices into A's rows, from LAPACK's sequential
   row swaps. */
void row_order_int32(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) {
    const int32_t *pivots = arrays[0];
    int64_t *order = arrays[1];
    const int64_t count = sizes[0], k = sizes[1], m = sizes[2];
    (void)scalars;
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 64) schedule(static)
    for (int64_t b = 0; b < count; b++) {
        int64_t *rows = order + b * m;
        for (int64_t r = 0; r < m; r++) rows[r] = r;
        for (int64_t i = 0; i < k; i++) {
            const int64_t j = pivots[b * k + i] - 1;
            const int64_t t = rows[j]; rows[j] = rows[i]; rows[i] = t;
        }
    }
}

/* arrays: LU (count x m x n, row-major), pivots (int32, count x k, 1-based, each in 1..m), P
   (count x m x m), L (count x m x k), U (count x k x n), order (int64, count x m: scratch), any
   of P, L and U NULL to leave it out (P and order together); sizes: count, m, n. lu_unpack: L
   the unit lower triangle of LU's first k columns, U the upper triangle of its first k rows,
   P the permutation of LAPACK's sequential row swaps (A = P L U), zeros elsewhere. */
#define LU_UNPACK(suffix, T) \
void lu_unpack_##suffix(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *lu = arrays[0]; \
    const int32_t *pivots = arrays[1]; \
    T *p = arrays[2], *l = arrays[3], *u = arrays[4]; \
    int64_t *orders = arrays[5]; \
    const int64_t count = sizes[0], m = sizes[1], n = sizes[2], k = m < n ? m : n; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 64) schedule(static)") \
    for (int64_t b = 0; b < count; b++) { \
        const T *a = lu + b * m * n; \
        if (l) { \
            T *lb = l + b * m * k; \
            for (int64_t i = 0; i < m; i++) \
                for (int64_t j = 0; j < k; j++) lb[i * k + j] = j < i ? a[i * n + j] : (T)(j == i); \
        } \
        if (u) { \
            T *ub = u + b * k * n; \
            for (int64_t i = 0; i < k; i++) \
                for (int64_t j = 0; j < n; j++) ub[i * n + j] = j >= i ? a[i * n + j] : (T)0; \
        } \
        if (p) { \
            T *pb = p + b * m * m; \
            int64_t *order = orders + b * m; \
            for (int64_t r = 0; r < m; r++) order[r] = r; \
            for (int64_t i = 0; i < k; i++) { \
                const int64_t j = pivots[b * k + i] - 1; \
                const int64_t t = order[j]; order[j] = order[i]; order[i] = t; \
            } \
            for (int64_t r = 0; r < m * m; r++) pb[r] = (T)0; \
            for (int64_t c = 0; c < m; c++) pb[order[c] * m + c] = (T)1; \
        } \
    } \
}

LU_UNPACK(float32, float)
LU_UNPACK(float64, double)

/* arrays: x (n x m, row-major), out (n (n - 1) / 2); sizes: n, m, whether to split over the
   threads. The distance of each row to each row after it, in pdist's order: the differences and
   their squares' sums in T, summed over the vector's lanes as torch's kernel sums them. */
#define PDIST_EUCLIDEAN(name, T) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *x = arrays[0]; \
    T *out = arrays[1]; \
    const int64_t n = sizes[0], m = sizes[1]; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && sizes[2]) schedule(dynamic, 1)") \
    for (int64_t i = 0; i < n - 1; i++) { \
        const T *a = x + i * m; \
        T *row = out + i * (2 * n - i - 1) / 2 - (i + 1); \
        int64_t j = i + 1; \
        for (; j + 4 <= n; j += 4) { /* four rows at a time: each of a's values read once for them */ \
            const T *b0 = x + j * m, *b1 = b0 + m, *b2 = b1 + m, *b3 = b2 + m; \
            T t0 = 0, t1 = 0, t2 = 0, t3 = 0; \
            _Pragma("omp simd reduction(+:t0, t1, t2, t3)") \
            for (int64_t k = 0; k < m; k++) { \
                const T v = a[k], d0 = v - b0[k], d1 = v - b1[k], d2 = v - b2[k], d3 = v - b3[k]; \
                t0 += d0 * d0; t1 += d1 * d1; t2 += d2 * d2; t3 += d3 * d3; \
            } \
            row[j] = (T)sqrt(t0); row[j + 1] = (T)sqrt(t1); row[j + 2] = (T)sqrt(t2); row[j + 3] = (T)sqrt(t3); \
        } \
        for (; j < n; j++) { \
            const T *b = x + j * m; \
            T total = 0; \
            _Pragma("omp simd reduction(+:total)") \
            for (int64_t k = 0; k < m; k++) { \
                const T d = a[k] - b[k]; \
                total += d * d; \
            } \
            row[j] = (T)sqrt(total); \
        } \
    } \
}
/* arrays: a (count x n x n, row-major; its lower triangle factored in place), pivots (count x n
   int32), info (count int32); sizes: count, n; scalars: Bunch-Kaufman's alpha. LAPACK's sytf2
   (lower) for real matrices as ops/ldl.py's _factor_one computes it, bit for bit: the pivot
   search's comparisons in double, the updates in T on the lower triangle (the upper one is
   never read). */
#define LDL_FACTOR(name, T, ABS) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    T *matrices = arrays[0]; \
    int32_t *all_pivots = arrays[1], *all_info = arrays[2]; \
    const int64_t count = sizes[0], n = sizes[1]; \
    const double alpha = scalars[0]; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && count > 1) schedule(dynamic, 1)") \
    for (int64_t b = 0; b < count; b++) { \
        T *a = matrices + b * n * n; \
        int32_t *pivots = all_pivots + b * n; \
        int32_t info = 0; \
        T *wk = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof(T)), *wkp1 = wk + n; \
        int64_t k = 0; \
        while (k < n) { \
            int64_t kstep = 1, kp; \
            const double absakk = (double)ABS(a[k * n + k]); \
            int64_t imax = k; \
            double colmax = 0.0; \
            if (k + 1 < n) { \
                imax = k + 1; \
                T best = ABS(a[(k + 1) * n + k]); \
                for (int64_t i = k + 1; i < n && best == best; i++) { \
                    const T v = ABS(a[i * n + k]); \
                    if (v != v || v > best) { best = v; imax = i; } \
                } \
                colmax = (double)ABS(a[imax * n + k]); \
            } \
            if ((colmax > absakk ? colmax : absakk) == 0 || absakk != absakk) { \
                if (!info) info = (int32_t)(k + 1); \
                kp = k; \
            } else { \
                if (absakk >= alpha * colmax) { \
                    kp = k; \
                } else { \
                    T row_best = ABS(a[imax * n + k]); \
                    for (int64_t j = k + 1; j < imax && row_best == row_best; j++) { \
                        const T v = ABS(a[imax * n + j]); \
                        if (v != v || v > row_best) row_best = v; \
                    } \
                    double rowmax = (double)row_best; \
                    if (imax + 1 < n) { \
                        T col_best = ABS(a[(imax + 1) * n + imax]); \
                        for (int64_t i = imax + 2; i < n && col_best == col_best; i++) { \
                            const T v = ABS(a[i * n + imax]); \
                            if (v != v || v > col_best) col_best = v; \
                        } \
                        if ((double)col_best > rowmax) rowmax = (double)col_best; \
                    } \
                    const double diagonal = (double)ABS(a[imax * n + imax]); \
                    if (absakk >= alpha * colmax * (colmax / rowmax)) kp = k; \
                    else if (diagonal >= alpha * rowmax) kp = imax; \
                    else { kp = imax; kstep = 2; } \
                } \
                const int64_t kk = k + kstep - 1; \
                if (kp != kk) { \
                    for (int64_t i = kp + 1; i < n; i++) { \
                        const T t = a[i * n + kk]; a[i * n + kk] = a[i * n + kp]; a[i * n + kp] = t; \
                    } \
                    for (int64_t j = kk + 1; j < kp; j++) { \
                        const T t = a[j * n + kk]; a[j * n + kk] = a[kp * n + j]; a[kp * n + j] = t; \
                    } \
                    const T t = a[kk * n + kk]; a[kk * n + kk] = a[kp * n + kp]; a[kp * n + kp] = t; \
                    if (kstep == 2) { \
                        const T u = a[(k + 1) * n + k]; a[(k + 1) * n + k] = a[kp * n + k]; a[kp * n + k] = u; \
                    } \
                } \
                if (kstep == 1) { \
                    if (k + 1 < n) { \
                        const T scale = (T)1 / a[k * n + k]; \
                        for (int64_t i = k + 1; i < n; i++) wk[i] = a[i * n + k]; \
                        for (int64_t i = k + 1; i < n; i++) { \
                            const T xi = wk[i]; \
                            T *row = a + i * n; \
                            for (int64_t j = k + 1; j <= i; j++) { \
                                const T product = xi * wk[j]; \
                                const T scaled = scale * product; \
                                row[j] -= scaled; \
                            } \
                        } \
                        for (int64_t i = k + 1; i < n; i++) a[i * n + k] = wk[i] * scale; \
                    } \
                } else if (k + 2 < n) { \
                    T d21 = a[(k + 1) * n + k]; \
                    const T d11 = a[(k + 1) * n + k + 1] / d21, d22 = a[k * n + k] / d21; \
                    const T dd = d11 * d22 - (T)1; \
                    d21 = ((T)1 / dd) / d21; \
                    for (int64_t i = k + 2; i < n; i++) { \
                        const T ak = a[i * n + k], ak1 = a[i * n + k + 1]; \
                        const T p = d11 * ak, q = d22 * ak1; \
                        wk[i] = d21 * (p - ak1); \
                        wkp1[i] = d21 * (q - ak); \
                    } \
                    for (int64_t i = k + 2; i < n; i++) { \
                        const T ak = a[i * n + k], ak1 = a[i * n + k + 1]; \
                        T *row = a + i * n; \
                        for (int64_t j = k + 2; j <= i; j++) { \
                            const T first = ak * wk[j], second = ak1 * wkp1[j]; \
                            const T both = first + second; \
                            row[j] -= both; \
                        } \
                    } \
                    for (int64_t i = k + 2; i < n; i++) { a[i * n + k] = wk[i]; a[i * n + k + 1] = wkp1[i]; } \
                } \
            } \
            if (kstep == 1) pivots[k] = (int32_t)(kp + 1); \
            else pivots[k] = pivots[k + 1] = (int32_t)(-(kp + 1)); \
            k += kstep; \
        } \
        all_info[b] = info; \
        free(wk); \
    } \
}
LDL_FACTOR(ldl_factor_float32, float, fabsf)
LDL_FACTOR(ldl_factor_float64, double, fabs)

PDIST_EUCLIDEAN(pdist_euclidean_float32, float)
PDIST_EUCLIDEAN(pdist_euclidean_float64, double)

/* arrays: grad and dist (n (n - 1) / 2, pdist's order), x (n x m), out (n x m); sizes: n, m,
   whether to split over the threads. Each row's gradient, sum over the other rows j of
   grad / dist (0 where dist is 0) times (x_i - x_j), a row per thread. */
#define PDIST_EUCLIDEAN_BACKWARD(name, T) \
void name(void **arrays, const int64_t *sizes, const double *scalars, int nthreads) { \
    const T *grad = arrays[0], *dist = arrays[1], *x = arrays[2]; \
    T *out = arrays[3]; \
    const int64_t n = sizes[0], m = sizes[1]; \
    (void)scalars; \
    _Pragma("omp parallel for num_threads(nthreads) if(nthreads > 1 && sizes[2]) schedule(static)") \
    for (int64_t i = 0; i < n; i++) { \
        const T *a = x + i * m; \
        T *o = out + i * m; \
        for (int64_t k = 0; k < m; k++) o[k] = 0; \
        T w[4]; \
        const T *b[4]; \
        int count = 0; \
        for (int64_t j = 0; j <= n; j++) { \
            if (j < n && j != i) { \
                const int64_t lo = i < j ? i : j, hi = i < j ? j : i; \
                const int64_t pair = lo * (2 * n - lo - 1) / 2 + (hi - lo - 1); \
                w[count] = dist[pair] == 0 ? (T)0 : grad[pair] / dist[pair]; \
                b[count++] = x + j * m; \
            } \
            if (count == 4) { /* four rows at a time: o read and written once for them */ \
                const T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3]; \
                const T *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3]; \
                _Pragma("omp simd") \
                for (int64_t k = 0; k < m; k++) \
                    o[k] += w0 * (a[k] - b0[k]) + w1 * (a[k] - b1[k]) + w2 * (a[k] - b2[k]) + w3 * (a[k] - b3[k]); \
                count = 0; \
            } else if (j == n) { \
                for (int c = 0; c < count; c++) { \
                    const T wc = w[c], *bc = b[c]; \
                    _Pragma("omp simd") \
                    for (int64_t k = 0; k < m; k++) o[k] += wc * (a[k] - bc[k]); \
                } \
            } \
        } \
    } \
}
PDIST_EUCLIDEAN_BACKWARD(pdist_euclidean_backward_float32, float)
PDIST_EUCLIDEAN_BACKWARD(pdist_euclidean_backward_float64, double)
"""

# The elementwise loops run from this many elements; below, the ctypes call around the loop
# costs more than NumPy's pass.
ELEMENTWISE_MIN_ELEMENTS = 1 << 14

# The sum's loop runs from this many elements: below, NumPy's one-thread sum takes less than
# the ctypes call around the loop (BENCHMARKS.md, "Every op of the op table").
SUM_MIN_ELEMENTS = 1 << 15

# The largest and smallest elements take the loop (on two threads or more: on one, NumPy's
# vectorized max is quicker than the loop's selects) from this many elements
EXTREMES_MIN_ELEMENTS = 1 << 22

# The fewest elements each of whole_reduction's kinds takes: sums of squares and nansum stand
# for two or three NumPy passes each, and win from the elementwise loops' size (BENCHMARKS.md,
# "Vector-math loops").
WHOLE_REDUCTION_MIN_ELEMENTS = {"sum": SUM_MIN_ELEMENTS, "sum_squares": ELEMENTWISE_MIN_ELEMENTS,
                                "nansum": ELEMENTWISE_MIN_ELEMENTS, "max": EXTREMES_MIN_ELEMENTS,
                                "min": EXTREMES_MIN_ELEMENTS, "prod": ELEMENTWISE_MIN_ELEMENTS}

# Running sums take the loop from this many elements (NumPy's ``cumsum`` adds one element at a
# time in float32, on one thread).
SCAN_MIN_ELEMENTS = 1 << 14

# The gather and scatter loops (``gather``, ``scatter``, ``scatter_add_into``) take index
# arrays of any size: their call costs less than NumPy's fancy indexing and ``add.at`` from one
# element on. Up to this many indices they run on the calling thread alone, where starting
# OpenMP's team costs more than the picks (``benchmarks/picks.py``).
PICKS_SERIAL_MAX_ELEMENTS = 1 << 11

# index_select's loop runs from this many elements picked along the last axis, or copied in
# rows along another (benchmarks/index_select.py)
INDEX_PICKS_MIN_ELEMENTS = 1 << 16
INDEX_ROWS_MIN_ELEMENTS = 1 << 19

# A copy whose last axis runs backwards takes the row loop from this many elements
# (``benchmarks/flip.py``)
REVERSED_ROWS_MIN_ELEMENTS = 1 << 15

_functions = {}   # name -> the loop (``_function``), or None where it could not be built


def _function(name):
    """The loop ``name``, called as ``function(arrays, sizes, scalars, threads)``: a tuple of
    arrays (None for NULL, or an address), a tuple of int64 sizes, a tuple of doubles (or None)
    and the thread count (``native_calls``); None where it could not be built."""
    if name not in _functions:
        from .._inductor import _compiler
        _functions[name] = native_calls.bind(_compiler.load(SOURCE, name, quiet=True, argtypes=None), "PQDi")
    return _functions[name]


def available():
    """Whether the loops can be built here (a C compiler is found and compiles them)."""
    return _function("relu_forward") is not None


_applied_count = []   # oneDNN's ``threads.applied_count``, bound on first use


def thread_count():
    """The thread count the loops run on: oneDNN's OpenMP count for the calling thread."""
    if not _applied_count:
        from .onednn import threads
        _applied_count.append(threads.applied_count)
    return _applied_count[0]() or 1


def _rows(x):
    """Whether ``x`` is a row-major (N, C, L) float32 NumPy array with elements."""
    return (type(x) is np.ndarray and x.ndim == 3 and x.dtype == np.float32 and x.size
            and x.flags.c_contiguous)


def _vector(values):
    return None if values is None else np.ascontiguousarray(values, np.float32)


def _call(function, arrays, sizes, scalars):
    function(arrays, sizes, scalars or None, thread_count())


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


# Row loops on this many elements or more run on the threads; below, on the calling thread alone
# (starting OpenMP's team costs more than the rows).
ROWS_THREADS_MIN_ELEMENTS = 1 << 15


def _rows_threads(x):
    return thread_count() if x.size >= ROWS_THREADS_MIN_ELEMENTS else 1


def _row_major_matrix(x):
    """Whether ``x`` is a row-major (R, D) float32 NumPy array with elements."""
    return (type(x) is np.ndarray and x.ndim == 2 and x.dtype == np.float32 and x.size
            and x.flags.c_contiguous)


def layer_norm_forward(x, weight, bias, eps):
    """``(y, mean, invstd)`` of layer norm over the rows of a row-major (R, D) float32 ``x``,
    scaled by a (D,) ``weight`` and shifted by a (D,) ``bias`` (None: none); None where the loop
    does not apply or cannot be built."""
    if not _row_major_matrix(x):
        return None
    function = _function("layer_norm_forward")
    if function is None:
        return None
    shape = x.shape
    rows = shape[0]
    y, mean, invstd = np.empty(shape, np.float32), np.empty(rows, np.float32), np.empty(rows, np.float32)
    function((x, _vector(weight), _vector(bias), y, mean, invstd), shape, (float(eps),), _rows_threads(x))
    return y, mean, invstd


def layer_norm_backward(grad, x, mean, invstd, weight, need):
    """``(grad_input, grad_weight, grad_bias)`` of layer norm for (R, D) float32 ``grad`` and
    ``x`` (row-major) with per-row ``mean`` and ``invstd`` and a (D,) ``weight`` (None: ones),
    None where ``need`` (three flags) says it is not needed; or None where the loop does not
    apply or cannot be built."""
    if not _row_major_matrix(x) or type(grad) is not np.ndarray or grad.shape != x.shape:
        return None
    function = _function("layer_norm_backward")
    if function is None:
        return None
    grad = np.ascontiguousarray(grad, np.float32)
    threads = _rows_threads(x)
    width = x.shape[1]
    need_x, need_w, need_b = need
    grad_x = np.empty_like(x) if need_x else None
    partial = np.zeros((threads, 2, width)) if need_w or need_b else None
    weight = np.ones(width, np.float32) if weight is None else _vector(weight)
    function((grad, x, _vector(mean), _vector(invstd), weight, grad_x, partial), x.shape, (0.0,), threads)
    sums = None if partial is None else partial.sum(0).astype(np.float32)
    return (grad_x, sums[0] if need_w else None, sums[1] if need_b else None)


def _dense_alike(first, *others, least=ELEMENTWISE_MIN_ELEMENTS):
    """Whether ``first`` is a float32 NumPy array of at least ``least`` elements filling its
    memory without gaps (in any dimension order), and ``others`` are float32 NumPy arrays of
    its shape and strides: the same element at the same offset in each, so that a loop can run
    over their memory as flat arrays."""
    if (type(first) is not np.ndarray or first.size < least
            or first.dtype != np.float32):   # the size first: most small calls end there
        return False
    for other in others:
        if (type(other) is not np.ndarray or other.dtype != np.float32
                or other.shape != first.shape or other.strides != first.strides):
            return False
    return fills_its_memory(first)


def fills_its_memory(x):
    """Whether the array ``x`` fills its memory without gaps, in some dimension order."""
    if x.flags.c_contiguous:
        return True
    span = 1
    for stride, size in sorted(zip(x.strides, x.shape)):
        if size != 1 and stride != span * x.itemsize:
            return False
        span *= size
    return True


def _elementwise(name, inputs, scalars=()):
    """The result of loop ``name`` over dense float32 ``inputs`` of one layout, in that layout;
    None where it does not apply or cannot be built."""
    if not _dense_alike(*inputs):
        return None
    function = _function(name)
    if function is None:
        return None
    out = np.empty_like(inputs[0])   # the inputs' layout: the same flat order
    _call(function, (*inputs, out), (inputs[0].size,), scalars)
    return out


def relu_forward(x):
    """``max(x, 0)`` (NaN kept), or None."""
    return _elementwise("relu_forward", (x,))


def relu_backward(grad, result):
    """``grad`` where ``result > 0`` or NaN, else 0; or None."""
    return _elementwise("relu_backward", (grad, result))


def hardtanh_forward(x, lo, hi):
    """``clip(x, lo, hi)`` (NaN kept), or None."""
    return _elementwise("hardtanh_forward", (x,), (float(lo), float(hi)))


def hardtanh_backward(grad, x, lo, hi, zero_at_nan=False):
    """``grad`` where not ``x <= lo or x >= hi``, else 0 (and 0 where ``x`` is NaN with
    ``zero_at_nan``); or None."""
    return _elementwise("hardtanh_backward", (grad, x), (float(lo), float(hi), float(zero_at_nan)))


def leaky_relu_forward(x, slope):
    """``x`` where ``x > 0``, else ``x * slope``; or None."""
    return _elementwise("leaky_relu_forward", (x,), (float(slope),))


def clamp(x, lo, hi):
    """``clip(x, lo, hi)`` as NumPy's (a NaN kept, ``hi`` where ``lo > hi``) for a dense
    float32 ``x`` (either bound may be None) or int64 ``x`` (both bounds integers within
    2**53), in ``x``'s layout; or None."""
    if type(x) is not np.ndarray:
        return None
    if x.dtype == np.float32:
        bounds = (-math.inf if lo is None else lo, math.inf if hi is None else hi)
        if not all(abs(b) <= _FLOAT32_MAX or math.isinf(b) for b in bounds):
            return None   # (NumPy's clip refuses a bound float32 cannot hold)
        return _elementwise("clamp_float32", (x,), tuple(float(b) for b in bounds))
    if (x.dtype != np.int64 or x.size < ELEMENTWISE_MIN_ELEMENTS or not fills_its_memory(x)
            or not all(type(b) is int and abs(b) <= 2 ** 53 for b in (lo, hi))):
        return None
    function = _function("clamp_int64")
    if function is None:
        return None
    out = np.empty_like(x)
    _call(function, (x, out), (x.size,), (float(lo), float(hi)))
    return out


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def leaky_relu_backward(grad, x, slope):
    """``grad`` where ``x > 0``, else ``grad * slope``; or None."""
    return _elementwise("leaky_relu_backward", (grad, x), (float(slope),))


def hardshrink_forward(x, lambd):
    """``x`` where not ``-lambd <= x <= lambd``, else +0; or None."""
    return _elementwise("hardshrink_forward", (x,), (float(lambd),))


def hardshrink_backward(grad, x, lambd):
    """``grad`` where ``|x| > lambd``, else 0; or None."""
    return _elementwise("hardshrink_backward", (grad, x), (float(lambd),))


def _channel_rows(x, weight, least=ELEMENTWISE_MIN_ELEMENTS):
    """(N, C, L) of a row-major float32 ``x`` of at least ``least`` elements whose channels (dim 1, or
    all of it for one weight) match the float32 ``weight``'s length; None where they do not."""
    if (type(x) is not np.ndarray or x.dtype != np.float32 or x.size < least
            or not x.flags.c_contiguous or type(weight) is not np.ndarray or weight.dtype != np.float32):
        return None
    if weight.size == 1:
        return 1, 1, x.size
    if x.ndim < 2 or x.shape[1] != weight.size:
        return None
    return x.shape[0], x.shape[1], x.size // (x.shape[0] * x.shape[1])


def prelu_forward(x, weight):
    """``x`` where ``x > 0``, else ``weight[c] * x`` (c the channel, dim 1), or None. At every size (one
    call costs less than NumPy's three passes, the same products), on one thread below
    ``ELEMENTWISE_MIN_ELEMENTS``."""
    rows = _channel_rows(x, weight, 1)
    function = _function("prelu_forward") if rows is not None else None
    if function is None:
        return None
    y = np.empty_like(x)
    function((x, np.ascontiguousarray(weight).reshape(-1), y), rows, None,
             thread_count() if x.size >= ELEMENTWISE_MIN_ELEMENTS else 1)
    return y


def prelu_backward(grad, x, weight, need_input, need_weight):
    """(the gradient to ``x``: ``grad`` or ``weight[c] * grad``, the gradient to ``weight``:
    the sum of ``x * grad`` where ``x`` is not positive over each channel, of ``weight``'s
    shape), each None unless asked; or None where the loop does not apply."""
    rows = _channel_rows(x, weight)
    if (rows is None or type(grad) is not np.ndarray or grad.dtype != np.float32
            or grad.shape != x.shape or not grad.flags.c_contiguous):
        return None
    function = _function("prelu_backward")
    if function is None:
        return None
    grad_x = np.empty_like(x) if need_input else None
    grad_weight = np.empty(weight.shape, np.float32) if need_weight else None
    _call(function, (grad, x, np.ascontiguousarray(weight).reshape(-1), grad_x, grad_weight), rows, ())
    return grad_x, grad_weight


def adam_update(grad, exp_avg, exp_avg_sq, out, beta1, beta2, bias_correction2_sqrt, eps,
                step_size):
    """Adam's moments in place and its step into ``out`` (see the C source), for dense float32
    arrays of one shape and layout; None (nothing written) where the loop does not apply or
    cannot be built."""
    arrays = (grad, exp_avg, exp_avg_sq, out)
    if not _dense_alike(*arrays):
        return None
    function = _function("adam_update")
    if function is None:
        return None
    weight = 1 - beta1
    _call(function, arrays, (grad.size,), (weight, 1 - weight, beta2, 1 - beta2,
                                          bias_correction2_sqrt, eps, step_size))
    return out


def decay_add(state, decay, x):
    """``state.mul_(decay).add_(x)`` in place on the threads for dense float32 arrays of one
    shape and layout: True, or None (nothing written) where the loop does not apply."""
    return _update_in_place("decay_add", state, decay, x)


def add_scaled(target, alpha, x):
    """``target.add_(x, alpha=alpha)`` in place on the threads (one rounding per element, as
    torch's fused kernel) for dense float32 arrays of one shape and layout: True, or None
    (nothing written) where the loop does not apply."""
    return _update_in_place("add_scaled", target, alpha, x)


def _update_in_place(name, target, number, x):
    if not (_dense_alike(target, x, least=1) and target.flags.writeable) or thread_count() < 2:
        return None
    function = _function(name)
    if function is None:
        return None
    _call(function, (target, x), (target.size,), (number,))
    return True


_BINARY_OPS = {np.add: 0, np.subtract: 1, np.multiply: 2}
_ROWS_OPS = {np.add: 0, np.subtract: 1, np.multiply: 2, np.true_divide: 3}
# The binary ops of tensors (and the engine's gradient sums) try ``binary`` from operands of
# this many bytes; below it NumPy's ufunc costs less than the loop's call.
BINARY_MIN_BYTES = 1 << 20
# ... and ``binary_rows`` from this many: NumPy broadcasts a row over a matrix row by row, each
# an inner loop's call, at several times the cost of the same-shape ufunc
ROWS_MIN_BYTES = 1 << 16


def _row_slices(x, shape):
    """``(rows, width, row stride in elements)`` of a float32 array of ``shape`` whose last
    dimension has unit stride and whose leading dimensions step as one (rows of a matrix, a
    slice of them along the last dimension); None for another layout."""
    strides = x.strides
    if x.ndim < 2 or x.shape != shape or strides[-1] != 4 or strides[-2] % 4:
        return None
    for i in range(x.ndim - 2):
        if strides[i] != strides[i + 1] * shape[i + 1]:
            return None
    return x.size // shape[-1], shape[-1], strides[-2] // 4


def row_slices_case(ufunc, a, b):
    """The sizes and scalars ``binary_row_slices`` runs its loop with, where it takes the case
    (it may still find its loop unbuilt); None where it does not."""
    op = _ROWS_OPS.get(ufunc)
    if op is None or type(a) is not np.ndarray or a.dtype != np.float32:
        return None
    first = _row_slices(a, a.shape)
    if first is None:
        return None
    if type(b) is float or type(b) is int:
        return (*first, 0), (op, float(b))
    if type(b) is not np.ndarray or b.dtype != np.float32:
        return None
    second = _row_slices(b, a.shape)
    return None if second is None else ((*first, second[2]), (op, 0.0))


def binary_row_slices(ufunc, a, b, case=None):
    """``ufunc(a, b)`` for ``add``, ``subtract``, ``multiply`` and ``true_divide`` of float32
    arrays of one shape whose rows have unit stride but lie apart (slices along the last
    dimension: ``x[:, 1:]``, a split's pieces), or of such an array and a number, as a new
    row-major array; None where the loop does not apply or cannot be built. ``case``: what
    ``row_slices_case`` gave, where the caller asked it already."""
    case = case or row_slices_case(ufunc, a, b)
    function = _function("binary_row_slices") if case is not None else None
    if function is None:
        return None
    out = np.empty(a.shape, np.float32)
    _call(function, (a, b if type(b) is np.ndarray else None, out), *case)
    return out


def rows_case(ufunc, a, b):
    """The sizes and scalars ``binary_rows`` runs its loop with, where it takes the case (it may
    still find its loop unbuilt); None where it does not."""
    op = _ROWS_OPS.get(ufunc)
    if (op is None or type(b) is not np.ndarray or b.dtype != np.float32 or type(a) is not np.ndarray
            or a.dtype != np.float32 or not a.flags.c_contiguous or not b.flags.c_contiguous or b.ndim > a.ndim
            or not b.size):
        return None
    trailing = b.shape[next((i for i, n in enumerate(b.shape) if n != 1), b.ndim):]
    if not trailing or a.shape[a.ndim - len(trailing):] != trailing:
        return None
    return (a.size // b.size, b.size), (op,)


def binary_rows(ufunc, a, b, case=None):
    """``ufunc(a, b)`` for ``add``, ``subtract``, ``multiply`` and ``true_divide`` of a
    row-major float32 array ``a`` and a float32 array ``b`` of its trailing shape (leading 1s
    allowed), repeated over ``a``'s leading dimensions, as a new row-major array; None where
    the loop does not apply or cannot be built. ``case``: what ``rows_case`` gave, where the
    caller asked it already."""
    case = case or rows_case(ufunc, a, b)
    function = _function("binary_rows") if case is not None else None
    if function is None:
        return None
    out = np.empty_like(a)
    _call(function, (a, b, out), *case)
    return out


def _int64_rows(name, a, b, scalars=()):
    """The int64 rows loop ``name`` of a row-major int64 array ``a`` and a row-major int64 array ``b`` of its
    shape or of its trailing shape (leading 1s allowed) repeated over its leading dims, as a new row-major
    array; None where the loop does not apply or cannot be built."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != np.int64 or b.dtype != np.int64
            or not a.flags.c_contiguous or not b.flags.c_contiguous or b.ndim > a.ndim or not b.size):
        return None
    trailing = b.shape[next((i for i, n in enumerate(b.shape) if n != 1), b.ndim):]
    if not trailing or a.shape[a.ndim - len(trailing):] != trailing:
        return None
    function = _function(name)
    if function is None:
        return None
    out = np.empty_like(a)
    _call(function, (a, b, out), (a.size // b.size, b.size), scalars)
    return out


def int64_extreme_rows(larger, a, b):
    """The elementwise maximum (``larger``) or minimum of int64 arrays ``a`` and ``b`` (``_int64_rows``)."""
    return _int64_rows("extreme_rows_int64", a, b, (float(larger),))


# int64_division_rows' results: the loop's scalars[0]
_INT64_DIVISIONS = {"floor_divide": 0.0, "remainder": 1.0, "fmod": 2.0}


def int64_division_rows(kind, a, b):
    """The floor of int64 ``a`` divided by int64 ``b`` (``kind`` "floor_divide"), that division's remainder
    ("remainder") or the truncated division's ("fmod"), as NumPy's ufunc of that name (``_int64_rows``; ``b``
    checked for zeros first)."""
    return _int64_rows("floor_divide_rows_int64", a, b, (_INT64_DIVISIONS[kind],))


def binary(ufunc, a, b):
    """``ufunc(a, b)`` for ``add``, ``subtract`` and ``multiply`` of a dense float32 array ``a``
    and either a float32 array of its shape and layout or a float32 (or Python) number ``b``,
    in ``a``'s layout; None where the loop does not apply."""
    op = _BINARY_OPS.get(ufunc)
    if op is None:
        return None
    if type(b) is np.ndarray and b.ndim:
        return _elementwise("binary_arrays", (a, b), (op,))
    if type(b) is float or (type(b) in (np.ndarray, np.float32) and b.dtype == np.float32):
        return _elementwise("binary_number", (a,), (op, float(b)))
    return None


def column_sums(x):
    """The sums of the rows of a row-major float32 matrix ``x`` (its column sums), added row
    after row as NumPy's reduction over the first axis adds them (the same bits), as a new
    array; None where the loop does not apply or cannot be built."""
    if (type(x) is not np.ndarray or x.dtype != np.float32 or x.ndim != 2 or not x.flags.c_contiguous
            or not x.shape[0] or not x.shape[1]):
        return None
    function = _function("column_sums_float32")
    if function is None:
        return None
    out = np.empty(x.shape[1], np.float32)
    _call(function, (x, out), x.shape, ())
    return out


def rank_one(a, b, d=None, beta=0, alpha=1, out=None):
    """``beta * d + alpha * outer(a, b)`` (``d`` None, or ``beta`` 0: the outer product times
    alpha) for float32 or float64 vectors ``a`` and ``b`` and a ``d`` of their dtype that
    broadcasts to the (len(a), len(b)) result, rounded as the composite's NumPy operations in
    that order round it, as a new row-major array (or into ``out``, a row-major array of the
    result's shape and dtype, ``d`` itself if need be: each element is read before it is
    written); None where the loop does not apply or cannot be built."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 1 or b.ndim != 1
            or a.dtype != b.dtype or a.dtype not in _RANK_ONE_LOOPS):
        return None
    shape = (a.shape[0], b.shape[0])
    if out is not None and (type(out) is not np.ndarray or out.shape != shape or out.dtype != a.dtype
                            or not out.flags.c_contiguous):
        return None
    strides = [0, 0]
    if beta == 0:
        d = None
    elif type(d) is not np.ndarray or d.dtype != a.dtype or d.ndim > 2:
        return None
    else:
        for axis, size, stride in zip((2 - d.ndim, 1), d.shape, d.strides[-2:] if d.ndim else ()):
            if size != 1:   # (a dimension of 1 is read at stride 0, as broadcasting reads it)
                if size != shape[axis] or stride % d.itemsize:
                    return None
                strides[axis] = stride // d.itemsize
    function = _function(_RANK_ONE_LOOPS[a.dtype])
    if function is None:
        return None
    out = np.empty(shape, a.dtype) if out is None else out
    _call(function, (np.ascontiguousarray(a), np.ascontiguousarray(b), d, out), (*shape, *strides),
          (float(alpha), float(beta)))
    return out


_RANK_ONE_LOOPS = {np.dtype(np.float32): "rank_one_float32", np.dtype(np.float64): "rank_one_float64"}


def loop_addresses(names, calls_gemm=False):
    """The addresses of the loops ``names`` (dtype -> the loop's name) over float32 and float64, each None
    where it cannot be built (or, ``calls_gemm``, where NumPy's CBLAS gemm it calls is not found): what the
    compiled functions call from C (``ops._compiled_functions``, ``ops._compiled_factorizations``)."""
    from .._inductor import _compiler
    found = []
    for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        name = names.get(dtype)
        function = (_compiler.load(SOURCE, name, quiet=True, argtypes=None)
                    if name is not None and (not calls_gemm or cblas.gemm_address(dtype)) else None)
        found.append(None if function is None else ctypes.cast(function, ctypes.c_void_p).value)
    return tuple(found)


def rank_one_addresses():
    """The addresses of ``rank_one``'s loops (``loop_addresses``): what addr's compiled function calls."""
    return loop_addresses(_RANK_ONE_LOOPS)


_ROW_SUMS = {False: "row_sums_float32", True: "row_sums_squares_float32"}


def row_sums_address(squares):
    """The address of ``row_sums``' loop (of the rows' squares where ``squares``), None where it cannot be built:
    what the reductions' compiled functions call from C (``ops._compiled_functions``)."""
    return loop_addresses({np.dtype(np.float32): _ROW_SUMS[squares]})[0]


# row_sums takes rows of this many elements or more (narrower ones cost more on the loop than in einsum)
ROW_SUMS_MIN_WIDTH = 32


def row_sums(x, squares=False):
    """The sum of each row of a row-major (rows, width) float32 NumPy array of rows of ``ROW_SUMS_MIN_WIDTH``
    elements or more (of their squares, ``squares``) as a (rows,) float32 array: in float32 lanes, the lanes
    added pairwise; None where the loop cannot be built or the array is not such."""
    if (type(x) is not np.ndarray or x.ndim != 2 or x.dtype != np.float32 or not x.size or not x.flags.c_contiguous
            or x.shape[1] < ROW_SUMS_MIN_WIDTH):
        return None
    function = _function(_ROW_SUMS[squares])
    if function is None:
        return None
    out = np.empty(x.shape[0], np.float32)
    function((x, out), x.shape, None, _rows_threads(x))
    return out


# whole_reduction's kinds: their loops
_WHOLE_REDUCTIONS = {"sum": "sum_float32", "sum_squares": "sum_squares_float32", "nansum": "nansum_float32",
                     "max": "max_float32", "min": "min_float32", "prod": "prod_float32"}


def whole_reduction_addresses(kind):
    """The addresses (float32's, float64's: None) of ``whole_reduction``'s loop of ``kind``: what the
    reductions' compiled functions call from C (``ops._compiled_functions``)."""
    return loop_addresses({np.dtype(np.float32): _WHOLE_REDUCTIONS[kind]})


def whole_reduction(kind, x):
    """A reduction of all of a dense float32 array's elements as a 0-d float32 array: ``sum``,
    ``sum_squares`` and ``nansum`` (NaN as 0) added in float32 lanes of 16 elements each, the
    lanes' sums in float64 (NumPy's pairwise sum in float32 runs on one thread at a third of
    the loop's speed), ``max`` and ``min`` (NaN if any element is), ``prod`` multiplied in
    float32 lanes; None where the loop does not apply or cannot be built."""
    if not _dense_alike(x, least=WHOLE_REDUCTION_MIN_ELEMENTS[kind]):
        return None
    function = _function(_WHOLE_REDUCTIONS[kind])
    if function is None:
        return None
    result = np.empty((), np.float32)
    function((x, result), (x.size,), None, thread_count())
    return result


def _around(shape, axis):
    """The element counts before and after ``axis`` in ``shape``: the loops' (outer, inner)."""
    return math.prod(shape[:axis]), math.prod(shape[axis + 1:])


def cumsum_float32(x, axis, reverse=False):
    """The running sums of a row-major float32 array along ``axis`` (from its end where
    ``reverse``), added in float64, as a new row-major array; None where the loop does not
    apply or cannot be built."""
    return _running("cumsum_float32", x, axis, reverse)


def cumprod_float32(x, axis):
    """The running products of a row-major float32 array along ``axis``, multiplied in
    float64, as a new row-major array; None where the loop does not apply or cannot be built."""
    return _running("cumprod_float32", x, axis, False)


def running_extreme_float32(x, axis, is_max):
    """``(values, indices)``: the running maximum (minimum) of a row-major float32 array along
    ``axis`` and the last index where each was reached (torch's cummax and cummin), as new
    row-major arrays; None where the loop does not apply or cannot be built."""
    if (type(x) is not np.ndarray or x.dtype != np.float32 or x.size < SCAN_MIN_ELEMENTS
            or not x.flags.c_contiguous):
        return None
    function = _function("cummax_float32" if is_max else "cummin_float32")
    if function is None:
        return None
    outer, inner = _around(x.shape, axis)
    values, indices = np.empty_like(x), np.empty(x.shape, np.int64)
    _call(function, (x, values, indices), (outer, x.shape[axis], inner), ())
    return values, indices


def _running(name, x, axis, reverse):
    if (type(x) is not np.ndarray or x.dtype != np.float32 or x.size < SCAN_MIN_ELEMENTS
            or not x.flags.c_contiguous):
        return None
    function = _function(name)
    if function is None:
        return None
    outer, inner = _around(x.shape, axis)
    out = np.empty_like(x)
    _call(function, (x, out), (outer, x.shape[axis], inner, int(reverse)), ())
    return out


def _copied_elements(x):
    """Whether ``x`` is a row-major NumPy array of numbers of 4 or 8 bytes, which the gather
    and scatter loops move as they are."""
    return (type(x) is np.ndarray and x.dtype.kind in "fiu" and x.dtype.itemsize in (4, 8)
            and x.flags.c_contiguous)


_INT64 = np.dtype(np.int64)


def _picks_sizes(shape, index, axis):
    """The sizes a gather or scatter loop takes, ``(outer, nx, ni, inner)``: the elements of
    ``shape`` before ``axis``, its size along it, ``index``'s size along it and the elements
    after it; None where ``index`` is not a row-major int64 array of ``shape`` but along
    ``axis``, with dimensions and elements."""
    if (type(index) is not np.ndarray or index.dtype != _INT64 or not index.size
            or not index.flags.c_contiguous):
        return None
    picks = index.shape
    if len(picks) == 2 == len(shape):   # (the common case, without slices of the shapes)
        if axis:
            return (shape[0], shape[1], picks[1], 1) if shape[0] == picks[0] else None
        return (1, shape[0], picks[0], shape[1]) if shape[1] == picks[1] else None
    if (not picks or len(shape) != len(picks) or shape[:axis] != picks[:axis]
            or shape[axis + 1:] != picks[axis + 1:]):
        return None
    return math.prod(shape[:axis]), shape[axis], picks[axis], math.prod(shape[axis + 1:])


_GATHERS = {4: "gather_4", 8: "gather_8"}   # gather's loop by the elements' size


def _picks_threads(index):
    """The thread count of a gather or scatter loop over ``index``."""
    return 1 if index.size <= PICKS_SERIAL_MAX_ELEMENTS else thread_count()


def gather(x, index, axis):
    """``take_along_axis(x, index, axis)`` for a row-major ``x`` of numbers of 4 or 8 bytes and
    a row-major int64 ``index`` of ``x``'s shape but along ``axis``, as a new array; None where
    the loop does not apply or cannot be built (``ValueError`` where an index is outside ``x``
    along ``axis``, for the caller to say which)."""
    sizes = _picks_sizes(x.shape, index, axis) if _copied_elements(x) else None
    if sizes is None:
        return None
    function = _function(_GATHERS[x.dtype.itemsize])
    if function is None:
        return None
    out = np.empty(index.shape, x.dtype)
    status = np.empty(1, np.int32)   # (the loop writes it)
    function((x, index, out, status), sizes, None, _picks_threads(index))
    if status[0]:
        raise ValueError("an index is out of bounds")
    return out


def _rows_along(x, index, rows):
    """Whether a row-major float32 ``x`` and a 1-d int64 ``index`` take ``index_select_float32``
    or ``index_add_float32``: ``rows`` (the elements of the slices moved) of
    ``ELEMENTWISE_MIN_ELEMENTS`` or more."""
    return (type(x) is np.ndarray and x.dtype == np.float32 and x.flags.c_contiguous
            and x.ndim > 0 and type(index) is np.ndarray and index.dtype == np.int64
            and index.ndim == 1 and index.flags.c_contiguous and rows >= ELEMENTWISE_MIN_ELEMENTS)


def index_select_applies(x, index, axis):
    """Whether ``index_select_float32`` takes the case: along the last axis (picks) from
    ``INDEX_PICKS_MIN_ELEMENTS``; along another (rows copied) only on two threads or more, from
    ``INDEX_ROWS_MIN_ELEMENTS`` (one thread copies rows no faster than NumPy's ``take``)."""
    moved = x.size // max(x.shape[axis], 1) * index.size
    if axis == x.ndim - 1:
        return moved >= INDEX_PICKS_MIN_ELEMENTS and _rows_along(x, index, moved)
    return moved >= INDEX_ROWS_MIN_ELEMENTS and thread_count() > 1 and _rows_along(x, index, moved)


def index_select_float32(x, index, axis):
    """``take(x, index, axis)`` for a row-major float32 ``x`` and a 1-d int64 ``index`` within
    ``x``'s size along ``axis`` (the caller checks), as a new row-major array; None where the
    loop does not apply or cannot be built."""
    if not index_select_applies(x, index, axis):
        return None
    shape = x.shape[:axis] + (index.size,) + x.shape[axis + 1:]
    function = _function("index_select_float32")
    if function is None:
        return None
    outer, inner = _around(x.shape, axis)
    out = np.empty(shape, np.float32)
    _call(function, (x, index, out), (outer, x.shape[axis], index.size, inner), ())
    return out


def index_add_applies(out, index, values, axis):
    """Whether ``index_add_float32`` takes the case."""
    return (_rows_along(out, index, values.size) and type(values) is np.ndarray
            and values.dtype == np.float32 and values.flags.c_contiguous
            and values.shape == out.shape[:axis] + (index.size,) + out.shape[axis + 1:])


def index_add_float32(out, index, values, axis):
    """``out`` with the slices of ``values`` along ``axis`` added at ``index`` in place, in
    ``add.at``'s order, for row-major float32 ``out`` and ``values`` (``out``'s shape but
    ``index.size`` along ``axis``) and a 1-d int64 ``index`` within range; None (nothing
    written) where the loop does not apply or cannot be built."""
    return index_reduce_float32(out, index, values, axis, "add")


# index_reduce_float32's reductions: NumPy's ufunc -> the loop
INDEX_REDUCTIONS = {"add": "index_add_float32", "multiply": "index_multiply_float32",
                    "maximum": "index_maximum_float32", "minimum": "index_minimum_float32"}


def index_reduce_float32(out, index, values, axis, ufunc):
    """``getattr(np, ufunc).at`` of ``out``'s slices along ``axis`` at ``index`` and the slices
    of ``values``, in place and in its order (``ufunc`` a key of ``INDEX_REDUCTIONS``), for the
    arrays ``index_add_float32`` takes; None (nothing written) where the loop does not apply or
    cannot be built."""
    if not index_add_applies(out, index, values, axis):
        return None
    function = _function(INDEX_REDUCTIONS[ufunc])
    if function is None:
        return None
    outer, inner = _around(out.shape, axis)
    _call(function, (values, index, out), (outer, out.shape[axis], index.size, inner), ())
    return out


def scatter_add_applies(grad, index, axis, shape):
    """Whether ``scatter_add_float32`` takes the case: a row-major float32 ``grad`` and a
    row-major int64 ``index``, both of ``shape`` but along ``axis``."""
    return (type(grad) is np.ndarray and grad.dtype == np.float32 and grad.flags.c_contiguous
            and grad.shape == index.shape and _picks_sizes(shape, index, axis) is not None)


def scatter_add_float32(grad, index, axis, shape):
    """Gather's gradient: zeros of ``shape`` with the float32 ``grad`` added at ``index`` along
    ``axis`` (``grad`` and ``index`` row-major, of ``shape`` but along ``axis``), as a new
    array; None where the loop does not apply, cannot be built or meets an index out of
    bounds."""
    if not scatter_add_applies(grad, index, axis, shape):
        return None
    out = np.zeros(shape, np.float32)
    return out if scatter_add_into(out, index, grad, axis) else None


# scatter_add_into's loop by dtype
_SCATTER_ADDS = {np.dtype(np.float32): "scatter_add_float32", np.dtype(np.float64): "scatter_add_float64",
                 np.dtype(np.int64): "scatter_add_int64", np.dtype(np.int32): "scatter_add_int32"}


def scatter_add_into(out, index, src, axis):
    """``out[index along axis] += src`` in place (repeated positions adding up in index order,
    as NumPy's ``add.at``; integers wrapping as NumPy's), for a row-major float32, float64,
    int64 or int32 ``out``, a row-major int64 ``index`` of ``out``'s shape but along ``axis``
    and a row-major ``src`` of ``index``'s shape and ``out``'s dtype: True once done; None where
    the loop does not apply or cannot be built (``out`` untouched), False where it met an index
    out of bounds (``out`` then partly written, for the caller to drop)."""
    name = _SCATTER_ADDS.get(getattr(out, "dtype", None))
    if (name is None or type(out) is not np.ndarray or not out.flags.c_contiguous
            or type(src) is not np.ndarray or src.dtype != out.dtype or not src.flags.c_contiguous
            or src.shape != index.shape):
        return None
    return _scatter(name, out, index, src, axis, 0.0)


def scatter(out, index, src, axis, value=0.0):
    """``out[index along axis] = src`` (or ``value`` where ``src`` is None) in place, for a
    row-major ``out`` (float32, or with a ``src``, any numbers of 4 or 8 bytes), a row-major
    int64 ``index`` of ``out``'s shape but along ``axis`` and a row-major ``src`` of ``index``'s
    shape and ``out``'s dtype: True once done; None where the loop does not apply or cannot be
    built (``out`` untouched), False where it met an index out of bounds (``out`` then partly
    written, for the caller to drop)."""
    if not _copied_elements(out):
        return None
    if src is None:
        return _scatter("scatter_float32", out, index, src, axis, value) if out.dtype == np.float32 else None
    if type(src) is not np.ndarray or src.dtype != out.dtype or not src.flags.c_contiguous or src.shape != index.shape:
        return None
    name = "scatter_float32" if out.dtype == np.float32 else f"scatter_{out.dtype.itemsize}"
    return _scatter(name, out, index, src, axis, value)


def _scatter(name, out, index, src, axis, value):
    """Run the scatter loop ``name`` into ``out``: whether every index was in bounds (None
    where the loop does not take ``index`` or cannot be built)."""
    sizes = _picks_sizes(out.shape, index, axis)
    function = None if sizes is None else _function(name)
    if function is None:
        return None
    status = np.empty(1, np.int32)   # (the loop writes it)
    function((src, index, out, status), sizes, (float(value),), _picks_threads(index))
    return not status[0]


def reversed_rows_applies(x, dims):
    """Whether ``reversed_rows_copy`` takes ``x`` flipped along ``dims``: a NumPy array of at
    least ``REVERSED_ROWS_MIN_ELEMENTS`` items of 1, 2, 4 or 8 bytes, adjacent along its last
    axis, which is among ``dims`` (NumPy's copy is as fast for the others)."""
    return (type(x) is np.ndarray and x.size >= REVERSED_ROWS_MIN_ELEMENTS and x.ndim <= 64
            and x.itemsize in (1, 2, 4, 8) and x.strides[-1] == x.itemsize and x.ndim - 1 in dims)


def reversed_rows_addresses():
    """The addresses of ``reversed_rows_copy``'s loops of 4- and 8-byte elements (each None where it cannot be
    built): what flip's compiled function calls from C (``ops._compiled_layouts``)."""
    return loop_addresses({np.dtype(np.float32): "strided_rows_4", np.dtype(np.float64): "strided_rows_8"})


def reversed_rows_copy(x, dims):
    """A row-major copy of ``x`` reversed along ``dims`` (see ``reversed_rows_applies``), made
    row by row on the loop's threads; None where the loop cannot be built."""
    function = _function(f"strided_rows_{x.itemsize}")
    if function is None:
        return None
    strides = list(x.strides)
    first = address(as_bits(x))
    for d in dims:   # the flipped view: its first element, its strides
        first += (x.shape[d] - 1) * strides[d]
        strides[d] = -strides[d]
    out = np.empty(x.shape, x.dtype)
    function((first, out), (x.ndim, *x.shape, *strides), None, thread_count())
    return out


def triangle(upper, x, diagonal, out=None):
    """``triu`` (where ``upper``) or ``tril`` of a C-contiguous NumPy array ``x`` of two dims or more along its
    last two, into ``out`` (None: a new array; or ``x`` itself), the dropped elements' bytes zeroed, rows on the
    loop's threads; None where the loop does not take ``x`` or cannot be built."""
    if (type(x) is not np.ndarray or x.ndim < 2 or not x.flags.c_contiguous or not x.size
            or (out is not None and out is not x)):
        return None
    function = _function("triangle")
    if function is None:
        return None
    rows, cols = x.shape[-2:]
    result = np.empty_like(x) if out is None else out
    diagonal = min(max(diagonal, -rows - 1), cols + 1)
    function((x, result), (x.size // (rows * cols), rows, cols, x.itemsize, diagonal, int(upper)), None,
             thread_count() if x.size >= ELEMENTWISE_MIN_ELEMENTS else 1)
    return result


_GETRF_PANELS = {np.dtype(np.float32): "getrf_panel_float32", np.dtype(np.float64): "getrf_panel_float64"}


def getrf_panel(a, pivots, info, first, last):
    """LU with partial pivoting of columns ``first``..``last - 1`` of ``a``, a C-contiguous
    (count, m, n) float32 or float64 array, in place, as ``ops/lu.py``'s ``getrf`` factors a
    panel (bit for bit): whole rows swap, ``pivots`` ((count, min(m, n)) int32) gets the panel's
    1-based pivots, ``info`` ((count,) int32) the first zero pivot's column + 1 where it is still
    0. False where the loop cannot be built."""
    function = _function(_GETRF_PANELS[a.dtype])
    if function is None:
        return False
    count, m, n = a.shape
    _call(function, (a, pivots, info), (count, m, n, first, last), ())
    return True


def _with_gemm(names, dtype):
    """(the loop ``names[dtype]``, the address of NumPy's CBLAS gemm for ``dtype``, whether its
    sizes are int64) for the recursive factorizations and solves, which call that gemm; None
    where the loop or the gemm is not found."""
    gemm = cblas.gemm_address(dtype)
    function = _function(names[dtype]) if gemm is not None else None
    return None if function is None else (function, *gemm)


_RECURSIVE_GETRFS = {np.dtype(np.float32): "getrf_recursive_float32",
                     np.dtype(np.float64): "getrf_recursive_float64"}


def recursive_getrf_addresses():
    """The addresses of the recursive LU loops (``getrf_recursive``'s, ``loop_addresses``): what lu_factor's
    compiled function calls (``ops._compiled_factorizations``), with the gemms of ``recursive_gemms``."""
    return loop_addresses(_RECURSIVE_GETRFS, calls_gemm=True)


def recursive_gemms():
    """(float32's gemm address, float64's (each 0 where it was not found), whether their sizes are
    int64): the CBLAS gemms the recursive factorizations and solves call."""
    found = [cblas.gemm_address(dtype) for dtype in (np.dtype(np.float32), np.dtype(np.float64))]
    return (*(0 if f is None else f[0] for f in found), int(any(f is not None and f[1] for f in found)))


def getrf_recursive(a):
    """LAPACK's getrf on each matrix of ``a``, a C-contiguous (count, m, n) float32 or float64
    NumPy array, in place, by recursion on the columns with the matrix products on NumPy's
    CBLAS gemm: (pivots (count, min(m, n)) 1-based int32, info (count,) int32: 1 + the index of
    the first exactly zero pivot, 0 when there is none), or None where the loop or the gemm is
    not found."""
    found = _with_gemm(_RECURSIVE_GETRFS, a.dtype)
    if found is None:
        return None
    function, gemm, ilp64 = found
    count, m, n = a.shape
    pivots = np.empty((count, min(m, n)), dtype=np.int32)
    info = np.zeros(count, dtype=np.int32)
    _call(function, (a, pivots, info, gemm), (count, m, n, int(ilp64)), ())
    return pivots, info


_RECURSIVE_TRSMS = {np.dtype(np.float32): "trsm_recursive_float32",
                    np.dtype(np.float64): "trsm_recursive_float64"}


def recursive_trsm_addresses():
    """The addresses of the recursive triangular solves (``trsm_recursive``'s, ``loop_addresses``): what the
    triangular solves' compiled functions call, with the gemms of ``recursive_gemms``."""
    return loop_addresses(_RECURSIVE_TRSMS, calls_gemm=True)


def trsm_recursive(a, b, upper, transpose, unitriangular):
    """``b = op(T)^-1 b`` in place, as ``cblas.trsm``: T the upper or lower triangle of each
    matrix of ``a`` ((count, n, n), or (1, n, n) for all of ``b``'s; each matrix C- or
    F-contiguous, float32 or float64), op(T) = T or T^T, a unit diagonal where
    ``unitriangular``; ``b`` a C-contiguous (count, n, k) array of ``a``'s dtype. By recursion
    on the rows with the products on NumPy's CBLAS gemm. False (nothing done) where the loop or
    the gemm is not found, or ``a`` is laid out otherwise."""
    found = _with_gemm(_RECURSIVE_TRSMS, b.dtype)
    if found is None:
        return False
    function, gemm, ilp64 = found
    count, n, k = b.shape
    item = a.itemsize
    if (a.dtype != b.dtype or a.shape[0] not in (1, count) or a.shape[1:] != (n, n)
            or not (b.flags.c_contiguous and b.flags.writeable)):
        return False
    if not b.size:
        return True
    if a.strides[2] != item or a.strides[1] != n * item:   # a column-major matrix: its transpose
        if a.strides[1] != item or a.strides[2] != n * item:
            return False
        a, upper, transpose = a.transpose(0, 2, 1), not upper, not transpose
    step = a.strides[0] // item if a.shape[0] > 1 else 0
    lower = upper == transpose
    _call(function, (a, b, gemm), (count, n, k, step, int(lower), int(transpose), int(unitriangular),
                                   int(ilp64)), ())
    return True


_RECURSIVE_GETRSS = {np.dtype(np.float32): "getrs_recursive_float32",
                     np.dtype(np.float64): "getrs_recursive_float64"}


def getrs_recursive(lu, pivots, b, transpose):
    """X with A X = B (A^T X = B where ``transpose``) for each system, A given by getrf's factors:
    ``lu`` ((count, n, n) or (1, n, n) for all, C-contiguous, float32 or float64), ``pivots``
    ((count or 1, n) int32, each in 1..n: the caller checks), ``b`` ((count, n, k) C-contiguous, of
    ``lu``'s dtype); ``lu_solve_arrays``' steps (the rows in P^T's order, the two substitutions by
    ``trsm_recursive``'s loop) in one call, so the same bits. None where the loop or the gemm is
    not found or the arrays are not such."""
    if (lu.dtype != b.dtype or not (lu.flags.c_contiguous and b.flags.c_contiguous) or pivots.dtype != np.int32
            or not pivots.flags.c_contiguous):
        return None
    found = _with_gemm(_RECURSIVE_GETRSS, b.dtype)
    if found is None:
        return None
    function, gemm, ilp64 = found
    count, n, k = b.shape
    if lu.shape[1:] != (n, n) or lu.shape[0] not in (1, count) or pivots.shape != (lu.shape[0], n):
        return None
    x = np.empty(b.shape, b.dtype)
    if not x.size:
        return x
    order = np.empty((count, n), np.int64)
    source = np.array(b) if transpose else b   # (the transposed solve works on a copy of B)
    step = n * n if lu.shape[0] > 1 else 0
    _call(function, (lu, pivots, source, x, order, gemm), (count, n, k, step, int(transpose), int(ilp64)), ())
    return x


_RECURSIVE_POTRFS = {np.dtype(np.float32): "potrf_recursive_float32",
                     np.dtype(np.float64): "potrf_recursive_float64"}


def recursive_potrf_addresses():
    """The addresses of the recursive Cholesky factorizations (``potrf_recursive``'s, ``loop_addresses``):
    what the Cholesky factorization's compiled functions call, with the gemms of ``recursive_gemms``."""
    return loop_addresses(_RECURSIVE_POTRFS, calls_gemm=True)


def potrf_recursive(a):
    """LAPACK's potrf on each matrix of ``a``, a C-contiguous (count, n, n) float32 or float64
    NumPy array, in place: each matrix replaced by its lower Cholesky factor (zeros above the
    diagonal; its own upper triangle is not read), by recursion on the rows with the products
    on NumPy's CBLAS gemm. Returns info ((count,) int32: 0, or the order of the first leading
    minor that is not positive-definite, where that matrix's factor is unfinished), or None
    where the loop or the gemm is not found."""
    found = _with_gemm(_RECURSIVE_POTRFS, a.dtype)
    if found is None:
        return None
    function, gemm, ilp64 = found
    count, n, _ = a.shape
    info = np.zeros(count, dtype=np.int32)
    _call(function, (a, info, gemm), (count, n, int(ilp64)), ())
    return info


_HISTOGRAM_BINS = {np.dtype(np.float32): "histogram_bins_float32",
                   np.dtype(np.float64): "histogram_bins_float64"}


def histogram_addresses():
    """The addresses of the histogram loops and of the linspace loops (``loop_addresses``, each pair
    float32's and float64's): what histogram's compiled function calls."""
    return loop_addresses(_HISTOGRAM_BINS), loop_addresses(_LINSPACES)


def histogram_bins(points, edges, local):
    """Each of the (count, dims) float32/float64 ``points``' bin as torch's histogram kernel
    finds it, as an index into the row-major histogram ((count,) int64, -1 outside), the
    ``edges`` of each dimension 1-D arrays of the points' dtype (equal-width bins where
    ``local``, else searched); None where the loop cannot be built or the arguments are not
    such."""
    name = _HISTOGRAM_BINS.get(points.dtype) if type(points) is np.ndarray and points.ndim == 2 else None
    if (name is None or not 0 < points.shape[1] <= 64 or len(edges) != points.shape[1]
            or any(type(e) is not np.ndarray or e.dtype != points.dtype or e.ndim != 1 or e.size < 2
                   for e in edges)):
        return None
    function = _function(name)
    if function is None:
        return None
    count, dims = points.shape
    flat = np.empty(count, np.int64)
    _call(function, (np.ascontiguousarray(points), np.concatenate(edges), flat),
          (count, dims, int(local), *[e.size for e in edges]), ())
    return flat


_LINSPACES = {np.dtype(np.float32): "linspace_float32", np.dtype(np.float64): "linspace_float64"}


def linspace(start, end, steps, dtype):
    """torch's linspace of ``steps`` (2 or more) float32 or float64 values from ``start`` to ``end``
    (numbers of the dtype) as ops/creation.py's ``_linspace_float`` computes them, in one loop; None
    where the loop cannot be built or the arguments are not such."""
    name = _LINSPACES.get(dtype)
    if name is None or steps < 2:
        return None
    function = _function(name)
    if function is None:
        return None
    out = np.empty(steps, dtype)
    _call(function, (out,), (steps,), (float(start), float(end)))
    return out


# ldexp of float32 from this many elements on its loop (one pass); below, NumPy's ldexp (the same bits)
# costs less than the loop's broadcasting (benchmarks/ops.py, ldexp_negative at tiny and medium)
LDEXP_LOOP_MIN_ELEMENTS = 1 << 11


def ldexp_float32(x, exponents):
    """torch's ldexp of a float32 NumPy array and integer exponents (broadcasting) in one loop; None where the
    loop cannot be built or the arrays are not such (ValueError where their shapes do not broadcast)."""
    if type(x) is not np.ndarray or x.dtype != np.float32 or type(exponents) is not np.ndarray:
        return None
    function = _function("ldexp_float32")
    if function is None:
        return None
    shape = np.broadcast_shapes(x.shape, exponents.shape)
    if not math.prod(shape):
        return np.empty(shape, np.float32)
    width = shape[-1] if shape else 1
    x = np.ascontiguousarray(np.broadcast_to(x, shape))
    row = exponents.ndim <= 1 or math.prod(exponents.shape[:-1]) == 1   # (one row, repeated over the rows)
    exponents = np.ascontiguousarray(exponents.reshape(-1) if row else np.broadcast_to(exponents, shape),
                                     dtype=np.int64)
    if row and exponents.size != width:   # (one exponent for every element)
        exponents = np.full(width, exponents[0], np.int64)
    out = np.empty(shape, np.float32)
    _call(function, (x, exponents, out), (out.size // width, width, 0 if row else width), ())
    return out


_KRONS = {np.dtype(np.float32): "kron_float32", np.dtype(np.float64): "kron_float64"}


def kron(a, b):
    """The Kronecker product of two row-major float32 or float64 NumPy matrices of one dtype, with elements,
    as a new row-major matrix; None where the loop does not apply or cannot be built."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != b.dtype or a.ndim != 2 or b.ndim != 2
            or not a.size or not b.size or not a.flags.c_contiguous or not b.flags.c_contiguous):
        return None
    name = _KRONS.get(a.dtype)
    function = _function(name) if name is not None else None
    if function is None:
        return None
    (m, n), (p, q) = a.shape, b.shape
    out = np.empty((m * p, n * q), a.dtype)
    _call(function, (a, b, out), (m, n, p, q), ())
    return out


_RENORMS = {np.dtype(np.float32): "renorm_float32", np.dtype(np.float64): "renorm_float64"}


def renorm(x, p, dim, maxnorm, into=False):
    """torch's renorm of a float32/float64 NumPy array with elements: each slice along ``dim`` scaled to a
    ``p``-norm (p > 0) of at most ``maxnorm``, in one loop (``into``: of a row-major ``x``, written into it:
    each slice's norm is summed before it is written); None where the loop cannot be built or the array is
    not such."""
    name = _RENORMS.get(x.dtype) if type(x) is np.ndarray and x.size else None
    function = _function(name) if name is not None and (x.flags.c_contiguous or not into) else None
    if function is None:
        return None
    x = np.ascontiguousarray(x)
    out = x if into else np.empty(x.shape, x.dtype)
    shape = x.shape
    function((x, out, np.empty(shape[dim])), (math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])),
             (float(p), float(maxnorm)), _rows_threads(x))
    return out


_SELECTS = {np.dtype(np.float32): "select_float32", np.dtype(np.float64): "select_float64",
            np.dtype(np.int64): "select_int64"}


# the selection's steps before it takes a heap select on what is left (a median of three that keeps
# choosing badly)
SELECT_STEPS = 64


def lower_median(x, ignore_nan):
    """The lower median of a float32, float64 or int64 NumPy array's elements (with elements) as a 0-d
    array: the element at position (n - 1) // 2 of them sorted in ascending order, or NaN where one is
    (``ignore_nan``: of the elements that are not NaN, NaN where all are); None where the loop cannot be
    built or the array is not such."""
    name = _SELECTS.get(x.dtype) if type(x) is np.ndarray and x.size else None
    function = _function(name) if name is not None else None
    if function is None:
        return None
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty((), x.dtype)
    function((flat, np.empty(2 * flat.size, flat.dtype), out), (flat.size, -2 if ignore_nan else -1, SELECT_STEPS),
             None, 1)
    return out


def _runs_loop(dtype):
    """The name of ``runs``' loop for ``dtype``: float32's and float64's compare as floats, integers and bools
    by their bits; None for the others."""
    if dtype == np.float32 or dtype == np.float64:
        return f"runs_float{dtype.itemsize * 8}"
    return f"runs_{dtype.itemsize}" if dtype.kind in "biu" else None


def runs(x, return_index, return_counts):
    """The runs of equal consecutive elements of a 1-d row-major float32, float64, integer or bool NumPy
    array with elements: ``(values, index, counts)``, each run's first element, each element's run (int64;
    None unless ``return_index``) and each run's length (int64; None unless ``return_counts``), NaN its own
    run; None where the loop cannot be built or the array is not such."""
    name = (_runs_loop(x.dtype) if type(x) is np.ndarray and x.ndim == 1 and x.size and x.flags.c_contiguous
            else None)
    function = _function(name) if name is not None else None
    if function is None:
        return None
    n = x.size
    values, firsts, count = np.empty(n, x.dtype), np.empty(n, np.int64), np.empty(1, np.int64)
    index = np.empty(n, np.int64) if return_index else None
    function((x, values, index, firsts, count), (n,), None, 1)
    k = int(count[0])
    counts = None
    if return_counts:
        counts = np.empty(k, np.int64)
        np.subtract(firsts[1:k], firsts[:k - 1], out=counts[:-1])
        counts[-1] = n - firsts[k - 1]
    return values[:k].copy(), index, counts


def put_elements(out, index, values):
    """``out.reshape(-1)[index] = values`` for a C-contiguous writeable ``out`` with elements, a C-contiguous
    int64 ``index`` and C-contiguous ``values`` of out's dtype and index's size (NumPy arrays), each index
    checked first: the position in ``index`` of the first one outside [-out.size, out.size) (nothing
    written), -1 once written, or None where the loop cannot be built or the arrays are not such."""
    if (type(out) is not np.ndarray or type(index) is not np.ndarray or type(values) is not np.ndarray
            or not out.size or not out.flags.c_contiguous or not out.flags.writeable or index.dtype != np.int64
            or not index.flags.c_contiguous or values.dtype != out.dtype or not values.flags.c_contiguous
            or values.size != index.size or out.dtype.hasobject):
        return None
    function = _function("put_elements")
    if function is None:
        return None
    status = np.empty(1, np.int64)
    _call(function, (out, index, values, status), (out.size, index.size, out.itemsize), ())
    return int(status[0])


def row_order(pivots, m):
    """The rows of P^T A as indices into A's rows ((count, m) int64) from LAPACK's 1-based
    sequential swaps ``pivots`` ((count, k) int32, each in 1..m: the caller checks), or None
    where the loop cannot be built."""
    function = _function("row_order_int32")
    if function is None:
        return None
    count, k = pivots.shape
    order = np.empty((count, m), np.int64)
    _call(function, (np.ascontiguousarray(pivots), order), (count, k, m), ())
    return order


_LU_UNPACKS = {np.dtype(np.float32): "lu_unpack_float32", np.dtype(np.float64): "lu_unpack_float64"}


def lu_unpack_addresses():
    """The addresses of the unpacking loops (``lu_unpack``'s, ``loop_addresses``): what linalg.lu's and
    lu_unpack's compiled functions call."""
    return loop_addresses(_LU_UNPACKS)


def lu_unpack(lu, pivots, data=True, permutation=True):
    """lu_unpack's (P, L, U) arrays from getrf's ``lu`` ((..., m, n) row-major float32/float64)
    and ``pivots`` ((..., min(m, n)) int32, each in 1..m: the caller checks), P None without
    ``permutation``, L and U None without ``data``; None where the arrays are not such or the
    loop cannot be built."""
    if (type(lu) is not np.ndarray or lu.dtype not in _LU_UNPACKS or lu.ndim < 2 or not lu.size
            or not lu.flags.c_contiguous or type(pivots) is not np.ndarray or pivots.dtype != np.int32):
        return None
    *batch, m, n = lu.shape
    k = min(m, n)
    if pivots.shape != (*batch, k):
        return None
    function = _function(_LU_UNPACKS[lu.dtype])
    if function is None:
        return None
    batch = tuple(batch)
    P = np.empty(batch + (m, m), lu.dtype) if permutation else None
    order = np.empty(batch + (m,), np.int64) if permutation else None
    L = np.empty(batch + (m, k), lu.dtype) if data else None
    U = np.empty(batch + (k, n), lu.dtype) if data else None
    _call(function, (lu, np.ascontiguousarray(pivots), P, L, U, order), (math.prod(batch), m, n), ())
    return P, L, U


_SMALL_QRS = {np.dtype(np.float32): "small_qr_float32", np.dtype(np.float64): "small_qr_float64"}


def small_qr_addresses():
    """The addresses of the QR driver (``small_qr``'s, ``loop_addresses``): what QR's compiled functions
    call, with LAPACK's routines (``lapack.qr_routines``)."""
    return loop_addresses(_SMALL_QRS)


def small_qr(geqrf, orgqr, a, rows, width, ilp64):
    """LAPACK's geqrf and orgqr (their addresses; orgqr 0 for R alone) on each matrix of ``a`` ((count,
    m, n) C-contiguous float32/float64 with elements), as ``lapack.qr`` calls them but in one C call:
    (Q, R) row-major, R of ``rows`` rows, Q of ``width`` columns (None without orgqr); MemoryError where
    memory ran out; None where the loop cannot be built."""
    function = _function(_SMALL_QRS[a.dtype])
    if function is None:
        return None
    count, m, n = a.shape
    r = np.empty((count, rows, n), a.dtype)
    q = np.empty((count, m, width), a.dtype) if orgqr else None
    status = np.empty(1, np.int64)
    _call(function, (a, r, q, geqrf, orgqr or None, status), (count, m, n, rows, width, int(ilp64)), ())
    if status[0]:
        raise MemoryError("out of memory for LAPACK's workspace")
    return q, r


_SMALL_ORGQRS = {np.dtype(np.float32): "small_orgqr_float32", np.dtype(np.float64): "small_orgqr_float64"}


def small_orgqr(orgqr, a, tau, ilp64):
    """LAPACK's orgqr (its address) on each matrix of ``a`` ((count, m, n) C-contiguous float32/float64
    with elements) with the scales ``tau`` ((count, k) C-contiguous, a's dtype), as ``lapack.orgqr`` calls
    it but in one C call: Q's first n columns row-major; MemoryError where memory ran out; None where the
    loop cannot be built."""
    function = _function(_SMALL_ORGQRS[a.dtype])
    if function is None:
        return None
    count, m, n = a.shape
    q = np.empty((count, m, n), a.dtype)
    status = np.empty(1, np.int64)
    _call(function, (a, tau, q, orgqr, status), (count, m, n, tau.shape[-1], int(ilp64)), ())
    if status[0]:
        raise MemoryError("out of memory for LAPACK's workspace")
    return q


_SMALL_GESDDS = {np.dtype(np.float32): "small_gesdd_float32", np.dtype(np.float64): "small_gesdd_float64"}
_SMALL_SYEVDS = {np.dtype(np.float32): "small_syevd_float32", np.dtype(np.float64): "small_syevd_float64"}
_SMALL_GEEVS = {np.dtype(np.float32): "small_geev_float32", np.dtype(np.float64): "small_geev_float64"}
_SVD_JOBS = {"N": 0, "S": 1, "A": 2}


def lapack_driver_addresses(routine):
    """The addresses of the SVD, eigh, eig or orgqr driver (``routine`` "gesdd", "syevd", "geev" or "orgqr";
    ``loop_addresses``): what their compiled functions call, with LAPACK's routines (``lapack.driver_routines``)."""
    return loop_addresses({"gesdd": _SMALL_GESDDS, "syevd": _SMALL_SYEVDS, "geev": _SMALL_GEEVS,
                           "orgqr": _SMALL_ORGQRS}[routine])


def _driver_status(status, failure):
    if status[0]:
        raise MemoryError("out of memory for LAPACK's workspace")
    if status[1]:
        raise np.linalg.LinAlgError(failure)


def small_gesdd(gesdd, a, job, ilp64):
    """LAPACK's gesdd (its address) on each matrix of ``a`` ((count, m, n) C-contiguous float32/float64 with
    elements, every number finite) in one C call, ``job`` "N", "S" or "A": the singular values, or (U, S, Vh)
    row-major; numpy.linalg.LinAlgError where a matrix does not converge, MemoryError where memory ran out;
    None where the loop cannot be built."""
    function = _function(_SMALL_GESDDS[a.dtype])
    if function is None:
        return None
    count, m, n = a.shape
    k = min(m, n)
    values = np.empty((count, k), a.dtype)
    u = np.empty((count, m, m if job == "A" else k), a.dtype) if job != "N" else None
    vh = np.empty((count, n if job == "A" else k, n), a.dtype) if job != "N" else None
    status = np.empty(2, np.int64)
    _call(function, (a, values, u, vh, gesdd, status), (count, m, n, _SVD_JOBS[job], int(ilp64)), ())
    _driver_status(status, "SVD did not converge")
    return values if job == "N" else (u, values, vh)


def small_syevd(syevd, a, lower, vectors, ilp64):
    """LAPACK's syevd (its address) on each matrix of ``a`` ((count, n, n) C-contiguous float32/float64 with
    elements) in one C call, from its ``lower`` triangle or its upper one: the eigenvalues, or (eigenvalues,
    eigenvectors) with ``vectors``, the eigenvectors row-major; numpy.linalg.LinAlgError where a matrix does
    not converge, MemoryError where memory ran out; None where the loop cannot be built."""
    function = _function(_SMALL_SYEVDS[a.dtype])
    if function is None:
        return None
    count, n, _ = a.shape
    values = np.empty((count, n), a.dtype)
    v = np.empty((count, n, n), a.dtype) if vectors else None
    status = np.empty(2, np.int64)
    _call(function, (a, values, v, syevd, status), (count, n, int(vectors), int(lower), int(ilp64)), ())
    _driver_status(status, "Eigenvalues did not converge")
    return (values, v) if vectors else values


def small_geev(geev, a, vectors, ilp64):
    """LAPACK's geev (its address) on each matrix of ``a`` ((count, n, n) C-contiguous float32/float64 with
    elements, every number finite) in one C call: the eigenvalues (complex64/complex128), or (eigenvalues,
    eigenvectors) with ``vectors``, the eigenvectors row-major, each complex eigenvalue's turned so that its
    first component of largest magnitude is real and positive; numpy.linalg.LinAlgError where a matrix does
    not converge, MemoryError where memory ran out; None where the loop cannot be built."""
    function = _function(_SMALL_GEEVS[a.dtype])
    if function is None:
        return None
    count, n, _ = a.shape
    complex_type = np.result_type(a.dtype, np.complex64)
    values = np.empty((count, n), complex_type)
    v = np.empty((count, n, n), complex_type) if vectors else None
    status = np.empty(2, np.int64)
    _call(function, (a, values, v, geev, status), (count, n, int(vectors), int(ilp64)), ())
    _driver_status(status, "Eigenvalues did not converge")
    return (values, v) if vectors else values


_SMALL_POTRIS = {np.dtype(np.float32): "small_potri_float32", np.dtype(np.float64): "small_potri_float64"}


def small_potri(potri, a, upper, ilp64):
    """LAPACK's potri (its address) on each Cholesky factor of ``a`` ((count, n, n) C-contiguous float32/float64
    with elements; lower, or ``upper``), as ``lapack.potri`` calls it but in one C call: (the inverses of the
    matrices they factor, row-major and symmetric; potri's info for each, (count,) int64), or None where the
    loop cannot be built."""
    function = _function(_SMALL_POTRIS[a.dtype])
    if function is None:
        return None
    count, n, _ = a.shape
    out = np.empty(a.shape, a.dtype)
    info = np.zeros(count, np.int64)
    _call(function, (a, out, potri, info), (count, n, int(upper), int(ilp64)), ())
    return out, info


def as_bits(array):
    """``array`` viewed as unsigned integers of its item size (the buffer protocol, which
    ``address`` reads, refuses ml_dtypes' types)."""
    return array.view(f"u{array.itemsize}")


_PDIST_EUCLIDEAN = {np.dtype(np.float32): "pdist_euclidean_float32",
                    np.dtype(np.float64): "pdist_euclidean_float64"}
PDIST_DTYPES = tuple(_PDIST_EUCLIDEAN)
# From this many multiply-adds a pdist splits its rows over the threads (not measured)
PDIST_PARALLEL_MIN_MULTIPLY_ADDS = 1 << 16


def pdist_addresses():
    """The addresses of the Euclidean pdist loops (``loop_addresses``): what pdist's compiled function calls."""
    return loop_addresses(_PDIST_EUCLIDEAN)


def pdist_euclidean(x):
    """The Euclidean distances of each row of the float32 or float64 NumPy matrix ``x`` to the
    rows after it, in ``pdist``'s order, or None where the loop cannot be built."""
    function = _function(_PDIST_EUCLIDEAN[x.dtype])
    if function is None:
        return None
    n, m = x.shape
    out = np.empty(n * (n - 1) // 2, x.dtype)
    split = n * (n - 1) // 2 * m >= PDIST_PARALLEL_MIN_MULTIPLY_ADDS
    _call(function, (np.ascontiguousarray(x), out), (n, m, int(split)), ())
    return out


def pdist_euclidean_backward(grad, x, dist):
    """The gradient of ``pdist_euclidean(x)`` given ``grad`` (of ``dist``'s shape and dtype),
    or None where the loop cannot be built."""
    function = _function(_PDIST_EUCLIDEAN[x.dtype].replace("euclidean", "euclidean_backward"))
    if function is None:
        return None
    n, m = x.shape
    out = np.empty((n, m), x.dtype)
    split = n * (n - 1) * m >= PDIST_PARALLEL_MIN_MULTIPLY_ADDS
    arrays = (np.ascontiguousarray(grad, x.dtype), np.ascontiguousarray(dist), np.ascontiguousarray(x), out)
    _call(function, arrays, (n, m, int(split)), ())
    return out


_LDL_FACTOR = {np.dtype(np.float32): "ldl_factor_float32", np.dtype(np.float64): "ldl_factor_float64"}
LDL_DTYPES = tuple(_LDL_FACTOR)


def ldl_factor_addresses():
    """The addresses of the sytf2 loops (``ldl_factor``'s, ``loop_addresses``): what the LDL
    factorization's compiled functions call."""
    return loop_addresses(_LDL_FACTOR)


def ldl_factor(a, alpha):
    """LAPACK's sytf2 (lower) on the C-contiguous (count, n, n) float32 or float64 array ``a``,
    in place, as ``ops/ldl.py`` factors each matrix (bit for bit), with Bunch-Kaufman's
    ``alpha``: ``(pivots, info)`` ((count, n) and (count,) int32), or None where the loop cannot
    be built."""
    function = _function(_LDL_FACTOR[a.dtype])
    if function is None:
        return None
    count, n, _ = a.shape
    pivots = np.zeros((count, n), np.int32)
    info = np.zeros(count, np.int32)
    _call(function, (a, pivots, info), (count, n), (alpha,))
    return pivots, info
