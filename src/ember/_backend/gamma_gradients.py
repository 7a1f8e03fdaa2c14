"""Reparameterised gradients of gamma and beta samples, as torch computes them.

For a sample ``x`` of Gamma(alpha, 1) the implicit reparameterisation gives
``dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha)`` (F the CDF, f the density); for Beta and
Dirichlet samples the same holds with the Beta CDF. torch evaluates these with series for small
``x``, saddle-point (Rice) expansions for large parameters and fitted rational corrections
elsewhere (Jankowiak and Obermeyer, "Pathwise Derivatives Beyond the Reparameterization
Trick", 2018); these are the same approximations, vectorised over arrays of namespace ``xp``
(NumPy or CuPy) in float64. On NumPy arrays they run as ``special_loops``' compiled loops, each
element taking its own branch, where a C compiler is found.
"""
import contextlib

from .special import digamma as _digamma, on_compiled_loop


def _quiet(xp):
    """Floating-point warnings off (the branches are evaluated where they do not apply too)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


def standard_gamma_grad(xp, alpha, x):
    """d x / d alpha for samples ``x`` of Gamma(alpha, 1) (broadcast), in float64."""
    alpha, x = alpha.astype(xp.float64), x.astype(xp.float64)
    if getattr(xp, "__name__", "") == "numpy":
        return _standard_gamma_grad_choice(xp, alpha, x)
    return _standard_gamma_grad_arrays(xp, alpha, x)


def _standard_gamma_grad_arrays(xp, alpha, x):
    alpha, x = xp.broadcast_arrays(alpha, x)
    out = xp.empty(x.shape, dtype=xp.float64)
    small = x < 0.8
    large = ~small & (alpha > 8.0)
    mid = ~small & ~large
    with _quiet(xp):
        if small.any():
            out[small] = _gamma_grad_small(xp, alpha[small], x[small])
        if large.any():
            out[large] = _gamma_grad_large(xp, alpha[large], x[large])
        if mid.any():
            out[mid] = _gamma_grad_rational(xp, alpha[mid], x[mid])
    return out


def _gamma_grad_small(xp, alpha, x):
    """Taylor series of the gamma CDF in x."""
    numer = xp.ones_like(x)
    denom = alpha.copy()
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** alpha
    pdf = x ** (alpha - 1) * xp.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (xp.log(x) - _digamma(xp, alpha)) * cdf - pow_x_alpha * series2
    result = -cdf_alpha / pdf
    return xp.where(xp.isnan(result), 0.0, result)


def _gamma_grad_large(xp, alpha, x):
    """Rice saddle-point expansion for alpha > 8."""
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
               + alpha * (107 + 3600 * x))
    at_mean = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = xp.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * xp.log(x / alpha)) ** -1.5
    term23 = xp.where(x < alpha, term2 - term3, term2 + term3)
    term1 = xp.log(x / alpha) * term23 - xp.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    away = -stirling * x * term1 / denom
    return xp.where(near, at_mean, away)


_GAMMA_UV = [  # coefficients of the rational fit, by power of u
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
     -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
     0.00085092367, -1.5247877e-07],
]


def _gamma_grad_rational(xp, alpha, x):
    """A bivariate rational approximation in log(x / alpha) and log(alpha)."""
    table = xp.asarray(_GAMMA_UV)
    u = xp.log(x / alpha)[:, None]
    v = xp.log(alpha)
    c = table[0] + u * (table[1] + u * table[2])
    p = c[:, 0] + v * (c[:, 1] + v * (c[:, 2] + v * c[:, 3]))
    q = c[:, 4] + v * (c[:, 5] + v * (c[:, 6] + v * c[:, 7]))
    return xp.exp(p / q)


def dirichlet_grad(xp, x, alpha, total):
    """The scaled reparameterised gradient ``-(dF/dalpha) / f / (1 - x)`` of a Beta(alpha,
    total - alpha) sample ``x`` (F the Beta CDF, f its density), elementwise in float64."""
    x, alpha, total = (a.astype(xp.float64) for a in (x, alpha, total))
    if getattr(xp, "__name__", "") == "numpy":
        return _dirichlet_grad_choice(xp, x, alpha, total)
    return _dirichlet_grad_arrays(xp, x, alpha, total)


def _dirichlet_grad_arrays(xp, x, alpha, total):
    x, alpha, total = xp.broadcast_arrays(x, alpha, total)
    beta = total - alpha
    boundary = total * x * (1 - x)
    out = xp.empty(x.shape, dtype=xp.float64)
    near_0 = (x <= 0.5) & (boundary < 2.5)
    near_1 = ~near_0 & (x >= 0.5) & (boundary < 0.75)
    both_large = ~near_0 & ~near_1 & (alpha > 6) & (beta > 6)
    rest = ~near_0 & ~near_1 & ~both_large
    with _quiet(xp):
        if near_0.any():
            out[near_0] = _beta_grad_alpha_small(xp, x[near_0], alpha[near_0], beta[near_0])
        if near_1.any():
            out[near_1] = -_beta_grad_beta_small(xp, 1 - x[near_1], beta[near_1], alpha[near_1])
        if both_large.any():
            out[both_large] = _beta_grad_alpha_mid(xp, x[both_large], alpha[both_large], beta[both_large])
        if rest.any():
            out[rest] = _beta_grad_rational(xp, x[rest], alpha[rest], total[rest])
    return out


def _beta_grad_alpha_small(xp, x, alpha, beta):
    factor = _digamma(xp, alpha) - _digamma(xp, alpha + beta) - xp.log(x)
    numer = xp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return xp.where(xp.isnan(result), 0.0, result)


def _beta_grad_beta_small(xp, x, alpha, beta):
    factor = _digamma(xp, alpha + beta) - _digamma(xp, beta)
    numer = xp.ones_like(x)
    betas = xp.ones_like(x)
    dbetas = xp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return xp.where(xp.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(xp, x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = xp.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / xp.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = xp.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * xp.log(alpha / (total * x))
    term3 = xp.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = beta * xp.log(beta / (total * (1 - x))) + alpha * xp.log(alpha / (total * x))
    term4 = term4_base ** -1.5
    term1234 = term1 + term2 * (term3 + xp.where(x < mean, term4, -term4))
    return xp.where(near, at_mean, stirling * prefactor * term1234)


_BETA_C = [  # numerator and denominator coefficients, by power of u, a and b
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
]


def _beta_grad_rational(xp, x, alpha, total):
    """A rational correction in (log x, log alpha - log x, log total - ...) to an analytic
    approximation."""
    u = xp.log(x)
    a = xp.log(alpha) - u
    b = xp.log(total) - a
    pow_u = (xp.ones_like(u), u, u * u)
    pow_a = (xp.ones_like(a), a, a * a)
    table = xp.asarray(_BETA_C)
    p = xp.zeros_like(x)
    q = xp.zeros_like(x)
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = table[0, i, j], table[1, i, j]
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = x * (_digamma(xp, total) - _digamma(xp, alpha)) / (total - alpha)
    return p / q * approx


_standard_gamma_grad_choice = on_compiled_loop("standard_gamma_grad", _standard_gamma_grad_arrays,
                                               loop="two_arguments")
_dirichlet_grad_choice = on_compiled_loop("dirichlet_grad", _dirichlet_grad_arrays, loop="three_arguments")
