"""DataLoader throughput, ember vs torch, in one process run: a map-style dataset whose
``__getitem__`` costs about 1 ms of Python/NumPy work and returns a 3x32x32 float32 image and an
int label; batch size 64. For num_workers 0, 1 and 2, each library loads ``--batches`` batches
per epoch for ``--epochs`` epochs (cases interleaved); the table gives the median batches per
second, timed from the first batch of an epoch to its last (worker start-up is reported
separately). It also reports what crosses between processes per batch: the bytes sent through
the result pipe and the bytes of the batch in shared memory.

    .venv/bin/python benchmarks/dataloader.py --epochs 5 --batches 30
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import ember.utils.data as edata
import torch
import torch.utils.data as tdata
from ember.utils.data import dataloader as ember_dataloader

BATCH = 64


def calibrate_rounds(target_s=1e-3):
    """How many rounds of the sample's work take about ``target_s`` seconds."""
    rounds = 4
    while True:
        per_item = min(_time_one(rounds) for _ in range(20))
        if per_item >= target_s * 0.9:
            return rounds, per_item
        rounds = int(rounds * target_s / per_item) + 1


def _time_one(rounds):
    start = time.perf_counter()
    make_sample(0, rounds)
    return time.perf_counter() - start


def make_sample(i, rounds):
    rng = np.random.default_rng(i)
    image = rng.standard_normal((3, 32, 32), dtype=np.float32)
    acc = 0.0
    for _ in range(rounds):  # Python/NumPy work, like decoding and augmenting an image
        acc += float(np.abs(image[:, ::4, ::4]).mean())
    return image * np.float32(1.0 + acc * 1e-9), i % 10


def dataset_class(base):
    """The benchmark dataset as a subclass of ``base`` (ember's or torch's Dataset); workers
    are forked, so the class need not be importable."""
    class Samples(base):
        def __init__(self, n, rounds):
            self.n, self.rounds = n, rounds

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return make_sample(i, self.rounds)
    return Samples


EmberSet = dataset_class(edata.Dataset)
TorchSet = dataset_class(tdata.Dataset)


def time_epoch(loader):
    """(seconds to the first batch, batches per second after it)."""
    start = time.perf_counter()
    it = iter(loader)
    next(it)
    first = time.perf_counter()
    count = sum(1 for _ in it)
    end = time.perf_counter()
    return first - start, count / (end - first)


def pipe_bytes_per_batch(num_workers, n, rounds):
    """Bytes read from the result pipe per batch, and whether the batch is in shared memory."""
    sizes = []
    original = ember_dataloader._WorkerPoolIterator._unpack

    def recording(self, payload):
        sizes.append(len(payload))
        return original(self, payload)
    ember_dataloader._WorkerPoolIterator._unpack = recording
    try:
        batches = list(edata.DataLoader(EmberSet(n, rounds), batch_size=BATCH, num_workers=num_workers))
    finally:
        ember_dataloader._WorkerPoolIterator._unpack = original
    shared = all(b[0].is_shared() and b[1].is_shared() for b in batches)
    batch_bytes = batches[0][0].nbytes + batches[0][1].nbytes
    return statistics.median(sizes), batch_bytes, shared


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batches", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rounds, per_item = calibrate_rounds()
    n = args.batches * BATCH
    print(f"__getitem__: {per_item * 1e3:.2f} ms ({rounds} rounds); batch {BATCH}; "
          f"{args.batches} batches per epoch")
    cases = {}
    for workers in (0, 1, 2):
        cases[("ember", workers)] = lambda w=workers: edata.DataLoader(
            EmberSet(n, rounds), batch_size=BATCH, num_workers=w)
        cases[("torch", workers)] = lambda w=workers: tdata.DataLoader(
            TorchSet(n, rounds), batch_size=BATCH, num_workers=w)
    results = {key: [] for key in cases}
    for _ in range(args.epochs):
        for key, make in cases.items():
            results[key].append(time_epoch(make()))
    print("| num_workers | ember batches/s | torch batches/s | ember/torch | ember start s | torch start s |")
    print("|------------:|----------------:|----------------:|------------:|--------------:|--------------:|")
    for workers in (0, 1, 2):
        e = statistics.median(r[1] for r in results[("ember", workers)])
        t = statistics.median(r[1] for r in results[("torch", workers)])
        es = statistics.median(r[0] for r in results[("ember", workers)])
        ts = statistics.median(r[0] for r in results[("torch", workers)])
        print(f"| {workers:11d} | {e:15.2f} | {t:15.2f} | {e / t:11.2f} | {es:13.3f} | {ts:13.3f} |")
    pipe, batch_bytes, shared = pipe_bytes_per_batch(2, 4 * BATCH, rounds)
    print(f"per batch across processes (ember, 2 workers): {pipe:.0f} bytes through the pipe; "
          f"batch of {batch_bytes} bytes in shared memory: {shared} (written once by the "
          "worker's collate, mapped by the main process without a copy)")


if __name__ == "__main__":
    main()
