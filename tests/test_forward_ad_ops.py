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

# ember's ops (named as the error names them) without a forward-mode rule, and why.
NO_JVP = {
}

# Entries where torch itself has no forward-mode rule: ember must raise as well, or (for these
# names) may compute one (listed here with why ember's is right: checked by finite differences).
TORCH_WITHOUT_JVP_EMBER_HAS = {
}


def _cases():
    seen = set()
    for op, sample, case_id, dtype in cases("grad"):
        if dtype != "float64" or case_id in seen:
            continue
        seen.add(case_id)
        yield pytest.param(op, sample, id=case_id)


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
            res.append((p.detach().numpy().copy(), None if t is None else t.detach().numpy().copy()))
        return res


def _tangents(op, sample, built):
    rng = np.random.default_rng(7)
    return [rng.uniform(-1, 1, size=np.shape(arr)) for arg, arr in zip(sample.args, built.arrays)
            if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None]


def _torch_forward(op, sample, built, tangents):
    try:
        return _forward(torch, tfw, op, sample, built, tangents), None
    except NotImplementedError as e:
        return None, e


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_jvp_matches_torch(op, sample):
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
        assert op.name in TORCH_WITHOUT_JVP_EMBER_HAS, f"torch has no JVP here: {torch_error}"
        return
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


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_jvp_matches_finite_differences(op, sample):
    if not op.gradcheck:
        pytest.skip("the entry opts out of finite differences")
    built = Built(op, sample, "float64")
    tangents = _tangents(op, sample, built)
    if not tangents:
        pytest.skip("no differentiable input")
    try:
        got = _forward(ember, efw, op, sample, built, tangents)
    except NotImplementedError:
        pytest.skip("no JVP rule (test_jvp_matches_torch checks the error)")
    numeric = _finite_difference(op, sample, built, tangents)
    for i, ((_, et), fd) in enumerate(zip(got, numeric)):
        et = np.zeros_like(fd) if et is None else et
        np.testing.assert_allclose(et, fd, atol=1e-5, rtol=1e-3, err_msg=f"tangent of output {i}")
