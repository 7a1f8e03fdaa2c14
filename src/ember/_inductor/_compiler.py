"""Compiling generated C kernels with the machine's C compiler and loading them with ctypes,
cached on disk under a hash of the source, the compiler, its flags and the CPU (as torch's
inductor caches its C++ kernels on the CPU).

The compiler is ``config.cc`` (default: ``$CC`` or ``gcc``); the cache directory is
``$EMBER_KERNEL_CACHE`` or ``~/.cache/ember/kernels`` (``$XDG_CACHE_HOME`` honoured). A second
process that needs a kernel an earlier one built loads the shared library and compiles
nothing. ``-march=native`` is safe there because the key holds the CPU's model and flags: a
cache directory shared with another machine gets other files. Where no compiler is found or
a compile fails, ``load`` returns None after one warning and the callers run the graph's ops
unfused."""
import ctypes
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
import warnings

from . import config
from ._serial_regions import with_serial_branches

__all__ = ["load", "cache_dir", "counters", "compiler_available"]

log = logging.getLogger("ember._inductor")

FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fopenmp", "-shared", "-fPIC", "-std=c99")
# a source whose parallel regions have a serial branch beside them (``with_serial_branches``) holds each loop
# twice: GCC's inliner, held to its default growth, would then leave the functions the loops call out of
# the second copy (unvectorized, where a loop is ``simd``)
_SERIAL_BRANCH_FLAGS = ("--param", "large-function-growth=1000", "--param", "inline-unit-growth=1000")

# what the kernels cost to build: ``kernels_compiled`` (by the compiler in this process),
# ``kernels_loaded`` (from the disk cache), ``compile_seconds`` (the compiler's time in all)
counters = {"kernels_compiled": 0, "kernels_loaded": 0, "compile_seconds": 0.0}

_loaded = {}            # (key, name) -> ctypes function
_lock = threading.Lock()
_warned = set()
_tool_ids = {}          # compiler path -> its version line


def cache_dir():
    """Where compiled kernels are kept."""
    path = os.environ.get("EMBER_KERNEL_CACHE")
    if path:
        return path
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember", "kernels")


def _compiler():
    cc = config.cc or os.environ.get("CC") or "gcc"
    return shutil.which(cc)


def compiler_available():
    """Whether generated kernels can be built here (a C compiler is found)."""
    return _compiler() is not None


def _warn_once(kind, message, quiet=False):
    if quiet:   # a caller with its own fallback: logged, not warned
        log.info(message)
        return
    if kind not in _warned:
        _warned.add(kind)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def _tool_id(cc):
    if cc not in _tool_ids:
        try:
            out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60)
            _tool_ids[cc] = out.stdout.splitlines()[0] if out.stdout else cc
        except (OSError, subprocess.SubprocessError):
            _tool_ids[cc] = cc
    return _tool_ids[cc]


def _is_gcc():
    """Whether the C compiler is GCC (its version line names it)."""
    cc = _compiler()
    return cc is not None and ("gcc" in _tool_id(cc).lower() or "free software foundation" in _tool_id(cc).lower())


_cpu = []


def _cpu_id():
    """The CPU's model name and feature flags (what ``-march=native`` compiles for)."""
    if not _cpu:
        info = ""
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith(("model name", "flags")):
                        info += line
                    if line.strip() == "":
                        break
        except OSError:
            import platform
            info = platform.processor() or platform.machine()
        _cpu.append(info)
    return _cpu[0]


_KERNEL_ARGTYPES = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)


