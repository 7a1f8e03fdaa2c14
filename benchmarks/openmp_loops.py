"""ember's OpenMP loops (``_backend/openmp_kernels.py``: batch norm, ReLU, LeakyReLU,
Hardtanh, Adam) on and off in one process: a model's training step, the two settings taking
turns (an untimed step, then ``--turn-steps`` timed ones each turn), medians in ms.

    .venv/bin/python -m benchmarks.openmp_loops --models resnet20 mobilenetv2 dcgan --threads 1 2
"""
import argparse
import statistics
import time

import ember
from ember._backend import openmp_kernels
from benchmarks.models import MODELS

LOOPS = ("relu_forward", "relu_backward", "hardtanh_forward", "hardtanh_backward",
         "leaky_relu_forward", "leaky_relu_backward", "batch_norm_forward", "batch_norm_backward",
         "adam_update")


def compare(name, threads, rounds, turn_steps):
    ember.set_num_threads(threads)
    workload = MODELS[name](ember)
    for _ in range(3):
        workload.step()
    built = {loop: openmp_kernels._function(loop) for loop in LOOPS}
    settings = {"on": built, "off": dict.fromkeys(LOOPS)}
    times = {"on": [], "off": []}
    try:
        for _ in range(rounds):
            for setting, functions in settings.items():
                openmp_kernels._functions.update(functions)
                workload.step()
                for _ in range(turn_steps):
                    start = time.perf_counter()
                    workload.step()
                    times[setting].append(time.perf_counter() - start)
    finally:
        openmp_kernels._functions.update(built)
    return {setting: statistics.median(t) * 1e3 for setting, t in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet20", "mobilenetv2", "dcgan"],
                        choices=sorted(MODELS))
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--turn-steps", type=int, default=3)
    args = parser.parse_args()
    if any(f is None for f in map(openmp_kernels._function, LOOPS)):
        raise SystemExit("the OpenMP loops cannot be built here (no C compiler?)")
    print("| model | threads | loops on ms | loops off (NumPy) ms | on/off |")
    print("|---|---:|---:|---:|---:|")
    for name in args.models:
        for threads in args.threads:
            t = compare(name, threads, args.rounds, args.turn_steps)
            print(f"| {name} | {threads} | {t['on']:.1f} | {t['off']:.1f} | "
                  f"{t['on'] / t['off']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
