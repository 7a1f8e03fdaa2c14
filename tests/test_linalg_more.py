"""ember.linalg's solvers and factorizations beyond the op table: errors as torch raises them,
LAPACK's pivots and info tensors, sizes that take the blocked paths, node names, ``out=`` and
the gradients torch itself cannot compute (checked by finite differences)."""
import math

import numpy as np
import pytest
import torch

import ember


def _same_error(fn):
    """ember raises what torch raises (LinAlgError for torch's LinAlgError), with its message."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    wanted = ember.linalg.LinAlgError if isinstance(expected.value, torch.linalg.LinAlgError) \
        else type(expected.value)
    with pytest.raises(wanted) as got:
        fn(ember)
    assert str(got.value) == str(expected.value)


def _both(array, **kwargs):
    return torch.tensor(array, **kwargs), ember.tensor(array, **kwargs)


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _singular(lib):
    return lib.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]])


def _eye_and_singular(lib):
    return lib.stack([lib.eye(3), _singular(lib)])


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(3, 2)),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(3), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(3, 4), lib.ones(3, 2), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(4, 2), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(3, 2), upper=True, left=False),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3, dtype=lib.int32), lib.ones(3, 2), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3, dtype=lib.float16), lib.ones(3, 2), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(2, 3, 3), lib.ones(3, 3, 2), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(3, 2), upper=True,
                                            out=lib.empty(0, dtype=lib.float64)),
    lambda lib: lib.linalg.lu_factor(lib.ones(3)),
    lambda lib: lib.linalg.lu_factor(lib.ones(3, 3, dtype=lib.int32)),
    lambda lib: lib.linalg.lu_factor(lib.ones(3, 3, dtype=lib.float16)),
    lambda lib: lib.linalg.lu_factor(lib.eye(3), pivot=False),
    lambda lib: lib.linalg.lu_factor(lib.zeros(3, 3)),
    lambda lib: lib.linalg.lu_factor(_singular(lib)),
    lambda lib: lib.linalg.lu_factor(_eye_and_singular(lib)),
    lambda lib: lib.linalg.lu_factor_ex(_eye_and_singular(lib), check_errors=True),
    lambda lib: lib.linalg.lu(lib.ones(3)),
    lambda lib: lib.linalg.lu(lib.ones(3, 3, dtype=lib.int32)),
    lambda lib: lib.linalg.lu(lib.eye(3), pivot=False),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(3)),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(4, 2)),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(4, 2), left=False),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(3, 2, dtype=lib.float64)),
    lambda lib: lib.linalg.lu_solve(lib.linalg.lu_factor(lib.eye(3))[0],
                                    lib.linalg.lu_factor(lib.eye(3))[1].long(), lib.ones(3, 2)),
    lambda lib: lib.linalg.lu_solve(lib.linalg.lu_factor(lib.eye(3))[0],
                                    lib.linalg.lu_factor(lib.eye(3))[1][:2], lib.ones(3, 2)),
    lambda lib: lib.linalg.lu_solve(lib.ones(3, 4), lib.linalg.lu_factor(lib.eye(3))[1], lib.ones(3, 2)),
    lambda lib: lib.linalg.solve_ex(_singular(lib), lib.ones(3, 1), check_errors=True),
    lambda lib: lib.linalg.solve_ex(_eye_and_singular(lib), lib.ones(3, 1), check_errors=True),
    lambda lib: lib.linalg.solve_ex(lib.eye(3), lib.ones(4)),
    lambda lib: lib.linalg.solve_ex(lib.eye(3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.linalg.vecdot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.linalg.vecdot(lib.ones(3, dtype=lib.int32), lib.ones(3, dtype=lib.int32)),
    lambda lib: lib.linalg.vecdot(lib.ones(2, 3), lib.ones(2, 4)),
    lambda lib: lib.linalg.vecdot(lib.ones(2, 3), lib.ones(2, 3), dim=3),
    lambda lib: lib.linalg.diagonal(lib.ones(3)),
    lambda lib: lib.linalg.cond(lib.ones(3)),
    lambda lib: lib.linalg.cond(lib.ones(3, 4), "fro"),
    lambda lib: lib.linalg.cond(lib.ones(3, 4), 1),
    lambda lib: lib.linalg.cond(lib.eye(3), 3),
    lambda lib: lib.linalg.cond(lib.eye(3), "abc"),
    lambda lib: lib.linalg.cond(lib.eye(3, dtype=lib.int32)),
    lambda lib: lib.linalg.cond(lib.eye(3, dtype=lib.int32), 1),
    lambda lib: lib.linalg.tensorinv(lib.ones(4, 6, 8, 3), ind=0),
    lambda lib: lib.linalg.tensorinv(lib.ones(4, 6, 8, 2)),
    lambda lib: lib.linalg.tensorinv(lib.zeros(2, 2, 2, 2)),
    lambda lib: lib.linalg.tensorsolve(lib.ones(2, 3, 6), lib.ones(2, 4)),
    lambda lib: lib.linalg.eig(lib.ones(3, 4)),
    lambda lib: lib.linalg.eig(lib.ones(3)),
    lambda lib: lib.linalg.eigvals(lib.ones(3)),
    lambda lib: lib.linalg.eig(lib.ones(3, 3, dtype=lib.int32)),
    lambda lib: lib.linalg.eigvals(lib.ones(3, 3, dtype=lib.bool)),
    lambda lib: lib.linalg.eig(lib.ones(3, 3, dtype=lib.float16)),
    lambda lib: lib.linalg.eig(lib.full((3, 3), float("nan"))),
    lambda lib: lib.linalg.eig(lib.eye(3), out=(lib.empty(0), lib.empty(0))),
    lambda lib: lib.linalg.eigvals(lib.eye(3), out=lib.empty(0)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3, 4)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.int32)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.float16)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.bfloat16)),
    lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(3)), lib.ones(4, 2)),
    lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(3)), lib.ones(3)),
    lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(3)), lib.ones(3, 2, dtype=lib.float64)),
    lambda lib: lib.linalg.householder_product(lib.ones(3, 4), lib.ones(2)),
    lambda lib: lib.linalg.householder_product(lib.ones(4, 3), lib.ones(4)),
    lambda lib: lib.linalg.householder_product(lib.ones(4), lib.ones(2)),
    lambda lib: lib.linalg.householder_product(lib.ones(2, 4, 3), lib.ones(3, 2)),
    lambda lib: lib.linalg.householder_product(lib.ones(2, 4, 3), lib.ones(2)),
    lambda lib: lib.linalg.householder_product(lib.ones(4, 3), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.linalg.householder_product(lib.ones(4, 3, dtype=lib.int32), lib.ones(2, dtype=lib.int32)),
    lambda lib: lib.linalg.householder_product(lib.ones(4, 3, dtype=lib.float16),
                                               lib.ones(2, dtype=lib.float16)),
])
def test_errors_like_torch(fn):
    _same_error(fn)


@pytest.mark.parametrize("shape", [(70, 70), (3, 70, 70), (2, 70, 45), (2, 45, 70), (100, 33), (5, 5), (0, 0),
                                   (2, 0, 3), (1, 1)])
def test_lu_factor_pivots_and_factors_as_torch(shape):
    """LAPACK's pivots (1-based int32), the same choices as torch's, and P, L, U as torch's,
    over sizes that take the blocked path (more than LU_BLOCK columns) and batches."""
    rng = np.random.default_rng(sum(shape))
    t, e = _both(rng.standard_normal(shape))
    tLU, tpiv, tinfo = torch.linalg.lu_factor_ex(t)
    eLU, epiv, einfo = ember.linalg.lu_factor_ex(e)
    assert epiv.dtype == ember.int32 and einfo.dtype == ember.int32
    np.testing.assert_array_equal(_np(epiv), _np(tpiv))
    np.testing.assert_array_equal(_np(einfo), _np(tinfo))
    np.testing.assert_allclose(_np(eLU), _np(tLU), atol=1e-10)
    for got, want in zip(ember.linalg.lu(e), torch.linalg.lu(t)):
        np.testing.assert_allclose(_np(got), _np(want), atol=1e-10)
    for got, want in zip(ember.lu_unpack(eLU, epiv), torch.lu_unpack(tLU, tpiv)):
        np.testing.assert_allclose(_np(got), _np(want), atol=1e-10)


def test_lu_factor_complex_pivots_as_torch():
    """Complex pivots are chosen by |re| + |im|, as LAPACK's izamax."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 40, 40)) + 1j * rng.standard_normal((2, 40, 40))
    t, e = _both(a)
    tLU, tpiv = torch.linalg.lu_factor(t)
    eLU, epiv = ember.linalg.lu_factor(e)
    np.testing.assert_array_equal(_np(epiv), _np(tpiv))
    np.testing.assert_allclose(_np(eLU), _np(tLU), atol=1e-10)


