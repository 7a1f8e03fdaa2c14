"""Special functions as compiled loops over float32 and float64 arrays, on the threads oneDNN's
kernels use, each the NumPy code's methods operation for operation in C:

- the Bessel and Airy functions of ``special_bessel`` (``FUNCTIONS``: the same expansions and
  series, ``special_chebyshev``'s tables), each element in float64, but for float32's ``i1e``
  (``IN_FLOAT32``: the expansions' first terms, in float32);
- the orthogonal polynomials of ``orthogonal_polynomials`` (``POLYNOMIALS``: each element's
  recurrence to its own degree), in float64;
- ``special``'s lgamma, digamma and trigamma (``IN_OWN_PRECISION``: its rational
  approximations and series), in the input's own precision as NumPy's path computes float32;
- ``special_normal``'s erfcx, ndtri and log_ndtr (``NORMAL``: on Cody's erf and erfc), each
  element in float64;
- ``special_gamma``'s regularized incomplete gamma functions (its ``INCOMPLETE_GAMMA``) and
  Hurwitz's zeta (``TWO_ARGUMENTS``), in float64, each element iterating until it has converged;
- ``gamma_gradients``' reparameterised gradients of gamma samples (``TWO_ARGUMENTS``) and of
  Beta marginals of Dirichlet samples (``THREE_ARGUMENTS``), in float64, each element taking
  its own branch (NumPy's path selects each branch's elements and computes them apart).

NumPy's path evaluates each series term and each Chebyshev step as a pass over the whole array
(some 50 to 150 passes for a function); here each element runs its own terms, the elements
vectorized side by side (both branches computed and one selected, as the NumPy code does; the
inner loops unrolled, which lets the compiler vectorize the loop over the elements).
The arithmetic is NumPy's path's, in the same order, without fused multiply-adds; ``exp``,
``log``, ``sin`` and ``cos`` are glibc's vector versions (libmvec), within an ulp or so of
NumPy's, so results rounded to float32 nearly always carry the same bits.
"""
import ctypes
import math

import numpy as np

from . import gamma_gradients, native_calls, openmp_kernels, special, special_gamma, special_normal
from . import special_chebyshev as tables

# the tables the C code reads, by their names in ``special_chebyshev``
_TABLES = ("J0_SMALL", "J1_SMALL", "Y0_SMALL", "Y1_SMALL", "P0", "Q0", "P1", "Q1", "I0E_SMALL", "I1E_SMALL",
           "I0E_LARGE", "I1E_LARGE", "K0E_LARGE", "K1E_LARGE", "AI_MIDDLE", "AI_POSITIVE", "AI_NEGATIVE_F",
           "AI_NEGATIVE_G")

# op name (``special_bessel``'s kernel) -> the C function of a double computing it
FUNCTIONS = {
    "bessel_j0": "bessel_j0", "bessel_j1": "bessel_j1", "bessel_y0": "bessel_y0",
    "bessel_y1": "bessel_y1", "i0": "bessel_i0", "i1": "bessel_i1", "i0e": "bessel_i0e",
    "i1e": "bessel_i1e", "modified_bessel_k0": "bessel_k0", "modified_bessel_k1": "bessel_k1",
    "scaled_modified_bessel_k0": "bessel_k0e", "scaled_modified_bessel_k1": "bessel_k1e",
    "airy_ai": "airy_ai", "spherical_bessel_j0": "spherical_j0",
}

# op name -> the C function of a float computing it for float32 arrays (special_bessel's float32 path)
IN_FLOAT32 = {"i1e": "bessel_i1e_float"}

# float32's i1e sums the first terms of its two expansions, the ones float32 resolves (as many as
# torch's float32 kernel sums)
I1E_FLOAT32_TERMS = {"I1E_SMALL": 17, "I1E_LARGE": 7}

