"""``export``: trace a module with ``ember.jit``'s recorder and write the graph as an ONNX
model (``onnx`` is imported here, when an export runs, never by ``import ember``)."""
import contextlib
import inspect
import os

import numpy as np

from ..jit._frozen import check_no_frozen_values
from ..jit._trace import layer_namespaces, record_graph
from ..nn import Module
from ._builder import Builder, Unsupported, onnx_dtype
from ._functions import CONVERTERS
# the converter modules register their converters in CONVERTERS when imported
from . import (_indexing, _linalg, _pointwise, _polynomials, _reductions,  # noqa: F401
               _shapes, _unexpressible)
from ._modules import converter_for, is_export_leaf

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "UnsupportedOperatorError"]

DEFAULT_OPSET = 17
MIN_OPSET = 17
IR_VERSION = 10
_INT64_MAX = 2 ** 63 - 1

_exporting = False


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """An operation of the traced program has no ONNX equivalent in ember's exporter; the
    message names the operation and the graph node."""


def is_in_onnx_export():
    """True while ``ember.onnx.export`` is tracing a model."""
    return _exporting


def _import_onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("ember.onnx.export needs the 'onnx' package (pip install onnx)") from e
    return onnx


# -- the conversion context ------------------------------------------------------------------------
class _Context:
    """What converters see: the builder ``b``, the ONNX value of each traced node, and the
    shapes and dtypes the trace recorded."""

    def __init__(self, builder, recorder, root):
        import ember
        self.ember = ember
        self.b = builder
        self.rec = recorder
        self.root = root
        self.env = {}
        self.module_path = ""

    # values
    def value(self, x):
        from ..fx.node import Node
        if isinstance(x, Node):
            return self.env[x]
        return x

    def t(self, x):
        """The ONNX value of ``x``: a node's, or a constant for a Python number."""
        from ..fx.node import Node
        if isinstance(x, Node):
            v = self.env[x]
            if not isinstance(v, str):
                raise Unsupported(f"{x.name} used as a tensor, but it is {type(v).__name__}")
            return v
        if isinstance(x, bool):
            return self.b.const(np.bool_(x))
        if isinstance(x, int):
            return self.b.const(np.int64(x))
        if isinstance(x, float):
            return self.b.const(np.float32(x))
        if isinstance(x, (list, tuple)):
            return self.shape_tensor(list(x))
        raise Unsupported(f"a {type(x).__name__} argument ({x!r})")

    def t_as(self, x, dtype):
        """``x`` as an ONNX value of the ember ``dtype`` (cast or typed constant)."""
        from ..fx.node import Node
        if isinstance(x, Node):
            v = self.t(x)
            return v if self.dtype(x) == dtype else self.b.cast(v, dtype)
        return self.b.const(x, dtype)

    def param(self, name, tensor):
        return self.b.const(tensor.detach().numpy(), name=self.b.fresh(name))

    # what the trace saw
    def dtype(self, x):
        from ..fx.node import Node
        if isinstance(x, Node):
            meta = x.meta.get("tensor_meta")
            return meta[1] if meta is not None else self.ember.int64
        return None

    def shape(self, x):
        from ..fx.node import Node
        if isinstance(x, Node):
            meta = x.meta.get("tensor_meta")
            return tuple(meta[0]) if meta is not None else ()
        return ()

    def node_dtype(self, node):
        meta = node.meta.get("tensor_meta")
        return meta[1] if meta is not None else None

    def node_shape(self, node):
        meta = node.meta.get("tensor_meta")
        return tuple(meta[0]) if meta is not None else ()

    def dtype_of_node_input(self, node, i):
        return self.dtype(node.args[i])

    def common_dtype(self, x, y):
        ember = self.ember
        dx, dy = self.dtype(x), self.dtype(y)
        if dx is None and dy is None:
            return ember.int64
        if dx is None or dy is None:
            d, scalar = (dy, x) if dx is None else (dx, y)
            if isinstance(scalar, float) and not (d.is_floating_point or d.is_complex):
                return ember.get_default_dtype()
            return d
        return ember.promote_types(dx, dy)

    def static_int(self, x):
        """The value a traced size had during the trace (for what ONNX needs static: the
        number of outputs of a split)."""
        from ..fx.node import Node
        if isinstance(x, Node):
            if "int_value" not in x.meta:
                raise Unsupported(f"{x.name} as a static size")
            return x.meta["int_value"]
        return x

    def first_tensor(self, a):
        if "input" in a:
            return a["input"]
        return next(iter(a.values()))

    def shape_tensor(self, items):
        """A 1-D int64 ONNX value from a list of sizes: Python ints and traced sizes."""
        from ..fx.node import Node
        pieces, run = [], []
        for item in items:
            if isinstance(item, Node):
                if run:
                    pieces.append(self.b.ints(run))
                    run = []
                v = self.t(item)
                pieces.append(self.b.unsqueeze(v, [0]) if not self.shape(item) else v)
            else:
                run.append(int(item))
        if run:
            pieces.append(self.b.ints(run))
        if not pieces:
            return self.b.ints([])
        return pieces[0] if len(pieces) == 1 else self.b.op("Concat", pieces, axis=0)

    def index(self, x, index):
        """``x[index]`` with ints, slices, None, ``...``, integer lists and tensors and boolean
        masks (their positions from ``NonZero``: a length known when the graph runs)."""
        return self.index_value(self.t(x), len(self.shape(x)), index)

    def index_value(self, xv, rank, index):
        """``index`` applied to the ONNX value ``xv`` of rank ``rank``: basic indices first,
        then the advanced ones (tensors, lists, and ints among them) as one ``GatherND``, their
        result's axes where torch puts them (in place when adjacent, else first)."""
        from ..fx.node import Node
        b = self.b
        items = list(index) if isinstance(index, tuple) else [index]
        used = sum(self._index_rank(i) for i in items if i is not None and i is not Ellipsis)
        if Ellipsis in items:
            at = items.index(Ellipsis)
            items[at:at + 1] = [slice(None)] * (rank - used)
        items += [slice(None)] * (rank - sum(self._index_rank(i) for i in items
                                             if i is not None))
        tensors = [i for i in items if isinstance(i, list) or (isinstance(i, Node) and (
            self.shape(i) != () or self.dtype(i) == self.ember.bool))]
        advanced = len(tensors) > 1 or any(isinstance(i, Node) and self.dtype(i) ==
                                           self.ember.bool for i in tensors)
        axis, picks = 0, []          # picks: (axis of xv, ONNX int64 index value)
        for item in items:
            if item is None:
                if advanced:
                    raise Unsupported("indexing with None among tensor indices")
                xv = b.unsqueeze(xv, [axis])
                axis += 1
            elif isinstance(item, slice):
                if item != slice(None):
                    start = 0 if item.start is None else item.start
                    stop = _INT64_MAX if item.stop is None else item.stop
                    step = 1 if item.step is None else item.step
                    xv = b.op("Slice", [xv, self.shape_tensor([start]),
                                        self.shape_tensor([stop]), b.ints([axis]),
                                        self.shape_tensor([step])])
                axis += 1
            elif isinstance(item, Node) and self.dtype(item) == self.ember.bool:
                dims = len(self.shape(item))
                rows = b.op("NonZero", [self.t(item)])                    # (dims, N)
                b.value_dependent = True
                for k in range(dims):
                    picks.append((axis + k, b.op("Gather", [rows, b.const(np.int64(k))],
                                                 axis=0), 1))
                axis += dims
            elif advanced:
                if isinstance(item, Node):
                    value, dims = self.t_as(item, self.ember.int64), len(self.shape(item))
                else:
                    value = b.const(np.asarray(item, dtype=np.int64))
                    dims = np.ndim(item)
                picks.append((axis, value, dims))
                axis += 1
            else:          # an int, a 0-d tensor (the axis goes) or the one integer tensor
                if isinstance(item, Node):
                    value = self.t_as(item, self.ember.int64)
                else:
                    value = b.const(np.asarray(item, dtype=np.int64))
                xv = b.op("Gather", [xv, value], axis=axis)
                axis += np.ndim(item) if not isinstance(item, Node) else len(self.shape(item))
        if not picks:
            return xv
        return self._gather_advanced(xv, axis, picks)

    def _index_rank(self, item):
        from ..fx.node import Node
        if isinstance(item, Node) and self.dtype(item) == self.ember.bool:
            return len(self.shape(item))
        return 1

    def _gather_advanced(self, xv, rank, picks):
        b = self.b
        axes = [p[0] for p in picks]
        if len(picks) == 1:
            return b.op("Gather", [xv, picks[0][1]], axis=axes[0])
        rest = [d for d in range(rank) if d not in axes]
        moved = b.op("Transpose", [xv], perm=axes + rest)
        shape = picks[0][1]
        for _, value, _ in picks[1:]:
            shape = b.op("Expand", [shape, b.op("Shape", [value])])
        shape = b.op("Shape", [shape])
        stacked = b.op("Concat", [b.unsqueeze(b.op("Expand", [v, shape]), [-1])
                                  for _, v, _ in picks], axis=-1)
        out = b.op("GatherND", [moved, stacked])        # (broadcast..., rest...)
        first = axes[0]
        if axes != list(range(first, first + len(axes))) or first == 0:
            return out
        dims = max(p[2] for p in picks)                 # torch keeps adjacent ones in place
        perm = [dims + i for i in range(first)] + list(range(dims)) + \
            [dims + i for i in range(first, len(rest))]
        return b.op("Transpose", [out], perm=perm)


