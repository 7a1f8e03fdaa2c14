"""Whole training programs (benchmarks/programs/), ember against torch, at 1 thread.

Each program runs as its own process under each library (``--lib ember`` and ``--lib torch``,
so that imports and thread settings are clean), the two taking turns (ember, torch, ember,
torch, ...) ``--repeats`` times, with OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS
at 1 and ``set_num_threads(1)`` in the program. The table gives the median wall time of the
whole process (start-up, imports, data, training, evaluation), the median of the time the
program reports for its training loop and evaluation alone, their ember/torch ratios, and
each library's final loss.

    python -m benchmarks.programs [--only NAME ...] [--repeats 2] [--steps N] [--json FILE]
"""
import argparse
import compileall
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.programs import PROGRAMS

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LIBS = ("ember", "torch")
FINAL = re.compile(r"final loss (\S+); (\d+) steps in ([\d.]+) s")
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def run_program(name, lib, steps=None, timeout=None):
    """One run of a program in a fresh process: its wall time, the training time it reports,
    its final loss, or the error that ended it."""
    command = [sys.executable, str(HERE / f"{name}.py"), "--lib", lib, "--threads", "1"]
    if steps is not None:
        command += ["--steps", str(steps)]
    env = {**os.environ, **ONE_THREAD}
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout)
    wall = time.perf_counter() - start
    found = FINAL.search(proc.stdout)
    if proc.returncode != 0 or found is None:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return {"wall_s": wall, "error": lines[-1] if lines else f"exit status {proc.returncode}"}
    return {"wall_s": wall, "train_s": float(found.group(3)), "loss": float(found.group(1)),
            "steps": int(found.group(2)), "error": None}


def measure(name, repeats, steps=None, progress=None):
    """The row of one program: medians over ``repeats`` turns of each library."""
    runs = {lib: [] for lib in LIBS}
    for repeat in range(repeats):
        for lib in LIBS:
            if progress:
                progress(f"{name} {lib} {repeat + 1}/{repeats}")
            runs[lib].append(run_program(name, lib, steps))
    row = {"program": name}
    for lib in LIBS:
        good = [r for r in runs[lib] if r["error"] is None]
        errors = [r["error"] for r in runs[lib] if r["error"] is not None]
        row[f"{lib}_error"] = errors[0] if errors else None
        row[f"{lib}_wall_s"] = statistics.median(r["wall_s"] for r in good) if good else None
        row[f"{lib}_train_s"] = statistics.median(r["train_s"] for r in good) if good else None
        row[f"{lib}_loss"] = good[-1]["loss"] if good else None
        row["steps"] = good[-1]["steps"] if good else row.get("steps")
    for what in ("wall", "train"):
        e, t = row[f"ember_{what}_s"], row[f"torch_{what}_s"]
        row[f"{what}_ratio"] = e / t if e is not None and t else None
    return row


def _f(value, spec):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def table(rows):
    lines = ["| program | steps | ember s | torch s | ember/torch | ember train s | torch train s "
             "| train ember/torch | ember loss | torch loss |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['program']} | {_f(r['steps'], 'd')} | {_f(r['ember_wall_s'], '.2f')} "
                     f"| {_f(r['torch_wall_s'], '.2f')} | {_f(r['wall_ratio'], '.2f')} "
                     f"| {_f(r['ember_train_s'], '.2f')} | {_f(r['torch_train_s'], '.2f')} "
                     f"| {_f(r['train_ratio'], '.2f')} | {_f(r['ember_loss'], '.4f')} "
                     f"| {_f(r['torch_loss'], '.4f')} |")
    for r in rows:
        for lib in LIBS:
            if r[f"{lib}_error"]:
                lines.append(f"{r['program']} under {lib} failed: {r[f'{lib}_error']}")
    return lines


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=PROGRAMS, help="these programs (default all)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each program per library")
    parser.add_argument("--steps", type=int, help="training steps (default: each program's own)")
    parser.add_argument("--json", help="also write the rows to this file")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    # ember's byte-code written first (as make does): where PYTHONDONTWRITEBYTECODE is set, every
    # program would otherwise compile ember's modules at its start
    compileall.compile_dir(str(REPO / "src"), quiet=1, workers=0)
    rows = []
    for name in args.only or PROGRAMS:
        rows.append(measure(name, args.repeats, args.steps,
                            progress=lambda text: print(text, file=sys.stderr, flush=True)))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Whole programs at 1 thread, medians of {args.repeats} runs per library; "
          f"load average at the end {load:.2f}")
    print("\n".join(table(rows)))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return rows


if __name__ == "__main__":
    main()
