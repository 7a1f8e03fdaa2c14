"""The op table through ``ember.onnx.export``: each entry's first float32 sample, as a module
whose inputs are the sample's tensors, either exports to a file that passes onnx.checker and
gives ember's eager outputs in ONNX Runtime, or is listed below as expected to raise
``UnsupportedOperatorError``, with the reason its message must give. An entry that starts to
export fails until it is taken off the list, and one that stops exporting fails until it is
put on it."""
import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import ember  # noqa: E402
import ember.onnx  # noqa: E402
from ember.onnx import errors  # noqa: E402
from op_db import OPS  # noqa: E402
from op_db.cases import Built, cases, outputs  # noqa: E402

SPECIAL_FUNCTION = "ONNX has no operator for this special function"
DECOMPOSITION = "ONNX has no matrix inverse, linear solve or matrix decomposition operator"
BITS = "ONNX has no bitcast operator"
MATRIX_EXP = "scaling-and-squaring method depends on the matrix's norm"

# Entries ONNX (opset 17) cannot express, and the reason their error gives.
NOT_EXPRESSIBLE = {
    **dict.fromkeys(
        ["erfinv", "lgamma", "digamma", "i0", "polygamma", "polygamma_method", "mvlgamma",
         "special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1",
         "special_modified_bessel_i0", "special_modified_bessel_i1",
         "special_modified_bessel_k0", "special_modified_bessel_k1",
         "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1",
         "special_airy_ai", "special_i0", "special_i0e", "special_i1", "special_i1e",
         "special_ndtri", "special_i1_at_zero", "special_zeta", "special_gammainc",
         "special_gammaincc", "special_incomplete_gamma_mixed", "igamma", "igammac_method",
         "igamma_inplace", "igammac_inplace", "special_polygamma_0",
         "special_polygamma_1", "special_polygamma_2", "special_polygamma_3",
         "special_polygamma_5", "special_polygamma_0_negative", "special_polygamma_1_negative",
         "special_polygamma_2_negative", "special_polygamma_3_negative",
         "special_multigammaln", "special_aliases", "_standard_gamma_grad", "_dirichlet_grad"],
        SPECIAL_FUNCTION),
    "special_erfcx": "exp(x^2) erfc(x) through Exp and Erf overflows",
    "special_log_ndtr": "log(ndtr(x)) through Erf underflows",
    "nextafter": BITS, "frexp": BITS,
    **dict.fromkeys(
        ["linalg.inv", "inverse", "Tensor.inverse", "linalg.inv_ex", "linalg.solve",
         "linalg.cholesky", "cholesky", "linalg.cholesky_ex", "linalg.qr", "linalg.qr_r",
         "linalg.qr_complete_tall", "qr", "linalg.svd", "linalg.svd_full", "linalg.svdvals",
         "svd", "svd_no_uv", "linalg.eigh", "linalg.eigh_triangle", "linalg.eigvalsh",
         "linalg.pinv", "linalg.pinv_hermitian", "linalg.matrix_rank", "linalg.lstsq",
         "linalg.lstsq_outputs", "triangular_solve", "cholesky_solve", "cholesky_inverse",
         "linalg.solve_triangular", "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu",
         "linalg.lu_L", "linalg.lu_U", "linalg.lu_solve", "linalg.solve_ex", "linalg.cond",
         "linalg.cond_through_inverse", "linalg.tensorinv", "linalg.tensorsolve",
         "linalg.householder_product", "orgqr", "Tensor.orgqr", "linalg.eig", "linalg.eigvals",
         "linalg.ldl_factor", "linalg.ldl_factor_ex", "linalg.ldl_solve", "lu", "lu_solve",
         "Tensor.lu_solve"],
        DECOMPOSITION),
    **dict.fromkeys(["norm_nuc", "norm_method_nuc"], "it needs singular values, and ONNX has no SVD"),
    **dict.fromkeys(["matrix_exp", "matrix_exp_method", "linalg_matrix_exp"], MATRIX_EXP),
    "as_strided_of_view": "as_strided of a view (it addresses the base tensor's storage",
    "equal": "is not a tensor computed by the model",     # a Python bool
}

# Entries ONNX could express that have no converter yet (their error says "no converter maps
# it to ONNX").
NOT_MAPPED = {}
EXPECTED_UNSUPPORTED = {**NOT_EXPRESSIBLE, **NOT_MAPPED}
# Entries the tracer cannot record: it runs ops on inputs that require grad, and these ops'
# complex results have no gradient in ember yet.
NOT_TRACEABLE = {"linalg.eig": "LinalgEig", "linalg.eigvals": "LinalgEig"}


def _first_float32_samples():
    seen = set()
    for op, sample, case_id, dtype in cases("forward"):
        if dtype == "float32" and op.name not in seen:
            seen.add(op.name)
            yield pytest.param(op, sample, id=case_id)


class _OpModule(ember.nn.Module):
    """``op``'s call with the sample's tensors as the module's inputs."""

    def __init__(self, op, kwargs, args):
        super().__init__()
        self.op, self.kwargs, self.args = op, kwargs, list(args)
        self.positions = [i for i, a in enumerate(args) if isinstance(a, ember.Tensor)]

    def forward(self, *tensors):
        args = list(self.args)
        for i, t in zip(self.positions, tensors):
            args[i] = t
        return self.op.fn(ember, *args, **self.kwargs)


@pytest.mark.parametrize("op,sample", list(_first_float32_samples()))
def test_op_exports_and_runs_in_onnxruntime_or_names_itself(op, sample):
    _, args = Built(op, sample, "float32").make(ember, op, sample, "float32", False)
    tensors = [a for a in args if isinstance(a, ember.Tensor)]
    if not tensors:
        pytest.skip("the sample has no tensor argument to feed the exported graph")
    model = _OpModule(op, sample.kwargs, args)
    buffer = io.BytesIO()
    if op.name in NOT_TRACEABLE:
        with pytest.raises(NotImplementedError, match=NOT_TRACEABLE[op.name]):
            ember.onnx.export(model, tuple(tensors), buffer)
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ember.onnx.export(model, tuple(tensors), buffer)
    except errors.UnsupportedOperatorError as error:
        message = str(error)   # names what it cannot express and where, or the output it cannot be
        assert op.name in EXPECTED_UNSUPPORTED, (
            f"{op.name} does not export and is not on the expected-unsupported lists: {message}")
        assert message.startswith("ember.onnx.export") and (
            "graph node" in message or "is not a tensor computed by the model" in message), message
        assert EXPECTED_UNSUPPORTED[op.name] in message, message
        return
    assert op.name not in EXPECTED_UNSUPPORTED, (
        f"{op.name} exports now: take it off the expected-unsupported lists")
    data = buffer.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    got = session.run(None, {i.name: t.numpy() for i, t in zip(session.get_inputs(), tensors)})
    with ember.no_grad():
        expected = [e for e in outputs(model(*tensors)) if isinstance(e, ember.Tensor)]
    assert len(got) == len(expected)
    atol, rtol = op.tolerances("float32")
    for g, e in zip(got, expected):
        assert g.shape == tuple(e.shape)
        np.testing.assert_allclose(g, e.numpy(), atol=max(atol, 1e-5), rtol=max(rtol, 1e-4),
                                   equal_nan=True)



def test_expected_unsupported_lists_name_op_table_entries():
    names = {op.name for op in OPS}
    assert set(EXPECTED_UNSUPPORTED) <= names, sorted(set(EXPECTED_UNSUPPORTED) - names)
    assert not set(NOT_EXPRESSIBLE) & set(NOT_MAPPED)
