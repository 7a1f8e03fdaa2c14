"""Op timing for ember, with torch.profiler's API.

ember's ops are plain Python functions reachable from module namespaces (``ember.mul``,
``ember.nn.functional.conv2d``), from ``Tensor`` methods and from ``Node.backward``. While a
profile records, each of them is replaced by a timing wrapper in every ``ember`` module that
refers to it; when recording stops the originals are put back. A program that is not being
profiled therefore runs exactly the code it runs without this module: profiling costs nothing
when it is off.

Names follow torch's: ops are ``aten::<name>``; backward nodes appear as
``autograd::engine::evaluate_function: MulBackward0`` around ``MulBackward0``; leaves' gradient
accumulation as ``torch::autograd::AccumulateGrad``.
"""
import enum
import functools
import json
import os
import sys
import threading
import time
import types
import warnings

__all__ = [
    "ProfilerActivity", "ProfilerAction", "profile", "record_function", "schedule",
    "tensorboard_trace_handler", "FunctionEvent", "FunctionEventAvg", "EventList",
]


class ProfilerActivity(enum.Enum):
    """What to profile: host-side ops (CPU) or device kernels (CUDA)."""
    CPU = 0
    CUDA = 2


class ProfilerAction(enum.Enum):
    """What the profiler does during a step, as decided by a ``schedule``."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """Returns a callable that can be used as profiler ``schedule`` argument. The profiler will
    skip the first ``skip_first`` steps, then wait for ``wait`` steps, then do the warmup for the
    next ``warmup`` steps, then do the active recording for the next ``active`` steps and then
    repeat the cycle starting with ``wait`` steps. The optional number of cycles is specified
    with the ``repeat`` parameter, the zero value means that the cycles will continue until the
    profiling is finished."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        within = step % cycle
        if within < wait:
            return ProfilerAction.NONE
        if within < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if within < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


# ----------------------------------------------------------------------------------------
# Events

def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


class FunctionEvent:
    """One timed call: an op, a backward node or a ``record_function`` range."""

    __slots__ = ("id", "name", "thread", "start_ns", "end_ns", "child_ns", "input_shapes",
                 "stack", "category", "cpu_parent", "cpu_children")

    def __init__(self, id, name, thread, start_ns, input_shapes, stack, category, parent):
        self.id = id
        self.name = name
        self.thread = thread
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.child_ns = 0
        self.input_shapes = input_shapes
        self.stack = stack
        self.category = category
        self.cpu_parent = parent
        self.cpu_children = []

    key = property(lambda self: self.name)
    count = 1

    @property
    def cpu_time_total(self):
        """Wall time from entry to exit, in microseconds."""
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self):
        """Time spent in this call but not in the calls it made, in microseconds."""
        return (self.end_ns - self.start_ns - self.child_ns) / 1e3

    cpu_time = cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events that share a key (name, and input shapes or stack when grouped by them),
    summed."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes = input_shapes
        self.stack = stack or []
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_parent = None

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        """Average CPU time per call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} count={self.count} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events with torch's summaries: ``key_averages``, ``table``,
    ``export_chrome_trace``."""

    def __init__(self, events=(), trace_start=None):
        super().__init__(events)
        self._trace_start = trace_start

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0):
        """Averages all function events over their keys (name; and input shapes, or the
        top ``group_by_stack_n`` stack frames, when asked)."""
        averages = {}
        for event in self:
            key = (event.key,)
            if group_by_input_shapes:
                key += (str(event.input_shapes),)
            if group_by_stack_n:
                key += tuple(event.stack[:group_by_stack_n])
            avg = averages.get(key)
            if avg is None:
                avg = averages[key] = FunctionEventAvg(
                    event.key, event.input_shapes if group_by_input_shapes else None,
                    event.stack[:group_by_stack_n] if group_by_stack_n else None)
            avg.add(event)
        return EventList(averages.values())

    def total_average(self):
        """All events summed into one ``FunctionEventAvg`` keyed "Total"."""
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """A table of the events, one row each, sorted descending by ``sort_by``
        (``"cpu_time_total"``, ``"self_cpu_time_total"``, ``"count"``, ...)."""
        return _build_table(self, sort_by, row_limit, max_src_column_width,
                            max_name_column_width, max_shapes_column_width, header,
                            top_level_events_only, time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON; gzipped when ``path`` ends in ``.gz``)
        that chrome://tracing and Perfetto open."""
        _write_trace(chrome_trace(self, self._trace_start), path)


