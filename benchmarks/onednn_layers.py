"""Pooling, softmax, layer norm and activations forward+backward (float32, one thread) on each of ember's
kernel libraries beside torch, on the benchmark models' shapes and on smaller ones around the
size rules: NumPy's path, oneDNN's (with the size rules set aside, so that the table shows
where they belong), ember as it chooses, and torch; every repeat times each case on each in
turn (a different one first each time), in one process. Medians in ms per forward+backward,
or per forward with ``--forward`` ("nan": the library declines the case); ``onednn/numpy``
below 1 means oneDNN is faster.

    .venv/bin/python -m benchmarks.onednn_layers [--repeats 15] [--only pool|softmax|norm|act]
        [--forward] [--channels-last]
"""
import argparse
import contextlib
import time

import numpy as np
import torch

import ember
from ember._backend import choice
from ember.nn.functional import activation, normalization, pooling, softmax_family

# name -> (input shape, function of (library, input tensor)); lists the benchmark models'
# layers (benchmarks/models.py) and the sizes around each rule
POOL = {
    "LeNet MaxPool2d(2) 64x6x28x28": ((64, 6, 28, 28), lambda F, x: F.max_pool2d(x, 2)),
    "LeNet MaxPool2d(2) 64x16x10x10": ((64, 16, 10, 10), lambda F, x: F.max_pool2d(x, 2)),
    "MaxPool2d(2) 32x16x32x32": ((32, 16, 32, 32), lambda F, x: F.max_pool2d(x, 2)),
    "MaxPool2d(3, 2, 1) 32x64x16x16": ((32, 64, 16, 16), lambda F, x: F.max_pool2d(x, 3, 2, 1)),
    "MaxPool2d(2) 8x16x12x12": ((8, 16, 12, 12), lambda F, x: F.max_pool2d(x, 2)),
    "MaxPool2d(2) 4x16x12x12": ((4, 16, 12, 12), lambda F, x: F.max_pool2d(x, 2)),
    "MaxPool2d(2) 2x8x12x12": ((2, 8, 12, 12), lambda F, x: F.max_pool2d(x, 2)),
    "AvgPool2d(2) 32x16x32x32": ((32, 16, 32, 32), lambda F, x: F.avg_pool2d(x, 2)),
    "AvgPool2d(3, 1, 1) 32x16x32x32": ((32, 16, 32, 32), lambda F, x: F.avg_pool2d(x, 3, 1, 1)),
    "AvgPool2d(2) 8x16x12x12": ((8, 16, 12, 12), lambda F, x: F.avg_pool2d(x, 2)),
    "AvgPool2d(2) 4x16x12x12": ((4, 16, 12, 12), lambda F, x: F.avg_pool2d(x, 2)),
    "AvgPool2d(2) 2x8x12x12": ((2, 8, 12, 12), lambda F, x: F.avg_pool2d(x, 2)),
    "AvgPool2d(2) 1x4x12x12": ((1, 4, 12, 12), lambda F, x: F.avg_pool2d(x, 2)),
    "AdaptiveAvgPool2d(4) 32x64x8x8": ((32, 64, 8, 8),
                                       lambda F, x: F.adaptive_avg_pool2d(x, 4)),
}
SOFTMAX = {
    "softmax attention 16x4x64x64": ((16, 4, 64, 64), lambda F, x: F.softmax(x, -1)),
    "log_softmax LM logits 1024x1000": ((1024, 1000), lambda F, x: F.log_softmax(x, -1)),
    "log_softmax logits 128x10": ((128, 10), lambda F, x: F.log_softmax(x, -1)),
    "softmax 1024x64": ((1024, 64), lambda F, x: F.softmax(x, -1)),
    "softmax 512x64": ((512, 64), lambda F, x: F.softmax(x, -1)),
    "softmax 256x64": ((256, 64), lambda F, x: F.softmax(x, -1)),
    "softmax 128x64": ((128, 64), lambda F, x: F.softmax(x, -1)),
    "softmax 64x64": ((64, 64), lambda F, x: F.softmax(x, -1)),
    "log_softmax 512x64": ((512, 64), lambda F, x: F.log_softmax(x, -1)),
    "log_softmax 256x64": ((256, 64), lambda F, x: F.log_softmax(x, -1)),
    "log_softmax 128x64": ((128, 64), lambda F, x: F.log_softmax(x, -1)),
}
NORM = {
    "LayerNorm(128) Transformer LM 16x64x128": ((16, 64, 128), None),
    "LayerNorm(256) 32x128x256": ((32, 128, 256), None),
    "LayerNorm(128) 8x64x128": ((8, 64, 128), None),
    "LayerNorm(128) 4x64x128": ((4, 64, 128), None),
    "LayerNorm(128) 2x64x128": ((2, 64, 128), None),
    "LayerNorm(128) 1x64x128": ((1, 64, 128), None),
}
ACT = {f"{name} {rows}x{cols}": ((rows, cols), fn)
       for name, fn in (("gelu", lambda F, x: F.gelu(x)),
                        ("gelu tanh", lambda F, x: F.gelu(x, approximate="tanh")),
                        ("silu", lambda F, x: F.silu(x)),
                        ("relu6", lambda F, x: F.relu6(x)))
       for rows, cols in ((1024, 512), (256, 512), (128, 512), (32, 512), (16, 512), (8, 512))}
