"""Every op of the op table (tests/op_db), ember beside torch: forward and forward+backward at
three sizes, at 1 and 2 threads, in one process, the two libraries interleaved.

Each entry is timed on one of its samples (``template``: random float arguments and a dimension
of 2 or more preferred) with its tensor arguments rescaled so that the largest tensor, argument
or output, has about 16 elements (tiny: the per-call overhead), 65,536 (medium) or 4,194,304
(large). Rescaling multiplies every dimension of 2 or more of every tensor argument by one factor
(dimensions of 1 stay 1, so broadcasting partners stay partners and square matrices stay
square); where torch refuses that, only the leading dimension of the largest argument (and the
dimensions aligned with it) grows; then every dimension by a whole factor, with the shapes given
as arguments (view's, expand's); where torch refuses all three, the sample's own shapes are
timed once, as size "fixed". Integer and boolean arguments given by value are redrawn in their
range for the new shape, float ones repeated. The dtype is float32 where the entry has it (else
its first). forward+backward is the call, then ``backward`` of the outputs the op table
differentiates with its seeded gradients (``tests/op_db/cases.py``), the leaves' gradients
cleared after each call; entries without gradients are timed forward only.

Times are medians over ``--repeats`` samples of each library in turn, a sample being enough
calls to last 2 ms or more; at more than one thread a 5 ms pause comes before each sample. At
the large size an entry is not timed when its medium time predicts over PREDICT_LIMIT seconds a
call (``_large_predictions``), and is timed by one call when a call takes over CALL_LIMIT. The
table, sorted by ember/torch (the worst first), goes to stdout (``--limit`` rows) and whole to
``--out``.

    python -m benchmarks.ops [--only NAME ...] [--sizes tiny medium large] [--threads 1 2]
        [--modes forward backward] [--repeats 5] [--out FILE] [--json FILE] [--limit N] [--list]
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))  # the op table: tests/op_db

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
from benchmarks.overhead import measure  # noqa: E402
from op_db import OPS  # noqa: E402
from op_db.common import Arg, Sample  # noqa: E402
from op_db.cases import Built, backward_inputs, differentiable, float_outputs, outputs  # noqa: E402

SIZES = {"tiny": 16, "medium": 65_536, "large": 4_194_304}
MODES = {"forward": "forward", "backward": "forward+backward"}
LIBS = {"ember": ember, "torch": torch}
SAMPLE_SECONDS = 0.002      # each timed sample lasts at least this long
CALL_LIMIT = 1.0            # seconds: a call longer than this is timed once
PREDICT_EXPONENT = 1.5      # large-size time predicted from medium: x (elements ratio)^1.5 at most
PREDICT_LIMIT = 2 * CALL_LIMIT  # a large case predicted slower than this is not timed
SETTLE = 0.005              # pause before each sample at more than one thread
TOO_BIG = 4                 # a scaled case whose largest tensor exceeds the target by this is refused


# -- the entries ----------------------------------------------------------------------------

def entries():
    """(label, OpInfo) for every entry of the op table; a repeated name gets ``#2``, ``#3``."""
    seen, found = {}, []
    for op in OPS:
        seen[op.name] = seen.get(op.name, 0) + 1
        found.append((op.name if seen[op.name] == 1 else f"{op.name}#{seen[op.name]}", op))
    return found


def select(found, only):
    """The entries named by ``only``: each name exactly where some label is that name, else every
    label containing it."""
    if not only:
        return found
    chosen = []
    for name in only:
        exact = [e for e in found if e[0] == name]
        chosen += [e for e in (exact or [e for e in found if name in e[0]]) if e not in chosen]
    return chosen


def template(op):
    """The sample an entry is timed on: the first whose tensor arguments are all random floats,
    else the first; a sample with a dimension of 2 or more (one that can grow) first."""
    def sized(s):
        return any(d >= 2 for a in s.args if isinstance(a, Arg) for d in arg_shape(a))
    for wanted in (lambda s: sized(s) and _random_floats(s), sized, _random_floats):
        found = [s for s in op.samples if wanted(s)]
        if found:
            return found[0]
    return op.samples[0]


