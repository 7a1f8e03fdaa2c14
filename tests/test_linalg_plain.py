"""ember.linalg beyond the op table: errors as torch raises them, named results, the
``_ex`` variants' info, node names, and the outputs that the generic tests do not compare."""
import math

import numpy as np
import pytest
import torch

import ember


def _same_error(fn):
    """ember raises what torch raises: LinAlgError where torch raises its LinAlgError, the same
    exception type otherwise, and the same message."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    wanted = ember.linalg.LinAlgError if isinstance(expected.value, torch.linalg.LinAlgError) \
        else type(expected.value)
    with pytest.raises(wanted) as got:
        fn(ember)
    assert str(got.value) == str(expected.value)


def _singular(lib, batched=False):
    a = lib.eye(3)
    if batched:
        a = lib.stack([lib.eye(3), lib.tensor([[1.0, 2, 3], [2, 4, 6], [0, 0, 1]])])
    else:
        a = lib.tensor([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 0]])
    return a


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.inv(_singular(lib)),
    lambda lib: lib.linalg.inv(_singular(lib, batched=True)),
    lambda lib: lib.inverse(_singular(lib)),
    lambda lib: lib.linalg.inv(lib.zeros(2, 3)),
    lambda lib: lib.linalg.inv(lib.zeros(3)),
    lambda lib: lib.linalg.inv(lib.zeros(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.inv(lib.eye(2, dtype=lib.float16)),
    lambda lib: lib.linalg.det(lib.zeros(2, 3)),
    lambda lib: lib.linalg.slogdet(lib.zeros(2, 3)),
    lambda lib: lib.linalg.solve(_singular(lib), lib.ones(3)),
    lambda lib: lib.linalg.solve(_singular(lib, batched=True), lib.ones(2, 3, 1)),
    lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(4)),
    lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(2, 4)),
    lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(3), left=False),
    lambda lib: lib.linalg.cholesky(-lib.eye(3)),
    lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 2], [2, 1]])),
    lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2), -lib.eye(2)])),
    lambda lib: lib.cholesky(-lib.eye(3)),
    lambda lib: lib.linalg.cholesky(lib.zeros(2, 3)),
    lambda lib: lib.linalg.eigh(lib.zeros(2, 3)),
    lambda lib: lib.linalg.eigh(lib.eye(3), UPLO="X"),
    lambda lib: lib.linalg.eigh(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.svd(lib.zeros(3)),
    lambda lib: lib.linalg.qr(lib.zeros(3)),
    lambda lib: lib.linalg.qr(lib.zeros(3, 3), mode="x"),
    lambda lib: lib.linalg.matrix_power(lib.zeros(2, 3), 2),
    lambda lib: lib.linalg.matrix_power(_singular(lib), -1),
    lambda lib: lib.linalg.cross(lib.zeros(3, 2), lib.zeros(3, 2)),
    lambda lib: lib.linalg.cross(lib.zeros(2, 3), lib.zeros(3)),
    lambda lib: lib.linalg.lstsq(lib.zeros(3, 3), lib.zeros(4, 2)),
    lambda lib: lib.linalg.matrix_norm(lib.zeros(3)),
    lambda lib: lib.linalg.matrix_norm(lib.zeros(3, 3), 3),
    lambda lib: lib.linalg.matrix_norm(lib.zeros(3, 3), "abc"),
    lambda lib: lib.linalg.norm(lib.ones(3, 3, 3), ord=2),
    lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.linalg.pinv(lib.zeros(3)),
    lambda lib: lib.linalg.multi_dot([lib.zeros(3)]),
    lambda lib: lib.linalg.multi_dot([lib.zeros(2, 3, 3), lib.zeros(3)]),
    lambda lib: lib.linalg.matrix_rank(lib.zeros(3)),
    lambda lib: lib.linalg.vander(lib.zeros(3), N=0),
    lambda lib: lib.cdist(lib.zeros(3), lib.zeros(3)),
    lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 4)),
    lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 3), p=-1),
    lambda lib: lib.cdist(lib.ones(3, 2, dtype=lib.int64), lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: lib.pdist(lib.ones(3)),
])
def test_errors_like_torch(fn):
    _same_error(fn)


def test_linalg_error_is_a_runtime_error():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


def test_failed_op_leaves_input_unchanged():
    a = ember.tensor([[1.0, 2.0], [2.0, 4.0]])
    before = a.tolist()
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(a)
    assert a.tolist() == before and a._version == 0


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)


def test_ex_variants_report_info_like_torch():
    for make in (lambda lib: _singular(lib), lambda lib: _singular(lib, batched=True)):
        e, t = ember.linalg.inv_ex(make(ember)), torch.linalg.inv_ex(make(torch))
        assert e.info.dtype == ember.int32 and _np(e.info).tolist() == _np(t.info).tolist()
        ok = _np(t.info) == 0
        np.testing.assert_allclose(_np(e.inverse)[ok], _np(t.inverse)[ok], rtol=1e-6)
    spd = [[4.0, 1.0], [1.0, 3.0]]
    for lib in (ember, torch):
        bad = lib.stack([lib.tensor(spd), lib.tensor([[1.0, 2.0], [2.0, 1.0]])])
        res = lib.linalg.cholesky_ex(bad)
        assert _np(res.info).tolist() == [0, 2]
        np.testing.assert_allclose(_np(res.L)[0], np.linalg.cholesky(np.array(spd)), rtol=1e-6)
    with pytest.raises(ember.linalg.LinAlgError, match="singular"):
        ember.linalg.inv_ex(_singular(ember), check_errors=True)


def test_named_results():
    a = ember.tensor([[2.0, 1.0], [1.0, 3.0]])
    assert ember.linalg.slogdet(a)._fields == ("sign", "logabsdet")
    assert ember.linalg.qr(a)._fields == ("Q", "R")
    assert ember.linalg.svd(a)._fields == ("U", "S", "Vh")
    assert ember.svd(a)._fields == ("U", "S", "V")
    assert ember.linalg.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert ember.linalg.lstsq(a, a)._fields == ("solution", "residuals", "rank", "singular_values")
    assert ember.linalg.inv_ex(a)._fields == ("inverse", "info")
    assert ember.linalg.cholesky_ex(a)._fields == ("L", "info")
    assert "ember.return_types.linalg_slogdet(" in repr(ember.linalg.slogdet(a))


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_outputs_like_torch(driver):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    e = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for ev, tv in zip(e, t):
        assert tuple(ev.shape) == tuple(tv.shape) and str(ev.dtype)[6:] == str(tv.dtype)[6:]
        np.testing.assert_allclose(_np(ev), _np(tv), rtol=1e-6, atol=1e-9)


def test_node_names_like_torch():
    a = ember.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True)
    t = torch.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True)
    cases = [
        lambda lib, x: lib.linalg.inv(x), lambda lib, x: lib.linalg.det(x),
        lambda lib, x: lib.linalg.slogdet(x)[1], lambda lib, x: lib.linalg.solve(x, x),
        lambda lib, x: lib.linalg.cholesky(x), lambda lib, x: lib.cholesky(x),
        lambda lib, x: lib.linalg.qr(x)[0], lambda lib, x: lib.linalg.svd(x)[1],
        lambda lib, x: lib.linalg.svdvals(x), lambda lib, x: lib.linalg.eigh(x)[1],
        lambda lib, x: lib.linalg.eigvalsh(x), lambda lib, x: lib.linalg.pinv(x),
        lambda lib, x: lib.linalg.cross(x[:, :1].expand(2, 3), x[:, :1].expand(2, 3)),
        lambda lib, x: lib.cdist(x, x), lambda lib, x: lib.linalg.matrix_norm(x, "nuc"),
        lambda lib, x: lib.linalg.matrix_norm(x, 2), lambda lib, x: lib.linalg.norm(x),
    ]
    for fn in cases:
        assert type(fn(ember, a).grad_fn).__name__ == type(fn(torch, t).grad_fn).__name__


def test_qr_backward_errors_like_torch():
    for mode, shape in (("r", (3, 3)), ("complete", (4, 3))):
        msgs = []
        for lib in (torch, ember):
            x = lib.ones(*shape, requires_grad=True)
            x = x + lib.eye(*shape)
            Q, R = lib.linalg.qr(x, mode=mode)
            with pytest.raises(RuntimeError) as err:
                R.sum().backward()
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1]


def test_matrix_rank_and_top_level_aliases():
    rank_deficient = ember.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])
    assert ember.linalg.matrix_rank(rank_deficient).item() == 2
    assert ember.linalg.matrix_rank(rank_deficient).dtype == ember.int64
    assert ember.linalg.matrix_rank(rank_deficient, tol=10.0).item() == 0
    a = ember.tensor([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(_np(a.inverse() @ a), np.eye(2), atol=1e-6)
    assert abs(a.det().item() - 5.0) < 1e-5
    np.testing.assert_allclose(_np(a.pinverse()), np.linalg.pinv(_np(a)), rtol=1e-5)
    assert math.isnan(ember.logdet(ember.tensor([[-1.0, 0.0], [0.0, 1.0]])).item())
    assert abs(ember.dist(ember.ones(3), ember.zeros(3)).item() - math.sqrt(3)) < 1e-6


def test_svd_without_uv_zero_fills_like_torch():
    x = np.random.default_rng(1).standard_normal((4, 3))
    e, t = ember.svd(ember.tensor(x), compute_uv=False), torch.svd(torch.tensor(x), compute_uv=False)
    for ev, tv in zip(e, t):
        assert tuple(ev.shape) == tuple(tv.shape)
        np.testing.assert_allclose(_np(ev), _np(tv), atol=1e-12)


def test_cholesky_second_order_matches_torch():
    """A hessian through cholesky, inv and det combined: each backward is differentiable."""
    x = np.random.default_rng(2).standard_normal((3, 3))
    results = []
    for lib in (torch, ember):
        a = lib.tensor(x, requires_grad=True)
        spd = a @ a.mT + 3 * lib.eye(3, dtype=lib.float64)
        out = lib.linalg.cholesky(spd).sum() + lib.linalg.inv(spd).pow(2).sum() + lib.linalg.det(spd)
        (g,) = lib.autograd.grad(out, a, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), a)
        results.append(_np(gg))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-7)


def _cofactors(m):
    """The cofactor matrix from its definition: signed determinants of the minors."""
    n = m.shape[0]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(m, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


def test_det_gradient_is_the_cofactor_matrix_also_where_singular():
    """The gradient of det is the cofactor matrix, also where A is singular (no inverse).
    torch computes det(A) A^-H through the LU factors there, so on an exactly singular matrix
    its gradient depends on whether rounding leaves a zero pivot (0, or the cofactors);
    the singular case is checked against the definition, the invertible one against torch."""
    singular = np.array([[1.0, 2, 3], [2, 4, 6], [0, 1, 1]])
    invertible = np.array([[2.0, 1, 0], [1, 3, 0], [0, 0, 1]])
    a = ember.tensor(np.stack([singular, invertible]), requires_grad=True)
    ember.linalg.det(a).sum().backward()
    np.testing.assert_allclose(_np(a.grad)[0], _cofactors(singular), atol=1e-12)
    t = torch.tensor(invertible, requires_grad=True)
    torch.linalg.det(t).backward()
    np.testing.assert_allclose(_np(a.grad)[1], _np(t.grad), atol=1e-12)


@pytest.mark.parametrize("layout", ["C", "F", "strided", "broadcast"])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
@pytest.mark.parametrize("path", ["recursive", "blas"])
def test_triangular_substitution_matches_torch(layout, upper, transpose, unitriangular, path, spy,
                                               monkeypatch):
    """Real float64 batches go to the compiled recursive solve (``path`` "recursive"; 9 rows:
    substitution alone, 70: halves and products) or, where it is not built, to BLAS's trsm for
    small batches (each layout of the matrix as row-major BLAS takes it, or copied): torch's
    solution, also through a zero on the diagonal (infinities and NaNs)."""
    from ember._backend import cblas, openmp_kernels
    from ember.ops import triangular
    if path == "blas":
        if not cblas._TRSM:
            pytest.skip("NumPy's BLAS has no trsm")
        monkeypatch.setattr(openmp_kernels, "_RECURSIVE_TRSMS", {})
    elif not openmp_kernels.available():
        pytest.skip("no compiled loops here")
    rng = np.random.default_rng(11)
    for n in (9, 70):
        a = rng.standard_normal((2, n, n)) + 4 * np.eye(n)
        a = {"C": a, "F": np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2),
             "strided": np.repeat(a, 2, axis=-1)[..., ::2], "broadcast": np.broadcast_to(a[:1], a.shape)}[layout]
        b = rng.standard_normal((2, n, 3))
        for zero_diagonal in (False, True):
            if zero_diagonal:
                a = a.copy()
                a[0, 4, 4] = 0
            taken = spy(openmp_kernels, "trsm_recursive")
            got = triangular._substitute(b, a, upper, transpose, unitriangular)
            if path == "blas":
                solved = np.array(np.broadcast_to(b, got.shape))
                assert cblas.trsm(a, solved, upper, transpose, unitriangular)   # (the path taken)
                np.testing.assert_array_equal(solved, got)
            else:
                assert len(taken) == 1
            t = torch.from_numpy(np.ascontiguousarray(a))
            want = torch.linalg.solve_triangular(t.mT if transpose else t, torch.from_numpy(b),
                                                 upper=upper != transpose, unitriangular=unitriangular).numpy()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            finite = np.isfinite(want)
            np.testing.assert_array_equal(np.isfinite(got), finite)
            np.testing.assert_allclose(got[finite], want[finite], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape", [(6, 4, 3), (2, 5, 5, 5), (9, 4, 2), (40, 3, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_householder_product_on_lapack_and_on_arrays_match_torch(shape, dtype, monkeypatch):
    """Batches of at most n matrices on LAPACK's orgqr, larger ones on the arrays: each torch's."""
    from ember._backend import lapack
    *batch, m, n, k = shape
    rng = np.random.default_rng(12)
    a = rng.standard_normal((*batch, m, n)).astype(dtype)
    tau = rng.uniform(0.2, 1.8, (*batch, k)).astype(dtype)
    want = torch.linalg.householder_product(torch.from_numpy(a), torch.from_numpy(tau)).numpy()
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    if lapack._ORGQR and math.prod(batch) <= n and k > 1:
        assert lapack.orgqr(a.reshape(-1, m, n), tau.reshape(-1, k)) is not None
    for with_lapack in (True, False):
        if not with_lapack:
            monkeypatch.setattr(lapack, "_ORGQR", {})
        got = ember.linalg.householder_product(ember.from_numpy(a), ember.from_numpy(tau)).numpy()
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("shapes", [((6, 4), (6, 2)), ((3, 5), (3,)), ((2, 5, 5), (2, 5, 3)), ((7, 2), (7, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lstsq_by_gelsy_without_a_gradient_matches_torch(shapes, dtype, spy):
    """Nothing recorded: LAPACK's gelsy, torch's default driver (solution and rank); with a
    gradient wanted, the differentiable path: the same values."""
    from ember._backend import lapack
    rng = np.random.default_rng(13)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    want = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b))
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    for requires_grad in (False, True):
        taken = spy(lapack, "gelsy")
        got = ember.linalg.lstsq(ember.tensor(a, requires_grad=requires_grad), ember.from_numpy(b))
        assert len(taken) == (not requires_grad and bool(lapack._GELSY))
        np.testing.assert_allclose(got.solution.detach().numpy(), want.solution.numpy(), rtol=tolerance,
                                   atol=tolerance)
        assert got.rank.tolist() == want.rank.tolist() and got.residuals.shape == want.residuals.shape
    if lapack._GELSY:   # (the routine answered, rather than leaving the case to pinv)
        m, n = a.shape[-2:]
        rhs = b if b.ndim == a.ndim else b[..., None]
        assert lapack.gelsy(a.reshape(-1, m, n), rhs.reshape(-1, m, rhs.shape[-1]), 1e-6) is not None


@pytest.mark.parametrize("shapes", [((6, 4), (6, 2)), ((3, 5), (3,)), ((2, 5, 5), (2, 5, 3)), ((7, 2), (7, 1)),
                                    ((5, 3), (5,)), ((2, 5, 3), (2, 5)), ((6, 3), (6, 2), "rank_deficient")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("driver", ["gelsd", "gelss"])
def test_lstsq_by_gelsd_and_gelss_without_a_gradient_matches_torch(shapes, dtype, driver, spy):
    """Nothing recorded: LAPACK's gelsd or gelss, as torch's CPU lstsq with that driver (solution, residuals
    where m > n and the rank is full, a vector's keeping their last dim, rank and singular values); with a
    gradient wanted, the differentiable path: the same values and shapes."""
    from ember._backend import lapack
    rng = np.random.default_rng(19)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes[:2])
    if len(shapes) > 2:
        a[:, 2] = a[:, 1]
    want = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver=driver)
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    routines = lapack._GELSD if driver == "gelsd" else lapack._GELSS
    for requires_grad in (False, True):
        taken = spy(lapack, "svd_least_squares")
        got = ember.linalg.lstsq(ember.tensor(a, requires_grad=requires_grad), ember.from_numpy(b), driver=driver)
        assert len(taken) == (not requires_grad and bool(routines))
        for g, w in zip(got, want):
            assert g.shape == tuple(w.shape) and str(g.dtype)[6:] == str(w.dtype)[6:]
            np.testing.assert_allclose(g.detach().numpy(), w.numpy(), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ldl_solve_on_lapack_sytrs_matches_torch_and_leaves_malformed_pivots_to_the_arrays(dtype, spy):
    """sytrf's pivots (2 x 2 blocks among them) go to LAPACK's sytrs: torch's solution; pivots
    sytrs would read past the matrix with (a block at the last row) stay on the array path."""
    from ember._backend import lapack
    rng = np.random.default_rng(14)
    a = rng.standard_normal((2, 7, 7)).astype(dtype)
    a = a + np.swapaxes(a, -1, -2)
    b = rng.standard_normal((2, 7, 3)).astype(dtype)
    LD, pivots = ember.linalg.ldl_factor(ember.from_numpy(a))
    assert (pivots.numpy() < 0).any()
    t_LD, t_pivots = torch.linalg.ldl_factor(torch.from_numpy(a))
    want = torch.linalg.ldl_solve(t_LD, t_pivots, torch.from_numpy(b)).numpy()
    taken = spy(lapack, "sytrs")
    got = ember.linalg.ldl_solve(LD, pivots, ember.from_numpy(b)).numpy()
    assert len(taken) == bool(lapack._SYTRS)
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    bad = ember.from_numpy(np.array([[1, 2, 3, 4, 5, 6, -7]] * 2, np.int32))
    with pytest.raises(IndexError):
        ember.linalg.ldl_solve(LD, bad, ember.from_numpy(b))
    assert len(taken) == bool(lapack._SYTRS)
    if lapack._SYTRS:   # (the routine answered, rather than leaving the case to the arrays)
        assert lapack.sytrs(LD.numpy(), pivots.numpy().astype(np.int64), b) is not None


def _composite_addr(m, v1, v2, beta, alpha):
    """addr's composite in NumPy, operation by operation: the bits the rank-one loop gives."""
    product = np.multiply.outer(v1, v2)
    if alpha != 1:
        product = product * product.dtype.type(alpha)
    if beta == 0:
        return product
    return (m * m.dtype.type(beta) if beta != 1 else m) + product


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta, alpha, input_shape", [(1, 1, (200, 300)), (0.5, 2, (300,)), (0, 1, (1, 300)),
                                                      (0, -1.5, (200, 1)), (1.5, 1, (200, 1))])