_FUNCTIONS_SOURCE = r"""
#define EULER 0.57721566490153286061
#define PI 3.141592653589793
#define TWO_OVER_PI (2.0 / PI)
#define ROOT_HALF 0.70710678118654757
#define I_SERIES_TO 20.0
#define SERIES_TERMS 48
#define CHEBYSHEV(t, T) chebyshev((t), T, T##_N, T##_A, T##_B)

/* SIN: gcc turns sin(a) and cos(a) of one a into one sincos of complex type, which it cannot
   vectorize; sin(a + 0.0), of a positive a, is sin(a) and keeps them apart */

/* NumPy's maximum and minimum: a NaN x stays NaN (the constants are never NaN); | rather than
   ||, which gcc turns into branches that leave log() in one, where it is not vectorized */
static inline double most(double x, double c) { return ((x > c) | (x != x)) ? x : c; }
static inline double least(double x, double c) { return ((x < c) | (x != x)) ? x : c; }

/* |x|, or 1 at 0: x itself where it is positive, and where it is not a positive argument for a logarithm
   whose result the caller replaces (y_domain, k_domain), which keeps libmvec's log on its vector path (a lane
   of zero or below sends the whole vector to its scalar one, at twice the time). Arithmetic, not a select:
   gcc takes the log out of a select's operand and selects its result. */
static inline double log_argument(double x) { return fabs(x) + (double)(x == 0.0); }

/* Clenshaw's sum of the expansion c[0..n) over [a, b] at t */
static inline double chebyshev(double t, const double *c, int n, double a, double b) {
    const double s = (2.0 * t - (a + b)) / (b - a), two_s = 2.0 * s;
    double b1 = 0.0, b2 = 0.0;
    #pragma GCC unroll 64
    for (int k = n - 1; k >= 1; k--) {
        const double next = two_s * b1 - b2 + c[k];
        b2 = b1;
        b1 = next;
    }
    return s * b1 - b2 + c[0];
}

/* J0, J1, Y0, Y1: beyond 8, Hankel's form; p, q, cos chi, sin chi */
static inline void hankel(double ax, const double *pc, int pn, double pa, double pb,
                          const double *qc, int qn, double qa, double qb, int order,
                          double *p, double *q, double *c, double *s) {
    const double safe = most(ax, 8.0), w = (8.0 / safe) * (8.0 / safe);
    const double scale = sqrt(TWO_OVER_PI / safe);
    *p = chebyshev(w, pc, pn, pa, pb) * scale;
    *q = chebyshev(w, qc, qn, qa, qb) * (8.0 / safe) * scale;
    const double cs = cos(safe), sn = sin(safe + 0.0);   /* (see SIN) */
    if (order == 0) {
        *c = (cs + sn) * ROOT_HALF;
        *s = (sn - cs) * ROOT_HALF;
    } else {
        *c = (sn - cs) * ROOT_HALF;
        *s = -(sn + cs) * ROOT_HALF;
    }
}
#define HANKEL(ax, P, Q, order, p, q, c, s) \
    hankel((ax), P, P##_N, P##_A, P##_B, Q, Q##_N, Q##_A, Q##_B, (order), (p), (q), (c), (s))

static inline double bessel_j0(double x) {
    const double ax = fabs(x), m = least(ax, 8.0);
    const double small = CHEBYSHEV(m * m, J0_SMALL);
    double p, q, c, s;
    HANKEL(ax, P0, Q0, 0, &p, &q, &c, &s);
    const double out = ax <= 8.0 ? small : p * c - q * s;
    return isinf(x) ? NAN : out;
}

static inline double bessel_j1(double x) {
    const double ax = fabs(x), m = least(ax, 8.0);
    const double small = x * CHEBYSHEV(m * m, J1_SMALL);
    double p, q, c, s;
    HANKEL(ax, P1, Q1, 1, &p, &q, &c, &s);
    const double large = (x < 0 ? -1.0 : 1.0) * (p * c - q * s);
    return isinf(x) ? NAN : (ax <= 8.0 ? small : large);
}

/* Y's values off (0, inf): -inf at zero, NaN below zero and at inf */
static inline double y_domain(double x, double out) {
    out = x == 0 ? -INFINITY : out;
    return (x < 0 || isinf(x)) ? NAN : out;
}

static inline double bessel_y0(double x) {
    const double m = least(x, 8.0);
    const double small = CHEBYSHEV(m * m, Y0_SMALL)
        + TWO_OVER_PI * log(log_argument(m)) * CHEBYSHEV(m * m, J0_SMALL);
    double p, q, c, s;
    HANKEL(x, P0, Q0, 0, &p, &q, &c, &s);
    return y_domain(x, x <= 8.0 ? small : p * s + q * c);
}

static inline double bessel_y1(double x) {
    const double m = least(x, 8.0);
    const double j1 = m * CHEBYSHEV(m * m, J1_SMALL);
    const double small = m * CHEBYSHEV(m * m, Y1_SMALL) + TWO_OVER_PI * (log(log_argument(m)) * j1 - 1.0 / m);
    double p, q, c, s;
    HANKEL(x, P1, Q1, 1, &p, &q, &c, &s);
    return y_domain(x, x <= 8.0 ? small : p * s + q * c);
}

/* sum (x^2/4)^k / (k! (k + order)!) for |x| <= 20 */
static inline double i_series(double ax, int order) {
    const double m = least(ax, I_SERIES_TO), q = m * m / 4.0;
    double term = 1.0, total = 1.0;
    #pragma GCC unroll 64
    for (int k = 1; k < SERIES_TERMS; k++) {
        term = term * q / (double)(k * (k + order));
        total = total + term;
    }
    return total;
}

/* e^-x I_order(x) of x = |x|: on [0, 8] from the expansions of e^-x I0(x) and e^-x I1(x) / x,
   beyond from that of sqrt(x) e^-x I(x) in 8/x (0 at inf) */
static inline double i_abs_scaled(double ax, int order) {
    const double m = least(ax, 8.0), w = most(ax, 8.0);
    const double small = order == 0 ? CHEBYSHEV(m, I0E_SMALL) : m * CHEBYSHEV(m, I1E_SMALL);
    const double large = (order == 0 ? CHEBYSHEV(8.0 / w, I0E_LARGE) : CHEBYSHEV(8.0 / w, I1E_LARGE)) / sqrt(w);
    return ax <= 8.0 ? small : large;
}

/* e^-|x| I_order(x) */
static inline double i_scaled(double x, int order) {
    const double out = i_abs_scaled(fabs(x), order);
    return order == 0 ? out : (x < 0 ? -out : out);
}

static inline double bessel_i(double x, int order) {
    const double ax = fabs(x);
    double out = i_abs_scaled(ax, order) * exp(ax);
    if (order == 1) out = x < 0 ? -out : out;
    out = x == 0 ? (order ? 0.0 : 1.0) : out;
    return isinf(x) ? NAN : out;
}

static inline double bessel_i0(double x) { return bessel_i(x, 0); }
static inline double bessel_i1(double x) { return bessel_i(x, 1); }
static inline double bessel_i0e(double x) { return i_scaled(x, 0); }
static inline double bessel_i1e(double x) { return i_scaled(x, 1); }

/* the same as most, least and chebyshev in float32, on the expansion's first n terms */
static inline float most_float(float x, float c) { return ((x > c) | (x != x)) ? x : c; }
static inline float least_float(float x, float c) { return ((x < c) | (x != x)) ? x : c; }
static inline float chebyshev_float(float t, const double *c, int n, double a, double b) {
    const float s = (2.0f * t - (float)(a + b)) / (float)(b - a), two_s = 2.0f * s;
    float b1 = 0.0f, b2 = 0.0f;
    #pragma GCC unroll 64
    for (int k = n - 1; k >= 1; k--) {
        const float next = two_s * b1 - b2 + (float)c[k];
        b2 = b1;
        b1 = next;
    }
    return s * b1 - b2 + (float)c[0];
}

static inline float bessel_i1e_float(float x) {
    const float ax = fabsf(x), m = least_float(ax, 8.0f), w = most_float(ax, 8.0f);
    const float small = m * chebyshev_float(m, I1E_SMALL, I1E_SMALL_FLOAT32_TERMS, I1E_SMALL_A, I1E_SMALL_B);
    const float large = chebyshev_float(8.0f / w, I1E_LARGE, I1E_LARGE_FLOAT32_TERMS, I1E_LARGE_A, I1E_LARGE_B)
        / sqrtf(w);
    const float out = ax <= 8.0f ? small : large;
    return x < 0 ? -out : out;
}

/* K0 and K1 on 0 < x <= 2 from the series in log(x/2), I0 or I1 and harmonic numbers. x is not
   clamped to 2 first, as NumPy's path clamps it: the callers use these only up to 2, and with
   the clamp gcc computes log() under a condition, where it is not vectorized. */
static inline double k0_small(double x) {
    const double q = x * x / 4.0, log_half = log(log_argument(x) / 2.0);
    double term = 1.0, harmonic = 0.0, total = 0.0;
    #pragma GCC unroll 64
    for (int k = 1; k < 30; k++) {
        term = term * q / (double)(k * k);
        harmonic += 1.0 / k;
        total = total + term * harmonic;
    }
    return -(log_half + EULER) * i_series(x, 0) + total;
}

static inline double k1_small(double x) {
    const double q = x * x / 4.0, log_half = log(log_argument(x) / 2.0);
    double term = 1.0, harmonic = 0.0, total = (1.0 - 2.0 * EULER) * term;
    #pragma GCC unroll 64
    for (int k = 1; k < 30; k++) {
        term = term * q / (double)(k * (k + 1));
        harmonic += 1.0 / k;
        total = total + term * (2.0 * harmonic + 1.0 / (k + 1) - 2.0 * EULER);
    }
    return 1.0 / x + log_half * (x / 2.0) * i_series(x, 1) - x / 4.0 * total;
}

/* e^x K(x) for x >= 2 */
#define K_LARGE_SCALED(x, T) (CHEBYSHEV(2.0 / most((x), 2.0), T) / sqrt(most((x), 2.0)))

static inline double k_domain(double x, double out) {
    out = x == 0 ? INFINITY : out;
    out = x == INFINITY ? 0.0 : out;
    return x < 0 ? NAN : out;
}

static inline double bessel_k0(double x) {
    const double large = K_LARGE_SCALED(x, K0E_LARGE) * exp(-most(x, 2.0));
    return k_domain(x, x <= 2.0 ? k0_small(x) : large);
}

static inline double bessel_k1(double x) {
    const double large = K_LARGE_SCALED(x, K1E_LARGE) * exp(-most(x, 2.0));
    return k_domain(x, x <= 2.0 ? k1_small(x) : large);
}

static inline double bessel_k0e(double x) {
    const double small = k0_small(x) * exp(least(x, 2.0));
    return k_domain(x, x <= 2.0 ? small : K_LARGE_SCALED(x, K0E_LARGE));
}

static inline double bessel_k1e(double x) {
    const double small = k1_small(x) * exp(least(x, 2.0));
    return k_domain(x, x <= 2.0 ? small : K_LARGE_SCALED(x, K1E_LARGE));
}

#define ZETA2 (2.0 / 3.0 * 2.8284271247461903)
#define ZETA3 (2.0 / 3.0 * 5.196152422706632)

static inline double airy_ai(double x) {
    const double middle = CHEBYSHEV(x < -3.0 ? -3.0 : (x > 2.0 ? 2.0 : x), AI_MIDDLE);
    const double xpos = most(x, 2.0), zeta_pos = 2.0 / 3.0 * xpos * sqrt(xpos);
    const double positive = CHEBYSHEV(ZETA2 / zeta_pos, AI_POSITIVE) * exp(-zeta_pos)
        / (2.0 * sqrt(PI) * sqrt(sqrt(xpos)));
    const double xneg = most(-x, 3.0), zeta = 2.0 / 3.0 * xneg * sqrt(xneg), u = ZETA3 / zeta;
    const double f = CHEBYSHEV(u, AI_NEGATIVE_F), g = CHEBYSHEV(u, AI_NEGATIVE_G);
    const double s = sin(zeta + 0.0), c = cos(zeta);   /* (see SIN) */
    const double negative = ((s + c) * ROOT_HALF * f - (c - s) * ROOT_HALF * g)
        / (sqrt(PI) * sqrt(sqrt(xneg)));
    const double out = x > 2.0 ? positive : (x < -3.0 ? negative : middle);
    return isinf(x) ? NAN : out;
}

static inline double spherical_j0(double x) {
    const double out = x == 0 ? 1.0 : sin(x) / (x == 0 ? 1.0 : x);
    return isinf(x) ? 0.0 : out;
}
"""

