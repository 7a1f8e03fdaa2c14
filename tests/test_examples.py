"""The examples run and do what they say."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_fit_example_loss_falls():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "fit.py")], env=env,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    first, last = map(float, re.search(r"loss fell from ([\d.]+) to ([\d.]+)", out).groups())
    assert last < first / 20
