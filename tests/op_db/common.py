"""OpInfo: how an op is described for the generic oracle tests (tests/test_ops.py).

An entry names the op, says how to call it on either library (``fn(lib, *args, **kwargs)``
where ``lib`` is ``ember`` or ``torch``), and lists sample inputs. Arguments that are
``Arg``s become tensors (the same values in both libraries, in the dtype under test); other
arguments pass through unchanged.
"""
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import numpy as np


@dataclass
class Arg:
    """A tensor argument: shape, value range, whether it gets a gradient, and layout."""
    shape: tuple
    low: float = -2.0
    high: float = 2.0
    requires_grad: bool = True
    noncontig: bool = False       # pass a strided view (every other element of the last dim)
    transposed: bool = False      # pass the transpose of the last two dims
    dtype: Any = None             # fixed dtype name (e.g. "int64") instead of the one under test
    values: Any = None            # explicit values (array-like) instead of random ones
    integer: bool = False         # draw integers in [low, high)
    avoid: Any = None             # push values at least 0.1 away from these points


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    name: str = ""


@dataclass
class OpInfo:
    name: str
    fn: Callable                   # fn(lib, *args, **kwargs)
    samples: list
    dtypes: tuple = ("float32", "float64")
    grad: bool = True              # compare gradients with torch
    gradcheck: bool = True         # finite differences in float64
    gradgrad: bool = True          # compare second-order gradients with torch
    atol: float = 1e-5
    rtol: float = 1.3e-6
    grad_atol: float | None = None
    output_index: int | None = None   # for ops returning tuples: which output to differentiate
    nondeterministic_grad: bool = False
    skip: dict = field(default_factory=dict)    # {"test name": "reason"}
    float64_tolerances: tuple | None = None      # (atol, rtol) where torch's float64 kernel is less exact
    cuda_undefined: str | None = None            # why the result is not defined on CUDA (not compared there)

    def tolerances(self, dtype):
        if dtype in ("float16", "bfloat16"):
            return 1e-2, 1.6e-2
        if dtype == "float64":
            return self.float64_tolerances or (1e-10, 1e-7)
        return self.atol, self.rtol


def make_array(arg, dtype, rng):
    """The NumPy values for an Arg."""
    if arg.values is not None:
        arr = np.array(arg.values)
        if arg.dtype is None and arr.dtype.kind == "f":
            arr = arr.astype(np.float64)
        return arr
    if arg.integer or (arg.dtype is not None and arg.dtype not in ("float32", "float64", "float16", "bfloat16")):
        if arg.dtype == "bool":
            return rng.random(arg.shape) < 0.5
        lo, hi = int(arg.low), int(arg.high)
        return rng.integers(lo, hi, size=arg.shape)
    arr = rng.uniform(arg.low, arg.high, size=arg.shape)
    if arg.avoid is not None:
        for p in np.atleast_1d(arg.avoid):
            close = np.abs(arr - p) < 0.1
            arr = np.where(close, p + np.where(arr >= p, 0.1, -0.1), arr)
    return arr