# the orthogonal polynomials of ``orthogonal_polynomials``: op name -> the C function of a double
# x and a whole degree n (as ``_degrees`` makes it: negative for none) computing P_n(x)
POLYNOMIALS = {
    "chebyshev_t": "chebyshev_t", "chebyshev_u": "chebyshev_u", "chebyshev_v": "chebyshev_v",
    "chebyshev_w": "chebyshev_w", "hermite_h": "hermite_h", "hermite_he": "hermite_he",
    "laguerre_l": "laguerre_l", "legendre_p": "legendre_p",
}

# Each polynomial as ``orthogonal_polynomials`` computes it, element by element: the three-term
# recurrence up to the element's own degree (the NumPy code runs it to the largest degree for
# all), the same special cases in the same order.
_POLYNOMIALS_SOURCE = r"""
/* P_n from P_0 = p0, P_1 = p1 and the step giving P_k+1 from cur = P_k and prev = P_k-1 */
#define RECURRENCE(p0, p1, STEP) do { \
        if (n < 0) return 0.0; \
        if (n == 0) return (p0); \
        double prev = (p0), cur = (p1); \
        for (int64_t k = 1; k < (int64_t)n; k++) { \
            const double next = (STEP); \
            prev = cur; \
            cur = next; \
        } \
        return cur; \
    } while (0)

static int odd(double n) { return fmod(n, 2.0) != 0; }

static double chebyshev_recurrence(double x, double n, double p1) {
    RECURRENCE(1.0, p1, 2.0 * x * cur - prev);
}

static double chebyshev_t(double x, double n) {
    if (n < 0) return 0.0;
    if (fabs(x) == 1) return (x > 0 || !odd(n)) ? 1.0 : -1.0;
    if (n > 6 && fabs(x) < 1) return cos(n * acos(x));
    return chebyshev_recurrence(x, n, x);
}

static double chebyshev_u(double x, double n) {
    if (n < 0) return 0.0;
    if (fabs(x) == 1) return (x > 0 || !odd(n)) ? n + 1 : -(n + 1);
    if (n > 8 && fabs(x) < 1) {
        const double t = acos(x), s = sin(t);
        return s != 0 ? sin((n + 1) * t) / s : (n + 1) * cos((n + 1) * t) / x;
    }
    return chebyshev_recurrence(x, n, 2.0 * x);
}

static double chebyshev_v(double x, double n) {
    if (n < 0) return 0.0;
    if (fabs(x) == 1) return x > 0 ? 1.0 : (odd(n) ? -(2 * n + 1) : 2 * n + 1);
    if (n > 8 && fabs(x) < 1) {
        const double t = acos(x);
        return sin(t / 2) != 1 ? cos((n + 0.5) * t) / cos(t / 2) : (odd(n) ? -(2 * n + 1) : 2 * n + 1);
    }
    return chebyshev_recurrence(x, n, 2.0 * x - 1.0);
}

static double chebyshev_w(double x, double n) {
    if (n < 0) return 0.0;
    if (fabs(x) == 1) return x > 0 ? 2 * n + 1 : (odd(n) ? -1.0 : 1.0);
    if (n > 8 && fabs(x) < 1) {
        const double t = acos(x);
        return cos(t / 2) != 1 ? sin((n + 0.5) * t) / sin(t / 2)
                               : (x > 0 ? 2 * n + 1 : (odd(n) ? -1.0 : 1.0));
    }
    return chebyshev_recurrence(x, n, 2.0 * x + 1.0);
}

static double hermite_h(double x, double n) {
    RECURRENCE(1.0, 2.0 * x, 2.0 * x * cur - 2.0 * k * prev);
}

static double hermite_he(double x, double n) {
    RECURRENCE(1.0, x, x * cur - (double)k * prev);
}

static double laguerre_recurrence(double x, double n) {
    RECURRENCE(1.0, 1.0 - x, (((double)(2 * k + 1) - x) * cur - (double)k * prev) / (double)(k + 1));
}

static double laguerre_l(double x, double n) {
    return (x == 0 && n >= 0) ? 1.0 : laguerre_recurrence(x, n);
}

static double legendre_recurrence(double x, double n) {
    RECURRENCE(1.0, x, ((double)(2 * k + 1) * x * cur - (double)k * prev) / (double)(k + 1));
}

static double legendre_p(double x, double n) {
    if (n < 0) return 0.0;
    if (fabs(x) == 1) return (x > 0 || !odd(n)) ? 1.0 : -1.0;
    return legendre_recurrence(x, n);
}
"""

