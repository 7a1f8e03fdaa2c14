"""``grad_fn._saved_<name>`` and ``_raw_saved_<name>`` named and valued as torch's, over the op
table: for every output node whose class declares its saved fields, each of torch's ``_saved_*``
attributes must be there with an equal value (tensors by value)."""
import numpy as np
import pytest
import torch

import ember
from op_db.cases import Built, backward_inputs, cases

# (node, field): why ember's node has no such value
EXCEPTIONS = {
    ("ErfinvBackward0", "self"): "ember's gradient of erfinv is written with its result, which it "
                                 "saves instead of the input",
    ("GatherBackward0", "self"): "ember's gather backward needs only the input's shape, not the input",
}
# (op, node): ops whose graph is built from other steps than torch's, so that the same node
# saw other values
OP_EXCEPTIONS = {
    ("matmul", "UnsafeViewBackward0"): "ember folds a 1-D operand of a batched product otherwise",
    ("matmul_operator", "UnsafeViewBackward0"): "as matmul",
    ("linalg.matmul", "UnsafeViewBackward0"): "as matmul",
    ("inner", "ViewBackward0"): "ember's inner of 1-D tensors reshapes otherwise",
    ("linalg.svd", "MmBackward0"): "singular vectors are unique only up to sign, and ember's "
                                   "LAPACK results have another memory layout",
    ("linalg.svd", "AbsBackward0"): "as linalg.svd's MmBackward0",
    ("svd", "AbsBackward0"): "as linalg.svd's MmBackward0",
    ("svd", "MmBackward0"): "as linalg.svd's MmBackward0",
    ("linalg.eigh", "AbsBackward0"): "eigenvectors are unique only up to sign",
    ("linalg.eigh", "MmBackward0"): "eigenvectors are unique only up to sign",
}
# (case id before its dtype): samples whose graph torch builds in more steps than ember
MULTI_STEP = "torch indexes one dim at a time (a node per step), ember in one step: the node " \
             "saw another input"
CASE_EXCEPTIONS = {
    "getitem-slice_int": MULTI_STEP, "getitem-none_ellipsis": MULTI_STEP,
    "getitem-negative": MULTI_STEP, "getitem_step-0": MULTI_STEP, "index_two-0": MULTI_STEP,
    "index_none_ellipsis-0": MULTI_STEP, "index_mask_row-0": MULTI_STEP,
    "index_mask-0": "torch keeps a boolean mask, ember its nonzero positions (as it indexes)",
    "index_mask-nc": "as index_mask-0",
    "tensor_split-indices_past": "torch keeps the split points as passed, ember clamped to the "
                                 "size",
    "tensor_split-negative": "torch keeps the split points as passed, ember wrapped",
    "masked_scatter_-bcast_mask": "torch keeps the mask as passed, ember broadcast to the input",
}
# fields torch keeps as passed where ember keeps the value they stand for: (torch's, ember's)
AS_PASSED = {"correction": (None, 1)}
# dims: torch keeps them as passed (a negative one reads back as 2**64 + d, and () for "all"),
# ember keeps them wrapped to the input's rank
DIM_FIELDS = {("SumBackward1", "dim"), ("MeanBackward1", "dim"), ("TransposeBackward0", "dim0"),
              ("TransposeBackward0", "dim1"), ("CatBackward0", "dim"), ("SoftmaxBackward0", "dim"),
              ("LogSoftmaxBackward0", "dim"), ("PermuteBackward0", "dims"),
              ("FlipBackward0", "dims"), ("CumsumBackward0", "dim"), ("AmaxBackward0", "dim"),
              ("AminBackward0", "dim"), ("LogsumexpBackward0", "dim"), ("MaxBackward0", "dim"),
              ("MinBackward0", "dim"), ("GatherBackward0", "dim"), ("StackBackward0", "dim"),
              ("UnbindBackward0", "dim"), ("SortBackward0", "dim"), ("TopkBackward0", "dim"),
              ("KthvalueBackward0", "dim"), ("MedianBackward1", "dim"),
              ("NanmedianBackward1", "dim"), ("ModeBackward0", "dim"),
              ("SelectBackward0", "dim"), ("SliceBackward0", "dim"), ("SplitBackward0", "dim"),
              ("SplitWithSizesBackward0", "dim"), ("IndexSelectBackward0", "dim"),
              ("VarBackward0", "dim"), ("StdBackward0", "dim"), ("VarMeanBackward0", "dim"),
              ("StdMeanBackward0", "dim"), ("LinalgVectorNormBackward0", "dim")}


# fields of any node that name dims
DIM_NAMES = {"dim", "dims", "dim0", "dim1", "dim2", "dimension"}


