"""The float32 vector-math loops (``_backend/vector_math.py``) against NumPy's path for the same
op, array by array: each op of ``vector_math.UNARY``, ``WITH_PARAMETERS`` (their defaults),
``BINARY`` and ``DIVISIONS`` (a second operand of the same shape), and each gradient of ``GRADIENTS``, at
several sizes and thread counts, the two taking turns, medians in µs and the loop's time over
NumPy's. The figures behind each op's size rule (``vector_math.MIN_ELEMENTS``); with
``--conversions``, float32 to float16 and back (``vector_math.CONVERSION_MIN_ELEMENTS``).

    .venv/bin/python -m benchmarks.vector_math [--sizes 16384 65536 ...] [--threads 1 2]
    .venv/bin/python -m benchmarks.vector_math --conversions
"""
import argparse
import statistics
import time

import numpy as np

import ember
from ember._backend import choice, vector_math

SIZES = (1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22)


def _inputs(op, n):
    x = np.random.default_rng(0).uniform(-4, 4, n).astype(np.float32)
    if op == "float_of_half":
        return x.astype(np.float16)
    if op == "erfinv":   # (its domain, where NumPy's path computes every element)
        return x / np.float32(4)
    if op == "logit":
        return (x + np.float32(4)) / np.float32(8)
    return np.abs(x) if op in ("sqrt", "rsqrt", "log1p") else x


def _op(op, n):
    """The ember op that runs loop ``op``, on an array (a binary op's other operand an array of
    the same shape)."""
    if op == "half":
        return lambda x: ember.tensor(x).half()
    if op == "float_of_half":   # (given float16 inputs)
        return lambda x: ember.tensor(x).float()
    if op in vector_math.BINARY or op in vector_math.DIVISIONS:
        other = ember.tensor(_inputs(op, n)[::-1].copy())
        return lambda x: getattr(ember, op)(ember.tensor(x), other)
    forward = {"square": lambda t: t.pow(2), "round_decimals": lambda t: t.round(decimals=2),
               "round_tens": lambda t: t.round(decimals=-1)}.get(op) or _ember_op(op)
    return lambda x: forward(ember.tensor(x))


def _ember_op(name):
    """``ember.name``, or ``ember.nn.functional.name`` for the activations only there
    (``logsigmoid``, ``softplus``, ``elu``), or ``ember.special.name`` (``entr``)."""
    return (getattr(ember, name, None) or getattr(ember.nn.functional, name, None)
            or getattr(ember.special, name))


def _on(library, fn, *args):
    """``fn(*args)`` with every kernel choice on ``library``, the loops at any size."""
    saved = dict(vector_math.MIN_ELEMENTS), vector_math.CONVERSION_MIN_ELEMENTS
    vector_math.MIN_ELEMENTS.update(dict.fromkeys(saved[0], 1))
    vector_math.CONVERSION_MIN_ELEMENTS = 1
    try:
        with choice.only(library):
            return fn(*args)
    finally:
        vector_math.MIN_ELEMENTS.update(saved[0])
        vector_math.CONVERSION_MIN_ELEMENTS = saved[1]


def _time(fn, budget=0.02):
    fn()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        spent = time.perf_counter() - start
        if spent >= budget:
            return spent / calls
        calls *= 2


def compare(op, n, rounds):
    """The op forward, or with ``backward`` its gradient's array formula (the node's
    ``backward_arrays``), on the loop and on NumPy, taking turns."""
    name, _, backward = op.partition(" ")
    x = _inputs(name, n)
    run = _op(name, n)
    if backward:
        g = ember.tensor(np.random.default_rng(1).random(n, dtype=np.float32))
        x = ember.tensor(x, requires_grad=True)
        node = _ember_op(name)(x).grad_fn
        node_run = node.backward_arrays

        def run(_):
            return node_run(g)
    times = {"loop": [], "numpy": []}
    for _ in range(rounds):
        for library, key in ((choice.ONEDNN, "loop"), (choice.NUMPY, "numpy")):
            times[key].append(_on(library, _time, lambda: run(x)))
    return {k: statistics.median(v) * 1e6 for k, v in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", nargs="+", default=[
        *vector_math.UNARY, *vector_math.WITH_PARAMETERS, *vector_math.BINARY, *vector_math.DIVISIONS, *(
        f"{op} backward" for op in vector_math.GRADIENTS)])
    parser.add_argument("--conversions", action="store_true",
                        help="time float32 -> float16 (half) and back (float_of_half) instead")
    parser.add_argument("--sizes", nargs="+", type=int, default=SIZES)
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not vector_math.available():
        raise SystemExit("the vector-math loops cannot be built here (no C compiler or libmvec)")
    if args.conversions:
        args.ops = ["half", "float_of_half"]
    print("| op | threads | " + " | ".join(f"{n} elements: loop / NumPy µs" for n in args.sizes) + " |")
    print("|---|---:|" + "---:|" * len(args.sizes))
    for op in args.ops:
        for threads in args.threads:
            ember.set_num_threads(threads)
            choice.enabled(choice.ONEDNN)   # (applies the thread count to OpenMP)
            cells = []
            for n in args.sizes:
                t = compare(op, n, args.rounds)
                cells.append(f"{t['loop']:.1f} / {t['numpy']:.1f} ({t['loop'] / t['numpy']:.2f})")
            print(f"| {op} | {threads} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
