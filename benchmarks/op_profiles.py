"""Where ember's time goes in the op table's slow rows: each row of a ``benchmarks.ops --json``
file whose ember/torch ratio is over ``--over`` (tiny size by default) is run again under
cProfile, on the same case and mode, and named with its profile and the reason the profile
shows.

A row's profile is the share of the ember call's time (cProfile's own time of each function,
summed over ``--calls`` calls after a warm-up) taken by its three largest functions, and the
Python-level and C-level calls each op call makes. The reason is read from the profile by the
first rule that holds:

- ``numpy.linalg``: NumPy's linear algebra functions (their Python layer and the LAPACK call
  beneath it) take 20% or more of the time;
- ``ctypes``: LAPACK or BLAS routines called through ctypes (ember's ``_backend/lapack.py``,
  ``cblas.py`` and the pointers they pass) take 20% or more;
- ``NumPy Python``: NumPy's functions written in Python (``np.unique``'s, ``np.histogram``'s,
  the ``fromnumeric`` wrappers) take 20% or more;
- ``compiled``: compiled functions (``ops._compiled_functions``: C, with the NumPy calls and loops
  they make) take half the time or more: the case runs in C, and its own work is what is left;
- ``Python path``: the rest, ember's own Python (with the NumPy calls it makes), "with compiled
  functions" where some ran (the op's own, which handed the case on, or those of the ops it is
  made of), with their share.

cProfile's overhead grows with the number of calls, so its times are shares, not µs; the µs
are the benchmark row's own.

    python -m benchmarks.op_profiles FILE.json [--size tiny] [--over 1.0] [--calls 300]
        [--out FILE]
"""
import argparse
import cProfile
import json
import pstats
import sys
from pathlib import Path

from benchmarks import ops as op_bench

RULE_SHARE = 0.2    # the share of the time a group needs for its rule to hold
COMPILED_SHARE = 0.5   # the compiled functions' share from which a case counts as run in C
TOP = 3             # functions named in a row's profile
TENSOR_MAKERS = ("_make", "_make_view")   # the Tensor constructors the Python ops call (_tensor.py)


def _group(filename, name):
    """The group a profiled function belongs to: numpy.linalg, ctypes, NumPy Python, compiled (a compiled
    function), C (another) or ember."""
    path = filename.replace("\\", "/")
    if "numpy/linalg" in path:
        return "numpy.linalg"
    if path.endswith(("_backend/lapack.py", "_backend/cblas.py", "_backend/pointers.py")) or "PyCSimpleType" in name:
        return "ctypes"
    if "/numpy/" in path:
        return "NumPy Python"
    if filename == "~":
        return "compiled" if "compiled_function" in name else "C"
    return "ember"


def _short(filename, line, name):
    """A profiled function's name as a reader finds it: ``ops/lu.py:getrf``, ``numpy/linalg/_linalg.py:svd``,
    ``ufunc.reduce``, ``compiled_function``."""
    if filename == "~":
        text = name.strip("{}<>")
        for prefix in ("built-in method ", "method "):
            if text.startswith(prefix):
                text = text[len(prefix):]
        if " of " in text:   # "'reduce' of 'numpy.ufunc' objects"
            method, owner = text.split(" of ", 1)
            text = f"{owner.strip(chr(39)).split(chr(39))[0].split('.')[-1]}.{method.strip(chr(39))}"
        return text
    path = filename.replace("\\", "/")
    for root in ("/src/ember/", "/site-packages/", "/tests/", "/benchmarks/"):
        if root in path:
            path = path.split(root, 1)[1]
            break
    return f"{path}:{name}"