def _signed(d):
    return d - 2 ** 64 if d >= 2 ** 63 else d


def _same_dims(t, e):
    """torch's dims as passed against ember's wrapped (and, for several, sorted) ones."""
    if t is None:
        return isinstance(e, tuple) and e == tuple(range(len(e)))
    if not isinstance(t, tuple) and isinstance(e, tuple) and len(e) == 1:
        t = (t,)   # one dim: torch keeps it as passed, ember as the dims it reduces
    if not isinstance(t, tuple):
        t = _signed(t)
        return t == e or (t < 0 <= e)
    t = tuple(map(_signed, t))
    if t == () or t is None:   # None: all dims, as passed
        return e == tuple(range(len(e)))
    if e == ():   # a 0-d input: its one dim is 0 or -1
        return all(d in (0, -1) for d in t)
    return len(set(t)) == len(e) and all(d < 0 or d in e for d in t)


def _value(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return _signed(v)   # torch reads a negative int64 back as an unsigned one
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        return ("tensor", tuple(v.shape), np.asarray(v.detach().double().tolist()))
    if isinstance(v, (list, tuple)):
        return tuple(_value(x) for x in v)
    return v


def _same(a, b):
    if isinstance(a, tuple) and a[:1] == ("tensor",):
        return isinstance(b, tuple) and b[:1] == ("tensor",) and a[1] == b[1] and np.allclose(
            a[2], b[2], equal_nan=True, atol=1e-6, rtol=1e-5)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _walk_op_table():
    compared, undeclared, failures = 0, set(), []
    seen = set()
    for op, sample, case_id, dtype in cases("grad"):
        if dtype != "float64" or (op.name, id(sample)) in seen:
            continue
        seen.add((op.name, id(sample)))
        built = Built(op, sample, dtype)
        try:
            _, touts, _ = backward_inputs(torch, op, sample, dtype, built)
            _, eouts, _ = backward_inputs(ember, op, sample, dtype, built)
        except Exception:   # the op table's own tests report these
            continue
        for t, e in zip(touts, eouts):
            tfn, efn = t.grad_fn, e.grad_fn
            if tfn is None or efn is None or type(tfn).__name__ != type(efn).__name__:
                continue
            fields = type(efn).saved_fields
            for attr in dir(tfn):
                if not attr.startswith("_saved_"):
                    continue
                name = attr[len("_saved_"):]
                if not fields:
                    undeclared.add(type(efn).__name__)
                    continue
                if (type(efn).__name__, name) in EXCEPTIONS or \
                        (op.name, type(efn).__name__) in OP_EXCEPTIONS or \
                        case_id.rsplit("-", 1)[0] in CASE_EXCEPTIONS:
                    continue
                if name not in fields:
                    failures.append(f"{case_id}: {type(efn).__name__} has no {attr}")
                    continue
                if getattr(fields[name], "not_kept", False):
                    with pytest.raises(NotImplementedError, match=name):
                        getattr(efn, attr)
                    continue
                tv, ev = _value(getattr(tfn, attr)), _value(getattr(efn, attr))
                compared += 1
                if AS_PASSED.get(name) == (tv, ev):
                    continue
                if (type(efn).__name__, name) in DIM_FIELDS or name in DIM_NAMES:
                    if not _same_dims(tv, ev):
                        failures.append(f"{case_id}: {type(efn).__name__}.{attr}: torch {tv!r} ember {ev!r}")
                elif not _same(tv, ev):
                    failures.append(f"{case_id}: {type(efn).__name__}.{attr}: torch {tv!r} ember {ev!r}")
    return compared, undeclared, failures


def test_saved_fields_match_torch_over_the_op_table():
    compared, undeclared, failures = _walk_op_table()
    assert not failures, "\n".join(failures[:40])
    assert compared > 100


def test_raw_saved_register_hooks_as_torch():
    out = {}
    for lib in (torch, ember):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        packed = []
        y.grad_fn._raw_saved_result.register_hooks(lambda t: packed.append(t) or "key",
                                                   lambda key: packed[0] * 2)
        with pytest.raises(RuntimeError, match="already been set"):
            y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
        y.sum().backward()
        out[lib] = (len(packed), x.grad.tolist())
    assert out[ember][0] == out[torch][0] == 1
    np.testing.assert_allclose(out[ember][1], out[torch][1], rtol=1e-6)


def test_hooked_node_keeps_version_checks_of_other_saved_tensors():
    for lib in (torch, ember):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        a2, b2 = a * 1, b * 1
        y = a2 * b2
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        with lib.no_grad():
            b2.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_saved_fields_after_backward_are_freed():
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        y = x.exp()
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.grad_fn._saved_result
        assert not hasattr(y.grad_fn, "_saved_nonexistent")
