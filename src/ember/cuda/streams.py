"""CUDA streams and events, over CuPy's.

Work queued on a stream runs in order on the GPU while Python runs ahead; events mark points in
a stream to wait on or time.
"""
from . import _cupy, _index

__all__ = ["Stream", "Event", "StreamContext", "stream", "current_stream", "default_stream",
           "set_stream"]


class Stream:
    """A CUDA stream: a queue of work that runs in order on one device.
    ``priority``: lower numbers run first (as in CUDA)."""

    def __init__(self, device=None, priority=0, **kwargs):
        cupy = _cupy()
        self.device_index = _index(device)
        with cupy.cuda.Device(self.device_index):
            self._cupy = cupy.cuda.Stream(non_blocking=True, priority=priority or None)

    @classmethod
    def _wrap(cls, cupy_stream, device_index):
        self = cls.__new__(cls)
        self._cupy, self.device_index = cupy_stream, device_index
        return self

    @property
    def device(self):
        from .._device import device
        return device("cuda", self.device_index)

    @property
    def cuda_stream(self):
        """The raw ``cudaStream_t`` as an int."""
        return self._cupy.ptr

    def query(self):
        """True if all the work queued on this stream has completed."""
        return self._cupy.done

    def synchronize(self):
        """Waits for all the work queued on this stream to complete."""
        self._cupy.synchronize()

    def wait_event(self, event):
        """Makes all future work on this stream wait for ``event``."""
        self._cupy.wait_event(event._cupy)

    def wait_stream(self, stream):
        """Makes all future work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records ``event`` (a new one if None) on this stream and returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream \
            and self.device_index == other.device_index

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __enter__(self):
        self._context = StreamContext(self)
        return self._context.__enter__()

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)

    def __repr__(self):
        return f"<ember.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a marker in a stream, to wait on, query, or time (``enable_timing``)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._cupy = _cupy().cuda.Event(block=blocking, disable_timing=not enable_timing,
                                        interprocess=interprocess)
        self._recorded = False

    def record(self, stream=None):
        """Records the event on ``stream`` (the current stream if None)."""
        target = current_stream() if stream is None else stream
        self._cupy.record(target._cupy)
        self._recorded = True

    def wait(self, stream=None):
        """Makes all future work on ``stream`` (the current one if None) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        """True if all the work captured by this event has completed."""
        return self._cupy.done

    def synchronize(self):
        """Waits for the work captured by this event to complete."""
        self._cupy.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds elapsed between this event and ``end_event`` (both recorded, with
        ``enable_timing=True``)."""
        if not (self._recorded and end_event._recorded):
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return _cupy().cuda.get_elapsed_time(self._cupy, end_event._cupy)

    def __repr__(self):
        return f"<ember.cuda.Event {'recorded' if self._recorded else 'uninitialized'}>"


def current_stream(device=None):
    """The stream work is queued on for ``device`` (the current device if None)."""
    cupy = _cupy()
    index = _index(device)
    with cupy.cuda.Device(index):
        return Stream._wrap(cupy.cuda.get_current_stream(), index)


def default_stream(device=None):
    """The default (legacy null) stream of ``device``."""
    cupy = _cupy()
    return Stream._wrap(cupy.cuda.Stream.null, _index(device))


def set_stream(stream):
    """Makes ``stream`` the current stream (None does nothing)."""
    if stream is not None:
        stream._cupy.use()


class StreamContext:
    """Context manager that makes ``stream`` current inside (``None`` changes nothing)."""

    def __init__(self, stream):
        self.stream = stream
        self._previous = None

    def __enter__(self):
        if self.stream is None:
            return None
        cupy = _cupy()
        self._device = cupy.cuda.Device(self.stream.device_index)
        self._device.__enter__()
        self._previous = cupy.cuda.get_current_stream()
        self.stream._cupy.use()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self._previous.use()
            self._device.__exit__(*exc)
        return False


def stream(stream):
    """Context manager selecting ``stream`` (and its device) for the work queued inside."""
    return StreamContext(stream)

