"""The main demo (examples/digits_demo.py, what `make demo` runs) trains, checkpoints, reloads
to the same accuracy, plots and profiles. Run here for 2 epochs."""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

for _module in ("sklearn", "tqdm", "matplotlib"):
    pytest.importorskip(_module, reason=f"the demo needs {_module} (pip install -e '.[demo]')")


def test_digits_demo_two_epochs(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), DEMO_EPOCHS="5")
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "digits_demo.py"), "--epochs", "2",
         "--out", str(tmp_path)], env=env, capture_output=True, text=True, timeout=300,
        check=True).stdout
    epochs = re.findall(r"epoch +(\d+)/(\d+) +loss [\d.]+ +train accuracy [\d.]+ +test accuracy ([\d.]+)", out)
    assert [(e, n) for e, n, _ in epochs] == [("1", "2"), ("2", "2")]  # --epochs beats DEMO_EPOCHS
    trained, reloaded = re.search(
        r"final test accuracy ([\d.]+); reloaded checkpoint test accuracy ([\d.]+)", out).groups()
    assert trained == reloaded == epochs[-1][2]
    assert float(trained) > 0.8

    for name in ("digits_cnn.pt", "digits_curves.png", "digits_step_trace.json"):
        path = tmp_path / name
        assert path.stat().st_size > 0 and str(path) in out
    assert (tmp_path / "digits_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    trace = json.loads((tmp_path / "digits_step_trace.json").read_text())
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"train_step", "aten::conv2d", "autograd::engine::evaluate_function: ConvolutionBackward0"} <= names

    import ember
    checkpoint = ember.load(str(tmp_path / "digits_cnn.pt"))
    assert set(checkpoint) >= {"model", "optimizer"}
    assert checkpoint["optimizer"]["state"] and "0.weight" in checkpoint["model"]
