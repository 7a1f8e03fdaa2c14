"""torch's results for the op table's cases, live where torch is installed, else as recorded by
a Python that has it.

PyPI's Linux torch wheels are CUDA builds; the CPU one is on hand for CPython 3.11 only. So the
other supported Pythons check ember's op table against torch's results recorded in
``build/torch-op-table.pkl`` (written by ``make test-quick`` with the default Python's venv:
``python tests/op_db/oracle.py PATH``). Results are kept in a torch-free form: tensors as
``Expected`` (values, shape, dtype name).

    python tests/op_db/oracle.py build/torch-op-table.pkl
"""
import os
import pickle
import sys
from dataclasses import dataclass

import numpy as np

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from op_db.cases import (Built, NoGradient, backward_inputs, cases, outputs,
                         second_order)

RECORDING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                         "torch-op-table.pkl")
RECORDED_KINDS = ("forward", "grad", "gradgrad")


@dataclass
class Expected:
    """A tensor torch returned."""
    values: np.ndarray
    shape: tuple
    dtype: str   # "float32", ...


def expected(x):
    """``x`` (a torch result: tensors, sizes, numbers, nested in tuples and lists) without torch
    types."""
    if isinstance(x, (tuple, list)):
        items = [expected(v) for v in x]
        return items if isinstance(x, list) else tuple(items)
    module = type(x).__module__
    if module == "torch" and type(x).__name__ == "Tensor":
        t = x.detach()
        dtype = str(t.dtype).split(".")[-1]
        if dtype == "bfloat16":
            t = t.float()
        return Expected(t.numpy(force=True), tuple(x.shape), dtype)  # also reads ZeroTensors
    if module.startswith("torch"):
        raise TypeError(f"no torch-free form for a {type(x).__name__}")
    return x


def run_torch(kind, op, sample, dtype):
    """torch's result for one case: forward, the outputs (as ``expected``); grad, the number
    of leaves and outputs and the input gradients; gradgrad, the second-order gradients (or
    None). ``NoGradient`` for a sample with nothing to differentiate."""
    import torch
    built = Built(op, sample, dtype)
    if kind == "forward":
        _, args = built.make(torch, op, sample, dtype, False)
        return expected(outputs(op.fn(torch, *args, **sample.kwargs)))
    if kind == "grad":
        leaves, outs, grads = backward_inputs(torch, op, sample, dtype, built)
        if not outs or not leaves:
            return len(leaves), len(outs), NoGradient
        return len(leaves), len(outs), expected(list(torch.autograd.grad(outs, leaves, grads, allow_unused=True)))
    try:
        return expected(second_order(torch, op, sample, dtype, built))
    except NoGradient:
        return NoGradient


def record(path):
    """Write torch's result (or the exception it raised) for every recorded case, with the
    inputs they came from."""
    record = {}
    for kind in RECORDED_KINDS:
        for op, sample, case_id, dtype in cases(kind):
            try:
                result = run_torch(kind, op, sample, dtype)
            except Exception as e:
                result = RuntimeError(f"torch raised {type(e).__name__}: {e}")
            record[kind, case_id] = (Built(op, sample, dtype).digest(), result)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "wb") as f:
        pickle.dump(record, f, protocol=4)
    os.replace(path + ".tmp", path)
    print(f"wrote {path} ({len(record)} cases)")


_loaded = {}


def recorded(kind, case_id, built):
    """The recorded result for a case; fails when there is no recording, the case is not in it,
    or it was made from other inputs."""
    import pytest
    if "record" not in _loaded:
        if not os.path.exists(RECORDING):
            pytest.fail(f"torch is not installed and {os.path.normpath(RECORDING)} is missing: "
                        "`make test-quick PYTHON=...` records it")
        with open(RECORDING, "rb") as f:
            _loaded["record"] = pickle.load(f)
    entry = _loaded["record"].get((kind, case_id))
    if entry is None:
        pytest.fail(f"{kind} {case_id} is not in {os.path.normpath(RECORDING)}: record it again")
    digest, result = entry
    if digest != built.digest():
        pytest.fail(f"{case_id}: the inputs differ from those torch's results were recorded for")
    if isinstance(result, Exception):
        raise result
    return result


if __name__ == "__main__":
    from op_db import oracle  # so that what is pickled names op_db.oracle, not __main__
    oracle.record(sys.argv[1])