@pytest.mark.parametrize("path", ["loop", "gemm"])
def test_outer_and_addr_on_one_call_match_torch(dtype, beta, alpha, input_shape, path, spy, monkeypatch):
    """Nothing recorded: one call of the rank-one loop, whose bits are the composite's (the
    broadcast multiply's for outer), or where it cannot be built, from 32K elements, one GEMM
    with an inner dimension of 1; beta 0 ignores the input's NaN, as torch's."""
    from ember._backend import cblas, openmp_kernels
    if path == "loop" and not openmp_kernels.available():
        pytest.skip("the compiled loops cannot be built here")
    if path == "gemm":
        monkeypatch.setattr(openmp_kernels, "rank_one", lambda *args: None)
    rng = np.random.default_rng(19)
    v1, v2 = rng.standard_normal(200).astype(dtype), rng.standard_normal(300).astype(dtype)
    m = rng.standard_normal(input_shape).astype(dtype)
    if beta == 0:
        m.reshape(-1)[0] = np.nan
    taken = spy(cblas, "gemm") if path == "gemm" else spy(openmp_kernels, "rank_one")
    got_outer = ember.outer(ember.from_numpy(v1), ember.from_numpy(v2)).numpy()
    got = ember.addr(ember.from_numpy(m), ember.from_numpy(v1), ember.from_numpy(v2), beta=beta, alpha=alpha).numpy()
    assert len(taken) == 2
    np.testing.assert_array_equal(got_outer, np.multiply.outer(v1, v2))
    if path == "loop":
        np.testing.assert_array_equal(got, np.broadcast_to(_composite_addr(m, v1, v2, beta, alpha), got.shape))
    want = torch.addr(torch.from_numpy(m), torch.from_numpy(v1), torch.from_numpy(v2), beta=beta, alpha=alpha).numpy()
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta, alpha, input_shape", [(1, 1, (200, 300)), (0.5, 2, (300,)), (0, -1.5, (200, 1))])
@pytest.mark.parametrize("size", ["large", "small"])
def test_addr_with_a_gradient_is_one_node_matching_torch(dtype, beta, alpha, input_shape, size, spy):
    """With a gradient recorded, real float addr is torch's AddrBackward0 (its saved fields):
    the product by the rank-one loop at every size, the vectors' gradients as matrix-vector
    products; values and gradients as torch's, in-place addr_ too."""
    from ember._backend import openmp_kernels
    rng = np.random.default_rng(20)
    n, m = (200, 300) if size == "large" else (20, 30)
    input_shape = tuple(min(d, {200: n, 300: m}.get(d, d)) for d in input_shape)
    v1, v2 = rng.standard_normal(n).astype(dtype), rng.standard_normal(m).astype(dtype)
    x = rng.standard_normal(input_shape).astype(dtype)
    g = rng.standard_normal((n, m)).astype(dtype)
    taken = spy(openmp_kernels, "rank_one")
    results = []
    for lib in (torch, ember):
        tx, t1, t2 = (lib.tensor(a, requires_grad=True) for a in (x, v1, v2))
        y = lib.addr(tx, t1, t2, beta=beta, alpha=alpha)
        assert type(y.grad_fn).__name__ == "AddrBackward0"
        assert (y.grad_fn._saved_beta, y.grad_fn._saved_alpha) == (beta, alpha)
        y.backward(lib.tensor(g))
        results.append([y.detach().numpy(), tx.grad.numpy(), t1.grad.numpy(), t2.grad.numpy()])
    assert len(taken) == 1
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    summed = []   # a sum's broadcast gradient: products summed above the GEMV's size
    for lib in (torch, ember):
        t1, t2 = lib.tensor(v1, requires_grad=True), lib.tensor(v2, requires_grad=True)
        lib.addr(lib.tensor(x), t1, t2, beta=beta, alpha=alpha).sum().backward()
        summed.append((t1.grad.numpy(), t2.grad.numpy()))
    for got, want in zip(summed[1], summed[0]):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * 10)
    square = rng.standard_normal((n, m)).astype(dtype)
    ours, theirs = ember.tensor(square).requires_grad_().clone(), torch.tensor(square).requires_grad_().clone()
    ours.addr_(ember.tensor(v1), ember.tensor(v2), beta=beta, alpha=alpha)
    theirs.addr_(torch.tensor(v1), torch.tensor(v2), beta=beta, alpha=alpha)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tolerance, atol=tolerance)