# -- arguments -------------------------------------------------------------------------------------
_VAR_ARGS, _VAR_KWARGS = inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD


def _signature_of(node):
    import ember
    try:
        if node.op == "call_function":
            return inspect.signature(node.target)
        if node.op == "call_method":
            signature = inspect.signature(getattr(ember.Tensor, node.target))
            kinds = [p.kind for p in list(signature.parameters.values())[1:]]
            function = getattr(ember, node.target.rstrip("_"), None)
            if kinds == [_VAR_ARGS, _VAR_KWARGS] and function is not None:
                return inspect.signature(function)    # a method forwarding to ember.<name>
            return signature
    except (TypeError, ValueError, AttributeError):
        return None
    return None


def _bind(node, signature):
    """The node's arguments by parameter name (the first one as ``input``)."""
    args, kwargs = tuple(node.args), dict(node.kwargs)
    bound = {}
    if signature is not None:
        try:
            ba = signature.bind(*args, **kwargs)
            ba.apply_defaults()
            bound = dict(ba.arguments)
        except TypeError:
            bound = {}
    if not bound:
        bound = dict(kwargs)
        if args:
            bound.setdefault("input", args[0])
        return bound
    params = list(signature.parameters)
    if params and params[0] in ("self", "a", "x", "A") and params[0] in bound:
        bound["input"] = bound.pop(params[0])
    return bound


