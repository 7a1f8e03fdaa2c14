"""The C source of one fused kernel, from its ``KernelSpec``.

A kernel walks an iteration space of ``D`` dimensions, ``DO`` outer ones and ``D - DO`` inner
ones, with every operand (inputs, then outputs) addressed through its own element strides (0
along a broadcast dimension). Without a reduction the inner part is the last dimension, cut
into blocks; the (outer index, block) pairs are the tasks shared among OpenMP threads. With a
reduction the inner dimensions are the reduced ones: each outer index is one task that
accumulates its sums in double and writes them once. Operands whose strides are all 0
(scalars, 0-d tensors) are read once per task; along the innermost dimension each operand's
stride is known to be 1, 0 or other when the source is written, so that the compiler can
vectorize the common contiguous case."""
from ._pointwise import COMPARISONS, c_expression, c_literal

__all__ = ["KernelSpec", "source"]

# float32 exp and tanh as branch-free arithmetic that the compiler vectorizes (libm's expf and
# tanhf are scalar calls): Cephes' expf (range reduction by ln 2, a degree-6 polynomial, the
# exponent set in the bits; 0 below the smallest normal result, inf above the largest; no
# clamps of the argument, which keep GCC from vectorizing the loop) and
# Cephes' tanhf (an odd polynomial below 0.625, 1 - 2 / (exp(2x) + 1) above)
PRELUDE = r"""#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float ek_expf(float x) {
  const float t = x * 1.44269504088896341f + 0.5f;
  float n = (float)(int32_t)t;
  n = n > t ? n - 1.0f : n;
  n = n > 127.0f ? 127.0f : n;
  const float r = x - n * 0.693359375f - n * -2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  const int32_t bits = ((int32_t)n + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float y = p * scale;
  y = x > 88.72283f ? INFINITY : y;
  y = x < -87.33654f ? 0.0f : y;
  return x != x ? x : y;
}

static inline float ek_tanhf(float x) {
  const float a = fabsf(x);
  const float e = ek_expf(2.0f * a);
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = x < 0 ? -big : big;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  return a > 0.625f ? big : small;
}
"""

BLOCK = 4096
NAME = "ember_kernel"
_RANK = {"unsigned char": 0, "float": 1, "double": 2}


class KernelSpec:
    """What the source depends on (and nothing that varies between calls of one graph: no
    sizes, strides or addresses). ``inputs``: (C type, kind) per input, kind ``"s"`` (one
    value), ``"u"``, ``"z"`` or ``"g"`` (innermost stride 1, 0, other). ``steps``: (op,
    operands, params, C type) with operands ("in", k), ("v", j) or ("c", number).
    ``outputs``: (step, C type, kind, reduction) with reduction None, "sum" or "mean".
    ``dims``: D; ``outer``: DO; ``reduce``: whether the inner dimensions are reduced."""

    def __init__(self, inputs, steps, outputs, dims, outer, reduce):
        self.inputs = tuple(inputs)
        self.steps = tuple(steps)
        self.outputs = tuple(outputs)
        self.dims = dims
        self.outer = outer
        self.reduce = reduce
        self.key = (self.inputs, self.steps, self.outputs, dims, outer, reduce)


def _operand_type(ref, spec):
    kind, i = ref
    if kind == "in":
        return spec.inputs[i][0]
    if kind == "v":
        return spec.steps[i][3]
    return None


def _compute_type(op, operands, ctype, spec):
    if op in COMPARISONS:
        types = [_operand_type(r, spec) for r in operands]
        return max((t for t in types if t is not None), key=_RANK.__getitem__)
    return ctype


def _operand(ref, t):
    kind, i = ref
    if kind == "c":
        return c_literal(i, t)
    name = f"a{i}" if kind == "in" else f"v{i}"
    return name if t is None else f"(({t}){name})"


def _step_line(j, step, spec):
    op, operands, params, ctype = step
    params = dict(params)
    t = _compute_type(op, operands, ctype, spec)
    if op == "where":
        xs = [_operand(operands[0], None)] + [_operand(r, t) for r in operands[1:]]
    elif op == "logical_not":
        xs = [_operand(operands[0], None)]
    else:
        xs = [_operand(r, t) for r in operands]
    if op == "pow" and operands[1][0] == "c":
        params["exponent"] = operands[1][1]
    expr = c_expression(op, xs, params, t)
    return f"const {ctype} v{j} = ({ctype})({expr});"