# sizes: the element count, the steps through xs and ns (0 for one value given for all), and
# whether x is shifted (2x - 1, the shifted Chebyshev polynomials)
# lgamma as ``special._lgamma`` computes it (Cody and Hillstrom's rational approximations on
# seven ranges, Stirling's series beyond 12, the reflection formula below -eps), in the input's
# own precision as NumPy's path computes float32 (each constant rounded to it); each element
# evaluates the one approximation of each shape its range needs, and all ranges share its log.
_LGAMMA_SOURCE = r"""
#define HORNER(T, t, c, n) horner_##T((t), (c), (n))
#define LGAMMA(T, SUFFIX, EPS)                                                                    \
static inline T horner_##T(T t, const double *c, int n) {                                          \
    T acc = c[0] == 1.0 ? t : t * (T)c[0];                                                         \
    _Pragma("GCC unroll 16")                                                                       \
    for (int k = 1; k < n - 1; k++) acc = (acc + (T)c[k]) * t;                                     \
    return acc + (T)c[n - 1];                                                                      \
}                                                                                                  \
static inline T near_##T(T t, T d, const double *p, const double *q) {                            \
    T r = HORNER(T, t, p, 8) / HORNER(T, t, q, 9);                                                 \
    return ((r * t + d) * t) + (T)0.0;                                                             \
}                                                                                                  \
static inline T lgamma_positive_##T(T y, T log_y) {                                               \
    const T half = (T)0.5;                                                                         \
    const T t1 = y <= half ? y : (y - half) - half;            /* (y <= 0.5 or to 1.5) */          \
    const T t2 = y < (T)PNT68 ? (y - half) - half : y - (T)2.0; /* (to 0.68 or to 4) */            \
    const T near1 = near_##T(t1, (T)LGAMMA_D1, LGAMMA_P1, LGAMMA_Q1);                              \
    const T near2 = near_##T(t2, (T)LGAMMA_D2, LGAMMA_P2, LGAMMA_Q2);                              \
    const T t4 = y - (T)4.0;                                                                       \
    const T to_12 = (HORNER(T, t4, LGAMMA_P4, 8) / HORNER(T, t4, LGAMMA_Q4, 9)) * t4 + (T)LGAMMA_D4; \
    const T w = (T)1.0 / (y * y);                                                                  \
    const T large = (HORNER(T, w, STIRLING_C, 7) / y + (T)(HALF_LOG_2PI - 0.5))                    \
        + (log_y - (T)1.0) * (y - half);                                                           \
    return y <= (T)EPS ? -log_y : y <= half ? near1 - log_y : y < (T)PNT68 ? near2 - log_y        \
        : y <= (T)1.5 ? near1 : y <= (T)4.0 ? near2 : y <= (T)12.0 ? to_12 : large;                \
}                                                                                                  \
static inline T lgamma_##T(T x) {                                                                  \
    const T y = fabs##SUFFIX(x), log_y = log##SUFFIX(y), positive = lgamma_positive_##T(y, log_y); \
    /* the reflection, x < -eps: log(pi / |x sin(pi x)|) - lgamma(-x), inf at the integers */       \
    const T n = rint##SUFFIX(x), half_n = n * (T)0.5;                                              \
    const T s = sin##SUFFIX((x - n) * (T)PI);                                                      \
    const T sin_pi = half_n != floor##SUFFIX(half_n) ? -s : s;                                     \
    const T reflected = x == floor##SUFFIX(x) ? (T)INFINITY                                         \
        : log##SUFFIX((T)PI / fabs##SUFFIX(x * sin_pi)) - positive;                                \
    return x < -(T)EPS ? reflected : positive;                                                     \
}
LGAMMA(float, f, 1.1920928955078125e-07)
LGAMMA(double, , 2.220446049250313e-16)

/* digamma and trigamma as special._digamma and special._trigamma: below 10 shifted up by ten
   steps (the terms summed as they go), then the asymptotic series; the reflection below 0 */
#define SHIFTED(T, y, TERM, w, below) do {                                                         \
        T w_ = (y), total_ = (T)0.0;                                                               \
        _Pragma("GCC unroll 16")                                                                   \
        for (int k = 0; k < 10; k++) {                                                             \
            const T v = w_;                                                                        \
            total_ = total_ + (TERM);                                                              \
            w_ = w_ + (T)1.0;                                                                      \
        }                                                                                          \
        w = (y) < (T)10.0 ? w_ : (y);                                                              \
        below = (y) < (T)10.0 ? total_ : (T)0.0;                                                   \
    } while (0)
#define PSI(T, SUFFIX)                                                                            \
static inline T digamma_positive_##T(T y) {                                                        \
    T w, below;                                                                                    \
    SHIFTED(T, y, (T)1.0 / v, w, below);                                                           \
    const T inv = (T)1.0 / w, t = inv * inv;                                                       \
    return ((log##SUFFIX(w) - (T)0.5 * inv) - HORNER(T, t, DIGAMMA_SERIES, 9)) - below;            \
}                                                                                                  \
static inline T digamma_##T(T x) {                                                                 \
    const int negative = x < 0;                                                                    \
    const T p = digamma_positive_##T(negative ? (T)1.0 - x : x);                                   \
    const T reflected = p - (T)PI / tan##SUFFIX((T)PI * (x - rint##SUFFIX(x)));                    \
    T out = negative ? reflected : p;                                                              \
    out = (negative & (x == floor##SUFFIX(x))) ? (T)NAN : out;                                     \
    return x == 0 ? (signbit(x) ? (T)INFINITY : -(T)INFINITY) : out;                               \
}                                                                                                  \
static inline T trigamma_positive_##T(T y) {                                                       \
    T w, below;                                                                                    \
    SHIFTED(T, y, (T)1.0 / (v * v), w, below);                                                     \
    const T inv = (T)1.0 / w, t = inv * inv;                                                       \
    return (((HORNER(T, t, TRIGAMMA_SERIES, 10) + (T)0.5 * inv) + (T)1.0) * inv) + below;          \
}                                                                                                  \
static inline T trigamma_##T(T x) {                                                                \
    const int negative = x < 0;                                                                    \
    const T p = trigamma_positive_##T(negative ? (T)1.0 - x : x);                                  \
    const T n = rint##SUFFIX(x), half_n = n * (T)0.5, s = sin##SUFFIX((x - n) * (T)PI);           \
    const T r = (T)PI / (half_n != floor##SUFFIX(half_n) ? -s : s);                               \
    return negative ? r * r - p : p;                                                               \
}
PSI(float, f)
PSI(double, )
"""

# ``special_normal``'s erfcx, ndtri and log_ndtr (on ``special``'s erf and erfc: W. J. Cody's
# rational approximations on three ranges), each element in float64: op name -> C function
NORMAL = {"erfcx": "erfcx_of", "ndtri": "ndtri_inside", "log_ndtr": "log_ndtr_of"}

_NORMAL_SOURCE = r"""
#define RATIONAL(t, P, Q) (horner_double((t), P, sizeof(P) / sizeof(double)) \
                           / horner_double((t), Q, sizeof(Q) / sizeof(double)))
#define ERF_SMALL 0.46875

/* r exp(-y^2), y^2 split as s^2 + (y - s)(y + s), s = trunc(16 y) / 16 */
static inline double times_exp_minus_square(double r, double y) {
    const double s = trunc(y * 16.0) * (1.0 / 16.0), rest = (y - s) * (y + s);
    return (r * exp(-(s * s))) * exp(-rest);
}

/* erf and erfc of x: both from the one evaluation of each range */
static inline void erf_erfc(double x, double *erf_out, double *erfc_out) {
    const double ax = fabs(x);
    const double small = RATIONAL(x * x, ERF_A, ERF_B) * x;
    const double y = least(ax, 28.0), t = 1.0 / (y * y);
    /* the middle or the far range's factor of exp(-v^2), and v: one exp(-v^2) for both */
    const double factor = ax <= 4.0 ? RATIONAL(ax, ERFC_C, ERFC_D)
                                    : (INV_SQRT_PI - RATIONAL(t, ERFC_P, ERFC_Q) * t) / y;
    const double outer = times_exp_minus_square(factor, ax <= 4.0 ? ax : y);
    *erf_out = ax <= ERF_SMALL ? small : copysign(1.0 - outer, x);
    *erfc_out = ax <= ERF_SMALL ? 1.0 - small : (x < 0 ? 2.0 - outer : outer);
}

static inline double erfc_of(double x) {
    double e, c;
    erf_erfc(x, &e, &c);
    return c;
}

/* erfcx of y >= 0 */
static inline double erfcx_positive(double y) {
    const double near_zero = exp(y * y) * erfc_of(y);
    const double mid = RATIONAL(y, ERFC_C, ERFC_D);
    const double w = least(y, 1e300), t = 1.0 / (w * w);
    const double far = isinf(y) ? 0.0 : (INV_SQRT_PI - RATIONAL(t, ERFC_P, ERFC_Q) * t) / w;
    return y <= ERF_SMALL ? near_zero : (y <= 4.0 ? mid : far);
}

static inline double exp_square(double y) {
    const double s = trunc(y * 16.0) / 16.0;
    return isinf(y) ? INFINITY : exp(s * s) * exp((y - s) * (y + s));
}

static inline double erfcx_of(double x) {
    const double negative = 2.0 * exp_square(x) - erfcx_positive(-x);
    const double other = x < 0 ? exp(x * x) * erfc_of(x) : erfcx_positive(fabs(x));
    return x < -ERF_SMALL ? negative : other;
}

/* r with erfc(r) = y, 0 < y < 1: Giles' erfinv of 1 - y, or where far (y < NDTRI_FAR) the
   tail's asymptotic form by three fixed-point steps on r^2; then steps Newton steps on
   erf(r) = 1 - y where y >= 1/2 and on log erfc(r) = log y below. far is a constant in each
   caller: the loop over all elements takes Giles' guess alone */
static inline double erfcinv_below_one(double y, int far, int steps) {
    const int upper = y >= 0.5;
    const double a = 1.0 - y;
    double r;
    if (far) {
        const double minus_log = -log(y);
        double r2 = minus_log;
        #pragma GCC unroll 4
        for (int k = 0; k < 3; k++) r2 = minus_log - 0.5 * log(PI * r2) + log1p(-0.5 / r2);
        r = sqrt(r2);
    } else {
        const double w = -log((1.0 - a) * (1.0 + a));
        r = a * (w < 5.0 ? horner_double(w - 2.5, GILES_CENTRAL, sizeof(GILES_CENTRAL) / sizeof(double))
                         : horner_double(sqrt(w) - 3.0, GILES_TAIL, sizeof(GILES_TAIL) / sizeof(double)));
    }
    const double log_y = log(y);
    #pragma GCC unroll 4
    for (int k = 0; k < steps; k++) {
        const double slope = TWO_OVER_SQRT_PI * exp(-(r * r));
        double e, c;
        erf_erfc(r, &e, &c);
        const double residual = upper ? e - a : (log_y - log(c)) * c;
        r = r - residual / slope;
    }
    return r;
}

/* ndtri of p in (0, 1) by steps Newton steps from the first guess far chooses */
static inline double ndtri_inside(double p, int far, int steps) {
    const int lower = p < 0.5;
    const double q = lower ? p : 1.0 - p;
    const double r = erfcinv_below_one(2.0 * q, far, steps);
    return lower ? -SQRT2 * r : SQRT2 * r;
}

/* whether ndtri of p takes the tail's first guess */
static inline int ndtri_far(double p) {
    const double q = p < 0.5 ? p : 1.0 - p;
    return (q > 0) & (2.0 * q < NDTRI_FAR);
}

static inline double log_ndtr_of(double x) {
    const double upper = log1p(-0.5 * erfc_of(x * SQRT_HALF));
    const double lower = log(0.5 * erfcx_of(-x * SQRT_HALF)) - 0.5 * x * x;
    return x > -1.0 ? upper : lower;
}
"""

