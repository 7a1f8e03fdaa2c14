"""Whole-array update kernels shared by the optimizers, written with ``out=`` (or as one BLAS
call) so that an update allocates nothing; each mirrors the rounding order of the torch op it
stands for."""
from .._backend import cblas, namespace_of, openmp_kernels
from .._backend.choice import KernelChoice

# Elements from which ``add_scaled_`` and ``decay_add_`` call BLAS: below, the ctypes call
# costs more than NumPy's two passes.
BLAS_MIN_SIZE = 8192



def lerp_(xp, state, end, weight, tmp):
    """``state.lerp_(end, weight)`` with torch's two-sided formula."""
    xp.subtract(end, state, out=tmp)
    if weight < 0.5:
        tmp *= weight
        state += tmp
    else:
        tmp *= 1 - weight
        xp.subtract(end, tmp, out=state)


def decay_add_square_(xp, state, decay, grad, value, tmp):
    """``state.mul_(decay).addcmul_(grad, grad, value=value)``."""
    state *= decay
    xp.multiply(grad, value, out=tmp)
    tmp *= grad
    state += tmp


def add_weight_decay(xp, seg, weight_decay, tmp):
    """``grad = grad.add(param, alpha=weight_decay)`` (on the gathered gradient copy)."""
    xp.multiply(seg.param(), weight_decay, out=tmp)
    seg.grad += tmp


def decay_params(seg, factor):
    """``param.mul_(factor)`` (decoupled weight decay)."""
    p = seg.param()
    p *= factor


def runs_on_blas(array):
    """Whether ``add_scaled_`` and ``decay_add_`` run on BLAS for (contiguous) arrays like
    ``array``."""
    return cblas.supports(array)


# Large float32 updates on two threads or more run as OpenMP loops where oneDNN's threads run
# (OpenBLAS, which then keeps to one thread, does the rest).
_add_scaled = KernelChoice("add scaled", onednn=openmp_kernels.add_scaled,
                           numpy=lambda target, alpha, x: cblas.axpy(alpha, x, target))
_decay_add = KernelChoice("decay add", onednn=openmp_kernels.decay_add,
                          numpy=lambda state, decay, x: cblas.axpby(1.0, x, decay, state))


def add_scaled_(xp, target, alpha, x):
    """``target.add_(x, alpha=alpha)``: one fused pass on large contiguous float32/float64
    NumPy arrays (one rounding per element, as torch's kernel, where the loop or BLAS kernel
    fuses), else ``target += x * alpha`` through a temporary."""
    if x.size < BLAS_MIN_SIZE or not _add_scaled(target, alpha, x):
        target += xp.multiply(x, alpha)


def decay_add_(xp, state, decay, x):
    """``state.mul_(decay).add_(x)``: one pass where a loop or BLAS applies, else two ufuncs."""
    if x.size < BLAS_MIN_SIZE or not _decay_add(state, decay, x):
        state *= decay
        state += x


def _numpy_adam_moments_and_step(grad, exp_avg, exp_avg_sq, tmp, beta1, beta2,
                                 bias_correction2_sqrt, eps, step_size):
    xp = namespace_of(grad)
    lerp_(xp, exp_avg, grad, 1 - beta1, tmp)
    decay_add_square_(xp, exp_avg_sq, beta2, grad, 1 - beta2, tmp)
    denom = xp.sqrt(exp_avg_sq, out=tmp)
    denom /= bias_correction2_sqrt
    denom += eps
    update = xp.divide(exp_avg, denom, out=tmp)
    update *= step_size
    return update


# Large float32 updates run as one OpenMP loop where oneDNN's threads run (the same roundings).
_adam_moments_and_step = KernelChoice("adam update", onednn=openmp_kernels.adam_update,
                                      numpy=_numpy_adam_moments_and_step)


def adam_moments_and_step(grad, exp_avg, exp_avg_sq, tmp, beta1, beta2, bias_correction2_sqrt,
                          eps, step_size):
    """Adam's moments in place (``exp_avg.lerp_(grad, 1 - beta1)``,
    ``exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)``), then its step
    ``exp_avg / (exp_avg_sq.sqrt() / bias_correction2_sqrt + eps) * step_size``, returned in
    ``tmp``."""
    return _adam_moments_and_step(grad, exp_avg, exp_avg_sq, tmp, beta1, beta2,
                                  bias_correction2_sqrt, eps, step_size)
