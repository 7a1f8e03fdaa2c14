"""The timer the single-kernel benchmarks share: the median of single calls."""
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
