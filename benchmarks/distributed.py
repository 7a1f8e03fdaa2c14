"""ember.distributed benchmarks (issue 9).

1. all_reduce of a 40 MB float32 tensor through ``ember.distributed`` against raw mpi4py on a
   NumPy array (2 ranks).
2. For an MLP 784-512-512-10 and a CIFAR ResNet-20: one SGD step in one process on the global
   batch against DistributedDataParallel on 2 ranks with half the batch each (1 BLAS thread per
   process), for the default bucket size and a small one.
3. How much of the all-reduce time DDP hides behind backward, from DDP's ``_timeline`` hook:
   (a) first bucket all-reduce start -> end of backward (the window for overlap),
   (b) time blocked in ``wait()`` for the outstanding all-reduces after the slower rank's
       backward ended (so that waiting for the other rank's compute is not counted),
   (c) the same buckets all-reduced one after another after backward (no overlap);
   hidden fraction = 1 - (b) / (c).

    PYTHONPATH=src .venv/bin/python benchmarks/distributed.py [--reps 12]

The script runs the one-process steps in fresh processes, then starts a 2-rank job of itself
through ``python -m ember.distributed.run`` (the venv's ``mpiexec``) and prints Markdown tables.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SRC = str(Path(__file__).resolve().parents[1] / "src")
sys.path.insert(0, SRC)
import ember  # noqa: E402
from ember import nn  # noqa: E402

ELEMENTS = 10_000_000  # float32: 40 MB
WARMUP = 3
GLOBAL_BATCH = {"mlp": 128, "resnet20": 64}
BUCKET_CAPS_MB = (25, 0.25)  # DDP's default, and small enough for several buckets per model


# -- models -----------------------------------------------------------------------------------

def mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


class BasicBlock(nn.Module):
    """Two 3x3 conv + batch-norm layers and a shortcut (1x1 conv + batch norm when the shape
    changes)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        out = nn.functional.relu(self.bn1(self.conv1(x)))
        return nn.functional.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


def resnet20():
    """ResNet-20 for CIFAR-10: 3 stages of 3 basic blocks, widths 16/32/64 (0.27M parameters)."""
    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    cin = 16
    for width, stride in ((16, 1), (32, 2), (64, 2)):
        for block in range(3):
            layers.append(BasicBlock(cin, width, stride if block == 0 else 1))
            cin = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


MODELS = {"mlp": (mlp, (784,)), "resnet20": (resnet20, (3, 32, 32))}


def build(name):
    ember.manual_seed(0)
    return MODELS[name][0]()


def training_step(model, name, batch):
    """One SGD step of ``model`` on ``batch`` random samples; returns a callable."""
    optimizer = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = ember.randn(batch, *MODELS[name][1])
    y = ember.randint(0, 10, (batch,))

    def step():
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return step


# -- timing -----------------------------------------------------------------------------------

def timed(fn, reps, before=None):
    """Milliseconds of each of ``reps`` calls of ``fn`` after ``WARMUP`` calls; ``before`` runs
    untimed ahead of every call."""
    times = []
    for i in range(WARMUP + reps):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        if i >= WARMUP:
            times.append((time.perf_counter() - start) * 1e3)
    return times


def overlap_of(timelines):
    """(a) the all-reduce window during backward, (b) the all-reduce time exposed after
    backward, and the ranks' backward skew, in ms, from one step's DDP timelines of all ranks.

    perf_counter is CLOCK_MONOTONIC, shared by the processes of one machine. A collective cannot
    progress before the last rank starts it, nor end before the last rank finished backward,
    so (a) runs from the last rank's first start to the last rank's end of backward, and (b)
    is the time the last rank to finish spends inside ``wait()`` after that end: time a rank
    waits for the other rank's backward is skew, not communication; DDP's unpacking between
    waits is not counted either."""
    ends = [next(t for event, _, t in tl if event == "end_of_backward") for tl in timelines]
    first_starts = [min(t for event, _, t in tl if event == "start") for tl in timelines]
    last = max(timelines, key=lambda tl: max(t for event, _, t in tl if event == "waited"))
    waits = {i: t for event, i, t in last if event == "wait"}
    exposed = sum(max(0.0, t - max(waits[i], max(ends)))
                  for event, i, t in last if event == "waited")
    window = max(0.0, max(ends) - max(first_starts))
    return window * 1e3, exposed * 1e3, (max(ends) - min(ends)) * 1e3


def blocked_in_wait_ms(timeline):
    """Time this rank spent inside ``wait()`` after backward (communication and skew)."""
    waits = {i: t for event, i, t in timeline if event == "wait"}
    return sum(t - waits[i] for event, i, t in timeline if event == "waited") * 1e3


# -- the 2-rank job ---------------------------------------------------------------------------

def all_reduce_times(dist, reps):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    array = np.full(ELEMENTS, dist.get_rank() + 1, np.float32)
    tensor = ember.full((ELEMENTS,), float(dist.get_rank() + 1))
    raw = timed(lambda: comm.Allreduce(MPI.IN_PLACE, array, op=MPI.SUM), reps, comm.Barrier)
    ours = timed(lambda: dist.all_reduce(tensor), reps, dist.barrier)
    return {"raw_ms": statistics.median(raw), "ember_ms": statistics.median(ours)}


