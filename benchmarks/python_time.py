"""ember's time per training step around its compiled kernels: the step run with every oneDNN
primitive and every one of ember's OpenMP loops replaced by a call that returns at once, so
that what is left is ember's Python (dispatch, autograd, modules, optimizer) and the NumPy work
between kernels. The results are garbage; only the time is read. A figure for comparing two
versions of ember's per-step overhead on the convolution models, whose real step is mostly
kernel time that moves with the machine's load.

    .venv/bin/python -m benchmarks.python_time resnet20 mobilenetv2 dcgan [--threads 2] [--steps 20]

Compare two checkouts by running the script in each, in turns (see BENCHMARKS.md).
"""
import argparse
import statistics
import time

import ember
from ember._backend import openmp_kernels
from ember._backend.onednn import runtime
from benchmarks.models import MODELS


def without_kernels():
    """Make oneDNN's primitives and ember's OpenMP loops return without running."""
    runtime._Primitive.execute = lambda self, *args: None
    openmp_kernels._call = lambda *args: None


def step_ms(workload, steps, warmup):
    for _ in range(warmup):
        workload.step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        workload.step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", choices=sorted(MODELS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    workloads = {name: MODELS[name](ember) for name in args.models}
    for workload in workloads.values():   # every primitive made with its real kernels first
        workload.step()
    without_kernels()
    for name, workload in workloads.items():
        print(f"{name}: {step_ms(workload, args.steps, args.warmup):.1f} ms per step without kernels")


if __name__ == "__main__":
    main()
