"""Where a training step's time goes, ember beside torch: the same model built in both
libraries (torch's weights copied into ember), a few warm-up steps each, then ``--steps`` steps
under each library's profiler, printed as ``key_averages()`` tables sorted by self CPU time.

    .venv/bin/python -m benchmarks.profile_steps resnet20 [--threads 2] [--steps 5] [--rows 25]
"""
import argparse

import torch

import ember
from benchmarks.models import MODELS, copy_weights


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rows", type=int, default=25)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    theirs, ours = MODELS[args.model](torch), MODELS[args.model](ember)
    copy_weights(theirs, ours)
    for _ in range(args.warmup):
        theirs.step()
        ours.step()
    for lib, workload in (("torch", theirs), ("ember", ours)):
        profiler = (torch if lib == "torch" else ember).profiler
        with profiler.profile() as prof:
            for _ in range(args.steps):
                workload.step()
        print(f"== {lib}: {args.model}, {args.steps} steps, {args.threads} thread(s)")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))


if __name__ == "__main__":
    main()
