"""Fits the polynomial of ember's float32 erf, ``erf(x) = tanh(x * P(x**2))``
(``src/ember/_backend/special.py``), and prints its coefficients and its error.

``P(t)`` approximates ``atanh(erf(x)) / x`` on ``t = x**2`` in [0, 16] (erf rounds to 1 in
float32 from x = 3.92 on). The fit is weighted least squares with Lawson's reweighting towards
the smallest largest error, where the error counted is erf's relative error: an error ``d`` in
``P`` moves erf by ``(1 - erf**2) * x * d``, so ``P`` needs its accuracy near 0 and little of
it where tanh saturates. NumPy and the standard library only; run with
``python scripts/fit_erf_float32.py``.
"""
import math

import numpy as np

DEGREE = 6
T_MAX = 16.0
POINTS = 6000
ITERATIONS = 400


def fit():
    """Coefficients of P, highest power first (float64), and the largest relative error of
    erf predicted by the linearised error."""
    k = np.arange(POINTS)
    t = (np.cos(np.pi * (k + 0.5) / POINTS)[::-1] + 1) / 2 * T_MAX  # Chebyshev points
    x = np.sqrt(t)
    erf = np.array([math.erf(v) for v in x])
    target = np.where(x > 0, np.arctanh(np.minimum(erf, 1 - 1e-16)) / np.maximum(x, 1e-300),
                      2 / math.sqrt(math.pi))
    sensitivity = np.where(x > 0, (1 - erf ** 2) * x / np.maximum(erf, 1e-300), 1.0)
    powers = np.vander(t / T_MAX, DEGREE + 1, increasing=True)  # scaled for conditioning
    weights, best = np.full(POINTS, 1.0 / POINTS), None
    for _ in range(ITERATIONS):
        w = np.sqrt(weights) * sensitivity
        coeffs = np.linalg.lstsq(powers * w[:, None], target * w, rcond=None)[0]
        error = (powers @ coeffs - target) * sensitivity
        if best is None or np.abs(error).max() < best[0]:
            best = (np.abs(error).max(), coeffs)
        weights = weights * np.abs(error)
        weights /= weights.sum()
    largest, coeffs = best
    return tuple((coeffs / T_MAX ** np.arange(DEGREE + 1))[::-1]), largest


def float32_ulps(coeffs):
    """Largest error in float32 ulps of ``tanh(x * P(x**2))`` evaluated in float32, over a
    dense grid of [-6, 6] and of magnitudes down to 1e-30."""
    x = np.concatenate([np.linspace(-6, 6, 1_200_001),
                        10.0 ** np.linspace(-30, 0.7, 100_001)]).astype(np.float32)
    c = [np.float32(v) for v in coeffs]
    t = x * x
    acc = t * c[0]
    for v in c[1:-1]:
        acc += v
        acc *= t
    acc += c[-1]
    acc *= x
    got = np.tanh(acc).astype(np.float64)
    want = np.array([math.erf(float(v)) for v in x])
    ok = want != 0
    ulp = np.spacing(np.abs(want[ok]).astype(np.float32)).astype(np.float64)
    return float(np.max(np.abs(got[ok] - want[ok]) / ulp))


if __name__ == "__main__":
    coeffs, largest = fit()
    print("P, highest power first:")
    for c in coeffs:
        print(f"    {float(c)!r},")
    print(f"linearised largest relative error: {largest:.3g}")
    print(f"largest error evaluated in float32: {float32_ulps(coeffs):.2f} ulp")
