"""Base shared classes and utilities of ``ember.utils.benchmark``: the task a Timer runs, the
Measurement it returns, and the number formatting Compare uses."""
import collections
import contextlib
import dataclasses
import math
import struct
import textwrap

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns

# A Measurement warns when its interquartile range is this large a fraction of its median.
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _float32(x):
    """``x`` rounded to float32: torch computes these statistics on float32 scalar tensors,
    and the rounding decides digits at the edges."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _log10_float32(x):
    return _float32(math.log10(_float32(x))) if x > 0 else -math.inf


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """Container for information used to define a Timer. (except globals)"""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """Best effort attempt at a string label for the measurement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """Build TaskSpec portion of repr string for other containers."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def _quantile(sorted_values, q):
    """The ``q`` quantile of sorted values, interpolating linearly (torch.quantile's
    default)."""
    position = q * (len(sorted_values) - 1)
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    return sorted_values[below] + (sorted_values[above] - sorted_values[below]) * (position - below)


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The result of a Timer measurement.

    This class stores one or more measurements of a given statement. It is serializable and
    provides several convenience methods (including a detailed __repr__) for downstream
    consumers.
    """
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None  # Reserved for user payloads.

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = -1.0
        self._mean = -1.0
        self._p25 = -1.0
        self._p75 = -1.0

    def __getattr__(self, name):
        # The TaskSpec's fields (stmt, label, num_threads, ...) read through, for convenience.
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        """Time per run of ``stmt`` in each measurement (raw time / number_per_run)."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """Approximate significant figure estimate, from the interquartile region's spread
        (z = 1.645); used by ``Compare`` to trim numbers."""
        self._lazy_init()
        n_total = len(self._sorted_times)
        lower_bound = int(n_total // 4)
        upper_bound = int(math.ceil(_float32(3 * n_total / 4)))
        interquartile_points = self._sorted_times[lower_bound:upper_bound]
        std = _float32(_population_std([_float32(t) for t in interquartile_points]))
        sqrt_n = _float32(math.sqrt(len(interquartile_points)))
        confidence_interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        relative_ci = _log10_float32(self._median / confidence_interval)
        num_significant_figures = int(math.floor(relative_ci))
        return min(max(num_significant_figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            self._median = _quantile(self._sorted_times, 0.5)
            self._mean = math.fsum(self._sorted_times) / len(self._sorted_times)
            self._p25 = _quantile(self._sorted_times, 0.25)
            self._p75 = _quantile(self._sorted_times, 0.75)

            def add_warning(msg):
                rel_iqr = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% "
                                   f"of the median measurement.\n           {msg}",)

            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                add_warning("This could indicate system fluctuation.")

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._lazy_init()
        n = len(self._sorted_times)
        time_unit, time_scale = select_unit(self._median)
        lines = [
            super().__repr__(),
            self.task_spec.summarize(),
            f"  {'Median: ' if n > 1 else ''}{self._median / time_scale:.2f} {time_unit}",
        ]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / time_scale:.2f} {time_unit} "
                         f"({self._p25 / time_scale:.2f} to {self._p75 / time_scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} "
                     f"thread{'s' if self.num_threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """Convenience method for merging replicates.

        Merge will extrapolate times to `number_per_run=1` and will not transfer any metadata.
        (Since it might differ between replicates)
        """
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [Measurement(number_per_run=1, raw_times=[t for m in group for t in m.times],
                            task_spec=task_spec, metadata=None)
                for task_spec, group in grouped.items()]


def _population_std(values):
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))


def select_unit(t):
    """Determine how to scale times for O(1) magnitude: the unit's name and its length in
    seconds."""
    time_unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10_float32(t) // 3), "s")
    time_scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[time_unit]
    return time_unit, time_scale


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """Trim `x` to `n` significant figures. (e.g. 3.14159, 2 -> 3.10000)"""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(math.ceil(_log10_float32(abs(x))))
    scale = 10 ** (magnitude - n)
    return _float32(round(_float32(x / scale)) * _float32(scale))


def ordered_unique(elements):
    """The distinct elements in the order they first appear."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run the block with ember's intra-op thread count set to ``n``."""
    from ...._backend.parallel import get_num_threads, set_num_threads
    prior_num_threads = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior_num_threads)
