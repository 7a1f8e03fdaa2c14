"""The CPU as a device module, as ``torch.cpu``: the abstractions of ``ember.cuda`` (streams,
events, device selection) for device-agnostic code, and the CPU's capabilities."""
import os
import platform
import types

from . import amp  # noqa: F401

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream",
           "stream", "set_device", "device_count", "Stream", "StreamContext", "Event",
           "get_capabilities"]

# torch's capability name -> the flag Linux lists in /proc/cpuinfo
_X86_FLAGS = {
    "sse": "sse", "sse2": "sse2", "sse3": "pni", "ssse3": "ssse3", "sse4_1": "sse4_1",
    "sse4_2": "sse4_2", "sse4a": "sse4a", "avx": "avx", "avx2": "avx2", "avx_vnni": "avx_vnni",
    "avx512_f": "avx512f", "avx512_cd": "avx512cd", "avx512_dq": "avx512dq",
    "avx512_bw": "avx512bw", "avx512_vl": "avx512vl", "avx512_ifma": "avx512ifma",
    "avx512_vbmi": "avx512vbmi", "avx512_vbmi2": "avx512_vbmi2",
    "avx512_bitalg": "avx512_bitalg", "avx512_vpopcntdq": "avx512_vpopcntdq",
    "avx512_vnni": "avx512_vnni", "avx512_bf16": "avx512_bf16", "avx512_fp16": "avx512_fp16",
    "avx512_vp2intersect": "avx512_vp2intersect", "avx512_4vnniw": "avx512_4vnniw",
    "avx512_4fmaps": "avx512_4fmaps", "avx_vnni_int8": "avx_vnni_int8",
    "avx_vnni_int16": "avx_vnni_int16", "avx_ne_convert": "avx_ne_convert",
    "amx_bf16": "amx_bf16", "amx_tile": "amx_tile", "amx_int8": "amx_int8",
    "amx_fp16": "amx_fp16", "fma3": "fma", "fma4": "fma4", "f16c": "f16c", "bmi": "bmi1",
    "bmi2": "bmi2", "popcnt": "popcnt", "lzcnt": "abm", "aes": "aes", "sha": "sha_ni",
    "clflush": "clflush", "clflushopt": "clflushopt", "clwb": "clwb",
}
_capabilities = []


def _cpuinfo_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def get_capabilities():
    """Returns an immutable mapping of CPU capabilities detected at runtime: the instruction
    set extensions (``avx2``, ``avx512_f``, ...: bools, from the flags the kernel lists in
    ``/proc/cpuinfo``), ``architecture`` and ``num_logical_cores``."""
    if not _capabilities:
        caps = {"architecture": platform.machine(), "num_logical_cores": os.cpu_count()}
        flags = _cpuinfo_flags()
        if flags is not None and caps["architecture"] in ("x86_64", "AMD64", "i686"):
            caps.update({name: flag in flags for name, flag in _X86_FLAGS.items()})
        _capabilities.append(types.MappingProxyType(caps))
    return _capabilities[0]


def is_available():
    """Returns a bool indicating if CPU is currently available. Always True."""
    return True


def synchronize(device=None):
    """Waits for all kernels in all streams on the CPU device to complete (they already
    have: the CPU runs them in order). ``device`` is ignored."""


class Stream:
    """The CPU's one stream: waiting and recording do nothing."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """An event on the CPU: always complete."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_cpu_stream = Stream()
_current = [_default_cpu_stream]


def current_stream(device=None):
    """Returns the currently selected ``Stream`` (``device`` is ignored)."""
    return _current[0]


class StreamContext:
    """Context-manager that selects a given stream (None selects nothing)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self):
        if self.stream is None:
            return
        self.prev_stream = _current[0]
        _current[0] = self.stream

    def __exit__(self, type, value, traceback):
        if self.stream is None:
            return
        _current[0] = self.prev_stream


def stream(stream):
    """Wrapper around the Context-manager StreamContext that selects a given stream."""
    return StreamContext(stream)


def device_count():
    """Returns number of CPU devices (not cores). Always 1."""
    return 1


def set_device(device):
    """Sets the current device: on the CPU, nothing to do."""


def current_device():
    """Returns current device for cpu. Always 'cpu'."""
    return "cpu"


def is_initialized():
    """Returns True if the CPU is initialized. Always True."""
    return True
