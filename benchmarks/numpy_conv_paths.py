"""What the NumPy convolution paths buy: each model's training step on ember's NumPy kernels
alone (``ember.backends.mkldnn.flags(enabled=False)``, as ``EMBER_ONEDNN=0``) with every path, without the
depthwise plans (dense and row GEMMs: the tap loop instead), and without the ungrouped
shortcuts (channels-last columns, the input gradient as a convolution, the fused backward), in
turns in one process; medians in ms. These paths are the only CPU convolutions where oneDNN's
wheel does not install (macOS, aarch64) and for float64.

    .venv/bin/python -m benchmarks.numpy_conv_paths --models mobilenetv2 resnet20 dcgan --threads 1
"""
import argparse
import contextlib
import statistics
import time

import ember
from ember._backend import depthwise, im2col
from benchmarks.models import MODELS

SETTINGS = {
    "every path": {},
    "no depthwise plans": {(depthwise, "DEPTHWISE_DENSE"): False, (depthwise, "DEPTHWISE_ROWS"): False},
    "no ungrouped shortcuts": {(im2col, "INPUT_GRAD_AS_CONV"): False, (im2col, "FUSED_BACKWARD"): False,
                               (im2col, "CHANNELS_LAST_MIN_CHANNELS"): 10**9},
}


@contextlib.contextmanager
def _setting(changes):
    before = {key: getattr(*key) for key in changes}
    for (module, name), value in changes.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for (module, name), value in before.items():
            setattr(module, name, value)


def compare(name, rounds, steps_per_turn=2):
    """Median ms per step of model ``name`` under each of ``SETTINGS``, in turns."""
    workload = MODELS[name](ember)
    times = {label: [] for label in SETTINGS}
    with ember.backends.mkldnn.flags(enabled=False):
        for changes in SETTINGS.values():   # one untimed step each
            with _setting(changes):
                workload.step()
        for _ in range(rounds):
            for label, changes in SETTINGS.items():
                with _setting(changes):
                    start = time.perf_counter()
                    for _ in range(steps_per_turn):
                        workload.step()
                    times[label].append((time.perf_counter() - start) / steps_per_turn * 1e3)
    return {label: statistics.median(t) for label, t in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["mobilenetv2", "resnet20", "dcgan"],
                        choices=list(MODELS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    labels = list(SETTINGS)
    print("| model | " + " ms | ".join(labels) + " ms |")
    print("|---|" + "---:|" * len(labels))
    for name in args.models:
        times = compare(name, args.rounds)
        print(f"| {name} | " + " | ".join(f"{times[label]:.1f}" for label in labels) + " |")


if __name__ == "__main__":
    main()