def op_name(node):
    from ..fx._names import qualified_name
    if node.op == "call_function":
        try:
            return qualified_name(node.target).replace("_operator.", "operator.")
        except RuntimeError:
            return repr(node.target)
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    return str(node.target)


def _convert_node(ctx, node, root):
    if node.op == "call_module":
        module = root.get_submodule(node.target)
        convert = converter_for(module)
        if convert is None:
            raise Unsupported(f"the module {type(module).__name__}")
        signature = inspect.signature(module.forward)
        ba = signature.bind(*node.args, **node.kwargs)
        ba.apply_defaults()
        ctx.module_path = node.target
        return convert(ctx, module, dict(ba.arguments))
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    convert = CONVERTERS.get(op_name(node)) or CONVERTERS.get(name)   # qualified name first
    if convert is None:
        raise Unsupported(f"operator '{op_name(node)}' (no converter maps it to ONNX)")
    return convert(ctx, node, _bind(node, _signature_of(node)))


# -- inputs and outputs ----------------------------------------------------------------------------
def _dynamic_axes(dynamic_axes, names):
    out = {}
    for key, axes in (dynamic_axes or {}).items():
        if key not in names:
            raise ValueError(f"dynamic_axes names {key!r}, which is neither an input nor an "
                             f"output name ({', '.join(names)})")
        if isinstance(axes, dict):
            out[key] = {int(k): str(v) for k, v in axes.items()}
        else:
            out[key] = {int(k): f"{key}_dynamic_axes_{i + 1}" for i, k in enumerate(axes)}
    return out


def _value_info(name, shape, dtype, dims, unknown_dims):
    """A graph input's or output's type: the named dynamic dims symbolic, the others the traced
    sizes (or unknown, for outputs of a model with dynamic inputs or with sizes the values
    decide)."""
    from onnx import helper
    shape_spec = []
    for i, size in enumerate(shape):
        if i in dims:
            shape_spec.append(dims[i])
        elif unknown_dims:
            shape_spec.append(None)
        else:
            shape_spec.append(int(size))
    return helper.make_tensor_value_info(name, onnx_dtype(dtype), shape_spec)


