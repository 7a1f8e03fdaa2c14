"""``gradcheck`` and ``gradgradcheck``: analytic gradients against finite differences."""
import numpy as np

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytic and numerical Jacobians disagree."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_inputs(inputs):
    from .._tensor import Tensor
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs(fn, inputs):
    from .._tensor import Tensor
    return [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor)]


def _as_reals(data):
    """An array's values as float64s, a complex element as its real and imaginary parts: the
    real coordinates the Jacobians are taken in."""
    if data.dtype.kind == "c":
        data = np.stack([data.real, data.imag], -1)
    return data.astype(np.float64).reshape(-1)


def _real_size(t):
    return t._data.size * (2 if t._data.dtype.kind == "c" else 1)


def _output_values(fn, inputs):
    return [_as_reals(o._data) for o in _outputs(fn, inputs)]


def _numerical_jacobians(fn, inputs, eps):
    """For each differentiable input and each output: a (numel_in, numel_out) matrix of central
    differences. Each input element is perturbed in place (any strides), with grad mode off."""
    from .grad_mode import no_grad
    with no_grad():
        return [_numerical_jacobian(fn, inputs, i, eps) for i in _diff_inputs(inputs)]


def _numerical_jacobian(fn, inputs, i, eps):
    data = inputs[i]._data
    steps = (eps, eps * 1j) if data.dtype.kind == "c" else (eps,)   # each real coordinate
    rows = []
    for index in np.ndindex(data.shape):
        orig = data[index].copy()
        for step in steps:
            data[index] = orig + step
            plus = _output_values(fn, inputs)
            data[index] = orig - step
            minus = _output_values(fn, inputs)
            data[index] = orig
            rows.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    sizes = [_real_size(o) for o in _outputs(fn, inputs)]
    return [np.array([r[j] for r in rows]).reshape(len(rows), size) for j, size in enumerate(sizes)]


def _analytical_jacobians(fn, inputs):
    from . import grad as autograd_grad
    from ..ops.creation import zeros_like
    diff = _diff_inputs(inputs)
    outs = _outputs(fn, inputs)
    jacs = [[np.zeros((_real_size(inputs[i]), _real_size(o))) for o in outs] for i in diff]
    for j, out in enumerate(outs):
        if not out.requires_grad:
            continue
        # a complex output's real and imaginary parts are two real outputs; torch's convention
        # gives the gradient of Im(out) as that of the output gradient 1j
        parts = (1, 1j) if out._data.dtype.kind == "c" else (1,)
        for k in range(out._data.size):
            for p, part in enumerate(parts):
                g = zeros_like(out)
                g._data.reshape(-1)[k] = part
                grads = autograd_grad([out], [inputs[i] for i in diff], [g], retain_graph=True,
                                      allow_unused=True)
                for n, gr in enumerate(grads):
                    if gr is not None:
                        jacs[n][j][:, k * len(parts) + p] = _as_reals(gr._data)
    return jacs


def _forward_jacobians(fn, inputs):
    """The same matrices from forward mode: one dual evaluation per input element, with that
    element's basis tangent."""
    from . import forward_ad
    from ..ops.creation import zeros_like
    diff = _diff_inputs(inputs)
    jacs = []
    for i in diff:
        size = inputs[i]._data.size
        rows = []
        for k in range(size):
            with forward_ad.dual_level():
                tangent = zeros_like(inputs[i])
                tangent._data.reshape(-1)[k] = 1
                duals = list(inputs)
                duals[i] = forward_ad.make_dual(inputs[i], tangent)
                outs = _outputs(fn, duals)
                row = []
                for o in outs:
                    t = forward_ad.unpack_dual(o).tangent
                    row.append(np.zeros(o._data.size) if t is None
                               else t._data.astype(np.float64).reshape(-1))
            rows.append(row)
        sizes = [o._data.size for o in _outputs(fn, inputs)]
        jacs.append([np.array([r[j] for r in rows]).reshape(size, s) for j, s in enumerate(sizes)])
    return jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check gradients computed via small finite differences against analytical gradients
    w.r.t. tensors in ``inputs`` that are floating point or complex and have
    ``requires_grad=True``. Complex inputs and outputs are checked as pairs of real numbers
    (real and imaginary parts), with torch's convention for the gradient of a complex input."""
    inputs = _as_tuple(inputs)
    for t in inputs:
        if hasattr(t, "requires_grad") and t.requires_grad and t.dtype.itemsize < 8 and not t.is_complex():
            import warnings
            warnings.warn(f"Input #{inputs.index(t)} requires gradient and is not a double precision "
                          "floating point. This check will likely fail if all the inputs are not of "
                          "double precision floating point.", UserWarning, stacklevel=2)
    if not _diff_inputs(inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none "
                         "of the them have requires_grad=True.")
    numerical = _numerical_jacobians(func, inputs, eps)
    checks = []
    if check_backward_ad:
        checks.append(("Jacobian mismatch", _analytical_jacobians(func, inputs)))
    if check_forward_ad:
        checks.append(("Jacobian computed with forward mode mismatch", _forward_jacobians(func, inputs)))
    for what, analytical in checks:
        for n, (num_i, ana_i) in enumerate(zip(numerical, analytical)):
            for j, (a, b) in enumerate(zip(num_i, ana_i)):
                if not np.allclose(b, a, rtol=rtol, atol=atol, equal_nan=True):
                    if not raise_exception:
                        return False
                    raise GradcheckError(f"{what} for output {j} with respect to input {n},\n"
                                         f"numerical:{_as_tensor(a)}\nanalytical:{_as_tensor(b)}\n")
    return True


def _as_tensor(jacobian):
    from ..ops.creation import tensor
    return tensor(jacobian, dtype=jacobian.dtype)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second-order gradients: gradcheck of the function that maps inputs (and
    grad_outputs) to the first-order gradients computed with ``create_graph=True``."""
    from . import grad as autograd_grad
    from .grad_mode import enable_grad
    from ..ops.creation import tensor
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(tensor(rng.standard_normal(o._data.shape), dtype=o.dtype, requires_grad=True)
                             for o in outs if o.requires_grad)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_order(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():
            outs = [o for o in _outputs(func, ins) if o.requires_grad]
            grads = autograd_grad(outs, [ins[i] for i in diff], gos, create_graph=True,
                                  allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
