"""Batched matrix products, ``torch.bmm``-shaped, in float32: ember's ``bmm`` with its kernel
choice (oneDNN's matmul primitive from the size rule on, ``onednn.gemm.batched_matmul``), ember's
``bmm`` on NumPy's kernel alone (NumPy's ``matmul``: a loop of OpenBLAS calls), and torch's
``bmm``. With ``--strided``, the products of packed self-attention instead (``matmul`` of
the heads' strided views of a (16, 64, 3 x 128) projection, 4 heads, as MultiheadAttention's
fused path runs them): ember's kernel choice, NumPy's ``matmul`` and torch's ``matmul`` of the
same views. The three are timed in turns (``--repeats`` turns of ``--number`` calls each); the
table gives the fastest turn's median in microseconds.

    .venv/bin/python -m benchmarks.batched_matmul [--threads 2] [--repeats 5] [--number 30] [--strided]
"""
import argparse
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

import ember  # noqa: E402
from ember._backend import choice, products  # noqa: E402
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


def _head_views(packed):
    """q, k, v of a (N, L, 3E) projection as (N, heads, L, E / heads) views (4 heads)."""
    n, length, width = packed.shape
    return packed.reshape(n, length, 3, 4, width // 12).transpose(2, 0, 3, 1, 4)


def _strided_cases(rng):
    """(name, a, b) of packed attention's products: its scores, weighted values and the
    backward's four."""
    q, k, v = _head_views(rng.standard_normal((16, 64, 384), dtype=np.float32))
    weights = rng.random((16, 4, 64, 64), dtype=np.float32)
    grad = _head_views(rng.standard_normal((16, 64, 384), dtype=np.float32))[0]
    return [("q @ k^T", q, k.swapaxes(-1, -2)), ("weights @ v", weights, v),
            ("weights^T @ grad", weights.swapaxes(-1, -2), grad), ("grad @ v^T", grad, v.swapaxes(-1, -2)),
            ("scores' grad @ k", weights, k), ("scores' grad^T @ q", weights.swapaxes(-1, -2), q)]


def _strided(args, rng):
    print("| packed attention product | ember | NumPy | torch | ember/torch |")
    print("|---|---:|---:|---:|---:|")
    for name, a, b in _strided_cases(rng):
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        cases = {"ember": lambda a=a, b=b: products.matmul(a, b), "numpy": lambda a=a, b=b: np.matmul(a, b),
                 "torch": lambda ta=ta, tb=tb: torch.matmul(ta, tb)}
        best = fastest_medians(cases, args.repeats, args.number)
        e, p, t = (best[k] for k in ("ember", "numpy", "torch"))
        print(f"| {name} | {e:.0f} | {p:.0f} | {t:.0f} | {e / t:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--number", type=int, default=30)
    parser.add_argument("--strided", action="store_true",
                        help="packed self-attention's products of strided head views")
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    if args.strided:
        choice.enabled(choice.ONEDNN)   # (oneDNN's threads follow ember's count)
        print(f"float32 products at {args.threads} thread(s); µs per call, fastest of {args.repeats} "
              "turns' medians")
        _strided(args, rng)
        return
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
