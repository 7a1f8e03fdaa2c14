"""Training steps with NumPy's arrays on 64-byte boundaries and without, in one process.

Each model is built twice in ember, once while NumPy allocates with its default handler and once
with ember's aligned one (``ember._backend.aligned_memory``), and once in torch; their steps take
turns, each ember step under the handler its model was built with. Prints the median step times
and the ratios.

    python -m benchmarks.aligned_memory [--threads N] [--models dcgan resnet20 ...] [--repeats N]
"""
import argparse
import statistics
import time

import ember
from ember._backend import aligned_memory

from .models import MODELS


def _under(aligned):
    (aligned_memory.install if aligned else aligned_memory.uninstall)()


def compare(name, repeats, warmup=3):
    """Median ms per step: {"default": ..., "aligned": ..., "torch": ...}."""
    import torch
    workloads = {}
    for label, aligned in (("default", False), ("aligned", True)):
        _under(aligned)
        workloads[label] = (MODELS[name](ember), aligned)
    _under(True)
    workloads["torch"] = (MODELS[name](torch), True)
    samples = {label: [] for label in workloads}
    try:
        for repeat in range(warmup + repeats):
            for label, (workload, aligned) in workloads.items():
                _under(aligned)
                start = time.perf_counter()
                workload.step()
                if repeat >= warmup:
                    samples[label].append((time.perf_counter() - start) * 1e3)
    finally:
        _under(True)
    return {label: statistics.median(s) for label, s in samples.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--models", nargs="+", default=["dcgan", "resnet20", "mobilenetv2", "lenet"],
                        choices=sorted(MODELS))
    parser.add_argument("--repeats", type=int, default=12)
    args = parser.parse_args(argv)
    import torch
    ember.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    if not aligned_memory.installed():
        raise SystemExit("ember's aligned handler is not installed (no C compiler, or "
                         "EMBER_ALIGNED_MEMORY=0): nothing to compare")
    print(f"{args.threads} thread(s), median ms per step of {args.repeats}, the three taking turns")
    print("| model | default | aligned | torch | default/torch | aligned/torch | aligned/default |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.models:
        m = compare(name, args.repeats)
        print(f"| {name} | {m['default']:.1f} | {m['aligned']:.1f} | {m['torch']:.1f} | "
              f"{m['default'] / m['torch']:.2f} | {m['aligned'] / m['torch']:.2f} | "
              f"{m['aligned'] / m['default']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
