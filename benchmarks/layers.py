"""Layer forward+backward time, ember vs torch, in one process, one or more layers of each
kernel family: convolution (Conv2d 3x32x32 -> 16 channels, 3x3, padding 1, batch 32;
ResNet-20's first-stage Conv2d, 16 -> 16 channels, 3x3, on 32x16x32x32; a depthwise 3x3 conv,
32 channels, 16x16, batch 32), transposed convolution (DCGAN's ConvTranspose2d, 128 -> 64, 4x4,
stride 2, on 32x128x8x8), pooling (MaxPool2d 2x2 on 32x16x32x32), normalization (BatchNorm2d
in training on 32x16x32x32, LayerNorm(512) on 64x128x512), activation (ReLU on 32x16x32x32,
GELU on 64x128x512) and GEMM (Linear 512 -> 512 on 2048x512 rows). Cases run interleaved
(every repeat times each case on each library in turn); the table gives medians in
milliseconds per forward+backward.

    .venv/bin/python benchmarks/layers.py --repeats 30 [--threads 1]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import ember
import torch


def cases(lib):
    """name -> (layer, input shape) for ``lib`` (ember or torch)."""
    nn = lib.nn
    return {
        "Conv2d 3->16, 3x3, 32x3x32x32": (nn.Conv2d(3, 16, 3, padding=1), (32, 3, 32, 32)),
        "Conv2d 16->16, 3x3, 32x16x32x32": (nn.Conv2d(16, 16, 3, padding=1, bias=False),
                                            (32, 16, 32, 32)),
        "ConvT 128->64, 4x4 s2, 32x128x8x8": (nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False),
                                              (32, 128, 8, 8)),
        "depthwise 3x3, 32x32x16x16": (nn.Conv2d(32, 32, 3, padding=1, groups=32), (32, 32, 16, 16)),
        "MaxPool2d 2x2, 32x16x32x32": (nn.MaxPool2d(2), (32, 16, 32, 32)),
        "BatchNorm2d, 32x16x32x32": (nn.BatchNorm2d(16), (32, 16, 32, 32)),
        "LayerNorm(512), 64x128x512": (nn.LayerNorm(512), (64, 128, 512)),
        "ReLU, 32x16x32x32": (nn.ReLU(), (32, 16, 32, 32)),
        "GELU, 64x128x512": (nn.GELU(), (64, 128, 512)),
        "Linear 512->512, 2048x512": (nn.Linear(512, 512), (2048, 512)),
    }


def time_step(lib, layer, x, grad):
    start = time.perf_counter()
    x.grad = None
    out = layer(x)
    out.backward(grad)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1,
                        help="intra-op threads of both libraries")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    libs = {"ember": ember, "torch": torch}
    built = {name: cases(lib) for name, lib in libs.items()}
    inputs = {}
    for case, (_, shape) in built["torch"].items():
        x = rng.standard_normal(shape).astype(np.float32)
        out_shape = tuple(built["torch"][case][0](torch.tensor(x)).shape)
        g = rng.standard_normal(out_shape).astype(np.float32)
        for name, lib in libs.items():
            inputs[name, case] = (lib.tensor(x, requires_grad=True), lib.tensor(g))
    times = {key: [] for key in inputs}
    for _ in range(args.repeats):
        for case in built["torch"]:
            for name, lib in libs.items():
                x, g = inputs[name, case]
                times[name, case].append(time_step(lib, built[name][case][0], x, g))
    print("| layer (forward+backward)          | ember ms | torch ms | ember/torch |")
    print("|-----------------------------------|---------:|---------:|------------:|")
    for case in built["torch"]:
        e = statistics.median(times["ember", case]) * 1e3
        t = statistics.median(times["torch", case]) * 1e3
        print(f"| {case:<33} | {e:8.2f} | {t:8.2f} | {e / t:11.2f} |")


if __name__ == "__main__":
    main()
