"""Ops that compute on the arrays when nothing records give the bits of their steps as ops (the
path taken when autograd records), and torch's values."""
import itertools
import math
from unittest import mock

import numpy as np
import pytest
import torch

import ember
from ember._backend import openmp_kernels
from ember.ops import matrix_functions


def _bits(array):
    return array.view(f"u{array.itemsize}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_renorm_on_the_arrays_gives_its_steps_bits(dtype):
    """Without the loop, the arrays give the steps' bits; the loop (and the arrays) give torch's values,
    NaN and infinity in a slice included, on transposed inputs too."""
    rng = np.random.default_rng(0)
    for shape, p, maxnorm in itertools.product([(3, 5), (4, 3, 2), (1, 7), (6, 1)], [1, 2, 3.5, float("inf"), 0.5],
                                               [0.0, 0.1, 1.0, 5]):
        for dim in range(-len(shape), len(shape)):
            x = (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 1e3])).astype(dtype)
            if x.size > 2:
                x.reshape(-1)[:2] = [0.0, -0.0]
            if x.size > 4 and maxnorm == 1.0:
                x.reshape(-1)[rng.integers(2, x.size, 2)] = [np.nan, np.inf]
            if maxnorm == 0.1:
                x = x.T.copy().T   # (the same shape, its elements in column-major order)
            got = ember.renorm(ember.tensor(x), p, dim, maxnorm)
            with mock.patch.object(openmp_kernels, "renorm", lambda *args: None):
                arrays = ember.renorm(ember.tensor(x), p, dim, maxnorm)
            with mock.patch.object(matrix_functions, "_RENORM_ARRAY_DTYPES", ()):
                steps = ember.renorm(ember.tensor(x), p, dim, maxnorm)
            np.testing.assert_array_equal(_bits(arrays.numpy()), _bits(steps.numpy()))
            want = torch.renorm(torch.from_numpy(x), p, dim, maxnorm).numpy()
            for values in (got.numpy(), arrays.numpy()):
                np.testing.assert_allclose(values, want, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_renorm_of_large_tensors_on_the_loop_is_torchs_on_any_thread_count(dtype, monkeypatch):
    """The loop's slices shared among threads (the norms of 1- and 2-norms added in SIMD lanes, along rows
    or across slices of single elements): torch's values, and the same bits on one thread and two."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((96, 40, 12)).astype(dtype)
    x[5, 6, 7] = np.nan
    for p, dim in itertools.product([1, 2, 3.5, float("inf")], [0, 1, 2, -1]):
        results = []
        for threads in (1, 2):
            monkeypatch.setattr(openmp_kernels, "thread_count", lambda threads=threads: threads)
            results.append(ember.renorm(ember.tensor(x), p, dim, 4.0).numpy())
        np.testing.assert_array_equal(_bits(results[0]), _bits(results[1]))
        assert openmp_kernels.renorm(x, p, dim % x.ndim, 4.0) is not None   # (the loop, at this size too)
        want = torch.renorm(torch.from_numpy(x), p, dim, 4.0).numpy()
        np.testing.assert_allclose(results[0], want, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_renorm_in_place_scales_selfs_own_array_where_nothing_records(dtype, dim, monkeypatch):
    """renorm_ of a row-major float tensor: the loop writes self's own memory (each slice's norm summed
    before it is written), the out-of-place renorm's bits, the version bumped; a view of a transposed
    tensor and a tensor that records take the out-of-place op; bad arguments change nothing."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((30, 40, 7)).astype(dtype)
    x[2, 3, 4] = np.nan
    want = ember.renorm(ember.tensor(x), 2, dim, 1.5).numpy()
    t = ember.tensor(x)
    before, version = t._data, t._version
    with monkeypatch.context() as m:   # (the loop writes self: no out-of-place op, nor its copy back)
        m.setattr(matrix_functions, "apply_inplace", None)
        assert t.renorm_(2, dim, 1.5) is t and t._data is before and t._version == version + 1
    np.testing.assert_array_equal(_bits(t.numpy()), _bits(want))
    np.testing.assert_allclose(t.numpy(), torch.from_numpy(x.copy()).renorm_(2, dim, 1.5).numpy(), rtol=1e-5,
                               equal_nan=True)
    transposed = ember.tensor(x.T.copy()).transpose(0, 2)
    transposed.renorm_(2, dim, 1.5)
    np.testing.assert_array_equal(_bits(transposed.numpy()), _bits(want))
    for bad in ((0, dim, 1.0), (2, dim, -1.0), (2, 3, 1.0)):
        u = ember.tensor(x)
        with pytest.raises((RuntimeError, IndexError)):
            u.renorm_(*bad)
        np.testing.assert_array_equal(_bits(u.numpy()), _bits(x))
    leaf = ember.tensor(x, requires_grad=True)
    y = leaf * 1
    y.renorm_(2, dim, 1.5)
    assert type(y.grad_fn).__name__ == "RenormBackward0"
    np.testing.assert_array_equal(_bits(y.detach().numpy()), _bits(want))


