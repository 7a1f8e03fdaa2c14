"""The nn examples run and do what they say (examples/custom_layer.py is run by
tests/nn/test_module.py)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_gan_example_learns_the_target_distribution():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "gan.py"),
                          "--epochs", "6"], env=env, capture_output=True, text=True,
                         timeout=300, check=True).stdout
    epochs = re.findall(r"epoch +\d+ +loss_D ([\d.]+) +loss_G ([\d.]+)", out)
    assert len(epochs) == 6
    mean, std = map(float, re.search(r"generated mean ([-\d.]+) std ([\d.]+)", out).groups())
    assert abs(mean - 4.0) < 0.5 and 0.6 < std < 2.0, out
