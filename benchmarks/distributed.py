"""ember.distributed benchmarks: all_reduce of a 40 MB tensor against raw mpi4py on NumPy
arrays, and a DistributedDataParallel training step on 2 processes against one process.

    .venv/bin/python benchmarks/distributed.py [--reps 20]

The script runs the one-process MLP step itself, then starts a 2-rank job of itself through
``python -m ember.distributed.run`` for the rest, and prints a Markdown table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import ember
from ember import nn

ELEMENTS = 10_000_000  # float32: 40 MB
BATCH = 128


def mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def median_ms(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def training_step(model, batch):
    """One SGD step of ``model`` on ``batch`` rows of MNIST-shaped data; returns a callable."""
    optimizer = ember.optim.SGD(model.parameters(), lr=0.01)
    x = ember.randn(batch, 784)
    y = ember.randint(0, 10, (batch,))

    def step():
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return step


def worker(reps):
    """In each rank of the 2-process job: the three timings (medians, ms), rank 0 prints them."""
    import ember.distributed as dist
    from mpi4py import MPI
    from ember.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi")
    world = dist.get_world_size()
    comm = MPI.COMM_WORLD
    array = np.full(ELEMENTS, dist.get_rank() + 1, np.float32)
    tensor = ember.full((ELEMENTS,), float(dist.get_rank() + 1))

    def raw():
        comm.Barrier()
        comm.Allreduce(MPI.IN_PLACE, array, op=MPI.SUM)

    def ours():
        dist.barrier()
        dist.all_reduce(tensor)

    results = {"raw_ms": median_ms(raw, reps), "ember_ms": median_ms(ours, reps)}
    step = training_step(DDP(mlp()), BATCH // world)
    results["ddp_step_ms"] = median_ms(lambda: (dist.barrier(), step()), reps)
    if dist.get_rank() == 0:
        print(json.dumps(results), flush=True)
    dist.destroy_process_group()


def single_process_ms(threads, reps):
    """The one-process MLP step, in a fresh process with ``threads`` BLAS threads."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads)
    out = subprocess.run([sys.executable, __file__, "--single", "--reps", str(reps)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--single", action="store_true")
    args = parser.parse_args()
    if args.worker:
        return worker(args.reps)
    if args.single:
        return print(median_ms(training_step(mlp(), BATCH), args.reps))
    single = {threads: single_process_ms(threads, args.reps) for threads in ("1", "2")}
    job = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2",
                          __file__, "--worker", "--reps", str(args.reps)],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True,
                         env=dict(os.environ))
    r = json.loads(job.stdout.strip().splitlines()[-1])
    mb = ELEMENTS * 4 / 1e6
    print(f"| measurement | median ms | note |\n|---|---:|---|\n"
          f"| all_reduce {mb:.0f} MB float32, raw mpi4py (NumPy, IN_PLACE) | {r['raw_ms']:.1f} | "
          f"{mb / r['raw_ms']:.2f} GB/s |\n"
          f"| all_reduce {mb:.0f} MB float32, ember.distributed | {r['ember_ms']:.1f} | "
          f"{r['ember_ms'] / r['raw_ms']:.2f}x raw |\n"
          f"| MLP 784-512-512-10 SGD step, 1 process (1 BLAS thread), batch {BATCH} | {single['1']:.1f} | |\n"
          f"| same, 1 process (2 BLAS threads) | {single['2']:.1f} | |\n"
          f"| same, DDP 2 processes (1 BLAS thread each), batch {BATCH // 2} each | "
          f"{r['ddp_step_ms']:.1f} | {single['1'] / r['ddp_step_ms']:.2f}x the 1-thread process |")


if __name__ == "__main__":
    main()