def _flat_outputs(value):
    if isinstance(value, (tuple, list)):
        return [o for v in value for o in _flat_outputs(v)]
    if isinstance(value, dict):
        return [o for v in value.values() for o in _flat_outputs(v)]
    return [value]


def _normalize_args(args, kwargs):
    from .. import Tensor
    if isinstance(args, Tensor) or not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict) and not kwargs:
        args, kwargs = args[:-1], args[-1]
    return args, dict(kwargs or {})


def _export_inputs(args):
    """The example inputs as the trace receives them: floating-point tensors are copies that
    require grad, so that every value computed from them has a grad_fn."""
    from .. import Tensor

    def prepare(x):
        if isinstance(x, Tensor) and x.is_floating_point():
            return x.detach().clone().requires_grad_(True)
        if isinstance(x, (tuple, list)):
            return type(x)(prepare(v) for v in x)
        return x
    return prepare(args)


@contextlib.contextmanager
def _export_mode(model, training):
    global _exporting
    was_training = model.training
    if training is not None and str(getattr(training, "name", training)).upper() in (
            "TRAINING", "TRUE"):
        model.train()
    elif str(getattr(training, "name", training)).upper() != "PRESERVE":
        model.eval()
    _exporting = True
    try:
        yield
    finally:
        _exporting = False
        model.train(was_training)


# -- export ----------------------------------------------------------------------------------------
def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=False, external_data=False,
           dynamic_shapes=None, export_params=True, keep_initializers_as_inputs=False,
           dynamic_axes=None, training=None, do_constant_folding=True, custom_opsets=None,
           **unsupported):
    """Export ``model`` (an ``ember.nn.Module``) to ONNX, writing ``f`` (a path or a binary
    file) with the ``onnx`` package.

    The model runs once on ``args`` (a tensor or a tuple; a trailing dict holds keyword
    arguments) under ``ember.jit``'s recorder, in eval mode unless ``training`` says otherwise,
    and the recorded ops become ONNX nodes (opset ``opset_version``, 17 by default and at
    least 17); parameters, buffers and constants are initializers. ``input_names`` and
    ``output_names`` name the graph's inputs and outputs (flattened in order);
    ``dynamic_axes`` (``{"input": {0: "batch"}}`` or ``{"input": [0]}``) makes those
    dimensions symbolic. Sizes the model reads (``x.size(0)``) are computed in the graph, so
    reshapes follow a dynamic batch. ember's LSTM, GRU, RNN and MultiheadAttention layers
    become ONNX's recurrent ops and an attention decomposition; everything else is traced
    through to ember functions, each mapped to ONNX ops. An operation without an ONNX mapping
    raises ``UnsupportedOperatorError`` naming it and its graph node. Returns None.

    Unlike torch 2.x, this is the tracing exporter (torch's ``dynamo=False`` path); the
    ``dynamo=True`` exporter, ``ONNXProgram`` and ``custom_opsets`` are not there.
    """
    if dynamo:
        raise NotImplementedError("ember.onnx.export(dynamo=True) is not supported: ember exports "
                                  "by tracing (pass dynamo=False)")
    if dynamic_shapes is not None:
        raise NotImplementedError("ember.onnx.export: dynamic_shapes is not supported; use "
                                  "dynamic_axes")
    if unsupported:
        raise TypeError(f"ember.onnx.export got unsupported arguments: "
                        f"{', '.join(sorted(unsupported))}")
    if not isinstance(model, Module):
        raise TypeError(f"ember.onnx.export expects an ember.nn.Module, got "
                        f"{type(model).__name__}")
    if f is None:
        raise ValueError("ember.onnx.export needs f, the path or file to write")
    onnx = _import_onnx()
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset < MIN_OPSET:
        raise ValueError(f"ember.onnx.export supports opset_version {MIN_OPSET} or newer, got "
                         f"{opset}")
    import ember
    args, kwargs = _normalize_args(args, kwargs)
    traced_model = _Whole(model) if is_export_leaf(model) else model
    with _export_mode(model, training), ember.enable_grad():
        inputs = _export_inputs(args)
        kw_inputs = {k: _export_inputs((v,))[0] for k, v in kwargs.items()}
        rec, _ = record_graph(traced_model, traced_model.forward, inputs, kw_inputs,
                              strict=False, is_leaf=is_export_leaf,
                              extra_globals=layer_namespaces())
    check_no_frozen_values(rec.constants, "ember.onnx.export")
    model_proto = _build_model(onnx, rec, traced_model, opset, input_names, output_names, dynamic_axes,
                               verbose)
    if hasattr(f, "write"):
        f.write(model_proto.SerializeToString())
    else:
        onnx.save_model(model_proto, os.fspath(f))
    return None


