"""Forward+backward step time: ember eager; ember.compile with the default backend
(``inductor``: the ahead-of-time backward, one ``CompiledFunctionBackward`` node per step,
generated kernels in both of its graphs), with backend ``aot_eager`` (the same backward, its
graphs op by op) and with ``options={"aot_backward": False}`` (``inductor replay``: training
steps replay with eager autograd); torch eager and torch.compile; for an MLP, the transformer
language model of ``benchmarks/models.py`` and a GPT-style block. The variants run
interleaved, round after round; the table gives each one's median, and the first two compiled
steps' time is printed (capture, and for ``inductor`` the kernels' compiles, whose count and
compiler seconds are printed too: kernels in the disk cache load instead).

    python -m benchmarks.compile_steps [--rounds N] [--no-torch-compile] [--models a,b]
"""
import argparse
import statistics
import sys
import time

import numpy as np

from benchmarks import models


def _gpt_block_class(lib):
    nn, F = lib.nn, lib.nn.functional

    class GPTBlock(nn.Module):
        """Pre-norm causal self-attention and a 4x GELU MLP, each with a residual."""

        def __init__(self, width, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))
    return GPTBlock


def _workloads(lib):
    """name -> (model, inputs, loss(output))."""
    rng = np.random.default_rng(0)
    lib.manual_seed(0)
    F = lib.nn.functional
    nn = lib.nn
    mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                        nn.Linear(512, 10))
    x = lib.from_numpy(rng.standard_normal((128, 784), dtype=np.float32))
    y = lib.from_numpy(rng.integers(0, 10, size=(128,), dtype=np.int64))
    lm = models._transformer_lm_class(lib)(1000, 64, 128, 4, 512, 2)
    tokens = lib.from_numpy(rng.integers(0, 1000, size=(16, 64), dtype=np.int64))
    targets = lib.from_numpy(rng.integers(0, 1000, size=(16 * 64,), dtype=np.int64))
    block = _gpt_block_class(lib)(128, 4)
    h = lib.from_numpy(rng.standard_normal((8, 64, 128), dtype=np.float32))
    return {
        "mlp": (mlp, x, lambda out: F.cross_entropy(out, y)),
        "transformer_lm": (lm, tokens, lambda out: F.cross_entropy(out.reshape(-1, 1000),
                                                                   targets)),
        "gpt_block": (block, h, lambda out: out.pow(2).mean()),
    }


def _copy(source, target, lib):
    target.load_state_dict({k: lib.tensor(v.detach().numpy())
                            for k, v in source.state_dict().items()})


def _step(model, x, loss_fn):
    def step():
        model.zero_grad(set_to_none=True)
        loss_fn(model(x)).backward()
    return step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-torch-compile", action="store_true")
    parser.add_argument("--models", default="mlp,transformer_lm,gpt_block",
                        help="comma-separated names of the models to time")
    args = parser.parse_args(argv)
    import ember
    from ember._inductor import counters
    try:
        import torch
    except ImportError:
        torch = None
    ember_work = _workloads(ember)
    torch_work = _workloads(torch) if torch is not None else {}
    rows = []
    wanted = args.models.split(",")
    for name, (model, x, loss_fn) in ember_work.items():
        if name not in wanted:
            continue
        aot_model = ember.compile(model, backend="aot_eager")
        compiled_model = ember.compile(model)
        replayed = ember.compile(model, options={"aot_backward": False})
        variants = {"ember eager": _step(model, x, loss_fn),
                    "ember inductor": _step(compiled_model, x, loss_fn),
                    "ember aot_eager": _step(aot_model, x, loss_fn),
                    "ember inductor replay": _step(replayed, x, loss_fn)}
        for variant in ("ember aot_eager", "ember inductor"):
            before = dict(counters)
            start = time.perf_counter()
            variants[variant]()     # the capture
            variants[variant]()     # the first replay: specializes and builds the kernels
            print(f"{name}: {variant}'s first two steps took {time.perf_counter() - start:.2f} s "
                  f"({counters['kernels_compiled'] - before['kernels_compiled']} kernels "
                  f"compiled in {counters['compile_seconds'] - before['compile_seconds']:.2f} s, "
                  f"{counters['kernels_loaded'] - before['kernels_loaded']} loaded from "
                  f"the cache)", file=sys.stderr)
        if torch is not None:
            tmodel, tx, tloss = torch_work[name]
            _copy(model, tmodel, torch)
            variants["torch eager"] = _step(tmodel, tx, tloss)
            if not args.no_torch_compile:
                compiled = _step(torch.compile(tmodel), tx, tloss)
                try:
                    start = time.perf_counter()
                    compiled()
                    print(f"{name}: torch.compile's first step took "
                          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
                    variants["torch.compile"] = compiled
                except Exception as e:      # no compiler toolchain, an unsupported op, ...
                    print(f"{name}: torch.compile skipped ({type(e).__name__}: "
                          f"{str(e).splitlines()[0][:120]})", file=sys.stderr)
        for step in variants.values():     # warm up: captures, compiles, allocations
            step()
            step()
        node = compiled_model(x).grad_fn
        times = {v: [] for v in variants}
        for _ in range(args.rounds):
            for variant, step in variants.items():
                start = time.perf_counter()
                step()
                times[variant].append(time.perf_counter() - start)
        medians = {v: statistics.median(t) * 1e3 for v, t in times.items()}
        rows.append((name, medians, node.name() if node is not None else None))
    columns = ["ember eager", "ember inductor", "ember aot_eager", "ember inductor replay",
               "torch eager", "torch.compile"]
    print("| model | " + " | ".join(f"{c} (ms)" for c in columns) + " | compiled grad_fn |")
    print("|---" * (len(columns) + 2) + "|")
    for name, medians, node in rows:
        cells = [f"{medians[c]:.2f}" if c in medians else "-" for c in columns]
        print(f"| {name} | " + " | ".join(cells) + f" | {node} |")


if __name__ == "__main__":
    main()
