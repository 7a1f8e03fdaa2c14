"""ember's own thread split against OpenBLAS's threads, and torch, in one process.

Each model's ember workload runs in two modes that take turns with torch's: ``split``
(``ember.set_num_threads(N)``: ember's large kernels split over N threads, OpenBLAS on N
threads for the other GEMMs, its idle workers sleeping after ~0.5 ms) and ``blas`` (ember
on one thread, OpenBLAS on N threads with its default ~0.1 s idle spin: how ember ran
before it owned its threads). A turn pauses 20 ms, runs one untimed step and times three
(as ``benchmarks.run``); the modes rotate until each has ``--steps`` timed steps. Prints
medians in ms and ratios.

    .venv/bin/python -m benchmarks.threads_ab --threads 2 --models mlp resnet20
"""
import argparse
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

import torch  # noqa: E402

import ember  # noqa: E402
from ember._backend import cblas  # noqa: E402
from benchmarks.models import MODELS, copy_weights  # noqa: E402


def _elapsed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(name, threads, steps, warmup, turn_steps=3, settle=0.02):
    ember_workload, torch_workload = MODELS[name](ember), MODELS[name](torch)
    copy_weights(torch_workload, ember_workload)

    def split():
        ember.set_num_threads(threads)

    def blas():
        ember.set_num_threads(1)
        cblas.set_num_threads(threads)
        cblas.shorten_worker_spin(28)  # OpenBLAS's default: its idle workers spin ~0.1 s

    modes = {"split": (split, ember_workload), "blas": (blas, ember_workload),
             "torch": (split, torch_workload)}
    for setup, workload in modes.values():
        setup()
        for _ in range(warmup):
            workload.step()
    times = {mode: [] for mode in modes}
    order = list(modes)
    while min(len(t) for t in times.values()) < steps:
        for mode in order:
            setup, workload = modes[mode]
            setup()
            time.sleep(settle)
            workload.step()
            times[mode].extend(_elapsed(workload.step) for _ in range(turn_steps))
        order = order[1:] + order[:1]
    ember.set_num_threads(threads)
    return {mode: statistics.median(t) * 1e3 for mode, t in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"{args.threads} threads, median of {args.steps} steps; load {os.getloadavg()}")
    print("| model | ember split ms | ember on OpenBLAS threads ms | torch ms | split/blas "
          "| split/torch | blas/torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.models:
        t = compare(name, args.threads, args.steps, args.warmup)
        print(f"| {name} | {t['split']:.1f} | {t['blas']:.1f} | {t['torch']:.1f} "
              f"| {t['split'] / t['blas']:.2f} | {t['split'] / t['torch']:.2f} "
              f"| {t['blas'] / t['torch']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
