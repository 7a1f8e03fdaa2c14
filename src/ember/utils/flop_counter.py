"""``FlopCounterMode``: count the FLOPs of matrix products, convolutions and attention, as
torch.utils.flop_counter counts them on the CPU.

torch counts the aten ops its dispatcher runs; ember counts its own ops that are those aten
ops (``mm``, ``addmm``, ``bmm``, ``baddbmm``, the convolutions), with torch's formulas, under
torch's names for them (``"aten.mm"``, ...: strings, where torch's keys are the op objects
whose ``str`` they are). ``matmul`` is counted as the mm/bmm it is composed of (a matrix-vector
product or dot product counts nothing, as in torch), and scaled dot-product attention as the
two batched products of its composite form (what torch counts on the CPU). Backward FLOPs are
counted when backward runs inside the mode: the products' gradients as the products that
compute them, a convolution's as ``aten.convolution_backward``. Each count goes to
``"Global"`` and to every module whose forward was running when the op (or, in backward, the op
it differentiates) ran, named by its path from the outermost module (``"Sequential.0"``).
"""
import warnings
from collections import defaultdict
from math import prod

from .. import _flop_hook

__all__ = ["FlopCounterMode", "register_flop_formula"]

flop_registry = {}


def register_flop_formula(targets, get_raw=False):
    """Register ``formula(*shapes, out_shape=...)`` as the FLOP count of the op(s) named
    ``targets`` (``"aten.mm"`` or a list of such names), as a decorator. ``get_raw`` is
    accepted for torch's signature; ember always passes shapes."""
    def register_fun(flop_formula):
        for target in ([targets] if isinstance(targets, str) else targets):
            if not isinstance(target, str):
                raise ValueError("register_flop_formula(targets): expected each target to be the "
                                 f"name of an op (such as 'aten.mm'), got {target} which is of "
                                 f"type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = flop_formula
        return flop_formula
    return register_fun


@register_flop_formula("aten.mm")
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    """Count flops for matmul."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


@register_flop_formula("aten.addmm")
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for addmm."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula("aten.bmm")
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for the bmm operation."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


@register_flop_formula("aten.baddbmm")
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for the baddbmm operation."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """Count flops for convolution: only multiplications (and their additions), no bias.

    For each point of the output's spatial dimensions (the input's, for a transposed
    convolution) the filter is applied, for each sample and each pair of input and output
    channels.
    """
    batch_size = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return prod(conv_shape) * prod(filter_size) * batch_size * c_out * c_in * 2


@register_flop_formula("aten.convolution")
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs):
    """Count flops for convolution."""
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _channels_first(shape):
    return [shape[1], shape[0]] + list(shape[2:])


@register_flop_formula("aten.convolution_backward")
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape, **kwargs):
    """Count flops for the convolution's backward: the input's gradient is a transposed
    convolution of the output's gradient with the weight, the weight's a convolution of the
    input with the output's gradient (batch and channels swapped)."""
    flop_count = 0
    if output_mask[0]:
        flop_count += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        t = _channels_first
        if transposed:
            flop_count += conv_flop_count(t(grad_out_shape), t(x_shape), t(out_shape[1]), False)
        else:
            flop_count += conv_flop_count(t(x_shape), t(grad_out_shape), t(out_shape[1]), False)
    return flop_count


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """Count flops for self-attention: the two batched products ``Q K^T`` and
    ``softmax(...) V``."""
    b, h_q, s_q, d_q = query_shape
    _b2, h_kv, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    if not (b == _b2 == _b3 and h_kv == _h3 and d_q == _d2 and s_k == _s3):
        raise AssertionError("sdpa_flop_count: query/key/value shapes are incompatible: "
                             f"q={query_shape}, k={key_shape}, v={value_shape}")
    return (bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k))
            + bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v)))


suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    """The suffix for ``number``'s order of magnitude (1.01B shows as 1001M, not 1.001B)."""
    index = max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))
    return suffixes[index]


def convert_num_with_suffix(number, suffix):
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num, denom):
    if denom == 0:
        return "0%"
    return f"{num / denom:.2%}"


class _ModuleTracker:
    """The paths of the modules whose forward is running (``parents``, always with
    ``"Global"``), through hooks on every module's forward."""

    def __init__(self):
        import weakref
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._handles = []

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        mod_name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for name, submod in mod.named_children():
                self._known_modules[submod] = f"{mod_name}.{name}"
                self._get_mod_name(submod)
            self._seen_modules.add(mod)
        return mod_name

    def _enter_module(self, mod, args):
        self.parents = self.parents | {self._get_mod_name(mod)}

    def _exit_module(self, mod, args, output):
        self.parents = self.parents - {self._get_mod_name(mod)}

    def __enter__(self):
        from ..nn.modules import module
        self._handles = [module.register_module_forward_pre_hook(self._enter_module),
                         module.register_module_forward_hook(self._exit_module)]
        return self

    def __exit__(self, *args):
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self.parents = {"Global"}


