"""The GraphDef TensorBoard's graph tab draws, from an ``ember.jit`` trace of a model: one node
per recorded op, named by the module scopes it ran in (``Net/Sequential[body]/Linear[0]/...``),
with the op's target, its inputs, and the shapes the trace saw."""
from tensorboardX.proto.attr_value_pb2 import AttrValue
from tensorboardX.proto.graph_pb2 import GraphDef
from tensorboardX.proto.node_def_pb2 import NodeDef
from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboardX.proto.versions_pb2 import VersionDef

__all__ = ["graph_def"]


def _shape_attr(meta):
    if meta is None:
        return AttrValue(list=AttrValue.ListValue(shape=[]))
    dims = [TensorShapeProto.Dim(size=int(s)) for s in meta[0]]
    return AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(dim=dims)]))


def _scope(root_name, node):
    """``Net/Sequential[body]/Linear[0]``: the modules the op ran in (a call_module node's own
    module included)."""
    parts = [root_name]
    for path, class_name in node.meta.get("nn_module_stack", {}).items():
        if path:
            parts.append(f"{class_name}[{path.split('.')[-1]}]")
    return "/".join(parts)


def _op(node):
    from ...fx._names import qualified_name
    if node.op == "call_function":
        try:
            return qualified_name(node.target).replace("_operator.", "operator.")
        except RuntimeError:
            return repr(node.target)
    if node.op == "call_method":
        return f"ember.Tensor.{node.target}"
    return {"get_attr": "prim::GetAttr", "placeholder": "IO Node", "output": "IO Node"}[node.op]


def graph_def(model, graph):
    """``graph`` (from ``ember.jit``'s recorder on ``model``) as a TensorBoard GraphDef."""
    root_name = type(model).__name__
    names = {}
    nodes = []
    for node in graph.nodes:
        if node.op == "placeholder":
            name = f"input/{node.name}"
        elif node.op == "output":
            name = f"output/{node.name}"
        elif node.op == "get_attr":
            name = f"{root_name}/{node.target.replace('.', '/')}"
        else:
            name = f"{_scope(root_name, node)}/{node.name}"
        names[node] = name
        inputs = [names[n] for n in node.all_input_nodes]
        attr = {"_output_shapes": _shape_attr(node.meta.get("tensor_meta"))}
        if node.op in ("call_function", "call_method", "call_module"):
            constants = [repr(a) for a in node.args if not hasattr(a, "op")]
            constants += [f"{k}={v!r}" for k, v in node.kwargs.items() if not hasattr(v, "op")]
            attr["attr"] = AttrValue(s=", ".join(constants).encode())
        if node.op == "call_module":
            op = "ember.nn." + type(model.get_submodule(node.target)).__name__
        else:
            op = _op(node)
        nodes.append(NodeDef(name=name, op=op, input=inputs, attr=attr))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
