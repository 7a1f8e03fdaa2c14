"""oneDNN's OpenMP threads as ember's one thread pool, against ember also splitting its NumPy
kernels over its own threads beside them (as it did before), and torch, in one process.

Each model's ember workload runs in two modes that take turns with torch's: ``one pool``
(ember as it is: where oneDNN is in use, ember does not split) and ``own splits too`` (ember's
splits forced on beside oneDNN's threads). A turn pauses 20 ms, runs one untimed step and
times three; the modes rotate until each has 3 x ``--rounds`` timed steps. Prints medians in
ms and ratios to torch.

    .venv/bin/python -m benchmarks.thread_pools --threads 2 --models mobilenetv2_channels_last
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
from ember._backend import parallel  # noqa: E402
from benchmarks.models import MODELS, copy_weights  # noqa: E402

MODES = ("torch", "one pool", "own splits too")


def _set_mode(mode):
    """``own splits too``: ember's splits run although oneDNN is in use."""
    parallel._onednn_in_use = (lambda: False) if mode == "own splits too" else _onednn_in_use


_onednn_in_use = parallel._onednn_in_use


def measure(name, rounds):
    """{mode: median step seconds} for model ``name``."""
    torch_run = MODELS[name](torch)
    ember_run = MODELS[name](ember)
    copy_weights(torch_run, ember_run)
    runs = {"torch": torch_run, "one pool": ember_run, "own splits too": ember_run}
    times = {mode: [] for mode in MODES}
    try:
        for mode in MODES:
            _set_mode(mode)
            runs[mode].step()
        for turn in range(rounds):
            for mode in MODES[turn % 3:] + MODES[:turn % 3]:
                _set_mode(mode)
                time.sleep(0.02)
                runs[mode].step()
                for _ in range(3):
                    start = time.perf_counter()
                    runs[mode].step()
                    times[mode].append(time.perf_counter() - start)
    finally:
        _set_mode("one pool")
    return {mode: statistics.median(t) for mode, t in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--models", nargs="+", default=sorted(MODELS), choices=sorted(MODELS))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    print(f"| model ({args.threads} threads, ms) | torch | one pool | own splits too "
          "| one pool / torch | own splits too / torch |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.models:
        t = measure(name, args.rounds)
        print(f"| {name} | {t['torch'] * 1e3:.1f} | {t['one pool'] * 1e3:.1f} "
              f"| {t['own splits too'] * 1e3:.1f} | {t['one pool'] / t['torch']:.2f} "
              f"| {t['own splits too'] / t['torch']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
