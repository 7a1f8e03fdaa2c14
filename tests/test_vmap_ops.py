"""Every op of the op table under ``vmap`` against a loop over the batch: each tensor argument
of a sample gets a batch of three different values along a new dimension 0 (and along
dimension 1 for every fourth entry), ``vmap`` runs the op once, and its result must equal the
per-sample results stacked. The entries whose ops take ember.func's per-sample loop
(``_loop_fallback``) instead of a batching rule are listed in ``LOOP_FALLBACK`` (the test
checks the list), and the few that cannot be mapped in ``NOT_MAPPABLE``, with torch's reason."""
import numpy as np
import pytest

import ember
from ember.func import vmap
from ember.func._dispatch import FALLBACK_OPS
from op_db import OPS, Arg
from op_db.cases import Built

BATCH = 3

# entry -> the ember functions that ran through the per-sample loop under vmap
LOOP_FALLBACK = {
    'Tensor.lu_solve': {'lu', 'lu_solve'},
    'Tensor.orgqr': {'orgqr'},
    '_dirichlet_grad': {'_dirichlet_grad'},
    '_standard_gamma_grad': {'_standard_gamma_grad'},
    'addmm_': {'addmm_'},
    'addr_': {'addr_'},
    'argmax': {'argmax'},
    'atleast_1d': {'atleast_1d'},
    'atleast_2d': {'atleast_2d'},
    'atleast_3d': {'atleast_3d'},
    'bincount': {'bincount'},
    'block_diag': {'block_diag'},
    'block_diag_promote': {'block_diag'},
    'broadcast_tensors': {'broadcast_tensors'},
    'bucketize': {'bucketize'},
    'cartesian_prod': {'cartesian_prod'},
    'cdist': {'cdist'},
    'cholesky_solve': {'cholesky_solve'},
    'column_stack': {'column_stack'},
    'combinations': {'combinations'},
    'corrcoef': {'corrcoef'},
    'cov': {'cov'},
    'cov_method': {'cov'},
    'cummax': {'cummax'},
    'cumulative_trapezoid': {'cumulative_trapezoid'},
    'diagonal_scatter': {'diagonal_scatter'},
    'diff': {'diff'},
    'dist': {'dist'},
    'dsplit': {'dsplit'},
    'dstack': {'dstack'},
    'fill': {'fill'},
    'fill_': {'fill_'},
    'fill_diagonal_': {'fill_diagonal_'},
    'flip': {'flip'},
    'fliplr': {'fliplr'},
    'flipud': {'flipud'},
    'gradient': {'gradient'},
    'gradient_coordinates': {'gradient'},
    'hardshrink_method': {'hardshrink'},
    'histc': {'histc'},
    'histogram': {'histogram'},
    'histogramdd': {'histogramdd'},
    'histogramdd_edges': {'histogramdd'},
    'hsplit': {'hsplit'},
    'hstack': {'hstack'},
    'index_add': {'index_add'},
    'index_add_': {'index_add_'},
    'index_add_int': {'index_add'},
    'index_apart': {'__getitem__'},
    'index_copy': {'index_copy'},
    'index_copy_': {'index_copy_'},
    'index_copy_int': {'index_copy'},
    'index_fill': {'index_fill'},
    'index_fill_': {'index_fill_'},
    'index_fill_int': {'index_fill'},
    'index_mask_row': {'__getitem__'},
    'index_put': {'index_put'},
    'index_put_': {'index_put_'},
    'index_put_int': {'index_put'},
    'index_reduce': {'index_reduce'},
    'index_reduce_': {'index_reduce_'},
    'index_two': {'__getitem__'},
    'inner': {'inner'},
    'isin': {'isin'},
    'kron': {'kron'},
    'linalg.cond': {'cond'},
    'linalg.cond_through_inverse': {'cond'},
    'linalg.diagonal': {'diagonal'},
    'linalg.householder_product': {'householder_product'},
    'linalg.ldl_factor': {'ldl_factor'},
    'linalg.ldl_factor_ex': {'ldl_factor_ex'},
    'linalg.ldl_solve': {'ldl_factor', 'ldl_solve'},
    'linalg.lstsq': {'lstsq'},
    'linalg.lstsq_outputs': {'lstsq'},
    'linalg.lu_factor_ex': {'lu_factor_ex'},
    'linalg.lu_solve': {'lu_solve'},
    'linalg.matrix_rank': {'matrix_rank'},
    'linalg.multi_dot': {'multi_dot'},
    'linalg.norm': {'norm'},
    'linalg.solve': {'solve'},
    'linalg.solve_ex': {'solve_ex'},
    'linalg.solve_triangular': {'solve_triangular'},
    'linalg.tensorinv': {'tensorinv'},
    'linalg.tensorsolve': {'tensorsolve'},
    'linalg.vander': {'vander'},
    'linalg.vecdot': {'vecdot'},
    'lu': {'lu'},
    'lu_solve': {'lu', 'lu_solve'},
    'lu_unpack': {'lu_unpack'},
    'lu_unpack_u': {'lu_unpack'},
    'masked_fill_': {'masked_fill_'},
    'masked_scatter': {'masked_scatter'},
    'masked_scatter_': {'masked_scatter_'},
    'masked_scatter_int': {'masked_scatter'},
    'masked_select': {'masked_select'},
    'masked_select_int': {'masked_select'},
    'median': {'median'},
    'meshgrid_ij': {'meshgrid'},
    'meshgrid_xy': {'meshgrid'},
    'msort': {'msort'},
    'nanquantile': {'nanquantile'},
    'norm_method_nuc': {'norm'},
    'norm_nuc': {'norm'},
    'orgqr': {'orgqr'},
    'pdist': {'pdist'},
    'prelu_method': {'prelu'},
    'put': {'put'},
    'put_': {'put_'},
    'quantile': {'quantile'},
    'quantile_q_tensor': {'quantile'},
    'renorm': {'renorm'},
    'renorm_': {'renorm_'},
    'repeat_interleave': {'repeat_interleave'},
    'repeat_interleave_counts': {'repeat_interleave'},
    'repeat_interleave_method': {'repeat_interleave'},
    'rot90': {'rot90'},
    'row_stack': {'vstack'},
    'searchsorted': {'searchsorted'},
    'searchsorted_sorter': {'searchsorted'},
    'searchsorted_ties': {'searchsorted'},
    'select_scatter': {'select_scatter'},
    'slice_scatter': {'slice_scatter'},
    'sum_to_size': {'sum_to_size'},
    'take': {'take'},
    'take_int': {'take'},
    'tensordot': {'tensordot'},
    'tile': {'tile'},
    'trapezoid': {'trapezoid'},
    'trapz': {'trapz'},
    'triangular_solve': {'triangular_solve'},
    'unique_consecutive': {'unique_consecutive'},
    'unravel_index': {'unravel_index'},
    'vander': {'vander'},
    'vdot': {'vdot'},
    'vsplit': {'vsplit'},
    'vstack': {'vstack'},
}