def _random_floats(sample):
    args = [a for a in sample.args if isinstance(a, Arg)]
    return args and all(a.dtype is None and not a.integer and a.values is None and numel(a.shape)
                        for a in args)


def dtype_of(op):
    return "float32" if "float32" in op.dtypes else op.dtypes[0]


def modes_of(op):
    """forward, and forward+backward where the op table compares gradients on the sample."""
    sample, dtype = template(op), dtype_of(op)
    if op.grad and dtype in ("float32", "float64") and differentiable(sample):
        return ("forward", "backward")
    return ("forward",)


def arg_shape(arg):
    return tuple(np.shape(arg.values)) if arg.values is not None else tuple(arg.shape)


def numel(shape):
    return math.prod(shape)


# -- rescaling ------------------------------------------------------------------------------

def _grow(d, k):
    return d if d < 2 else max(2, round(d * k))


def scale_all(shapes, k):
    """Every dimension of 2 or more times ``k``."""
    return [tuple(_grow(d, k) for d in s) for s in shapes]


def scale_leading(shapes, k):
    """The first dimension of 2 or more of the largest argument times ``k``, and in the other
    arguments the dimension aligned with it from the right where it has the same size."""
    ref = max(shapes, key=numel)
    axes = [a for a, d in enumerate(ref) if d >= 2]
    if not axes:
        return list(shapes)
    axis, size = axes[0], ref[axes[0]]
    out = []
    for s in shapes:
        i = axis - (len(ref) - len(s))
        if 0 <= i < len(s) and s[i] == size:
            s = s[:i] + (_grow(size, k),) + s[i + 1:]
        out.append(tuple(s))
    return out


def scale_whole(shapes, k):
    """Every dimension of 2 or more times the whole number nearest ``k``: the strategy that also
    scales the shapes given as arguments (``view``'s, ``expand``'s), whose products must match."""
    return scale_all(shapes, max(1, round(k)))


STRATEGIES = {"all dims": scale_all, "leading dim": scale_leading, "shape arguments": scale_whole}


def _shape_argument(value):
    return isinstance(value, (tuple, list)) and value and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value)


def scaled_arg(arg, shape, rng):
    """``arg`` at ``shape``: random arguments redrawn by the op table; values given explicitly
    redrawn in their range (integers, booleans with the same share of True) or repeated (floats,
    which keep their NaNs and ties)."""
    if arg.values is None:
        return replace(arg, shape=shape)
    values = np.asarray(arg.values)
    if values.shape == shape:
        return arg
    if values.dtype.kind == "b":
        new = rng.random(shape) < (values.mean() if values.size else 0.5)
    elif values.dtype.kind in "iu":
        new = rng.integers(values.min(), values.max() + 1, size=shape) if values.size else np.zeros(shape, int)
    else:
        new = np.resize(values, shape)
    return replace(arg, shape=shape, values=new)


def make_sample(sample, shapes, seed=0, shape_factor=None):
    """The sample with its tensor arguments at ``shapes``; with ``shape_factor``, its arguments
    that are tuples of ints (shapes) scaled like the tensors' dimensions."""
    rng = np.random.default_rng(seed)
    shapes = iter(shapes)
    args = []
    for a in sample.args:
        if isinstance(a, Arg):
            a = scaled_arg(a, next(shapes), rng)
        elif shape_factor is not None and _shape_argument(a):
            a = type(a)(_grow(d, shape_factor) for d in a)
        args.append(a)
    return Sample(tuple(args), dict(sample.kwargs), sample.name)


def _largest_tensor(out):
    if isinstance(out, (torch.Tensor, ember.Tensor)):
        return out.numel()
    if isinstance(out, (tuple, list)):
        return max((_largest_tensor(o) for o in out), default=0)
    return 0


def torch_output_size(op, sample, dtype):
    """The largest output's element count of one torch forward, and the seconds it took."""
    built = Built(op, sample, dtype)
    _, args = built.make(torch, op, sample, dtype, False)
    start = time.perf_counter()
    with torch.no_grad():
        out = op.fn(torch, *args, **sample.kwargs)
    return _largest_tensor(out), time.perf_counter() - start