class _Whole(Module):
    """Holds a layer that is exported whole (an LSTM, a MultiheadAttention) when it is the
    exported model itself, so that the trace records one call of it."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, *args, **kwargs):
        return self.layer(*args, **kwargs)


def _build_model(onnx, rec, model, opset, input_names, output_names, dynamic_axes, verbose):
    import ember
    from onnx import helper
    graph = rec.graph
    b = Builder(opset)
    ctx = _Context(b, rec, model)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    input_names = list(input_names or [])
    for n in placeholders[len(input_names):]:
        input_names.append(n.name)
    output_node = next(n for n in graph.nodes if n.op == "output")
    out_values = _flat_outputs(output_node.args[0])
    output_names = list(output_names or [])
    output_names += [f"output_{i}" if len(out_values) > 1 else "output"
                     for i in range(len(output_names), len(out_values))]
    axes = _dynamic_axes(dynamic_axes, input_names + output_names)
    any_dynamic = bool(axes)
    graph_inputs = []
    for node, name in zip(placeholders, input_names):
        meta = node.meta.get("tensor_meta")
        if meta is None:
            raise UnsupportedOperatorError(f"ember.onnx.export: the input {node.name!r} is not a "
                                           f"tensor (nested inputs are not supported)")
        b.reserve(name)
        ctx.env[node] = name
        graph_inputs.append(_value_info(name, meta[0], meta[1], axes.get(name, {}), False))
    for name in output_names:
        b.reserve(name)
    for node in graph.nodes:
        if node.op == "get_attr":
            tensor = rec.constants[node.target]
            ctx.env[node] = b.const(tensor.detach().numpy(), name=b.fresh(node.target))
            b.meta[ctx.env[node]] = (tuple(tensor.shape), tensor.dtype)
        elif node.op in ("call_function", "call_method", "call_module"):
            if not node.users and node.op != "call_module" and not _is_inplace(node):
                continue
            try:
                ctx.env[node] = _convert_node(ctx, node, model)
            except Unsupported as e:
                raise UnsupportedOperatorError(
                    f"ember.onnx.export cannot express {e} in ONNX opset {opset} (graph node "
                    f"'{node.name}': {node.format_node()})") from None
    graph_outputs = []
    for value, name in zip(out_values, output_names):
        from ..fx.node import Node
        if not isinstance(value, Node):
            raise UnsupportedOperatorError(f"ember.onnx.export: output {name!r} is not a tensor "
                                           f"computed by the model ({value!r})")
        b.op("Identity", [ctx.t(value)], outputs=[name])
        shape, dtype = ctx.shape(value), ctx.dtype(value)
        graph_outputs.append(_value_info(name, shape, dtype, axes.get(name, {}),
                                         any_dynamic or b.value_dependent))
    used = set(_inputs_of(b.nodes))
    initializers = [t for t in b.initializers if t.name in used]
    onnx_graph = helper.make_graph(b.nodes, type(model).__name__, graph_inputs, graph_outputs,
                                   initializers)
    model_proto = helper.make_model(onnx_graph, producer_name="ember",
                                    producer_version=ember.__version__,
                                    opset_imports=[helper.make_opsetid("", opset)])
    model_proto.ir_version = IR_VERSION
    onnx.checker.check_model(model_proto)
    if verbose:
        print(helper.printable_graph(model_proto.graph))
    return model_proto


def _inputs_of(nodes):
    """The value names ``nodes`` read, those of the subgraphs they hold (a Loop's body) too."""
    for n in nodes:
        yield from n.input
        for attribute in n.attribute:
            if attribute.HasField("g"):
                yield from _inputs_of(attribute.g.node)


def _is_inplace(node):
    return node.op == "call_method" and str(node.target).endswith("_")