# ``special_gamma``'s Hurwitz zeta and ``gamma_gradients``' gamma-sample gradient, in float64: op
# name -> C function of its two arguments. (zeta's loop is taken for small arrays only: on large
# ones NumPy's vectorized pow took half the loop's time)
TWO_ARGUMENTS = {"zeta": "zeta_of", "standard_gamma_grad": "standard_gamma_grad_of"}
# ``gamma_gradients``' Dirichlet gradient, in float64: op name -> C function of (x, alpha, total)
THREE_ARGUMENTS = {"dirichlet_grad": "dirichlet_grad_of"}

# as ``special_gamma`` computes them, element by element, each iterating until it has
# converged (the NumPy code iterates every element until all have)
_GAMMA_SOURCE = r"""
#define FRACTION_BIG FRACTION_BIG_VALUE
#define FRACTION_SCALE FRACTION_SCALE_VALUE

/* x^a e^-x / Gamma(a), of a and x in (0, inf) (1 for the others, whose values are not used:
   a NaN, an infinity or a log of zero would take libmvec's slow path) */
static inline double prefactor(double a, double x) {
    const int regular = (a > 0) & (x > 0) & (a < INFINITY) & (x < INFINITY);
    const double safe_a = regular ? a : 1.0, safe_x = regular ? x : 1.0;
    return exp(safe_a * log(safe_x) - safe_x - lgamma_double(safe_a));
}

/* P(a, x) by its power series (each term's ratio x / (a + n) apart from the running product,
   whose chain of dependent operations is then a multiplication) */
static double lower_series(double a, double x, double prefactor, double eps) {
    double term = 1.0, total = 1.0, denominator = a;
    for (int i = 0; i < 5000; i++) {
        denominator = denominator + 1.0;
        term = term * (x / denominator);
        total += term;
        if (!(term > total * eps)) break;
    }
    return prefactor * total / a;
}

/* Q(a, x) by Legendre's continued fraction 1 / (b0 + a1 / (b1 + a2 / (b2 + ...))): the
   convergents' numerators and denominators by their recurrences (scaled by powers of 2 when
   large), h = B / A off the recurrences' chains; until h changes by at most eps of itself */
static double upper_fraction(double a, double x, double prefactor, double eps) {
    double b = x + 1.0 - a;
    double numerator = b, numerator_before = 1.0, denominator = 1.0, denominator_before = 0.0;
    double h = denominator / numerator;
    for (int i = 1; i < 5000; i++) {
        const double an = -i * (i - a);
        b = b + 2.0;
        const double next_numerator = b * numerator + an * numerator_before;
        const double next_denominator = b * denominator + an * denominator_before;
        numerator_before = numerator;
        numerator = next_numerator;
        denominator_before = denominator;
        denominator = next_denominator;
        if (fabs(numerator) > FRACTION_BIG) {
            numerator *= FRACTION_SCALE;
            numerator_before *= FRACTION_SCALE;
            denominator *= FRACTION_SCALE;
            denominator_before *= FRACTION_SCALE;
        }
        const double next_h = denominator / numerator;
        const int converged = !(fabs(next_h - h) > eps * fabs(next_h));
        h = next_h;
        if (converged) break;
    }
    return prefactor * h;
}

/* P(a, x) or Q(a, x) where upper, given x^a e^-x / Gamma(a), to the tolerance eps */
static double incomplete_gamma(double a, double x, int upper, double prefactor, double eps) {
    double out = NAN;
    if ((a > 0) & (x > 0) & isfinite(a) & isfinite(x)) {
        if ((x < a + 1.0) | (x < 1.0)) {
            const double p = lower_series(a, x, prefactor, eps);
            out = upper ? 1.0 - p : p;
        } else {
            const double q = upper_fraction(a, x, prefactor, eps);
            out = upper ? q : 1.0 - q;
        }
    }
    /* the edges, as torch: P(0, x > 0) = 1, P(a, 0) = 0, P(inf, x) = 0, P(a, inf) = 1 */
    const int defined = !((a < 0) | (x < 0));
    const int p_zero = defined & (((x == 0) & !(a <= 0)) | ((a == INFINITY) & (x != INFINITY)));
    const int p_one = defined & (((a == 0) & (x > 0)) | ((x == INFINITY) & (a != INFINITY)));
    out = p_zero ? (upper ? 1.0 : 0.0) : out;
    return p_one ? (upper ? 0.0 : 1.0) : out;
}


/* Hurwitz's zeta(x, q) as special_gamma's _zeta computes it: the direct terms (q + k)^-x
   while fewer than nine were taken or q + k <= 9 (at most as many as for q = -100000), then
   the Euler-Maclaurin remainder at a = q + k with B_2j / (2j)!, j = 1..12, and the edges in
   torch's order of precedence */
static const double EULER_MACLAURIN[12] = {EULER_MACLAURIN_COEFFICIENTS};

static double zeta_of(double x, double q) {
    const double lowest = isfinite(q) ? (q < -100000.0 ? -100000.0 : q) : 9.0;
    const double bound = ceil(9.0 - lowest) + 1.0;
    const int64_t steps = bound > 9.0 ? (int64_t)bound : 9;
    double total = 0.0, a = q;
    int need = 1;
    for (int64_t k = 0; k < steps && need; k++) {
        total += pow(a, -x);
        a = a + 1.0;
        need = (k + 1 < 9) | (a <= 9.0);
    }
    const double rest = pow(a, 1.0 - x) / (x - 1.0) + 0.5 * pow(a, -x);
    double factor = x * pow(a, -x - 1.0), correction = 0.0;
    for (int j = 0; j < 12; j++) {
        correction += EULER_MACLAURIN[j] * factor;
        factor = factor * (x + 2 * j + 1) * (x + 2 * j + 2) / (a * a);
    }
    double out = total + rest + correction;
    if (q == INFINITY) out = NAN;
    if (x == INFINITY) out = q == 1.0 ? 1.0 : q < 1.0 ? INFINITY : NAN;
    const int nonpositive = q <= 0;
    if (nonpositive & (x != floor(x))) out = NAN;
    if (nonpositive & (q == floor(q))) out = INFINITY;
    if (x < 1.0) out = NAN;
    return x == 1.0 ? INFINITY : out;
}
"""