@dataclass
class Case:
    label: str
    op: object
    sample: Sample
    dtype: str
    scaling: str      # "all dims", "leading dim" or "fixed shape"
    shapes: list      # the tensor arguments' shapes
    elements: int     # the largest tensor's element count, argument or output
    note: str = ""

    def shape_text(self):
        return ", ".join("x".join(map(str, s)) if s else "()" for s in self.shapes)


class Planner:
    """The cases of one entry, one per size: the sample rescaled by the first strategy torch
    accepts, else the sample itself."""

    def __init__(self, label, op):
        self.label, self.op = label, op
        self.sample, self.dtype = template(op), dtype_of(op)
        self.shapes = [arg_shape(a) for a in self.sample.args if isinstance(a, Arg)]
        self._growth, self._cases, self._template_size = {}, {}, None

    def fixed(self, note=""):
        return Case(self.label, self.op, self.sample, self.dtype, "fixed shape", self.shapes,
                    self.template_size(), note)

    def template_size(self):
        if self._template_size is None:
            self._template_size = max([numel(s) for s in self.shapes]
                                      + [self._out_size("fixed shape", self.shapes, 1)])
        return self._template_size

    def _sample(self, strategy, shapes, k):
        factor = max(1, round(k)) if strategy == "shape arguments" else None
        return make_sample(self.sample, shapes, shape_factor=factor)

    def _out_size(self, strategy, shapes, k):
        return torch_output_size(self.op, self._sample(strategy, shapes, k), self.dtype)[0]

    def growth(self, strategy):
        """(input elements, output elements, output exponent) of a strategy: how the largest
        output grows with the largest input, from the sample and the sample scaled by 2."""
        if strategy not in self._growth:
            scale = STRATEGIES[strategy]
            in1 = max(numel(s) for s in self.shapes)
            doubled = scale(self.shapes, 2.0)
            in2 = max(numel(s) for s in doubled)
            if in2 <= in1:
                raise ValueError("nothing to scale")
            out1, out2 = self._out_size(strategy, self.shapes, 1), self._out_size(strategy, doubled, 2)
            exponent = math.log(out2 / out1) / math.log(in2 / in1) if out1 and out2 else 0.0
            self._growth[strategy] = (in1, out1, exponent)
        return self._growth[strategy]

    def predicted(self, strategy, k):
        in1, out1, exponent = self.growth(strategy)
        inputs = max(numel(s) for s in STRATEGIES[strategy](self.shapes, k))
        return max(inputs, out1 * (inputs / in1) ** exponent)

    def factor(self, strategy, target):
        """The factor whose predicted largest tensor is nearest ``target`` (on a log scale)."""
        lo, hi = 1e-3, 1e7
        for _ in range(80):  # the smallest factor reaching the target
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if self.predicted(strategy, mid) >= target else (mid, hi)
        under = lo * (1 - 1e-9)
        return min((hi, under), key=lambda k: abs(math.log(self.predicted(strategy, k) / target)))

    def case(self, target):
        """The case whose largest tensor has about ``target`` elements."""
        if target not in self._cases:
            try:
                self._cases[target] = self._case(target)
            except Exception as e:
                self._cases[target] = self.fixed(f"fixed shape ({_error(e)})")
        return self._cases[target]

    def _case(self, target):
        if not any(d >= 2 for s in self.shapes for d in s):
            return self.fixed("fixed shape (no dimension to scale)")
        reasons, tried = [], []
        for strategy, scale in STRATEGIES.items():
            try:
                k = self.factor(strategy, target)
                shapes = scale(self.shapes, k)
                whole = max(1, round(k)) if strategy == "shape arguments" else 1
                if (shapes, whole) in tried:  # the same case as a strategy before
                    continue
                tried.append((shapes, whole))
                sample = self._sample(strategy, shapes, k)
                out, _ = torch_output_size(self.op, sample, self.dtype)
                largest = max([out] + [numel(s) for s in shapes])
                if largest > TOO_BIG * max(target, self.template_size()):
                    raise ValueError(f"largest tensor {largest} elements")
                return Case(self.label, self.op, sample, self.dtype, strategy, shapes, largest)
            except Exception as e:  # torch refuses the scaled case: the next strategy
                reasons.append(_error(e))
        return self.fixed(f"fixed shape ({reasons[0]})" if reasons else "fixed shape")


