"""How ops are declared (docs/architecture.md, "How to add an op"), checked on the source.

One pattern for every op: a ``Node`` subclass named as torch names the op's node carries the
derivative (``backward`` in ember ops, optionally ``backward_arrays``); the forward computes on
arrays, through a ``KernelChoice`` where several libraries have kernels, and records its node
with ``record(NodeCls, inputs, *outputs)``, the only place outside the autograd layer where a
node is made or a tensor gets a history. Formulas never choose between arrays and ember ops by
testing grad mode; that choice is the engine's (``backward`` always, ``backward_arrays`` when
no graph of the backward is built)."""
import ast
import pathlib

import ember
from ember.autograd.graph import Node

SRC = pathlib.Path(ember.__file__).parent

# Nodes still on the old pattern, each with what moves it.
NOT_YET = {}


def _formulas():
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name in ("backward", "backward_arrays"):
                    yield path.relative_to(SRC), cls.name, fn


def test_formulas_do_not_test_grad_mode():
    found = []
    for path, cls, fn in _formulas():
        if cls in NOT_YET:
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and node.attr == "grad_enabled":
                found.append(f"{path}:{node.lineno} {cls}.{fn.name}")
    assert not found, found


def test_the_walk_sees_the_formulas():
    seen = {(cls, fn.name) for _, cls, fn in _formulas()}
    assert ("MulBackward0", "backward_arrays") in seen and ("ReluBackward0", "backward") in seen
    assert {cls for cls, _ in seen} >= set(NOT_YET)


# The autograd layer itself: where nodes are made and histories set for every op (``record``
# and the in-place/view history in ops/_common.py), for leaves and detaching (_tensor.py,
# _blocked_tensor.py, nn/parameter.py), and for user-defined Functions (autograd/).
RECORDING_LAYER = {"ops/_common.py", "_tensor.py", "_blocked_tensor.py", "nn/parameter.py"}


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        yield rel, ast.parse(path.read_text(), str(path))


def _outside_recording_layer():
    for rel, tree in _modules():
        if rel not in RECORDING_LAYER and not rel.startswith("autograd/"):
            yield rel, tree


def _all_node_classes():
    seen, todo = set(), [Node]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return seen


def test_histories_are_set_only_by_record():
    found = []
    for rel, tree in _outside_recording_layer():
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
            for target in targets:
                for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(t, ast.Attribute) and t.attr in ("grad_fn", "_output_nr"):
                        found.append(f"{rel}:{node.lineno} sets .{t.attr}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "set_history":
                found.append(f"{rel}:{node.lineno} calls set_history")
    assert not found, found


def test_nodes_are_made_only_by_record():
    names = {cls.__name__ for cls in _all_node_classes()} | {"node_cls", "cls"}
    found = []
    for rel, tree in _outside_recording_layer():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else (
                    func.attr if isinstance(func, ast.Attribute) else None)
                if name in names and node.args and isinstance(node.args[0], (ast.Tuple, ast.List)):
                    found.append(f"{rel}:{node.lineno} makes a {name} directly")
    assert not found, found


def test_every_node_has_a_backward():
    missing = [cls.__qualname__ for cls in _all_node_classes()
               if cls.__module__.startswith("ember.") and not cls.__name__.startswith("_")
               and cls.backward is Node.backward]
    assert not missing, missing


# autograd.Function is the API for user code; inside ember only activation checkpointing uses
# it, as torch's does, because it reruns the user's forward.
FUNCTION_SUBCLASSES_ALLOWED = {"utils/checkpoint.py"}


def test_ops_do_not_subclass_autograd_function():
    found = []
    for rel, tree in _outside_recording_layer():
        if rel in FUNCTION_SUBCLASSES_ALLOWED:
            continue
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for base in cls.bases:
                name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
                if name in ("Function", "InplaceFunction"):
                    found.append(f"{rel}:{cls.lineno} {cls.name}")
    assert not found, found


def test_onednn_is_reached_through_kernel_choices():
    """Outside the backend layer (and ember.backends, which holds its switch), oneDNN is named
    only in functions whose names say they are its kernels (``_onednn_*``, registered in a
    ``KernelChoice`` beside them) or decode its results (``onednn_*``)."""
    found = []
    for rel, tree in _modules():
        if rel.startswith(("_backend/", "backends/")):
            continue
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Module))):
            if isinstance(fn, ast.FunctionDef) and "onednn" in fn.name:
                continue
            body = fn.body
            for stmt in body:
                if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                    continue
                if isinstance(stmt, ast.Assign) and getattr(getattr(stmt.value, "func", None), "id",
                                                            None) == "KernelChoice":
                    continue
                for n in ast.walk(stmt):
                    if isinstance(n, ast.Name) and n.id == "onednn":
                        found.append(f"{rel}:{n.lineno}")
    assert not found, found