# ----------------------------------------------------------------------------------------
# The table, in torch's column layout

def _time_in(unit, time_us):
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return _format_time(time_us)


def _build_table(events, sort_by, row_limit, max_src_column_width, max_name_column_width,
                 max_shapes_column_width, header, top_level_events_only, time_unit):
    if not events:
        return ""
    has_shapes = any(e.input_shapes for e in events)
    has_stack = any(e.stack for e in events)
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device")), reverse=True)
    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    widths = [name_width] + [12] * 6
    aligns = [">"] * 7
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    if has_stack:
        src_width = min(max(len(f) for e in events for f in e.stack) + 4, max_src_column_width)
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total = sum(e.self_cpu_time_total for e in events)

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for event in events:
        if shown == row_limit:
            break
        if top_level_events_only and event.cpu_parent is not None:
            continue
        shown += 1
        name = event.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name,
               _format_time_share(event.self_cpu_time_total, total),
               _time_in(time_unit, event.self_cpu_time_total),
               _format_time_share(event.cpu_time_total, total),
               _time_in(time_unit, event.cpu_time_total),
               _time_in(time_unit, event.cpu_time),
               event.count]
        if has_shapes:
            row.append(str(event.input_shapes)[:shapes_width])
        if has_stack:
            row.append(_trim_path(event.stack[0], src_width) if event.stack else "")
        lines.append(row_format.format(*row))
        for frame in (event.stack[1:] if has_stack else ()):
            lines.append(row_format.format(*([""] * (len(headers) - 1)), _trim_path(frame, src_width)))
    lines += [separator, f"Self CPU time total: {_time_in(time_unit, total)}"]
    return "\n".join(lines) + "\n"


def _trim_path(path, width):
    if len(path) > width:
        path = "..." + path[len(path) - width + 3:]
    return path


# ----------------------------------------------------------------------------------------
# Chrome trace

def chrome_trace(events, trace_start):
    """The events as a Chrome trace-event dict: one complete ("X") event per call."""
    pid = os.getpid()
    epoch_ns, perf_ns = trace_start or (time.time_ns(), time.perf_counter_ns())
    threads = sorted({e.thread for e in events})
    trace = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}}]
    trace += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
               "args": {"name": f"thread {tid} (python)"}} for tid in threads]
    for e in events:
        entry = {"ph": "X", "cat": e.category, "name": e.name, "pid": pid, "tid": e.thread,
                 "ts": (epoch_ns + e.start_ns - perf_ns) / 1e3,
                 "dur": (e.end_ns - e.start_ns) / 1e3,
                 "args": {"External id": e.id}}
        if e.input_shapes is not None:
            entry["args"]["Input Dims"] = e.input_shapes
        if e.stack:
            entry["args"]["Call stack"] = ";".join(e.stack)
        trace.append(entry)
    return {"schemaVersion": 1, "displayTimeUnit": "ms",
            "baseTimeNanoseconds": epoch_ns - perf_ns % 1000, "traceEvents": trace}


def _write_trace(trace, path):
    import gzip
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as f:
        json.dump(trace, f)


# ----------------------------------------------------------------------------------------
# Recording

