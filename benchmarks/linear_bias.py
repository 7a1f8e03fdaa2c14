"""A linear layer's forward, ``x @ W.T + b`` in float32, three ways on the benchmark models'
shapes: oneDNN's matmul primitive adding the bias in its kernel (``onednn.gemm.affine``),
``dnnl_sgemm`` into a copy of the bias (ember's path before), and torch's ``addmm``. With
``--input-gradient``, the layer's input gradient ``g @ W`` instead: the primitive, ``dnnl_sgemm``
(ember's path) and torch's ``mm``. With ``--narrow``, the forward of classifier heads (10 or 16
outputs) below ``gemm.MIN_MULTIPLY_ADDS``: the primitive (that rule set aside), NumPy's path
(OpenBLAS, then the bias added) and torch. The three are timed in turns (``--repeats`` turns of
``--number`` calls each); the table gives the fastest turn's median in microseconds.

    .venv/bin/python -m benchmarks.linear_bias [--threads 2] [--repeats 5] [--number 30] [--input-gradient | --narrow]
"""
import argparse
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

import ember  # noqa: E402
from ember._backend import choice, products  # noqa: E402
from ember._backend.onednn import capi, gemm  # noqa: E402
import torch  # noqa: E402

from benchmarks.timing import fastest_medians  # noqa: E402

# (rows, in_features, out_features, where the benchmark models have it)
SHAPES = [(128, 784, 512, "mlp fc1"), (128, 512, 512, "mlp fc2"),
          (1024, 128, 384, "transformer_lm in_proj"), (1024, 128, 512, "transformer_lm linear1"),
          (1024, 512, 128, "transformer_lm linear2"), (1024, 128, 1000, "transformer_lm vocab"),
          (700, 200, 10000, "lstm_lm vocab")]
# classifier heads: few outputs, products of a few hundred thousand multiply-adds
NARROW_SHAPES = [(64, 84, 10, "lenet fc3"), (32, 200, 27, "names_mlp head"), (128, 512, 10, "mlp fc3"),
                 (64, 256, 10, ""), (64, 512, 10, ""), (64, 1024, 10, ""), (128, 256, 10, ""),
                 (128, 784, 10, ""), (128, 1024, 16, ""), (256, 512, 10, ""), (256, 256, 16, ""),
                 (512, 256, 10, ""), (512, 512, 10, "")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--number", type=int, default=30)
    parser.add_argument("--input-gradient", action="store_true",
                        help="time the input gradient g @ W instead of the forward")
    parser.add_argument("--narrow", action="store_true",
                        help="classifier heads below the size rule: the primitive against NumPy's path")
    args = parser.parse_args()
    ember.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    if not choice.enabled(choice.ONEDNN):
        sys.exit("oneDNN is not in use here")
    rng = np.random.default_rng(0)
    what = "g @ W" if args.input_gradient else "x @ W.T + b"
    print(f"float32 {what} at {args.threads} thread(s); µs per call, fastest of "
          f"{args.repeats} turns' medians")
    sgemm = "sgemm" if args.input_gradient else "NumPy's path" if args.narrow else "sgemm into the bias"
    print(f"| shape (rows x in -> out) | model | matmul primitive | {sgemm} | torch | primitive/torch |")
    print("|---|---|---:|---:|---:|---:|")
    for rows, fan_in, fan_out, where in NARROW_SHAPES if args.narrow else SHAPES:
        x = rng.standard_normal((rows, fan_in), dtype=np.float32)
        w = rng.standard_normal((fan_out, fan_in), dtype=np.float32)
        b = rng.standard_normal(fan_out, dtype=np.float32)
        cases = (_gradient_cases(x, w) if args.input_gradient else _narrow_cases(x, w, b) if args.narrow
                 else _cases(x, w, b))
        best = fastest_medians(cases, args.repeats, args.number)
        p, s, t = (best[name] for name in ("primitive", "sgemm", "torch"))
        print(f"| {rows} x {fan_in} -> {fan_out} | {where} | {p:.0f} | {s:.0f} | {t:.0f} | {p / t:.2f} |")


def _gradient_cases(x, w):
    g = np.ones((x.shape[0], w.shape[0]), np.float32)
    plan = gemm._primitive_plan(g, w, x.shape)

    def primitive():
        out = np.empty(x.shape, np.float32)
        plan({capi.ARG_SRC: g, capi.ARG_WEIGHTS: w, capi.ARG_DST: out})
        return out

    tg, tw = torch.from_numpy(g), torch.from_numpy(w)
    return {"primitive": primitive, "sgemm": lambda: gemm.matmul(g, w), "torch": lambda: torch.mm(tg, tw)}


def _cases(x, w, b):
    def primitive():
        limit = gemm.AFFINE_MAX_WEIGHTS   # (past ember's size rule too, for the larger weights)
        gemm.AFFINE_MAX_WEIGHTS = max(limit, w.size)
        try:
            return gemm.affine(x, w.T, b)
        finally:
            gemm.AFFINE_MAX_WEIGHTS = limit

    def into_bias():
        out = np.empty((x.shape[0], w.shape[0]), np.float32)
        out[...] = b
        return gemm.matmul(x, w.T, out)
    tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
    return {"primitive": primitive, "sgemm": into_bias, "torch": lambda: torch.addmm(tb, tx, tw.t())}


def _narrow_cases(x, w, b):
    def primitive():
        least = gemm.MIN_MULTIPLY_ADDS
        gemm.MIN_MULTIPLY_ADDS = 0
        try:
            return gemm.affine(x, w.T, b)
        finally:
            gemm.MIN_MULTIPLY_ADDS = least
    tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
    return {"primitive": primitive, "sgemm": lambda: products._numpy_affine(x, w.T, b),
            "torch": lambda: torch.addmm(tb, tx, tw.t())}


if __name__ == "__main__":
    main()