def test_lu_factor_ex_info_and_zero_pivots():
    for make in (lambda lib: lib.zeros(2, 3, 3), _eye_and_singular,
                 lambda lib: lib.tensor([[0.0, 1.0], [0.0, 2.0]])):
        want = torch.linalg.lu_factor_ex(make(torch))
        got = ember.linalg.lu_factor_ex(make(ember))
        for g, w in zip(got, want):
            np.testing.assert_allclose(_np(g), _np(w), atol=1e-12)
            assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_blocked_batched_and_complex(left, adjoint):
    rng = np.random.default_rng(int(left) * 2 + int(adjoint))
    for a, b in ((rng.standard_normal((2, 70, 70)), rng.standard_normal((3, 1, 70, 4))),
                 (rng.standard_normal((5, 5)) + 1j * rng.standard_normal((5, 5)),
                  rng.standard_normal((5, 2)) + 1j * rng.standard_normal((5, 2)))):
        if not left:
            b = np.swapaxes(b, -1, -2).copy()
        ta, ea = _both(a)
        tb, eb = _both(b)
        want = torch.linalg.lu_solve(*torch.linalg.lu_factor(ta), tb, left=left, adjoint=adjoint)
        got = ember.linalg.lu_solve(*ember.linalg.lu_factor(ea), eb, left=left, adjoint=adjoint)
        np.testing.assert_allclose(_np(got), _np(want), atol=1e-8)


