"""What libgomp's parallel region costs where its if() clause keeps it on one thread, against the serial
branch ``ember._inductor._serial_regions.with_serial_branches`` puts beside it: one loop of ``exp`` over 16
doubles (the special functions' loops at the op table's tiny size), built both ways, each call through
ctypes, timed interleaved in one process; medians of the repeats, ns per call.

    python -m benchmarks.openmp_regions [--repeats 15] [--elements 16]
"""
import argparse
import ctypes
import statistics
import sys
import timeit

import numpy as np

from ember._inductor import _compiler
from ember._inductor._serial_regions import with_serial_branches

LOOP = """#include <math.h>
#include <stdint.h>
void exp_loop(const double *x, double *out, int64_t n, int nthreads) {
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1 && n >= 256) schedule(static)
    for (int64_t i = 0; i < n; i++) out[i] = exp(x[i]);
}
"""


def _loop(source):
    path, _ = _compiler._built(source, ("-lm",), (), True, False)
    if path is None:
        sys.exit("no C compiler here")
    fn = ctypes.CDLL(path).exp_loop
    fn.restype = None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int)
    return fn


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--elements", type=int, default=16)
    args = parser.parse_args(argv)
    x = np.linspace(0, 1, args.elements)
    out = np.empty_like(x)
    at, to, n = x.ctypes.data, out.ctypes.data, x.size   # (the addresses read once)
    builds = {"region of one thread": _loop(LOOP), "serial branch": _loop(with_serial_branches(LOOP))}
    calls = {name: (lambda fn=fn: fn(at, to, n, 1)) for name, fn in builds.items()}
    calls["ctypes call alone"] = lambda fn=builds["serial branch"]: fn(at, to, 0, 1)
    samples = {name: [] for name in calls}
    for _ in range(args.repeats):
        for name, call in calls.items():
            samples[name].append(timeit.timeit(call, number=20000) / 20000 * 1e9)
    print(f"exp over {args.elements} doubles, one thread; ns per call (median of {args.repeats})")
    for name, values in samples.items():
        print(f"{name:<22} {statistics.median(values):8.1f}")


if __name__ == "__main__":
    main()