def ddp_case(dist, name, cap_mb, reps):
    """Step time and overlap figures of DDP on ``name`` with buckets of ``cap_mb``."""
    from ember.nn.parallel import DistributedDataParallel as DDP
    model = DDP(build(name), bucket_cap_mb=cap_mb)
    step = training_step(model, name, GLOBAL_BATCH[name] // dist.get_world_size())
    steps, windows, exposed, skews, blocked = [], [], [], [], []
    for i in range(WARMUP + reps):
        dist.barrier()
        model._timeline = []
        start = time.perf_counter()
        step()
        elapsed = (time.perf_counter() - start) * 1e3
        timelines = [None] * dist.get_world_size()
        dist.all_gather_object(timelines, model._timeline)
        if i >= WARMUP:
            window, after, skew = overlap_of(timelines)
            steps.append(elapsed)
            windows.append(window)
            exposed.append(after)
            skews.append(skew)
            blocked.append(blocked_in_wait_ms(model._timeline))
    model._timeline = None
    buffers = [b.flat.copy() for b in model._buckets]
    serial = timed(lambda: [dist.all_reduce(ember.from_numpy(f)) for f in buffers], reps,
                   dist.barrier)
    return {"model": name, "cap_mb": cap_mb, "buckets": len(buffers),
            "grad_mb": sum(f.nbytes for f in buffers) / 1e6,
            "step_ms": statistics.median(steps), "window_ms": statistics.median(windows),
            "exposed_ms": statistics.median(exposed), "skew_ms": statistics.median(skews),
            "blocked_ms": statistics.median(blocked), "serial_ms": statistics.median(serial)}


def worker(reps):
    """In each rank of the 2-process job; rank 0 prints the results as JSON."""
    import ember.distributed as dist
    dist.init_process_group("mpi")
    results = all_reduce_times(dist, reps)
    results["ddp"] = [ddp_case(dist, name, cap, reps) for name in MODELS for cap in BUCKET_CAPS_MB]
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, results["ddp"])
    results["ddp_by_rank"] = gathered
    if dist.get_rank() == 0:
        print(json.dumps(results), flush=True)
    dist.destroy_process_group()


# -- driver -----------------------------------------------------------------------------------

def environment(threads="1"):
    pythonpath = os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))
    return dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads,
                PYTHONPATH=pythonpath)


def single_process_ms(name, reps):
    """The one-process step of ``name`` on the global batch, in a fresh 1-thread process."""
    out = subprocess.run([sys.executable, __file__, "--single", name, "--reps", str(reps)],
                         env=environment(), capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def two_rank_job(reps):
    job = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2",
                          __file__, "--worker", "--reps", str(reps)],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True,
                         env=environment())
    return json.loads(job.stdout.strip().splitlines()[-1])


def print_tables(single, r):
    mb = ELEMENTS * 4 / 1e6
    print(f"| all_reduce {mb:.0f} MB float32, 2 ranks | median ms | note |\n|---|---:|---|\n"
          f"| raw mpi4py (NumPy, IN_PLACE) | {r['raw_ms']:.1f} | {mb / r['raw_ms']:.2f} GB/s |\n"
          f"| ember.distributed.all_reduce | {r['ember_ms']:.1f} | "
          f"{r['ember_ms'] / r['raw_ms']:.2f}x raw |\n")
    print("| model (global batch) | bucket cap MB (buckets) | 1 process ms | DDP 2 ranks ms | "
          "speed-up | (a) window ms | (b) exposed ms | (c) no-overlap ms | hidden 1-(b)/(c) | "
          "rank skew ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in r["ddp"]:
        name = case["model"]
        print(f"| {name} ({GLOBAL_BATCH[name]}, {case['grad_mb']:.2f} MB grads) | "
              f"{case['cap_mb']} ({case['buckets']}) | {single[name]:.1f} | "
              f"{case['step_ms']:.1f} | {single[name] / case['step_ms']:.2f}x | "
              f"{case['window_ms']:.1f} | {case['exposed_ms']:.2f} | {case['serial_ms']:.2f} | "
              f"{1 - case['exposed_ms'] / case['serial_ms']:.2f} | {case['skew_ms']:.1f} |")
    blocked = [[round(c["blocked_ms"], 1) for c in cases] for cases in r["ddp_by_rank"]]
    print("\nper rank, ms blocked in wait() after its own backward (communication + skew):",
          blocked)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--single", choices=sorted(MODELS))
    args = parser.parse_args()
    if args.worker:
        return worker(args.reps)
    if args.single:
        step = training_step(build(args.single), args.single, GLOBAL_BATCH[args.single])
        return print(statistics.median(timed(step, args.reps)))
    print("load before:", os.getloadavg())
    single = {name: single_process_ms(name, args.reps) for name in MODELS}
    result = two_rank_job(args.reps)
    print("load after:", os.getloadavg())
    print_tables(single, result)


if __name__ == "__main__":
    main()
