"""Cross entropy over class indices, forward and backward, on the fused row loop
(``vector_math.cross_entropy_rows``, at every size here: ember takes it below
``loss.FUSED_MAX_ELEMENTS``) and on the NumPy passes, beside torch, at classifier shapes,
interleaved in one process; medians in microseconds.

    .venv/bin/python -m benchmarks.cross_entropy [--threads N] [--repeats 3]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import ember
import torch

from benchmarks import timing
from ember.nn.functional import loss

SHAPES = [(32, 27), (128, 10), (64, 1000), (512, 1000), (700, 10000)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shapes", nargs="+", default=[f"{r}x{c}" for r, c in SHAPES],
                        help="logits as ROWSxCLASSES")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    fused_choice = loss._fused_cross_entropy
    rng = np.random.default_rng(0)
    print(f"| logits, {args.threads} thread(s) | fused loop µs | NumPy passes µs | torch µs | fused/torch |")
    print("|---|---:|---:|---:|---:|")
    for rows, classes in (map(int, shape.split("x")) for shape in args.shapes):
        x = rng.standard_normal((rows, classes), dtype=np.float32)
        t = rng.integers(0, classes, rows)
        xe, te = ember.tensor(x, requires_grad=True), ember.tensor(t)
        xt, tt = torch.tensor(x, requires_grad=True), torch.tensor(t)

        def on(choice, xe=xe, te=te):
            def run():
                loss._fused_cross_entropy = choice
                ember.nn.functional.cross_entropy(xe, te).backward()
            return run
        limit = loss.FUSED_MAX_ELEMENTS
        loss.FUSED_MAX_ELEMENTS = float("inf")
        cases = {"fused": on(fused_choice), "passes": on(loss._no_fused_cross_entropy),
                 "torch": lambda xt=xt, tt=tt: torch.nn.functional.cross_entropy(xt, tt).backward()}
        try:
            calls = 200 if rows * classes < 100_000 else 20
            r = timing.fastest_medians(cases, args.repeats, calls)
        finally:
            loss._fused_cross_entropy = fused_choice
            loss.FUSED_MAX_ELEMENTS = limit
        print(f"| {rows} x {classes} | {r['fused']:.1f} | {r['passes']:.1f} | {r['torch']:.1f} | "
              f"{r['fused'] / r['torch']:.2f} |")


if __name__ == "__main__":
    main()