def test_renorm_records_when_its_input_requires_grad():
    x = ember.randn(3, 4, requires_grad=True)
    y = ember.renorm(x, 2, 0, 0.5)
    assert y.grad_fn is not None
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "int8", "bool"])
def test_diff_on_the_arrays_gives_its_steps_bits_and_torchs(dtype):
    """diff where nothing records (the arrays' differences, unsigned ones wrapping, bools' exclusive or):
    the bits of the ops' steps (the path taken when autograd records) and torch's values, over orders past
    the length, empty dims and transposed inputs."""
    rng = np.random.default_rng(28)
    for shape, dim, n in [((3, 5), -1, 1), ((4, 3), 0, 2), ((5,), 0, 6), ((3, 0), 1, 1), ((0, 3), 1, 2),
                          ((2, 3, 4), 1, 1), ((3, 4), 1, 0)]:
        values = (rng.integers(0, 2, shape) if dtype == "bool" else rng.integers(-100, 100, shape)).astype(dtype)
        for x in (values, values.T.copy().T):
            got = ember.diff(ember.from_numpy(x), n=n, dim=dim)
            want = torch.diff(torch.from_numpy(x.copy()), n=n, dim=dim)
            assert got.dtype == getattr(ember, str(want.dtype).split(".")[-1]) and tuple(got.shape) == tuple(want.shape)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
            if dtype in ("float32", "float64"):
                with ember.enable_grad():
                    recorded = ember.diff(ember.tensor(x, requires_grad=True), n=n, dim=dim).detach()
                np.testing.assert_array_equal(_bits(got.numpy()), _bits(recorded.numpy()))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool"])
def test_float_power_on_the_arrays_gives_its_steps_bits_and_torchs(dtype):
    """float_power of two tensors where nothing records (NumPy's power of the float64 arrays): the bits of the
    ops' steps (the path taken when autograd records, for float inputs) and torch's values, zeros, ones,
    negative bases and integer and bool exponents among them."""
    rng = np.random.default_rng(31)
    x = (rng.standard_normal((3, 4)) * 3).astype(dtype) if dtype != "int64" else rng.integers(-4, 5, (3, 4))
    x.reshape(-1)[:3] = [0, 1, 1]
    for y in ((rng.standard_normal(4) * 2).astype(np.float32), rng.integers(-2, 3, 4), rng.integers(0, 2, 4) > 0):
        got = ember.float_power(ember.tensor(x), ember.tensor(y))
        want = torch.float_power(torch.tensor(x), torch.tensor(y))
        assert got.dtype == ember.float64
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15, equal_nan=True)
        if dtype.startswith("float"):
            with ember.enable_grad():
                recorded = ember.float_power(ember.tensor(x, requires_grad=True), ember.tensor(y)).detach()
            np.testing.assert_array_equal(_bits(got.numpy()), _bits(recorded.numpy()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_aminmax_along_a_dim_where_nothing_records_gives_the_recorded_paths_bits(dtype):
    """aminmax along an int dim where nothing records (amin's and amax's compiled functions): the bits the
    path that records gives (NaN and infinities among the values), torch's values and shapes."""
    rng = np.random.default_rng(1)
    for shape in [(3, 5), (4, 3, 2), (1, 7), (6,)]:
        x = rng.standard_normal(shape).astype(dtype)
        if x.size > 4:
            x.reshape(-1)[[1, 3]] = [np.nan, -np.inf]
        for dim, keepdim in itertools.product(range(-len(shape), len(shape)), (False, True)):
            got = ember.aminmax(ember.tensor(x), dim=dim, keepdim=keepdim)
            recorded = ember.aminmax(ember.tensor(x, requires_grad=True), dim=dim, keepdim=keepdim)
            want = torch.aminmax(torch.from_numpy(x), dim=dim, keepdim=keepdim)
            for g, r, w in zip(got, recorded, want):
                np.testing.assert_array_equal(_bits(g.numpy()), _bits(r.detach().numpy()))
                np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_])