def test_solve_ex_info_and_singular_values():
    """A singular matrix gives torch's infinities and NaNs (substitution through the zero
    pivot) and its info, batch element by batch element."""
    for make in (lambda lib: lib.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=lib.float64),
                 lambda lib: lib.zeros(2, 2, dtype=lib.float64),
                 lambda lib: lib.stack([lib.eye(2, dtype=lib.float64),
                                        lib.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=lib.float64)])):
        for left in (True, False):
            want = torch.linalg.solve_ex(make(torch), torch.ones(1, 2, 2, dtype=torch.float64), left=left)
            got = ember.linalg.solve_ex(make(ember), ember.ones(1, 2, 2, dtype=ember.float64), left=left)
            np.testing.assert_array_equal(_np(got.result), _np(want.result))
            np.testing.assert_array_equal(_np(got.info), _np(want.info))
            assert got.info.dtype == ember.int32


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_blocked_and_dtypes(upper, left):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 70, 70)) + 4 * np.eye(70)
    b = rng.standard_normal((3, 1, 70, 5) if left else (3, 1, 5, 70))
    ta, ea = _both(a)
    tb, eb = torch.tensor(b, dtype=torch.float32), ember.tensor(b, dtype=ember.float32)
    want = torch.linalg.solve_triangular(ta, tb, upper=upper, left=left)
    got = ember.linalg.solve_triangular(ea, eb, upper=upper, left=left)
    assert got.dtype == ember.float64 and want.dtype == torch.float64   # A's dtype
    np.testing.assert_allclose(_np(got), _np(want), atol=1e-10)


