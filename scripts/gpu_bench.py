"""ResNet-20 training on ember-cuda against torch (on the GPU when torch has CUDA, else on the
CPU, said so): the same starting weights and batch, the first losses compared (nn and optim
on cuda against torch), then milliseconds per training step and peak GPU memory.
Run by scripts/gpu_check.sh; ``--dry-run`` uses tiny sizes (with the fake CuPy)."""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchmarks import models


def build(lib, device, batch, side=32, seed=0):
    workload = models.resnet20(lib, batch=batch, seed=seed)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 3, side, side), dtype=np.float32)
    y = rng.integers(0, 10, size=(batch,), dtype=np.int64)
    return workload, lib.from_numpy(x).to(device), lib.from_numpy(y).to(device)


def train(lib, model, x, y, steps, sync):
    model.train()
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = lib.nn.CrossEntropyLoss()
    losses, times = [], []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        sync()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    return losses, times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    import ember
    import torch
    steps, batch = (min(args.steps, 3), 2) if args.dry_run else (args.steps, args.batch)
    side = 8 if args.dry_run else 32  # ResNet-20 pools globally: any side works
    if args.dry_run:
        torch.set_num_threads(1)
    torch_device = "cuda" if torch.cuda.is_available() else "cpu"
    if torch_device == "cpu":
        print("NOTE: torch has no CUDA here; torch runs on the CPU")

    ember_load, ex, ey = build(ember, "cpu", batch, side)
    torch_load, tx, ty = build(torch, "cpu", batch, side)
    models.copy_weights(torch_load, ember_load)
    emodel = ember_load.modules["model"].to("cuda")
    tmodel = torch_load.modules["model"].to(torch_device)
    ex, ey, tx, ty = ex.to("cuda"), ey.to("cuda"), tx.to(torch_device), ty.to(torch_device)

    ember.cuda.reset_peak_memory_stats()
    elosses, etimes = train(ember, emodel, ex, ey, steps, ember.cuda.synchronize)
    epeak = ember.cuda.max_memory_allocated()
    tsync = torch.cuda.synchronize if torch_device == "cuda" else (lambda: None)
    if torch_device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    tlosses, ttimes = train(torch, tmodel, tx, ty, steps, tsync)
    tpeak = torch.cuda.max_memory_allocated() if torch_device == "cuda" else 0

    agree = abs(elosses[0] - tlosses[0]) <= 1e-3 * max(1.0, abs(tlosses[0]))
    print(f"first loss: ember-cuda {elosses[0]:.6f}  torch-{torch_device} {tlosses[0]:.6f}  "
          f"{'AGREE' if agree else 'DIFFER'}")
    warm = slice(min(2, steps - 1), None)
    ems, tms = 1e3 * np.median(etimes[warm]), 1e3 * np.median(ttimes[warm])
    print(f"\nResNet-20, batch {batch}, 3x{side}x{side}, SGD momentum; median of steps after warm-up")
    print(f"{'library':<14}{'ms/step':>10}{'first step ms':>15}{'peak MiB':>10}")
    print(f"{'ember-cuda':<14}{ems:>10.1f}{1e3 * etimes[0]:>15.1f}{epeak / 2 ** 20:>10.1f}")
    print(f"{'torch-' + torch_device:<14}{tms:>10.1f}{1e3 * ttimes[0]:>15.1f}{tpeak / 2 ** 20:>10.1f}")
    print(f"ember/torch time ratio: {ems / tms:.2f}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