class FlopCounterMode:
    """``FlopCounterMode`` is a context manager that counts the number of flops within its
    context.

    It supports hierarchical output: counts are kept per module (by path, as in
    ``"Sequential.0"``) as well as under ``"Global"``.

    Example usage::

        mod = ...
        with FlopCounterMode() as flop_counter:
            mod.sum().backward()

    Args:
        mods: not needed any more (a warning says so), as in torch.
        depth: how deep in the module hierarchy the table goes. Default: 2.
        display: print the table when the context exits. Default: True.
        custom_mapping: ``{"aten.mm": formula, ...}`` formulas to use instead of the built-in
            ones, called as ``formula(*shapes, out_shape=...)``.
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        if custom_mapping is None:
            custom_mapping = {}
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)
        self.flop_registry = {**flop_registry, **custom_mapping}
        self.mod_tracker = _ModuleTracker()
        self._outer = None

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """Return the flop counts as a dictionary of dictionaries.

        The outer dictionary is keyed by module name, and the inner dictionary is keyed by
        operation name.
        """
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        """The counts as a table (module, FLOP, % of the total), modules down to ``depth``
        levels, each followed by its ops."""
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        is_global_subsumed = False

        def process_mod(mod_name, depth):
            nonlocal is_global_subsumed
            total_flops = sum(self.flop_counts[mod_name].values())
            is_global_subsumed |= total_flops >= global_flops
            padding = " " * depth
            values = [[padding + mod_name, convert_num_with_suffix(total_flops, global_suffix),
                       convert_to_percent_str(total_flops, global_flops)]]
            for k, v in self.flop_counts[mod_name].items():
                values.append([padding + " - " + str(k),
                               convert_num_with_suffix(v, global_suffix),
                               convert_to_percent_str(v, global_flops)])
            return values

        values = []
        for mod in sorted(self.flop_counts.keys()):
            if mod == "Global":
                continue
            mod_depth = mod.count(".") + 1
            if mod_depth > depth:
                continue
            values.extend(process_mod(mod, mod_depth - 1))

        # The "Global" rows only when some FLOPs were counted outside every module.
        if "Global" in self.flop_counts and not is_global_subsumed:
            for value in values:
                value[0] = " " + value[0]
            values = process_mod("Global", 0) + values
        if len(values) == 0:
            values = [["Global", "0", "0%"]]
        return _simple_table(["Module", "FLOP", "% Total"], values, ("left", "right", "right"))

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self._outer = _flop_hook.counter
        _flop_hook.counter = self
        return self

    def __exit__(self, *args):
        _flop_hook.counter = self._outer
        self._outer = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return False

    # -- what the ops report (through ember._flop_hook) --------------------------------------
    def count(self, name, node, shapes, out_shape):
        """An op ``name`` ran on operands of ``shapes``; ``node``, its backward node (or
        None), is given the modules running now, for the FLOPs of its gradients."""
        formula = self.flop_registry.get(name)
        if formula is not None:
            self._add(name, formula(*shapes, out_shape=out_shape), self.mod_tracker.parents)
        if node is not None:
            self._attribute_backward(node, self.mod_tracker.parents)

    def count_convolution(self, node, x, weight, bias, out, transposed):
        """A convolution ran (``transposed``: a transposed one); its backward, when it runs in
        this mode, counts as ``aten.convolution_backward``."""
        geometry = (None if bias is None else bias.shape, None, None, None, transposed)
        self.count("aten.convolution", None, (x.shape, weight.shape) + geometry, out.shape)
        if node is None:
            return
        parents = self.mod_tracker.parents
        shapes = (out.shape, x.shape, weight.shape) + geometry + (None, None)
        formula = self.flop_registry.get("aten.convolution_backward")

        def count_backward(grad_outputs):
            if _flop_hook.counter is self and formula is not None:
                output_mask = [fn is not None for fn, _ in node.next_functions]
                flops = formula(*shapes, output_mask, (x.shape, weight.shape))
                self._add("aten.convolution_backward", flops, parents)

        node.register_prehook(count_backward)

    def _add(self, name, flops, parents):
        for parent in parents:
            self.flop_counts[parent][name] += flops

    def _attribute_backward(self, node, parents):
        """While ``node``'s backward runs, the products it runs count for ``parents``."""
        tracker = self.mod_tracker
        before = []

        def enter(grad_outputs):
            before.append(tracker.parents)
            tracker.parents = parents

        def leave(grad_inputs, grad_outputs):
            if before:
                tracker.parents = before.pop()

        node.register_prehook(enter)
        node.register_hook(leave)


def _simple_table(headers, rows, colalign):
    """``rows`` under ``headers`` in tabulate's "simple" format (what torch prints through
    tabulate): columns two spaces apart, at least two wider than their header, a dashed rule
    under the headers, a column of numbers in the shortest form (``720.000`` as ``720``)."""
    rows = [list(row) for row in rows]
    for i in range(len(headers)):
        if all(_is_number(row[i]) for row in rows):  # tabulate shows a numeric column as such
            for row in rows:
                row[i] = format(float(row[i]), "g")
    columns = list(zip(headers, *rows))
    widths = [max(len(headers[i]) + 2, *(len(cell) for cell in col[1:]))
              for i, col in enumerate(columns)]

    def line(cells):
        return "  ".join(cell.ljust(w) if align == "left" else cell.rjust(w)
                         for cell, w, align in zip(cells, widths, colalign)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)]
                     + [line(row) for row in rows])


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
