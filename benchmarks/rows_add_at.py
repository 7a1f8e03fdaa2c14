"""Rows added at an index (an embedding's backward): ``numpy.add.at`` against the sorted runs
of ``ember._backend.rows.add_rows_at``, for index lengths M, table rows N and row widths D,
float32; medians of timeit samples in microseconds. The figures behind ``ADD_AT_MAX_ELEMENTS``.

    .venv/bin/python -m benchmarks.rows_add_at [--repeats 50]
"""
import argparse
import os
import statistics
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from ember._backend import rows

SHAPES = [(96, 27, 10), (512, 27, 10), (96, 27, 128), (256, 1000, 64), (2048, 10000, 200)]


def sorted_runs(out, index, values):
    """``add_rows_at`` with its one-``add.at`` shortcut turned off."""
    saved = rows.ADD_AT_MAX_ROWS, rows.ADD_AT_MAX_ELEMENTS
    rows.ADD_AT_MAX_ROWS = rows.ADD_AT_MAX_ELEMENTS = 0
    try:
        return rows.add_rows_at(out, index, values)
    finally:
        rows.ADD_AT_MAX_ROWS, rows.ADD_AT_MAX_ELEMENTS = saved


def median_us(fn, repeats):
    timer = timeit.Timer(fn)
    number = max(1, timer.autorange()[0] // 5)
    return statistics.median(timer.repeat(repeats, number)) / number * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| M | N | D | elements | add.at µs | sorted runs µs | ember's choice |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for m, n, d in SHAPES:
        index = rng.integers(0, n, m)
        values = rng.standard_normal((m, d), dtype=np.float32)
        out = np.zeros((n, d), np.float32)
        operands = (out, index, values)
        at = median_us(lambda operands=operands: np.add.at(*operands), args.repeats)
        runs = median_us(lambda operands=operands: sorted_runs(*operands), args.repeats)
        choice = "add.at" if m <= rows.ADD_AT_MAX_ROWS or m * d <= rows.ADD_AT_MAX_ELEMENTS else "sorted runs"
        print(f"| {m} | {n} | {d} | {m * d} | {at:.1f} | {runs:.1f} | {choice} |")


if __name__ == "__main__":
    main()