def source(spec):
    """The C source of ``spec``'s kernel, a function ``ember_kernel(sizes, ptrs, strides,
    nthreads)``."""
    d, do = spec.dims, spec.outer
    n_in = len(spec.inputs)
    operands = [(t, kind) for t, kind in spec.inputs] + [(t, kind) for _, t, kind, _ in
                                                          spec.outputs]
    lines = [PRELUDE,
             f"void {NAME}(const int64_t *restrict sizes, char **restrict ptrs, "
             f"const int64_t *restrict st, int nthreads) {{"]
    add = lines.append
    for k, (t, kind) in enumerate(operands):
        const = "const " if k < n_in else ""
        add(f"  {const}{t} *restrict p{k} = ({const}{t} *)ptrs[{k}];")
        if kind == "g":
            add(f"  const int64_t s{k} = st[{k * d + d - 1}];")
    add("  int64_t n_outer = 1;")
    add(f"  for (int d = 0; d < {do}; d++) n_outer *= sizes[d];")
    add(f"  const int64_t n_last = sizes[{d - 1}];")
    if spec.reduce:
        add("  int64_t inner_count = 1;")
        add(f"  for (int d = {do}; d < {d}; d++) inner_count *= sizes[d];")
        add("  const int64_t block = n_last > 0 ? n_last : 1, nb = 1;")
    else:
        add(f"  const int64_t block = {BLOCK}, nb = (n_last + block - 1) / block;")
    add("  const int64_t n_tasks = n_outer * nb;")
    add("  #pragma omp parallel for num_threads(nthreads) if(nthreads > 1) schedule(static)")
    add("  for (int64_t task = 0; task < n_tasks; task++) {")
    add("    const int64_t o = task / nb, j0 = (task % nb) * block;")
    add("    const int64_t j1 = j0 + block < n_last ? j0 + block : n_last;")
    moving = [k for k, (_, kind) in enumerate(operands) if kind != "s"]
    for k in moving:
        add(f"    int64_t o{k} = 0;")
    if do and moving:
        add("    { int64_t rem = o;")
        add(f"      for (int d = {do - 1}; d >= 0; d--) {{")
        add("        const int64_t i = rem % sizes[d]; rem /= sizes[d];")
        for k in moving:
            add(f"        o{k} += i * st[{k} * {d} + d];")
        add("      } }")
    for k, (t, kind) in enumerate(spec.inputs):
        if kind == "s":
            add(f"    const {t} a{k} = p{k}[0];")
    reductions = [(k, red) for k, (_, _, _, red) in enumerate(spec.outputs) if red]
    for k, _ in reductions:
        add(f"    double acc{k} = 0;")
    depth = "    "
    inner_dims = list(range(do, d - 1)) if spec.reduce else []
    for dim in inner_dims:     # reduced dimensions other than the innermost
        add(f"{depth}for (int64_t i{dim} = 0; i{dim} < sizes[{dim}]; i{dim}++) {{")
        depth += "  "
        for k in moving:
            add(f"{depth}const int64_t o{k}_{dim} = o{k}{_suffix(inner_dims, dim)} + "
                f"i{dim} * st[{k * d + dim}];")
    last = _suffix(inner_dims, None)
    if reductions:
        accs = ", ".join(f"acc{k}" for k, _ in reductions)
        add(f"{depth}#pragma omp simd reduction(+:{accs})")
    # what does not change along the innermost dimension is computed (and stored) before it
    invariant = set()
    for j, (_, refs, _, _) in enumerate(spec.steps):
        if all(kind == "c" or (kind == "in" and spec.inputs[i][1] in "sz") or
               (kind == "v" and i in invariant) for kind, i in refs):
            invariant.add(j)
    hoisted = [i for i, (step, _, kind, red) in enumerate(spec.outputs)
               if not red and kind == "z" and step in invariant]
    loop = depth
    lines_before = len(lines)
    for k, (t, kind) in enumerate(spec.inputs):
        if kind == "z":
            add(f"{loop}const {t} a{k} = p{k}[{_index(k, kind, last)}];")
    for j in sorted(invariant):
        add(loop + _step_line(j, spec.steps[j], spec))
    for i in hoisted:
        step = spec.outputs[i][0]
        add(f"{loop}p{n_in + i}[{_index(n_in + i, 'z', last)}] = v{step};")
    if reductions:      # the simd pragma must come right before its loop
        lines.append(lines.pop(lines_before - 1))
    add(f"{depth}for (int64_t j = j0; j < j1; j++) {{")
    body = depth + "  "
    for k, (t, kind) in enumerate(spec.inputs):
        if kind in "ug":
            add(f"{body}const {t} a{k} = p{k}[{_index(k, kind, last)}];")
    for j, step in enumerate(spec.steps):
        if j not in invariant:
            add(body + _step_line(j, step, spec))
    for i, (step, _, kind, red) in enumerate(spec.outputs):
        k = n_in + i
        if red:
            add(f"{body}acc{i} += (double)v{step};")
        elif i not in hoisted:
            add(f"{body}p{k}[{_index(k, kind, last)}] = v{step};")
    add(depth + "}")
    for _ in inner_dims:
        depth = depth[:-2]
        add(depth + "}")
    for i, red in reductions:
        k = n_in + i
        t = spec.outputs[i][1]
        scale = " / (double)inner_count" if red == "mean" else ""
        add(f"    p{k}[o{k}] = ({t})(acc{i}{scale});")
    add("  }")
    add("}")
    return "\n".join(lines) + "\n"


def _suffix(inner_dims, dim):
    """The name suffix of an operand's offset just outside loop ``dim`` (None: innermost)."""
    before = inner_dims if dim is None else inner_dims[:inner_dims.index(dim)]
    return f"_{before[-1]}" if before else ""


def _index(k, kind, suffix):
    if kind == "u":
        return f"o{k}{suffix} + j"
    if kind == "z":
        return f"o{k}{suffix}"
    return f"o{k}{suffix} + j * s{k}"