GROUPS = {"pool": POOL, "softmax": SOFTMAX, "norm": NORM, "act": ACT}
RULES = [(pooling, "MAX_POOL_ONEDNN_MIN_ELEMENTS"), (softmax_family, "SOFTMAX_ONEDNN_MIN_ELEMENTS"),
         (normalization, "LAYER_NORM_ONEDNN_MIN_ELEMENTS"),
         (activation, "ELTWISE_ONEDNN_MIN_ELEMENTS")]
LIBRARIES = ["torch", choice.NUMPY, choice.ONEDNN, "ember"]


def _step(lib, shape, fn, x, g, channels_last, forward_only):
    """One forward+backward (or forward) of the case on ``lib``."""
    xt = lib.tensor(x)
    if channels_last:
        xt = xt.contiguous(memory_format=lib.channels_last)
    xt.requires_grad_(not forward_only)
    gt = lib.tensor(g)
    if fn is None:  # a LayerNorm module over the last dimension
        layer = lib.nn.LayerNorm(shape[-1])

        def fn(F, t):
            return layer(t)
    F = lib.nn.functional

    def run():
        xt.grad = None
        out = fn(F, xt)
        if not forward_only:
            out.backward(gt)
    return run


@contextlib.contextmanager
def _library(name):
    """Run ember's choices on ``name`` (oneDNN with its size rules set aside)."""
    if name in ("torch", "ember"):
        yield
        return
    saved = [(module, rule, getattr(module, rule)) for module, rule in RULES]
    try:
        if name == choice.ONEDNN:
            for module, rule, value in saved:
                setattr(module, rule, dict.fromkeys(value, 0) if isinstance(value, dict) else 0)
        with choice.only(name):
            yield
    finally:
        for module, rule, value in saved:
            setattr(module, rule, value)


def _time(name, run):
    with _library(name):
        start = time.perf_counter()
        run()
        return time.perf_counter() - start


def measure(cases, repeats, channels_last=False, forward_only=False):
    """{case: {library: median seconds (nan where it declines)}}."""
    rng = np.random.default_rng(0)
    results = {}
    for case, (shape, fn) in cases.items():
        x = rng.standard_normal(shape).astype(np.float32)
        probe = torch.tensor(x)
        out_shape = tuple((torch.nn.LayerNorm(shape[-1])(probe) if fn is None
                           else fn(torch.nn.functional, probe)).shape)
        g = rng.standard_normal(out_shape).astype(np.float32)
        runs = {name: _step(torch if name == "torch" else ember, shape, fn, x, g,
                            channels_last and len(shape) == 4, forward_only)
                for name in LIBRARIES}
        times = {name: [] for name in LIBRARIES}
        for repeat in range(repeats + 1):  # the first round creates the primitives
            turn = repeat % len(LIBRARIES)  # each library goes first in turn
            for name in LIBRARIES[turn:] + LIBRARIES[:turn]:
                try:
                    elapsed = _time(name, runs[name])
                except choice.KernelNotApplicable:
                    elapsed = float("nan")
                if repeat:
                    times[name].append(elapsed)
        results[case] = {name: float(np.median(t)) for name, t in times.items()}
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", choices=sorted(GROUPS))
    parser.add_argument("--channels-last", action="store_true",
                        help="pooling inputs in channels-last memory format")
    parser.add_argument("--forward", action="store_true",
                        help="time the forward alone (no input requires grad)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    if not choice.enabled(choice.ONEDNN):
        raise SystemExit("oneDNN is not in use here (not installed, or EMBER_ONEDNN=0)")
    cases = {}
    for group, table in GROUPS.items():
        if args.only in (None, group):
            cases.update(table)
    results = measure(cases, args.repeats, args.channels_last, args.forward)
    print(f"| case ({'forward' if args.forward else 'forward+backward'}, ms) | torch | numpy "
          "| onednn | ember | onednn/numpy | ember/torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for case, t in results.items():
        cells = [f"{t[name] * 1e3:.3f}" for name in LIBRARIES]
        print(f"| {case} | " + " | ".join(cells)
              + f" | {t[choice.ONEDNN] / t[choice.NUMPY]:.2f} | {t['ember'] / t['torch']:.2f} |")


if __name__ == "__main__":
    main()