class _Recorder:
    """Collects events while a profile records; one per recording cycle."""

    def __init__(self, record_shapes, with_stack):
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.events = []
        self.local = threading.local()
        self.trace_start = (time.time_ns(), time.perf_counter_ns())

    def begin(self, name, args=None, category="cpu_op"):
        stack = self.local.__dict__.setdefault("stack", [])
        parent = stack[-1] if stack else None
        shapes = (_shapes_of(args) if args else []) if self.record_shapes else None
        frames = _user_frames() if self.with_stack and category == "cpu_op" else []
        event = FunctionEvent(len(self.events), name, threading.get_native_id(), 0, shapes,
                              frames, category, parent)
        self.events.append(event)
        if parent is not None:
            parent.cpu_children.append(event)
        stack.append(event)
        event.start_ns = event.end_ns = time.perf_counter_ns()
        return event

    def end(self, event):
        event.end_ns = now = time.perf_counter_ns()
        stack = self.local.stack
        while stack and stack.pop() is not event:  # an exception skipped inner ends
            pass
        if event.cpu_parent is not None:
            event.cpu_parent.child_ns += now - event.start_ns

    def close_open(self):
        """End ranges still open (a profile stopped inside a ``record_function``)."""
        stack = getattr(self.local, "stack", [])
        while stack:
            self.end(stack[-1])


def _shapes_of(args):
    return [list(a.shape) if hasattr(a, "_data") else [] for a in args]


_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frames(limit=8):
    """The caller's Python stack outside ember, innermost first, as ``file(line): function``."""
    frames = []
    frame = sys._getframe(2)
    while frame is not None and len(frames) < limit:
        filename = frame.f_code.co_filename
        if not filename.startswith(_EMBER_DIR):
            frames.append(f"{filename}({frame.f_lineno}): {frame.f_code.co_name}")
        frame = frame.f_back
    return frames


_state = types.SimpleNamespace(recorder=None)


def _timed_op(fn, name):
    """``fn`` timed as the op ``name`` whenever a profile is recording."""
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        recorder = _state.recorder
        if recorder is None:
            return fn(*args, **kwargs)
        event = recorder.begin(name, args)
        try:
            return fn(*args, **kwargs)
        finally:
            recorder.end(event)
    timed._ember_profiled = fn
    return timed


def _timed_backward(fn):
    """A node class's ``backward`` (or ``backward_arrays``), timed under the node's torch name."""
    @functools.wraps(fn)
    def timed(self, *grads):
        recorder = _state.recorder
        if recorder is None:
            return fn(self, *grads)
        name = type(self).__name__
        outer = recorder.begin("autograd::engine::evaluate_function: " + name, None)
        inner = recorder.begin(name, None)
        try:
            return fn(self, *grads)
        finally:
            recorder.end(inner)
            recorder.end(outer)
    timed._ember_profiled = fn
    return timed


def _timed_accumulate(fn):
    @functools.wraps(fn)
    def timed(node, grad, owned):
        recorder = _state.recorder
        if recorder is None:
            return fn(node, grad, owned)
        outer = recorder.begin("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad")
        inner = recorder.begin("torch::autograd::AccumulateGrad")
        try:
            return fn(node, grad, owned)
        finally:
            recorder.end(inner)
            recorder.end(outer)
    timed._ember_profiled = fn
    return timed


# ----------------------------------------------------------------------------------------
# Which functions are ops, and where they are referenced

_ARITHMETIC = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floor_divide",
               "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and",
               "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
               "rshift": "bitwise_right_shift"}
_UNARY_DUNDERS = {"neg": "neg", "pos": "positive", "invert": "bitwise_not", "abs": "abs",
                  "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
                  "getitem": "index", "setitem": "index_put_"}


