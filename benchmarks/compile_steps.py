"""Forward+backward step time: ember eager; ember.compile with the default backend
(``inductor``: the ahead-of-time backward, one ``CompiledFunctionBackward`` node per step,
generated kernels in both of its graphs), with backend ``aot_eager`` (the same backward, its
graphs op by op) and with ``options={"aot_backward": False}`` (``inductor replay``: training
steps replay with eager autograd); torch eager and torch.compile; for an MLP, the transformer
and LSTM language models and ResNet-20 (BatchNorm in training mode) of ``benchmarks/models.py``
and a GPT-style block. The variants run interleaved, round after round; the table gives each
one's median, and the first two compiled steps' time is printed (capture, and for ``inductor``
the kernels' compiles, whose count and compiler seconds are printed too: kernels in the disk
cache load instead). ``--threads N`` sets both libraries' intra-op threads (run it once per
count for a column of each).

    python -m benchmarks.compile_steps [--rounds N] [--no-torch-compile] [--models a,b]
                                       [--threads N]
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


def _floats(lib, rng, shape):
    return lib.from_numpy(rng.standard_normal(shape, dtype=np.float32))


def _ints(lib, rng, shape, high):
    return lib.from_numpy(rng.integers(0, high, size=shape, dtype=np.int64))


def _mlp(lib, rng):
    nn, F = lib.nn, lib.nn.functional
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    y = _ints(lib, rng, (128,), 10)
    return model, _floats(lib, rng, (128, 784)), lambda out: F.cross_entropy(out, y)


def _language_model(model, tokens, targets, vocab, F):
    return model, tokens, lambda out: F.cross_entropy(out.reshape(-1, vocab), targets)


def _transformer_lm(lib, rng):
    model = models._transformer_lm_class(lib)(1000, 64, 128, 4, 512, 2)
    return _language_model(model, _ints(lib, rng, (16, 64), 1000),
                           _ints(lib, rng, (16 * 64,), 1000), 1000, lib.nn.functional)


def _lstm_lm(lib, rng):
    model = models._lstm_lm_class(lib)(10000, 200)
    return _language_model(model, _ints(lib, rng, (35, 20), 10000),
                           _ints(lib, rng, (35 * 20,), 10000), 10000, lib.nn.functional)


def _resnet20(lib, rng):
    model = models.resnet20(lib).modules["model"]     # in training mode: BatchNorm's batch stats
    y = _ints(lib, rng, (32,), 10)
    return model, _floats(lib, rng, (32, 3, 32, 32)), \
        lambda out: lib.nn.functional.cross_entropy(out, y)


def _gpt_block(lib, rng):
    return _gpt_block_class(lib)(128, 4), _floats(lib, rng, (8, 64, 128)), \
        lambda out: out.pow(2).mean()


WORKLOADS = {"mlp": _mlp, "transformer_lm": _transformer_lm, "gpt_block": _gpt_block,
             "lstm_lm": _lstm_lm, "resnet20": _resnet20}


def _workloads(lib, names):
    """name -> (model, inputs, loss(output)) for ``names``; the same inputs for each
    library."""
    out = {}
    for name in names:
        lib.manual_seed(0)
        out[name] = WORKLOADS[name](lib, np.random.default_rng(0))
    return out


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
    parser.add_argument("--models", default=",".join(WORKLOADS),
                        help="comma-separated names of the models to time")
    parser.add_argument("--threads", type=int, default=None,
                        help="intra-op threads of both libraries (default: theirs)")
    args = parser.parse_args(argv)
    wanted = args.models.split(",")
    unknown = [n for n in wanted if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {sorted(WORKLOADS)}")
    import ember
    from ember._inductor import counters
    try:
        import torch
    except ImportError:
        torch = None
    if args.threads is not None:
        ember.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    ember_work = _workloads(ember, wanted)
    torch_work = _workloads(torch, wanted) if torch is not None else {}
    rows = []
    for name, (model, x, loss_fn) in ember_work.items():
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
    print(f"{ember.get_num_threads()} thread(s)" + (
        f" (torch: {torch.get_num_threads()})" if torch is not None else ""))
    print("| model | " + " | ".join(f"{c} (ms)" for c in columns) + " | compiled grad_fn |")
    print("|---" * (len(columns) + 2) + "|")
    for name, medians, node in rows:
        cells = [f"{medians[c]:.2f}" if c in medians else "-" for c in columns]
        print(f"| {name} | " + " | ".join(cells) + f" | {node} |")


if __name__ == "__main__":
    main()
