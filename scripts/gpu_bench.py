"""Training throughput of ember-cuda beside torch on the same GPU (torch on the CPU when it has
no CUDA, said so): the same model code, starting weights and batch for both libraries, the
first losses compared (nn and optim on cuda against torch), then the median step time after
warm-up, samples per second and peak GPU memory.

Workloads (``--models``, all by default):
  resnet20      ResNet-20, batch 64, 3x32x32, SGD with momentum
  resnet50      ResNet-50 (bottleneck blocks), batch 64, 3x224x224, SGD with momentum, float32
  resnet50-amp  the same under float16 autocast with a GradScaler
  gpt2-small    12 pre-norm layers, d_model 768, 12 heads, vocabulary 50257, batch 8 x 512
                tokens, causal attention, AdamW
  lstm-lm       Embedding(10000, 650), 2-layer LSTM(650, 650), Linear(650, 10000), 35 x 20
                tokens, SGD
Run by scripts/gpu_check.sh; ``--dry-run`` uses tiny sizes (with the fake CuPy)."""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchmarks import models


class Setup:
    """One workload on one library: the model, a batch and its targets, the loss."""

    def __init__(self, model, x, y, loss, optimizer, amp=False, batch=None):
        self.model, self.x, self.y, self.loss, self.optimizer = model, x, y, loss, optimizer
        self.amp, self.batch = amp, batch

    def to(self, device):
        self.model.to(device)
        self.x, self.y = self.x.to(device), self.y.to(device)
        for name in ("mask", "position_ids"):  # plain attributes of the benchmark models
            if isinstance(getattr(self.model, name, None), type(self.x)):
                setattr(self.model, name, getattr(self.model, name).to(device))
        return self


def _tokens(lib, rng, shape, vocab):
    return lib.from_numpy(rng.integers(0, vocab, size=shape, dtype=np.int64))


def resnet20(lib, tiny):
    batch, side = (2, 8) if tiny else (64, 32)
    model = models.resnet20(lib, batch=2).modules["model"]
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((batch, 3, side, side), dtype=np.float32))
    return Setup(model, x, _tokens(lib, rng, (batch,), 10), lib.nn.CrossEntropyLoss(),
                 lambda ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9), batch=batch)


def _bottleneck_class(lib):
    nn = lib.nn

    class Bottleneck(nn.Module):
        """1x1 reduce, 3x3 (the stride), 1x1 expand by 4; projection shortcut where shapes change."""

        def __init__(self, cin, width, stride):
            super().__init__()
            cout = 4 * width
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            return self.relu(self.bn3(self.conv3(out)) + identity)
    return Bottleneck


def resnet50_model(lib, classes=1000, widths=(64, 128, 256, 512), blocks=(3, 4, 6, 3)):
    nn = lib.nn
    block = _bottleneck_class(lib)
    layers = [nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, stride=2, padding=1)]
    cin = 64
    for i, (width, count) in enumerate(zip(widths, blocks)):
        for j in range(count):
            layers.append(block(cin, width, 2 if j == 0 and i > 0 else 1))
            cin = 4 * width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def resnet50(lib, tiny, amp=False):
    batch, side = (2, 32) if tiny else (64, 224)
    lib.manual_seed(0)
    model = resnet50_model(lib, widths=(4, 8, 8, 8), blocks=(1, 1, 1, 1)) if tiny else resnet50_model(lib)
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((batch, 3, side, side), dtype=np.float32))
    return Setup(model, x, _tokens(lib, rng, (batch,), 1000), lib.nn.CrossEntropyLoss(),
                 lambda ps: lib.optim.SGD(ps, lr=0.01, momentum=0.9), amp=amp, batch=batch)


class _Rows:
    """The loss of a sequence model's logits against its targets, as rows."""

    def __init__(self, lib, vocab):
        self.criterion, self.vocab = lib.nn.CrossEntropyLoss(), vocab

    def __call__(self, logits, targets):
        return self.criterion(logits.reshape(-1, self.vocab), targets.reshape(-1))


def gpt2_small(lib, tiny):
    vocab, seq, width, heads, layers, batch = (97, 16, 32, 4, 2, 2) if tiny else (50257, 512, 768, 12, 12, 8)
    lib.manual_seed(0)
    model = models._transformer_lm_class(lib)(vocab, seq, width, heads, 4 * width, layers)
    rng = np.random.default_rng(0)
    return Setup(model, _tokens(lib, rng, (batch, seq), vocab), _tokens(lib, rng, (batch, seq), vocab),
                 _Rows(lib, vocab), lambda ps: lib.optim.AdamW(ps, lr=3e-4), batch=batch * seq)


