"""Forward-mode AD over the op table: every differentiable sample, in float64, gets random
tangents on its tensor inputs; the tangents of its outputs must equal torch's
(``torch.autograd.forward_ad`` on the same inputs and tangents) and central finite differences.
Ops whose nodes have no JVP rule must raise torch's error; they are listed in NO_JVP."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember
import ember.autograd.forward_ad as efw
from op_db import Arg
from op_db.cases import Built, cases

# ember's ops (named as the error names them) whose nodes have no forward-mode rule, and why.
NO_JVP = {}

# Entries whose tangents ember computes where torch has no rule (or refuses the case), or where
# torch's tangent is less exact: finite differences check ember's (test below).
TORCH_DIFFERS = {
    "special_zeta": "torch has no forward-mode rule for special_zeta",
    "special_gammainc": "torch has no forward-mode rule for igamma",
    "special_gammaincc": "torch has no forward-mode rule for igammac",
    "igamma": "torch has no forward-mode rule for igamma",
    "igammac_method": "torch has no forward-mode rule for igammac",
    "igamma_inplace": "torch has no forward-mode rule for igamma",
    "igammac_inplace": "torch has no forward-mode rule for igammac",
    "cdist": "torch has no forward-mode rule for _cdist_forward",
    "pdist": "torch has no forward-mode rule for _pdist_forward",
    "cholesky": "torch has no forward-mode rule for cholesky",
    "index_reduce": "torch has no forward-mode rule for index_reduce",
    "index_reduce_": "torch has no forward-mode rule for index_reduce_",
    "scatter_reduce": "torch gives no tangent for reduce='prod'",
    "scatter_reduce_": "torch gives no tangent for reduce='prod'",
    "triangular_solve": "torch's tangent takes both triangles of A's tangent, though the solve reads "
                        "one; ember's (the backward transposed) matches finite differences",
    "cholesky_inverse": "torch's tangent differs from finite differences (test_forward_ad."
                        "test_cholesky_inverse_tangent) and reads both triangles, though the op "
                        "reads one; ember's matches finite differences",
    "logcumsumexp": "torch's tangent loses precision where one element dominates ('wide' sample); "
                    "ember's matches finite differences",
}

# Cases (entry-sample) at points where the derivative is a convention: NaN inputs, empty inputs.
EDGE_CASES = {
    "max_all-nan": "torch's tangent at a NaN maximum is NaN; ember's is the tangent at its index",
    "logsumexp-empty": "torch's tangent of an empty logsumexp is NaN; ember's is 0",
}

# Cases where central finite differences do not give the derivative (ties, NaN, an input of
# which only one triangle is read); their tangents are checked against torch's above.
NO_FINITE_DIFFERENCES = {
    "frexp-special", "max_all-nan", "max_dim-nan", "min_dim-nan", "logsumexp-empty",
    "as_strided-t", "nanquantile-nan_higher", "median_ties-0", "cummax_ties-0", "cummin_ties-0",
    "linalg.eigh_triangle-0", "linalg.eigh_triangle-1", "cholesky_solve-0", "cholesky_solve-upper",
    "cholesky_solve-broadcast",
}


def _cases():
    seen = set()
    for op, sample, case_id, dtype in cases("grad"):
        if dtype != "float64" or case_id in seen:
            continue
        seen.add(case_id)
        yield pytest.param(op, sample, id=case_id)


def _case(op, sample):
    return f"{op.name}-{sample.name or op.samples.index(sample)}"


def _dual_args(lib, fw, op, sample, built, tangents):
    _, args = built.make(lib, op, sample, "float64", False)
    out = []
    it = iter(tangents)
    for arg, a in zip(sample.args, args):
        if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None:
            a = fw.make_dual(a, lib.tensor(next(it), dtype=lib.float64))
        out.append(a)
    return out


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _forward(lib, fw, op, sample, built, tangents):
    """(primal, tangent) arrays of each floating output, computed at one dual level."""
    with fw.dual_level():
        args = _dual_args(lib, fw, op, sample, built, tangents)
        outs = _outputs(op.fn(lib, *args, **sample.kwargs))
        res = []
        for o in outs:
            if not isinstance(o, lib.Tensor) or not o.is_floating_point():
                continue
            p, t = fw.unpack_dual(o)
            res.append((_array(p), None if t is None else _array(t)))
        return res


def _array(t):
    t = t.detach()
    if isinstance(t, torch.Tensor) and t._is_zerotensor():   # torch's zero tangents
        return np.zeros(tuple(t.shape))
    return t.numpy().copy()


def _tangents(op, sample, built):
    rng = np.random.default_rng(7)
    return [rng.uniform(-1, 1, size=np.shape(arr)) for arg, arr in zip(sample.args, built.arrays)
            if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None]


def _torch_forward(op, sample, built, tangents):
    try:
        return _forward(torch, tfw, op, sample, built, tangents), None
    except (NotImplementedError, RuntimeError) as e:   # torch has no rule, or refuses the case
        return None, e


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_jvp(op, sample):
    """The tangents against torch's and against central finite differences."""
    built = Built(op, sample, "float64")
    tangents = _tangents(op, sample, built)
    if not tangents:
        pytest.skip("no differentiable input")
    expected, torch_error = _torch_forward(op, sample, built, tangents)
    try:
        got = _forward(ember, efw, op, sample, built, tangents)
    except NotImplementedError as e:
        msg = str(e)
        assert msg.startswith("Trying to use forward AD with "), msg
        name = msg.split("Trying to use forward AD with ")[1].split(" ")[0]
        assert name in NO_JVP or torch_error is not None, f"{name} has no JVP rule and is not listed"
        return
    if torch_error is not None:
        assert op.name in TORCH_DIFFERS, f"torch has no JVP here: {torch_error}"
    elif _case(op, sample) in EDGE_CASES:   # ember's convention: a finite tangent
        for (ep, et), (tp, _) in zip(got, expected):
            np.testing.assert_allclose(ep, tp, atol=1e-10, rtol=1e-7)
            assert et is not None and np.all(np.isfinite(et))
    elif op.name not in TORCH_DIFFERS:
        _compare_with_torch(op, got, expected)
    if op.gradcheck and _case(op, sample) not in NO_FINITE_DIFFERENCES:
        numeric = _finite_difference(op, sample, built, tangents)
        for i, ((_, et), fd) in enumerate(zip(got, numeric)):
            et = np.zeros_like(fd) if et is None else et
            np.testing.assert_allclose(et, fd, atol=1e-5, rtol=1e-3,
                                       err_msg=f"tangent of output {i} against finite differences")


def _compare_with_torch(op, got, expected):
    assert len(got) == len(expected)
    for i, ((ep, et), (tp, tt)) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(ep, tp, atol=1e-10, rtol=1e-7, err_msg=f"primal {i}")
        if tt is None or not np.any(tt):
            assert et is None or not np.any(et), f"output {i}: torch gives no tangent"
            continue
        assert et is not None, f"{op.name}: no tangent for output {i}"
        atol = max(op.grad_atol or 0, 1e-9)
        np.testing.assert_allclose(et, tt, atol=atol, rtol=1e-6, err_msg=f"tangent of output {i}")


def _finite_difference(op, sample, built, tangents, eps=1e-6):
    def at(sign):
        _, args = built.make(ember, op, sample, "float64", False)
        it = iter(tangents)
        moved = []
        for arg, a in zip(sample.args, args):
            if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None:
                a = a + sign * eps * ember.tensor(next(it), dtype=ember.float64)
            moved.append(a)
        return [o.numpy() for o in _outputs(op.fn(ember, *moved, **sample.kwargs))
                if isinstance(o, ember.Tensor) and o.is_floating_point()]
    return [(p - m) / (2 * eps) for p, m in zip(at(1), at(-1))]
