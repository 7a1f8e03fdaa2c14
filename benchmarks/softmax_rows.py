"""softmax and log_softmax along the last dimension on ember's row loop
(``vector_math.softmax_rows``) against NumPy's passes, through ``ember.softmax`` and
``ember.log_softmax`` of float32 tensors with rows of several widths, the two taking turns;
medians in µs, each shape on the loop whatever its width (``SOFTMAX_MIN_WIDTH`` and
``SOFTMAX_NARROW_MAX_ELEMENTS`` lifted): the figures behind those rules.

    .venv/bin/python -m benchmarks.softmax_rows [--threads 1]
"""
import argparse
import statistics
import timeit

import numpy as np

import ember
from ember._backend import choice, vector_math

# (rows, width): tiny arrays, then narrow rows where the loop's cost per row is largest
SHAPES = ((3, 5), (16, 16), (64, 10), (200, 5), (800, 5), (3200, 5), (500, 2), (4000, 2), (1000, 8), (8000, 8),
          (1600, 10), (6400, 10), (5000, 12), (4096, 16))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", nargs="+", type=int, default=[1])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if not vector_math.available():
        raise SystemExit("the row loops cannot be built here (no C compiler?)")
    rules = vector_math.SOFTMAX_MIN_WIDTH, vector_math.SOFTMAX_NARROW_MAX_ELEMENTS
    vector_math.SOFTMAX_MIN_WIDTH = 1
    try:
        _table(args)
    finally:
        vector_math.SOFTMAX_MIN_WIDTH, vector_math.SOFTMAX_NARROW_MAX_ELEMENTS = rules


def _table(args):
    rng = np.random.default_rng(0)
    print("| threads | rows x width | softmax loop / NumPy µs | log_softmax loop / NumPy µs |")
    print("|---:|---:|---:|---:|")
    for threads in args.threads:
        ember.set_num_threads(threads)
        for rows, width in SHAPES:
            x = ember.tensor(rng.standard_normal((rows, width), dtype=np.float32))
            number = max(1, 100_000 // x.numel())
            cells = []
            for fn in (ember.softmax, ember.log_softmax):
                times = {}
                for _ in range(args.repeats):
                    for library in (choice.ONEDNN, choice.NUMPY):
                        with choice.only(library):
                            seconds = timeit.timeit(lambda fn=fn, x=x: fn(x, -1), number=number)
                        times.setdefault(library, []).append(seconds / number * 1e6)
                loop, numpy = (statistics.median(times[lib]) for lib in (choice.ONEDNN, choice.NUMPY))
                cells.append(f"{loop:.1f} / {numpy:.1f} ({loop / numpy:.2f})")
            print(f"| {threads} | {rows} x {width} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
