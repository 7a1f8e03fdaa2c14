"""BatchNorm2d forward+backward (training) on each of ember's kernel libraries beside torch,
row-major or channels-last, one thread, timed in turns in one process; medians in ms
("nan": the library declines the case, e.g. oneDNN's row-major batch norm).

    .venv/bin/python -m benchmarks.batch_norm_kernels [--channels-last] [--repeats 15]
"""
import argparse
import time

import numpy as np
import torch

import ember
from ember._backend import choice

SHAPES = [(32, 16, 32, 32), (32, 64, 8, 8), (32, 96, 16, 16)]


def _step(lib, x, g, channels_last):
    module = lib.nn.BatchNorm2d(x.shape[1])
    layout = lib.channels_last if channels_last else lib.contiguous_format
    xt = lib.tensor(x).contiguous(memory_format=layout).requires_grad_()
    gt = lib.tensor(g).contiguous(memory_format=layout)

    def run():
        module(xt).backward(gt)
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    libraries = ["torch", choice.NUMPY] + ([choice.ONEDNN] if choice.enabled(choice.ONEDNN) else [])
    rng = np.random.default_rng(0)
    print("| shape | " + " | ".join(libraries) + " |")
    print("|---|" + "---:|" * len(libraries))
    for shape in SHAPES:
        x = rng.standard_normal(shape).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        runs = {name: _step(torch if name == "torch" else ember, x, g, args.channels_last)
                for name in libraries}
        times = {name: [] for name in libraries}
        for _ in range(args.repeats):
            for name, run in runs.items():
                forced = choice.only(name) if name != "torch" else None
                try:
                    if forced:
                        forced.__enter__()
                    start = time.perf_counter()
                    run()
                    times[name].append(time.perf_counter() - start)
                except choice.KernelNotApplicable:
                    times[name].append(float("nan"))
                finally:
                    if forced:
                        forced.__exit__(None, None, None)
        cells = [f"{np.median(times[n]) * 1e3:.3f}" for n in libraries]
        print(f"| {shape} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