def _error(e):
    text = f"{type(e).__name__}: {e}".splitlines()[0]
    return text if len(text) <= 100 else text[:97] + "..."


# -- timing ---------------------------------------------------------------------------------

class NoGradient(Exception):
    """The case has no differentiable output or input."""


def callable_for(lib, case, mode, built):
    """One call of the case on ``lib``: the forward, or the forward and its backward."""
    op, sample, dtype, kwargs = case.op, case.sample, case.dtype, case.sample.kwargs
    if mode == "forward":
        _, args = built.make(lib, op, sample, dtype, False)
        return lambda: op.fn(lib, *args, **kwargs)
    _, outs, grads = backward_inputs(lib, op, sample, dtype, built)
    leaves, args = built.make(lib, op, sample, dtype, True)
    if not outs or not leaves:
        raise NoGradient
    del outs

    def step():
        outs = float_outputs(outputs(op.fn(lib, *args, **kwargs)), op, lib)
        lib.autograd.backward(outs, grads)
        for leaf in leaves:
            leaf.grad = None
    return step


def calibrate(fn, target=SAMPLE_SECONDS):
    """Calls per timed sample for a sample of at least ``target`` seconds, and the seconds one
    call takes (after an untimed call; two when the first takes over CALL_LIMIT, and a second as
    long is itself the one timed call)."""
    for _ in range(2):  # the first call may set things up (kernels chosen, caches filled) ...
        start = time.perf_counter()
        fn()
        first = time.perf_counter() - start
        if first <= CALL_LIMIT:
            break
    else:  # ... not counted; but a call this long the second time too is timed by it alone
        return 1, first
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= target / 4 or n >= 1 << 20:
            per_call = elapsed / n
            return max(1, math.ceil(target / max(per_call, 1e-9))), per_call
        n *= 4


def time_case(case, mode, threads, repeats):
    """The row of one case: median µs per call of each library, or why it was not timed."""
    row = row_for(case, mode, threads)
    built = Built(case.op, case.sample, case.dtype)
    fns = {}
    for name, lib in LIBS.items():
        try:
            fns[name] = callable_for(lib, case, mode, built)
        except NoGradient:
            return {**row, "note": _join(case.note, "no differentiable output"), "timed": False}
        except Exception as e:
            return {**row, "note": _join(case.note, f"{name}: {_error(e)}"), "timed": False}
    inner, per_call = {}, {}
    for name, fn in fns.items():
        try:
            time.sleep(SETTLE if threads > 1 else 0)
            inner[name], per_call[name] = calibrate(fn)
        except Exception as e:
            return {**row, "note": _join(case.note, f"{name}: {_error(e)}"), "timed": False}
    if max(per_call.values()) > CALL_LIMIT:
        us = {name: t * 1e6 for name, t in per_call.items()}
        row["note"] = _join(case.note, f"timed once: a call takes over {CALL_LIMIT:g} s")
    else:
        us = measure(fns, repeats, inner, per_call=1, settle=SETTLE if threads > 1 else 0.0, warmup=False)
    return {**row, "ember_us": us["ember"], "torch_us": us["torch"], "ratio": us["ember"] / us["torch"],
            "timed": True}


def row_for(case, mode, threads, size=None):
    return {"op": case.label, "mode": MODES[mode], "size": size, "threads": threads,
            "dtype": case.dtype, "shapes": case.shape_text(), "elements": case.elements,
            "scaling": case.scaling, "ember_us": None, "torch_us": None, "ratio": None,
            "note": case.note, "timed": False}


def _join(*notes):
    return "; ".join(n for n in notes if n)


def set_threads(n):
    ember.set_num_threads(n)
    torch.set_num_threads(n)


