"""Per-op overhead: 100-op chains on a 16-element float32 tensor.

``numbers`` (the default): mul, add, tanh, cycling, with Python-number operands. ``tensors``:
the same with tensor operands (``y * m``, ``y + a``, ``tanh(y)``) and a final ``sum``. ``views``:
``view``, ``transpose``, ``[i]``, ``unsqueeze``, cycling on a (4, 4) tensor, with a final ``sum``.
``inplace``: ``mul_``, ``+=``, ``-=``, ``*=`` on a tensor that does not require grad (forward only).

Runs ember, torch and plain NumPy (the floor: no framework at all; ``numbers`` chain only)
interleaved in one process, forward only and forward+backward (the chain's input is a leaf that
requires grad), and prints the median microseconds per op over many repeats and ember's ratio to
torch. ``--bytecodes`` counts the Python bytecodes ember executes per op instead: a figure a
loaded machine does not disturb, for comparing two versions of ember's Python overhead.

    python benchmarks/overhead.py [--repeats N] [--chains numbers tensors views] [--bytecodes]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import ember

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # the benchmark still reports ember against NumPy
    torch = None

N_OPS = 100
SIZE = 16


def chain(x, tanh):
    """The 100-op chain, written once for any tensor library."""
    for i in range(N_OPS):
        step = i % 3
        if step == 0:
            x = x * 0.9
        elif step == 1:
            x = x + 0.1
        else:
            x = tanh(x)
    return x


def start_values():
    return np.random.default_rng(0).random(SIZE, dtype=np.float32)


def framework_forward(lib):
    x = lib.tensor(start_values())
    tanh = lib.tanh

    def run():
        chain(x, tanh)
    return run


def tensor_chain(x, m, a, tanh):
    """The chain with tensor operands, ending in a sum."""
    for i in range(N_OPS):
        step = i % 3
        if step == 0:
            x = x * m
        elif step == 1:
            x = x + a
        else:
            x = tanh(x)
    return x.sum()


def view_chain(x):
    """``view``, ``transpose``, ``[i]`` (of a stacked pair) and ``unsqueeze`` on a (4, 4) tensor,
    cycling: every fourth op indexes back down to (4, 4). Ends in a sum."""
    for i in range(N_OPS):
        step = i % 4
        if step == 0:
            x = x.view(2, 8)
        elif step == 1:
            x = x.transpose(0, 1)
        elif step == 2:
            x = x.unsqueeze(0)
        else:
            x = x[0].reshape(4, 4)
    return x.sum()


def inplace_chain(x, m, a):
    """``x.mul_(m)``, ``x += a``, ``x -= 0.05``, ``x *= 1.01``, cycling, in place (an update
    written by hand, as an optimizer's step or a running statistic is)."""
    for i in range(N_OPS):
        step = i % 4
        if step == 0:
            x.mul_(m)
        elif step == 1:
            x += a
        elif step == 2:
            x -= 0.05
        else:
            x *= 1.01
    return x


def framework_inplace_chain(lib):
    rng = np.random.default_rng(2)
    x = lib.tensor(start_values())
    m = lib.tensor(rng.uniform(0.8, 1.0, SIZE).astype(np.float32))
    a = lib.tensor(rng.uniform(0.0, 0.1, SIZE).astype(np.float32))
    return lambda: inplace_chain(x, m, a)


def framework_tensor_chain(lib, backward):
    rng = np.random.default_rng(1)
    x = lib.tensor(start_values(), requires_grad=backward)
    m = lib.tensor(rng.uniform(0.8, 1.0, SIZE).astype(np.float32), requires_grad=backward)
    a = lib.tensor(rng.uniform(0.0, 0.1, SIZE).astype(np.float32), requires_grad=backward)
    tanh = lib.tanh
    if not backward:
        return lambda: tensor_chain(x, m, a, tanh)

    def run():
        tensor_chain(x, m, a, tanh).backward()
        x.grad = m.grad = a.grad = None
    return run


def framework_view_chain(lib, backward):
    x = lib.tensor(start_values().reshape(4, 4), requires_grad=backward)
    if not backward:
        return lambda: view_chain(x)

    def run():
        view_chain(x).backward()
        x.grad = None
    return run


def framework_backward(lib):
    x = lib.tensor(start_values(), requires_grad=True)
    seed = lib.ones(SIZE, dtype=lib.float32)
    tanh = lib.tanh

    def run():
        chain(x, tanh).backward(seed)
        x.grad = None
    return run


def numpy_forward():
    x = start_values()
    return lambda: chain(x, np.tanh)


def numpy_backward():
    """The same chain with a hand-written backward: the least any library could do."""
    x = start_values()
    seed = np.ones(SIZE, dtype=np.float32)

    def run():
        saved = []
        y = x
        for i in range(N_OPS):
            step = i % 3
            if step == 0:
                y = y * 0.9
            elif step == 1:
                y = y + 0.1
            else:
                y = np.tanh(y)
                saved.append(y)
        g = seed
        for i in reversed(range(N_OPS)):
            step = i % 3
            if step == 0:
                g = g * 0.9
            elif step == 2:
                y = saved.pop()
                g = g * (1 - y * y)
        return g
    return run


def time_once(fn, inner, per_call=N_OPS):
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / (inner * per_call) * 1e6


def measure(cases, repeats, inner, per_call=N_OPS, settle=0.0, warmup=True):
    """Median µs/op of each case (``per_call`` ops a call); the cases take turns within every
    repeat, after one untimed sample of each (``warmup``). ``inner`` is the calls per timed
    sample: one count for all cases, or a dict with one per case. ``settle`` seconds of pause
    come before each timed sample, so that worker threads left spinning by the case before are
    idle again."""
    counts = inner if isinstance(inner, dict) else dict.fromkeys(cases, inner)
    for name, fn in cases.items() if warmup else ():
        time_once(fn, counts[name], per_call)
    samples = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            time.sleep(settle)
            samples[name].append(time_once(fn, counts[name], per_call))
    return {name: statistics.median(s) for name, s in samples.items()}


CHAINS = {"numbers": "mul, add, tanh with Python numbers",
          "tensors": "mul, add, tanh with tensor operands, then sum",
          "views": "view, transpose, unsqueeze, [i], then sum",
          "inplace": "mul_, +=, -=, *= in place; forward only"}


def cases_for(chain):
    libs = [("ember", ember)] + ([("torch", torch)] if torch is not None else [])
    if chain == "numbers":
        cases = {("forward", "numpy"): numpy_forward()}
        cases.update({("forward", name): framework_forward(lib) for name, lib in libs})
        cases[("forward+backward", "numpy")] = numpy_backward()
        cases.update({("forward+backward", name): framework_backward(lib) for name, lib in libs})
        return cases
    if chain == "inplace":
        return {("forward", name): framework_inplace_chain(lib) for name, lib in libs}
    make = framework_tensor_chain if chain == "tensors" else framework_view_chain
    cases = {("forward", name): make(lib, False) for name, lib in libs}
    cases.update({("forward+backward", name): make(lib, True) for name, lib in libs})
    return cases


def bytecodes_per_op(fn):
    """Python bytecodes ``fn`` (a chain) executes per op, counted with ``sys.settrace``'s
    opcode events: the same on a loaded machine as on a quiet one, so it compares two versions
    of ember's Python overhead where timings cannot (the time in C, NumPy's kernels
    included, is not counted)."""
    fn()
    count = [0]

    def trace(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            count[0] += 1
        return trace
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count[0] / N_OPS


def print_bytecodes(chains):
    print(f"ember: Python bytecodes per op ({N_OPS}-op chains on {SIZE} float32 elements)")
    print(f"{'chain':<10}{'forward':>10}{'forward+backward':>18}")
    for chain in chains:
        cases = cases_for(chain)
        counts = [bytecodes_per_op(cases[(mode, "ember")]) if (mode, "ember") in cases else float("nan")
                  for mode in ("forward", "forward+backward")]
        print(f"{chain:<10}{counts[0]:10.0f}{counts[1]:18.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--inner", type=int, default=5, help="chains per timed sample")
    parser.add_argument("--chains", nargs="+", choices=list(CHAINS), default=["numbers"])
    parser.add_argument("--bytecodes", action="store_true",
                        help="count ember's Python bytecodes per op instead of timing")
    args = parser.parse_args()

    if args.bytecodes:
        print_bytecodes(args.chains)
        return
    for chain in args.chains:
        medians = measure(cases_for(chain), args.repeats, args.inner)
        print(f"{chain}: {N_OPS}-op chain ({CHAINS[chain]}) on {SIZE} float32 elements; median "
              f"of {args.repeats} interleaved repeats x {args.inner} chains; µs per op")
        print(f"{'pass':<18}{'numpy':>8}{'ember':>8}{'torch':>8}{'ember/torch':>13}")
        for mode in ("forward", "forward+backward"):
            row = [medians.get((mode, lib), float("nan")) for lib in ("numpy", "ember", "torch")]
            ratio = row[1] / row[2] if torch is not None else float("nan")
            print(f"{mode:<18}{row[0]:8.2f}{row[1]:8.2f}{row[2]:8.2f}{ratio:13.2f}")


if __name__ == "__main__":
    main()