# ``gamma_gradients``' functions, operation for operation (on ``special``'s digamma, compiled above)
_GAMMA_GRADIENTS_SOURCE = r"""
static double gamma_grad_small(double alpha, double x) {
    double numer = 1.0, denom = alpha;
    double series1 = numer / denom, series2 = numer / (denom * denom);
    for (int i = 1; i < 6; i++) {
        numer = numer * (-x / i);
        denom = denom + 1;
        series1 = series1 + numer / denom;
        series2 = series2 + numer / (denom * denom);
    }
    const double pow_x_alpha = pow(x, alpha);
    const double pdf = pow(x, alpha - 1) * exp(-x);
    const double cdf = pow_x_alpha * series1;
    const double cdf_alpha = (log(x) - digamma_double(alpha)) * cdf - pow_x_alpha * series2;
    const double result = -cdf_alpha / pdf;
    return isnan(result) ? 0.0 : result;
}

static double gamma_grad_large(double alpha, double x) {
    const int near = (0.9 * alpha <= x) && (x <= 1.1 * alpha);
    const double numer_1 = 1 + 24 * alpha * (1 + 12 * alpha);
    const double numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                            + alpha * (107 + 3600 * x));
    const double at_mean = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha));
    const double denom = sqrt(8 * alpha);
    const double term2 = denom / (alpha - x);
    const double term3 = pow(x - alpha - alpha * log(x / alpha), -1.5);
    const double term23 = x < alpha ? term2 - term3 : term2 + term3;
    const double term1 = log(x / alpha) * term23 - sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
    const double stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
    const double away = -stirling * x * term1 / denom;
    return near ? at_mean : away;
}

static double gamma_grad_rational(double alpha, double x) {
    const double u = log(x / alpha), v = log(alpha);
    double c[8];
    for (int k = 0; k < 8; k++) c[k] = GAMMA_UV[k] + u * (GAMMA_UV[8 + k] + u * GAMMA_UV[16 + k]);
    const double p = c[0] + v * (c[1] + v * (c[2] + v * c[3]));
    const double q = c[4] + v * (c[5] + v * (c[6] + v * c[7]));
    return exp(p / q);
}

static double standard_gamma_grad_of(double alpha, double x) {
    if (x < 0.8) return gamma_grad_small(alpha, x);
    return alpha > 8.0 ? gamma_grad_large(alpha, x) : gamma_grad_rational(alpha, x);
}

static double beta_grad_alpha_small(double x, double alpha, double beta) {
    const double factor = digamma_double(alpha) - digamma_double(alpha + beta) - log(x);
    double numer = 1.0;
    double series = numer / alpha * (factor + 1 / alpha);
    for (int i = 1; i < 11; i++) {
        numer = numer * ((i - beta) * x / i);
        const double denom = alpha + i;
        series = series + numer / denom * (factor + 1 / denom);
    }
    const double result = x * pow(1 - x, -beta) * series;
    return isnan(result) ? 0.0 : result;
}

static double beta_grad_beta_small(double x, double alpha, double beta) {
    const double factor = digamma_double(alpha + beta) - digamma_double(beta);
    double numer = 1.0, betas = 1.0, dbetas = 0.0;
    double series = factor / alpha;
    for (int i = 1; i < 9; i++) {
        numer = numer * (-x / i);
        dbetas = dbetas * (beta - i) + betas;
        betas = betas * (beta - i);
        series = series + numer / (alpha + i) * (dbetas + factor * betas);
    }
    const double result = -pow(1 - x, 1 - beta) * series;
    return isnan(result) ? 0.0 : result;
}

static double beta_grad_alpha_mid(double x, double alpha, double beta) {
    const double total = alpha + beta;
    const double mean = alpha / total;
    const double std = sqrt(alpha * beta / (total + 1)) / total;
    const int near = (mean - 0.1 * std <= x) && (x <= mean + 0.1 * std);
    const double poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))));
    const double prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total);
    const double prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total);
    const double at_mean = prefactor_num / (1 - x) * poly / prefactor_den;
    const double prefactor = -x / sqrt(2 * alpha * beta / total);
    const double stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                             * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                             / (1 + 1 / (12 * total) + 1 / (288 * total * total)));
    const double term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta);
    const double axbx = alpha * (x - 1) + beta * x;
    const double term1_den = sqrt(2 * alpha / beta) * pow(total, 1.5) * axbx * axbx;
    const double term1 = term1_num / term1_den;
    const double term2 = 0.5 * log(alpha / (total * x));
    const double term3 = sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1));
    const double term4_base = beta * log(beta / (total * (1 - x))) + alpha * log(alpha / (total * x));
    const double term4 = pow(term4_base, -1.5);
    const double term1234 = term1 + term2 * (term3 + (x < mean ? term4 : -term4));
    return near ? at_mean : stirling * prefactor * term1234;
}

static double beta_grad_rational(double x, double alpha, double total) {
    const double u = log(x);
    const double a = log(alpha) - u;
    const double b = log(total) - a;
    const double pow_u[3] = {1.0, u, u * u}, pow_a[3] = {1.0, a, a * a};
    double p = 0.0, q = 0.0;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            const double ua = pow_u[i] * pow_a[j];
            const double *cp = BETA_C + 4 * (3 * i + j), *cq = BETA_C + 36 + 4 * (3 * i + j);
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])));
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])));
        }
    }
    const double approx = x * (digamma_double(total) - digamma_double(alpha)) / (total - alpha);
    return p / q * approx;
}

static double dirichlet_grad_of(double x, double alpha, double total) {
    const double beta = total - alpha;
    const double boundary = total * x * (1 - x);
    const int near_0 = (x <= 0.5) && (boundary < 2.5);
    const int near_1 = !near_0 && (x >= 0.5) && (boundary < 0.75);
    if (near_0) return beta_grad_alpha_small(x, alpha, beta);
    if (near_1) return -beta_grad_beta_small(1 - x, beta, alpha);
    if (alpha > 6 && beta > 6) return beta_grad_alpha_mid(x, alpha, beta);
    return beta_grad_rational(x, alpha, total);
}
"""

_THREE_ARGUMENTS_LOOP = """
void {name}_three(const double *as, const double *bs, const double *cs, double *out, int64_t n, int nthreads) {{
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1 && n >= {parallel}) schedule(dynamic, 256)
    for (int64_t i = 0; i < n; i++) out[i] = {function}(as[i], bs[i], cs[i]);
}}
"""

_TWO_ARGUMENTS_LOOP = """
void {name}_two(const double *as, const double *bs, double *out, const int64_t *sizes, int nthreads) {{
    const int64_t n = sizes[0], a_step = sizes[1], b_step = sizes[2];
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1 && n >= {parallel}) schedule(dynamic, 256)
    for (int64_t i = 0; i < n; i++) out[i] = {function}(as[i * a_step], bs[i * b_step]);
}}
"""

# the incomplete gamma functions: the prefactors of all elements (vectorized, into the result),
# then each element's series or fraction
_INCOMPLETE_GAMMA_LOOP = """
void {name}_two(const double *as, const double *bs, double *out, const int64_t *sizes, int nthreads) {{
    const int64_t n = sizes[0], a_step = sizes[1], b_step = sizes[2];
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1 && n >= {parallel}) schedule(static)
    for (int64_t i = 0; i < n; i++) out[i] = prefactor(as[i * a_step], bs[i * b_step]);
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1 && n >= {parallel}) schedule(dynamic, 256)
    for (int64_t i = 0; i < n; i++) out[i] = incomplete_gamma(as[i * a_step], bs[i * b_step], {upper}, out[i], {eps!r});
}}
"""

