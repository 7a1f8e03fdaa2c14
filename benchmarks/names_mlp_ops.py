"""The ops of names_mlp's training step one by one (``benchmarks/programs/names_mlp.py``: a
batch of 32 contexts, an embedding of 27 characters in 10 dimensions, a 30x200 layer with a
hand-written batch norm, tanh, a 200x27 layer, cross entropy; and two ops of its neural
bigram's step over 16,000 character pairs), ember beside torch at their shapes, interleaved in
one process, 1 thread; medians in microseconds. Which of the step's small ops keep its training
loop over torch's.

    .venv/bin/python -m benchmarks.names_mlp_ops [--repeats 5]
"""
import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import ember
import torch

from benchmarks import timing


def cases(lib):
    rng = np.random.default_rng(0)

    def floats(*shape, grad=False):
        return lib.tensor(rng.standard_normal(shape, dtype=np.float32), requires_grad=grad)
    table = floats(27, 10, grad=True)
    contexts = lib.tensor(rng.integers(0, 27, (32, 3)))
    embedded = floats(32, 30)
    w1, w2, b2 = floats(30, 200, grad=True), floats(200, 27, grad=True), floats(27, grad=True)
    hidden = floats(32, 200, grad=True)
    gain = lib.ones((1, 200), requires_grad=True)
    logits = floats(32, 27, grad=True)
    targets = lib.tensor(rng.integers(0, 27, 32))
    pairs = lib.tensor(rng.integers(0, 27, 16000))    # the neural bigram's 16,000 pairs
    counts = floats(16000, 27, grad=True)
    F = lib.nn.functional
    return {
        "randint (32,)": lambda: lib.randint(0, 20000, (32,)),
        "embedding C[X]": lambda: table[contexts],
        "matmul 32x30 @ 30x200": lambda: embedded @ w1,
        "mean(0, keepdim)": lambda: hidden.mean(0, keepdim=True),
        "std(0, keepdim)": lambda: hidden.std(0, keepdim=True),
        "broadcast mul (1,200)*(32,200)": lambda: gain * hidden,
        "tanh (32,200)": lambda: lib.tanh(hidden),
        "h @ W2 + b2": lambda: hidden @ w2 + b2,
        "cross_entropy forward": lambda: F.cross_entropy(logits, targets),
        "cross_entropy forward+backward": lambda: F.cross_entropy(logits, targets).backward(),
        "bigram: one_hot (16000,) x 27": lambda: F.one_hot(pairs, num_classes=27),
        "bigram: counts / counts.sum(1) forward+backward": lambda: (
            counts / counts.sum(1, keepdims=True)).sum().backward(),
    }


def median_us(fn, calls=300):
    for _ in range(20):
        fn()
    return timing.median_us(fn, calls)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds of both libraries in turn")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    libs = {"torch": cases(torch), "ember": cases(ember)}
    samples = {}
    for _ in range(args.repeats):
        for lib, table in libs.items():
            for name, fn in table.items():
                samples.setdefault((name, lib), []).append(median_us(fn))
    print("| op | ember µs | torch µs | ember/torch |")
    print("|---|---:|---:|---:|")
    for name in libs["torch"]:
        ours, theirs = (statistics.median(samples[(name, lib)]) for lib in ("ember", "torch"))
        print(f"| {name} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
