"""Optimizer step time, ember vs torch, in one process: SGD with momentum, Adam and AdamW on a
ResNet-sized parameter set (~270k parameters in 65 tensors, like a CIFAR ResNet-20), a
10M-parameter MLP-sized set and a set of 200 tensors of 1 to 16 elements. Cases run
interleaved (every repeat times each case in turn); the table gives medians in milliseconds
per step. Both libraries run on ``--threads`` threads
(default 1: cases alternating every step would time one library's spinning workers against
the other at 2, see BENCHMARKS.md, "How the steps are timed").

    .venv/bin/python benchmarks/optim_step.py --repeats 30
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import ember
import torch


def resnet_shapes():
    """Conv weights, batch-norm weights and biases of a CIFAR ResNet-20 with projection
    shortcuts, plus its classifier: 65 tensors, ~272k parameters."""
    shapes = [(16, 3, 3, 3), (16,), (16,)]
    for width, blocks in ((16, 3), (32, 3), (64, 3)):
        for b in range(blocks):
            cin = width // 2 if (b == 0 and width != 16) else width
            shapes += [(width, cin, 3, 3), (width,), (width,), (width, width, 3, 3), (width,),
                       (width,)]
            if cin != width:  # projection shortcut: 1x1 conv and its batch norm
                shapes += [(width, cin, 1, 1), (width,), (width,)]
    shapes += [(10, 64), (10,)]
    return shapes


def mlp_shapes():
    """A 10M-parameter MLP: 2048-wide layers."""
    return [(2048, 784), (2048,), (2048, 2048), (2048,), (2048, 2048), (2048,), (10, 2048), (10,)]


def small_shapes():
    """200 tensors of 1 to 16 elements: scalar models, biases and gains of small networks,
    where the step's cost per parameter tensor dominates."""
    return [(), (4,), (16,), (4, 4)] * 50


def make_params(lib, shapes, rng):
    params = []
    for shape in shapes:
        p = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(shape).astype(np.float32))
        params.append(p)
    return params


OPTIMIZERS = {
    "SGD momentum": lambda lib, ps: lib.optim.SGD(ps, lr=1e-3, momentum=0.9),
    "Adam": lambda lib, ps: lib.optim.Adam(ps, lr=1e-3),
    "AdamW": lambda lib, ps: lib.optim.AdamW(ps, lr=1e-3, weight_decay=0.01),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1,
                        help="intra-op threads of both libraries (ember's also sets OpenBLAS's)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    cases = []
    for set_name, shapes in (("ResNet-20 (0.27M, 65 tensors)", resnet_shapes()),
                             ("MLP (10M, 8 tensors)", mlp_shapes()),
                             ("small (1.9K, 200 tensors)", small_shapes())):
        for opt_name, build in OPTIMIZERS.items():
            for lib in (ember, torch):
                opt = build(lib, make_params(lib, shapes, rng))
                opt.step()  # create the state
                n = sum(int(np.prod(s)) for s in shapes)
                cases.append(((set_name, n, len(shapes)), opt_name, lib.__name__, opt))
    times = {id(c): [] for c in cases}
    for _ in range(args.repeats):
        for case in cases:
            opt = case[3]
            start = time.perf_counter()
            opt.step()
            times[id(case)].append(time.perf_counter() - start)
    rows = {}
    for case in cases:
        key = (case[0][0], case[1])
        rows.setdefault(key, {})[case[2]] = statistics.median(times[id(case)]) * 1e3
    print("| parameter set | optimizer | ember ms/step | torch ms/step | ember/torch |")
    print("|---|---|---:|---:|---:|")
    for (set_name, opt_name), r in rows.items():
        print(f"| {set_name} | {opt_name} | {r['ember']:.3f} | {r['torch']:.3f} | "
              f"{r['ember'] / r['torch']:.2f} |")


if __name__ == "__main__":
    main()