def test_node_names_as_torch():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    calls = [
        lambda lib, A, B: lib.linalg.solve_triangular(A, B, upper=True),
        lambda lib, A, B: lib.linalg.lu_factor(A)[0],
        lambda lib, A, B: lib.linalg.lu_factor_ex(A)[0],
        lambda lib, A, B: lib.linalg.lu(A)[1],
        lambda lib, A, B: lib.linalg.lu_solve(*lib.linalg.lu_factor(A), B),
        lambda lib, A, B: lib.linalg.solve_ex(A, B)[0],
        lambda lib, A, B: lib.linalg.matmul(A, B),
        lambda lib, A, B: lib.linalg.vecdot(A, A),
        lambda lib, A, B: lib.linalg.diagonal(A),
        lambda lib, A, B: lib.linalg.cond(A),
        lambda lib, A, B: lib.linalg.cond(A, 1),
        lambda lib, A, B: lib.linalg.tensorsolve(A, B[:, 0]),
        lambda lib, A, B: lib.linalg.householder_product(A, B[:, 0]),
    ]
    for call in calls:
        names = []
        for lib in (torch, ember):
            A = lib.tensor(a, requires_grad=True)
            B = lib.tensor(b, requires_grad=True)
            names.append(call(lib, A, B).grad_fn.name())
        assert names[1] == names[0]
    assert ember.linalg.lu(ember.tensor(a, requires_grad=True)).P.grad_fn is None


@pytest.mark.parametrize("p", [1, -1, math.inf, -math.inf, "fro"])
def test_cond_through_inverse_gradcheck(p):
    """torch's backward through these orders fails (it fills its inverse in place after
    autograd saved it); ember's gradient is checked by finite differences."""
    rng = np.random.default_rng(1)
    a = ember.tensor(rng.standard_normal((2, 3, 3)) + 3 * np.eye(3), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: ember.linalg.cond(x, p), (a,))


def test_out_and_named_results():
    rng = np.random.default_rng(2)
    a = ember.tensor(rng.standard_normal((4, 4)))
    LU, piv = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int32)
    result = ember.linalg.lu_factor(a, out=(LU, piv))
    assert result.LU is LU and result.pivots is piv
    np.testing.assert_array_equal(_np(piv), _np(torch.linalg.lu_factor(torch.tensor(_np(a))).pivots))
    x = ember.empty(0, dtype=ember.float64)
    assert ember.linalg.solve_triangular(a, a, upper=True, out=x) is x
    assert type(ember.linalg.lu(a)).__name__ == "linalg_lu"
    assert type(ember.linalg.solve_ex(a, a)).__name__ == "linalg_solve_ex"
    assert set(ember.linalg.common_notes) == set(torch.linalg.common_notes)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (70, 70), (2, 30, 30)])
@pytest.mark.parametrize("complex_input", [False, True])
def test_eig_as_torch(shape, complex_input):
    """Eigenvalues in torch's order, eigenvectors with geev's normalization (unit norm, the
    largest component of a complex eigenvector real): torch's up to the sign MKL's geev gives
    some complex eigenvectors of a real matrix (equal to torch's for a complex matrix); and
    A V = V diag(w)."""
    rng = np.random.default_rng(len(shape) + shape[-1])
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if complex_input else 0)
    t, e = _both(a)
    tw, tv = torch.linalg.eig(t)
    ew, ev = ember.linalg.eig(e)
    assert ew.dtype == ember.complex128 and ev.dtype == ember.complex128
    np.testing.assert_allclose(_np(ew), _np(tw), atol=1e-10)
    largest = np.argmax(np.abs(_np(ev)), axis=-2)[..., None, :]
    assert np.abs(np.take_along_axis(_np(ev), largest, axis=-2).imag).max() < 1e-12
    sign = 1 if complex_input else np.sign(np.take_along_axis(_np(tv) * _np(ev).conj(), largest, axis=-2).real)
    np.testing.assert_allclose(_np(ev) * sign, _np(tv), atol=1e-8)
    np.testing.assert_allclose(a @ _np(ev), _np(ev) * _np(ew)[..., None, :], atol=1e-10)
    np.testing.assert_allclose(_np(ember.linalg.eigvals(e)), _np(tw), atol=1e-10)


def test_eig_of_float32_is_complex64_and_refuses_gradients():
    a = ember.tensor(np.random.default_rng(0).standard_normal((3, 3)), dtype=ember.float32, requires_grad=True)
    with ember.no_grad():
        w, v = ember.linalg.eig(a)
    assert w.dtype == ember.complex64 and v.dtype == ember.complex64
    for fn in (ember.linalg.eig, ember.linalg.eigvals):
        with pytest.raises(NotImplementedError, match="complex tensors"):
            fn(a)