# entries vmap cannot map, as in torch: their results depend on the data in ways a batch
# cannot hold (sizes that differ between samples, Python values)
NOT_MAPPABLE = {
    "equal": "returns a Python bool",
    "allclose": "returns a Python bool",
    "nonzero": "its result's size depends on the data",
    "nonzero_tuple": "its result's size depends on the data",
    "argwhere": "its result's size depends on the data",
    "unique": "its result's size depends on the data",
    "unique_method": "its result's size depends on the data",
    "as_strided": "reads the memory layout, which batching changes (ember raises)",
    "as_strided_of_view": "reads the memory layout, which batching changes (ember raises)",
    "linalg.eigvals": "the entry's own function branches on the values (it sends non-finite "
                      "inputs through eig, around a torch crash)",
}
# mappable one level deep, not two: the samples' results may differ in shape
NESTED_NOT_MAPPABLE = {
    "bincount": "its length is the largest value plus one, which the nested batches' samples "
                "do not share (torch refuses it under vmap at any depth)",
}

# with the mapped dimension at 1, a view of the sample is not a view of the batch: torch
# raises there too
NOT_VIEWABLE_AT_DIM_1 = {"view"}


def _dtype(op):
    return "float64" if "float64" in op.dtypes else op.dtypes[0]


def _built_args(op, sample, dtype, seed):
    built = Built(op, sample, dtype, seed=seed)
    _, args = built.make(ember, op, sample, dtype, False)
    return args


def _to_np(x):
    return np.asarray(x.detach()._data)