def _op_name(attr):
    """torch's name for the op behind a Tensor attribute: ``__radd__`` -> ``aten::add``,
    ``__iadd__`` -> ``aten::add_``."""
    if not (attr.startswith("__") and attr.endswith("__")):
        return "aten::" + attr
    core = attr[2:-2]
    if core in _ARITHMETIC:
        return "aten::" + _ARITHMETIC[core]
    if core in _UNARY_DUNDERS:
        return "aten::" + _UNARY_DUNDERS[core]
    if core[:1] == "r" and core[1:] in _ARITHMETIC:
        return "aten::" + ("rsub" if core == "rsub" else _ARITHMETIC[core[1:]])
    if core[:1] == "i" and core[1:] in _ARITHMETIC:
        return "aten::" + _ARITHMETIC[core[1:]] + "_"
    return "aten::" + attr


def _op_modules():
    """The modules whose ``__all__`` lists public ops."""
    import ember.nn.functional  # noqa: F401
    prefixes = ("ember.ops.", "ember.nn.functional.")
    return [m for name, m in list(sys.modules.items())
            if name.startswith(prefixes) and name != "ember.ops._common" and m is not None]


def _public_ops():
    """{function: timing wrapper} for every public op function."""
    ops = {}
    for module in _op_modules():
        for name in getattr(module, "__all__", ()):
            fn = module.__dict__.get(name)
            if isinstance(fn, types.FunctionType) and fn not in ops:
                ops[fn] = _timed_op(fn, "aten::" + name)
    return ops


def _tensor_methods():
    """[(attribute, original, wrapper)] for every Tensor method that is an op (of the
    overridable Tensor attributes, those defined by the op modules)."""
    from .._overridable import tensor_attributes
    methods = []
    for attr, fn in tensor_attributes():
        module = getattr(fn, "__module__", "") or ""
        if isinstance(fn, types.FunctionType) and module.startswith(("ember.ops.", "ember.nn.functional")):
            methods.append((attr, fn, _timed_op(fn, _op_name(attr))))
    return methods


def _node_classes():
    from ..autograd.graph import Node
    found, todo = [], [Node]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            found.append(sub)
            todo.append(sub)
    return [cls for cls in dict.fromkeys(found)
            if "backward" in cls.__dict__ or "backward_arrays" in cls.__dict__]


class _Patches:
    """Swaps the timing wrappers in and the originals back. The op registry is built once;
    module references and node classes are collected at each install, since modules and
    ``autograd.Function`` subclasses appear over a program's life."""

    ops = None
    methods = None

    def __init__(self):
        if _Patches.ops is None:
            _Patches.ops = _public_ops()
            _Patches.methods = _tensor_methods()
        self.undo = []

    def install(self):
        from .. import Tensor
        from ..autograd import engine
        from ..ops._compiled_methods import as_python, as_python_gradient
        ops = self.ops
        for name, module in list(sys.modules.items()):
            if module is None or not (name == "ember" or name.startswith("ember.")):
                continue
            namespace = module.__dict__
            for attr, value in list(namespace.items()):
                if value.__class__ is types.FunctionType and value in ops:
                    self._set(namespace, module, attr, value, ops[value])
        for attr, fn, wrapper in self.methods:
            current = Tensor.__dict__.get(attr)
            if as_python(attr, current) is fn:
                self._set(None, Tensor, attr, current, wrapper)
        for cls in _node_classes():
            for formula in ("backward", "backward_arrays"):  # a declined backward_arrays and
                current = cls.__dict__.get(formula)          # the backward after it: two events
                fn = as_python_gradient(cls, current) if formula == "backward_arrays" else current
                if isinstance(fn, types.FunctionType) and not hasattr(fn, "_ember_profiled"):
                    self._set(None, cls, formula, current, _timed_backward(fn))
        self._set(None, engine, "_accumulate", engine._accumulate, _timed_accumulate(engine._accumulate))

    def _set(self, namespace, owner, attr, original, wrapper):
        if namespace is not None:
            namespace[attr] = wrapper
        else:
            setattr(owner, attr, wrapper)
        self.undo.append((namespace, owner, attr, original))

    def restore(self):
        for namespace, owner, attr, original in reversed(self.undo):
            if namespace is not None:
                namespace[attr] = original
            else:
                setattr(owner, attr, original)
        self.undo = []


