"""Computes the Chebyshev expansions of ember's Bessel and Airy kernels
(``src/ember/_backend/special_bessel.py``) with mpmath, and writes them to
``src/ember/_backend/special_chebyshev.py``.

Each expansion approximates a smooth function ``f`` of a variable ``t`` on an interval
``[a, b]`` as ``sum c_k T_k(s)``, ``s = (2 t - a - b) / (b - a)``: the coefficients are the
discrete Chebyshev transform of ``f`` at ``NODES`` Chebyshev points, computed at 50 digits, and
the series is cut where the remaining coefficients add up to less than 1e-17 of ``f``'s smallest
magnitude on the interval. The functions are the parts of the Bessel and Airy functions that
have no zeros and no singularities in their ranges (the Hankel amplitudes ``P`` and ``Q`` of J
and Y for x >= 8, ``sqrt(x) e^x K(x)`` for x >= 2, the Airy asymptotic amplitudes), plus J0,
J1 / x and the regular parts of Y0 and Y1 on [0, 8] as functions of ``x^2``; ``e^-x I0(x)`` and
``e^-x I1(x) / x`` on [0, 8] (in ``x^2`` the expansion of I0, from 1 to 427, cancels to 1e-14 near
0) and ``sqrt(x) e^-x I(x)`` for x >= 8 as a function of ``8/x``.

    python scripts/fit_special_chebyshev.py
"""
import os

import mpmath as mp

mp.mp.dps = 50
NODES = 90
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "ember", "_backend",
                   "special_chebyshev.py")


def chebyshev(f, a, b):
    """Coefficients c_0..c_n of f on [a, b] (c_0 counted whole, not halved), truncated."""
    n = NODES
    nodes = [mp.cos(mp.pi * (k + mp.mpf(0.5)) / n) for k in range(n)]
    values = [f((b - a) / 2 * s + (a + b) / 2) for s in nodes]
    coeffs = []
    for j in range(n):
        c = 2 * mp.fsum(v * mp.cos(mp.pi * j * (k + mp.mpf(0.5)) / n) for k, v in enumerate(values)) / n
        coeffs.append(c)
    coeffs[0] /= 2
    smallest = min(abs(v) for v in values)
    keep = n
    while keep > 1 and mp.fsum(abs(c) for c in coeffs[keep - 1:]) < mp.mpf("1e-17") * smallest:
        keep -= 1
    return [float(c) for c in coeffs[:keep]], (a, b)


def _hankel(nu, x):
    """(P, Q) of J_nu(x) = sqrt(2/(pi x)) (P cos chi - Q sin chi), chi = x - (2 nu + 1) pi / 4."""
    chi = x - (2 * nu + 1) * mp.pi / 4
    j, y = mp.besselj(nu, x), mp.bessely(nu, x)
    scale = mp.sqrt(mp.pi * x / 2)
    return scale * (j * mp.cos(chi) + y * mp.sin(chi)), scale * (y * mp.cos(chi) - j * mp.sin(chi))


def _from_w(fn):
    """fn of x where w = (8/x)^2 (w in (0, 1] for x >= 8)."""
    return lambda w: fn(8 / mp.sqrt(w))


