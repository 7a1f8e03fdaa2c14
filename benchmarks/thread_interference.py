"""How long one library's worker threads slow the other's next GEMM, in one process.

torch's OpenMP workers and NumPy's OpenBLAS workers keep spinning for a while after their last
parallel region. A GEMM from the other library that starts inside that window competes with
them for the same cores. This script runs three GEMMs on one library, waits a given time
(busy, as single-threaded Python work would), then times one GEMM on the other library;
medians over the repeats, in microseconds. It is why ``benchmarks/run.py`` pauses and runs an
untimed step before timing a library's turn.

    .venv/bin/python benchmarks/thread_interference.py --threads 2
"""
import argparse
import statistics
import time

import numpy as np
import torch
from threadpoolctl import threadpool_limits


def busy_wait(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def timed_after(first, second, delay, repeats):
    times = []
    for _ in range(repeats):
        for _ in range(3):
            first()
        busy_wait(delay)
        start = time.perf_counter()
        second()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    threadpool_limits(args.threads, user_api="blas")
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 784), dtype=np.float32)
    b = rng.standard_normal((784, 512), dtype=np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)

    def numpy_gemm():
        return a @ b

    def torch_gemm():
        return ta @ tb

    print(f"(128x784) @ (784x512) float32, {args.threads} threads, median of {args.repeats}")
    print("| delay ms | NumPy GEMM after torch, us | torch GEMM after NumPy, us |")
    print("|---:|---:|---:|")
    for delay in (0.0, 0.002, 0.005, 0.02, 0.1):
        print(f"| {delay * 1e3:g} | {timed_after(torch_gemm, numpy_gemm, delay, args.repeats):.0f} "
              f"| {timed_after(numpy_gemm, torch_gemm, delay, args.repeats):.0f} |")
    alone = {"NumPy": numpy_gemm, "torch": torch_gemm}
    for name, fn in alone.items():
        print(f"{name} GEMM after its own GEMMs: {timed_after(fn, fn, 0.0, args.repeats):.0f} us")


if __name__ == "__main__":
    main()
