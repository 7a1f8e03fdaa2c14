"""Batched matrix products, ``torch.bmm``-shaped, in float32: ember's ``bmm`` with its kernel
choice (oneDNN's matmul primitive from the size rule on, ``onednn.gemm.batched_matmul``), ember's
``bmm`` on NumPy's kernel alone (NumPy's ``matmul``: a loop of OpenBLAS calls), and torch's
``bmm``. The three are timed in turns (``--repeats`` turns of ``--number`` calls each); the table
gives the fastest turn's median in microseconds.

    .venv/bin/python -m benchmarks.batched_matmul [--threads 2] [--repeats 5] [--number 30]
"""
import argparse
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

import ember  # noqa: E402
from ember._backend import choice  # noqa: E402
import torch  # noqa: E402

from benchmarks.timing import fastest_medians  # noqa: E402

# (batch, m, k, n): attention's scores and weighted values (16 sequences x 4 heads of 64
# positions, 32 features a head), square blocks, and below the size rule
SHAPES = [(64, 64, 32, 64), (64, 64, 64, 32), (32, 64, 64, 64), (16, 128, 128, 128),
          (8, 256, 64, 256), (64, 16, 16, 16)]


def _cases(a, b):
    ea, eb = ember.tensor(a), ember.tensor(b)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)

    def on_numpy():
        with choice.only(choice.NUMPY):
            return ember.bmm(ea, eb)
    return {"ember": lambda: ember.bmm(ea, eb), "numpy": on_numpy, "torch": lambda: torch.bmm(ta, tb)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--number", type=int, default=30)
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"float32 bmm at {args.threads} thread(s); µs per call, fastest of {args.repeats} "
          "turns' medians")
    print("| batch x (m x k) @ (k x n) | multiply-adds | ember | ember on NumPy | torch | ember/torch |")
    print("|---|---:|---:|---:|---:|---:|")
    for batch, m, k, n in SHAPES:
        a = rng.standard_normal((batch, m, k), dtype=np.float32)
        b = rng.standard_normal((batch, k, n), dtype=np.float32)
        cases = _cases(a, b)
        best = fastest_medians(cases, args.repeats, args.number)
        e, p, t = (best[name] for name in ("ember", "numpy", "torch"))
        print(f"| {batch} x ({m} x {k}) @ ({k} x {n}) | {batch * m * k * n:,} | {e:.0f} | {p:.0f} "
              f"| {t:.0f} | {e / t:.2f} |")


if __name__ == "__main__":
    main()
