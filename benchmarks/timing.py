"""The timers the single-kernel benchmarks share: the median of single calls, and cases timed
in turns."""
import statistics
import time


def median_us(fn, calls):
    """The median of ``calls`` timed calls of ``fn``, in microseconds."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def fastest_medians(cases, repeats, calls):
    """{name: the fastest of ``repeats`` turns' ``median_us``} for ``cases`` ({name: fn}),
    every turn timing each case in order after one untimed call."""
    best = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            fn()
            best[name].append(median_us(fn, calls))
    return {name: min(times) for name, times in best.items()}
