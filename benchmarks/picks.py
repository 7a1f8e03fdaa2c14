"""The gather and scatter loops against NumPy's paths at small sizes: a gather along the last
axis of a (rows, cols) float32 array by NumPy's fancy indexing and by ember's loop on one and on
two threads, and the scatter-add of its gradient by ``numpy.add.at`` and by the loop; medians of
5 timings, µs. Where the loop starts and where it starts threads
(``openmp_kernels.PICKS_SERIAL_MAX_ELEMENTS``) are read from this table.

    .venv/bin/python -m benchmarks.picks
"""
import argparse
import timeit

import numpy as np

import ember
from ember._backend import openmp_kernels
from ember.ops import index

SHAPES = [(3, 5), (8, 8), (16, 16), (32, 32), (64, 64), (128, 128), (256, 256)]


def _time(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def row(rows, cols, calls):
    """The table's row for a (rows, cols) gather: µs of each way."""
    rng = np.random.default_rng(0)
    data = rng.random((rows, cols), dtype=np.float32)
    picks = rng.integers(0, cols, (rows, cols))
    out, status = np.empty(picks.shape, np.float32), np.zeros(1, np.int32)
    gather, scatter_add = (openmp_kernels._function(name) for name in ("gather_4", "scatter_add_float32"))
    sizes = (rows, cols, cols, 1)
    error = index._out_of_bounds(1, cols)
    key = (np.arange(rows)[:, None], picks)
    total = np.zeros_like(data)
    return [_time(lambda: index._gather_numpy(data, picks, 1, error), calls),
            _time(lambda: gather((data, picks, out, status), sizes, None, 1), calls),
            _time(lambda: gather((data, picks, out, status), sizes, None, 2), calls),
            _time(lambda: np.add.at(np.zeros_like(data), key, data), calls),
            _time(lambda: scatter_add((data, picks, total, status), sizes, (0.0,), 1), calls),
            _time(lambda: scatter_add((data, picks, total, status), sizes, (0.0,), 2), calls)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200000, help="elements timed per sample")
    args = parser.parse_args()
    ember.set_num_threads(2)
    ember.sigmoid(ember.ones(3))   # oneDNN's OpenMP count applied on this thread
    if openmp_kernels._function("gather_4") is None:
        raise SystemExit("ember's loops cannot be built here")
    print("| elements | NumPy gather µs | loop, 1 thread µs | loop, 2 threads µs | NumPy add.at µs "
          "| scatter-add loop, 1 thread µs | scatter-add loop, 2 threads µs |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for rows, cols in SHAPES:
        times = row(rows, cols, max(100, args.calls // (rows * cols)))
        print(f"| {rows * cols} | " + " | ".join(f"{t:.2f}" for t in times) + " |")


if __name__ == "__main__":
    main()