@pytest.mark.parametrize("n", [1, 6, 40, 70])
@pytest.mark.parametrize("kind", ["real", "complex_symmetric", "hermitian"])
def test_ldl_factor_and_solve_as_torch(n, kind):
    """Bunch-Kaufman pivoting as LAPACK's sytrf / hetrf: the same pivots (2 x 2 blocks
    included) and LD as torch's, and ldl_solve's solution; uneven scales give more 2 x 2 blocks."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((2, n, n)) + (0 if kind == "real" else 1j * rng.standard_normal((2, n, n)))
    a = a * np.abs(rng.standard_normal((2, 1, n))) ** 2
    hermitian = kind == "hermitian"
    a = a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))
    b = rng.standard_normal((2, n, 2)) + (0 if kind == "real" else 1j)
    t, e = _both(a)
    tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(t, hermitian=hermitian)
    eLD, epiv, einfo = ember.linalg.ldl_factor_ex(e, hermitian=hermitian)
    assert epiv.dtype == ember.int32 and einfo.dtype == ember.int32
    np.testing.assert_array_equal(_np(epiv), _np(tpiv))
    np.testing.assert_array_equal(_np(einfo), _np(tinfo))
    np.testing.assert_allclose(_np(eLD), _np(tLD), atol=1e-10)
    want = torch.linalg.ldl_solve(tLD, tpiv, torch.tensor(b), hermitian=hermitian)
    got = ember.linalg.ldl_solve(eLD, epiv, ember.tensor(b), hermitian=hermitian)
    np.testing.assert_allclose(_np(got), _np(want), atol=1e-8)
    np.testing.assert_allclose(a @ _np(got), b, atol=1e-8)
    # batch dimensions that broadcast (torch's ldl_solve crashes on them): against NumPy
    wide = rng.standard_normal((3, 1, n, 2)) + (0 if kind == "real" else 1j)
    got = ember.linalg.ldl_solve(eLD, epiv, ember.tensor(wide), hermitian=hermitian)
    np.testing.assert_allclose(_np(got), np.linalg.solve(a, wide), atol=1e-8)


def test_ldl_singular_info_and_no_gradient():
    want = torch.linalg.ldl_factor_ex(torch.zeros(3, 3))
    got = ember.linalg.ldl_factor_ex(ember.zeros(3, 3))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(_np(g), _np(w))
    # torch fails an internal assert here; ember says what is wrong
    with pytest.raises(RuntimeError, match="exactly singular"):
        ember.linalg.ldl_factor(ember.zeros(3, 3))
    for lib in (torch, ember):
        a = lib.eye(3, requires_grad=True)
        LD, pivots = lib.linalg.ldl_factor(a * 2)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            LD.sum().backward()
        x = lib.linalg.ldl_solve(LD, pivots, lib.ones(3, 1, requires_grad=True))
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"):
            x.sum().backward()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_large_inverse_and_solve_by_factors_match_torch(dtype, batch, monkeypatch):
    """From orders ``FACTORED_INVERSE_MIN_ORDER`` and ``FACTORED_SOLVE_MIN_ORDER`` inv, inv_ex and
    solve run as getrf's factors and two triangular solves: torch's values and gradients; a
    singular matrix still raises torch's error, and inv_ex reports it."""
    from ember.ops import matrix_decompositions
    factored = []
    original = matrix_decompositions._factored_solve
    monkeypatch.setattr(matrix_decompositions, "_factored_solve",
                        lambda a, b: factored.append(original(a, b) is not None) or original(a, b))
    n = max(matrix_decompositions.FACTORED_SOLVE_MIN_ORDER, matrix_decompositions.FACTORED_INVERSE_MIN_ORDER) + 5
    rng = np.random.default_rng(3)
    a = rng.standard_normal(batch + (n, n)) + 2 * math.sqrt(n) * np.eye(n)   # well conditioned
    b = rng.standard_normal(batch + (n, 7))
    g = rng.standard_normal(batch + (n, n))
    tolerance = {"rtol": 2e-4, "atol": 2e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-11}
    results = []
    for lib in (torch, ember):
        A = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        B = lib.tensor(b, dtype=getattr(lib, dtype))
        inverse = lib.linalg.inv(A)
        solution = lib.linalg.solve(A, B)
        (inverse * lib.tensor(g, dtype=A.dtype)).sum().backward(retain_graph=True)
        results.append((_np(inverse), _np(solution), _np(lib.linalg.inv_ex(A).inverse), _np(A.grad)))
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, **tolerance)
    assert factored and all(factored)
    singular = np.array(a[..., :n, :n])
    singular[..., 3, :] = singular[..., 5, :]
    singular[..., :, 0] = 0.0
    _same_error(lambda lib: lib.linalg.inv(lib.tensor(singular, dtype=getattr(lib, dtype))))
    _same_error(lambda lib: lib.linalg.solve(lib.tensor(singular, dtype=getattr(lib, dtype)),
                                             lib.tensor(b, dtype=getattr(lib, dtype))))
    info = [_np(lib.linalg.inv_ex(lib.tensor(singular, dtype=getattr(lib, dtype))).info) for lib in (torch, ember)]
    np.testing.assert_array_equal(info[1], info[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_determinants_from_the_compiled_lu_match_torch(dtype, monkeypatch, spy):
    """det, slogdet and logdet from the compiled LU's diagonal and pivots (every size here:
    ``DET_BY_LU_MIN_WORK`` 0): torch's values and gradients, and its signs, zeros and -inf for
    singular matrices."""
    from ember.ops import lu, matrix_decompositions
    monkeypatch.setattr(matrix_decompositions, "DET_BY_LU_MIN_WORK", 0)
    rng = np.random.default_rng(21)
    singular = rng.standard_normal((3, 6, 6))
    singular[:, :, 2] = 0   # (an exact zero pivot, whatever the rounding)
    cases = [rng.standard_normal((70, 70)) / 8, rng.standard_normal((3, 5, 5)), -np.eye(3),
             np.zeros((2, 4, 4)), singular]
    tolerance = {"rtol": 1e-3, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-12}
    for a in cases:
        taken = spy(lu, "getrf_compiled")
        for name in ("det", "slogdet", "logdet"):
            results = []
            for lib in (torch, ember):
                A = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
                out = getattr(lib.linalg, name)(A) if name != "logdet" else lib.logdet(A)
                values = [_np(v) for v in (out if name == "slogdet" else (out,))]
                invertible = np.all(np.abs(np.linalg.det(a)) > 1e-9)
                if invertible and np.all(np.isfinite(values[-1])):
                    (out[1] if name == "slogdet" else out).sum().backward()
                    values.append(_np(A.grad))
                results.append(values)
            for want, got in zip(*results):
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
                np.testing.assert_allclose(got, want, **tolerance)
        assert taken


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cholesky_on_the_recursive_loop_matches_torch(dtype, spy):
    """Real matrices on the compiled recursive factorization (70 rows: halves, solves and
    products; 5 and 1: rows alone): torch's factor and gradient, its upper triangle not read;
    a matrix that is not positive-definite (a negative or NaN diagonal past the first half)
    gives torch's error, with the order of the leading minor, and cholesky_ex's info."""
    from ember._backend import openmp_kernels
    rng = np.random.default_rng(22)
    tolerance = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    for shape in [(70, 70), (3, 5, 5), (1, 1)]:
        x = rng.standard_normal(shape)
        a = x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])
        a = np.tril(a) + np.triu(rng.standard_normal(shape), 1)   # (above the diagonal: not read)
        taken = spy(openmp_kernels, "potrf_recursive")
        results = []
        for lib in (torch, ember):
            A = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
            factor = lib.linalg.cholesky(A)
            factor.sum().backward()
            results.append((_np(factor), _np(A.grad)))
        assert taken
        for want, got in zip(*results):
            np.testing.assert_allclose(got, want, **tolerance)
    for bad in (-1.0, np.nan):
        a = np.eye(70)
        a[40, 40] = bad
        _same_error(lambda lib: lib.linalg.cholesky(lib.tensor(a, dtype=getattr(lib, dtype))))
        info = [_np(lib.linalg.cholesky_ex(lib.tensor(a, dtype=getattr(lib, dtype))).info) for lib in (torch, ember)]
        np.testing.assert_array_equal(info[1], info[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_on_lapack_in_its_own_precision_matches_torch(dtype, mode, spy):
    """Real matrices go to LAPACK's geqrf and orgqr in their own dtype at every size (NumPy's qr
    computes float32 in float64): torch's Q and R (LAPACK's signs), tall, wide and batched, and the
    gradient through both."""
    from ember._backend import lapack
    if not (lapack._GEQRF and lapack._ORGQR):
        pytest.skip("NumPy's LAPACK not found")
    rng = np.random.default_rng(23)
    tolerance = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    for shape in [(40, 9), (6, 11), (3, 5, 5), (5, 3), (1, 1)]:
        a = rng.standard_normal(shape)
        taken = spy(lapack, "qr")
        results = []
        for lib in (torch, ember):
            A = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
            Q, R = lib.linalg.qr(A, mode=mode)
            got = [_np(R)] + ([] if mode == "r" else [_np(Q)])
            if mode == "reduced" or (mode == "complete" and shape[-2] <= shape[-1]):
                (Q.sum() + R.sum()).backward()
                got.append(_np(A.grad))
            results.append(got)
        assert len(taken) == 1
        for want, got in zip(*results):
            np.testing.assert_allclose(got, want, **tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_and_eigh_on_lapack_in_their_own_precision_match_torch(dtype):
    """Real matrices go to LAPACK's gesdd and syevd in their own dtype at every size (NumPy's svd
    and eigh compute float32 in float64; from the Python path's ``lapack.gesdd`` and ``syevd``, or
    from the compiled functions, which call the same drivers and whose tests check the route): torch's
    singular values and eigenvalues, and factors that rebuild the matrix (singular vectors and
    eigenvectors are each defined up to sign); the triangle eigh does not read is not read."""
    from ember._backend import lapack
    if not (lapack._GESDD and lapack._SYEVD):
        pytest.skip("NumPy's LAPACK not found")
    rng = np.random.default_rng(24)
    tolerance = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-10}
    for shape in [(40, 9), (6, 11), (3, 5, 5), (4, 4)]:
        a = rng.standard_normal(shape)
        U, S, Vh = ember.linalg.svd(ember.tensor(a, dtype=getattr(ember, dtype)), full_matrices=False)
        values = ember.linalg.svdvals(ember.tensor(a, dtype=getattr(ember, dtype)))
        want = torch.linalg.svdvals(torch.tensor(a, dtype=getattr(torch, dtype))).numpy()
        np.testing.assert_allclose(_np(S), want, **tolerance)
        np.testing.assert_allclose(_np(values), want, **tolerance)
        np.testing.assert_allclose(_np(U) * _np(S)[..., None, :] @ _np(Vh), a, **tolerance)
    for uplo, shape in (("L", (2, 30, 30)), ("U", (2, 30, 30)), ("L", (4, 4)), ("U", (3, 3))):
        x = rng.standard_normal(shape)
        a = x + np.swapaxes(x, -1, -2)
        read = np.tril(a) if uplo == "L" else np.triu(a)
        noise = rng.standard_normal(a.shape)
        a = read + (np.triu(noise, 1) if uplo == "L" else np.tril(noise, -1))   # (not read)
        w, V = ember.linalg.eigh(ember.tensor(a, dtype=getattr(ember, dtype)), UPLO=uplo)
        want = torch.linalg.eigvalsh(torch.tensor(a, dtype=getattr(torch, dtype)), UPLO=uplo).numpy()
        np.testing.assert_allclose(_np(w), want, **tolerance)
        symmetric = read + np.swapaxes(np.tril(read, -1) if uplo == "L" else np.triu(read, 1), -1, -2)
        np.testing.assert_allclose(_np(V) * _np(w)[..., None, :] @ np.swapaxes(_np(V), -1, -2), symmetric,
                                   **tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eig_on_lapack_in_its_own_precision_matches_torch(dtype, spy):
    """Real matrices go to LAPACK's geev in their own dtype at every size (NumPy's eig computes
    float32 in float64): torch's eigenvalues (as a set: the order LAPACK's QR iteration leaves
    them in depends on rounding), eigenvectors of unit length that satisfy A v = v w, complex
    pairs unpacked from geev's real and imaginary columns, each complex eigenvalue's turned so
    that its first component of largest magnitude is real and positive (NumPy's path turns them
    the same way)."""
    from ember._backend import lapack
    from ember.ops import eig
    if not lapack._GEEV:
        pytest.skip("NumPy's LAPACK not found")
    rng = np.random.default_rng(25)
    tolerance = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-10}
    for shape in [(9, 9), (3, 5, 5), (4, 4)]:
        a = rng.standard_normal(shape)
        taken = spy(lapack, "geev")
        w, v = ember.linalg.eig(ember.tensor(a, dtype=getattr(ember, dtype)))
        values = ember.linalg.eigvals(ember.tensor(a, dtype=getattr(ember, dtype)))
        assert len(taken) == 2
        want = torch.linalg.eigvals(torch.tensor(a, dtype=getattr(torch, dtype))).numpy()
        w, v = _np(w), _np(v)
        assert np.iscomplexobj(w) and (w.imag != 0).any()   # (complex pairs among them)
        for got in (w, _np(values)):
            np.testing.assert_allclose(np.sort_complex(got.reshape(-1, shape[-1])),
                                       np.sort_complex(want.reshape(-1, shape[-1])), **tolerance)
        np.testing.assert_allclose(a @ v, v * w[..., None, :], **tolerance)
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, **tolerance)
        numpy_w, numpy_v = np.linalg.eig(a.astype(dtype))
        numpy_v = eig._largest_component_real(np, numpy_v, numpy_w.imag != 0)
        for got_w, got_v, want_w, want_v in zip(w.reshape(-1, shape[-1]), v.reshape(-1, *shape[-2:]),
                                                 numpy_w.reshape(-1, shape[-1]), numpy_v.reshape(-1, *shape[-2:])):
            for j in np.flatnonzero(got_w.imag != 0):
                match = np.argmin(np.abs(want_w - got_w[j]))
                np.testing.assert_allclose(got_v[:, j], want_v[:, match], **tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_householder_product_gradient_on_arrays_matches_torch(dtype, spy):
    """The gradient on the arrays (one L_i and one R_i array updated in place, no list of the
    k products): torch's, for a batch with fewer reflectors than columns; with create_graph the
    ember-op backward runs and gives the same."""
    from ember.ops import householder
    rng = np.random.default_rng(26)
    a = rng.standard_normal((2, 40, 30)) * 0.3
    k = 20
    heads = np.triu(np.swapaxes(a[..., :k], -1, -2), 1)
    tau = 2 / (1 + (heads ** 2).sum(-1))   # (orthogonal reflectors: the product stays bounded)
    g = rng.standard_normal((2, 40, 30))
    tolerance = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    results = []
    for lib, create_graph in ((torch, False), (ember, False), (ember, True)):
        A = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        t = lib.tensor(tau, dtype=getattr(lib, dtype), requires_grad=True)
        taken = spy(householder, "_householder_gradient")
        q = lib.linalg.householder_product(A, t)
        grads = lib.autograd.grad(q, (A, t), lib.tensor(g, dtype=getattr(lib, dtype)), create_graph=create_graph)
        if lib is ember:
            assert len(taken) == (0 if create_graph else 2)
        results.append([_np(x) for x in grads])
    for got in results[1:]:
        for w, x in zip(results[0], got):
            np.testing.assert_allclose(x, w, **tolerance)


def test_lu_unpack_records_torch_s_node_and_gradient():
    """L and U come from one LuUnpackBackward0 (torch's node; P has no gradient), whose gradient
    places L's below the diagonal and U's on and above it, for tall, wide and batched factors,
    and again with a graph of the backward."""
    rng = np.random.default_rng(27)
    for shape in [(5, 3), (3, 5), (2, 4, 4)]:
        a = rng.standard_normal(shape)
        results = []
        for lib in (torch, ember):
            A = lib.tensor(a, requires_grad=True)
            LU, pivots = lib.linalg.lu_factor(A)
            P, L, U = lib.lu_unpack(LU, pivots)
            assert type(L.grad_fn).__name__ == type(U.grad_fn).__name__ == "LuUnpackBackward0"
            assert L.grad_fn is U.grad_fn and not P.requires_grad
            (grad,) = lib.autograd.grad((L ** 2).sum() + (U ** 3).sum(), A, create_graph=True)
            (second,) = lib.autograd.grad(grad.sum(), A)
            results.append([_np(x) for x in (P, L, U, grad, second)])
        for want, got in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
