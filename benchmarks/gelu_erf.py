"""Exact GELU and erf on float32, ember against torch, and ember's float32 kernels against
its general (Cody) path, interleaved in one process; medians in microseconds.

    .venv/bin/python -m benchmarks.gelu_erf [--threads N] [--repeats R]
"""
import argparse
import statistics

import numpy as np
import torch

import ember
from ember._backend import special
from ember.nn.functional import activation
from benchmarks.timing import median_us


def _cases(x):
    xp = x.astype(np.float32)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    cases = {}
    for lib in (ember, torch):
        t = lib.tensor(xp, requires_grad=True)
        grad = lib.tensor(g)

        def forward(lib=lib, t=t):
            with lib.no_grad():
                lib.nn.functional.gelu(t)

        def forward_backward(lib=lib, t=t, grad=grad):
            lib.nn.functional.gelu(t).backward(grad)

        def erf(lib=lib, t=t):
            with lib.no_grad():
                lib.erf(t)
        cases[lib.__name__] = {"gelu forward": forward, "gelu forward+backward": forward_backward,
                               "erf": erf}
    # the general path the float32 kernels replace: Phi from Cody's erfc, erf in three ranges
    cases["ember, general path"] = {
        "gelu forward": lambda: xp * activation._normal_cdf_array(np, xp),
        "gelu forward+backward": lambda: (xp * activation._normal_cdf_array(np, xp),
                                          activation._gelu_grad_array(xp, "none") * g),
        "erf": lambda: special._evaluate(special._erf, xp)}
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--shape", type=int, nargs="+", default=[1024, 512])
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    x = np.random.default_rng(0).standard_normal(args.shape) * 2
    cases = _cases(x)
    names = list(cases["ember"])
    samples = {(lib, name): [] for lib in cases for name in names}
    for _ in range(5):  # rounds, each timing every case in turn
        for lib in cases:
            for name in names:
                samples[lib, name].append(median_us(cases[lib][name], args.repeats))
    print(f"float32 {tuple(args.shape)}, {args.threads} thread(s); median µs")
    print("| op | ember | torch | ember/torch | ember general path | general/ember |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in names:
        e, t, g = (statistics.median(samples[lib, name])
                   for lib in ("ember", "torch", "ember, general path"))
        print(f"| {name} | {e:.0f} | {t:.0f} | {e / t:.2f} | {g:.0f} | {g / e:.1f} |")


if __name__ == "__main__":
    main()
