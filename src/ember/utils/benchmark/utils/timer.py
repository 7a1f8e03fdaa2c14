"""Timer class based on the timeit.Timer class, but ember aware."""
import enum
import textwrap
import timeit

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """The current time (``timeit.default_timer``), after waiting for the accelerator's queued
    work when there is one."""
    from .... import accelerator
    if accelerator.is_available():
        accelerator.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Helper class for measuring execution time of ember statements.

    The Timer is based on `timeit.Timer` (and in fact uses `timeit.Timer` internally), but with
    several key differences:

    1) Runtime aware: Timer will perform warmups, set the threadpool size so that comparisons
       are apples-to-apples, and synchronize asynchronous accelerator functions when necessary.
    2) Focus on replicates: measurements include replicates to quantify noise and allow median
       computation (`blocked_autorange`, `adaptive_autorange`); `timeit` is kept for cases
       where an adaptive strategy is not desired.
    3) Optional metadata: `label`, `sub_label`, `description` and `env` are included in the
       representation of the result and used by `Compare` to group and display results.

    Args:
        stmt: Code snippet to be run in a loop and timed.
        setup: Optional setup code. Used to define variables used in `stmt`
        global_setup: (C++ only; ember times Python statements only)
        timer: Callable which returns the current time.
        globals: A dict which defines the global variables when `stmt` is being executed.
            ``torch`` and ``ember`` are added (both naming ember) unless given.
        label: String which summarizes `stmt`.
        sub_label: Supplemental information to disambiguate measurements with identical stmt
            or label.
        description: String to distinguish measurements with identical label and sub_label;
            `Compare` uses it for the columns of its table.
        env: Tags otherwise identical tasks run in different environments.
        num_threads: The size of ember's intra-op threadpool when executing `stmt`. Default:
            one.
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        import ember
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", ember)
            self._globals.setdefault("ember", ember)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                                 "this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("ember times Python statements only: C++ statements "
                                      "need torch's C++ extension toolchain")
        else:
            raise ValueError(f"Invalid language `{language}`.")

        # A snippet written as an indented block string loses its indentation and its first
        # newline, which also makes the reprs nicer.
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(
            stmt=stmt, setup=setup, global_setup=global_setup, label=label, sub_label=sub_label,
            description=description, env=env, num_threads=num_threads)

    def _timeit(self, number):
        # No real operation takes less than 1 ns (and this prevents divide by zero errors).
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """Mirrors the semantics of timeit.Timer.timeit().

        Execute the main statement (`stmt`) `number` times (after a warmup of
        ``max(number // 100, 2)`` runs).
        """
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(self, number, time_hook, stop_hook, min_run_time,
                                   max_run_time=None, callback=None):
        total_time = 0.0
        can_stop = False
        times = []
        with common.set_torch_threads(self._task_spec.num_threads):
            while (total_time < min_run_time) or (not can_stop):
                time_spent = time_hook()
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        """The number of runs per block that makes the timer's own overhead negligible (this
        also serves as a warmup)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = common._quantile(sorted(self._timeit(0) for _ in range(5)), 0.5)
            number = 1
            while True:
                time_taken = self._timeit(number)
                relative_overhead = overhead / time_taken
                if relative_overhead <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time:
                    break
                if number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Measure many replicates while keeping timer overhead to a minimum.

        At a high level, blocked_autorange executes the following pseudo-code::

            `setup`

            total_time = 0
            while total_time < min_run_time
                start = timer()
                for _ in range(block_size):
                    `stmt`
                total_time += (timer() - start)

        ``block_size`` is chosen during a warmup period, increasing it until timer overhead is
        less than 0.1% of the overall computation.

        Returns:
            A `Measurement` object that contains measured runtimes and repetition counts, and
            can be used to compute statistics. (mean, median, etc.)
        """
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(
            number, lambda: self._timeit(number), lambda times: True,
            min_run_time=min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Similar to `blocked_autorange` but also checks for variablility in measurements
        and repeats until iqr/median is smaller than `threshold` or `max_run_time` is reached.

        Args:
            threshold: value of iqr/median threshold for stopping
            min_run_time: total runtime needed before checking `threshold`
            max_run_time: total runtime  for all measurements regardless of `threshold`

        Returns:
            A `Measurement` object that contains measured runtimes and repetition counts, and
            can be used to compute statistics. (mean, median, etc.)
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            if len(times) > 3:
                return common.Measurement(number_per_run=number, raw_times=times,
                                          task_spec=self._task_spec
                                          ).meets_confidence(threshold=threshold)
            return False

        times = self._threaded_measurement_loop(
            number, lambda: self._timeit(number), stop_hook, min_run_time, max_run_time,
            callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)
