"""The op table through ``ember.onnx.export``: each entry's first float32 sample, as a module
whose inputs are the sample's tensors, either exports to a file that passes onnx.checker and
gives ember's eager outputs in ONNX Runtime, or raises ``UnsupportedOperatorError`` naming the
op and its graph node (or the output that is not a tensor, as ``equal``'s bool): the clear error
the export gives for what ONNX cannot express or ember does not map."""
import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import ember  # noqa: E402
import ember.onnx  # noqa: E402
from ember.onnx import errors  # noqa: E402
from op_db.cases import Built, cases, outputs  # noqa: E402


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
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ember.onnx.export(model, tuple(tensors), buffer)
    except errors.UnsupportedOperatorError as error:
        message = str(error)   # names what it cannot express and where, or the output it cannot be
        assert message.startswith("ember.onnx.export") and (
            "graph node" in message or "is not a tensor computed by the model" in message), message
        return
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

