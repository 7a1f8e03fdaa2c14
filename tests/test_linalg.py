"""Matrix products: torch's errors, graph node names, and the no-grad fast path."""
import numpy as np
import pytest
import torch

import ember


def _r(lib, *shape, dtype="float32"):
    return lib.ones(*shape, dtype=getattr(lib, dtype))


ERRORS = {
    "dot_size": lambda L: _r(L, 3) @ _r(L, 4),
    "dot_2d": lambda L: L.dot(_r(L, 3, 1), _r(L, 3)),
    "dot_dtype": lambda L: _r(L, 3) @ _r(L, 3, dtype="float64"),
    "dot_bool": lambda L: _r(L, 3, dtype="bool") @ _r(L, 3, dtype="bool"),
    "mv_size": lambda L: _r(L, 2, 3) @ _r(L, 4),
    "mv_dims": lambda L: L.mv(_r(L, 3, 3), _r(L, 3, 1)),
    "mv_dtype": lambda L: L.mv(_r(L, 2, 3), _r(L, 3, dtype="float64")),
    "vm_size": lambda L: _r(L, 4) @ _r(L, 2, 3),
    "mm_size": lambda L: _r(L, 64, 100) @ _r(L, 200, 10),
    "mm_dtype": lambda L: _r(L, 2, 3) @ _r(L, 3, 4, dtype="float64"),
    "mm_dtype_long": lambda L: _r(L, 2, 3, dtype="int64") @ _r(L, 3, 4),
    "mm_dtype_half": lambda L: _r(L, 2, 3) @ _r(L, 3, 4, dtype="float16"),
    "mm_1d": lambda L: L.mm(_r(L, 3), _r(L, 3, 2)),
    "mm_bool": lambda L: _r(L, 2, 3, dtype="bool") @ _r(L, 3, 4, dtype="bool"),
    "bmm_batch": lambda L: L.bmm(_r(L, 2, 2, 3), _r(L, 3, 3, 4)),
    "bmm_inner": lambda L: L.bmm(_r(L, 2, 2, 3), _r(L, 2, 4, 4)),
    "bmm_2d": lambda L: L.bmm(_r(L, 2, 3), _r(L, 2, 3, 4)),
    "bmm_dtype": lambda L: L.bmm(_r(L, 2, 2, 3), _r(L, 2, 3, 4, dtype="float64")),
    "batched_inner": lambda L: _r(L, 5, 2, 3) @ _r(L, 5, 4, 4),
    "batched_bcast": lambda L: _r(L, 5, 2, 3) @ _r(L, 4, 3, 4),
    "3d_2d_inner": lambda L: _r(L, 5, 2, 3) @ _r(L, 4, 4),
    "3d_1d_inner": lambda L: _r(L, 5, 2, 3) @ _r(L, 4),
    "1d_3d_inner": lambda L: _r(L, 4) @ _r(L, 5, 3, 4),
    "0d": lambda L: _r(L) @ _r(L, 3),
    "0d_right": lambda L: L.matmul(_r(L, 3), _r(L)),
    "scalar_operand": lambda L: _r(L, 3) @ 2.0,
    "scalar_left": lambda L: 2.0 @ _r(L, 3),
    "matmul_scalar": lambda L: L.matmul(_r(L, 3), 2.0),
    "addmm_bias": lambda L: L.addmm(_r(L, 2, 5), _r(L, 2, 3), _r(L, 3, 4)),
    "addmm_size": lambda L: L.addmm(_r(L, 2, 4), _r(L, 2, 3), _r(L, 5, 4)),
    "addmm_dtype": lambda L: L.addmm(_r(L, 2, 4, dtype="float64"), _r(L, 2, 3), _r(L, 3, 4)),
    "addmm_mat_dtype": lambda L: L.addmm(_r(L, 2, 4), _r(L, 2, 3, dtype="float64"), _r(L, 3, 4)),
    "addmm_1d": lambda L: L.addmm(_r(L, 2, 4), _r(L, 3), _r(L, 3, 4)),
    "addmv_size": lambda L: L.addmv(_r(L, 2), _r(L, 2, 3), _r(L, 4)),
    "addmv_dtype": lambda L: L.addmv(_r(L, 2, dtype="float64"), _r(L, 2, 3), _r(L, 3)),
    "baddbmm_bias": lambda L: L.baddbmm(_r(L, 2, 2, 5), _r(L, 2, 2, 3), _r(L, 2, 3, 4)),
    "baddbmm_dtype": lambda L: L.baddbmm(_r(L, 2, 2, 4, dtype="float64"), _r(L, 2, 2, 3), _r(L, 2, 3, 4)),
    "addbmm_batch": lambda L: L.addbmm(_r(L, 2, 4), _r(L, 3, 2, 3), _r(L, 2, 3, 4)),
    "addbmm_inner": lambda L: L.addbmm(_r(L, 2, 4), _r(L, 3, 2, 3), _r(L, 3, 4, 4)),
    "outer_2d": lambda L: L.outer(_r(L, 2, 2), _r(L, 3)),
    "inner_last": lambda L: L.inner(_r(L, 2, 3), _r(L, 4)),
    "inner_dtype": lambda L: L.inner(_r(L, 2, 3), _r(L, 4, 3, dtype="float64")),
    "vdot_size": lambda L: L.vdot(_r(L, 3), _r(L, 4)),
    "tensordot_size": lambda L: L.tensordot(_r(L, 2, 3), _r(L, 4, 5), 1),
    "tensordot_lists": lambda L: L.tensordot(_r(L, 2, 3), _r(L, 3, 5), ([1], [0, 1])),
    "einsum_size": lambda L: L.einsum("ij,jk->ik", _r(L, 2, 3), _r(L, 4, 5)),
    "einsum_few": lambda L: L.einsum("ij,jk->ik", _r(L, 2, 3)),
    "einsum_many": lambda L: L.einsum("ij", _r(L, 2, 3), _r(L, 3)),
    "einsum_dtype": lambda L: L.einsum("ij,jk->ik", _r(L, 2, 3), _r(L, 3, 4, dtype="float64")),
    "einsum_out_twice": lambda L: L.einsum("ij->ii", _r(L, 2, 3)),
    "einsum_out_unknown": lambda L: L.einsum("ij->k", _r(L, 2, 3)),
    "einsum_ndim": lambda L: L.einsum("ijk", _r(L, 2, 3)),
    "einsum_char": lambda L: L.einsum("i1", _r(L, 2, 3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_like_torch(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(ember)
    assert str(got.value) == str(expected.value)


def test_failed_product_leaves_inputs_unchanged():
    a, b = ember.ones(2, 3), ember.ones(4, 5)
    with pytest.raises(RuntimeError):
        ember.addmm(ember.zeros(2, 5), a, b)
    assert a.shape == (2, 3) and a._version == 0 and b._version == 0


NODE_CASES = {"1@1": ((3,), (3,)), "2@1": ((2, 3), (3,)), "2@2": ((2, 3), (3, 4)),
              "1@2": ((3,), (3, 4)), "3@3": ((5, 2, 3), (5, 3, 4)), "3@2": ((5, 2, 3), (3, 4)),
              "3@1": ((5, 2, 3), (3,)), "4@3": ((2, 5, 2, 3), (5, 3, 4))}


@pytest.mark.parametrize("case", list(NODE_CASES))
def test_matmul_nodes_are_named_as_torch(case):
    s1, s2 = NODE_CASES[case]
    names = []
    for lib in (torch, ember):
        out = lib.ones(*s1, requires_grad=True) @ lib.ones(*s2, requires_grad=True)
        chain, fn = [], out.grad_fn
        while fn is not None and type(fn).__name__ != "AccumulateGrad":
            # torch's matmul squeezes its one dim in place (SqueezeBackward4), ember's out of place
            chain.append(type(fn).__name__.replace("SqueezeBackward4", "SqueezeBackward1"))
            fn = next((f for f, _ in fn.next_functions if f is not None), None)
        names.append(chain)
    assert names[0] == names[1]


@pytest.mark.parametrize("fn,name", [
    (lambda L, a, b: L.mm(a, b), "MmBackward0"),
    (lambda L, a, b: L.addmm(a, a, b), "AddmmBackward0"),
    (lambda L, a, b: L.bmm(a.unsqueeze(0), b.unsqueeze(0)), "BmmBackward0"),
    (lambda L, a, b: L.baddbmm(a.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0)), "BaddbmmBackward0"),
    (lambda L, a, b: L.mv(a, b[0]), "MvBackward0"),
    (lambda L, a, b: L.dot(a[0], b[0]), "DotBackward0"),
    (lambda L, a, b: L.vdot(a[0], b[0]), "VdotBackward0"),
    (lambda L, a, b: L.outer(a[0], b[0]), "MulBackward0"),
])
def test_node_names(fn, name):
    for lib in (torch, ember):
        a, b = lib.ones(3, 3, requires_grad=True), lib.ones(3, 3, requires_grad=True)
        assert type(fn(lib, a, b).grad_fn).__name__ == name


def test_no_grad_matmul_is_one_backend_call(monkeypatch):
    calls = []
    real = np.matmul

    def counting(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)
    monkeypatch.setattr(np, "matmul", counting)
    out = ember.ones(4, 1, 2, 3) @ ember.ones(5, 3, 2)
    assert out.shape == (4, 5, 2, 2) and len(calls) == 1
    assert not out.requires_grad


def test_low_precision_results_keep_their_dtype():
    for dtype in (ember.float16, ember.bfloat16):
        a = ember.tensor(np.arange(12.0).reshape(3, 4), dtype=dtype)
        for out in (a @ a.mT, ember.einsum("ij,kj->ik", a, a), a[0] @ a[1],
                    ember.addmm(ember.zeros(3, 3, dtype=dtype), a, a.mT)):
            assert out.dtype == dtype


def test_rmatmul_and_method_forms():
    a, b = ember.tensor([[1.0, 2.0], [3.0, 4.0]]), ember.tensor([1.0, -1.0])
    assert (b.__rmatmul__(a)).tolist() == [-1.0, -1.0]
    assert a.matmul(b).tolist() == (a @ b).tolist()
    assert a.__matmul__(2.0) is NotImplemented
