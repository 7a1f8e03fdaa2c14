"""flip's row loop (``openmp_kernels.reversed_rows_copy``) against NumPy's copy of the flipped
view, through ``ember.flip`` of float32 tensors along their last dimension, at several sizes
and thread counts, the two taking turns; medians in µs. The figures behind the loop's size rule
(``REVERSED_ROWS_MIN_ELEMENTS``).

    .venv/bin/python -m benchmarks.flip [--threads 1 2]
"""
import argparse
import statistics
import timeit

import numpy as np

import ember
from ember._backend import choice, openmp_kernels

# (elements, row width): square-ish rows, and narrow ones where the per-row work dominates
SHAPES = ((4096, 64), (16384, 128), (32768, 128), (65536, 256), (1 << 18, 512), (1 << 22, 2048),
          (65536, 8))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if openmp_kernels._function("strided_rows_4") is None:
        raise SystemExit("the OpenMP loops cannot be built here (no C compiler?)")
    rule = openmp_kernels.REVERSED_ROWS_MIN_ELEMENTS
    openmp_kernels.REVERSED_ROWS_MIN_ELEMENTS = 1   # (the loop at every size)
    rng = np.random.default_rng(0)
    print("| threads | elements | row | loop / NumPy µs |")
    print("|---:|---:|---:|---:|")
    try:
        for threads in args.threads:
            ember.set_num_threads(threads)
            for size, width in SHAPES:
                x = ember.tensor(rng.random((size // width, width), dtype=np.float32))
                number = max(1, 200_000 // size)
                times = {}
                for _ in range(args.repeats):
                    for library in (choice.ONEDNN, choice.NUMPY):
                        with choice.only(library):
                            seconds = timeit.timeit(lambda x=x: x.flip(1), number=number)
                        times.setdefault(library, []).append(seconds / number * 1e6)
                loop, numpy = (statistics.median(times[lib]) for lib in (choice.ONEDNN, choice.NUMPY))
                print(f"| {threads} | {size} | {width} | {loop:.1f} / {numpy:.1f} ({loop / numpy:.2f}) |",
                      flush=True)
    finally:
        openmp_kernels.REVERSED_ROWS_MIN_ELEMENTS = rule


if __name__ == "__main__":
    main()
