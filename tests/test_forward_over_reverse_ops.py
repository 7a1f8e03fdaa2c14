"""Forward mode over reverse mode on the op table: the tangents of each op's vector-Jacobian
product (its backward formula run on dual tensors) against torch's, and against central finite
differences of ember's vector-Jacobian product where torch has no rule. This is what
``jacfwd(jacrev(f))`` and ``hessian`` compute."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember
import ember.autograd.forward_ad as efw
from op_db import Arg
from op_db.cases import Built, cases

# Ops (as the error names them) whose backward formulas run an op without a forward-mode rule.
NO_JVP_IN_BACKWARD = {}

# Cases where torch gives no tangent for the vector-Jacobian product (it has no forward-mode rule
# for an op its backward formula runs, or refuses the case): finite differences check ember's.
TORCH_LACKS = {
    "scatter_reduce": "torch's backward for reduce='prod' runs scatter_reduce(prod), to which torch "
                      "gives no tangent: its result misses that term",
    "scatter_reduce_": "torch refuses the in-place prod case's double backward",
    "cholesky": "torch has no forward-mode rule for cholesky",
    "special_zeta": "torch has no forward-mode rule for special_zeta",
    "special_gammainc": "torch has no forward-mode rule for igamma",
    "special_gammaincc": "torch has no forward-mode rule for igammac",
    "igamma": "torch has no forward-mode rule for igamma",
    "igammac_method": "torch has no forward-mode rule for igammac",
    "igamma_inplace": "torch has no forward-mode rule for igamma",
    "igammac_inplace": "torch has no forward-mode rule for igammac",
    "index_reduce": "torch has no forward-mode rule for index_reduce",
    "vander": "torch's vander backward reads a tensor it modified in place: torch refuses",
    "triangular_solve": "torch's tangent takes both triangles of A's tangent, though the solve "
                        "reads one (as in test_forward_ad_ops); torch refuses the broadcast case",
    "index_reduce_": "torch has no forward-mode rule for index_reduce_",
    "cholesky_inverse": "torch's tangent differs from finite differences (as in test_forward_ad_ops)",
    "logcumsumexp-wide": "torch's tangent loses precision where one element dominates (as in "
                         "test_forward_ad_ops)",
}

# Cases at points where the second derivative is a convention or where central finite
# differences do not give it (ties, NaN, kinks, an input of which only one triangle is read).
NO_FINITE_DIFFERENCES = {
    "xlogy-zeros", "special_xlog1py-zeros",   # x = 0 at y = 0 (or -1): a NaN one step away
    "nanmean-nan_dim", "nanquantile-nan_higher",   # NaN inputs
    "amax-ties2", "amax-ties2_dim", "amin-ties2", "amin-ties2_dim", "max_all-ties2",
    "min_all-ties2", "cummax_ties-0", "cummin_ties-0", "aminmax-ties",   # ties
    "cholesky_solve-0", "cholesky_solve-upper", "cholesky_solve-broadcast",   # one triangle read
    "frexp-special", "norm_zero_vector-all", "norm_zero_vector-row",   # kinks
    "logit_outside-0",   # outside the domain: NaN
}

# Ops that read one triangle of a matrix input, where torch's tangent takes the whole of the
# input's tangent: their tangents are made symmetric (then both agree, and finite differences too).
SYMMETRIC_TANGENT = {"linalg.eigh_triangle"}


def _cases():
    seen = set()
    for op, sample, case_id, dtype in cases("grad"):
        if dtype != "float64" or case_id in seen:
            continue
        seen.add(case_id)
        yield pytest.param(op, sample, id=case_id)


def _case(op, sample):
    return f"{op.name}-{sample.name or op.samples.index(sample)}"


def _differentiated(sample, args):
    return [a for arg, a in zip(sample.args, args)
            if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None]


def _floating(lib, out):
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, lib.Tensor) and o.is_floating_point()]


def _vjp_tangents(lib, fw, op, sample, built, tangents, cotangent_seed=11, create_graph=False):
    """The vector-Jacobian products of the op's floating outputs (seeded with random
    cotangents) with respect to its differentiated inputs, and their tangents, as arrays."""
    with fw.dual_level():
        _, args = built.make(lib, op, sample, "float64", False)
        it = iter(tangents)
        duals = []
        new_args = []
        for arg, a in zip(sample.args, args):
            if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None:
                a = fw.make_dual(a.detach().requires_grad_(), lib.tensor(next(it), dtype=lib.float64))
                duals.append(a)
            new_args.append(a)
        outs = [o for o in _floating(lib, op.fn(lib, *new_args, **sample.kwargs)) if o.requires_grad]
        if not outs:
            return None
        rng = np.random.default_rng(cotangent_seed)
        cts = [lib.tensor(rng.uniform(-1, 1, tuple(o.shape)), dtype=lib.float64) for o in outs]
        grads = lib.autograd.grad(outs, duals, cts, allow_unused=True, create_graph=create_graph)
        res = []
        for g, d in zip(grads, duals):
            if g is None:
                res.append((np.zeros(tuple(d.shape)), None))
                continue
            p, t = fw.unpack_dual(g)
            res.append((_array(p), None if t is None else _array(t)))
        return res


def _array(t):
    t = t.detach()
    if isinstance(t, torch.Tensor) and t._is_zerotensor():
        return np.zeros(tuple(t.shape))
    return t.numpy().copy()


def _vjp_at(op, sample, built, tangents, sign, eps):
    _, args = built.make(ember, op, sample, "float64", False)
    it = iter(tangents)
    leaves, moved = [], []
    for arg, a in zip(sample.args, args):
        if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None:
            a = (a.detach() + sign * eps * ember.tensor(next(it), dtype=ember.float64)).requires_grad_()
            leaves.append(a)
        moved.append(a)
    outs = [o for o in _floating(ember, op.fn(ember, *moved, **sample.kwargs)) if o.requires_grad]
    rng = np.random.default_rng(11)
    cts = [ember.tensor(rng.uniform(-1, 1, tuple(o.shape)), dtype=ember.float64) for o in outs]
    grads = ember.autograd.grad(outs, leaves, cts, allow_unused=True)
    return [np.zeros(tuple(x.shape)) if g is None else g.numpy() for g, x in zip(grads, leaves)]


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_vjp_tangent(op, sample):
    built = Built(op, sample, "float64")
    rng = np.random.default_rng(7)
    tangents = [rng.uniform(-1, 1, size=np.shape(arr)) for arg, arr in zip(sample.args, built.arrays)
                if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None]
    if op.name in SYMMETRIC_TANGENT:
        tangents = [t + np.swapaxes(t, -1, -2) for t in tangents]
    try:
        got = _vjp_tangents(ember, efw, op, sample, built, tangents)
    except NotImplementedError as e:
        msg = str(e)
        assert msg.startswith("Trying to use forward AD with "), msg
        name = msg.split("Trying to use forward AD with ")[1].split(" ")[0]
        assert name in NO_JVP_IN_BACKWARD, f"{name} has no JVP rule and is not listed"
        return
    if got is None:
        pytest.skip("no differentiable output")
    case = _case(op, sample)
    try:
        expected = _vjp_tangents(torch, tfw, op, sample, built, tangents, create_graph=True)
    except (NotImplementedError, RuntimeError) as e:
        # (an entry without gradgrad: torch has no double backward for it)
        assert not op.gradgrad or case in TORCH_LACKS or op.name in TORCH_LACKS, f"torch refuses: {e}"
        expected = None
    checked = False
    if expected is not None and case not in TORCH_LACKS and op.name not in TORCH_LACKS:
        for i, ((ep, et), (tp, tt)) in enumerate(zip(got, expected)):
            np.testing.assert_allclose(ep, tp, atol=1e-9, rtol=1e-6, err_msg=f"vjp {i}")
            tt = np.zeros_like(tp) if tt is None else tt
            et = np.zeros_like(ep) if et is None else et
            atol = max(op.grad_atol or 0, 1e-8)
            np.testing.assert_allclose(et, tt, atol=atol, rtol=1e-6, err_msg=f"tangent of vjp {i}")
        checked = True
    if op.gradcheck and case not in NO_FINITE_DIFFERENCES:
        eps = 1e-6
        plus = _vjp_at(op, sample, built, tangents, 1, eps)
        minus = _vjp_at(op, sample, built, tangents, -1, eps)
        for i, ((_, et), p, m) in enumerate(zip(got, plus, minus)):
            et = np.zeros_like(p) if et is None else et
            np.testing.assert_allclose(et, (p - m) / (2 * eps), atol=1e-5, rtol=1e-3,
                                       err_msg=f"tangent of vjp {i} against finite differences")
        checked = True
    assert checked, "nothing to compare with"