_install_lock = threading.Lock()


def _start_recording(recorder):
    with _install_lock:
        if _state.recorder is not None:
            raise RuntimeError("Can't profile: another ember profiler is already recording")
        patches = _Patches()
        patches.install()
        _state.recorder = recorder
    return patches


def _stop_recording(patches):
    with _install_lock:
        _state.recorder.close_open()
        _state.recorder = None
        patches.restore()


# ----------------------------------------------------------------------------------------
# Public API

class record_function:
    """Context manager/function decorator that adds a label to a code block/function when
    running the profiler. Outside a recording profile it does nothing."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None
        self._recorder = None

    def __enter__(self):
        recorder = _state.recorder
        if recorder is not None:
            self._recorder = recorder
            self._event = recorder.begin(self.name, None, "user_annotation")
        return self

    def __exit__(self, *exc):
        if self._event is not None and self._recorder is _state.recorder:
            self._recorder.end(self._event)
        self._event = self._recorder = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def labelled(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return labelled


class profile:
    """Profiler context manager: times every ember op, backward node and ``record_function``
    range run while it records.

    Args:
        activities: ``ProfilerActivity.CPU`` (and ``CUDA``, recorded as host time on ember).
        schedule: callable taking the step number (``prof.step()`` advances it) and returning
            a ``ProfilerAction``; see ``ember.profiler.schedule``. Default: record always.
        on_trace_ready: called with the profiler at the end of each recording cycle.
        record_shapes: save the shapes of each op's positional inputs.
        with_stack: save the Python call stack (outside ember) of each op.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None):
        self.activities = set(activities) if activities else {ProfilerActivity.CPU}
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder = None
        self._patches = None
        self._step_event = None
        self._events = EventList()

    # -- lifecycle -----------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if self.current_action in _RECORDING:
            self._begin_cycle()

    def stop(self):
        if self._recorder is not None:
            self._end_cycle()

    def step(self):
        """Signals the profiler that the next profiling step has started."""
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous in _RECORDING:
            if previous == ProfilerAction.RECORD_AND_SAVE or self.current_action not in _RECORDING:
                self._end_cycle()
            else:
                self._mark_step()
                return
        if self.current_action in _RECORDING:
            self._begin_cycle()

    def _begin_cycle(self):
        self._recorder = _Recorder(self.record_shapes, self.with_stack)
        self._patches = _start_recording(self._recorder)
        self._step_event = None
        self._mark_step()

    def _mark_step(self):
        if not self.record_steps:
            return
        if self._step_event is not None:
            self._recorder.end(self._step_event)
        self._step_event = self._recorder.begin(f"ProfilerStep#{self.step_num}", None, "user_annotation")

    def _end_cycle(self):
        recorder = self._recorder
        _stop_recording(self._patches)
        self._recorder = self._patches = self._step_event = None
        self._events = EventList(recorder.events, recorder.trace_start)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results -------------------------------------------------------------------------
    def events(self):
        """The events of the last recording cycle."""
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Averages events, grouping them by name (and input shapes or the top
        ``group_by_stack_n`` stack frames)."""
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Writes the last cycle's events as a Chrome trace JSON (gzipped for ``*.gz``)."""
        self._events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Writes ``frame;frame;...;op self_time_us`` lines (flame-graph input)."""
        with open(path, "w") as f:
            for event in self._events:
                if event.stack:
                    f.write(";".join(reversed(event.stack)) + f";{event.name} {int(event.self_cpu_time_total)}\n")


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """Outputs tracing files to directory of ``dir_name``, then that directory can be directly
    delivered to tensorboard as logdir."""
    import socket

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns() // 1000000}.pt.trace.json")
        prof.export_chrome_trace(path + ".gz" if use_gzip else path)
    return handler