def profile_of(fn, calls):
    """(shares, groups, counts, compiled_ran) of ``calls`` calls of ``fn``: shares, the [(name, share)]
    of the largest own times; groups, each group's share; counts, the Python-level and C-level calls and
    the tensors made (``TENSOR_MAKERS``' calls) per call (the compiled functions make theirs in C,
    uncounted); compiled_ran, whether a compiled function was called."""
    for _ in range(20):
        fn()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    total = sum(tt for (_, _, tt, _, _) in stats.values()) or 1.0
    groups, named, counts = {}, [], {"Python": 0, "C": 0, "tensors": 0}
    for (filename, line, name), (_, ncalls, tt, _, _) in stats.items():
        if "_lsprof.Profiler" in name:
            continue
        group = _group(filename, name)
        groups[group] = groups.get(group, 0.0) + tt / total
        named.append((_short(filename, line, name), tt / total))
        counts["C" if filename == "~" else "Python"] += ncalls
        if filename.replace("\\", "/").endswith("ember/_tensor.py") and name in TENSOR_MAKERS:
            counts["tensors"] += ncalls
    named.sort(key=lambda item: -item[1])
    compiled_ran = any("compiled_function" in n for (_, _, n) in stats)
    return named[:TOP], groups, {k: v / calls for k, v in counts.items()}, compiled_ran


def reason(groups, compiled_ran):
    """The reason a profile shows, by the rules in the module's docstring."""
    for group in ("numpy.linalg", "ctypes", "NumPy Python"):
        if groups.get(group, 0.0) >= RULE_SHARE:
            return f"{group} ({groups[group]:.0%})"
    compiled = groups.get("compiled", 0.0)
    if compiled >= COMPILED_SHARE:
        return f"compiled ({compiled:.0%})"
    return f"Python path, with compiled functions ({compiled:.0%})" if compiled_ran else "Python path"


def _mode_key(text):
    return next(key for key, value in op_bench.MODES.items() if value == text)


def profiled_rows(rows, size, over, calls, progress=None):
    """The rows of ``size`` over ``over``, the worst first, each with its profile and reason."""
    labels = dict(op_bench.entries())
    chosen = sorted((r for r in rows if r["timed"] and r["size"] == size and r["ratio"] > over),
                    key=lambda r: -r["ratio"])
    found = []
    for index, row in enumerate(chosen):
        if progress:
            progress(f"[{index + 1}/{len(chosen)}] {row['op']} {row['mode']}")
        op = labels[row["op"]]
        case = op_bench.Planner(row["op"], op).case(op_bench.SIZES[size])
        built = op_bench.Built(case.op, case.sample, case.dtype)
        fn = op_bench.callable_for(op_bench.LIBS["ember"], case, _mode_key(row["mode"]), built)
        top, groups, counts, compiled_ran = profile_of(fn, calls)
        found.append({**row, "top": top, "counts": counts, "reason": reason(groups, compiled_ran)})
    return found


def markdown(found):
    """The rows as a markdown table, one line each."""
    lines = ["| op | mode | ember/torch | ember µs | torch µs | calls a call: Python, C, tensors made "
             "| largest own times | reason |", "|---|---|---|---|---|---|---|---|"]
    for r in found:
        top = ", ".join(f"`{name}` {share:.0%}" for name, share in r["top"])
        counts = r["counts"]
        lines.append(f"| `{r['op']}` | {r['mode']} | {r['ratio']:.2f} | {r['ember_us']:.1f} | {r['torch_us']:.1f} "
                     f"| {counts['Python']:.0f}, {counts['C']:.0f}, {counts['tensors']:.0f} | {top} | {r['reason']} |")
    return lines


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", help="rows written by python -m benchmarks.ops --json")
    parser.add_argument("--size", default="tiny", choices=["tiny", "medium", "large", "fixed"])
    parser.add_argument("--over", type=float, default=1.0, help="profile the rows whose ratio is over this")
    parser.add_argument("--calls", type=int, default=300, help="calls profiled per row")
    parser.add_argument("--out", help="also write the markdown table to this file")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    rows = json.loads(Path(args.json).read_text())["rows"]
    found = profiled_rows(rows, args.size, args.over, args.calls,
                          progress=lambda text: print(text, file=sys.stderr, flush=True))
    lines = markdown(found)
    counts = {}
    for r in found:
        key = r["reason"].split(" (")[0]
        counts[key] = counts.get(key, 0) + 1
    lines += ["", "rows by reason: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))]
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
