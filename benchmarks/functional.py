"""Forward+backward time of nn.functional's losses, activations, softmaxes and layer norm (the
ones outside the op table of tests/op_db), ember beside torch in one process: each case on a
(32, 10) batch
(``tiny``, where the time is the framework's overhead) and a (222, 295) one (``medium``), the
input requiring grad, ``backward()`` of the summed output. Cases run interleaved (every repeat
times each case on each library in turn); the table gives medians in microseconds and the
ratio, worst first.

    .venv/bin/python -m benchmarks.functional [--repeats 15] [--threads 1] [--only NAME]
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

SIZES = {"tiny": (32, 10), "medium": (222, 295)}
SAMPLE_SECONDS = 0.005   # each timed sample lasts at least this long


def _probabilities(x):
    return 1 / (1 + np.exp(-x))


# name -> fn(lib, x, data) with ``data`` the arrays the case reads besides its input
CASES = {
    "binary_cross_entropy_with_logits": lambda lib, x, d: lib.nn.functional.binary_cross_entropy_with_logits(
        x, d["target"]),
    "binary_cross_entropy": lambda lib, x, d: lib.nn.functional.binary_cross_entropy(x.sigmoid(), d["target"]),
    "mse_loss": lambda lib, x, d: lib.nn.functional.mse_loss(x, d["target"]),
    "smooth_l1_loss": lambda lib, x, d: lib.nn.functional.smooth_l1_loss(x, d["target"]),
    "huber_loss": lambda lib, x, d: lib.nn.functional.huber_loss(x, d["target"], delta=0.5),
    "nll_loss": lambda lib, x, d: lib.nn.functional.nll_loss(x, d["classes"]),
    "logsigmoid": lambda lib, x, d: lib.nn.functional.logsigmoid(x).sum(),
    "elu": lambda lib, x, d: lib.nn.functional.elu(x).sum(),
    "selu": lambda lib, x, d: lib.nn.functional.selu(x).sum(),
    "celu": lambda lib, x, d: lib.nn.functional.celu(x, 1.5).sum(),
    "softplus": lambda lib, x, d: lib.nn.functional.softplus(x).sum(),
    "mish": lambda lib, x, d: lib.nn.functional.mish(x).sum(),
    "outer": lambda lib, x, d: lib.outer(x[:, 0], x[0]).sum(),
    "addr": lambda lib, x, d: lib.addr(x, x[:, 0], x[0], beta=0.5, alpha=2.0).sum(),
    "softmax": lambda lib, x, d: (lib.nn.functional.softmax(x, -1) * d["target"]).sum(),
    "log_softmax": lambda lib, x, d: (lib.nn.functional.log_softmax(x, -1) * d["target"]).sum(),
    "layer_norm": lambda lib, x, d: (lib.nn.functional.layer_norm(x, x.shape[-1:], d["weight"], d["bias"])
                                     * d["target"]).sum(),
}


def _inputs(lib, shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    data = {"target": lib.tensor(_probabilities(rng.standard_normal(shape)).astype(np.float32)),
            "classes": lib.tensor(rng.integers(0, shape[1], shape[0])),
            "weight": lib.tensor(rng.standard_normal(shape[1]).astype(np.float32), requires_grad=True),
            "bias": lib.tensor(rng.standard_normal(shape[1]).astype(np.float32), requires_grad=True)}
    return lib.tensor(x, requires_grad=True), data


def _calibrated(step):
    """How many calls of ``step`` make one timed sample (after an untimed call, which may set
    things up: a library's first use builds or loads its compiled code)."""
    step()
    count = 1
    while True:
        start = time.perf_counter()
        for _ in range(count):
            step()
        if time.perf_counter() - start >= SAMPLE_SECONDS:
            return count
        count *= 2


def measure(names, repeats):
    """{(name, size): {library: median microseconds per forward+backward}}."""
    steps = {}
    for name in names:
        for size, shape in SIZES.items():
            for lib in (ember, torch):
                x, data = _inputs(lib, shape, np.random.default_rng(0))
                fn = CASES[name]

                def step(lib=lib, x=x, data=data, fn=fn):
                    fn(lib, x, data).backward()
                    x.grad = None
                steps[name, size, lib.__name__] = (step, _calibrated(step))
    samples = {key: [] for key in steps}
    for _ in range(repeats):
        for key, (step, count) in steps.items():
            start = time.perf_counter()
            for _ in range(count):
                step()
            samples[key].append((time.perf_counter() - start) / count * 1e6)
    table = {}
    for (name, size, library), times in samples.items():
        table.setdefault((name, size), {})[library] = statistics.median(times)
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", action="append", help="these cases (repeatable)")
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    names = args.only or list(CASES)
    table = measure(names, args.repeats)
    print(f"forward+backward, medians of {args.repeats} interleaved samples; threads {args.threads}; "
          f"torch {torch.__version__}")
    print("| case | size | ember µs | torch µs | ember/torch |")
    print("|---|---|---:|---:|---:|")
    rows = sorted(table.items(), key=lambda kv: -kv[1]["ember"] / kv[1]["torch"])
    for (name, size), times in rows:
        print(f"| {name} | {size} | {times['ember']:.1f} | {times['torch']:.1f} | "
              f"{times['ember'] / times['torch']:.2f} |")


if __name__ == "__main__":
    main()