_POLYNOMIAL_LOOP = """
void {name}_polynomial_{x_type}_{out_type}(const {x_ctype} *xs, const double *ns, {out_ctype} *out,
                                         const int64_t *sizes, int nthreads) {{
    const int64_t n = sizes[0], x_step = sizes[1], n_step = sizes[2], shifted = sizes[3];
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1 && n >= {parallel}) schedule(static)
    for (int64_t i = 0; i < n; i++) {{
        double x = (double)xs[i * x_step];
        if (shifted) x = x + x - 1.0;
        out[i] = ({out_ctype}){function}(x, ns[i * n_step]);
    }}
}}
"""

_LOOP = """
void {name}_{dtype}(const {ctype} *xs, {ctype} *out, int64_t n, int nthreads) {{
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1 && n >= {parallel}) schedule(static)
    for (int64_t i = 0; i < n; i++) out[i] = ({ctype}){function}((double)xs[i]);
}}
"""

# ndtri, by blocks of 64 elements: the probabilities in (0, 1) copied to the result (1/2 for the
# others, so that no NaN, infinity or log of zero takes libmvec's slow path), each from Giles'
# guess (the edges -inf, inf and NaN from the input; blocks without a probability, as of
# integers, take those alone); then those with the tail's guess, a few if any
_NDTRI_LOOP = """
void ndtri_{dtype}(const {ctype} *xs, {ctype} *out, int64_t n, int nthreads) {{
    #pragma omp parallel for num_threads(nthreads) if(nthreads > 1 && n >= {parallel}) schedule(static)
    for (int64_t block = 0; block < n; block += 64) {{
        const int64_t end = block + 64 < n ? block + 64 : n;
        int inside = 0, far = 0;
        #pragma omp simd reduction(|: inside, far)
        for (int64_t i = block; i < end; i++) {{
            const int p_inside = (xs[i] > 0) & (xs[i] < 1);
            out[i] = p_inside ? xs[i] : ({ctype})0.5;
            inside |= p_inside;
            far |= ndtri_far((double)xs[i]);
        }}
        if (inside) {{
            #pragma omp simd
            for (int64_t i = block; i < end; i++) {{
                const double p = xs[i];
                const double edge = p == 0 ? -INFINITY : (p == 1 ? INFINITY : NAN);
                out[i] = ({ctype})(((p > 0) & (p < 1)) ? ndtri_inside((double)out[i], 0, {steps}) : edge);
            }}
        }} else {{
            #pragma omp simd
            for (int64_t i = block; i < end; i++)
                out[i] = xs[i] == 0 ? -INFINITY : (xs[i] == 1 ? INFINITY : NAN);
        }}
        if (far)
            for (int64_t i = block; i < end; i++)
                if (ndtri_far((double)xs[i])) out[i] = ({ctype})ndtri_inside((double)xs[i], 1, {steps});
    }}
}}
"""

_CTYPES = {"float32": "float", "float64": "double"}

# ``special``'s functions compiled in the input's own precision, as its NumPy code computes them
IN_OWN_PRECISION = ("lgamma", "digamma", "trigamma")

# their coefficient tables and constants, from ``special``
_LGAMMA_TABLES = ("_LGAMMA_P1", "_LGAMMA_Q1", "_LGAMMA_P2", "_LGAMMA_Q2", "_LGAMMA_P4", "_LGAMMA_Q4",
                  "_STIRLING_C", "_DIGAMMA_SERIES", "_TRIGAMMA_SERIES")
_LGAMMA_CONSTANTS = ("_LGAMMA_D1", "_LGAMMA_D2", "_LGAMMA_D4", "_HALF_LOG_2PI", "_PNT68")
_NORMAL_TABLES = ("_ERF_A", "_ERF_B", "_ERFC_C", "_ERFC_D", "_ERFC_P", "_ERFC_Q", "_GILES_CENTRAL",
                  "_GILES_TAIL")
_NORMAL_CONSTANTS = ("_INV_SQRT_PI", "_TWO_OVER_SQRT_PI")
_NAMES = {np.dtype(name): name for name in _CTYPES}   # (a dtype's ``name`` takes microseconds)

# Below this many elements a loop runs on the calling thread alone: waking the others costs
# more than the few microseconds of work. (The loops run at every size: NumPy's path makes its
# dozens of passes however small the array.)
PARALLEL_MIN_ELEMENTS = 256


def _table(name):
    coefficients, (a, b) = getattr(tables, name)
    values = ", ".join(repr(float(c)) for c in coefficients)
    return (f"static const double {name}[] = {{{values}}};\n"
            f"#define {name}_N {len(coefficients)}\n#define {name}_A {float(a)!r}\n"
            f"#define {name}_B {float(b)!r}\n")


def _source():
    declarations = "".join(f"#pragma omp declare simd notinbranch\ndouble {f}(double);\n"
                           f"#pragma omp declare simd notinbranch\nfloat {f}f(float);\n"
                           for f in ("exp", "log", "log1p", "sin", "cos", "tan"))
    loops = [_LOOP.format(name=op, dtype=dtype, ctype=ctype, function=function, parallel=PARALLEL_MIN_ELEMENTS)
             for op, function in FUNCTIONS.items() for dtype, ctype in _CTYPES.items()
             if not (dtype == "float32" and op in IN_FLOAT32)]
    loops += [_LOOP.format(name=op, dtype="float32", ctype="float", function=function,
                           parallel=PARALLEL_MIN_ELEMENTS).replace("(double)xs[i]", "xs[i]")
              for op, function in IN_FLOAT32.items()]
    loops += [_POLYNOMIAL_LOOP.format(name=op, function=function, parallel=PARALLEL_MIN_ELEMENTS,
                                      x_type=x_type, x_ctype=x_ctype, out_type=out_type, out_ctype=out_ctype)
              for op, function in POLYNOMIALS.items() for x_type, x_ctype in _CTYPES.items()
              for out_type, out_ctype in _CTYPES.items()]
    loops += [_LOOP.format(name=op, dtype=dtype, ctype=ctype, function=f"{op}_{ctype}",
                           parallel=PARALLEL_MIN_ELEMENTS).replace("(double)xs[i]", "xs[i]")
              for op in IN_OWN_PRECISION for dtype, ctype in _CTYPES.items()]
    loops += [_LOOP.format(name=op, dtype=dtype, ctype=ctype, function=function, parallel=PARALLEL_MIN_ELEMENTS)
              for op, function in NORMAL.items() if op != "ndtri" for dtype, ctype in _CTYPES.items()]
    loops += [_NDTRI_LOOP.format(dtype=dtype, ctype=ctype, steps=special_normal.NDTRI_NEWTON_STEPS[dtype],
                                 parallel=PARALLEL_MIN_ELEMENTS)
              for dtype, ctype in _CTYPES.items()]
    constants = "".join(f"static const double {name[1:]}[] = {{{', '.join(map(repr, getattr(special, name)))}}};\n"
                        for name in _LGAMMA_TABLES + _NORMAL_TABLES)
    constants += "".join(f"#define {name[1:]} {getattr(special, name)!r}\n" for name in _NORMAL_CONSTANTS)
    constants += f"#define SQRT2 {math.sqrt(2.0)!r}\n#define SQRT_HALF {math.sqrt(0.5)!r}\n"
    constants += f"#define NDTRI_FAR {special_normal.NDTRI_FAR!r}\n"
    loops += [_TWO_ARGUMENTS_LOOP.format(name=op, function=function, parallel=PARALLEL_MIN_ELEMENTS)
              for op, function in TWO_ARGUMENTS.items()]
    loops += [_INCOMPLETE_GAMMA_LOOP.format(name=op, upper=int(upper), eps=float(eps), parallel=PARALLEL_MIN_ELEMENTS)
              for op, (upper, eps) in special_gamma.INCOMPLETE_GAMMA.items()]
    loops += [_THREE_ARGUMENTS_LOOP.format(name=op, function=function, parallel=PARALLEL_MIN_ELEMENTS)
              for op, function in THREE_ARGUMENTS.items()]
    constants += "".join(f"#define {name[1:]} {getattr(special, name)!r}\n" for name in _LGAMMA_CONSTANTS)
    constants += (f"#define FRACTION_BIG_VALUE {special_gamma.FRACTION_BIG!r}\n"
                  f"#define FRACTION_SCALE_VALUE {special_gamma.FRACTION_SCALE!r}\n")
    constants += f"#define EULER_MACLAURIN_COEFFICIENTS {', '.join(map(repr, special_gamma._EULER_MACLAURIN))}\n"
    for name in ("_GAMMA_UV", "_BETA_C"):
        values = ", ".join(map(repr, _flat(getattr(gamma_gradients, name))))
        constants += f"static const double {name[1:]}[] = {{{values}}};\n"
    # no fused multiply-adds: each operation rounds as NumPy's passes round it
    return ("#include <math.h>\n#include <stdint.h>\n" + declarations
            + '#pragma GCC optimize("fp-contract=off", "no-trapping-math")\n'
            + "".join(_table(name) for name in _TABLES)
            + "".join(f"#define {name}_FLOAT32_TERMS {n}\n" for name, n in I1E_FLOAT32_TERMS.items())
            + _FUNCTIONS_SOURCE + _POLYNOMIALS_SOURCE
            + constants + _LGAMMA_SOURCE + _NORMAL_SOURCE + _GAMMA_SOURCE + _GAMMA_GRADIENTS_SOURCE
            + "".join(loops))