def tables():
    zeta2 = mp.mpf(2) / 3 * mp.mpf(2) ** 1.5
    zeta3 = mp.mpf(2) / 3 * mp.mpf(3) ** 1.5

    def x_of_zeta(z):
        return (mp.mpf(3) / 2 * z) ** (mp.mpf(2) / 3)

    def airy_positive(u):  # F with Ai(x) = F exp(-zeta) / (2 sqrt(pi) x^(1/4)), zeta = zeta2 / u
        z = zeta2 / u
        x = x_of_zeta(z)
        return mp.airyai(x) * 2 * mp.sqrt(mp.pi) * x ** 0.25 * mp.exp(z)

    def airy_negative(u, part):  # Ai(-x) = (sin(phi) f - cos(phi) g) / (sqrt(pi) x^(1/4))
        z = zeta3 / u
        x = x_of_zeta(z)
        phi = z + mp.pi / 4
        a, b = mp.airyai(-x), mp.airybi(-x)
        scale = mp.sqrt(mp.pi) * x ** 0.25
        if part == "f":
            return scale * (a * mp.sin(phi) + b * mp.cos(phi))
        return scale * (b * mp.sin(phi) - a * mp.cos(phi))

    # Y0 - (2/pi) log(x) J0 and (Y1 - (2/pi)(log(x) J1 - 1/x)) / x: entire functions of x^2
    def y0_regular(x):
        return mp.bessely(0, x) - 2 / mp.pi * mp.log(x) * mp.besselj(0, x)

    def y1_regular(x):
        return (mp.bessely(1, x) - 2 / mp.pi * (mp.log(x) * mp.besselj(1, x) - 1 / x)) / x

    def i_scaled(order):   # sqrt(x) e^-x I(x) in u = 8/x
        return lambda u: (mp.sqrt(8 / u) * mp.exp(-8 / u) * mp.besseli(order, 8 / u) if u
                          else 1 / mp.sqrt(2 * mp.pi))

    def k_scaled(order):   # sqrt(x) e^x K(x) in u = 2/x
        return lambda u: (mp.sqrt(2 / u) * mp.exp(2 / u) * mp.besselk(order, 2 / u) if u
                          else mp.sqrt(mp.pi / 2))

    return {
        # on [0, 8], in t = x^2
        "J0_SMALL": chebyshev(lambda t: mp.besselj(0, mp.sqrt(t)), 0, 64),
        "J1_SMALL": chebyshev(lambda t: mp.besselj(1, mp.sqrt(t)) / mp.sqrt(t) if t else mp.mpf(0.5), 0, 64),
        "Y0_SMALL": chebyshev(lambda t: y0_regular(mp.sqrt(t)) if t else 2 / mp.pi * (mp.euler - mp.log(2)),
                              0, 64),
        "Y1_SMALL": chebyshev(lambda t: y1_regular(mp.sqrt(t)) if t else mp.limit(y1_regular, 0), 0, 64),
        # Hankel amplitudes for x >= 8, in w = (8/x)^2; Q is divided by 8/x
        "P0": chebyshev(_from_w(lambda x: _hankel(0, x)[0]), 0, 1),
        "Q0": chebyshev(_from_w(lambda x: _hankel(0, x)[1] * x / 8), 0, 1),
        "P1": chebyshev(_from_w(lambda x: _hankel(1, x)[0]), 0, 1),
        "Q1": chebyshev(_from_w(lambda x: _hankel(1, x)[1] * x / 8), 0, 1),
        # e^-x I0(x) and e^-x I1(x) / x on [0, 8]; sqrt(x) e^-x I(x) for x >= 8, in u = 8/x
        "I0E_SMALL": chebyshev(lambda x: mp.exp(-x) * mp.besseli(0, x), 0, 8),
        "I1E_SMALL": chebyshev(lambda x: mp.exp(-x) * mp.besseli(1, x) / x if x else mp.mpf(0.5), 0, 8),
        "I0E_LARGE": chebyshev(i_scaled(0), 0, 1),
        "I1E_LARGE": chebyshev(i_scaled(1), 0, 1),
        # sqrt(x) e^x K(x) for x >= 2, in u = 2/x
        "K0E_LARGE": chebyshev(k_scaled(0), 0, 1),
        "K1E_LARGE": chebyshev(k_scaled(1), 0, 1),
        # Ai on [-3, 2]; beyond, the amplitudes in u = zeta(2)/zeta or zeta(3)/zeta
        "AI_MIDDLE": chebyshev(mp.airyai, -3, 2),
        "AI_POSITIVE": chebyshev(lambda u: airy_positive(u) if u else mp.mpf(1), 0, 1),
        "AI_NEGATIVE_F": chebyshev(lambda u: airy_negative(u, "f") if u else mp.mpf(1), 0, 1),
        "AI_NEGATIVE_G": chebyshev(lambda u: airy_negative(u, "g") if u else mp.mpf(0), 0, 1),
    }


def main():
    lines = ['"""Chebyshev expansions of the Bessel and Airy kernels: (coefficients c_0..c_n, (a, b)).',
             "", "Written by ``python scripts/fit_special_chebyshev.py``; see there for what each one",
             'approximates."""', ""]
    for name, (coeffs, (a, b)) in tables().items():
        lines.append(f"{name} = ((")
        for i in range(0, len(coeffs), 3):
            lines.append("    " + " ".join(f"{c!r}," for c in coeffs[i:i + 3]))
        lines.append(f"), ({float(a)!r}, {float(b)!r}))")
        print(name, len(coeffs), "terms")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
