"""Side-by-side training benchmark, ember vs torch, in one process.

Each model in ``benchmarks/models.py`` is built on both libraries from the same seed; torch's
weights are copied into ember; then training iterations (forward, backward, optimizer step)
are timed in alternating turns (a short pause, one untimed step, then a few timed steps of one
library, then the other's turn; see ``time_interleaved``), warm-up steps excluded, and
the table gives the median milliseconds per step, achieved GFLOP/s (GEMM-like forward FLOPs
counted on the torch model, training taken as 3x forward), the fraction of this machine's
float32 GEMM peak (a 1024x1024 NumPy matmul measured at start) and peak memory growth.

    python -m benchmarks.run [--models mlp lenet ...] [--threads N] [--steps N] [--json out.json]

``overhead`` and ``dataloader`` in ``--models`` run ``benchmarks/overhead.py`` and
``benchmarks/dataloader.py`` (short settings) and include their output. ``--profile`` prints
the top cProfile entries of a few ember steps of each model instead of timing.
"""
import argparse
import os
import sys

MODEL_NAMES = ("mlp", "lenet", "resnet20", "mobilenetv2", "lstm_lm", "transformer_lm", "dcgan")
CHANNELS_LAST = ("resnet20_channels_last", "mobilenetv2_channels_last")  # on request
SCRIPTS = {"overhead": ["benchmarks/overhead.py", "--repeats", "100"],
           "dataloader": ["benchmarks/dataloader.py", "--epochs", "3", "--batches", "20"]}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLAS_ENV = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=[*MODEL_NAMES, *SCRIPTS],
                        choices=[*MODEL_NAMES, *CHANNELS_LAST, *SCRIPTS])
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads and NumPy's BLAS threads")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per library (>= 10)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per library")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile a few ember steps of each model instead of timing")
    parser.add_argument("--rss-probe", nargs=2, metavar=("MODEL", "LIB"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def limit_blas_threads(threads):
    """Hold NumPy's BLAS to ``threads``: through threadpoolctl when it is installed, else by
    setting the BLAS environment variables and re-executing before NumPy is imported."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        wanted = str(threads)
        if any(os.environ.get(k) != wanted for k in BLAS_ENV):
            os.environ.update({k: wanted for k in BLAS_ENV})
            os.execv(sys.executable, [sys.executable, "-m", "benchmarks.run", *sys.argv[1:]])
        return "environment"
    import numpy  # noqa: F401  threadpoolctl limits only the libraries already loaded
    threadpool_limits(threads, user_api="blas")
    return "threadpoolctl"


args = parse_args() if __name__ == "__main__" else None
if args is not None:
    BLAS_CONTROL = limit_blas_threads(args.threads)
    sys.path.insert(0, os.path.join(REPO, "src"))

import cProfile  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.models import MODELS, copy_weights  # noqa: E402


def import_library(name, threads):
    if name == "torch":
        import torch
        torch.set_num_threads(threads)
        return torch
    import ember
    ember.set_num_threads(threads)
    return ember


def gemm_peak_gflops(size=1024, repeats=10):
    """float32 GEMM rate of this machine through NumPy: the best of ``repeats`` matmuls."""
    a = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
    b = a.T.copy()
    a @ b
    best = min(_elapsed(lambda: a @ b) for _ in range(repeats))
    return 2 * size ** 3 / best / 1e9


def _elapsed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _linear_flops(module, inputs, output):
    return 2 * inputs[0].numel() * module.out_features


def _conv_flops(module, inputs, output):
    per_output = module.in_channels // module.groups * np.prod(module.kernel_size)
    return 2 * output.numel() * per_output


def _conv_transpose_flops(module, inputs, output):
    per_input = module.out_channels // module.groups * np.prod(module.kernel_size)
    return 2 * inputs[0].numel() * per_input


def _lstm_flops(module, inputs, output):
    steps_by_batch = inputs[0].numel() // module.input_size
    width = module.hidden_size
    total = 0
    for layer in range(module.num_layers):
        fan_in = module.input_size if layer == 0 else width
        total += 2 * steps_by_batch * 4 * width * (fan_in + width)
    return total


def _attention_flops(module, inputs, output):
    query = inputs[0]
    length = query.shape[1] if module.batch_first else query.shape[0]
    tokens = query.numel() // module.embed_dim
    projections = 2 * tokens * module.embed_dim * 4 * module.embed_dim  # q, k, v and out
    scores_and_values = 2 * 2 * tokens * length * module.embed_dim
    return projections + scores_and_values


def forward_flops(workload):
    """Multiply-add FLOPs (x2) of the matmul-like layers run in one iteration of a torch
    workload, counted with forward hooks; elementwise work is not counted."""
    import torch
    nn = torch.nn
    counters = ((nn.Linear, _linear_flops), (nn.Conv2d, _conv_flops),
                (nn.ConvTranspose2d, _conv_transpose_flops), (nn.LSTM, _lstm_flops),
                (nn.MultiheadAttention, _attention_flops))
    total = [0]
    handles = []
    for module in workload.modules.values():
        for sub in module.modules():
            for kind, count in counters:
                if type(sub) is kind:
                    handles.append(sub.register_forward_hook(
                        lambda m, i, o, count=count: total.__setitem__(0, total[0] + count(m, i, o))))
    workload.step()
    for handle in handles:
        handle.remove()
    return int(total[0])


def time_interleaved(ember_workload, torch_workload, warmup, steps, turn_steps=3, settle=0.02):
    """Median seconds per step of each library, the two taking turns.

    A turn sleeps ``settle`` seconds, runs one untimed step, then times ``turn_steps`` steps;
    the libraries alternate turns (and which of them goes first) until each has ``steps``
    timed steps. The pause and the untimed step keep one library's worker threads out of the
    other's timings: torch's OpenMP workers and OpenBLAS's spin for milliseconds after their
    last parallel region, and a GEMM started inside that window takes several times as long
    (BENCHMARKS.md, "How the steps are timed"). Within a turn a library runs as it would in a
    training loop of its own."""
    workloads = {"ember": ember_workload, "torch": torch_workload}
    for _ in range(warmup):
        for workload in workloads.values():
            workload.step()
    times = {"ember": [], "torch": []}
    order = ["ember", "torch"]
    while min(len(t) for t in times.values()) < steps:
        for lib in order:
            time.sleep(settle)
            workloads[lib].step()
            times[lib].extend(_elapsed(workloads[lib].step) for _ in range(turn_steps))
        order.reverse()
    return {lib: statistics.median(t) for lib, t in times.items()}


def tracemalloc_peak_mb(workload):
    """Peak growth of traced (Python and NumPy) allocations over one step, in MB."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        workload.step()
        return (tracemalloc.get_traced_memory()[1] - before) / 2 ** 20
    finally:
        tracemalloc.stop()


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_peak_rss():
    """Reset the peak RSS (Linux ``clear_refs``); returns the current RSS in kB, or the
    process's peak so far where the peak cannot be reset."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_kb("VmRSS")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_rss_kb():
    try:
        return _status_kb("VmHWM")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def rss_probe(model, lib_name, threads):
    """Run in a fresh process: growth of the peak RSS over three steps after building the
    model (optimizer state and the framework's allocator caches included), in MB."""
    lib = import_library(lib_name, threads)
    workload = MODELS[model](lib)
    before = reset_peak_rss()
    for _ in range(3):
        workload.step()
    print((peak_rss_kb() - before) / 1024)


def rss_growth_mb(model, lib_name, threads):
    command = [sys.executable, "-m", "benchmarks.run", "--threads", str(threads),
               "--rss-probe", model, lib_name]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=True)
    return float(result.stdout.split()[-1])


def benchmark_model(name, libs, threads, peak, warmup, steps):
    torch, ember = libs["torch"], libs["ember"]
    torch_workload, ember_workload = MODELS[name](torch), MODELS[name](ember)
    copy_weights(torch_workload, ember_workload)
    train_flops = 3 * forward_flops(MODELS[name](torch))
    seconds = time_interleaved(ember_workload, torch_workload, warmup, steps)
    row = {"model": name, "params": torch_workload.parameter_count(),
           "train_gflop": train_flops / 1e9,
           "ember_ms": seconds["ember"] * 1e3, "torch_ms": seconds["torch"] * 1e3,
           "ratio": seconds["ember"] / seconds["torch"]}
    for lib in ("ember", "torch"):
        row[f"{lib}_gflops"] = train_flops / seconds[lib] / 1e9
        row[f"{lib}_peak_fraction"] = row[f"{lib}_gflops"] / peak
    row["ember_tracemalloc_mb"] = tracemalloc_peak_mb(ember_workload)
    row["ember_rss_mb"] = rss_growth_mb(name, "ember", threads)
    row["torch_rss_mb"] = rss_growth_mb(name, "torch", threads)
    return row


TABLE_HEADER = ("| model | ember ms/step | torch ms/step | ember/torch | train GFLOP/step "
                "| ember GFLOP/s | torch GFLOP/s | ember % peak | torch % peak "
                "| ember step peak MB (tracemalloc) | ember RSS growth MB | torch RSS growth MB |")


def table_row(r):
    return (f"| {r['model']} | {r['ember_ms']:.1f} | {r['torch_ms']:.1f} | {r['ratio']:.2f} "
            f"| {r['train_gflop']:.3f} | {r['ember_gflops']:.2f} | {r['torch_gflops']:.2f} "
            f"| {100 * r['ember_peak_fraction']:.1f} | {100 * r['torch_peak_fraction']:.1f} "
            f"| {r['ember_tracemalloc_mb']:.1f} | {r['ember_rss_mb']:.1f} "
            f"| {r['torch_rss_mb']:.1f} |")


def run_script(name):
    result = subprocess.run([sys.executable, *SCRIPTS[name]], capture_output=True, text=True,
                            cwd=REPO, check=True)
    return result.stdout


def profile_ember(name, steps=3, top=15):
    import ember
    workload = MODELS[name](ember)
    workload.step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        workload.step()
    profiler.disable()
    print(f"== {name}: {steps} ember steps, by internal time")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def machine_description(threads, peak):
    import torch
    return {"python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__, "cpus": os.cpu_count(), "threads": threads,
            "blas_threads_via": BLAS_CONTROL, "gemm_peak_gflops": peak,
            "load_average": os.getloadavg()}


def _cpu_seconds():
    """(seconds of CPU time the machine spent busy, seconds the hypervisor took from this
    guest (steal), this process's and its children's CPU seconds), from /proc/stat and
    getrusage; None on systems without /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    own = sum(getattr(resource.getrusage(who), kind) for who in
              (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for kind in ("ru_utime", "ru_stime"))
    return (user + nice + system + irq + softirq) / tick, steal / tick, own


def other_load(start, end, wall):
    """What else ran during the benchmark: other processes' CPU (busy time not this process's
    or its children's) and the hypervisor's steal, each as a share of the machine's cores over
    ``wall`` seconds. On a 2-core VM, other runnable work (even at nice 19) makes 2-thread
    OpenMP steps several times slower for both libraries (BENCHMARKS.md, "How the steps are
    timed"): a run with either share above a few percent is not a quiet one."""
    if start is None or end is None:
        return "other processes' CPU time: not measurable here"
    capacity = wall * (os.cpu_count() or 1)
    others = max(0.0, (end[0] - start[0]) - (end[2] - start[2]))
    return (f"other processes used {100 * others / capacity:.1f}% of the cores' time during the "
            f"run, the hypervisor took {100 * (end[1] - start[1]) / capacity:.1f}% (steal)")


def main(args):
    if args.rss_probe:
        rss_probe(*args.rss_probe, args.threads)
        return
    models = [m for m in args.models if m in MODEL_NAMES or m in CHANNELS_LAST]
    if args.profile:
        for name in models:
            profile_ember(name)
        return
    libs = {lib: import_library(lib, args.threads) for lib in ("ember", "torch")}
    cpu_start, wall_start = _cpu_seconds(), time.perf_counter()
    peak = gemm_peak_gflops()
    info = machine_description(args.threads, peak)
    print(f"float32 GEMM peak (1024x1024 NumPy matmul): {peak:.1f} GFLOP/s; {info}")
    rows = []
    print(TABLE_HEADER)
    print("|" + "---|" * TABLE_HEADER.count(" | ") + "---|")
    for name in models:
        rows.append(benchmark_model(name, libs, args.threads, peak, args.warmup, args.steps))
        print(table_row(rows[-1]), flush=True)
    scripts = {name: run_script(name) for name in args.models if name in SCRIPTS}
    for name, output in scripts.items():
        print(f"\n== {name}\n{output}")
    info["load_average_end"] = os.getloadavg()
    info["other_load"] = other_load(cpu_start, _cpu_seconds(), time.perf_counter() - wall_start)
    print(f"load average at start {info['load_average']}, at end {info['load_average_end']}; "
          f"{info['other_load']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "rows": rows, "scripts": scripts}, f, indent=2)


if __name__ == "__main__":
    main(args)
