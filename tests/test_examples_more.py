"""The classifier and language-model examples run (at a small size) and learn: the digits
classifiers reach a sane test accuracy, the language models' losses fall."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name, *args):
    """Run ``examples/<name>`` with ``args`` and return what it printed."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args], env=env,
                          capture_output=True, text=True, timeout=300, check=True).stdout


def final_accuracy(out):
    return float(re.search(r"final test accuracy ([\d.]+)", out).group(1))


@pytest.mark.parametrize("name, epochs", [("mlp_digits.py", "4"), ("cnn_digits.py", "2")])
def test_digits_classifier_reaches_a_sane_accuracy(name, epochs):
    pytest.importorskip("sklearn", reason="the digits examples need scikit-learn (demo extra)")
    out = run_example(name, "--epochs", epochs)
    assert len(re.findall(r"^epoch +\d+/", out, re.M)) == int(epochs)
    assert final_accuracy(out) > 0.8, out


def test_char_transformer_loss_falls_and_it_samples():
    out = run_example("char_transformer_lm.py", "--steps", "40", "--block-size", "32",
                      "--d-model", "32", "--layers", "1", "--batch-size", "16",
                      "--sample-length", "40")
    losses = [float(v) for v in re.findall(r"^step +\d+/40 +train loss ([\d.]+)", out, re.M)]
    assert len(losses) >= 2 and losses[-1] < losses[0] - 0.5, out
    before = float(re.search(r"validation loss before training ([\d.]+)", out).group(1))
    after = float(re.search(r"validation loss after training ([\d.]+)", out).group(1))
    assert after < before, out
    snippet = out.split("-" * 60)[1]
    assert snippet.strip().startswith("def") and len(snippet.strip()) >= 40


def test_word_lstm_validation_perplexity_falls():
    out = run_example("word_lstm_lm.py", "--epochs", "2", "--max-tokens", "8000",
                      "--vocab-size", "500", "--hidden", "64", "--embedding", "32")
    before = float(re.search(r"validation perplexity before training ([\d.]+)", out).group(1))
    per_epoch = [float(v) for v in re.findall(r"validation perplexity +([\d.]+)$", out, re.M)]
    assert len(per_epoch) == 2, out
    assert per_epoch[-1] < per_epoch[0] < before, out


def test_digits_onnx_runs_in_onnxruntime_and_agrees_with_ember(tmp_path):
    pytest.importorskip("sklearn", reason="the digits examples need scikit-learn (demo extra)")
    pytest.importorskip("onnxruntime", reason="the ONNX example needs onnxruntime")
    out = run_example("digits_onnx.py", "--epochs", "1", "--steps", "30", "--out",
                      str(tmp_path))
    assert (tmp_path / "digits_cnn.onnx").exists()
    assert "onnx.checker passed" in out
    rows = re.findall(r"^ +\d+ +(\d) +(\d) +(\d)$", out, re.M)
    assert len(rows) == 12 and all(ember_ == ort for _, ember_, ort in rows), out
    agree, total = map(int, re.search(r"predictions agree on (\d+)/(\d+)", out).groups())
    assert agree == total == 360, out
    ember_acc, ort_acc = map(float, re.search(
        r"test accuracy: ember ([\d.]+), onnxruntime ([\d.]+)", out).groups())
    assert ember_acc == ort_acc and ember_acc > 0.5, out