def lstm_lm(lib, tiny):
    vocab, width, seq, batch = (97, 16, 5, 3) if tiny else (10000, 650, 35, 20)
    lib.manual_seed(0)
    model = models._lstm_lm_class(lib)(vocab, width)
    rng = np.random.default_rng(0)
    return Setup(model, _tokens(lib, rng, (seq, batch), vocab), _tokens(lib, rng, (seq, batch), vocab),
                 _Rows(lib, vocab), lambda ps: lib.optim.SGD(ps, lr=0.1), batch=batch * seq)


WORKLOADS = {"resnet20": resnet20, "resnet50": resnet50,
             "resnet50-amp": lambda lib, tiny: resnet50(lib, tiny, amp=True),
             "gpt2-small": gpt2_small, "lstm-lm": lstm_lm}


def copy_weights(source, target, lib):
    state = source.state_dict()
    target.load_state_dict({k: lib.tensor(v.detach().cpu().numpy()) for k, v in state.items()})


def train(lib, setup, steps, sync, budget):
    """Training steps until ``steps`` or ``budget`` seconds (at least three steps); the losses
    and each step's seconds."""
    setup.model.train()
    optimizer = setup.optimizer(setup.model.parameters())
    scaler = lib.amp.GradScaler("cuda") if setup.amp else None
    losses, times = [], []
    began = time.perf_counter()
    while len(times) < steps and (len(times) < 3 or time.perf_counter() - began < budget):
        start = time.perf_counter()
        optimizer.zero_grad()
        if setup.amp:
            with lib.autocast(device_type="cuda", dtype=lib.float16):
                loss = setup.loss(setup.model(setup.x), setup.y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss = setup.loss(setup.model(setup.x), setup.y)
            loss.backward()
            optimizer.step()
        sync()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    return losses, times


def run(name, ember, torch, torch_device, steps, budget, tiny):
    build = WORKLOADS[name]
    ours, theirs = build(ember, tiny), build(torch, tiny)
    copy_weights(ours.model, theirs.model, torch)
    ours.to("cuda")
    theirs.to(torch_device)
    ember.cuda.synchronize()
    ember.cuda.reset_peak_memory_stats()
    elosses, etimes = train(ember, ours, steps, ember.cuda.synchronize, budget)
    epeak = ember.cuda.max_memory_allocated()
    del ours
    tsync = torch.cuda.synchronize if torch_device == "cuda" else (lambda: None)
    if torch_device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    tlosses, ttimes = train(torch, theirs, steps, tsync, budget)
    tpeak = torch.cuda.max_memory_allocated() if torch_device == "cuda" else 0
    del theirs
    tolerance = 2e-2 if name.endswith("-amp") else 1e-3
    agree = abs(elosses[0] - tlosses[0]) <= tolerance * max(1.0, abs(tlosses[0]))
    warm = slice(min(2, len(etimes) - 1), None)
    ems, tms = 1e3 * np.median(etimes[warm]), 1e3 * np.median(ttimes[warm])
    print(f"{name:<14}{'AGREE' if agree else 'DIFFER':>7}{elosses[0]:>10.4f}{tlosses[0]:>10.4f}"
          f"{ems:>10.1f}{tms:>10.1f}{ems / tms:>8.2f}{tms / ems:>8.2f}"
          f"{1e3 * etimes[0]:>10.0f}{1e3 * ttimes[0]:>10.0f}{epeak / 2 ** 20:>10.0f}{tpeak / 2 ** 20:>10.0f}"
          f"{len(etimes):>4}{len(ttimes):>4}", flush=True)
    return agree


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--models", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of timed steps per library and model")
    args = parser.parse_args()
    import ember
    import torch
    steps = min(args.steps, 3) if args.dry_run else args.steps
    if args.dry_run:
        torch.set_num_threads(1)
    torch_device = "cuda" if torch.cuda.is_available() else "cpu"
    if torch_device == "cpu":
        print("NOTE: torch has no CUDA here; torch runs on the CPU")
    else:
        print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; "
              f"cupy {__import__('cupy').__version__}")
    print("time: median ms per training step after two warm-up steps; ratio = ember/torch time; "
          "speed = torch/ember time (ember's share of torch's throughput); first: first step ms; peak MiB")
    print(f"{'model':<14}{'loss':>7}{'ember':>10}{'torch':>10}{'ember ms':>10}{'torch ms':>10}{'ratio':>8}"
          f"{'speed':>8}{'first e':>10}{'first t':>10}{'peak e':>10}{'peak t':>10}{'n e':>4}{'n t':>4}", flush=True)
    failed = 0
    for name in args.models:
        try:
            failed += not run(name, ember, torch, torch_device, steps, args.budget, args.dry_run)
        except Exception as error:  # report and go on to the next workload
            failed += 1
            print(f"{name:<14} FAILED: {type(error).__name__}: {error}", flush=True)
            import traceback
            traceback.print_exc()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
