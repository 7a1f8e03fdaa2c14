"""Recurrent layer time, ember vs torch, in one process: the LSTM of the word-level language
model benchmark (nn.LSTM(200, 200, num_layers=2), sequence 35, batch 20), a GRU and an Elman
RNN of the same size, and the LSTM forward alone under no_grad. Cases run interleaved (every repeat times each
case on each library in turn); the table gives medians in milliseconds per call. Both
libraries use one BLAS thread (torch.set_num_threads(1), OPENBLAS_NUM_THREADS=1 unless set):
on a shared 2-core machine OpenBLAS's spinning threads otherwise make a 20x200x800 matmul 20x
slower.

    .venv/bin/python benchmarks/rnn.py --repeats 30
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import ember
import torch

SEQ, BATCH, SIZE = 35, 20, 200


def cases(lib):
    """name -> (layer, whether to run backward) for ``lib`` (ember or torch)."""
    nn = lib.nn
    return {
        "LSTM 200x200x2, fwd+bwd": (nn.LSTM(SIZE, SIZE, num_layers=2), True),
        "GRU 200x200x2, fwd+bwd": (nn.GRU(SIZE, SIZE, num_layers=2), True),
        "RNN (tanh) 200x200x2, fwd+bwd": (nn.RNN(SIZE, SIZE, num_layers=2), True),
        "LSTM 200x200x2, fwd no_grad": (nn.LSTM(SIZE, SIZE, num_layers=2), False),
    }


def time_call(lib, layer, x, grad, backward):
    start = time.perf_counter()
    if backward:
        out, _ = layer(x)
        out.backward(grad)
    else:
        with lib.no_grad():
            layer(x)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    libs = {"ember": ember, "torch": torch}
    built = {name: cases(lib) for name, lib in libs.items()}
    x = rng.standard_normal((SEQ, BATCH, SIZE)).astype(np.float32)
    g = rng.standard_normal((SEQ, BATCH, SIZE)).astype(np.float32)
    inputs = {name: (lib.tensor(x, requires_grad=True), lib.tensor(g))
              for name, lib in libs.items()}
    times = {(name, case): [] for name in libs for case in built["torch"]}
    for _ in range(args.repeats):
        for case in built["torch"]:
            for name, lib in libs.items():
                layer, backward = built[name][case]
                layer.zero_grad()
                times[name, case].append(time_call(lib, layer, *inputs[name], backward))
    print("| case                           | ember ms | torch ms | ember/torch |")
    print("|--------------------------------|---------:|---------:|------------:|")
    for case in built["torch"]:
        e = statistics.median(times["ember", case]) * 1e3
        t = statistics.median(times["torch", case]) * 1e3
        print(f"| {case:<30} | {e:8.2f} | {t:8.2f} | {e / t:11.2f} |")


if __name__ == "__main__":
    main()
