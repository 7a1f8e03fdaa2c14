"""``ember.autograd.profiler``: torch's legacy profiler API (``torch.autograd.profiler``), over
the same recorder as ``ember.profiler``."""
from .. import profiler as _profiler
from ..profiler import EventList, FunctionEvent, FunctionEventAvg, record_function

__all__ = ["profile", "record_function", "emit_nvtx", "EventList", "FunctionEvent",
           "FunctionEventAvg"]


class profile:
    """Context manager that manages autograd profiler state and holds a summary of results:
    every ember op, backward node and ``record_function`` range run inside it is timed.

    Args:
        enabled: setting this to False makes this context manager a no-op.
        use_cuda: accepted for compatibility; ember records host time only.
        record_shapes: save the shapes of each op's inputs.
        profile_memory: accepted; memory is not tracked.
        with_stack: record the Python source location (outside ember) of each op.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self.use_cuda = use_cuda
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.function_events = None
        self._inner = None
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._inner = _profiler.profile(record_shapes=self.record_shapes,
                                        with_stack=self.with_stack)
        self._inner.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        self._inner.stop()
        self.function_events = self._inner.events()
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """The events as a table, sorted by ``sort_by``, at most ``row_limit`` rows."""
        self._check_finish()
        return self.function_events.table(sort_by, row_limit, max_src_column_width,
                                          max_name_column_width, max_shapes_column_width, header,
                                          top_level_events_only)

    def export_chrome_trace(self, path):
        """Exports the events as a Chrome trace (chrome://tracing, Perfetto)."""
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Averages the events over their names (and input shapes or stacks when asked)."""
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        """All events summed into one average."""
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """The total time spent on the CPU in all events, less that of their children (us)."""
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __str__(self):
        self._check_finish()
        return str(self.function_events)

    __repr__ = __str__


class emit_nvtx:
    """NVTX ranges need CUDA's NVTX library, which ember does not use."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            raise NotImplementedError("emit_nvtx: ember has no NVTX support (ember does not load "
                                      "CUDA's NVTX library); use ember.autograd.profiler.profile")
        return self

    def __exit__(self, *exc):
        return False