def test_float_power_of_a_number_where_nothing_records_gives_the_steps_bits(dtype):
    """float_power(tensor, number) where nothing records (the conversion to float64 on the array): the bits
    of the steps (a float tensor that requires grad takes them), torch's values."""
    x = np.array([[-2.5, -1.0, 0.0, 0.5], [1.0, 2.0, 3.0, 7.25]]).astype(dtype)
    for exponent in (2, 3, 0.5, -1, -2.5, 0, 1.0):
        got = ember.float_power(ember.tensor(x), exponent)
        want = torch.float_power(torch.from_numpy(x), exponent).numpy()
        assert got.dtype == ember.float64
        np.testing.assert_array_equal(got.numpy(), want)
        if np.dtype(dtype).kind == "f":
            steps = ember.float_power(ember.tensor(x, requires_grad=True), exponent).detach().numpy()
            np.testing.assert_array_equal(_bits(got.numpy()), _bits(steps))


def test_fill_diagonal_of_a_matrix_writes_numpys_positions_and_torchs():
    """fill_diagonal_ of a row-major matrix where nothing records (a strided slice of the flat array): the
    positions NumPy's fill_diagonal writes, wrapping or not, and torch's values, for square, tall and wide
    matrices of floats, integers and bools (torch's where it gives them); a transposed matrix too (NumPy's
    fill_diagonal on it)."""
    for shape, wrap, dtype in itertools.product([(3, 3), (7, 3), (3, 7), (1, 1), (5, 1), (1, 5), (8, 3)],
                                                (False, True), ("float32", "int64", "bool")):
        x = np.arange(math.prod(shape)).reshape(shape).astype(dtype)
        for source in (x, x.T.copy().T):
            got = ember.tensor(source).fill_diagonal_(2.5, wrap=wrap).numpy()
            want = source.copy()
            np.fill_diagonal(want, np.asarray(2.5).astype(dtype), wrap=wrap)
            np.testing.assert_array_equal(got, want)
            try:
                theirs = torch.tensor(source).fill_diagonal_(2.5, wrap=wrap).numpy()
            except RuntimeError:   # (torch's own storage error for some thin matrices with wrap)
                continue
            np.testing.assert_array_equal(got, theirs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trapezoids_on_the_arrays_give_the_ops_bits(dtype):
    """trapezoid and cumulative_trapezoid where nothing records (their steps on the arrays, the sum and the
    running sum the ops'): the bits of the ops (the path a tensor that requires grad takes), torch's values;
    x of one dim or of y's dims, dx, every dim, one dim of y too."""
    rng = np.random.default_rng(2)
    for shape in [(3, 5), (4, 3, 2), (6,), (2, 1)]:
        y = rng.standard_normal(shape).astype(dtype)
        for dim in range(-len(shape), len(shape)):
            n = shape[dim]
            xs = [None, np.sort(rng.standard_normal(n)).astype(dtype), rng.standard_normal(shape).astype(dtype)]
            for x, dx in [(x, None) for x in xs] + [(None, 0.5)]:
                for name in ("trapezoid", "cumulative_trapezoid"):
                    def call(requires_grad, lib=ember, name=name, x=x, dx=dx, dim=dim):
                        yt = lib.tensor(y, requires_grad=requires_grad)
                        args = () if x is None else (lib.tensor(x),)
                        kwargs = {"dim": dim} if dx is None else {"dx": dx, "dim": dim}
                        return getattr(lib, name)(yt, *args, **kwargs).detach().numpy()
                    got, steps = call(False), call(True)
                    np.testing.assert_array_equal(_bits(np.asarray(got)), _bits(np.asarray(steps)))
                    np.testing.assert_allclose(got, call(False, torch), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_on_the_arrays_gives_the_ops_bits(dtype):
    """gradient with number spacings where nothing records (each dim's steps on the array, joined as cat
    joins them): the bits of the ops (the path a tensor that requires grad takes), torch's values."""
    rng = np.random.default_rng(3)
    for shape in [(4, 5), (3,), (3, 4, 3)]:
        y = rng.standard_normal(shape).astype(dtype)
        for spacing, edge_order in itertools.product([1, 2.5, [0.5] * len(shape)], (1, 2)):
            for dim in (None, 0, -1):
                if dim is not None and isinstance(spacing, list):
                    continue
                kwargs = {"spacing": spacing, "edge_order": edge_order, "dim": dim}
                got = ember.gradient(ember.tensor(y), **kwargs)
                steps = ember.gradient(ember.tensor(y, requires_grad=True), **kwargs)
                want = torch.gradient(torch.from_numpy(y), **kwargs)
                for g, s, w in zip(got, steps, want):
                    np.testing.assert_array_equal(_bits(g.numpy()), _bits(s.detach().numpy()))
                    np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_along_coordinates_on_the_arrays_gives_the_ops_bits(dtype):
    """gradient with a 1-d tensor of coordinates (of the input's dtype, one per sample) per dim where nothing
    records: the bits of the ops (the path a tensor that requires grad takes), torch's values; coordinates of
    another dtype or length take the ops (torch's promotion, torch's error)."""
    rng = np.random.default_rng(4)
    for shape, dim in [((5,), 0), ((4, 6), 1), ((6, 3), 0), ((3, 5, 4), -2)]:
        y = rng.standard_normal(shape).astype(dtype)
        coords = np.sort(rng.uniform(0, 5, shape[dim])).astype(dtype)
        for edge_order in (1, 2):
            kwargs = {"dim": dim, "edge_order": edge_order}
            got = ember.gradient(ember.tensor(y), spacing=(ember.tensor(coords),), **kwargs)[0]
            steps = ember.gradient(ember.tensor(y, requires_grad=True), spacing=(ember.tensor(coords),), **kwargs)[0]
            want = torch.gradient(torch.from_numpy(y), spacing=(torch.from_numpy(coords),), **kwargs)[0]
            np.testing.assert_array_equal(_bits(got.numpy()), _bits(steps.detach().numpy()))
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    y = rng.standard_normal((5,)).astype(dtype)
    for coords in (np.arange(5.0), np.arange(6.0).astype(dtype)):
        results = []
        for lib in (ember, torch):
            try:
                results.append(lib.gradient(lib.tensor(y), spacing=(lib.tensor(coords),))[0].dtype)
            except RuntimeError as error:
                results.append(type(error))
        assert str(results[0]).split(".")[-1] == str(results[1]).split(".")[-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("src", ["tensor", "number", "add"])
def test_scatter_into_self_where_nothing_records_gives_the_out_of_place_bits(src, dtype, monkeypatch):
    """scatter_ (a tensor or a number) and scatter_add_ with an index of the loops' size, nothing recording:
    written into self's array (no copy of it), the out-of-place op's bits (the version counted), torch's values;
    an index out of bounds raises before any write; a src that shares self's memory, or a recording, takes the
    out-of-place op."""
    from ember.ops import index as index_ops
    rng = np.random.default_rng(21)
    x = (rng.standard_normal((222, 295)) * 10).astype(dtype)
    idx = rng.integers(0, 295, (222, 148))
    values = (rng.standard_normal((222, 148)) * 10).astype(dtype)
    assert idx.size >= openmp_kernels.ELEMENTWISE_MIN_ELEMENTS
    op, args = {"tensor": ("scatter_", (values,)), "number": ("scatter_", (3,)),
                "add": ("scatter_add_", (values,))}[src]
    lib_args = [lambda lib, a=a: lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    taken, real = [], index_ops._scatter_data
    monkeypatch.setattr(index_ops, "_scatter_data",
                        lambda *args, **kwargs: taken.append((args[0], "into" in kwargs)) or real(*args, **kwargs))
    e = ember.tensor(x)
    version = e._version
    assert getattr(e, op)(1, ember.tensor(idx), *(f(ember) for f in lib_args)) is e
    assert e._version > version and taken == [(op[:-1], True)]
    out_of_place = getattr(ember, op[:-1])(ember.tensor(x), 1, ember.tensor(idx), *(f(ember) for f in lib_args))
    np.testing.assert_array_equal(_bits(e.numpy()), _bits(out_of_place.numpy()))
    t = torch.tensor(x)
    getattr(t, op)(1, torch.tensor(idx), *(f(torch) for f in lib_args))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)
    bad = idx.copy()
    bad[200, 100] = 295
    e = ember.tensor(x)
    with pytest.raises(RuntimeError, match="out of bounds"):
        getattr(e, op)(1, ember.tensor(bad), *(f(ember) for f in lib_args))
    np.testing.assert_array_equal(e.numpy(), x)
    if src != "number":   # (src a view of self: the out-of-place op, which reads src before any write)
        e = ember.tensor(x)
        want = getattr(ember, op[:-1])(ember.tensor(x), 1, ember.tensor(idx), ember.tensor(x[:, :148]))
        getattr(e, op)(1, ember.tensor(idx), e[:, :148])
        np.testing.assert_array_equal(_bits(e.numpy()), _bits(want.numpy()))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_copy_into_self_where_nothing_records_gives_the_out_of_place_bits(dim, dtype, monkeypatch):
    """index_copy_ where nothing records: written into self's array, the out-of-place op's bits (the version
    counted), torch's values; an index out of bounds raises before any write; a source that is a view of self
    takes the out-of-place op (which reads it before any write)."""
    from ember.ops import index as index_ops
    rng = np.random.default_rng(22)
    x = (rng.standard_normal((300, 200)) * 10).astype(dtype)
    idx = rng.permutation(x.shape[dim])[:150]
    source = np.take((rng.standard_normal((300, 200)) * 10).astype(dtype), np.arange(150), axis=dim)
    taken, real = [], index_ops._index_copied
    monkeypatch.setattr(index_ops, "_index_copied",
                        lambda *args, **kwargs: taken.append("into" in kwargs) or real(*args, **kwargs))
    e = ember.tensor(x)
    version = e._version
    assert e.index_copy_(dim, ember.tensor(idx), ember.tensor(source)) is e
    assert e._version > version and taken == [True]
    want = ember.index_copy(ember.tensor(x), dim, ember.tensor(idx), ember.tensor(source))
    np.testing.assert_array_equal(_bits(e.numpy()), _bits(want.numpy()))
    t = torch.tensor(x)
    t.index_copy_(dim, torch.tensor(idx), torch.tensor(source))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    bad = idx.copy()
    bad[7] = x.shape[dim]
    e = ember.tensor(x)
    with pytest.raises(IndexError, match="out of bounds"):
        e.index_copy_(dim, ember.tensor(bad), ember.tensor(source))
    np.testing.assert_array_equal(e.numpy(), x)
    e = ember.tensor(x)
    view = e.narrow(dim, 0, 150)
    want = ember.index_copy(ember.tensor(x), dim, ember.tensor(idx), ember.tensor(np.take(x, np.arange(150), dim)))
    e.index_copy_(dim, ember.tensor(idx), view)
    np.testing.assert_array_equal(_bits(e.numpy()), _bits(want.numpy()))


@pytest.mark.parametrize("value", ["number", "tensor"])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_fill_into_self_where_nothing_records_gives_the_out_of_place_bits(dim, value, monkeypatch):
    """index_fill_ of a large tensor where nothing records: written into self's array, the out-of-place op's
    bits (the version counted), torch's values; an index out of bounds raises before any write."""
    from ember.ops import index as index_ops
    rng = np.random.default_rng(23)
    x = rng.standard_normal((300, 200)).astype(np.float32)
    idx = rng.integers(-x.shape[dim], x.shape[dim], 90)
    fill = {"number": -1.5, "tensor": ember.tensor(2.25)}[value]
    taken, real = [], index_ops._index_filled
    monkeypatch.setattr(index_ops, "_index_filled",
                        lambda *args, **kwargs: taken.append("into" in kwargs) or real(*args, **kwargs))
    e = ember.tensor(x)
    version = e._version
    assert e.index_fill_(dim, ember.tensor(idx), fill) is e
    assert e._version > version and taken == [True]
    want = ember.index_fill(ember.tensor(x), dim, ember.tensor(idx), fill)
    np.testing.assert_array_equal(_bits(e.numpy()), _bits(want.numpy()))
    t = torch.tensor(x)
    t.index_fill_(dim, torch.tensor(idx), fill if value == "number" else torch.tensor(2.25))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    bad = idx.copy()
    bad[3] = x.shape[dim]
    e = ember.tensor(x)
    with pytest.raises(IndexError, match="out of bounds"):
        e.index_fill_(dim, ember.tensor(bad), fill)
    np.testing.assert_array_equal(e.numpy(), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, -2.0), (0, 3)])
def test_addr_in_place_writes_selfs_own_array_where_nothing_records(dtype, beta, alpha, monkeypatch):
    """addr_ of a row-major float matrix: the loop writes self's own memory, the out-of-place addr's bits,
    the version bumped; a vector sharing self's memory, a transposed self and a self that records take
    the out-of-place op; beta 0 ignores self's NaN, as torch's."""
    rng = np.random.default_rng(4)
    x, u, v = (rng.standard_normal(s).astype(dtype) for s in ((300, 200), 300, 200))
    x[0, 0] = np.nan
    want = ember.addr(ember.tensor(x), ember.tensor(u), ember.tensor(v), beta=beta, alpha=alpha).numpy()
    t = ember.tensor(x)
    before, version = t._data, t._version
    with monkeypatch.context() as m:   # (the loop writes self: no out-of-place op, nor its copy back)
        m.setattr(matrix_functions, "apply_inplace", None)
        assert t.addr_(ember.tensor(u), ember.tensor(v), beta=beta, alpha=alpha) is t
    assert t._data is before and t._version == version + 1
    np.testing.assert_array_equal(_bits(t.numpy()), _bits(want))
    expected = torch.from_numpy(x.copy()).addr_(torch.from_numpy(u), torch.from_numpy(v), beta=beta, alpha=alpha)
    np.testing.assert_allclose(t.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5, equal_nan=True)
    transposed = ember.tensor(x.T.copy()).T
    transposed.addr_(ember.tensor(u), ember.tensor(v), beta=beta, alpha=alpha)
    np.testing.assert_array_equal(_bits(transposed.numpy()), _bits(want))
    square = ember.tensor(x[:200, :200].copy())
    row, column = square[0].clone(), square[:, 1].clone()
    want = ember.addr(square, column, row, beta=beta, alpha=alpha).numpy()
    square.addr_(square[:, 1], square[0], beta=beta, alpha=alpha)   # (vectors of self's own memory)
    np.testing.assert_array_equal(_bits(square.numpy()), _bits(want))
    y = ember.tensor(x, requires_grad=True) * 1
    y.addr_(ember.tensor(u), ember.tensor(v), beta=beta, alpha=alpha)
    assert type(y.grad_fn).__name__ == "AddrBackward0"