def _flat(nested):
    """The floats of nested lists, row-major."""
    return [float(v) for v in np.asarray(nested, dtype=np.float64).reshape(-1)]


SOURCE = _source()

_ARGUMENTS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int)
_functions = {}   # name -> the loop (``native_calls.bind``), or None where it could not be built


def _function(name, argtypes=_ARGUMENTS):
    if name not in _functions:
        from .._inductor import _compiler
        _functions[name] = native_calls.bind(
            _compiler.load(SOURCE, name, quiet=True, libraries=("mvec",), argtypes=argtypes),
            native_calls.kinds_of(argtypes))
    return _functions[name]


def available():
    """Whether the loops can be built here (a C compiler and libmvec are found)."""
    return _function("bessel_j0_float32") is not None


def loop_addresses(op):
    """The addresses of ``op``'s loops (a name in ``FUNCTIONS``, ``IN_OWN_PRECISION`` or
    ``NORMAL``) over float32 and over float64 arrays, each a C function ``loop(x, out, n,
    threads)``; None for one that cannot be built."""
    return tuple(address(f"{op}_{dtype}") for dtype in _NAMES.values())


def address(name):
    """The address of the loop ``name`` (a C function of ``SOURCE``), None where it cannot be
    built."""
    from .._inductor import _compiler
    function = _compiler.load(SOURCE, name, quiet=True, libraries=("mvec",), argtypes=_ARGUMENTS)
    return None if function is None else ctypes.cast(function, ctypes.c_void_p).value


def applies(x):
    """Whether the loops take the array ``x``: a float32 or float64 NumPy array with elements."""
    return type(x) is np.ndarray and x.size and x.dtype in _NAMES


def compute(op, x):
    """``op`` (a name in ``FUNCTIONS``, ``IN_OWN_PRECISION`` or ``NORMAL``) of ``x`` (see
    ``applies``) in ``x``'s dtype: in its
    layout where it fills its memory, else of a row-major copy; None where the loop cannot be
    built."""
    function = _function(f"{op}_{_NAMES[x.dtype]}")
    if function is None:
        return None
    if not openmp_kernels.fills_its_memory(x):
        x = np.ascontiguousarray(x)
    out = np.empty_like(x)   # (the same layout: one flat order for both)
    function(x, out, x.size, openmp_kernels.thread_count())
    return out


# two arrays, the result, the sizes (the count, the two steps, any flags), the thread count
_TWO_ARRAYS_ARGUMENTS = (ctypes.c_void_p,) * 3 + (ctypes.POINTER(ctypes.c_int64), ctypes.c_int)


def _broadcast_steps(x, y):
    """The broadcast shape of arrays ``x`` and ``y``, each as a row-major array to read with a
    step of 1, or (one value for all) of 0: ``(shape, arrays, steps)``."""
    if y.size == 1 or x.shape == y.shape:   # (the common cases first: one value for all)
        shape = x.shape if x.ndim >= y.ndim else y.shape
    elif x.size == 1:
        shape = y.shape if y.ndim >= x.ndim else x.shape
    else:
        shape = np.broadcast_shapes(x.shape, y.shape)
    steps = []
    arrays = []
    for array in (x, y):
        if array.size == 1:
            arrays.append(np.asarray(array, order="C"))
            steps.append(0)
        else:
            arrays.append(np.ascontiguousarray(array if array.shape == shape else np.broadcast_to(array, shape)))
            steps.append(1)
    return shape, arrays, steps


def _over_two_arrays(name, x, y, out_type, *flags):
    """Loop ``name`` over the arrays ``x`` and ``y`` broadcast together (``_broadcast_steps``)
    into a new row-major array of ``out_type``; None where it cannot be built."""
    function = _function(name, _TWO_ARRAYS_ARGUMENTS)
    if function is None:
        return None
    shape, arrays, steps = _broadcast_steps(x, y)
    out = np.empty(shape, out_type)
    function(arrays[0], arrays[1], out, (out.size, *steps, *flags), openmp_kernels.thread_count())
    return out


def two_arguments(op, a, b):
    """``op`` (a name in ``TWO_ARGUMENTS`` or ``special_gamma.INCOMPLETE_GAMMA``) of the float64 arrays ``a``
    and ``b``, broadcast together, as a row-major float64 array; None where the loop cannot be
    built."""
    return _over_two_arrays(f"{op}_two", a, b, np.float64)


def three_arguments(op, a, b, c):
    """``op`` (a name in ``THREE_ARGUMENTS``) of the float64 arrays ``a``, ``b`` and ``c``,
    broadcast together, as a row-major float64 array; None where the loop cannot be built."""
    function = _function(f"{op}_three", (ctypes.c_void_p,) * 4 + (ctypes.c_int64, ctypes.c_int))
    if function is None:
        return None
    shape = a.shape if a.shape == b.shape == c.shape else np.broadcast_shapes(a.shape, b.shape, c.shape)
    arrays = [np.ascontiguousarray(v if v.shape == shape else np.broadcast_to(v, shape)) for v in (a, b, c)]
    out = np.empty(arrays[0].shape, np.float64)
    function(*arrays, out, out.size, openmp_kernels.thread_count())
    return out


def polynomial(op, x, n, shifted, dtype):
    """``op`` (a name in ``POLYNOMIALS``) at ``x`` (an array or number; at ``2x - 1`` where
    ``shifted``) and the float64 whole degrees ``n`` (negative for none), broadcast together,
    computed in float64 and returned in ``dtype`` (float32 or float64; others get float64);
    None where the loop cannot be built."""
    if type(x) is not np.ndarray or x.dtype not in _NAMES:
        x = np.asarray(x, np.float64)
    out_type = _NAMES.get(np.dtype(dtype), "float64") if dtype is not None else "float64"
    return _over_two_arrays(f"{op}_polynomial_{_NAMES[x.dtype]}_{out_type}", x, n, out_type, int(shifted))