def run(chosen, sizes, modes, threads, repeats, progress=None):
    """The rows of every (entry, size, threads, mode); sizes in the order tiny, medium, large.
    An entry timed on its sample's own shapes ("fixed shape") has one row per threads and
    mode, of size "fixed"."""
    rows = []
    sizes = [s for s in SIZES if s in sizes]
    for lib in LIBS.values():  # the first backward of a process starts each library's engine
        x = lib.ones(4, requires_grad=True)
        (x * 2).sum().backward()
    for index, (label, op) in enumerate(chosen):
        planner = Planner(label, op)
        op_modes = [m for m in modes if m in modes_of(op)]
        medium_call = {}   # (threads, mode) -> seconds of one medium call, the slower library
        fixed_done = False
        for size in sizes:
            if progress:
                progress(f"[{index + 1}/{len(chosen)}] {label} {size}")
            wanted = {}
            if size == "large":
                wanted = _large_predictions(planner, op_modes, threads, medium_call)
            if wanted and not any(ok for ok, _ in wanted.values()):
                case = Case(label, op, planner.sample, planner.dtype, "not scaled", [], SIZES[size])
            else:
                case = planner.case(SIZES[size])
            if case.scaling == "fixed shape":
                if fixed_done:
                    continue
                fixed_done = True
            row_size = "fixed" if case.scaling == "fixed shape" else size
            for n in threads:
                set_threads(n)
                for mode in op_modes:
                    ok, seconds = wanted.get((n, mode), (True, 0.0))
                    if not ok or case.scaling == "not scaled":
                        rows.append({**row_for(case, mode, n), "size": row_size, "note": (
                            f"not timed: predicted {seconds:.1f} s a call from the medium size")})
                        continue
                    row = time_case(case, mode, n, repeats)
                    row["size"] = row_size
                    rows.append(row)
                    if size == "medium" and row["timed"]:
                        medium_call[n, mode] = max(row["ember_us"], row["torch_us"]) * 1e-6
    return rows


def _call_seconds(case, mode, threads):
    """The slower library's seconds a call of the case, by calibration alone (0 where it fails)."""
    if case.scaling == "fixed shape":
        return 0.0
    set_threads(threads)
    try:
        built = Built(case.op, case.sample, case.dtype)
        return max(calibrate(callable_for(lib, case, mode, built))[1] for lib in LIBS.values())
    except Exception:
        return 0.0


