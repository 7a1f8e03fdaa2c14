"""index_select's OpenMP loop (``openmp_kernels.index_select_float32``) against NumPy's
``take`` on the same float32 arrays: rows copied (along the first dimension) and picks (along
the last), at several sizes and thread counts, the two taking turns; best of the repeats in µs.
The figures behind the loop's size rules (``INDEX_ROWS_MIN_ELEMENTS``,
``INDEX_PICKS_MIN_ELEMENTS``).

    .venv/bin/python -m benchmarks.index_select [--threads 1 2]
"""
import argparse
import timeit

import numpy as np

import ember
from ember._backend import choice, openmp_kernels

SHAPES = ((222, 295), (512, 512), (1024, 1024), (1773, 2365))


def _loop(x, index, axis):
    """The loop's call, without its size rules."""
    outer, inner = openmp_kernels._around(x.shape, axis)
    out = np.empty(x.shape[:axis] + (index.size,) + x.shape[axis + 1:], np.float32)
    openmp_kernels._call(openmp_kernels._function("index_select_float32"), (x, index, out),
                         (outer, x.shape[axis], index.size, inner), ())
    return out


def _best(fn, number, repeats):
    return min(timeit.repeat(fn, number=number, repeat=repeats)) / number * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--number", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if openmp_kernels._function("index_select_float32") is None:
        raise SystemExit("the OpenMP loops cannot be built here (no C compiler?)")
    rng = np.random.default_rng(0)
    print("| threads | shape | rows (dim 0): loop / take µs | picks (dim 1): loop / take µs |")
    print("|---:|---|---:|---:|")
    for threads in args.threads:
        ember.set_num_threads(threads)
        choice.enabled(choice.ONEDNN)   # (applies the thread count to OpenMP)
        for shape in SHAPES:
            x = rng.random(shape, dtype=np.float32)
            cells = []
            for axis in (0, 1):
                index = rng.integers(0, shape[axis], shape[axis])
                loop = _best(lambda x=x, index=index, axis=axis: _loop(x, index, axis),
                             args.number, args.repeats)
                take = _best(lambda x=x, index=index, axis=axis: np.take(x, index, axis=axis),
                             args.number, args.repeats)
                cells.append(f"{loop:.1f} / {take:.1f} ({loop / take:.2f})")
            print(f"| {threads} | {shape[0]}x{shape[1]} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
