"""Where oneDNN's float32 GEMM (``dnnl_sgemm``, ``_backend/onednn/gemm.py``) starts to beat
NumPy's matmul (OpenBLAS), and torch's, on one process's threads: products from 10^5 to 10^8
multiply-adds, the three timed in turns (a pause, one untimed call, then ``--number`` timed
calls; ``--repeats`` turns each), medians in microseconds per product and oneDNN's ratio to
NumPy's. ``gemm.MIN_MULTIPLY_ADDS`` is where OpenBLAS's small-matrix kernels stop: from there
the ratio is about 1 at one thread and under it at two.

    .venv/bin/python -m benchmarks.gemm_threshold [--threads 1] [--repeats 7] [--number 50]
"""
import argparse
import os
import statistics
import sys
import time
import timeit

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

import ember  # noqa: E402
from ember._backend.onednn import gemm  # noqa: E402

try:
    import torch
except ImportError:  # the table still compares oneDNN with NumPy
    torch = None

SHAPES = [(32, 200, 27), (32, 48, 192), (64, 64, 128), (64, 64, 256), (128, 64, 128),
          (64, 128, 256), (128, 128, 256), (64, 256, 256), (128, 256, 256), (256, 256, 256),
          (512, 512, 256)]


def _timings(m, k, n, repeats, number):
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)
    cases = {"onednn": lambda: gemm.matmul(a, b), "numpy": lambda: a @ b}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        cases["torch"] = lambda: ta @ tb
    samples = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            time.sleep(0.005)
            fn()
            samples[name].append(timeit.timeit(fn, number=number) / number * 1e6)
    return {name: statistics.median(times) for name, times in samples.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--number", type=int, default=50)
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(f"float32 products at {args.threads} thread(s); µs per product, medians of "
          f"{args.repeats} interleaved turns; current MIN_MULTIPLY_ADDS {gemm.MIN_MULTIPLY_ADDS}")
    print(f"{'m x k x n':>16} {'mult-adds':>10} {'onednn':>8} {'numpy':>8} {'torch':>8} "
          f"{'onednn/numpy':>13}")
    threshold = gemm.MIN_MULTIPLY_ADDS
    gemm.MIN_MULTIPLY_ADDS = 0  # every product on oneDNN while timing it
    try:
        for m, k, n in SHAPES:
            t = _timings(m, k, n, args.repeats, args.number)
            print(f"{f'{m}x{k}x{n}':>16} {m * k * n:>10} {t['onednn']:>8.1f} {t['numpy']:>8.1f} "
                  f"{t.get('torch', float('nan')):>8.1f} {t['onednn'] / t['numpy']:>13.2f}")
    finally:
        gemm.MIN_MULTIPLY_ADDS = threshold


if __name__ == "__main__":
    main()
