"""``ember.profiler``: op timing and Chrome-trace export with torch.profiler's API."""
from .profiler import (  # noqa: F401
    EventList, FunctionEvent, FunctionEventAvg, ProfilerAction, ProfilerActivity, profile,
    record_function, schedule, tensorboard_trace_handler,
)

__all__ = ["ProfilerActivity", "ProfilerAction", "profile", "record_function", "schedule",
           "tensorboard_trace_handler"]