def load(source, name, quiet=False, libraries=(), argtypes=_KERNEL_ARGTYPES):
    """The ctypes function ``name`` of the C ``source``, compiled (or found in the cache) and
    linked with the C math library and ``libraries`` (names as ``-l`` takes them), taking
    ``argtypes`` (by default a generated kernel's: arrays, sizes, scalars, thread count); None
    when it cannot be built or loaded (warned once, or only logged where ``quiet``). Its OpenMP
    regions run serially, without entering libgomp, where their if() clause is false
    (``with_serial_branches``)."""
    links = tuple(f"-l{library}" for library in libraries) + ("-lm",)
    serial = with_serial_branches(source)
    with _lock:
        flags = _SERIAL_BRANCH_FLAGS if serial != source and _is_gcc() else ()
        path, key = _built(serial, links, flags, quiet, counted=True)
        if path is None:
            return None
        fn = _loaded.get((key, name))
        if fn is not None:
            return fn
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            _warn_once("load", f"ember.compile: a generated kernel could not be loaded ({e}); "
                       f"graphs run their ops unfused.", quiet)
            return None
        fn = getattr(lib, name)
        fn.restype = None
        fn.argtypes = argtypes
        _loaded[key, name] = fn
        return fn


def load_module(source, name, include_dirs=()):
    """The Python extension module ``name`` built from the C ``source`` (which defines
    ``PyInit_<name>``) with ``include_dirs`` (the Python and NumPy headers), compiled or found in
    the cache like ``load``'s libraries; None (logged) when it cannot be built or imported."""
    import importlib.machinery
    import importlib.util
    flags = tuple(f"-I{directory}" for directory in include_dirs)
    with _lock:
        path, key = _built(source, (), flags, quiet=True, counted=False)
        if path is None:
            return None
        module = _loaded.get((key, name))
        if module is None:
            try:
                loader = importlib.machinery.ExtensionFileLoader(name, path)
                module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
                loader.exec_module(module)
            except (ImportError, OSError) as e:
                log.info("ember: the extension module %s could not be imported (%s)", name, e)
                return None
            _loaded[key, name] = module
        return module


def _built(source, links, flags, quiet, counted):
    """(the path of the shared library built from ``source``, the key it is cached under), or
    (None, None) where no compiler is found or the build fails (warned once, or logged where
    ``quiet``); ``counted``: the build or the load goes into ``counters``. The caller holds
    ``_lock``."""
    cc = _compiler()
    if cc is None:
        _warn_once("missing", f"ember.compile: no C compiler found ({config.cc or os.environ.get('CC') or 'gcc'!r}); "
                   f"graphs run their ops unfused. Install gcc or set ember._inductor.config.cc.", quiet)
        return None, None
    key = hashlib.sha256("\0".join((source, cc, _tool_id(cc), " ".join(FLAGS + flags + links), _cpu_id()))
                         .encode()).hexdigest()[:32]
    path = _loaded.get((key, None))
    if path is not None:   # (built or found by this process already)
        return path, key
    directory = cache_dir()
    path = os.path.join(directory, f"k{key}.so")
    if os.path.exists(path):
        _loaded[key, None] = path
        counters["kernels_loaded"] += counted
        return path, key
    try:
        built = _build(cc, source, directory, path, flags + links, quiet, counted)
    except OSError as e:        # the cache directory cannot be made or written
        _warn_once("cache", f"ember.compile: generated kernels cannot be written to "
                   f"{directory!r} ({e}); graphs run their ops unfused. Set "
                   f"EMBER_KERNEL_CACHE to a writable directory.", quiet)
        return None, None
    if not built:
        return None, None
    _loaded[key, None] = path
    return path, key


def _build(cc, source, directory, path, links, quiet=False, counted=True):
    os.makedirs(directory, exist_ok=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        src = os.path.join(tmp, "kernel.c")
        with open(src, "w") as f:
            f.write(source)
        out = os.path.join(tmp, "kernel.so")
        try:
            proc = subprocess.run([cc, *FLAGS, src, "-o", out, *links], capture_output=True,
                                  text=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as e:
            proc = None
            error = str(e)
        if proc is None or proc.returncode != 0:
            error = proc.stderr.strip()[-2000:] if proc is not None else error
            _warn_once("failed", f"ember.compile: compiling a generated kernel failed; graphs "
                       f"run their ops unfused. The compiler said:\n{error}", quiet)
            return False
        os.replace(out, path)      # atomic: a concurrent process sees the whole file or none
    seconds = time.perf_counter() - start
    if counted:
        counters["kernels_compiled"] += 1
        counters["compile_seconds"] += seconds
    log.info("ember._inductor: compiled a kernel in %.2f s (%s)", seconds, path)
    return True