def _large_predictions(planner, modes, threads, medium_call):
    """(n, mode) -> (whether to time the large case, its predicted seconds a call): the medium
    call (timed already, or here) times the elements' ratio to a power, PREDICT_EXPONENT, or
    where that predicts over the limit and the ratio alone does not, the power the time grew by
    from a quarter of the medium size (between 1 and PREDICT_EXPONENT)."""
    medium = planner.case(SIZES["medium"])
    growth = SIZES["large"] / medium.elements
    predictions = {}
    for n in threads:
        for mode in modes:
            if (n, mode) not in medium_call:
                medium_call[n, mode] = _call_seconds(medium, mode, n)
            seconds = medium_call[n, mode]
            exponent = PREDICT_EXPONENT
            if seconds * growth <= PREDICT_LIMIT < seconds * growth ** PREDICT_EXPONENT:
                quarter = planner.case(SIZES["medium"] // 4)
                before = _call_seconds(quarter, mode, n)
                if before > 0 and quarter.elements < medium.elements:
                    grew = math.log(seconds / before) / math.log(medium.elements / quarter.elements)
                    exponent = min(max(grew, 1.0), PREDICT_EXPONENT)
            predicted = seconds * growth ** exponent
            predictions[n, mode] = (predicted <= PREDICT_LIMIT, predicted)
    return predictions


# -- output ---------------------------------------------------------------------------------

COLUMNS = ("ratio", "ember µs", "torch µs", "op", "mode", "size", "thr", "shapes", "note")


def sort_rows(rows):
    timed = sorted((r for r in rows if r["timed"]), key=lambda r: -r["ratio"])
    return timed + [r for r in rows if not r["timed"]]


def _us(v):
    return "-" if v is None else f"{v:.1f}" if v < 1e4 else f"{v:.0f}"


def table(rows):
    """The rows as fixed-width text, one line each, with a header."""
    cells = [[("-" if r["ratio"] is None else f"{r['ratio']:.2f}"), _us(r["ember_us"]), _us(r["torch_us"]),
              r["op"], r["mode"], str(r["size"]), str(r["threads"]),
              r["shapes"] + ("" if r["dtype"] == "float32" else f" {r['dtype']}"),
              _join("leading dim" if r["scaling"] == "leading dim" else "", r["note"])]
             for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(COLUMNS)]
    right = {0, 1, 2}

    def line(values):
        return "  ".join(v.rjust(w) if i in right else v.ljust(w)
                         for i, (v, w) in enumerate(zip(values, widths))).rstrip()
    return [line(COLUMNS), line(["-" * w for w in widths])] + [line(c) for c in cells]


def summary(rows):
    """Per (size, mode, threads): ops timed, geometric mean and median of ember/torch, how many
    over 2, and the worst."""
    groups = {}
    for r in rows:
        if r["timed"]:
            groups.setdefault((r["size"], r["mode"], r["threads"]), []).append(r)
    order = {s: i for i, s in enumerate([*SIZES, "fixed"])}
    lines = ["size    mode              thr  ops  geomean  median  over 2  worst"]
    for key in sorted(groups, key=lambda k: (order[k[0]], k[1], k[2])):
        g = groups[key]
        ratios = [r["ratio"] for r in g]
        worst = max(g, key=lambda r: r["ratio"])
        geo = math.exp(statistics.fmean(math.log(x) for x in ratios))
        lines.append(f"{key[0]:<7} {key[1]:<17} {key[2]:>3} {len(g):>4} {geo:8.2f} "
                     f"{statistics.median(ratios):7.2f} {sum(x > 2 for x in ratios):7d}  "
                     f"{worst['op']} ({worst['ratio']:.1f})")
    return lines


def header(args, seconds):
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return [f"ember/torch per op of the op table (tests/op_db); µs per call, medians of {args.repeats} "
            f"interleaved samples of >= {SAMPLE_SECONDS * 1e3:g} ms each",
            f"sizes {' '.join(args.sizes)}; threads {' '.join(map(str, args.threads))}; "
            f"{datetime.date.today()}; torch {torch.__version__}; NumPy {np.__version__}; "
            f"Python {platform.python_version()}; load average at the end {load:.2f}; "
            f"run took {seconds:.0f} s"]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="entries named NAME (exactly, else every name containing it); repeatable")
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5, help="timed samples per library")
    parser.add_argument("--out", default=str(REPO / "build" / "op-speed.txt"),
                        help="the whole table goes here (default build/op-speed.txt)")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--limit", type=int, help="rows printed (the file has them all)")
    parser.add_argument("--list", action="store_true", help="list the entries and exit")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    chosen = select(entries(), args.only)
    if args.list:
        for label, op in chosen:
            sample = template(op)
            shapes = ", ".join("x".join(map(str, arg_shape(a))) or "()" for a in sample.args if isinstance(a, Arg))
            print(f"{label:<28} {dtype_of(op):<8} {', '.join(MODES[m] for m in modes_of(op)):<26} {shapes}")
        return []
    if not chosen:
        sys.exit(f"no entry matches {args.only}")
    before = ember.get_num_threads(), torch.get_num_threads()
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = run(chosen, args.sizes, args.modes, args.threads, args.repeats,
                       progress=lambda text: print(text, file=sys.stderr, flush=True))
    finally:
        ember.set_num_threads(before[0])
        torch.set_num_threads(before[1])
    rows = sort_rows(rows)
    text = header(args, time.perf_counter() - start) + [""] + summary(rows) + [""] + table(rows)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join(text) + "\n", encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps({"header": text[:2], "rows": rows}, indent=1) + "\n",
                                   encoding="utf-8")
    shown = text if args.limit is None else text[:len(text) - len(rows) + args.limit]
    print("\n".join(shown))
    return rows


if __name__ == "__main__":
    main()
