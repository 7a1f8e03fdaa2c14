"""oneDNN primitive executions in one training step of the benchmark models, by kind: how
many convolutions, batch norms, poolings, eltwise ops and reorders run, and how many MB each
reorder moves (the size of the tensor it converts), with the seconds spent in each kind
(``time.perf_counter`` sums around each execution: informative only). Reorders are named by
the primitive and argument they serve (``reorder in: convolution backward data diff_dst``
converts the user's layout into the one the primitive chose; ``reorder out:`` converts a
result back; ``reorder for a plain array`` converts an activation kept in a primitive's layout
when something first reads it as a plain array; ``reorder for a layout conversion`` converts a
kept activation into another primitive's layout, or a plain operand into a kept one's). The
step counted is the one after ``--warmup`` steps (plans are created in the first), with
tracemalloc's peak growth over a further step.

    .venv/bin/python -m benchmarks.onednn_reorders [--models resnet20 mobilenetv2 dcgan]
        [--threads 1] [--warmup 1] [--batch N] [--json out.json]

The counting wraps ``runtime._Primitive.execute`` and ``runtime.Plan.__call__`` for the
duration of the count only; nothing changes in ember when this tool is not running.
"""
import argparse
import collections
import contextlib
import json
import time
import tracemalloc

import ember
from ember._backend.onednn import capi, runtime

from benchmarks.models import MODELS

ARG_NAMES = {capi.ARG_SRC: "src", capi.ARG_DST: "dst", capi.ARG_WEIGHTS: "weights",
             capi.ARG_BIAS: "bias", capi.ARG_DIFF_SRC: "diff_src",
             capi.ARG_DIFF_DST: "diff_dst", capi.ARG_DIFF_WEIGHTS: "diff_weights"}


class Counts:
    """Executions, reordered bytes and seconds per kind of primitive."""

    def __init__(self):
        self.runs = collections.Counter()
        self.bytes = collections.Counter()
        self.seconds = collections.Counter()

    def add(self, kind, seconds, nbytes=0):
        self.runs[kind] += 1
        self.bytes[kind] += nbytes
        self.seconds[kind] += seconds

    def total(self, reorders):
        kinds = [k for k in self.runs if k.startswith("reorder") == reorders]
        return (sum(self.runs[k] for k in kinds), sum(self.bytes[k] for k in kinds),
                sum(self.seconds[k] for k in kinds))

    def as_dict(self):
        return {k: {"runs": self.runs[k], "mb": self.bytes[k] / 2 ** 20,
                    "ms": self.seconds[k] * 1e3} for k in sorted(self.runs)}


def _reorder_names(plan):
    """{id of a reorder primitive: its name} for ``plan``'s reorders."""
    names = {}
    for arg, is_output, _, _, reorder, _ in plan.args:
        if reorder is not None:
            direction = "out" if is_output else "in"
            names[id(reorder)] = (f"reorder {direction}: {plan.primitive.what} "
                                  f"{ARG_NAMES.get(arg, arg)}")
    return names


def _reorder_bytes(primitive):
    lib = capi.lib()
    return lib.dnnl_memory_desc_get_size(primitive.md(capi.QUERY_SRC_MD))


@contextlib.contextmanager
def counting():
    """Within the block, count every primitive execution into the ``Counts`` yielded."""
    counts = Counts()
    names = {}
    plan_call, execute = runtime.Plan.__call__, runtime._Primitive.execute

    def counted_plan_call(plan, *args, **kwargs):
        names.update(_reorder_names(plan))
        return plan_call(plan, *args, **kwargs)

    def counted_execute(primitive, args):
        start = time.perf_counter()
        execute(primitive, args)
        seconds = time.perf_counter() - start
        if primitive.what.startswith("reorder"):
            kind = names.get(id(primitive), primitive.what)
            counts.add(kind, seconds, _reorder_bytes(primitive))
        else:
            counts.add(primitive.what, seconds)

    runtime.Plan.__call__, runtime._Primitive.execute = counted_plan_call, counted_execute
    try:
        yield counts
    finally:
        runtime.Plan.__call__, runtime._Primitive.execute = plan_call, execute


def tracemalloc_peak_mb(step):
    """Peak growth of traced (Python and NumPy) allocations over one ``step()``, in MB."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step()
        return (tracemalloc.get_traced_memory()[1] - before) / 2 ** 20
    finally:
        tracemalloc.stop()


def count_model(name, warmup, **sizes):
    """``Counts`` of one step of model ``name`` (built with ``sizes``, e.g. ``batch``) after
    ``warmup`` steps, and tracemalloc's peak growth over the step after it."""
    workload = MODELS[name](ember, **sizes)
    for _ in range(warmup):
        workload.step()
    with counting() as counts:
        workload.step()
    return counts, tracemalloc_peak_mb(workload.step)


def print_table(name, counts, peak_mb):
    print(f"\n{name}: oneDNN executions in one training step (peak traced growth "
          f"{peak_mb:.1f} MB)")
    print(f"{'kind':<62} {'runs':>5} {'MB':>8} {'ms':>8}")
    for kind, row in counts.as_dict().items():
        mb = f"{row['mb']:8.2f}" if kind.startswith("reorder") else f"{'':8}"
        print(f"{kind:<62} {row['runs']:>5} {mb} {row['ms']:8.2f}")
    for label, reorders in (("all reorders", True), ("all other primitives", False)):
        runs, nbytes, seconds = counts.total(reorders)
        mb = f"{nbytes / 2 ** 20:8.2f}" if reorders else f"{'':8}"
        print(f"{label:<62} {runs:>5} {mb} {seconds * 1e3:8.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["resnet20", "mobilenetv2", "dcgan"],
                        choices=sorted(MODELS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--batch", type=int, help="batch size (default: the model's)")
    parser.add_argument("--json", help="write the counts to this file as well")
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    report = {}
    for name in args.models:
        sizes = {} if args.batch is None else {"batch": args.batch}
        counts, peak_mb = count_model(name, args.warmup, **sizes)
        print_table(name, counts, peak_mb)
        report[name] = {"kinds": counts.as_dict(), "peak_traced_mb": peak_mb}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