def _compare(mapped, looped, what):
    if isinstance(looped[0], ember.Tensor):
        assert isinstance(mapped, ember.Tensor), what
        expected = np.stack([_to_np(r) for r in looped])
        assert tuple(mapped.shape) == expected.shape, f"{what}: {tuple(mapped.shape)} != {expected.shape}"
        assert mapped.dtype == looped[0].dtype, f"{what}: {mapped.dtype} != {looped[0].dtype}"
        np.testing.assert_allclose(_to_np(mapped), expected, rtol=1e-6, atol=1e-8, equal_nan=True,
                                   err_msg=what)
    elif isinstance(looped[0], (tuple, list)):
        assert len(mapped) == len(looped[0]), what
        for j in range(len(mapped)):
            _compare(mapped[j], [r[j] for r in looped], f"{what}[{j}]")
    else:
        assert all(r == looped[0] for r in looped) and mapped == looped[0], what


def _run_entry(op, in_dim):
    dtype = _dtype(op)
    used = set()
    for si, sample in enumerate(op.samples[:3]):
        per_sample = [_built_args(op, sample, dtype, seed) for seed in range(BATCH)]
        tensor_pos = [i for i, a in enumerate(sample.args) if isinstance(a, Arg)]
        if not tensor_pos:
            continue
        looped = [op.fn(ember, *args, **sample.kwargs) for args in per_sample]
        stacked, dims = [], []
        for i in tensor_pos:
            d = in_dim if per_sample[0][i].ndim >= in_dim else 0
            stacked.append(ember.stack([args[i] for args in per_sample], dim=d))
            dims.append(d)

        def call(*tensors):
            args = list(per_sample[0])
            for i, t in zip(tensor_pos, tensors):
                args[i] = t
            return op.fn(ember, *args, **sample.kwargs)

        FALLBACK_OPS.clear()
        mapped = vmap(call, in_dims=tuple(dims))(*stacked)
        used |= FALLBACK_OPS
        if not isinstance(looped[0], (ember.Tensor, tuple, list)):
            continue
        _compare(mapped, looped, f"{op.name} sample {sample.name or si}")
    return used


def _run_entry_nested(op):
    """vmap of vmap: a 2 x 3 grid of samples, against the double loop."""
    dtype = _dtype(op)
    sample = op.samples[0]
    grid = [[_built_args(op, sample, dtype, 10 * i + j) for j in range(BATCH)] for i in range(2)]
    tensor_pos = [i for i, a in enumerate(sample.args) if isinstance(a, Arg)]
    if not tensor_pos:
        return
    looped = [[op.fn(ember, *args, **sample.kwargs) for args in row] for row in grid]
    stacked = [ember.stack([ember.stack([args[i] for args in row]) for row in grid])
               for i in tensor_pos]

    def call(*tensors):
        args = list(grid[0][0])
        for i, t in zip(tensor_pos, tensors):
            args[i] = t
        return op.fn(ember, *args, **sample.kwargs)

    mapped = vmap(vmap(call))(*stacked)
    if not isinstance(looped[0][0], (ember.Tensor, tuple, list)):
        return
    flat = [r for row in looped for r in row]
    merged = _flatten_two(mapped)
    _compare(merged, flat, f"{op.name} nested")


def _flatten_two(x):
    if isinstance(x, ember.Tensor):
        return x.reshape((-1,) + tuple(x.shape[2:]))
    return type(x)(_flatten_two(t) for t in x) if not hasattr(x, "_fields") else \
        type(x)(*(_flatten_two(t) for t in x))


@pytest.mark.parametrize("op", OPS[::6], ids=[op.name for op in OPS[::6]])
def test_op_under_nested_vmap(op):
    if op.name in NOT_MAPPABLE:
        pytest.skip(NOT_MAPPABLE[op.name])
    if op.name in NESTED_NOT_MAPPABLE:
        with pytest.raises(RuntimeError, match="dynamic shape"):
            _run_entry_nested(op)
        return
    _run_entry_nested(op)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_op_under_vmap(op):
    if op.name in NOT_MAPPABLE:
        with pytest.raises((RuntimeError, ValueError)):
            _run_entry(op, 0)
        return
    used = _run_entry(op, 0)
    assert used == LOOP_FALLBACK.get(op.name, set()), (
        f"{op.name}: per-sample loop used for {sorted(used)}, listed "
        f"{sorted(LOOP_FALLBACK.get(op.name, set()))}")


@pytest.mark.parametrize("op", OPS[::4], ids=[op.name for op in OPS[::4]])
def test_op_under_vmap_in_dim_1(op):
    if op.name in NOT_MAPPABLE:
        pytest.skip(NOT_MAPPABLE[op.name])
    if op.name in NOT_VIEWABLE_AT_DIM_1:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            _run_entry(op, 1)
        return
    _run_entry(op, 1)
